/*
 * Unit tests for socks/parse/http_cred.c: marks, the mark search, and the
 * request-head rewrite of the credential broker: Bearer, token, a custom
 * header, the request target, Basic (user:placeholder and
 * placeholder:x-oauth-basic), split placeholders, several credentials,
 * leaks raw and inside Basic, the output bound, malformed heads and a
 * secret that holds its own placeholder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "socks/parse/http_cred.h"
#include "socks/parse/socks.h"

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

#define PH_A	"ghp_0123456789abcdefghijABCDEFGHIJ012345"
#define SEC_A	"ghp_realSECRETrealSECRETrealSECRETreal00"
#define PH_B	"sk-ant-api03-placeholderB0123456789"
#define SEC_B	"sk-ant-api03-realsecretBBB987654321"
#define PH_U	"glpat-UnboundPlaceholder0123"
#define SEC_U	"glpat-UnboundSecretValue0123"
#define MARK_U	"oundPlaceholder0123"	/* its last 16 bytes, and more */

#define REQ	"GET /user HTTP/1.1\r\nHost: api.github.test\r\n"
#define END	"User-Agent: test\r\n\r\n"

#define CRED(n, p, s, b) { n, (const uint8_t *)(p), sizeof(p) - 1,	\
	(const uint8_t *)(s), sizeof(s) - 1, b }

/* A and B bound to this host, U not. */
static const struct http_cred creds[] = {
	CRED("GITHUB_TOKEN", PH_A, SEC_A, true),
	CRED("ANTHROPIC_API_KEY", PH_B, SEC_B, true),
	CRED("GITLAB_TOKEN", PH_U, SEC_U, false),
};

static uint8_t out[2 * HTTP_HEAD_MAX];

/* Rewrite the NUL-terminated head with set[0..n); on OK the output is
 * NUL-terminated in out and a head http_follow passes whole. */
static enum http_cred_status
rewrite(const char *head, const struct http_cred *set, size_t n,
    size_t *which, unsigned *replaced)
{
	struct http_follow f;
	struct http_follow_out o;
	enum http_cred_status st;
	size_t len;

	memset(out, 0xa5, sizeof(out));
	st = http_cred_rewrite((const uint8_t *)head, strlen(head), set, n,
	    out, sizeof(out) - 1, &len, which, replaced);
	if (st != HTTP_CRED_OK) {
		assert_int_equal(len, 0);
		assert_int_equal(out[0], 0xa5);	/* nothing written */
		return st;
	}
	assert_true(len < sizeof(out));
	out[len] = '\0';
	http_follow_init(&f);
	assert_int_equal(http_follow(&f, out, len, &o), HTTP_FOLLOW_HEAD);
	assert_int_equal(o.pass, len);
	return st;
}

static void
test_mark(void **state)
{
	static const struct {
		size_t	 len, off, mlen;
	} t[] = {
		{ 0, 0, 0 }, { 1, 0, 1 }, { 8, 0, 8 }, { 15, 0, 15 },
		{ 16, 0, 16 }, { 17, 1, 16 }, { 40, 24, 16 }, { 4096, 4080, 16 },
	};
	size_t i, ml;

	(void)state;
	for (i = 0; i < NELEM(t); i++) {
		assert_int_equal(http_cred_mark(t[i].len, &ml), t[i].off);
		assert_int_equal(ml, t[i].mlen);
	}
}

static ssize_t
find(const char *s, const struct http_cred *set, size_t n)
{
	return http_cred_find((const uint8_t *)s, strlen(s), set, n);
}

