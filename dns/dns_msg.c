/*
 * dns_msg: DNS message codec (RFC 1035, 2308, 6891, 8482).
 *
 * Everything here is pure over bounded buffers. Names are read with
 * name_read(): pointers only backwards (targets strictly decrease, so no
 * loops), never into the header, at most DNS_MAX_PTR_HOPS of them.
 */
#include <sys/socket.h>

#include <string.h>

#include "dns/dns_msg.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_rd.h"

#define DNS_F_QR		0x8000
#define DNS_F_TC		0x0200
#define DNS_F_RD		0x0100
#define DNS_F_RA		0x0080
#define DNS_OPCODE(f)		(((f) >> 11) & 0x0f)
#define DNS_OPT_LEN		11	/* root name, type, class, ttl, rdlen */
#define DNS_TTL_MAX		0x7fffffffU	/* RFC 2181 8: larger is 0 */
#define DNS_MAX_CHAIN		16	/* qname + CNAME targets followed */

/* A bounded writer with a sticky error, the twin of gk_rd. */
struct wr {
	uint8_t	*buf;
	size_t	 len;
	size_t	 pos;
	bool	 err;
};

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

static void
wr_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->err || w->len - w->pos < n) {
		w->err = true;
		return;
	}
	memcpy(w->buf + w->pos, p, n);
	w->pos += n;
}

static void
wr_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	wr_bytes(w, b, sizeof(b));
}

static void
wr_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };

	wr_bytes(w, b, sizeof(b));
}

static uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

/* Whether any of buf[from, from + n) is a TTL byte marked in `map`. */
static bool
ttl_hit(const uint8_t *map, size_t from, size_t n)
{
	for (; map != NULL && n > 0; from++, n--)
		if (map[from >> 3] & (1U << (from & 7)))
			return true;
	return false;
}

/*
 * Read the name at *pos into uncompressed wire form (DNS_MAX_NAME bytes at
 * `wire`). Pointers are refused unless `ptrs`; a pointer's target must
 * lie in front of the segment holding the pointer, and the name read
 * there must end in front of it too, so every name is made of earlier
 * bytes only. With `ttls`, no byte reached through a pointer may be part
 * of a TTL field (dns_reply_records rewrites those). That is what a
 * compressor produces, and copying records behind an equal-length
 * question keeps them valid. *pos moves past the name as stored.
 */
static bool
name_read(const uint8_t *buf, size_t len, size_t *pos, bool ptrs,
    const uint8_t *ttls, uint8_t *wire, size_t *wlen)
{
	size_t p = *pos, seg = *pos, lim = len, end = 0, n = 0, t;
	unsigned int hops = 0;
	uint8_t c;

	for (;;) {
		if (p >= lim)
			return false;
		c = buf[p];
		if ((c & 0xc0) == 0xc0) {
			if (!ptrs || lim - p < 2 || ++hops > DNS_MAX_PTR_HOPS ||
			    (end != 0 && ttl_hit(ttls, p, 2)))
				return false;
			t = ((size_t)(c & 0x3f) << 8) | buf[p + 1];
			if (t >= seg || t < DNS_HDR_LEN)
				return false;
			if (end == 0)
				end = p + 2;
			lim = seg;
			p = seg = t;
			continue;
		}
		if ((c & 0xc0) != 0 || lim - p - 1 < c ||
		    DNS_MAX_NAME - n < (size_t)c + 1 ||
		    (end != 0 && ttl_hit(ttls, p, (size_t)c + 1)))
			return false;
		memcpy(wire + n, buf + p, (size_t)c + 1);
		n += (size_t)c + 1;
		p += (size_t)c + 1;
		if (c == 0)
			break;
	}
	*pos = end != 0 ? end : p;
	*wlen = n;
	return true;
}

bool
dns_name_skip(const uint8_t *buf, size_t len, size_t *pos)
{
	size_t p = *pos, n = 0;
	uint8_t c;

	for (;;) {
		if (p >= len)
			return false;
		c = buf[p];
		if ((c & 0xc0) == 0xc0) {
			if (len - p < 2)
				return false;
			*pos = p + 2;
			return true;
		}
		if ((c & 0xc0) != 0 || len - p - 1 < c ||
		    DNS_MAX_NAME - n < (size_t)c + 1)
			return false;
		n += (size_t)c + 1;
		p += (size_t)c + 1;
		if (c == 0) {
			*pos = p;
			return true;
		}
	}
}

/*
 * Presentation form of a wire name: lower case, labels joined by '.', no
 * trailing dot, "" for the root, bytes a host name cannot hold
 * (!gk_name_char) as \DDD. Returns false if it does not fit `outlen`
 * (including the NUL).
 */
