/*
 * dns_msg: DNS message codec (RFC 1035, 2308, 6891, 8482).
 *
 * Everything here is pure over bounded buffers. Names are read with
 * dns_name_read(): pointers only backwards (targets strictly decrease, so no
 * loops), never into the header, at most DNS_MAX_PTR_HOPS of them.
 */
#include <sys/socket.h>

#include <string.h>

#include "dns/dns_msg.h"
#include "dns/dns_msg_int.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_rd.h"

#define DNS_OPT_LEN		11	/* root name, type, class, ttl, rdlen */

/* A bounded writer with a sticky error, the twin of gk_rd. */
struct wr {
	uint8_t	*buf;
	size_t	 len;
	size_t	 pos;
	bool	 err;
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
bool
dns_name_read(const uint8_t *buf, size_t len, size_t *pos, bool ptrs,
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
	    !dns_name_read(buf, len, &p, true, NULL, wire, &wlen) ||
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

	if (!dns_name_read(r->buf, r->len, &r->pos, false, NULL, q->qname_wire,
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
		ttl = dns_get32(p);
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
