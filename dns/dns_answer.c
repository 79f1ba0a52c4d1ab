/*
 * dns_answer: an upstream answer, checked before anything of it reaches a
 * cage (dns_msg.h's dns_answer_parse): every record's owner and rdata
 * bounded, names read by dns_name_read() (pointers only backwards, never
 * into a TTL), the question matching the one asked, the CNAME chain from
 * the question followed for the addresses to pin. Pure, bounded buffers.
 */
#include <sys/socket.h>

#include <string.h>

#include "dns/dns_msg.h"
#include "dns/dns_msg_int.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_rd.h"

#define DNS_MAX_CHAIN		16	/* qname + CNAME targets followed */

/* One resource record as located by rr_read(). */
struct rr {
	uint16_t	type;
	uint16_t	class;
	uint32_t	ttl;
	size_t		rdata;		/* offset of the rdata */
	size_t		rdend;		/* offset just past it */
};

struct chain {
	uint8_t		name[DNS_MAX_CHAIN][DNS_MAX_NAME];
	uint8_t		len[DNS_MAX_CHAIN];
	size_t		n;
};

/*
 * Locate the record at *pos (owner name validated, decompressed into
 * `owner` lower-cased when not NULL) and move past it.
 */
static bool
rr_read(const uint8_t *buf, size_t len, size_t *pos, const uint8_t *ttls,
    struct rr *rr, uint8_t *owner, size_t *olen)
{
	uint8_t scratch[DNS_MAX_NAME];
	struct gk_rd r;
	size_t i, n, rdlen;

	gk_rd_init(&r, buf, len);
	r.pos = *pos;
	if (!dns_name_read(buf, len, &r.pos, true, ttls, owner ? owner : scratch,
	    &n))
		return false;
	rr->type = gk_rd_u16(&r);
	rr->class = gk_rd_u16(&r);
	rr->ttl = gk_rd_u32(&r);
	if (rr->ttl > DNS_TTL_MAX)
		rr->ttl = 0;
	rdlen = gk_rd_u16(&r);
	rr->rdata = r.pos;
	gk_rd_skip(&r, rdlen);
	if (r.err)
		return false;
	rr->rdend = r.pos;
	for (i = 0; owner != NULL && i < n; i++)
		owner[i] = gk_lower(owner[i]);
	if (olen != NULL)
		*olen = n;
	*pos = r.pos;
	return true;
}

/*
 * Validate the rdata of the types we interpret and say what TTL the record
 * contributes to min_ttl: an SOA in the authority section gives
 * min(ttl, MINIMUM) (RFC 2308 5).
 */
static bool
rr_check(const uint8_t *buf, const struct rr *rr, const uint8_t *ttls,
    bool authority, uint32_t *ttl, bool *soa)
{
	uint8_t wire[DNS_MAX_NAME];
	size_t p = rr->rdata, n, rdlen = rr->rdend - rr->rdata;
	uint32_t min;

	*ttl = rr->ttl;
	*soa = false;
	switch (rr->type) {
	case DNS_T_A:
		return rr->class != DNS_CLASS_IN || rdlen == 4;
	case DNS_T_AAAA:
		return rr->class != DNS_CLASS_IN || rdlen == 16;
	case DNS_T_CNAME:
		return dns_name_read(buf, rr->rdend, &p, true, ttls, wire, &n) &&
		    p == rr->rdend;
	case DNS_T_SOA:
		if (!dns_name_read(buf, rr->rdend, &p, true, ttls, wire, &n) ||
		    !dns_name_read(buf, rr->rdend, &p, true, ttls, wire, &n) ||
		    rr->rdend - p != 20)
			return false;
		min = dns_get32(buf + p + 16);
		if (authority) {
			*soa = true;
			if (min < *ttl)
				*ttl = min;
		}
		return true;
	default:
		return true;
	}
}

/*
 * Walk answer + authority once: validate and compute min_ttl. `ttls` (a
 * bit per message byte) collects the TTL fields seen so far.
 */
static bool
answer_walk(const uint8_t *buf, size_t len, size_t *pos, uint8_t *ttls,
    struct dns_answer *a)
{
	unsigned int i, count = (unsigned int)a->ancount + a->nscount;
	uint32_t ttl, min = UINT32_MAX;
	bool soa, have_soa = false, negative;
	struct rr rr;
	size_t k;

	for (i = 0; i < count; i++) {
		if (!rr_read(buf, len, pos, ttls, &rr, NULL, NULL))
			return false;
		for (k = rr.rdata - 6; k < rr.rdata - 2; k++)
			ttls[k >> 3] |= (uint8_t)(1U << (k & 7));
		if (!rr_check(buf, &rr, ttls, i >= a->ancount, &ttl, &soa))
			return false;
		have_soa |= soa;
		if (ttl < min)
			min = ttl;
	}
	negative = a->rcode == DNS_RC_NXDOMAIN ||
	    (a->rcode == DNS_RC_NOERROR && a->ancount == 0);
	/* Negative answers without an SOA are not cacheable (RFC 2308 5). */
	a->min_ttl = (count == 0 || (negative && !have_soa)) ? 0 : min;
	return true;
}

static bool
chain_has(const struct chain *c, const uint8_t *name, size_t len)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->len[i] == len && memcmp(c->name[i], name, len) == 0)
			return true;
	return false;
}