static bool
name_text(const uint8_t *wire, size_t wlen, char *out, size_t outlen,
    size_t *used)
{
	size_t i = 0, o = 0, k;
	uint8_t c;

	while (i < wlen && wire[i] != 0) {
		if (o != 0) {
			if (outlen - o < 2)
				return false;
			out[o++] = '.';
		}
		for (k = 1; k <= wire[i]; k++) {
			c = gk_lower(wire[i + k]);
			if (outlen - o < 5)
				return false;
			if (gk_name_char(c)) {
				out[o++] = (char)c;
				continue;
			}
			out[o++] = '\\';
			out[o++] = (char)('0' + c / 100);
			out[o++] = (char)('0' + c / 10 % 10);
			out[o++] = (char)('0' + c % 10);
		}
		i += (size_t)wire[i] + 1;
	}
	if (outlen - o < 1)
		return false;
	out[o] = '\0';
	*used = o;
	return true;
}

bool
dns_name_expand(const uint8_t *buf, size_t len, size_t *pos, char *out,
    size_t outlen, size_t *outlen_used)
{
	uint8_t wire[DNS_MAX_NAME];
	size_t p = *pos, wlen, used;

	if (out == NULL || outlen == 0 ||
	    !name_read(buf, len, &p, true, NULL, wire, &wlen) ||
	    !name_text(wire, wlen, out, outlen, &used))
		return false;
	*pos = p;
	if (outlen_used != NULL)
		*outlen_used = used;
	return true;
}

/* Options inside an OPT rdata must tile it exactly. */
static bool
opt_rdata_ok(const uint8_t *p, size_t n)
{
	struct gk_rd r;

	gk_rd_init(&r, p, n);
	while (!r.err && gk_rd_left(&r) > 0) {
		(void)gk_rd_u16(&r);
		gk_rd_skip(&r, gk_rd_u16(&r));
	}
	return !r.err;
}

/* One additional-section record of a query; only OPT is looked at. */
static bool
query_additional(struct gk_rd *r, struct dns_query *q, bool *seen_opt)
{
	size_t start = r->pos;
	const uint8_t *rdata;
	uint16_t type, class, rdlen;
	uint32_t ttl;

	if (!dns_name_skip(r->buf, r->len, &r->pos))
		return false;
	type = gk_rd_u16(r);
	class = gk_rd_u16(r);
	ttl = gk_rd_u32(r);
	rdlen = gk_rd_u16(r);
	rdata = gk_rd_take(r, rdlen);
	if (r->err)
		return false;
	if (type != DNS_T_OPT)
		return true;
	if (*seen_opt || r->buf[start] != 0 || !opt_rdata_ok(rdata, rdlen))
		return false;
	*seen_opt = true;
	q->edns = true;
	q->edns_udp_size = class;
	q->edns_version = (uint8_t)(ttl >> 16);
	q->edns_do = (ttl & 0x8000) != 0;
	return true;
}

/*
 * The question of a query: an uncompressed name, type and class. Whether
 * the name is a host name is gk_name_parse()'s call on its text (a label
 * holding a byte no host name has shows as \DDD, which it refuses).
 */
static bool
query_question(struct gk_rd *r, struct dns_query *q)
{
	struct gk_name nm;
	size_t wlen;

	if (!name_read(r->buf, r->len, &r->pos, false, NULL, q->qname_wire,
	    &wlen))
		return false;
	q->qtype = gk_rd_u16(r);
	q->qclass = gk_rd_u16(r);
	if (r->err || !name_text(q->qname_wire, wlen, q->name,
	    sizeof(q->name), &q->name_len))
		return false;
	q->qname_wire_len = (uint8_t)wlen;
	q->name_host = gk_name_parse((const uint8_t *)q->name, q->name_len,
	    &nm) == GK_NAME_OK;
	return true;
}

static void
query_reset(struct dns_query *q)
{
	q->id = q->flags = 0;
	q->opcode = 0;
	q->qtype = q->qclass = 0;
	q->qname_wire_len = 0;
	q->name[0] = '\0';
	q->name_len = 0;
	q->name_host = false;
	q->edns = q->edns_do = false;
	q->edns_udp_size = 0;
	q->edns_version = 0;
}

enum dns_status
dns_query_parse(const uint8_t *buf, size_t len, struct dns_query *q)
{
	struct gk_rd r;
	uint16_t qd, an, ns, ar, i;
	bool seen_opt = false;

	query_reset(q);
	if (buf == NULL || len < DNS_HDR_LEN)
		return DNS_DROP;
	gk_rd_init(&r, buf, len);
	q->id = gk_rd_u16(&r);
	q->flags = gk_rd_u16(&r);
	qd = gk_rd_u16(&r);
	an = gk_rd_u16(&r);
	ns = gk_rd_u16(&r);
	ar = gk_rd_u16(&r);
	q->opcode = DNS_OPCODE(q->flags);
	if (q->flags & DNS_F_QR)
		return DNS_DROP;
	if (qd == 1 && !query_question(&r, q)) {
		q->qname_wire_len = 0;
		q->name[0] = '\0';
		q->name_len = 0;
		return q->opcode != 0 ? DNS_NOTIMP : DNS_FORMERR;
	}
	if (q->opcode != 0)
		return DNS_NOTIMP;
	if (qd != 1 || an != 0 || ns != 0)
		return DNS_FORMERR;
	for (i = 0; i < ar; i++) {
		if (!query_additional(&r, q, &seen_opt)) {
			q->edns = false;
			return DNS_FORMERR;
		}
	}
	if (r.pos != len)
		return DNS_FORMERR;
	return DNS_OK;
}

