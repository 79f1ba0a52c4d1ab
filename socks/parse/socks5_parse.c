/*
 * SOCKS5 wire format (RFC 1928) and username/password subnegotiation
 * (RFC 1929): parsers for what the client sends, builders for our replies.
 * Also socks_host_parse(), shared with the HTTP parser.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_rd.h"
#include "gatekeeper/policy/gk_policy.h"
#include "socks/parse/socks.h"

/* A bare or bracketed IPv6 literal, or a dotted-quad IPv4 literal. */
static int
host_addr(const uint8_t *s, size_t n, struct gk_addr *a)
{
	char text[GK_ADDR_STRLEN];
	int family = AF_INET;

	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
		family = AF_INET6;
	} else if (memchr(s, ':', n) != NULL)
		family = AF_INET6;
	if (n == 0 || n >= sizeof(text))
		return -1;
	memcpy(text, s, n);
	text[n] = '\0';
	memset(a, 0, sizeof(*a));
	if (inet_pton(family, text, a->bytes) != 1)
		return -1;
	a->family = (sa_family_t)family;
	return 0;
}

int
socks_host_parse(const uint8_t *s, size_t n, struct gk_host *out)
{
	char tmp[GK_NAME_MAX + 1];
	int r;

	out->is_addr = false;
	out->name[0] = '\0';
	memset(&out->addr, 0, sizeof(out->addr));
	if (n == 0 || n > GK_HOST_MAX || memchr(s, '\0', n) != NULL)
		return -1;
	if (host_addr(s, n, &out->addr) == 0) {
		out->is_addr = true;
		if (gk_addr_ntop(&out->addr, out->name,
		    sizeof(out->name)) == NULL)
			out->name[0] = '\0';
		return 0;
	}
	if ((r = gk_name_normalize((const char *)s, n, tmp)) < 0)
		return -1;
	memcpy(out->name, tmp, (size_t)r + 1);
	return 0;
}

/* ---- parsers ---- */

enum socks5_status
socks5_parse_greeting(const uint8_t *buf, size_t len,
    struct socks5_greeting *out)
{
	struct gk_rd r;
	const uint8_t *m;
	size_t i;

	memset(out, 0, sizeof(*out));
	gk_rd_init(&r, buf, len);
	if (gk_rd_left(&r) >= 1 && buf[0] != SOCKS5_VERSION)
		return SOCKS5_BAD_VERSION;
	gk_rd_skip(&r, 1);
	out->nmethods = gk_rd_u8(&r);
	if (r.err)
		return SOCKS5_NEED_MORE;
	if (out->nmethods == 0)
		return SOCKS5_INVALID;
	if ((m = gk_rd_take(&r, out->nmethods)) == NULL)
		return SOCKS5_NEED_MORE;
	for (i = 0; i < out->nmethods; i++) {
		if (m[i] == SOCKS5_METHOD_NONE)
			out->no_auth = true;
		else if (m[i] == SOCKS5_METHOD_USERPASS)
			out->userpass = true;
	}
	out->consumed = r.pos;
	return SOCKS5_OK;
}

/* A length-prefixed RFC 1929 string; no NUL inside. */
static enum socks5_status
auth_field(struct gk_rd *r, char dst[256], uint8_t *dlen, bool nonempty)
{
	const uint8_t *p;

	*dlen = gk_rd_u8(r);
	if (r->err)
		return SOCKS5_NEED_MORE;
	if (nonempty && *dlen == 0)
		return SOCKS5_INVALID;
	if ((p = gk_rd_take(r, *dlen)) == NULL)
		return memchr(r->buf + r->pos, '\0', r->len - r->pos) ?
		    SOCKS5_INVALID : SOCKS5_NEED_MORE;
	if (memchr(p, '\0', *dlen) != NULL)
		return SOCKS5_INVALID;
	memcpy(dst, p, *dlen);
	dst[*dlen] = '\0';
	return SOCKS5_OK;
}

enum socks5_status
socks5_parse_auth(const uint8_t *buf, size_t len, struct socks5_auth *out)
{
	enum socks5_status st;
	struct gk_rd r;

	memset(out, 0, sizeof(*out));
	gk_rd_init(&r, buf, len);
	if (len == 0)
		return SOCKS5_NEED_MORE;
	if (gk_rd_u8(&r) != SOCKS5_AUTH_VERSION)
		return SOCKS5_INVALID;
	if ((st = auth_field(&r, out->user, &out->ulen, true)) != SOCKS5_OK)
		goto fail;
	if ((st = auth_field(&r, out->pass, &out->plen, false)) != SOCKS5_OK)
		goto fail;
	out->consumed = r.pos;
	return SOCKS5_OK;
fail:
	explicit_bzero(out, sizeof(*out));
	return st;
}

/* DST.ADDR of ATYP 3: printable bytes, then an IP literal or a name. */
static enum socks5_status
request_domain(struct gk_rd *r, struct gk_host *dst)
{
	const uint8_t *p;
	size_t i, n;

	n = gk_rd_u8(r);
	if (r->err)
		return SOCKS5_NEED_MORE;
	if (n == 0)
		return SOCKS5_INVALID;
	for (i = 0; i < n && r->pos + i < r->len; i++) {
		if (r->buf[r->pos + i] <= 0x20 || r->buf[r->pos + i] >= 0x7f)
			return SOCKS5_INVALID;
	}
	if ((p = gk_rd_take(r, n)) == NULL)
		return SOCKS5_NEED_MORE;
	if (socks_host_parse(p, n, dst) == 0)
		return SOCKS5_OK;
	for (i = 0; i < n; i++)
		dst->name[i] = (char)gk_lower(p[i]);
	dst->name[n] = '\0';
	return SOCKS5_BAD_NAME;
}

