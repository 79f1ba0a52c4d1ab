/*
 * Unit tests for http_sniff() (socks/http_follow.c): what the first bytes
 * of a tunnel that are not TLS are. Every case is also checked at every
 * prefix (NEED_MORE or the same verdict) from exact-size copies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "socks/parse/socks.h"

#define REQ	HTTP_SNIFF_REQUEST
#define OTHER	HTTP_SNIFF_OTHER
#define MORE	HTTP_SNIFF_NEED_MORE
#define PROXY	HTTP_SNIFF_PROXY
#define BLANKS	HTTP_SNIFF_BLANKS

struct sniff_case {
	const char	*in;
	size_t		 n;		/* 0: strlen(in) */
	enum http_sniff	 want;
	size_t		 blank;
};

static enum http_sniff
sniff_n(const uint8_t *b, size_t n, struct http_sniff_result *r)
{
	enum http_sniff st;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	memcpy(cp, b, n);
	st = http_sniff(n == 0 ? NULL : cp, n, r);
	free(cp);
	return st;
}

/* The verdict, and every prefix: NEED_MORE or the same. */
static void
check(const char *what, size_t i, const uint8_t *b, size_t n,
    enum http_sniff want, size_t blank)
{
	struct http_sniff_result r;
	enum http_sniff st;
	size_t k;

	st = sniff_n(b, n, &r);
	if (st != want)
		fail_msg("%s case %zu: %s, want %s", what, i,
		    http_strsniff(st), http_strsniff(want));
	if (want != BLANKS && r.blank != blank)
		fail_msg("%s case %zu: blank %zu, want %zu", what, i,
		    r.blank, blank);
	for (k = 0; k < n; k++) {
		st = sniff_n(b, k, &r);
		if (st != MORE && st != want)
			fail_msg("%s case %zu: prefix %zu: %s", what, i, k,
			    http_strsniff(st));
	}
}

static void
run(const char *what, const struct sniff_case *c, size_t nc)
{
	size_t i;

	for (i = 0; i < nc; i++)
		check(what, i, (const uint8_t *)c[i].in, c[i].n != 0 ?
		    c[i].n : strlen(c[i].in), c[i].want, c[i].blank);
}

/* Line protocols on their own ports, binary protocols: not HTTP. */
static void
test_other(void **state)
{
	static const struct sniff_case c[] = {
		{ "EHLO client.example\r\n", 0, OTHER, 0 },
		{ "HELO x\r\n", 0, OTHER, 0 },
		{ "NICK gk\r\nUSER gk 0 * :gk\r\n", 0, OTHER, 0 },
		{ "USER anonymous\r\n", 0, OTHER, 0 },
		{ "a1 LOGIN user pass\r\n", 0, OTHER, 0 },
		{ "AUTH secret\r\n", 0, OTHER, 0 },
		{ "get k\r\n", 0, OTHER, 0 },		/* memcached */
		{ "GET k\r\n", 0, OTHER, 0 },		/* Redis inline */
		{ "HEAD 1234\r\n", 0, OTHER, 0 },	/* NNTP */
		{ "POST\r\n", 0, OTHER, 0 },		/* NNTP */
		{ "CONNECT\naccept-version:1.2\n\n", 0, OTHER, 0 }, /* STOMP */
		{ "OPTIONS rtsp://cam.example/ RTSP/1.0\r\n", 0, OTHER, 0 },
		{ "OPTIONS sip:a@b.example SIP/2.0\r\n", 0, OTHER, 0 },
		{ "SSH-2.0-OpenSSH_9.2\r\n", 0, OTHER, 0 },
		{ "HTTP/1.1 200 OK\r\n", 0, OTHER, 0 },	/* not a request */
		{ "\x00\x00\x00\x08\x04\xd2\x16\x2f", 8, OTHER, 0 },
		{ "AMQP\x00\x00\x09\x01", 8, OTHER, 0 },
		{ "0\x0c\x02\x01\x01`\x07\x02\x01\x03", 10, OTHER, 0 },
		{ "\x16\x03\x01\x00\x05", 5, OTHER, 0 },
		{ "{\"op\":1}\n", 0, OTHER, 0 },
		{ "X /a\x01 HTTP/1.1\r\n", 0, OTHER, 0 },	/* stop byte */
		{ "\r\nNICK gk\r\n", 0, OTHER, 2 },
		{ "\r\n\r\n\x00\r\nQUIX\n", 12, OTHER, 4 },
		{ "GET\n", 0, OTHER, 0 },
		{ "GET\r\n", 0, OTHER, 0 },
		{ "GET:x\r\n", 0, OTHER, 0 },
	};

	(void)state;
	run("other", c, sizeof(c) / sizeof(*c));
}

