/*
 * sni_parse: find the server_name in a TLS ClientHello.
 *
 * Two passes over the caller's buffer. The first walks the record headers
 * (TLSPlaintext, RFC 8446 §5.1) until the handshake records hold the whole
 * ClientHello; it reads only headers and the 4-byte handshake header, so a
 * client dribbling its hello byte by byte costs O(records) per call. The
 * second, once the hello is complete, parses its body: in place when it
 * sits in one record, else from a copy reassembled on the stack.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_rd.h"
#include "sni/sni.h"

#define TLS_CT_CCS		20	/* the first TLS content type */
#define TLS_CT_HANDSHAKE	22
#define TLS_CT_HEARTBEAT	24	/* the last one a server knows */
#define SSL2_MT_CLIENT_HELLO	1
#define SSL2_DECIDE		3	/* bytes to tell an SSLv2 hello */
#define TLS_HS_CLIENT_HELLO	1
#define TLS_MAX_RECORD		16384	/* TLSPlaintext.length, 2^14 */
#define TLS_HS_HDR		4
#define TLS_RANDOM_LEN		32
#define TLS_MAX_SESSION_ID	32
#define EXT_SERVER_NAME		0x0000
#define EXT_ECH			0xfe0d
#define SNI_HOST_NAME		0

/* Progress of the record walk. */
struct walk {
	size_t		pos;		/* end of the last complete record */
	size_t		got;		/* handshake bytes in those records */
	size_t		need;		/* TLS_HS_HDR + body; 0 until known */
	size_t		hdr_got;	/* bytes of hdr[] seen so far */
	uint8_t		hdr[TLS_HS_HDR];
	unsigned int	nrec;
};