size_t
dns_query_udp_limit(const struct dns_query *q)
{
	if (!q->edns || q->edns_udp_size <= DNS_UDP_MIN)
		return DNS_UDP_MIN;
	if (q->edns_udp_size >= DNS_EDNS_SIZE)
		return DNS_EDNS_SIZE;
	return q->edns_udp_size;
}

/*
 * Reply header. Extended rcodes (> 15) go to the OPT record (put_opt); if
 * there is none, SERVFAIL is sent instead.
 */
static void
put_header(struct wr *w, const struct dns_query *q, uint16_t extra,
    uint8_t rcode, uint16_t an, uint16_t ns)
{
	uint16_t flags;

	if (rcode > 15 && !q->edns)
		rcode = DNS_RC_SERVFAIL;
	flags = DNS_F_QR | (uint16_t)((q->opcode & 0x0f) << 11) |
	    (q->flags & DNS_F_RD) | DNS_F_RA | extra | (rcode & 0x0f);
	wr_u16(w, q->id);
	wr_u16(w, flags);
	wr_u16(w, q->qname_wire_len > 0 ? 1 : 0);
	wr_u16(w, an);
	wr_u16(w, ns);
	wr_u16(w, q->edns ? 1 : 0);
	if (q->qname_wire_len > 0) {
		wr_bytes(w, q->qname_wire, q->qname_wire_len);
		wr_u16(w, q->qtype);
		wr_u16(w, q->qclass);
	}
}

static void
put_opt(struct wr *w, const struct dns_query *q, uint8_t rcode)
{
	if (!q->edns)
		return;
	wr_u16(w, 0);		/* root name (1 byte) + high byte of type */
	wr_bytes(w, &(uint8_t){ DNS_T_OPT }, 1);
	wr_u16(w, DNS_EDNS_SIZE);
	wr_u32(w, (uint32_t)(rcode >> 4) << 24);	/* version 0, no DO */
	wr_u16(w, 0);
}

static size_t
wr_done(const struct wr *w)
{
	return w->err ? 0 : w->pos;
}

size_t
dns_reply_empty(const struct dns_query *q, uint8_t rcode, uint8_t *out,
    size_t outlen)
{
	struct wr w = { out, outlen, 0, false };

	put_header(&w, q, 0, rcode, 0, 0);
	put_opt(&w, q, rcode);
	return wr_done(&w);
}

size_t
dns_reply_a(const struct dns_query *q, const uint8_t a4[4], uint32_t ttl,
    uint8_t *out, size_t outlen)
{
	struct wr w = { out, outlen, 0, false };

	if (q->qname_wire_len == 0)
		return 0;
	put_header(&w, q, 0, DNS_RC_NOERROR, 1, 0);
	wr_u16(&w, 0xc000 | DNS_HDR_LEN);	/* the question's name */
	wr_u16(&w, DNS_T_A);
	wr_u16(&w, DNS_CLASS_IN);
	wr_u32(&w, ttl);
	wr_u16(&w, 4);
	wr_bytes(&w, a4, 4);
	put_opt(&w, q, DNS_RC_NOERROR);
	return wr_done(&w);
}

size_t
dns_reply_rfc8482(const struct dns_query *q, uint32_t ttl, uint8_t *out,
    size_t outlen)
{
	static const uint8_t hinfo[] = "\x07RFC8482\x00";
	struct wr w = { out, outlen, 0, false };

	if (q->qname_wire_len == 0)
		return 0;
	put_header(&w, q, 0, DNS_RC_NOERROR, 1, 0);
	wr_u16(&w, 0xc000 | DNS_HDR_LEN);	/* the question's name */
	wr_u16(&w, DNS_T_HINFO);
	wr_u16(&w, q->qclass);
	wr_u32(&w, ttl);
	wr_u16(&w, sizeof(hinfo) - 1);
	wr_bytes(&w, hinfo, sizeof(hinfo) - 1);
	put_opt(&w, q, DNS_RC_NOERROR);
	return wr_done(&w);
}

