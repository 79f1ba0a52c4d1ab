/*
 * Unit tests for socks/http_parse.c: curl 7.88.1 proxy request heads (the
 * same bytes as tests/fuzz/fuzz_http.in/curl_*), every INVALID rule, the
 * 16384-byte bound, Basic credentials, the origin-form rewrite and the
 * Host peek.
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
#define S(s)	(s), sizeof(s) - 1
#define NELEM(a) (sizeof(a) / sizeof(*(a)))
#define CURL_UA	"User-Agent: curl/7.88.1\r\n"
#define CURL_PC	"Proxy-Connection: Keep-Alive\r\n"

static const char cap_connect[] =
    "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n"
    CURL_UA CURL_PC "\r\n";
static const char cap_connect_auth[] =
    "CONNECT example.test:8443 HTTP/1.1\r\nHost: example.test:8443\r\n"
    "Proxy-Authorization: Basic Ym9iOnB3\r\n" CURL_UA CURL_PC "\r\n";
static const char cap_connect_v6[] =
    "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n"
    CURL_UA CURL_PC "\r\n";
static const char cap_get[] =
    "GET http://example.test/x?y=1 HTTP/1.1\r\nHost: example.test\r\n"
    CURL_UA "Accept: */*\r\n" CURL_PC "\r\n";
static const char cap_get10[] =
    "GET http://example.test/ HTTP/1.0\r\nHost: example.test\r\n"
    CURL_UA "Accept: */*\r\n" CURL_PC "\r\n";
static const char cap_get_auth[] =
    "GET http://Example.TEST:8080/a/b HTTP/1.1\r\nHost: Example.TEST:8080\r\n"
    "Proxy-Authorization: Basic Ym9iOnBhOnNz\r\n" CURL_UA "Accept: */*\r\n"
    CURL_PC "\r\n";
static const char cap_post[] =
    "POST http://example.test/form HTTP/1.1\r\nHost: example.test\r\n"
    CURL_UA "Accept: */*\r\n" CURL_PC "Content-Length: 7\r\n"
    "Content-Type: application/x-www-form-urlencoded\r\n\r\na=1&b=2";

static const struct {
	const char	*head;
	size_t		 len;
	enum http_method method;
	const char	*name;
	uint16_t	 port;
	const char	*path;
	unsigned	 minor;
	int		 proxy_auth;
	size_t		 nhdr;
	size_t		 body;		/* bytes after the head */
} captures[] = {
	{ cap_connect, sizeof(cap_connect) - 1, HTTP_METHOD_CONNECT,
	    "example.test", 443, "", 1, -1, 3, 0 },
	{ cap_connect_auth, sizeof(cap_connect_auth) - 1, HTTP_METHOD_CONNECT,
	    "example.test", 8443, "", 1, 1, 4, 0 },
	{ cap_connect_v6, sizeof(cap_connect_v6) - 1, HTTP_METHOD_CONNECT,
	    "2001:db8::1", 443, "", 1, -1, 3, 0 },
	{ cap_get, sizeof(cap_get) - 1, HTTP_METHOD_OTHER,
	    "example.test", 80, "/x?y=1", 1, -1, 4, 0 },
	{ cap_get10, sizeof(cap_get10) - 1, HTTP_METHOD_OTHER,
	    "example.test", 80, "/", 0, -1, 4, 0 },
	{ cap_get_auth, sizeof(cap_get_auth) - 1, HTTP_METHOD_OTHER,
	    "example.test", 8080, "/a/b", 1, 1, 5, 0 },
	{ cap_post, sizeof(cap_post) - 1, HTTP_METHOD_OTHER,
	    "example.test", 80, "/form", 1, -1, 6, 7 },
};

static void
test_captured(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	const uint8_t *b;
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < NELEM(captures); i++) {
		b = (const uint8_t *)captures[i].head;
		assert_int_equal(http_parse_request(b, captures[i].len, r),
		    HTTP_OK);
		assert_int_equal(r->method, captures[i].method);
		assert_string_equal(r->dst.name, captures[i].name);
		assert_int_equal(r->dst.port, captures[i].port);
		assert_int_equal(r->path.len, strlen(captures[i].path));
		assert_memory_equal(b + r->path.off, captures[i].path,
		    r->path.len);
		assert_int_equal(r->minor, captures[i].minor);
		assert_int_equal(r->proxy_auth, captures[i].proxy_auth);
		assert_int_equal(r->host_hdr, 0);
		assert_int_equal(r->nhdr, captures[i].nhdr);
		assert_int_equal(r->head_len + captures[i].body,
		    captures[i].len);
		assert_int_equal(r->body, captures[i].body ?
		    HTTP_BODY_LENGTH : HTTP_BODY_NONE);
		assert_int_equal(r->content_length, captures[i].body);
	}
	free(r);
}

