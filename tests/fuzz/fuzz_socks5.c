/*
 * Fuzz the SOCKS5 parsers. The input is fed to each parser alone and as a
 * client stream (greeting, RFC 1929 if offered, request). Invariants:
 * consumed <= len, a shorter prefix is NEED_MORE, names NUL-terminated,
 * printable and lower case, a reply built for the target parses back as
 * the same request.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "gatekeeper/policy/gk_policy.h"
#include "socks/parse/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_name(const char *name, size_t cap)
{
	size_t i, n = strnlen(name, cap);

	assert(n < cap);
	for (i = 0; i < n; i++) {
		assert(name[i] > 0x20 && name[i] < 0x7f);
		assert(name[i] < 'A' || name[i] > 'Z');
	}
}

static size_t
greeting(const uint8_t *b, size_t len, bool *userpass)
{
	struct socks5_greeting g;

	*userpass = false;
	if (socks5_parse_greeting(b, len, &g) != SOCKS5_OK) {
		assert(g.consumed == 0);
		return 0;
	}
	assert(g.nmethods >= 1 && g.consumed == 2 + (size_t)g.nmethods);
	assert(g.consumed <= len);
	assert(socks5_parse_greeting(b, g.consumed - 1, &g) ==
	    SOCKS5_NEED_MORE);
	assert(socks5_parse_greeting(b, len, &g) == SOCKS5_OK);
	*userpass = g.userpass;
	return g.consumed;
}

static size_t
auth(const uint8_t *b, size_t len)
{
	struct socks5_auth a;

	if (socks5_parse_auth(b, len, &a) != SOCKS5_OK) {
		assert(a.consumed == 0 && a.user[0] == '\0');
		return 0;
	}
	assert(a.ulen >= 1 && strlen(a.user) == a.ulen);
	assert(strlen(a.pass) == a.plen);
	assert(a.consumed == 3 + (size_t)a.ulen + a.plen && a.consumed <= len);
	assert(socks5_parse_auth(b, a.consumed - 1, &a) == SOCKS5_NEED_MORE);
	return a.consumed;
}

/* Our reply to a request, with REP = CONNECT, reads as that request. */
static void
reply_roundtrip(const struct socks5_request *r)
{
	struct socks5_request r2;
	uint8_t out[SOCKS5_REPLY_MAX];
	size_t n;

	n = socks5_build_reply(SOCKS5_CMD_CONNECT, &r->dst.addr, r->dst.port,
	    out, sizeof(out));
	assert(n == 10 || n == 22);
	assert(socks5_parse_request(out, n, &r2) == SOCKS5_OK);
	assert(r2.consumed == n && r2.dst.is_addr);
	assert(gk_addr_eq(&r2.dst.addr, &r->dst.addr));
	assert(r2.dst.port == r->dst.port);
	assert(strcmp(r2.dst.name, r->dst.name) == 0);
}

static void
request(const uint8_t *b, size_t len)
{
	struct socks5_request r;
	char norm[GK_NAME_MAX + 1];
	enum socks5_status st;
	size_t c;

	st = socks5_parse_request(b, len, &r);
	check_name(r.dst.name, sizeof(r.dst.name));
	if (st != SOCKS5_OK && st != SOCKS5_BAD_NAME) {
		assert(r.consumed == 0 && r.dst.name[0] == '\0');
		return;
	}
	assert(r.cmd == SOCKS5_CMD_CONNECT && r.consumed <= len);
	assert(r.consumed >= 7 && r.consumed <= 4 + 1 + 255 + 2);
	c = r.consumed;
	assert(socks5_parse_request(b, c - 1, &r) == SOCKS5_NEED_MORE);
	assert(socks5_parse_request(b, c, &r) == st && r.consumed == c);
	assert(socks5_status_rep(st) != SOCKS5_REP_SUCCEEDED ||
	    st == SOCKS5_OK);
	if (st == SOCKS5_BAD_NAME) {
		assert(r.atyp == SOCKS5_ATYP_DOMAIN && !r.dst.is_addr);
		return;
	}
	if (r.dst.is_addr) {
		assert(r.dst.addr.family == AF_INET ||
		    r.dst.addr.family == AF_INET6);
		reply_roundtrip(&r);
	} else {
		assert(r.atyp == SOCKS5_ATYP_DOMAIN);
		assert(gk_name_normalize(r.dst.name, strlen(r.dst.name),
		    norm) == (int)strlen(r.dst.name));
		assert(strcmp(norm, r.dst.name) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off, n;
	bool userpass;

	(void)greeting(data, size, &userpass);
	(void)auth(data, size);
	request(data, size);
	/* as a stream */
	if ((off = greeting(data, size, &userpass)) == 0)
		return 0;
	if (userpass && size > off && data[off] == SOCKS5_AUTH_VERSION) {
		if ((n = auth(data + off, size - off)) == 0)
			return 0;
		off += n;
	}
	request(data + off, size - off);
	return 0;
}
