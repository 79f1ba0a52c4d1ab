/*
 * gk_cage: the cage table (by source address and by id, both chained hash
 * tables that double as they fill) and each cage's pins (a hash table on
 * the address plus a min-heap on the deadline, for expiry and eviction).
 */
#include <sys/random.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/state/gk_ask.h"
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_events.h"

#define TABLE_MIN_BUCKETS	64
#define PINS_MIN_BUCKETS	16

struct gk_cage_table {
	struct gk_cage	**by_src;
	struct gk_cage	**by_id;
	size_t		  nbuckets;	/* power of two, both tables */
	size_t		  count;
	gk_pin_sync_fn	  sync;
	void		 *sync_arg;
	const struct gk_hostpolicy *policy;	/* NULL: none */
};

struct pin {
	struct pin	*next;		/* hash chain */
	size_t		 heap_idx;
	struct gk_addr	 addr;
	time_t		 expires;
	time_t		 synced;	/* the kernel keeps addr until then
					 * (0: not told through this pin) */
	char		 name[];	/* NUL-terminated */
};

struct gk_pinset {
	struct pin	**buckets;
	size_t		  nbuckets;	/* power of two */
	struct pin	**heap;		/* min-heap on expires */
	size_t		  count;
	size_t		  cap;		/* of heap */
};

/* ---- the cage table --------------------------------------------------- */

static uint32_t
id_hash(const char *id)
{
	return gk_hash_str(GK_HASH_INIT, id);
}

static size_t
src_slot(const struct gk_cage_table *t, const struct gk_addr *a)
{
	return gk_addr_hash(a) & (t->nbuckets - 1);
}

static size_t
id_slot(const struct gk_cage_table *t, const char *id)
{
	return id_hash(id) & (t->nbuckets - 1);
}

struct gk_cage_table *
gk_cage_table_new(void)
{
	struct gk_cage_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->nbuckets = TABLE_MIN_BUCKETS;
	t->by_src = calloc(t->nbuckets, sizeof(*t->by_src));
	t->by_id = calloc(t->nbuckets, sizeof(*t->by_id));
	if (t->by_src == NULL || t->by_id == NULL) {
		free(t->by_src);
		free(t->by_id);
		free(t);
		return NULL;
	}
	return t;
}

static void pins_free(struct gk_pinset *ps);

static void
cage_free(struct gk_cage *c)
{
	gk_cage_lim_end(c);
	gk_ask_free(c);
	gk_events_free(c);
	gk_allowlist_free(c->allow);
	pins_free(c->pins);
	explicit_bzero(c->token, sizeof(c->token));
	free(c);
}

void
gk_cage_table_free(struct gk_cage_table *t)
{
	struct gk_cage *c, *next;
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		for (c = t->by_src[i]; c != NULL; c = next) {
			next = c->src_next;
			cage_free(c);
		}
	}
	free(t->by_src);
	free(t->by_id);
	free(t);
}

size_t
gk_cage_count(const struct gk_cage_table *t)
{
	return t == NULL ? 0 : t->count;
}

/* Double both tables; on allocation failure keep the old ones. */
static void
table_grow(struct gk_cage_table *t)
{
	struct gk_cage **src, **ids, *c, *next;
	size_t i, n = t->nbuckets * 2, old = t->nbuckets;

	src = calloc(n, sizeof(*src));
	ids = calloc(n, sizeof(*ids));
	if (src == NULL || ids == NULL) {
		free(src);
		free(ids);
		return;
	}
	t->nbuckets = n;
	for (i = 0; i < old; i++) {
		for (c = t->by_src[i]; c != NULL; c = next) {
			next = c->src_next;
			c->src_next = src[src_slot(t, &c->source)];
			src[src_slot(t, &c->source)] = c;
		}
		for (c = t->by_id[i]; c != NULL; c = next) {
			next = c->id_next;
			c->id_next = ids[id_slot(t, c->id)];
			ids[id_slot(t, c->id)] = c;
		}
	}
	free(t->by_src);
	free(t->by_id);
	t->by_src = src;
	t->by_id = ids;
}

static bool
label_ok(const char *label)
{
	size_t i;

	for (i = 0; label[i] != '\0'; i++) {
		if (i >= GK_CAGE_LABEL_MAX || label[i] < 0x20 ||
		    label[i] > 0x7e)
			return false;
	}
	return true;
}