/* Every strict prefix of a captured head is NEED_MORE. */
static void
test_captured_prefixes(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	struct http_host h;
	size_t i, k, end;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < NELEM(captures); i++) {
		end = captures[i].len - captures[i].body;
		for (k = 0; k < end; k++) {
			assert_int_equal(http_parse_request(
			    (const uint8_t *)captures[i].head, k, r),
			    HTTP_NEED_MORE);
			assert_int_equal(http_peek_host(
			    (const uint8_t *)captures[i].head, k, &h),
			    HTTP_NEED_MORE);
		}
	}
	free(r);
}

static const struct {
	const char	*head;
	size_t		 len;
	enum http_status st;
} statuses[] = {
	/* bad method token */
	{ S("G(T http://a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("G(T"), HTTP_INVALID },				/* early */
	{ S(" GET http://a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("\r\nGET http://a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("\x16\x03\x01\x02"), HTTP_INVALID },
	{ S("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG"), HTTP_INVALID },
	/* bad target or version */
	{ S("GET  http://a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/\xc3\xa9 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/2.0\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1 \r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ http/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.x\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/#f HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://u:p@a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http:///x HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a..test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test:0/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test:65536/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test:8x/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://2001:db8::1/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("GET a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT a.test HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT a.test: HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT a.test:0 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT a.test:123456 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT [2001:db8::1]x:443 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT [a.test]:443 HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	{ S("CONNECT http://a.test/ HTTP/1.1\r\n\r\n"), HTTP_INVALID },
	/* line structure */
	{ S("GET http://a.test/ HTTP/1.1\rX: y\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\nX: y\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: y\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: y\r\n\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\n: v\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nHost : a\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nHost\t: a\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\x7f\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n"), HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n"),
	    HTTP_INVALID },					/* obs-fold */
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n"),
	    HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: a\x01"), HTTP_INVALID },
	/* duplicates and framing */
	{ S("GET http://a.test/ HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"),
	    HTTP_INVALID },
	{ S("GET http://a.test/ HTTP/1.1\r\nProxy-Authorization: Basic eDp5"
	    "\r\nProxy-Authorization: Basic eDp5\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 1\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Content-Length: 1\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n"),
	    HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
	    HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nContent-Length:\r\n\r\n"),
	    HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\n"
	    "Content-Length: 1234567890123456789\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked, gzip\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.0\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"), HTTP_INVALID },
	{ S("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"), HTTP_INVALID },
	/* not for us */
	{ S("GET https://a.test/ HTTP/1.1\r\n\r\n"), HTTP_BAD_SCHEME },
	{ S("GET HTTPS://a.test/ HTTP/1.1\r\n\r\n"), HTTP_BAD_SCHEME },
	{ S("GET ftp://a.test/ HTTP/1.1\r\n\r\n"), HTTP_BAD_SCHEME },
	{ S("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"), HTTP_NOT_PROXY_REQUEST },
	{ S("OPTIONS * HTTP/1.1\r\n\r\n"), HTTP_NOT_PROXY_REQUEST },
	/* fine */
	{ S("GET HTTP://A.test HTTP/1.1\r\n\r\n"), HTTP_OK },
	{ S("GET http://a.test:/ HTTP/1.1\r\n\r\n"), HTTP_OK },
	{ S("GET http://a.test?q HTTP/1.1\r\n\r\n"), HTTP_OK },
	{ S("GET http://192.0.2.1:8080/ HTTP/1.1\r\n\r\n"), HTTP_OK },
	{ S("GET http://[2001:db8::1]/ HTTP/1.1\r\n\r\n"), HTTP_OK },
	{ S("GET http://a.test/ HTTP/1.1\r\nX:\r\nY:  \t z \t\r\n\r\n"),
	    HTTP_OK },
	{ S("GET http://a.test/ HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n"), HTTP_OK },
	{ S("POST http://a.test/ HTTP/1.1\r\n"
	    "Transfer-Encoding: gzip, Chunked\r\n\r\n"), HTTP_OK },
	{ S("POST http://a.test/ HTTP/1.1\r\n"
	    "Content-Length: 123456789012345678\r\n\r\n"), HTTP_OK },
	{ S("CONNECT a.test:443 HTTP/1.0\r\n\r\nPIPELINED"), HTTP_OK },
	{ S("connect a.test:443 HTTP/1.1\r\n\r\n"), HTTP_BAD_SCHEME },
};

static void
test_statuses(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	enum http_status st;
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < NELEM(statuses); i++) {
		st = http_parse_request((const uint8_t *)statuses[i].head,
		    statuses[i].len, r);
		if (st != statuses[i].st)
			fail_msg("case %zu (%s): got %s", i, statuses[i].head,
			    http_strstatus(st));
		if (st != HTTP_OK)
			assert_string_equal(r->dst.name, "");
	}
	free(r);
}

static void
test_targets(void **state)
{
	struct http_request *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	assert_int_equal(http_parse_request(B("GET http://a.test?q HTTP/1.1"
	    "\r\n\r\n"), r), HTTP_OK);
	assert_int_equal(r->path.len, 2);
	assert_int_equal(r->authority.len, 6);
	assert_int_equal(http_parse_request(B("GET http://192.0.2.1:8080/ "
	    "HTTP/1.1\r\n\r\n"), r), HTTP_OK);
	assert_true(r->dst.is_addr);
	assert_int_equal(r->dst.addr.family, AF_INET);
	assert_int_equal(r->dst.port, 8080);
	assert_int_equal(http_parse_request(B("GET http://[2001:db8::1]/ "
	    "HTTP/1.1\r\n\r\n"), r), HTTP_OK);
	assert_true(r->dst.is_addr);
	assert_int_equal(r->dst.addr.family, AF_INET6);
	assert_string_equal(r->dst.name, "2001:db8::1");
	assert_int_equal(r->dst.port, 80);
	assert_int_equal(http_parse_request(B("CONNECT A.Test.:65535 "
	    "HTTP/1.1\r\n\r\n"), r), HTTP_OK);
	assert_string_equal(r->dst.name, "a.test");
	assert_int_equal(r->dst.port, 65535);
	assert_int_equal(r->host_hdr, -1);
	assert_int_equal(http_parse_request(B("POST http://a.test/ HTTP/1.1"
	    "\r\nTransfer-Encoding: chunked\r\n\r\n"), r), HTTP_OK);
	assert_int_equal(r->body, HTTP_BODY_CHUNKED);
	free(r);
}

/* n header lines "X: y" after a request line. */
static uint8_t *
many_headers(size_t n, size_t *len)
{
	static const char rl[] = "GET http://a.test/ HTTP/1.1\r\n";
	uint8_t *b = malloc(sizeof(rl) + n * 6 + 2);
	size_t i, pos = sizeof(rl) - 1;

	assert_non_null(b);
	memcpy(b, rl, pos);
	for (i = 0; i < n; i++, pos += 6)
		memcpy(b + pos, "X: y\r\n", 6);
	memcpy(b + pos, "\r\n", 2);
	*len = pos + 2;
	return b;
}

static void
test_header_count(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	uint8_t *b;
	size_t len;

	(void)state;
	assert_non_null(r);
	b = many_headers(HTTP_MAX_HEADERS, &len);
	assert_int_equal(http_parse_request(b, len, r), HTTP_OK);
	assert_int_equal(r->nhdr, HTTP_MAX_HEADERS);
	free(b);
	b = many_headers(HTTP_MAX_HEADERS + 1, &len);
	assert_int_equal(http_parse_request(b, len, r), HTTP_TOO_LONG);
	free(b);
	free(r);
}

/* A head of exactly n bytes: one long header pads it. */
static uint8_t *
head_of(size_t n)
{
	static const char rl[] = "GET http://a.test/ HTTP/1.1\r\nX: ";
	uint8_t *b = malloc(n + 1);

	assert_non_null(b);
	memcpy(b, rl, sizeof(rl) - 1);
	memset(b + sizeof(rl) - 1, 'v', n - (sizeof(rl) - 1) - 4);
	memcpy(b + n - 4, "\r\n\r\n", 4);
	b[n] = 'Z';		/* a pipelined byte, not part of the head */
	return b;
}

static void
test_head_max(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	struct http_host h;
	uint8_t *b;

	(void)state;
	assert_non_null(r);
	b = head_of(HTTP_HEAD_MAX);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX, r), HTTP_OK);
	assert_int_equal(r->head_len, HTTP_HEAD_MAX);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX + 1, r),
	    HTTP_OK);
	assert_int_equal(r->head_len, HTTP_HEAD_MAX);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX - 1, r),
	    HTTP_NEED_MORE);
	free(b);
	b = head_of(HTTP_HEAD_MAX + 1);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX - 1, r),
	    HTTP_NEED_MORE);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX, r),
	    HTTP_TOO_LONG);
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX + 1, r),
	    HTTP_TOO_LONG);
	assert_int_equal(http_peek_host(b, HTTP_HEAD_MAX + 1, &h),
	    HTTP_TOO_LONG);
	free(b);
	free(r);
}