static void
chain_add(struct chain *c, const uint8_t *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		c->name[c->n][i] = gk_lower(name[i]);
	c->len[c->n++] = (uint8_t)len;
}

/*
 * Grow the chain (qname first) with CNAME targets of owners already in it,
 * in whatever order the answer section lists them, until nothing new is
 * found or DNS_MAX_CHAIN names are known. Records were validated.
 */
static void
answer_chain(const uint8_t *buf, size_t len, const struct dns_answer *a,
    uint16_t qclass, struct chain *c)
{
	uint8_t owner[DNS_MAX_NAME], target[DNS_MAX_NAME];
	size_t pos, olen, tlen, p, k;
	bool grew = true;
	unsigned int i;
	struct rr rr;

	while (grew && c->n < DNS_MAX_CHAIN) {
		grew = false;
		pos = a->rrs_off;
		for (i = 0; i < a->ancount && c->n < DNS_MAX_CHAIN; i++) {
			if (!rr_read(buf, len, &pos, NULL, &rr, owner, &olen))
				return;
			if (rr.type != DNS_T_CNAME || rr.class != qclass ||
			    !chain_has(c, owner, olen))
				continue;
			p = rr.rdata;
			if (!dns_name_read(buf, rr.rdend, &p, true, NULL, target,
			    &tlen))
				return;
			for (k = 0; k < tlen; k++)
				target[k] = gk_lower(target[k]);
			if (!chain_has(c, target, tlen)) {
				chain_add(c, target, tlen);
				grew = true;
			}
		}
	}
}

/* Collect A/AAAA records of the answer section owned by a chain name. */
static void
answer_addrs(const uint8_t *buf, size_t len, struct dns_answer *a,
    const struct chain *c)
{
	uint8_t owner[DNS_MAX_NAME];
	struct dns_addr *d;
	size_t pos = a->rrs_off, olen, n;
	unsigned int i;
	struct rr rr;

	for (i = 0; i < a->ancount && a->naddrs < DNS_MAX_ADDRS; i++) {
		if (!rr_read(buf, len, &pos, NULL, &rr, owner, &olen))
			return;
		if (rr.class != DNS_CLASS_IN ||
		    (rr.type != DNS_T_A && rr.type != DNS_T_AAAA) ||
		    !chain_has(c, owner, olen))
			continue;
		n = rr.rdend - rr.rdata;
		d = &a->addrs[a->naddrs++];
		memset(d->addr, 0, sizeof(d->addr));
		memcpy(d->addr, buf + rr.rdata, n);
		d->family = rr.type == DNS_T_A ? AF_INET : AF_INET6;
		d->ttl = rr.ttl;
	}
}

static enum dns_status
answer_question(struct gk_rd *r, const struct dns_query *q)
{
	uint8_t wire[DNS_MAX_NAME];
	uint16_t type, class;
	size_t n, i;

	if (!dns_name_read(r->buf, r->len, &r->pos, false, NULL, wire, &n))
		return DNS_FORMERR;
	type = gk_rd_u16(r);
	class = gk_rd_u16(r);
	if (r->err)
		return DNS_FORMERR;
	if (n != q->qname_wire_len || type != q->qtype || class != q->qclass)
		return DNS_DROP;
	for (i = 0; i < n; i++)
		if (gk_lower(wire[i]) != gk_lower(q->qname_wire[i]))
			return DNS_DROP;
	return DNS_OK;
}

enum dns_status
dns_answer_parse(const uint8_t *buf, size_t len, const struct dns_query *q,
    struct dns_answer *a)
{
	uint8_t ttls[DNS_MAX_MSG / 8 + 1];
	struct chain c;
	struct gk_rd r;
	enum dns_status st;
	uint16_t flags, qd;
	size_t pos;

	a->rcode = 0;
	a->tc = false;
	a->ancount = a->nscount = 0;
	a->rrs_off = a->rrs_len = a->naddrs = 0;
	a->min_ttl = 0;
	if (buf == NULL || len < DNS_HDR_LEN || q->qname_wire_len == 0)
		return DNS_DROP;
	gk_rd_init(&r, buf, len);
	(void)gk_rd_u16(&r);
	flags = gk_rd_u16(&r);
	qd = gk_rd_u16(&r);
	a->ancount = gk_rd_u16(&r);
	a->nscount = gk_rd_u16(&r);
	(void)gk_rd_u16(&r);
	if ((flags & DNS_F_QR) == 0)
		return DNS_DROP;
	a->rcode = flags & 0x0f;
	a->tc = (flags & DNS_F_TC) != 0;
	if (DNS_OPCODE(flags) != 0 || qd != 1)
		return DNS_FORMERR;
	if ((st = answer_question(&r, q)) != DNS_OK)
		return st;
	pos = a->rrs_off = r.pos;
	if (a->tc) {
		/* Possibly cut anywhere: the caller retries over TCP. */
		a->ancount = a->nscount = 0;
		return DNS_OK;
	}
	if (len > DNS_MAX_MSG)
		return DNS_FORMERR;
	memset(ttls, 0, (len >> 3) + 1);
	if (!answer_walk(buf, len, &pos, ttls, a))
		return DNS_FORMERR;
	a->rrs_len = pos - a->rrs_off;
	c.n = 0;
	chain_add(&c, q->qname_wire, q->qname_wire_len);
	answer_chain(buf, len, a, q->qclass, &c);
	answer_addrs(buf, len, a, &c);
	return DNS_OK;
}