static void
test_find(void **state)
{
	static const struct http_cred empty[] = {
		{ "E", NULL, 0, NULL, 0, false },
	};

	(void)state;
	/* the mark, any case, anywhere: a DNS name, an SNI, a target */
	assert_int_equal(find("x." PH_U ".evil.test", creds, 3), 2);
	assert_int_equal(find("oundplaceholder0123.evil.test", creds, 3), 2);
	assert_int_equal(find("OUNDPLACEHOLDER0123", creds, 3), 2);
	assert_int_equal(find("GHIJ012345", creds, 3), -1);
	assert_int_equal(find("abcdefghijabcdefghij" "ghij012345", creds,
	    3), -1);
	/* the last 16 bytes of PH_A, alone */
	assert_int_equal(find("ABCDEFGHIJ012345", creds, 3), 0);
	assert_int_equal(find("xabcdefghij012345x", creds, 3), 0);
	/* 15 of them is not the mark */
	assert_int_equal(find("BCDEFGHIJ012345", creds, 3), -1);
	/* bound or not, the lowest index */
	assert_int_equal(find(PH_B PH_A, creds, 3), 0);
	assert_int_equal(find(PH_B, creds, 3), 1);
	assert_int_equal(find(PH_A, creds + 1, 2), -1);
	/* empty sets, empty placeholders, short buffers */
	assert_int_equal(find(PH_A, creds, 0), -1);
	assert_int_equal(http_cred_find((const uint8_t *)PH_A, 40, NULL, 0),
	    -1);
	assert_int_equal(find("anything", empty, 1), -1);
	assert_int_equal(find("", creds, 3), -1);
	assert_int_equal(find("ABCDEFGHIJ01234", creds, 3), -1);
}