/* ---- Basic credentials ---- */

static const struct {
	const char	*v;
	size_t		 len;
	enum http_status st;
	const char	*user, *pass;
} basics[] = {
	{ S("Basic Ym9iOnB3"), HTTP_OK, "bob", "pw" },
	{ S("Basic Ym9iOnBhOnNz"), HTTP_OK, "bob", "pa:ss" },
	{ S("basic   YWxpY2U6czNjcmV0 "), HTTP_OK, "alice", "s3cret" },
	{ S("BASIC Ym9iOg=="), HTTP_OK, "bob", "" },
	{ S("Basic Ym9iOg"), HTTP_OK, "bob", "" },
	{ S("Basic OnB3"), HTTP_OK, "", "pw" },
	{ S("Basic dXNlcm5hbWU6cA=="), HTTP_TOO_LONG, "", "" },	/* 8 */
	{ S("Basic dTpwYXNzd29yZA=="), HTTP_TOO_LONG, "", "" },
	{ S("Basic Ym9i"), HTTP_INVALID, "", "" },		/* no ':' */
	{ S("Basic Ym9iOg="), HTTP_INVALID, "", "" },
	{ S("Basic Ym9iO"), HTTP_INVALID, "", "" },
	{ S("Basic Ym9i*g=="), HTTP_INVALID, "", "" },
	{ S("Basic Ym9=iOg="), HTTP_INVALID, "", "" },
	{ S("Basic ===="), HTTP_INVALID, "", "" },
	{ S("Basic "), HTTP_INVALID, "", "" },
	{ S("Basic"), HTTP_INVALID, "", "" },
	{ S("Basicx Ym9iOnB3"), HTTP_INVALID, "", "" },
	{ S("Bearer Ym9iOnB3"), HTTP_INVALID, "", "" },
	{ S("Basic YQphOmI="), HTTP_INVALID, "", "" },	/* "a\na:b" */
	{ S("Basic YQBiOmM="), HTTP_INVALID, "", "" },	/* "a\0b:c" */
};

