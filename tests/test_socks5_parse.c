/*
 * Unit tests for socks/socks5_parse.c: curl captures (the same bytes as
 * tests/fuzz/fuzz_socks5.in/curl_*) and hand-built boundary cases for
 * every status and reply code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "socks/parse/socks.h"

#define B(s)	(const uint8_t *)(s), sizeof(s) - 1
#define NELEM(a) (sizeof(a) / sizeof(*(a)))

/* curl 7.88.1 --socks5-hostname / --socks5 / socks5h://alice:s3cret@ */
static const uint8_t cap_name[] =
    "\x05\x02\x00\x01" "\x05\x01\x00\x03\x0c" "example.test\x00\x50";
static const uint8_t cap_v4[] =
    "\x05\x02\x00\x01" "\x05\x01\x00\x01\xc0\x00\x02\x01\x00\x50";
static const uint8_t cap_v6[] =
    "\x05\x02\x00\x01" "\x05\x01\x00\x04\x20\x01\x0d\xb8\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x01\x00\x50";
static const uint8_t cap_auth[] =
    "\x05\x03\x00\x01\x02" "\x01\x05" "alice\x06" "s3cret"
    "\x05\x01\x00\x03\x0c" "example.test\x1f\x90";

static const struct {
	const uint8_t	*b;
	size_t		 len;
	size_t		 glen;		/* greeting */
	size_t		 alen;		/* RFC 1929, 0 if none */
	const char	*name;
	uint16_t	 port;
	bool		 is_addr;
} captures[] = {
	{ cap_name, sizeof(cap_name) - 1, 4, 0, "example.test", 80, false },
	{ cap_v4, sizeof(cap_v4) - 1, 4, 0, "192.0.2.1", 80, true },
	{ cap_v6, sizeof(cap_v6) - 1, 4, 0, "2001:db8::1", 80, true },
	{ cap_auth, sizeof(cap_auth) - 1, 5, 14, "example.test", 8080, false },
};

/* ---- greeting ---- */

static const struct {
	const uint8_t	*b;
	size_t		 len;
	enum socks5_status st;
	size_t		 consumed;
	bool		 no_auth, userpass;
} greetings[] = {
	{ B(""), SOCKS5_NEED_MORE, 0, false, false },
	{ B("\x05"), SOCKS5_NEED_MORE, 0, false, false },
	{ B("\x05\x01"), SOCKS5_NEED_MORE, 0, false, false },
	{ B("\x05\x01\x00"), SOCKS5_OK, 3, true, false },
	{ B("\x05\x01\x02"), SOCKS5_OK, 3, false, true },
	{ B("\x05\x01\x01"), SOCKS5_OK, 3, false, false },	/* GSSAPI */
	{ B("\x05\x03\x00\x01\x02"), SOCKS5_OK, 5, true, true },
	{ B("\x05\x02\x00\x02" "\x05\x01"), SOCKS5_OK, 4, true, true },
	{ B("\x05\x00"), SOCKS5_INVALID, 0, false, false },
	{ B("\x04"), SOCKS5_BAD_VERSION, 0, false, false },
	{ B("\x04\x01\x00\x50\xc0\x00\x02\x01" "u\x00"), SOCKS5_BAD_VERSION,
	    0, false, false },
	{ B("GET / HTTP/1.1\r\n"), SOCKS5_BAD_VERSION, 0, false, false },
	{ B("\x00"), SOCKS5_BAD_VERSION, 0, false, false },
};

static void
test_greeting(void **state)
{
	struct socks5_greeting g;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(greetings); i++) {
		assert_int_equal(socks5_parse_greeting(greetings[i].b,
		    greetings[i].len, &g), greetings[i].st);
		assert_int_equal(g.consumed, greetings[i].consumed);
		assert_int_equal(g.no_auth, greetings[i].no_auth);
		assert_int_equal(g.userpass, greetings[i].userpass);
	}
}

static void
test_greeting_255_methods(void **state)
{
	struct socks5_greeting g;
	uint8_t b[257];
	size_t i;

	(void)state;
	b[0] = 5;
	b[1] = 255;
	for (i = 0; i < 255; i++)
		b[2 + i] = (uint8_t)(i + 1);	/* 0x01..0xff, no 0x00 */
	for (i = 0; i < sizeof(b); i++)
		assert_int_equal(socks5_parse_greeting(b, i, &g),
		    SOCKS5_NEED_MORE);
	assert_int_equal(socks5_parse_greeting(b, sizeof(b), &g), SOCKS5_OK);
	assert_int_equal(g.consumed, 257);
	assert_int_equal(g.nmethods, 255);
	assert_false(g.no_auth);
	assert_true(g.userpass);
}