static const struct {
	const char	*in;
	const char	*want;
	unsigned	 replaced;
} rewrites[] = {
	/* Bearer, token, a custom header */
	{ REQ "Authorization: Bearer " PH_A "\r\n" END,
	  REQ "Authorization: Bearer " SEC_A "\r\n" END, 1 },
	{ REQ "Authorization: token " PH_A "\r\n" END,
	  REQ "Authorization: token " SEC_A "\r\n" END, 1 },
	{ REQ "x-api-key:" PH_B "  \r\n" END,
	  REQ "x-api-key:" SEC_B "  \r\n" END, 1 },
	{ REQ "X-Api-Key: \t" PH_B "\r\n" END,
	  REQ "X-Api-Key: \t" SEC_B "\r\n" END, 1 },
	/* in the request target (origin- and absolute-form) */
	{ "GET /api?key=" PH_A "&x=1 HTTP/1.1\r\nHost: a.test\r\n\r\n",
	  "GET /api?key=" SEC_A "&x=1 HTTP/1.1\r\nHost: a.test\r\n\r\n", 1 },
	{ "POST http://a.test/" PH_A " HTTP/1.0\r\n\r\n",
	  "POST http://a.test/" SEC_A " HTTP/1.0\r\n\r\n", 1 },
	/* Basic: user:placeholder, placeholder:x-oauth-basic, padded,
	 * unpadded in, any case of the scheme, Proxy-Authorization */
	{ REQ "Authorization: Basic dXNlcjpnaHBfMDEyMzQ1Njc4OWFiY2RlZmdoaWpB"
	  "QkNERUZHSElKMDEyMzQ1\r\n" END,
	  REQ "Authorization: Basic dXNlcjpnaHBfcmVhbFNFQ1JFVHJlYWxTRUNSRVRy"
	  "ZWFsU0VDUkVUcmVhbDAw\r\n" END, 1 },
	{ REQ "Authorization: Basic Z2hwXzAxMjM0NTY3ODlhYmNkZWZnaGlqQUJDREVGR"
	  "0hJSjAxMjM0NTp4LW9hdXRoLWJhc2lj\r\n" END,
	  REQ "Authorization: Basic Z2hwX3JlYWxTRUNSRVRyZWFsU0VDUkVUcmVhbFNFQ"
	  "1JFVHJlYWwwMDp4LW9hdXRoLWJhc2lj\r\n" END, 1 },
	{ REQ "authorization: basic   Ym9iOmdocF8wMTIzNDU2Nzg5YWJjZGVmZ2hpakF"
	  "CQ0RFRkdISUowMTIzNDU= \r\n" END,
	  REQ "authorization: basic   Ym9iOmdocF9yZWFsU0VDUkVUcmVhbFNFQ1JFVHJ"
	  "lYWxTRUNSRVRyZWFsMDA= \r\n" END, 1 },
	{ REQ "Authorization: Basic Ym9iOmdocF8wMTIzNDU2Nzg5YWJjZGVmZ2hpakF"
	  "CQ0RFRkdISUowMTIzNDU\r\n" END,
	  REQ "Authorization: Basic Ym9iOmdocF9yZWFsU0VDUkVUcmVhbFNFQ1JFVHJ"
	  "lYWxTRUNSRVRyZWFsMDA=\r\n" END, 1 },
	{ REQ "Proxy-Authorization: BASIC YTpnaHBfMDEyMzQ1Njc4OWFiY2RlZmdoaW"
	  "pBQkNERUZHSElKMDEyMzQ1\r\n" END,
	  REQ "Proxy-Authorization: BASIC YTpnaHBfcmVhbFNFQ1JFVHJlYWxTRUNSRV"
	  "RyZWFsU0VDUkVUcmVhbDAw\r\n" END, 1 },
	/* Basic without a placeholder: untouched (unpadded stays so) */
	{ REQ "Authorization: Basic dXNlcjpwdw\r\n" END,
	  REQ "Authorization: Basic dXNlcjpwdw\r\n" END, 0 },
	/* "Basic" and text that is no base64: rewritten raw */
	{ REQ "Authorization: Basic " PH_A "\r\n" END,
	  REQ "Authorization: Basic " SEC_A "\r\n" END, 1 },
	/* Basic-looking base64 in another header: not decoded */
	{ REQ "X-Auth: Basic YTpnaHBfMDEyMzQ1Njc4OWFiY2RlZmdoaWpBQkNERUZHSEl"
	  "KMDEyMzQ1\r\n" END,
	  REQ "X-Auth: Basic YTpnaHBfMDEyMzQ1Njc4OWFiY2RlZmdoaWpBQkNERUZHSEl"
	  "KMDEyMzQ1\r\n" END, 0 },
	/* split across lines, by white space, cut short: no match */
	{ REQ "X-A: ghp_0123456789abcdefghij\r\nX-B: ABCDEFGHIJ012345\r\n" END,
	  REQ "X-A: ghp_0123456789abcdefghij\r\nX-B: ABCDEFGHIJ012345\r\n" END,
	  0 },
	{ REQ "X-A: ghp_0123456789 abcdefghijABCDEFGHIJ012345\r\n" END,
	  REQ "X-A: ghp_0123456789 abcdefghijABCDEFGHIJ012345\r\n" END, 0 },
	{ REQ "X-A: ghp_0123456789abcdefghijABCDEFGHIJ01234\r\n" END,
	  REQ "X-A: ghp_0123456789abcdefghijABCDEFGHIJ01234\r\n" END, 0 },
	/* exact bytes only: another case is not the placeholder */
	{ REQ "X-A: GHP_0123456789ABCDEFGHIJABCDEFGHIJ012345\r\n" END,
	  REQ "X-A: GHP_0123456789ABCDEFGHIJABCDEFGHIJ012345\r\n" END, 0 },
	/* not in header names, method or version */
	{ "GET / HTTP/1.0\r\n" PH_A ": x\r\n\r\n",
	  "GET / HTTP/1.0\r\n" PH_A ": x\r\n\r\n", 0 },
	/* two credentials, several times, next to each other */
	{ "GET /?a=" PH_A " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer "
	  PH_B "\r\nX-Both: " PH_A PH_B "," PH_A "\r\n\r\n",
	  "GET /?a=" SEC_A " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer "
	  SEC_B "\r\nX-Both: " SEC_A SEC_B "," SEC_A "\r\n\r\n", 5 },
	/* blank bytes http_follow skips before a request line: copied */
	{ "\r\n\r\nGET /" PH_A " HTTP/1.1\r\nHost: a\r\n\r\n",
	  "\r\n\r\nGET /" SEC_A " HTTP/1.1\r\nHost: a\r\n\r\n", 1 },
	/* nothing to do */
	{ REQ END, REQ END, 0 },
	{ "GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.0\r\n\r\n", 0 },
};