/* A random id, [a-z0-9]{8}, by rejection sampling (no modulo bias). */
static int
make_random(char *id, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t rnd[32];
	size_t i, k = 0;
	ssize_t n;

	while (k < len) {
		if ((n = getrandom(rnd, sizeof(rnd), 0)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("getrandom");
			return -1;
		}
		for (i = 0; i < (size_t)n && k < len; i++) {
			if (rnd[i] < 252)	/* 252 = 7 * 36 */
				id[k++] = alphabet[rnd[i] % 36];
		}
	}
	id[k] = '\0';
	return 0;
}

static int
unique_id(const struct gk_cage_table *t, char id[GK_CAGE_ID_LEN + 1])
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (make_random(id, GK_CAGE_ID_LEN) == -1)
			return -1;
		if (gk_cage_by_id(t, id) == NULL)
			return 0;
	}
	return -1;
}

struct gk_cage *
gk_cage_create(struct gk_cage_table *t, const struct gk_addr *source,
    const char *label, uid_t uid, struct gk_allowlist *allow,
    enum gk_cage_err *err)
{
	struct gk_cage *c;
	enum gk_cage_err e = GK_CAGE_E_OK;

	if (label == NULL)
		label = "";
	if (!label_ok(label))
		e = GK_CAGE_E_BAD_LABEL;
	else if (gk_cage_by_source(t, source) != NULL)
		e = GK_CAGE_E_SOURCE_IN_USE;
	else if (t->count >= GK_CAGE_MAX)
		e = GK_CAGE_E_TOO_MANY;
	else if ((c = calloc(1, sizeof(*c))) == NULL)
		e = GK_CAGE_E_NOMEM;
	else if (unique_id(t, c->id) == -1 ||
	    make_random(c->token, GK_CAGE_TOKEN_LEN) == -1) {
		free(c);
		e = GK_CAGE_E_NOMEM;
	}
	if (err != NULL)
		*err = e;
	if (e != GK_CAGE_E_OK)
		return NULL;
	memcpy(c->label, label, strlen(label) + 1);
	gk_cage_lim_init(&c->lim);
	c->uid = uid;
	c->table = t;
	c->source = *source;
	c->allow = allow;
	c->created = time(NULL);
	if (t->count >= t->nbuckets)
		table_grow(t);
	c->src_next = t->by_src[src_slot(t, source)];
	t->by_src[src_slot(t, source)] = c;
	c->id_next = t->by_id[id_slot(t, c->id)];
	t->by_id[id_slot(t, c->id)] = c;
	t->count++;
	return c;
}

struct token_find {
	const char	*token;
	struct gk_cage	*found;
};

static void
token_cb(struct gk_cage *c, void *arg)
{
	struct token_find *f = arg;
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < GK_CAGE_TOKEN_LEN; i++)
		diff |= (unsigned char)(c->token[i] ^ f->token[i]);
	if (diff == 0)
		f->found = c;
}

struct gk_cage *
gk_cage_by_token(const struct gk_cage_table *t, const char *token)
{
	struct token_find f = { token, NULL };

	if (strlen(token) != GK_CAGE_TOKEN_LEN)
		return NULL;
	gk_cage_foreach(t, token_cb, &f);
	return f.found;
}

void
gk_cage_count_denied(struct gk_cage *c, enum gk_deny_kind k)
{
	c->denied[k]++;
	gk_stats_label_denied(c->label, k);
}

void
gk_cage_table_set_policy(struct gk_cage_table *t,
    const struct gk_hostpolicy *p)
{
	t->policy = p;
}

const struct gk_hostpolicy *
gk_cage_table_policy(const struct gk_cage_table *t)
{
	return t->policy;
}

const struct gk_hostpolicy *
gk_cage_policy(const struct gk_cage *c)
{
	return c->table != NULL ? c->table->policy : NULL;
}

bool
gk_cage_allows_name(const struct gk_cage *c, const char *name, size_t len,
    uint16_t port)
{
	/* the host policy's denials win over any allowlist */
	if (gk_hostpolicy_denies_name(gk_cage_policy(c), name, len, port))
		return false;
	if (gk_allow_name(c->allow, name, len, port))
		return true;
	if (!c->learn)
		return false;
	gk_events_learn(c, name, len, port);
	return true;
}

void
gk_cage_destroy(struct gk_cage_table *t, struct gk_cage *c)
{
	struct gk_cage **pp;

	if (c == NULL)
		return;
	for (pp = &t->by_src[src_slot(t, &c->source)]; *pp != NULL;
	    pp = &(*pp)->src_next) {
		if (*pp == c) {
			*pp = c->src_next;
			break;
		}
	}
	for (pp = &t->by_id[id_slot(t, c->id)]; *pp != NULL;
	    pp = &(*pp)->id_next) {
		if (*pp == c) {
			*pp = c->id_next;
			break;
		}
	}
	t->count--;
	cage_free(c);
}