static void
test_basic_auth(void **state)
{
	char user[8], pass[8];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(basics); i++) {
		memset(user, 'X', sizeof(user));
		memset(pass, 'X', sizeof(pass));
		if (http_parse_basic_auth((const uint8_t *)basics[i].v,
		    basics[i].len, user, sizeof(user), pass, sizeof(pass)) !=
		    basics[i].st)
			fail_msg("case %zu: %s", i, basics[i].v);
		if (basics[i].st != HTTP_OK)
			continue;
		assert_string_equal(user, basics[i].user);
		assert_string_equal(pass, basics[i].pass);
	}
}

/* ---- origin-form rewrite ---- */

static void
test_origin(void **state)
{
	static const char chunked[] =
	    "POST http://a.test?q=1 HTTP/1.1\r\nHost: evil.test\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: keep-alive, X-Foo, "
	    "content-length\r\nX-Foo: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
	    "Upgrade: h2c\r\nX-Bar: 2\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
	static const char want_auth[] =
	    "GET /a/b HTTP/1.1\r\nHost: Example.TEST:8080\r\n" CURL_UA
	    "Accept: */*\r\nConnection: close\r\n\r\n";
	static const char want_chunked[] =
	    "POST /?q=1 HTTP/1.1\r\nHost: a.test\r\n"
	    "Transfer-Encoding: chunked\r\nX-Bar: 2\r\n"
	    "Connection: close\r\n\r\n";
	static const char want_get10[] =
	    "GET / HTTP/1.0\r\nHost: example.test\r\n" CURL_UA
	    "Accept: */*\r\nConnection: close\r\n\r\n";
	struct http_request *r = malloc(sizeof(*r));
	uint8_t out[512];

	(void)state;
	assert_non_null(r);
	assert_int_equal(http_parse_request(B(cap_get_auth), r), HTTP_OK);
	assert_int_equal(http_build_origin((const uint8_t *)cap_get_auth, r,
	    out, sizeof(out)), sizeof(want_auth) - 1);
	assert_memory_equal(out, want_auth, sizeof(want_auth) - 1);
	assert_int_equal(http_build_origin((const uint8_t *)cap_get_auth, r,
	    out, sizeof(want_auth) - 2), 0);
	assert_int_equal(http_build_origin((const uint8_t *)cap_get_auth, r,
	    out, sizeof(want_auth) - 1), sizeof(want_auth) - 1);

	assert_int_equal(http_parse_request(B(chunked), r), HTTP_OK);
	assert_false(http_header_forwarded((const uint8_t *)chunked, r, 0));
	assert_true(http_header_forwarded((const uint8_t *)chunked, r, 1));
	assert_false(http_header_forwarded((const uint8_t *)chunked, r, 99));
	assert_int_equal(http_build_origin((const uint8_t *)chunked, r,
	    out, sizeof(out)), sizeof(want_chunked) - 1);
	assert_memory_equal(out, want_chunked, sizeof(want_chunked) - 1);

	assert_int_equal(http_parse_request(B(cap_get10), r), HTTP_OK);
	assert_int_equal(http_build_origin((const uint8_t *)cap_get10, r,
	    out, sizeof(out)), sizeof(want_get10) - 1);
	assert_memory_equal(out, want_get10, sizeof(want_get10) - 1);

	assert_int_equal(http_parse_request(B(cap_connect), r), HTTP_OK);
	assert_int_equal(http_build_origin((const uint8_t *)cap_connect, r,
	    out, sizeof(out)), 0);
	free(r);
}