/* RFC 8701: 0x0a0a, 0x1a1a, ... 0xfafa. */
static bool
is_grease(uint16_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* Note the handshake header bytes among the first n of a payload. */
static enum sni_status
walk_hs_header(struct walk *w, const uint8_t *p, size_t n)
{
	uint32_t body;

	while (w->hdr_got < TLS_HS_HDR && n > 0) {
		w->hdr[w->hdr_got++] = *p++;
		n--;
	}
	if (w->hdr_got >= 1 && w->hdr[0] != TLS_HS_CLIENT_HELLO)
		return SNI_INVALID;
	if (w->hdr_got < TLS_HS_HDR || w->need != 0)
		return SNI_OK;
	body = ((uint32_t)w->hdr[1] << 16) | ((uint32_t)w->hdr[2] << 8) |
	    w->hdr[3];
	if (body > SNI_MAX_HELLO)
		return SNI_TOO_LONG;
	w->need = TLS_HS_HDR + body;
	return SNI_OK;
}

/*
 * Look at the record starting at w->pos. SNI_OK: it was complete and the
 * walk moved past it; anything else ends the walk.
 */
static enum sni_status
walk_record(const uint8_t *buf, size_t len, struct walk *w)
{
	const uint8_t *p = buf + w->pos;
	size_t left = len - w->pos, rlen, avail;
	enum sni_status st;

	/* (the first record's type and version passed first_bytes()) */
	if (left >= 1 && p[0] != TLS_CT_HANDSHAKE)
		return SNI_INVALID;
	if (left >= 2 && p[1] != 3)
		return SNI_INVALID;
	if (left < SNI_REC_HDR)
		return SNI_NEED_MORE;
	rlen = ((size_t)p[3] << 8) | p[4];
	if (rlen == 0 || rlen > TLS_MAX_RECORD)
		return SNI_INVALID;
	avail = left - SNI_REC_HDR;
	if (avail > rlen)
		avail = rlen;
	if ((st = walk_hs_header(w, p + SNI_REC_HDR, avail)) != SNI_OK)
		return st;
	/* the hello must fill its records exactly */
	if (w->need != 0 && rlen > w->need - w->got)
		return SNI_INVALID;
	if (avail < rlen)
		return SNI_NEED_MORE;
	w->nrec++;
	w->got += rlen;
	w->pos += SNI_REC_HDR + rlen;
	return SNI_OK;
}

static enum sni_status
walk_records(const uint8_t *buf, size_t len, struct walk *w)
{
	enum sni_status st;

	memset(w, 0, sizeof(*w));
	for (;;) {
		if (w->need != 0 && w->got == w->need)
			return SNI_OK;
		if (w->nrec == SNI_MAX_RECORDS)
			return SNI_TOO_LONG;
		if ((st = walk_record(buf, len, w)) != SNI_OK)
			return st;
	}
}

/* Copy the payloads of the walked records into hs (w->need bytes). */
static void
gather(const uint8_t *buf, const struct walk *w, uint8_t *hs)
{
	size_t pos = 0, off = 0, rlen;
	unsigned int i;

	for (i = 0; i < w->nrec; i++) {
		rlen = ((size_t)buf[pos + 3] << 8) | buf[pos + 4];
		memcpy(hs + off, buf + pos + SNI_REC_HDR, rlen);
		off += rlen;
		pos += SNI_REC_HDR + rlen;
	}
}

/*
 * Validate and store a HostName with the rule patterns and DNS names
 * follow (gk_name.h): an IP literal (RFC 6066 3 forbids it), a byte no
 * host name has or a bad label is a malformed hello.
 */
static enum sni_status
copy_name(const uint8_t *name, size_t n, struct sni_result *out)
{
	struct gk_name nm;

	if (gk_name_parse(name, n, &nm) != GK_NAME_OK)
		return SNI_INVALID;
	memcpy(out->name, nm.text, nm.len + 1);
	out->name_len = nm.len;
	return SNI_OK;
}

/* server_name extension_data: ServerNameList with one host_name. */
static enum sni_status
parse_server_name(const uint8_t *p, size_t n, struct sni_result *out)
{
	struct gk_rd r;
	const uint8_t *name;
	size_t list, nlen, count = 0;
	uint8_t type;

	gk_rd_init(&r, p, n);
	list = gk_rd_u16(&r);
	if (r.err || list == 0 || list != gk_rd_left(&r))
		return SNI_INVALID;
	while (gk_rd_left(&r) > 0) {
		type = gk_rd_u8(&r);
		nlen = gk_rd_u16(&r);
		name = gk_rd_take(&r, nlen);
		/* other name types have no known length format */
		if (r.err || type != SNI_HOST_NAME || ++count > 1)
			return SNI_INVALID;
		if (copy_name(name, nlen, out) != SNI_OK)
			return SNI_INVALID;
	}
	return SNI_OK;
}

/* The extensions block, its length already checked to fill r exactly. */
static enum sni_status
parse_extensions(struct gk_rd *r, struct sni_result *out)
{
	uint64_t seen[65536 / 64];
	const uint8_t *data;
	uint16_t type, elen;
	bool sni = false;

	memset(seen, 0, sizeof(seen));
	while (gk_rd_left(r) > 0) {
		type = gk_rd_u16(r);
		elen = gk_rd_u16(r);
		data = gk_rd_take(r, elen);
		if (r->err)
			return SNI_INVALID;
		if (seen[type / 64] & ((uint64_t)1 << (type % 64)))
			return SNI_INVALID;
		seen[type / 64] |= (uint64_t)1 << (type % 64);
		if (is_grease(type))
			out->grease = true;
		if (type == EXT_ECH)
			out->ech = true;
		if (type != EXT_SERVER_NAME)
			continue;
		if (parse_server_name(data, elen, out) != SNI_OK)
			return SNI_INVALID;
		sni = true;
	}
	return sni ? SNI_OK : SNI_ABSENT;
}

/* ClientHello body (after the handshake header), n bytes exactly. */
static enum sni_status
parse_hello(const uint8_t *p, size_t n, struct sni_result *out)
{
	struct gk_rd r;
	const uint8_t *cs;
	size_t sid, cslen, cmlen, extlen, i;

	gk_rd_init(&r, p, n);
	out->legacy_version = gk_rd_u16(&r);
	gk_rd_skip(&r, TLS_RANDOM_LEN);
	sid = gk_rd_u8(&r);
	gk_rd_skip(&r, sid);
	cslen = gk_rd_u16(&r);
	cs = gk_rd_take(&r, cslen);
	cmlen = gk_rd_u8(&r);
	gk_rd_skip(&r, cmlen);		/* legacy_compression_methods */
	if (r.err || (out->legacy_version >> 8) != 3 ||
	    sid > TLS_MAX_SESSION_ID || cslen == 0 || cslen % 2 != 0 ||
	    cmlen == 0)
		return SNI_INVALID;
	for (i = 0; i < cslen; i += 2)
		if (is_grease((uint16_t)((cs[i] << 8) | cs[i + 1])))
			out->grease = true;
	if (gk_rd_left(&r) == 0)
		return SNI_ABSENT;	/* no extensions at all (TLS 1.2) */
	extlen = gk_rd_u16(&r);
	if (r.err || extlen != gk_rd_left(&r))
		return SNI_INVALID;
	return parse_extensions(&r, out);
}

/*
 * What the first bytes are, before the record walk: SNI_OK to walk TLS
 * records, else the verdict (NEED_MORE while too few bytes decide).
 * SSLv2 record header: 2 bytes, high bit set, then msg_type. A server
 * that still takes such a hello for compatibility would go on without a
 * server name; a warning alert or an empty record before a hello is
 * skipped by some servers, so no other record type may come first.
 */
static enum sni_status
first_bytes(const uint8_t *buf, size_t len)
{
	if (len == 0)
		return SNI_NEED_MORE;
	if (buf[0] & 0x80) {
		if (len < SSL2_DECIDE)
			return SNI_NEED_MORE;
		return buf[2] == SSL2_MT_CLIENT_HELLO ? SNI_SSL2 : SNI_NOT_TLS;
	}
	if (buf[0] < TLS_CT_CCS || buf[0] > TLS_CT_HEARTBEAT)
		return SNI_NOT_TLS;
	if (len < 2)
		return SNI_NEED_MORE;
	if (buf[0] == TLS_CT_HANDSHAKE)
		return buf[1] == 3 ? SNI_OK : SNI_NOT_HELLO;
	return buf[1] == 3 ? SNI_NOT_HELLO : SNI_NOT_TLS;
}

enum sni_status
sni_parse(const uint8_t *buf, size_t len, struct sni_result *out)
{
	uint8_t scratch[TLS_HS_HDR + SNI_MAX_HELLO];
	const uint8_t *hs;
	struct walk w;
	enum sni_status st;

	memset(out, 0, sizeof(*out));
	if (len >= 3)
		out->record_version = (uint16_t)((buf[1] << 8) | buf[2]);
	if ((st = first_bytes(buf, len)) != SNI_OK)
		return st;
	st = walk_records(buf, len, &w);
	out->nrecords = w.nrec;
	if (st != SNI_OK)
		return st;
	if (w.nrec == 1)
		hs = buf + SNI_REC_HDR;
	else {
		gather(buf, &w, scratch);
		hs = scratch;
	}
	st = parse_hello(hs + TLS_HS_HDR, w.need - TLS_HS_HDR, out);
	if (st != SNI_OK) {
		out->name[0] = '\0';
		out->name_len = 0;
	}
	if (st == SNI_OK || st == SNI_ABSENT)
		out->consumed = w.pos;
	return st;
}

const char *
sni_strstatus(enum sni_status st)
{
	switch (st) {
	case SNI_NEED_MORE:
		return "need-more";
	case SNI_OK:
		return "ok";
	case SNI_ABSENT:
		return "no-sni";
	case SNI_NOT_TLS:
		return "not-tls";
	case SNI_INVALID:
		return "invalid-tls";
	case SNI_TOO_LONG:
		return "tls-too-long";
	case SNI_SSL2:
		return "sslv2-hello";
	case SNI_NOT_HELLO:
		return "tls-not-hello";
	}
	return "unknown";
}

bool
sni_matches(const struct sni_result *r, const char *host, size_t host_len)
{
	size_t i;

	if (host_len > 0 && host[host_len - 1] == '.')
		host_len--;
	if (r->name_len == 0 || host_len != r->name_len)
		return false;
	for (i = 0; i < host_len; i++) {
		if ((char)gk_lower((uint8_t)host[i]) != r->name[i])
			return false;
	}
	return true;
}