/* ---- RFC 1929 ---- */

static const struct {
	const uint8_t	*b;
	size_t		 len;
	enum socks5_status st;
	const char	*user, *pass;
	size_t		 consumed;
} auths[] = {
	{ B(""), SOCKS5_NEED_MORE, "", "", 0 },
	{ B("\x01"), SOCKS5_NEED_MORE, "", "", 0 },
	{ B("\x01\x01" "a"), SOCKS5_NEED_MORE, "", "", 0 },
	{ B("\x01\x01" "a\x00"), SOCKS5_OK, "a", "", 4 },	/* plen 0 */
	{ B("\x01\x01" "a\x01" "b"), SOCKS5_OK, "a", "b", 5 },
	{ B("\x01\x01" "a\x01" "b\x05\x01"), SOCKS5_OK, "a", "b", 5 },
	{ B("\x01\x00\x01" "b"), SOCKS5_INVALID, "", "", 0 },	/* ulen 0 */
	{ B("\x05\x01" "a\x01" "b"), SOCKS5_INVALID, "", "", 0 },
	{ B("\x01\x03" "a\x00" "b\x01" "c"), SOCKS5_INVALID, "", "", 0 },
	{ B("\x01\x03" "a\x00"), SOCKS5_INVALID, "", "", 0 },
	{ B("\x01\x01" "a\x02" "\x00" "c"), SOCKS5_INVALID, "", "", 0 },
};

static void
test_auth(void **state)
{
	struct socks5_auth a;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(auths); i++) {
		assert_int_equal(socks5_parse_auth(auths[i].b, auths[i].len,
		    &a), auths[i].st);
		assert_string_equal(a.user, auths[i].user);
		assert_string_equal(a.pass, auths[i].pass);
		assert_int_equal(a.consumed, auths[i].consumed);
	}
}

static void
test_auth_255(void **state)
{
	struct socks5_auth a;
	uint8_t b[3 + 255 + 255];
	size_t i;

	(void)state;
	b[0] = 1;
	b[1] = 255;
	memset(b + 2, 'u', 255);
	b[257] = 255;
	memset(b + 258, 'p', 255);
	for (i = 0; i < sizeof(b); i++)
		assert_int_equal(socks5_parse_auth(b, i, &a),
		    SOCKS5_NEED_MORE);
	assert_int_equal(socks5_parse_auth(b, sizeof(b), &a), SOCKS5_OK);
	assert_int_equal(a.consumed, sizeof(b));
	assert_int_equal(a.ulen, 255);
	assert_int_equal(a.plen, 255);
	assert_int_equal(strlen(a.user), 255);
	assert_int_equal(strlen(a.pass), 255);
	assert_int_equal(a.pass[254], 'p');
}

/* ---- request ---- */