/* The rewrite of a maximal head fits HTTP_ORIGIN_MAX. */
static void
test_origin_max(void **state)
{
	struct http_request *r = malloc(sizeof(*r));
	uint8_t *b = head_of(HTTP_HEAD_MAX), *out = malloc(HTTP_ORIGIN_MAX);

	(void)state;
	assert_non_null(r);
	assert_non_null(out);
	b[17] = '?';		/* path "?": the rewrite adds a '/' */
	assert_int_equal(http_parse_request(b, HTTP_HEAD_MAX, r), HTTP_OK);
	assert_true(http_build_origin(b, r, out, HTTP_ORIGIN_MAX) > 0);
	free(out);
	free(b);
	free(r);
}

static void
test_hostport(void **state)
{
	struct gk_host h;

	(void)state;
	assert_int_equal(http_hostport_parse(B("Example.TEST:8080"), &h), 0);
	assert_string_equal(h.name, "example.test");
	assert_int_equal(h.port, 8080);
	assert_int_equal(http_hostport_parse(B("[2001:db8::7]"), &h), 0);
	assert_true(h.is_addr);
	assert_int_equal(h.port, 0);
	assert_int_equal(http_hostport_parse(B("192.0.2.1:"), &h), 0);
	assert_int_equal(h.port, 0);
	assert_int_equal(http_hostport_parse(B("a.test:0"), &h), -1);
	assert_string_equal(h.name, "");
	assert_int_equal(http_hostport_parse(B("a.test:x"), &h), -1);
	assert_int_equal(http_hostport_parse(B(""), &h), -1);
	assert_int_equal(http_hostport_parse(B("2001:db8::7"), &h), -1);
}

/* ---- Host peek ---- */