const char *
gk_cage_strerror(enum gk_cage_err e)
{
	switch (e) {
	case GK_CAGE_E_OK:
		return "ok";
	case GK_CAGE_E_SOURCE_IN_USE:
		return "source address already in use by another cage";
	case GK_CAGE_E_TOO_MANY:
		return "too many cages";
	case GK_CAGE_E_BAD_LABEL:
		return "label must be at most 64 printable ASCII characters";
	case GK_CAGE_E_NOMEM:
		return "out of memory";
	}
	return "unknown error";
}

struct gk_cage *
gk_cage_by_source(const struct gk_cage_table *t, const struct gk_addr *source)
{
	struct gk_cage *c;

	for (c = t->by_src[src_slot(t, source)]; c != NULL; c = c->src_next) {
		if (gk_addr_eq(&c->source, source))
			return c;
	}
	return NULL;
}

struct gk_cage *
gk_cage_by_id(const struct gk_cage_table *t, const char *id)
{
	struct gk_cage *c;

	for (c = t->by_id[id_slot(t, id)]; c != NULL; c = c->id_next) {
		if (strcmp(c->id, id) == 0)
			return c;
	}
	return NULL;
}

void
gk_cage_foreach(const struct gk_cage_table *t,
    void (*cb)(struct gk_cage *, void *), void *arg)
{
	struct gk_cage *c;
	size_t i;

	for (i = 0; i < t->nbuckets; i++) {
		for (c = t->by_src[i]; c != NULL; c = c->src_next)
			cb(c, arg);
	}
}

/* ---- pins: heap ------------------------------------------------------- */

static void
heap_set(struct gk_pinset *ps, size_t i, struct pin *p)
{
	ps->heap[i] = p;
	p->heap_idx = i;
}

static void
heap_up(struct gk_pinset *ps, size_t i)
{
	struct pin *p = ps->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (ps->heap[parent]->expires <= p->expires)
			break;
		heap_set(ps, i, ps->heap[parent]);
		i = parent;
	}
	heap_set(ps, i, p);
}

static void
heap_down(struct gk_pinset *ps, size_t i)
{
	struct pin *p = ps->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= ps->count)
			break;
		if (child + 1 < ps->count &&
		    ps->heap[child + 1]->expires < ps->heap[child]->expires)
			child++;
		if (p->expires <= ps->heap[child]->expires)
			break;
		heap_set(ps, i, ps->heap[child]);
		i = child;
	}
	heap_set(ps, i, p);
}

/* Take the top off the heap; it stays in its hash chain. */
static void
heap_remove_top(struct gk_pinset *ps)
{
	struct pin *last = ps->heap[--ps->count];

	if (ps->count > 0) {
		heap_set(ps, 0, last);
		heap_down(ps, 0);
	}
}

/* ---- pins: hash on the address ---------------------------------------- */

static size_t
pin_slot(const struct gk_pinset *ps, const struct gk_addr *a)
{
	return gk_addr_hash(a) & (ps->nbuckets - 1);
}

static void
pins_rehash(struct gk_pinset *ps, struct pin **nb, size_t n)
{
	size_t i, s;

	free(ps->buckets);
	ps->buckets = nb;
	ps->nbuckets = n;
	for (i = 0; i < ps->count; i++) {
		s = pin_slot(ps, &ps->heap[i]->addr);
		ps->heap[i]->next = nb[s];
		nb[s] = ps->heap[i];
	}
}

/* Make room for one more pin; -1 on allocation failure. */
static int
pins_reserve(struct gk_pinset *ps)
{
	struct pin **nh, **nb;
	size_t n;

	if (ps->count == ps->cap) {
		n = ps->cap == 0 ? PINS_MIN_BUCKETS : ps->cap * 2;
		if ((nh = reallocarray(ps->heap, n, sizeof(*nh))) == NULL)
			return -1;
		ps->heap = nh;
		ps->cap = n;
	}
	if (ps->buckets == NULL || ps->count >= ps->nbuckets) {
		n = ps->buckets == NULL ? PINS_MIN_BUCKETS : ps->nbuckets * 2;
		if ((nb = calloc(n, sizeof(*nb))) == NULL)
			return ps->buckets == NULL ? -1 : 0;
		pins_rehash(ps, nb, n);
	}
	return 0;
}