static void
test_rewrite(void **state)
{
	unsigned replaced;
	size_t i, which = 99;

	(void)state;
	for (i = 0; i < NELEM(rewrites); i++) {
		replaced = 99;
		if (rewrite(rewrites[i].in, creds, NELEM(creds), &which,
		    &replaced) != HTTP_CRED_OK)
			fail_msg("case %zu: not OK", i);
		if (strcmp((const char *)out, rewrites[i].want) != 0)
			fail_msg("case %zu: got\n%s\nwant\n%s", i,
			    (const char *)out, rewrites[i].want);
		assert_int_equal(replaced, rewrites[i].replaced);
		assert_int_equal(which, 99);
		/* without credentials: the same bytes */
		assert_int_equal(rewrite(rewrites[i].in, NULL, 0, NULL,
		    &replaced), HTTP_CRED_OK);
		assert_string_equal((const char *)out, rewrites[i].in);
		assert_int_equal(replaced, 0);
	}
}

static const struct {
	const char	*in;
	size_t		 which;
} leaks[] = {
	{ REQ "X-A: " PH_U "\r\n" END, 2 },
	{ REQ "Authorization: Bearer " PH_A "\r\nX-B: " PH_U "\r\n" END, 2 },
	/* the mark alone, any case, anywhere in the head */
	{ REQ "X-A: zzz" MARK_U "zzz\r\n" END, 2 },
	{ REQ "X-A: OUNDPLACEHOLDER0123\r\n" END, 2 },
	{ "GET /?q=" MARK_U " HTTP/1.0\r\n\r\n", 2 },
	{ "GET / HTTP/1.0\r\nX-" MARK_U ": 1\r\n\r\n", 2 },
	/* inside Basic: user:placeholder */
	{ REQ "Authorization: Basic dXNlcjpnbHBhdC1VbmJvdW5kUGxhY2Vob2xkZXIw"
	  "MTIz\r\n" END, 2 },
	{ REQ "Proxy-Authorization: basic dXNlcjpnbHBhdC1VbmJvdW5kUGxhY2Vob2"
	  "xkZXIwMTIz\r\n" END, 2 },
};

static void
test_leak(void **state)
{
	unsigned replaced;
	size_t i, which;

	(void)state;
	for (i = 0; i < NELEM(leaks); i++) {
		which = 99;
		replaced = 99;
		if (rewrite(leaks[i].in, creds, NELEM(creds), &which,
		    &replaced) != HTTP_CRED_LEAK)
			fail_msg("case %zu: no leak", i);
		assert_int_equal(which, leaks[i].which);
		assert_int_equal(replaced, 0);
		/* bound to this host after all: no leak */
		assert_int_not_equal(rewrite(leaks[i].in, creds, 2, &which,
		    NULL), HTTP_CRED_LEAK);
	}
	/* a bound credential's mark is no leak; which may be NULL */
	assert_int_equal(rewrite(REQ "X-A: " MARK_U "\r\n" END, creds, 2,
	    NULL, NULL), HTTP_CRED_OK);
	assert_int_equal(rewrite(leaks[0].in, creds, 3, NULL, NULL),
	    HTTP_CRED_LEAK);
}