/* Rewrite the TTL of `count` records filling buf[pos, end) exactly. */
static bool
rrs_rewrite_ttl(uint8_t *buf, size_t pos, size_t end, unsigned int count,
    uint32_t cap, uint32_t age)
{
	uint32_t ttl;
	size_t rdlen;
	uint8_t *p;

	while (count-- > 0) {
		if (!dns_name_skip(buf, end, &pos) || end - pos < 10)
			return false;
		p = buf + pos + 4;
		ttl = get32(p);
		if (ttl > DNS_TTL_MAX)
			ttl = 0;
		if (ttl > cap)
			ttl = cap;
		ttl = ttl > age ? ttl - age : 0;
		p[0] = (uint8_t)(ttl >> 24);
		p[1] = (uint8_t)(ttl >> 16);
		p[2] = (uint8_t)(ttl >> 8);
		p[3] = (uint8_t)ttl;
		rdlen = ((size_t)p[4] << 8) | p[5];
		pos += 10;
		if (end - pos < rdlen)
			return false;
		pos += rdlen;
	}
	return pos == end;
}

size_t
dns_reply_records(const struct dns_query *q, uint8_t rcode,
    const uint8_t *rrs, size_t rrs_len, uint16_t ancount, uint16_t nscount,
    uint32_t cap, uint32_t age, uint8_t *out, size_t outlen, size_t limit)
{
	struct wr w = { out, outlen, 0, false };
	size_t total, start;

	if (q->qname_wire_len == 0 || rrs_len > DNS_MAX_MSG)
		return 0;
	total = DNS_HDR_LEN + q->qname_wire_len + 4 + rrs_len +
	    (q->edns ? DNS_OPT_LEN : 0);
	if (total > limit || total > DNS_MAX_MSG) {
		put_header(&w, q, DNS_F_TC, rcode, 0, 0);
		put_opt(&w, q, rcode);
		return wr_done(&w);
	}
	put_header(&w, q, 0, rcode, ancount, nscount);
	start = w.pos;
	wr_bytes(&w, rrs, rrs_len);
	if (w.err || !rrs_rewrite_ttl(out, start, w.pos,
	    (unsigned int)ancount + nscount, cap, age))
		return 0;
	put_opt(&w, q, rcode);
	return wr_done(&w);
}

size_t
dns_build_query(uint16_t id, const struct dns_query *q, uint8_t *out,
    size_t outlen)
{
	struct wr w = { out, outlen, 0, false };

	if (q->qname_wire_len == 0)
		return 0;
	wr_u16(&w, id);
	wr_u16(&w, DNS_F_RD);
	wr_u16(&w, 1);
	wr_u16(&w, 0);
	wr_u16(&w, 0);
	wr_u16(&w, 1);
	wr_bytes(&w, q->qname_wire, q->qname_wire_len);
	wr_u16(&w, q->qtype);
	wr_u16(&w, q->qclass);
	wr_u16(&w, 0);
	wr_bytes(&w, &(uint8_t){ DNS_T_OPT }, 1);
	wr_u16(&w, DNS_EDNS_SIZE);
	wr_u32(&w, 0);
	wr_u16(&w, 0);
	return wr_done(&w);
}

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
	if (!name_read(buf, len, &r.pos, true, ttls, owner ? owner : scratch,
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
		return name_read(buf, rr->rdend, &p, true, ttls, wire, &n) &&
		    p == rr->rdend;
	case DNS_T_SOA:
		if (!name_read(buf, rr->rdend, &p, true, ttls, wire, &n) ||
		    !name_read(buf, rr->rdend, &p, true, ttls, wire, &n) ||
		    rr->rdend - p != 20)
			return false;
		min = get32(buf + p + 16);
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
			if (!name_read(buf, rr.rdend, &p, true, NULL, target,
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

	if (!name_read(r->buf, r->len, &r->pos, false, NULL, wire, &n))
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

size_t
dns_build_lookup(const char *name, uint16_t qtype, uint8_t *out,
    size_t outlen)
{
	size_t pos = DNS_HDR_LEN, n;
	const char *p = name, *dot;

	if (outlen < DNS_HDR_LEN + 5)
		return 0;
	memset(out, 0, DNS_HDR_LEN);
	out[2] = 0x01;			/* RD */
	out[5] = 1;			/* QDCOUNT */
	while (*p != '\0') {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n == 0 || n > DNS_MAX_LABEL ||
		    pos - DNS_HDR_LEN + 1 + n + 1 > DNS_MAX_NAME ||
		    pos + 1 + n + 5 > outlen)
			return 0;
		out[pos++] = (uint8_t)n;
		memcpy(out + pos, p, n);
		pos += n;
		p += n + (dot != NULL ? 1 : 0);
	}
	out[pos++] = 0;
	out[pos++] = (uint8_t)(qtype >> 8);
	out[pos++] = (uint8_t)qtype;
	out[pos++] = 0;
	out[pos++] = DNS_CLASS_IN;
	return pos;
}