static void
pins_free(struct gk_pinset *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->count; i++)
		free(ps->heap[i]);
	free(ps->heap);
	free(ps->buckets);
	free(ps);
}

static struct pin *
pin_find(const struct gk_pinset *ps, const struct gk_addr *a,
    const char *name)
{
	struct pin *p;

	if (ps == NULL || ps->count == 0)
		return NULL;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL; p = p->next) {
		if (gk_addr_eq(&p->addr, a) && strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

/* Unlink p from its chain and the heap, and free it. */
static void
pin_remove(struct gk_pinset *ps, struct pin *p)
{
	struct pin **pp, *last;
	size_t i = p->heap_idx;

	for (pp = &ps->buckets[pin_slot(ps, &p->addr)]; *pp != NULL;
	    pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	last = ps->heap[--ps->count];
	if (i < ps->count) {
		heap_set(ps, i, last);
		heap_up(ps, i);
		heap_down(ps, last->heap_idx);
	}
	free(p);
}

void
gk_cage_table_pin_sync(struct gk_cage_table *t, gk_pin_sync_fn fn, void *arg)
{
	t->sync = fn;
	t->sync_arg = arg;
}

/*
 * Tell the kernel about `p`'s address if its latest pin reaches past
 * what the kernel keeps it for, less GK_PIN_SYNC_EARLY. Every pin of an
 * address sits in one chain.
 */
static void
pin_sync(struct gk_cage *c, struct pin *p)
{
	const struct gk_cage_table *t = c->table;
	const struct pin *q;
	time_t latest = 0, told = 0;

	if (t == NULL || t->sync == NULL || c->link == 0)
		return;
	for (q = c->pins->buckets[pin_slot(c->pins, &p->addr)]; q != NULL;
	    q = q->next) {
		if (!gk_addr_eq(&q->addr, &p->addr))
			continue;
		if (q->expires > latest)
			latest = q->expires;
		if (q->synced > told)
			told = q->synced;
	}
	if (told != 0 && latest <= told - GK_PIN_SYNC_EARLY)
		return;
	if (t->sync(t->sync_arg, c, &p->addr, latest + GK_PIN_SYNC_SLACK) ==
	    0)
		p->synced = latest + GK_PIN_SYNC_SLACK;
}

int
gk_cage_pin(struct gk_cage *c, const char *name, const struct gk_addr *a,
    time_t expires)
{
	struct gk_pinset *ps;
	struct pin *p;
	size_t len, s;

	len = strlen(name);
	if (len == 0 || len > GK_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	if ((p = pin_find(c->pins, a, name)) != NULL) {
		if (expires > p->expires) {
			p->expires = expires;
			heap_down(c->pins, p->heap_idx);
			pin_sync(c, p);
		}
		return 0;
	}
	if (c->pins == NULL && (c->pins = calloc(1, sizeof(*ps))) == NULL)
		return -1;
	ps = c->pins;
	if (ps->count >= GK_CAGE_PINS_MAX)
		pin_remove(ps, ps->heap[0]);
	if (pins_reserve(ps) == -1 ||
	    (p = calloc(1, sizeof(*p) + len + 1)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(p->name, name, len + 1);
	p->addr = *a;
	p->expires = expires;
	s = pin_slot(ps, a);
	p->next = ps->buckets[s];
	ps->buckets[s] = p;
	ps->heap[ps->count] = p;
	p->heap_idx = ps->count++;
	heap_up(ps, p->heap_idx);
	pin_sync(c, p);
	return 0;
}

bool
gk_cage_pinned_name(const struct gk_cage *c, const struct gk_addr *a,
    const char *name, time_t now)
{
	const struct pin *p;

	p = pin_find(c->pins, a, name);
	return p != NULL && p->expires > now;
}

size_t
gk_cage_pin_names(const struct gk_cage *c, const struct gk_addr *a,
    time_t now, const char **names, size_t max)
{
	const struct gk_pinset *ps = c->pins;
	const struct pin *p;
	size_t n = 0;

	if (ps == NULL || ps->count == 0)
		return 0;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL && n < max;
	    p = p->next) {
		if (p->expires > now && gk_addr_eq(&p->addr, a))
			names[n++] = p->name;
	}
	return n;
}

void
gk_cage_pin_foreach(const struct gk_cage *c, time_t now,
    void (*cb)(const char *, const struct gk_addr *, time_t, void *),
    void *arg)
{
	const struct gk_pinset *ps = c->pins;
	size_t i;

	for (i = 0; ps != NULL && i < ps->count; i++)
		if (ps->heap[i]->expires > now)
			cb(ps->heap[i]->name, &ps->heap[i]->addr,
			    ps->heap[i]->expires, arg);
}

size_t
gk_cage_pin_count(const struct gk_cage *c)
{
	return c->pins == NULL ? 0 : c->pins->count;
}

static int
addr_cmp(const void *x, const void *y)
{
	const struct gk_addr *a = x, *b = y;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}

/*
 * Where the cage's holdings connect, sorted (for bsearch): NULL when
 * none (or no memory: nothing is then kept for being in use).
 */
static struct gk_addr *
inuse_dsts(struct gk_cage *c, size_t *n)
{
	struct gk_addr *v;
	struct gk_hold *h;
	size_t k = 0, max = 0;

	TAILQ_FOREACH(h, &c->lim.holds, entry)
		max += h->dst.family != 0;
	*n = 0;
	if (max == 0 || (v = calloc(max, sizeof(*v))) == NULL)
		return NULL;
	TAILQ_FOREACH(h, &c->lim.holds, entry)
		if (h->dst.family != 0 && k < max)
			v[k++] = h->dst;
	qsort(v, k, sizeof(*v), addr_cmp);
	*n = k;
	return v;
}

void
gk_cage_pin_keep(struct gk_cage *c, const struct gk_addr *a, time_t until)
{
	struct gk_pinset *ps = c->pins;
	struct pin *p, *last = NULL;

	if (ps == NULL || ps->count == 0)
		return;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL; p = p->next) {
		if (!gk_addr_eq(&p->addr, a) || p->expires >= until)
			continue;
		p->expires = until;
		heap_down(ps, p->heap_idx);
		last = p;
	}
	if (last != NULL)
		pin_sync(c, last);
}

size_t
gk_cage_expire(struct gk_cage *c, time_t now)
{
	time_t keep_until = now + GK_PIN_INUSE_KEEP;
	struct gk_pinset *ps = c->pins;
	struct gk_addr *used = NULL;
	struct pin *p, **kept = NULL;
	size_t n = 0, nused = 0, nkept = 0, i;
	bool looked = false;

	while (ps != NULL && ps->count > 0 &&
	    ps->heap[0]->expires <= now + GK_PIN_INUSE_AHEAD) {
		p = ps->heap[0];
		if (!looked) {
			used = inuse_dsts(c, &nused);
			looked = true;
		}
		if (used == NULL && p->expires > now)
			break;		/* nothing in use: only expiry */
		if (used != NULL && keep_until > p->expires &&
		    bsearch(&p->addr, used, nused, sizeof(*used),
		    addr_cmp) != NULL) {
			/* in use: kept, and the kernel told */
			p->expires = keep_until;
			heap_down(ps, 0);
			pin_sync(c, p);
			continue;
		}
		if (p->expires <= now) {
			pin_remove(ps, p);
			n++;
			continue;
		}
		/* due soon, not in use: out of the way until the loop ends */
		if (kept == NULL && (kept = calloc(ps->count,
		    sizeof(*kept))) == NULL)
			break;
		kept[nkept++] = p;
		heap_remove_top(ps);
	}
	for (i = 0; i < nkept; i++) {
		ps->heap[ps->count] = kept[i];
		kept[i]->heap_idx = ps->count++;
		heap_up(ps, kept[i]->heap_idx);
	}
	free(kept);
	free(used);
	return n;
}

void
gk_cage_set_allow(struct gk_cage *c, struct gk_allowlist *al)
{
	struct gk_pinset *ps = c->pins;
	struct pin *p;
	size_t i, kept = 0;

	gk_allowlist_free(c->allow);
	c->allow = al;
	if (ps == NULL || ps->count == 0)
		return;
	/* Compact the survivors, then rebuild the chains and the heap. */
	for (i = 0; i < ps->count; i++) {
		p = ps->heap[i];
		if (gk_allow_name(al, p->name, strlen(p->name), 0))
			ps->heap[kept++] = p;
		else
			free(p);
	}
	ps->count = kept;
	memset(ps->buckets, 0, ps->nbuckets * sizeof(*ps->buckets));
	for (i = 0; i < kept; i++) {
		p = ps->heap[i];
		p->heap_idx = i;
		p->next = ps->buckets[pin_slot(ps, &p->addr)];
		ps->buckets[pin_slot(ps, &p->addr)] = p;
	}
	for (i = kept / 2; i > 0; i--)
		heap_down(ps, i - 1);
}