static const struct {
	const uint8_t	*b;
	size_t		 len;
	enum socks5_status st;
	uint8_t		 rep;		/* socks5_status_rep() */
	uint8_t		 cmd, atyp;
	const char	*name;
	uint16_t	 port;
	size_t		 consumed;
} requests[] = {
	{ B("\x05\x01\x00\x01\xc0\x00\x02\x01\x00\x50"), SOCKS5_OK, 0,
	    1, 1, "192.0.2.1", 80, 10 },
	{ B("\x05\x01\x00\x01\xc0\x00\x02\x01\x00\x50" "GET"), SOCKS5_OK, 0,
	    1, 1, "192.0.2.1", 80, 10 },
	{ B("\x05\x01\x00\x04\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01"
	    "\x01\xbb"), SOCKS5_OK, 0, 1, 4, "2001:db8::1", 443, 22 },
	{ B("\x05\x01\x00\x03\x0c" "Example.TEST\x01\xbb"), SOCKS5_OK, 0,
	    1, 3, "example.test", 443, 19 },
	{ B("\x05\x01\x00\x03\x0d" "example.test.\x01\xbb"), SOCKS5_OK, 0,
	    1, 3, "example.test", 443, 20 },
	{ B("\x05\x01\x00\x03\x09" "192.0.2.1\x00\x50"), SOCKS5_OK, 0,
	    1, 3, "192.0.2.1", 80, 16 },
	{ B("\x05\x01\x00\x03\x0b" "2001:DB8::1\x00\x50"), SOCKS5_OK, 0,
	    1, 3, "2001:db8::1", 80, 18 },
	{ B("\x05\x01\x00\x03\x0d" "[2001:db8::1]\x00\x50"), SOCKS5_OK, 0,
	    1, 3, "2001:db8::1", 80, 20 },
	{ B("\x05\x01\x00\x03\x01" "a\x00\x00"), SOCKS5_OK, 0,
	    1, 3, "a", 0, 8 },				/* port 0: caller */
	/* each CMD */
	{ B("\x05\x02\x00\x01\xc0\x00\x02\x01\x00\x50"), SOCKS5_BAD_COMMAND,
	    7, 2, 0, "", 0, 0 },
	{ B("\x05\x03\x00\x01\0\0\0\0\0\0"), SOCKS5_BAD_COMMAND,
	    7, 3, 0, "", 0, 0 },
	{ B("\x05\x00"), SOCKS5_BAD_COMMAND, 7, 0, 0, "", 0, 0 },
	{ B("\x05\x04"), SOCKS5_BAD_COMMAND, 7, 4, 0, "", 0, 0 },
	{ B("\x05\xff"), SOCKS5_BAD_COMMAND, 7, 255, 0, "", 0, 0 },
	/* each ATYP */
	{ B("\x05\x01\x00\x00"), SOCKS5_BAD_ATYP, 8, 1, 0, "", 0, 0 },
	{ B("\x05\x01\x00\x02"), SOCKS5_BAD_ATYP, 8, 1, 2, "", 0, 0 },
	{ B("\x05\x01\x00\x05\0\0\0\0\0\0"), SOCKS5_BAD_ATYP, 8, 1, 5,
	    "", 0, 0 },
	{ B("\x05\x01\x00\xff"), SOCKS5_BAD_ATYP, 8, 1, 255, "", 0, 0 },
	/* malformed */
	{ B("\x04\x01\x00\x50\xc0\x00\x02\x01"), SOCKS5_BAD_VERSION, 1,
	    0, 0, "", 0, 0 },
	{ B("\x05\x01\x01\x01\xc0\x00\x02\x01\x00\x50"), SOCKS5_INVALID, 1,
	    1, 0, "", 0, 0 },				/* RSV != 0 */
	{ B("\x05\x01\x00\x03\x00\x00\x50"), SOCKS5_INVALID, 1,
	    1, 3, "", 0, 0 },				/* domain len 0 */
	{ B("\x05\x01\x00\x03\x04" "a b"), SOCKS5_INVALID, 1,
	    1, 3, "", 0, 0 },				/* early, space */
	{ B("\x05\x01\x00\x03\x03" "a\x00" "b\x00\x50"), SOCKS5_INVALID, 1,
	    1, 3, "", 0, 0 },
	{ B("\x05\x01\x00\x03\x03" "\xc3\xa9" "a\x00\x50"), SOCKS5_INVALID,
	    1, 1, 3, "", 0, 0 },
	/* printable but not a host name: name kept for the log */
	{ B("\x05\x01\x00\x03\x07" "EX_!.te\x00\x50"), SOCKS5_BAD_NAME, 4,
	    1, 3, "ex_!.te", 80, 14 },
	{ B("\x05\x01\x00\x03\x07" "1.2.3.4\x00\x50"), SOCKS5_OK, 0,
	    1, 3, "1.2.3.4", 80, 14 },
	{ B("\x05\x01\x00\x03\x05" "1.2.3\x00\x50"), SOCKS5_BAD_NAME, 4,
	    1, 3, "1.2.3", 80, 12 },
	{ B("\x05\x01\x00\x03\x04" "a..b\x00\x50"), SOCKS5_BAD_NAME, 4,
	    1, 3, "a..b", 80, 11 },
};

static void
test_request(void **state)
{
	struct socks5_request r;
	enum socks5_status st;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(requests); i++) {
		st = socks5_parse_request(requests[i].b, requests[i].len, &r);
		if (st != requests[i].st)
			fail_msg("case %zu: %s", i, socks5_strstatus(st));
		assert_int_equal(socks5_status_rep(st), requests[i].rep);
		assert_int_equal(r.cmd, requests[i].cmd);
		assert_int_equal(r.atyp, requests[i].atyp);
		assert_string_equal(r.dst.name, requests[i].name);
		assert_int_equal(r.dst.port, requests[i].port);
		assert_int_equal(r.consumed, requests[i].consumed);
	}
}

