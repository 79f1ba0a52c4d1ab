/*
 * Fuzz the HTTP proxy parsers. Invariants: every span lies in the head,
 * the head ends in CRLF CRLF within HTTP_HEAD_MAX, one byte less is
 * NEED_MORE, names are NUL-terminated, printable, lower case; the
 * origin-form rewrite of a request is itself a valid head whose Host
 * (peeked) is the request's destination.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "socks/parse/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out[HTTP_ORIGIN_MAX];

static void
check_host(const struct gk_host *h)
{
	size_t i, n = strnlen(h->name, sizeof(h->name));

	assert(n < sizeof(h->name));
	for (i = 0; i < n; i++) {
		assert(h->name[i] > 0x20 && h->name[i] < 0x7f);
		assert(h->name[i] < 'A' || h->name[i] > 'Z');
	}
}

static void
check_span(const struct http_span *s, size_t end)
{
	assert(s->off <= end && s->len <= end - s->off);
}

static void
check_creds(const uint8_t *v, size_t len)
{
	char user[64], pass[64];
	size_t i;

	if (http_parse_basic_auth(v, len, user, sizeof(user), pass,
	    sizeof(pass)) != HTTP_OK)
		return;
	assert(strnlen(user, sizeof(user)) < sizeof(user));
	assert(strnlen(pass, sizeof(pass)) < sizeof(pass));
	for (i = 0; user[i] != '\0'; i++)
		assert((uint8_t)user[i] >= 0x20 && user[i] != 0x7f);
	for (i = 0; pass[i] != '\0'; i++)
		assert((uint8_t)pass[i] >= 0x20 && pass[i] != 0x7f);
}

static void
check_origin(const uint8_t *b, const struct http_request *r)
{
	struct http_host h;
	size_t n, i, nfwd = 0;

	n = http_build_origin(b, r, out, sizeof(out));
	if (r->method == HTTP_METHOD_CONNECT) {
		assert(n == 0);
		return;
	}
	for (i = 0; i < r->nhdr; i++)
		nfwd += http_header_forwarded(b, r, i);
	if (nfwd + 2 > HTTP_MAX_HEADERS) {
		/* Host and Connection would not fit: refused */
		assert(n == 0);
		return;
	}
	assert(n > 0 && n <= r->head_len + 32);
	assert(memcmp(out + n - 21, "Connection: close\r\n\r\n", 21) == 0);
	if (n > HTTP_HEAD_MAX)
		return;
	assert(http_peek_host(out, n, &h) == HTTP_OK);
	assert(h.head_len == n);
	assert(strcmp(h.host.name, r->dst.name) == 0);
	assert(h.host.port == 0 || h.host.port == r->dst.port);
}

static void
request(const uint8_t *b, size_t len)
{
	struct http_request *r = malloc(sizeof(*r));
	enum http_status st;
	size_t i, end;

	assert(r != NULL);
	st = http_parse_request(b, len, r);
	check_host(&r->dst);
	if (st != HTTP_OK) {
		assert(r->dst.name[0] == '\0');
		free(r);
		return;
	}
	end = r->head_len;
	assert(end >= 4 && end <= len && end <= HTTP_HEAD_MAX);
	assert(memcmp(b + end - 4, "\r\n\r\n", 4) == 0);
	assert(r->dst.port != 0 && r->minor <= 9 && r->nhdr <= 100);
	check_span(&r->method_tok, end);
	check_span(&r->target, end);
	check_span(&r->authority, end);
	check_span(&r->path, end);
	for (i = 0; i < r->nhdr; i++) {
		check_span(&r->hdr[i].line, end);
		check_span(&r->hdr[i].value, end);
		assert(r->hdr[i].name.len > 0);
	}
	assert(r->host_hdr < (int)r->nhdr && r->proxy_auth < (int)r->nhdr);
	if (r->proxy_auth >= 0)
		check_creds(b + r->hdr[r->proxy_auth].value.off,
		    r->hdr[r->proxy_auth].value.len);
	check_origin(b, r);
	assert(http_parse_request(b, end - 1, r) == HTTP_NEED_MORE);
	free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_host h;
	enum http_status st;

	request(data, size);
	st = http_peek_host(data, size, &h);
	check_host(&h.host);
	if (st == HTTP_OK || st == HTTP_ABSENT)
		assert(h.head_len <= size && h.head_len <= HTTP_HEAD_MAX);
	if (st == HTTP_ABSENT)
		assert(h.minor == 0);
	if (st != HTTP_OK)
		assert(h.host.name[0] == '\0');
	check_creds(data, size);
	if (http_hostport_parse(data, size, &h.host) == 0) {
		check_host(&h.host);
		assert(h.host.name[0] != '\0');
	} else
		assert(h.host.name[0] == '\0');
	return 0;
}