static enum socks5_status
request_addr(struct gk_rd *r, uint8_t atyp, struct gk_host *dst)
{
	uint8_t a[16];
	size_t n = atyp == SOCKS5_ATYP_IPV4 ? 4 : 16;

	gk_rd_bytes(r, a, n);
	if (r->err)
		return SOCKS5_NEED_MORE;
	dst->is_addr = true;
	gk_addr_from_bytes(&dst->addr, n == 4 ? AF_INET : AF_INET6, a);
	if (gk_addr_ntop(&dst->addr, dst->name, sizeof(dst->name)) == NULL)
		dst->name[0] = '\0';
	return SOCKS5_OK;
}

enum socks5_status
socks5_parse_request(const uint8_t *buf, size_t len,
    struct socks5_request *out)
{
	enum socks5_status st, name_st = SOCKS5_OK;
	struct gk_rd r;

	memset(out, 0, sizeof(*out));
	gk_rd_init(&r, buf, len);
	if (len >= 1 && buf[0] != SOCKS5_VERSION)
		return SOCKS5_BAD_VERSION;
	gk_rd_skip(&r, 1);
	if (gk_rd_left(&r) >= 1) {
		out->cmd = gk_rd_u8(&r);
		if (out->cmd != SOCKS5_CMD_CONNECT)
			return SOCKS5_BAD_COMMAND;
	}
	if (gk_rd_left(&r) >= 1 && gk_rd_u8(&r) != 0)
		return SOCKS5_INVALID;
	out->atyp = gk_rd_u8(&r);
	if (r.err)
		return SOCKS5_NEED_MORE;
	if (out->atyp == SOCKS5_ATYP_DOMAIN)
		st = name_st = request_domain(&r, &out->dst);
	else if (out->atyp == SOCKS5_ATYP_IPV4 || out->atyp == SOCKS5_ATYP_IPV6)
		st = request_addr(&r, out->atyp, &out->dst);
	else
		return SOCKS5_BAD_ATYP;
	if (st != SOCKS5_OK && st != SOCKS5_BAD_NAME)
		goto fail;
	out->dst.port = gk_rd_u16(&r);
	if (r.err) {
		st = SOCKS5_NEED_MORE;
		goto fail;
	}
	out->consumed = r.pos;
	return name_st;
fail:
	memset(&out->dst, 0, sizeof(out->dst));
	return st;
}

const char *
socks5_strstatus(enum socks5_status st)
{
	switch (st) {
	case SOCKS5_OK:
		return "ok";
	case SOCKS5_NEED_MORE:
		return "need more";
	case SOCKS5_INVALID:
		return "invalid";
	case SOCKS5_BAD_VERSION:
		return "bad version";
	case SOCKS5_BAD_COMMAND:
		return "command not supported";
	case SOCKS5_BAD_ATYP:
		return "address type not supported";
	case SOCKS5_BAD_NAME:
		return "bad host name";
	}
	return "unknown";
}

uint8_t
socks5_status_rep(enum socks5_status st)
{
	switch (st) {
	case SOCKS5_OK:
		return SOCKS5_REP_SUCCEEDED;
	case SOCKS5_BAD_COMMAND:
		return SOCKS5_REP_CMD_NOT_SUPPORTED;
	case SOCKS5_BAD_ATYP:
		return SOCKS5_REP_ATYP_NOT_SUPPORTED;
	case SOCKS5_BAD_NAME:
		return SOCKS5_REP_HOST_UNREACHABLE;
	case SOCKS5_NEED_MORE:
	case SOCKS5_INVALID:
	case SOCKS5_BAD_VERSION:
		break;
	}
	return SOCKS5_REP_GENERAL_FAILURE;
}

/* ---- builders ---- */

size_t
socks5_build_method(uint8_t method, uint8_t *out, size_t outlen)
{
	if (outlen < 2)
		return 0;
	out[0] = SOCKS5_VERSION;
	out[1] = method;
	return 2;
}

size_t
socks5_build_auth_reply(bool ok, uint8_t *out, size_t outlen)
{
	if (outlen < 2)
		return 0;
	out[0] = SOCKS5_AUTH_VERSION;
	out[1] = ok ? 0x00 : 0x01;
	return 2;
}

size_t
socks5_build_reply(uint8_t rep, const struct gk_addr *bnd, uint16_t port,
    uint8_t *out, size_t outlen)
{
	size_t alen = 4;
	bool v6 = bnd != NULL && bnd->family == AF_INET6;

	if (v6)
		alen = 16;
	if (outlen < 6 + alen)
		return 0;
	out[0] = SOCKS5_VERSION;
	out[1] = rep;
	out[2] = 0;
	out[3] = v6 ? SOCKS5_ATYP_IPV6 : SOCKS5_ATYP_IPV4;
	if (bnd != NULL && (bnd->family == AF_INET || v6))
		memcpy(out + 4, bnd->bytes, alen);
	else
		memset(out + 4, 0, alen);
	out[4 + alen] = (uint8_t)(port >> 8);
	out[5 + alen] = (uint8_t)(port & 0xff);
	return 6 + alen;
}