static void
test_request_addr_targets(void **state)
{
	struct socks5_request r;

	(void)state;
	assert_int_equal(socks5_parse_request(B("\x05\x01\x00\x03\x09"
	    "192.0.2.1\x00\x50"), &r), SOCKS5_OK);
	assert_true(r.dst.is_addr);
	assert_int_equal(r.dst.addr.family, AF_INET);
	assert_memory_equal(r.dst.addr.bytes, "\xc0\x00\x02\x01", 4);
	assert_int_equal(socks5_parse_request(B("\x05\x01\x00\x03\x0b"
	    "2001:db8::1\x00\x50"), &r), SOCKS5_OK);
	assert_true(r.dst.is_addr);
	assert_int_equal(r.dst.addr.family, AF_INET6);
	assert_int_equal(r.dst.addr.bytes[15], 1);
	assert_int_equal(socks5_parse_request(B("\x05\x01\x00\x03\x04"
	    "host\x00\x50"), &r), SOCKS5_OK);
	assert_false(r.dst.is_addr);
}

/* Domains of 1, 253, 254 ("x.": trailing dot) and 255 bytes. */
static void
test_request_domain_lengths(void **state)
{
	static const struct {
		size_t			 n;
		bool			 dot;
		enum socks5_status	 st;
		size_t			 namelen;
	} cases[] = {
		{ 1, false, SOCKS5_OK, 1 },
		{ 253, false, SOCKS5_OK, 253 },
		{ 254, true, SOCKS5_OK, 253 },
		{ 254, false, SOCKS5_BAD_NAME, 254 },
		{ 255, false, SOCKS5_BAD_NAME, 255 },
	};
	struct socks5_request r;
	uint8_t b[4 + 1 + 255 + 2];
	size_t i, j, n;

	(void)state;
	for (i = 0; i < NELEM(cases); i++) {
		n = cases[i].n;
		memcpy(b, "\x05\x01\x00\x03", 4);
		b[4] = (uint8_t)n;
		for (j = 0; j < n; j++)	/* labels of 50 'a' and dots */
			b[5 + j] = j % 51 == 50 ? '.' : 'a';
		if (b[5 + n - 1] == '.')
			b[5 + n - 1] = 'b';
		if (cases[i].dot)
			b[5 + n - 1] = '.';
		b[5 + n] = 0x01;
		b[6 + n] = 0xbb;
		for (j = 0; j < 7 + n; j++)
			assert_int_equal(socks5_parse_request(b, j, &r),
			    SOCKS5_NEED_MORE);
		assert_int_equal(socks5_parse_request(b, 7 + n, &r),
		    cases[i].st);
		assert_int_equal(r.consumed, 7 + n);
		assert_int_equal(strlen(r.dst.name), cases[i].namelen);
		assert_int_equal(r.dst.port, 443);
	}
}

/* A captured stream: greeting, optional RFC 1929, request. */
static void
test_captured(void **state)
{
	struct socks5_greeting g;
	struct socks5_auth a;
	struct socks5_request r;
	const uint8_t *p;
	size_t i, left;

	(void)state;
	for (i = 0; i < NELEM(captures); i++) {
		p = captures[i].b;
		left = captures[i].len;
		assert_int_equal(socks5_parse_greeting(p, left, &g),
		    SOCKS5_OK);
		assert_int_equal(g.consumed, captures[i].glen);
		assert_true(g.no_auth);
		assert_int_equal(g.userpass, captures[i].alen > 0);
		p += g.consumed;
		left -= g.consumed;
		if (captures[i].alen > 0) {
			assert_int_equal(socks5_parse_auth(p, left, &a),
			    SOCKS5_OK);
			assert_int_equal(a.consumed, captures[i].alen);
			assert_string_equal(a.user, "alice");
			assert_string_equal(a.pass, "s3cret");
			p += a.consumed;
			left -= a.consumed;
		}
		assert_int_equal(socks5_parse_request(p, left, &r), SOCKS5_OK);
		assert_int_equal(r.consumed, left);
		assert_int_equal(r.cmd, SOCKS5_CMD_CONNECT);
		assert_string_equal(r.dst.name, captures[i].name);
		assert_int_equal(r.dst.port, captures[i].port);
		assert_int_equal(r.dst.is_addr, captures[i].is_addr);
	}
}