/* What a server takes for a request, well-formed or not. */
static void
test_request(void **state)
{
	static const struct sniff_case c[] = {
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0, REQ, 0 },
		{ "GET /", 0, REQ, 0 },			/* HTTP/0.9 */
		{ "GET /\r\n", 0, REQ, 0 },
		{ "get / HTTP/1.1\r\n", 0, REQ, 0 },
		{ "gEt /", 0, REQ, 0 },
		{ "GET http://evil.example/ HTTP/1.1\r\n", 0, REQ, 0 },
		{ "get HTTPS://evil.example/", 0, REQ, 0 },
		{ "OPTIONS * HTTP/1.1\r\n", 0, REQ, 0 },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, REQ, 0 },
		{ "CONNECT evil.example:443 HTTP/1.1\r\n", 0, REQ, 0 },
		{ "FOO /x HTTP/1.1\r\n", 0, REQ, 0 },	/* any method */
		{ "FOO x http/1.0\r\n", 0, REQ, 0 },
		{ "GET\t/\tHTTP/1.1\r\n", 0, REQ, 0 },
		{ "GET\x0b/\x0bHTTP/1.1\r\n", 0, REQ, 0 },
		{ "X\x0c/ HTTP/1.1\r\n", 0, REQ, 0 },
		{ "GET  /", 0, REQ, 0 },
		{ "GET /x\xff HTTP/1.1\r\n", 0, REQ, 0 },
		{ "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", 0, REQ, 0 },
		{ "M-SEARCH * HTTP/1.1\r\n", 0, REQ, 0 },
		{ "a1 x HTTP/1.1\r\n", 0, REQ, 0 },
	};

	(void)state;
	run("request", c, sizeof(c) / sizeof(*c));
}

/* Prefixes that decide nothing yet. */
static void
test_need_more(void **state)
{
	static const struct sniff_case c[] = {
		{ "", 0, MORE, 0 },
		{ "G", 0, MORE, 0 },
		{ "GET", 0, MORE, 0 },
		{ "GET ", 0, MORE, 0 },
		{ "GET \t ", 0, MORE, 0 },
		{ "GET h", 0, MORE, 0 },
		{ "GET http", 0, MORE, 0 },
		{ "GET\r", 0, MORE, 0 },
		{ "NICK gk", 0, MORE, 0 },
		{ "FOO /x HTT", 0, MORE, 0 },
		{ "FOO /x h", 0, MORE, 0 },
		{ "SSH-2.0-OpenSSH_9.2", 0, MORE, 0 },
		{ "\r\n", 0, MORE, 2 },
		{ "PROX", 0, MORE, 0 },
		{ "PROXY", 0, MORE, 0 },
		{ "\r\n\r\n\x00\r\nQUIT", 11, MORE, 4 },
	};

	(void)state;
	run("need more", c, sizeof(c) / sizeof(*c));
}