static void
test_too_long(void **state)
{
	static const char in[] = REQ "X-A: " PH_A "\r\n" END;
	static const struct http_cred longer[] = {
		CRED("LONG", PH_A, SEC_A SEC_A, true),
	};
	uint8_t small[sizeof(in) + 64];
	size_t len, need = sizeof(in) - 1 + 40;
	unsigned replaced = 99;

	(void)state;
	/* a secret longer than its placeholder grows the head */
	assert_int_equal(http_cred_rewrite((const uint8_t *)in,
	    sizeof(in) - 1, longer, 1, small, need, &len, NULL, &replaced),
	    HTTP_CRED_OK);
	assert_int_equal(len, need);
	assert_int_equal(replaced, 1);
	assert_non_null(memmem(small, len, SEC_A SEC_A, 80));
	memset(small, 0xa5, sizeof(small));
	assert_int_equal(http_cred_rewrite((const uint8_t *)in,
	    sizeof(in) - 1, longer, 1, small, need - 1, &len, NULL,
	    &replaced), HTTP_CRED_TOO_LONG);
	assert_int_equal(len, 0);
	assert_int_equal(replaced, 0);
	assert_int_equal(small[need - 1], 0xa5);	/* never past outcap */
	assert_null(memmem(small, sizeof(small), "realSECRET", 10));
	/* same length: out as long as in is enough, one byte less not */
	assert_int_equal(http_cred_rewrite((const uint8_t *)in,
	    sizeof(in) - 1, creds, 3, small, sizeof(in) - 1, &len, NULL,
	    NULL), HTTP_CRED_OK);
	assert_int_equal(len, sizeof(in) - 1);
	assert_int_equal(http_cred_rewrite((const uint8_t *)in,
	    sizeof(in) - 1, creds, 3, small, sizeof(in) - 2, &len, NULL,
	    NULL), HTTP_CRED_TOO_LONG);
	assert_int_equal(http_cred_rewrite((const uint8_t *)in,
	    sizeof(in) - 1, creds, 3, NULL, 0, &len, NULL, NULL),
	    HTTP_CRED_TOO_LONG);
}

static const char *const malformed[] = {
	"",
	"GET / HTTP/1.1\r\nHost: a\r\n",		/* no empty line */
	"GET / HTTP/1.1\r\nHost: a\r\n\r",
	"GET / HTTP/1.1\nHost: a\n\n",			/* bare LF */
	"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody",	/* past the head */
	"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n",	/* obs-fold */
	"GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n",
	"GET / HTTP/1.1\r\nX-A a\r\n\r\n",		/* no colon */
	"GET / HTTP/1.1\r\nX-A : a\r\n\r\n",
	"GET / HTTP/2.0\r\n\r\n",
	"GET /  HTTP/1.1\r\n\r\n",
	"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n",
	"GET / HTTP/1.1\r\nUpgrade: h2c\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.1\r\nX-A: a\x01\r\n\r\n",
	"\x16\x03\x01\x02\x00",
	"SSH-2.0-OpenSSH_9.2\r\n\r\n",
};

static void
test_malformed(void **state)
{
	struct http_follow f;
	struct http_follow_out o;
	size_t i, len;

	(void)state;
	for (i = 0; i < NELEM(malformed); i++) {
		/* http_follow would not pass it whole either */
		http_follow_init(&f);
		len = strlen(malformed[i]);
		assert_false(http_follow(&f, (const uint8_t *)malformed[i],
		    len, &o) == HTTP_FOLLOW_HEAD && o.pass == len);
		if (rewrite(malformed[i], creds, 3, NULL, NULL) !=
		    HTTP_CRED_INVALID)
			fail_msg("case %zu: not INVALID", i);
		if (rewrite(malformed[i], NULL, 0, NULL, NULL) !=
		    HTTP_CRED_INVALID)
			fail_msg("case %zu: not INVALID without creds", i);
	}
	assert_int_equal(http_cred_rewrite(NULL, 0, NULL, 0, out, 1, &len,
	    NULL, NULL), HTTP_CRED_INVALID);
}

/* A head over HTTP_HEAD_MAX bytes is INVALID, one at the limit is not. */
static void
test_head_max(void **state)
{
	static const char pre[] = "GET / HTTP/1.0\r\nX-Pad: ";
	static char h[HTTP_HEAD_MAX + 2];
	size_t pad = HTTP_HEAD_MAX - (sizeof(pre) - 1) - 4;

	(void)state;
	memcpy(h, pre, sizeof(pre) - 1);
	memset(h + sizeof(pre) - 1, 'p', pad);
	memcpy(h + sizeof(pre) - 1 + pad, "\r\n\r\n", 5);
	assert_int_equal(strlen(h), HTTP_HEAD_MAX);
	assert_int_equal(rewrite(h, creds, 3, NULL, NULL), HTTP_CRED_OK);
	memcpy(h + sizeof(pre) - 1 + pad, "p\r\n\r\n", 6);
	assert_int_equal(rewrite(h, creds, 3, NULL, NULL), HTTP_CRED_INVALID);
}