static const struct {
	const char	*b;
	size_t		 len;
	enum http_status st;
	const char	*host;
	uint16_t	 port;
} peeks[] = {
	{ S("GET /t HTTP/1.1\r\nHost: example.test\r\n" CURL_UA
	    "Accept: */*\r\n\r\n"), HTTP_OK, "example.test", 0 },
	{ S("GET / HTTP/1.1\r\nHost: [2001:db8::7]:8443\r\n" CURL_UA
	    "Accept: */*\r\n\r\n"), HTTP_OK, "2001:db8::7", 8443 },
	{ S("GET / HTTP/1.1\r\nHost: A.Test.:80\r\n\r\nGET / HTTP/1.1\r\n"),
	    HTTP_OK, "a.test", 80 },
	{ S("GET http://a.test/ HTTP/1.1\r\nHost: a.test:80\r\n\r\n"),
	    HTTP_OK, "a.test", 0 },
	{ S("GET https://a.test:8443/ HTTP/1.1\r\n\r\n"), HTTP_OK,
	    "a.test", 8443 },
	{ S("CONNECT a.test:443 HTTP/1.1\r\n\r\n"), HTTP_OK, "a.test", 443 },
	{ S("GET / HTTP/1.0\r\n\r\n"), HTTP_ABSENT, "", 0 },
	{ S("GET / HTTP/1.1\r\n\r\n"), HTTP_INVALID, "", 0 },
	{ S("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"),
	    HTTP_INVALID, "", 0 },
	{ S("GET / HTTP/1.1\r\nHost:\r\n\r\n"), HTTP_INVALID, "", 0 },
	{ S("GET / HTTP/1.1\r\nHost: a..test\r\n\r\n"), HTTP_INVALID, "", 0 },
	{ S("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n"),
	    HTTP_INVALID, "", 0 },
	{ S("GET http://a.test:81/ HTTP/1.1\r\nHost: a.test:82\r\n\r\n"),
	    HTTP_INVALID, "", 0 },
	{ S("GET ftp://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"),
	    HTTP_INVALID, "", 0 },
	{ S("GET / HTTP/1.1\r\nHost: a.test\r\n"), HTTP_NEED_MORE, "", 0 },
	{ S("GET"), HTTP_NEED_MORE, "", 0 },
	{ S(""), HTTP_NEED_MORE, "", 0 },
	{ S("\x16\x03\x01\x02\x00\x01\x00\x01\xfc"), HTTP_NOT_HTTP, "", 0 },
	{ S("SSH-2.0-OpenSSH_9.2\r\n"), HTTP_NOT_HTTP, "", 0 },
	{ S(" GET / HTTP/1.1\r\n"), HTTP_NOT_HTTP, "", 0 },
	{ S("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG"), HTTP_NOT_HTTP, "", 0 },
	{ S("FOO bar\r\n\r\n"), HTTP_INVALID, "", 0 },
};

static void
test_peek(void **state)
{
	struct http_host h;
	enum http_status st;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(peeks); i++) {
		st = http_peek_host((const uint8_t *)peeks[i].b, peeks[i].len,
		    &h);
		if (st != peeks[i].st)
			fail_msg("case %zu: got %s", i, http_strstatus(st));
		assert_string_equal(h.host.name, peeks[i].host);
		assert_int_equal(h.host.port, peeks[i].port);
	}
	assert_int_equal(http_peek_host(B("GET / HTTP/1.0\r\nHost: a.test\r\n"
	    "\r\nbody"), &h), HTTP_OK);
	assert_int_equal(h.minor, 0);
	assert_int_equal(h.head_len, 32);
}