/* Every strict prefix of each captured message is NEED_MORE. */
static void
test_captured_prefixes(void **state)
{
	struct socks5_greeting g;
	struct socks5_auth a;
	struct socks5_request r;
	const uint8_t *p;
	size_t i, k, reqoff, reqlen;

	(void)state;
	for (i = 0; i < NELEM(captures); i++) {
		p = captures[i].b;
		for (k = 0; k < captures[i].glen; k++)
			assert_int_equal(socks5_parse_greeting(p, k, &g),
			    SOCKS5_NEED_MORE);
		for (k = 0; k < captures[i].alen; k++)
			assert_int_equal(socks5_parse_auth(p +
			    captures[i].glen, k, &a), SOCKS5_NEED_MORE);
		reqoff = captures[i].glen + captures[i].alen;
		reqlen = captures[i].len - reqoff;
		for (k = 0; k < reqlen; k++)
			assert_int_equal(socks5_parse_request(p + reqoff, k,
			    &r), SOCKS5_NEED_MORE);
	}
}

/* ---- builders ---- */

static void
test_build(void **state)
{
	struct gk_addr a;
	uint8_t out[SOCKS5_REPLY_MAX];

	(void)state;
	assert_int_equal(socks5_build_method(SOCKS5_METHOD_NONE, out, 2), 2);
	assert_memory_equal(out, "\x05\x00", 2);
	assert_int_equal(socks5_build_method(SOCKS5_METHOD_NO_ACCEPTABLE,
	    out, 2), 2);
	assert_memory_equal(out, "\x05\xff", 2);
	assert_int_equal(socks5_build_method(0, out, 1), 0);
	assert_int_equal(socks5_build_auth_reply(true, out, 2), 2);
	assert_memory_equal(out, "\x01\x00", 2);
	assert_int_equal(socks5_build_auth_reply(false, out, 2), 2);
	assert_memory_equal(out, "\x01\x01", 2);
	assert_int_equal(socks5_build_auth_reply(false, out, 1), 0);

	assert_int_equal(socks5_build_reply(SOCKS5_REP_NOT_ALLOWED, NULL, 0,
	    out, sizeof(out)), 10);
	assert_memory_equal(out, "\x05\x02\x00\x01\0\0\0\0\0\0", 10);
	assert_int_equal(socks5_build_reply(0, NULL, 0, out, 9), 0);
	assert_int_equal(gk_addr_parse("192.0.2.1", &a), 0);
	assert_int_equal(socks5_build_reply(SOCKS5_REP_SUCCEEDED, &a, 0x1f90,
	    out, 10), 10);
	assert_memory_equal(out, "\x05\x00\x00\x01\xc0\x00\x02\x01\x1f\x90",
	    10);
	assert_int_equal(gk_addr_parse("2001:db8::1", &a), 0);
	assert_int_equal(socks5_build_reply(SOCKS5_REP_SUCCEEDED, &a, 443,
	    out, 21), 0);
	assert_int_equal(socks5_build_reply(SOCKS5_REP_SUCCEEDED, &a, 443,
	    out, sizeof(out)), 22);
	assert_memory_equal(out, "\x05\x00\x00\x04\x20\x01\x0d\xb8"
	    "\0\0\0\0\0\0\0\0\0\0\0\x01\x01\xbb", 22);
}

/* Every status maps to the REP code its doc comment names. */
static void
test_status_rep(void **state)
{
	(void)state;
	assert_int_equal(socks5_status_rep(SOCKS5_INVALID),
	    SOCKS5_REP_GENERAL_FAILURE);
	assert_int_equal(socks5_status_rep(SOCKS5_BAD_COMMAND),
	    SOCKS5_REP_CMD_NOT_SUPPORTED);
	assert_int_equal(socks5_status_rep(SOCKS5_BAD_ATYP),
	    SOCKS5_REP_ATYP_NOT_SUPPORTED);
	assert_int_equal(socks5_status_rep(SOCKS5_BAD_NAME),
	    SOCKS5_REP_HOST_UNREACHABLE);
	assert_int_equal(socks5_status_rep(SOCKS5_OK), SOCKS5_REP_SUCCEEDED);
	assert_string_equal(socks5_strstatus(SOCKS5_BAD_ATYP),
	    "address type not supported");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_greeting_255_methods),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_auth_255),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_request_addr_targets),
		cmocka_unit_test(test_request_domain_lengths),
		cmocka_unit_test(test_captured),
		cmocka_unit_test(test_captured_prefixes),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_status_rep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