/* PROXY protocol headers, v1 (also after blank bytes, any case) and v2. */
static void
test_proxy(void **state)
{
	static const struct sniff_case c[] = {
		{ "PROXY TCP4 192.0.2.1 192.0.2.10 50000 80\r\nGET / HTTP/1.1"
		    "\r\nHost: evil.example\r\n\r\n", 0, PROXY, 0 },
		{ "PROXY UNKNOWN\r\n", 0, PROXY, 0 },
		{ "PROXY ", 0, PROXY, 0 },
		{ "proxy tcp4", 0, PROXY, 0 },
		{ "\r\nPROXY TCP4", 0, PROXY, 2 },
		{ "\r\n\r\n\x00\r\nQUIT\n", 12, PROXY, 4 },
		{ "\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c", 16, PROXY, 4 },
		{ "PROXYX\r\n", 0, OTHER, 0 },
	};

	(void)state;
	run("proxy", c, sizeof(c) / sizeof(*c));
}

/*
 * Blank bytes before the first line: 0, 1, max - 1, max, max + 1, of each
 * kind (CRLF pairs, LF only, SP, HTAB, mixed), before a request, before
 * a line protocol and alone.
 */
static void
test_blank_bound(void **state)
{
	static const char *const kinds[] = { "\r\n", "\n", " ", "\t",
	    "\r\n \t\n" };
	static const size_t counts[] = { 0, 1, HTTP_BLANK_MAX - 1,
	    HTTP_BLANK_MAX, HTTP_BLANK_MAX + 1, HTTP_BLANK_MAX + 2 };
	static const char *const tails[] = {
	    "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", "EHLO x\r\n", "" };
	char buf[256], what[64];
	size_t k, c, t, n, i, kl;
	enum http_sniff want;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
		kl = strlen(kinds[k]);
		for (c = 0; c < sizeof(counts) / sizeof(*counts); c++) {
			for (n = 0; n < counts[c]; n++)
				buf[n] = kinds[k][n % kl];
			for (t = 0; t < sizeof(tails) / sizeof(*tails); t++) {
				i = strlen(tails[t]);
				memcpy(buf + n, tails[t], i);
				want = n > HTTP_BLANK_MAX ? BLANKS : t == 0 ?
				    REQ : t == 1 ? OTHER : MORE;
				snprintf(what, sizeof(what), "blank kind %zu "
				    "x%zu tail %zu", k, n, t);
				check(what, 0, (uint8_t *)buf, n + i, want, n);
			}
		}
	}
}

/* The first word and the first line's bounds. */
static void
test_bounds(void **state)
{
	static uint8_t b[HTTP_HEAD_MAX + 64];
	struct http_sniff_result r;
	size_t n;

	(void)state;
	memset(b, 'A', HTTP_METHOD_MAX);
	memcpy(b + HTTP_METHOD_MAX, " / HTTP/1.1\r\n", 13);
	check("32-byte word", 0, b, HTTP_METHOD_MAX + 13, REQ, 0);
	memcpy(b + HTTP_METHOD_MAX, " x\r\n", 4);
	check("32-byte word", 1, b, HTTP_METHOD_MAX + 4, OTHER, 0);
	memset(b, 'A', HTTP_METHOD_MAX + 1);
	memcpy(b + HTTP_METHOD_MAX + 1, " / HTTP/1.1\r\n", 13);
	check("33-byte word", 0, b, HTTP_METHOD_MAX + 14, OTHER, 0);
	/* a first line without LF: undecided up to HTTP_HEAD_MAX bytes */
	memcpy(b, "NICK ", 5);
	memset(b + 5, 'x', sizeof(b) - 5);
	n = HTTP_HEAD_MAX;
	assert_int_equal(sniff_n(b, n, &r), MORE);
	assert_int_equal(sniff_n(b, n + 1, &r), OTHER);
	memcpy(b + n - 5, "HTTP/", 5);
	assert_int_equal(sniff_n(b, n, &r), REQ);
	assert_string_equal(http_strsniff(BLANKS), "too many blank bytes");
	assert_string_equal(http_strsniff((enum http_sniff)99), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_need_more),
		cmocka_unit_test(test_proxy),
		cmocka_unit_test(test_blank_bound),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
