/*
 * dns_cache: a chained hash table of upstream answers keyed by (lower-case
 * name, type, class), bounded by max_entries. Eviction is by insertion
 * order (FIFO, O(1) through a doubly linked list): a re-stored key counts
 * as new. Each entry is one allocation holding the key, the record bytes
 * and the address list; lookups allocate nothing. Expired entries stay
 * until replaced, evicted or flushed (lookups never free).
 */
#include <stdlib.h>
#include <string.h>

#include "dns/dns_cache.h"
#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_name.h"

struct cent {
	struct cent		*hnext;		/* hash chain */
	struct cent		*older, *newer;	/* insertion order */
	struct dns_cached	 pub;
	uint32_t		 hash;
	uint32_t		 min_ttl;	/* as received */
	uint16_t		 qtype, qclass;
	size_t			 name_len;
	char			*name;		/* lower case, in the block */
};

struct dns_cache {
	struct cent	**buckets;
	size_t		  mask;
	size_t		  count;
	size_t		  max;
	struct cent	 *oldest, *newest;
};

/* FNV-1a over the lower-cased name, then type and class. */
static uint32_t
key_hash(const char *name, size_t len, uint16_t qtype, uint16_t qclass)
{
	uint32_t h = GK_HASH_INIT;
	size_t i;

	for (i = 0; i < len; i++)
		h = gk_hash_step(h, gk_lower((uint8_t)name[i]));
	h = gk_hash_step(h, qtype);
	return gk_hash_step(h, qclass);
}

static struct cent **
key_find(struct dns_cache *c, uint32_t h, const char *name, size_t len,
    uint16_t qtype, uint16_t qclass)
{
	struct cent **pp, *e;
	size_t i;

	for (pp = &c->buckets[h & c->mask]; (e = *pp) != NULL;
	    pp = &e->hnext) {
		if (e->hash != h || e->qtype != qtype || e->qclass != qclass ||
		    e->name_len != len)
			continue;
		for (i = 0; i < len; i++)
			if (e->name[i] != (char)gk_lower((uint8_t)name[i]))
				break;
		if (i == len)
			return pp;
	}
	return pp;
}

struct dns_cache *
dns_cache_new(size_t max_entries)
{
	struct dns_cache *c;
	size_t n = 16;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	while (n < max_entries && n < ((size_t)1 << 30))
		n <<= 1;
	if ((c->buckets = calloc(n, sizeof(*c->buckets))) == NULL) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	c->max = max_entries;
	return c;
}

/* Unlink e from its chain (at *pp) and the age list, and free it. */
static void
cent_remove(struct dns_cache *c, struct cent **pp)
{
	struct cent *e = *pp;

	*pp = e->hnext;
	if (e->older != NULL)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	if (e->newer != NULL)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	c->count--;
	free(e);
}

static void
evict_oldest(struct dns_cache *c)
{
	struct cent *e = c->oldest;
	struct cent **pp;

	pp = &c->buckets[e->hash & c->mask];
	while (*pp != e)
		pp = &(*pp)->hnext;
	cent_remove(c, pp);
}

void
dns_cache_flush(struct dns_cache *c)
{
	struct cent *e, *next;

	if (c == NULL)
		return;
	for (e = c->oldest; e != NULL; e = next) {
		next = e->newer;
		free(e);
	}
	memset(c->buckets, 0, (c->mask + 1) * sizeof(*c->buckets));
	c->oldest = c->newest = NULL;
	c->count = 0;
}

void
dns_cache_free(struct dns_cache *c)
{
	if (c == NULL)
		return;
	dns_cache_flush(c);
	free(c->buckets);
	free(c);
}

size_t
dns_cache_count(const struct dns_cache *c)
{
	return c == NULL ? 0 : c->count;
}

const struct dns_cached *
dns_cache_get(struct dns_cache *c, const char *name, size_t name_len,
    uint16_t qtype, uint16_t qclass, uint32_t cap, time_t now)
{
	struct cent *e;
	uint32_t life;

	if (c == NULL || c->count == 0)
		return NULL;
	e = *key_find(c, key_hash(name, name_len, qtype, qclass), name,
	    name_len, qtype, qclass);
	if (e == NULL)
		return NULL;
	life = e->min_ttl < cap ? e->min_ttl : cap;
	e->pub.expires = e->pub.stored + (time_t)life;
	if (now >= e->pub.expires || now < e->pub.stored)
		return NULL;
	return &e->pub;
}

/* One block: the entry, the address list, the records, the name. */
static struct cent *
cent_new(const char *name, size_t name_len, const uint8_t *rrs,
    const struct dns_answer *a)
{
	size_t addrs_len = a->naddrs * sizeof(struct dns_addr);
	struct cent *e;
	uint8_t *p;

	e = malloc(sizeof(*e) + addrs_len + a->rrs_len + name_len + 1);
	if (e == NULL)
		return NULL;
	memset(e, 0, sizeof(*e));
	p = (uint8_t *)(e + 1);
	memcpy(p, a->addrs, addrs_len);
	e->pub.addrs = (const struct dns_addr *)p;
	e->pub.naddrs = a->naddrs;
	p += addrs_len;
	memcpy(p, rrs, a->rrs_len);
	e->pub.rrs = p;
	e->pub.rrs_len = a->rrs_len;
	p += a->rrs_len;
	e->name = (char *)p;
	for (size_t i = 0; i < name_len; i++)
		e->name[i] = (char)gk_lower((uint8_t)name[i]);
	e->name[name_len] = '\0';
	e->name_len = name_len;
	return e;
}

int
dns_cache_put(struct dns_cache *c, const char *name, size_t name_len,
    uint16_t qtype, uint16_t qclass, const uint8_t *msg, size_t len,
    const struct dns_answer *a, uint32_t cap, time_t now)
{
	struct cent **pp, *e;
	uint32_t h, life;

	if (c == NULL || c->max == 0 || a->tc || a->naddrs > DNS_MAX_ADDRS ||
	    (a->rcode != DNS_RC_NOERROR && a->rcode != DNS_RC_NXDOMAIN) ||
	    a->rrs_off > len || len - a->rrs_off < a->rrs_len ||
	    name_len >= DNS_NAME_TEXT_MAX)
		return -1;
	life = a->min_ttl < cap ? a->min_ttl : cap;
	if (life == 0)
		return -1;
	if ((e = cent_new(name, name_len, msg + a->rrs_off, a)) == NULL)
		return -1;
	e->hash = h = key_hash(name, name_len, qtype, qclass);
	e->qtype = qtype;
	e->qclass = qclass;
	e->min_ttl = a->min_ttl;
	e->pub.rcode = a->rcode;
	e->pub.ancount = a->ancount;
	e->pub.nscount = a->nscount;
	e->pub.stored = now;
	e->pub.expires = now + (time_t)life;
	pp = key_find(c, h, name, name_len, qtype, qclass);
	if (*pp != NULL)
		cent_remove(c, pp);
	else if (c->count >= c->max)
		evict_oldest(c);
	pp = &c->buckets[h & c->mask];
	e->hnext = *pp;
	*pp = e;
	e->older = c->newest;
	if (c->newest != NULL)
		c->newest->newer = e;
	else
		c->oldest = e;
	c->newest = e;
	c->count++;
	return 0;
}