/* Bad sets: too many, a bound secret that could break the head. */
static void
test_bad_set(void **state)
{
	static const char in[] = REQ END;
	struct http_cred many[HTTP_CRED_MAX + 1];
	static const struct http_cred crlf[] = {
		CRED("CRLF", "placeholder1", "secret\r\nX-1:", true),
	};
	static const struct http_cred space[] = {
		CRED("SP", "placeholder1", "secret  abcd", true),
	};
	static const struct http_cred unbound_crlf[] = {
		CRED("CRLF", "placeholder1", "secret\r\nX-1:", false),
	};
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(many); i++)
		many[i] = creds[0];
	assert_int_equal(rewrite(in, many, HTTP_CRED_MAX, NULL, NULL),
	    HTTP_CRED_OK);
	assert_int_equal(rewrite(in, many, HTTP_CRED_MAX + 1, NULL, NULL),
	    HTTP_CRED_INVALID);
	assert_int_equal(rewrite(in, crlf, 1, NULL, NULL), HTTP_CRED_INVALID);
	assert_int_equal(rewrite(in, space, 1, NULL, NULL),
	    HTTP_CRED_INVALID);
	/* an unbound secret is never written */
	assert_int_equal(rewrite(in, unbound_crlf, 1, NULL, NULL),
	    HTTP_CRED_OK);
	assert_int_equal(rewrite(in, NULL, 1, NULL, NULL), HTTP_CRED_INVALID);
}

/* A secret that holds the placeholder, or makes one with what follows:
 * what was put is never looked at again. */
static void
test_no_loop(void **state)
{
	static const struct http_cred inside[] = {
		CRED("IN", "abcd1234", "abcd1234abcd1234", true),
	};
	static const struct http_cred makes[] = {
		CRED("MK", "abcd1234", "xxabcd12", true),
	};
	static const struct http_cred longest[] = {
		CRED("SHORT", "abcdefgh", "SSSSSSSS", true),
		CRED("LONG", "abcdefgh12", "LLLLLLLLLL", true),
	};
	unsigned replaced;

	(void)state;
	assert_int_equal(rewrite(REQ "X-A: abcd1234abcd1234\r\n" END, inside,
	    1, NULL, &replaced), HTTP_CRED_OK);
	assert_string_equal((const char *)out, REQ "X-A: abcd1234abcd1234"
	    "abcd1234abcd1234\r\n" END);
	assert_int_equal(replaced, 2);
	assert_int_equal(rewrite(REQ "X-A: abcd123434\r\n" END, makes, 1,
	    NULL, &replaced), HTTP_CRED_OK);
	assert_string_equal((const char *)out, REQ "X-A: xxabcd1234\r\n" END);
	assert_int_equal(replaced, 1);
	/* overlapping placeholders: the longest at an offset, then on */
	assert_int_equal(rewrite(REQ "X-A: abcdefgh12abcdefgh\r\n" END,
	    longest, 2, NULL, &replaced), HTTP_CRED_OK);
	assert_string_equal((const char *)out, REQ "X-A: LLLLLLLLLLSSSSSSSS"
	    "\r\n" END);
	assert_int_equal(replaced, 2);
}

static void
test_strstatus(void **state)
{
	(void)state;
	assert_string_equal(http_cred_strstatus(HTTP_CRED_OK), "ok");
	assert_string_equal(http_cred_strstatus(HTTP_CRED_LEAK),
	    "credential leak");
	assert_string_equal(http_cred_strstatus((enum http_cred_status)99),
	    "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_rewrite),
		cmocka_unit_test(test_leak),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_head_max),
		cmocka_unit_test(test_bad_set),
		cmocka_unit_test(test_no_loop),
		cmocka_unit_test(test_strstatus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