/* What follows a peeked head: its body framing, CONNECT, Upgrade. */
static void
test_peek_framing(void **state)
{
	static const struct {
		const char	*b;
		size_t		 len;
		enum http_status st;
		enum http_method method;
		enum http_body	 body;
		uint64_t	 cl;
		unsigned	 upgrade;
	} c[] = {
#define H	"Host: a.test\r\n"
		{ S("GET / HTTP/1.1\r\n" H "\r\n"), HTTP_OK,
		    HTTP_METHOD_OTHER, HTTP_BODY_NONE, 0, 0 },
		{ S("POST / HTTP/1.1\r\n" H "Content-Length: 12\r\n\r\n"),
		    HTTP_OK, HTTP_METHOD_OTHER, HTTP_BODY_LENGTH, 12, 0 },
		{ S("POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n"
		    "\r\n"), HTTP_OK, HTTP_METHOD_OTHER, HTTP_BODY_CHUNKED, 0,
		    0 },
		{ S("CONNECT a.test:443 HTTP/1.1\r\n" H "\r\n"), HTTP_OK,
		    HTTP_METHOD_CONNECT, HTTP_BODY_NONE, 0, 0 },
		{ S("GET / HTTP/1.1\r\n" H "Upgrade: WebSocket\r\n\r\n"),
		    HTTP_OK, HTTP_METHOD_OTHER, HTTP_BODY_NONE, 0,
		    HTTP_UPGRADE_WEBSOCKET },
		{ S("GET / HTTP/1.1\r\n" H "Upgrade: h2c\r\n\r\n"), HTTP_OK,
		    HTTP_METHOD_OTHER, HTTP_BODY_NONE, 0, HTTP_UPGRADE_H2C },
		{ S("GET / HTTP/1.1\r\n" H "Upgrade: websocket/13 , ,"
		    "TLS/1.2\r\n\r\n"), HTTP_OK, HTTP_METHOD_OTHER,
		    HTTP_BODY_NONE, 0,
		    HTTP_UPGRADE_WEBSOCKET | HTTP_UPGRADE_OTHER },
		{ S("GET / HTTP/1.1\r\n" H "Upgrade: websocket\r\n"
		    "Upgrade:h2c\r\n\r\n"), HTTP_OK, HTTP_METHOD_OTHER,
		    HTTP_BODY_NONE, 0,
		    HTTP_UPGRADE_WEBSOCKET | HTTP_UPGRADE_H2C },
		{ S("GET / HTTP/1.1\r\n" H "Upgrade:\r\n\r\n"), HTTP_OK,
		    HTTP_METHOD_OTHER, HTTP_BODY_NONE, 0, 0 },
		/* framing is known even when the host is not acceptable */
		{ S("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n"),
		    HTTP_INVALID, HTTP_METHOD_OTHER, HTTP_BODY_LENGTH, 3, 0 },
#undef H
	};
	struct http_host h;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(c); i++) {
		if (http_peek_host((const uint8_t *)c[i].b, c[i].len, &h) !=
		    c[i].st)
			fail_msg("case %zu", i);
		assert_int_equal(h.method, c[i].method);
		assert_int_equal(h.body, c[i].body);
		assert_int_equal(h.content_length, c[i].cl);
		assert_int_equal(h.upgrade, c[i].upgrade);
	}
}

/* The rewrite adds Host and Connection: it must stay a valid head. */
static void
test_origin_header_count(void **state)
{
	static uint8_t buf[HTTP_HEAD_MAX], out[HTTP_ORIGIN_MAX];
	struct http_request *r = malloc(sizeof(*r));
	size_t k, len;
	int n;

	(void)state;
	assert_non_null(r);
	for (k = 97; k <= 99; k++) {
		len = (size_t)snprintf((char *)buf, sizeof(buf),
		    "GET http://a.test/ HTTP/1.1\r\n");
		for (n = 0; n < (int)k; n++)
			len += (size_t)snprintf((char *)buf + len,
			    sizeof(buf) - len, "X-%d: v\r\n", n);
		len += (size_t)snprintf((char *)buf + len, sizeof(buf) - len,
		    "\r\n");
		assert_int_equal(http_parse_request(buf, len, r), HTTP_OK);
		if (k + 2 <= HTTP_MAX_HEADERS)
			assert_true(http_build_origin(buf, r, out,
			    sizeof(out)) > 0);
		else
			assert_int_equal(http_build_origin(buf, r, out,
			    sizeof(out)), 0);
	}
	free(r);
}

/* gatekeeper's own answer: one text/plain response, its length right,
 * nothing written past what fits. */
static void
test_reply_text(void **state)
{
	static const char want[] = "HTTP/1.1 403 Forbidden\r\nContent-Type: "
	    "text/plain\r\nContent-Length: 8\r\nConnection: close\r\n\r\n"
	    "refused\n";
	char buf[256];

	(void)state;
	assert_int_equal(http_reply_text(buf, sizeof(buf), "403 Forbidden",
	    "refused"), strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(http_reply_text(buf, strlen(want), "403 Forbidden",
	    "refused"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin_header_count),
		cmocka_unit_test(test_captured),
		cmocka_unit_test(test_captured_prefixes),
		cmocka_unit_test(test_statuses),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_header_count),
		cmocka_unit_test(test_head_max),
		cmocka_unit_test(test_basic_auth),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_origin_max),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_peek_framing),
		cmocka_unit_test(test_reply_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
