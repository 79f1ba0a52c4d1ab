/*
 * Plain HTTP inside a tunnel: what its first bytes are (http_sniff), then
 * every request on the connection, one after the other (http_follow).
 *
 * Servers skip empty lines before a request line (RFC 9112 2.2; nginx
 * any number of CR and LF, python's http.server also spaces), and take
 * the next request on a kept-alive connection where the body of the last
 * one ends. A peek that looks only at the start of a tunnel, or that
 * takes "\r\nGET" for a line protocol, lets a request for another Host
 * reach a server with name-based virtual hosts. So both look at what a
 * server would: up to HTTP_BLANK_MAX blank bytes are skipped (more are
 * refused: what follows them is not looked at), and the follower walks
 * the request stream by its framing (RFC 9112 6: Content-Length, or
 * chunked with its chunk-size lines, chunk ends and trailer section),
 * handing each head to the caller to check and saying how many bytes may
 * pass without being looked at (a body, chunk data).
 *
 * Pure and bounded: bytes in, verdict out; the follower's state is the
 * caller's and changes only with a verdict that consumes bytes. Every
 * prefix of an input says NEED_MORE or what the whole input says, so
 * verdicts do not depend on how the stream was split.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "socks/parse/http_int.h"
#include "socks/parse/socks.h"

/* PROXY protocol v2 signature (haproxy's proxy-protocol.txt 2.2). */
static const uint8_t proxy_v2_sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00,
    0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a };

/*
 * Methods a request line may start with when it has no "HTTP/" (HTTP/0.9:
 * "GET /path"; servers accept no other method there, the rest of the list
 * costs nothing): the IANA HTTP Method Registry, plus PURGE and the UPnP
 * methods servers know.
 */
static const char *const methods[] = {
	"ACL", "BASELINE-CONTROL", "BIND", "CHECKIN", "CHECKOUT", "CONNECT",
	"COPY", "DELETE", "GET", "HEAD", "LABEL", "LINK", "LOCK", "MERGE",
	"MKACTIVITY", "MKCALENDAR", "MKCOL", "MKREDIRECTREF", "MKWORKSPACE",
	"MOVE", "OPTIONS", "ORDERPATCH", "PATCH", "POST", "PRI", "PROPFIND",
	"PROPPATCH", "PUT", "QUERY", "REBIND", "REPORT", "SEARCH", "TRACE",
	"UNBIND", "UNCHECKOUT", "UNLINK", "UNLOCK", "UPDATE",
	"UPDATEREDIRECTREF", "VERSION-CONTROL", "PURGE", "M-SEARCH", "NOTIFY",
	"SUBSCRIBE", "UNSUBSCRIBE",
};

static bool
is_blank(uint8_t c)
{
	return c == '\r' || c == '\n' || c == ' ' || c == '\t';
}

/* Bytes some server splits a request line at (python's str.split()
 * takes the ASCII separators and, in latin-1, NEL and NBSP). */
static bool
is_sep(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' ||
	    c == '\r' || (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0;
}

/* A byte no server takes in a request line that it serves: NUL and the
 * other control characters that are not separators. */
static bool
is_stop(uint8_t c)
{
	return (c < 0x20 && !is_sep(c) && c != '\n') || c == 0x7f;
}

static bool
is_method(const uint8_t *p, size_t n)
{
	size_t i, k;

	for (i = 0; i < sizeof(methods) / sizeof(*methods); i++) {
		if (strlen(methods[i]) != n)
			continue;
		for (k = 0; k < n && gk_lower(p[k]) ==
		    gk_lower((uint8_t)methods[i][k]); k++)
			;
		if (k == n)
			return true;
	}
	return false;
}

/*
 * Case-insensitive: do the bytes at p[0..n) start with s? 1 yes, 0 no,
 * -1 not yet (n too short, but what is there matches).
 */
static int
prefix_is(const uint8_t *p, size_t n, const char *s)
{
	size_t i, sl = strlen(s);

	for (i = 0; i < sl; i++) {
		if (i == n)
			return -1;
		if (gk_lower(p[i]) != gk_lower((uint8_t)s[i]))
			return 0;
	}
	return 1;
}

/* Up to HTTP_BLANK_MAX blank bytes: how many (> HTTP_BLANK_MAX: too
 * many, the caller refuses). */
static size_t
blank_run(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && i <= HTTP_BLANK_MAX && is_blank(buf[i]); i++)
		;
	return i;
}

/*
 * The rest of a first line after "TOKEN SEP": a method with a target in
 * origin-, asterisk- or absolute-form ("GET /", "OPTIONS *", "get http:")
 * or "HTTP/" anywhere before the line ends is a request. p[0..n) starts
 * at the separator; the line started n0 bytes before.
 */
static enum http_sniff
sniff_rest(const uint8_t *p, size_t n, bool method, size_t n0)
{
	size_t k = 0;
	int m;

	while (k < n && is_sep(p[k]))
		k++;
	if (k == n)
		return HTTP_SNIFF_NEED_MORE;
	if (method && (p[k] == '/' || p[k] == '*'))
		return HTTP_SNIFF_REQUEST;
	if (method && ((m = prefix_is(p + k, n - k, "http:")) != 0 ||
	    (m = prefix_is(p + k, n - k, "https:")) != 0))
		return m == 1 ? HTTP_SNIFF_REQUEST : HTTP_SNIFF_NEED_MORE;
	for (; k < n; k++) {
		if (p[k] == '\n' || is_stop(p[k]) || n0 + k >= HTTP_HEAD_MAX)
			return HTTP_SNIFF_OTHER;
		if ((m = prefix_is(p + k, n - k, "http/")) != 0)
			return m == 1 ? HTTP_SNIFF_REQUEST :
			    HTTP_SNIFF_NEED_MORE;
	}
	return HTTP_SNIFF_NEED_MORE;
}

/* The first line, after the blank bytes. */
static enum http_sniff
sniff_line(const uint8_t *p, size_t n)
{
	size_t tok;
	int m;

	if ((m = prefix_is(p, n, "PROXY ")) != 0)	/* v1, any case */
		return m == 1 ? HTTP_SNIFF_PROXY : HTTP_SNIFF_NEED_MORE;
	for (tok = 0; tok < n && tok <= HTTP_METHOD_MAX &&
	    http_is_tchar(p[tok]); tok++)
		;
	if (tok > HTTP_METHOD_MAX)
		return HTTP_SNIFF_OTHER;	/* no method is that long */
	if (tok == n)
		return HTTP_SNIFF_NEED_MORE;
	if (tok == 0 || !is_sep(p[tok]))
		return HTTP_SNIFF_OTHER;	/* "\x00...", "AMQP\x00" */
	return sniff_rest(p + tok, n - tok, is_method(p, tok), tok);
}

enum http_sniff
http_sniff(const uint8_t *buf, size_t len, struct http_sniff_result *out)
{
	size_t n = len < sizeof(proxy_v2_sig) ? len : sizeof(proxy_v2_sig);

	memset(out, 0, sizeof(*out));
	out->blank = blank_run(buf, len);
	if (len > 0 && memcmp(buf, proxy_v2_sig, n) == 0)
		return n == sizeof(proxy_v2_sig) ? HTTP_SNIFF_PROXY :
		    HTTP_SNIFF_NEED_MORE;
	if (out->blank > HTTP_BLANK_MAX)
		return HTTP_SNIFF_BLANKS;
	if (out->blank == len)
		return HTTP_SNIFF_NEED_MORE;
	return sniff_line(buf + out->blank, len - out->blank);
}

const char *
http_strsniff(enum http_sniff s)
{
	switch (s) {
	case HTTP_SNIFF_NEED_MORE:
		return "need more";
	case HTTP_SNIFF_REQUEST:
		return "HTTP request";
	case HTTP_SNIFF_OTHER:
		return "not HTTP";
	case HTTP_SNIFF_PROXY:
		return "PROXY protocol header";
	case HTTP_SNIFF_BLANKS:
		return "too many blank bytes";
	}
	return "unknown";
}

/* ---- the request stream ---- */

void
http_follow_init(struct http_follow *f)
{
	memset(f, 0, sizeof(*f));
	f->state = HTTP_FOLLOW_ST_HEAD;
}

static enum http_follow_status
invalid(struct http_follow_out *out, const char *why)
{
	out->why = why;
	return HTTP_FOLLOW_INVALID;
}

/* What may follow a head: refuse what cannot be followed. */
static const char *
head_refusal(const struct http_host *h)
{
	if (h->method == HTTP_METHOD_CONNECT)
		return "a CONNECT request inside a tunnel";
	if (h->upgrade & HTTP_UPGRADE_H2C)
		return "an Upgrade to h2c (HTTP/2 cannot be followed)";
	if (h->upgrade & HTTP_UPGRADE_OTHER)
		return "an Upgrade to a protocol other than websocket";
	return NULL;
}

/* A request head, after up to HTTP_BLANK_MAX blank bytes. */
static enum http_follow_status
follow_head(struct http_follow *f, const uint8_t *buf, size_t len,
    struct http_follow_out *out)
{
	const char *why;
	size_t skip;

	if (f->upgrade && len == 0)
		return HTTP_FOLLOW_NEED_MORE;
	/* after a websocket Upgrade: the next request, or frames (whose
	 * first byte is never a tchar nor blank) once it switched */
	if (f->upgrade && !http_is_tchar(buf[0]) && !is_blank(buf[0])) {
		f->state = HTTP_FOLLOW_ST_OPAQUE;
		return HTTP_FOLLOW_OPAQUE;
	}
	out->blank = skip = blank_run(buf, len);
	if (skip > HTTP_BLANK_MAX)
		return invalid(out, "more blank bytes before a request line "
		    "than servers are known to skip");
	if (skip == len)
		return HTTP_FOLLOW_NEED_MORE;
	out->st = http_peek_host(buf + skip, len - skip, &out->host);
	if (out->st == HTTP_NEED_MORE)
		return HTTP_FOLLOW_NEED_MORE;
	if (out->st != HTTP_OK && out->st != HTTP_ABSENT)
		return invalid(out, out->st == HTTP_TOO_LONG ? "a request head "
		    "over the size limit" : "a malformed request head");
	if ((why = head_refusal(&out->host)) != NULL)
		return invalid(out, why);
	out->pass = skip + out->host.head_len;
	f->requests++;
	f->upgrade = (out->host.upgrade & HTTP_UPGRADE_WEBSOCKET) != 0;
	if (out->host.body == HTTP_BODY_CHUNKED)
		f->state = HTTP_FOLLOW_ST_CHUNK;
	else if (out->host.body == HTTP_BODY_LENGTH &&
	    out->host.content_length > 0) {
		f->state = HTTP_FOLLOW_ST_BODY;
		f->left = out->host.content_length;
	}
	return HTTP_FOLLOW_HEAD;
}

static int
hex_val(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = gk_lower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The end of a line that started at buf[0]: CRLF within max bytes, no
 * other control character (HTAB aside). 1 and *eol (its CR), 0 not yet,
 * -1 invalid.
 */
static int
line_end(const uint8_t *buf, size_t len, size_t from, size_t max,
    size_t *eol)
{
	size_t i;

	for (i = from; i < len; i++) {
		if (i + 2 > max)
			return -1;
		if (buf[i] == '\r') {
			if (i + 1 == len)
				return 0;
			if (buf[i + 1] != '\n')
				return -1;
			*eol = i;
			return 1;
		}
		if ((buf[i] < 0x20 && buf[i] != '\t') || buf[i] == 0x7f)
			return -1;
	}
	return len >= max ? -1 : 0;
}

/* chunk-size [ chunk-ext ] CRLF (RFC 9112 7.1), the extensions only
 * checked for what may stand in a line. */
static enum http_follow_status
follow_chunk_size(struct http_follow *f, const uint8_t *buf, size_t len,
    struct http_follow_out *out)
{
	uint64_t size = 0;
	size_t i, eol;
	int v, r;

	for (i = 0; i < len && (v = hex_val(buf[i])) >= 0; i++) {
		if (i == 16)
			return invalid(out, "a chunk size over 16 hex digits");
		size = size << 4 | (uint64_t)v;
	}
	if (i == len)
		return HTTP_FOLLOW_NEED_MORE;
	if (i == 0)
		return invalid(out, "a chunk-size line without a size");
	if (buf[i] != '\r' && buf[i] != ';' && buf[i] != ' ' &&
	    buf[i] != '\t')
		return invalid(out, "a malformed chunk-size line");
	if ((r = line_end(buf, len, i, HTTP_CHUNK_LINE_MAX, &eol)) <= 0)
		return r == 0 ? HTTP_FOLLOW_NEED_MORE : invalid(out,
		    "a malformed or overlong chunk-size line");
	out->pass = eol + 2;
	if (size == 0)
		f->state = HTTP_FOLLOW_ST_TRAILER;
	else {
		f->state = HTTP_FOLLOW_ST_DATA;
		f->left = size;
	}
	return HTTP_FOLLOW_PASS;
}

/* The CRLF that ends chunk data. */
static enum http_follow_status
follow_data_end(struct http_follow *f, const uint8_t *buf, size_t len,
    struct http_follow_out *out)
{
	if (len >= 1 && buf[0] != '\r')
		return invalid(out, "chunk data longer than its size");
	if (len >= 2 && buf[1] != '\n')
		return invalid(out, "chunk data not ended by CRLF");
	if (len < 2)
		return HTTP_FOLLOW_NEED_MORE;
	out->pass = 2;
	f->state = HTTP_FOLLOW_ST_CHUNK;
	return HTTP_FOLLOW_PASS;
}

/* The trailer section (field lines, then an empty line), whole, within
 * HTTP_HEAD_MAX bytes. */
static enum http_follow_status
follow_trailer(struct http_follow *f, const uint8_t *buf, size_t len,
    struct http_follow_out *out)
{
	size_t pos = 0, i, eol;
	int r;

	for (;;) {
		if (pos + 2 > HTTP_HEAD_MAX)
			return invalid(out, "a trailer section over the size "
			    "limit");
		if (pos < len && buf[pos] == '\r')	/* the empty line */
			break;
		for (i = pos; i < len && i < HTTP_HEAD_MAX &&
		    http_is_tchar(buf[i]); i++)
			;
		if (i == len)
			return HTTP_FOLLOW_NEED_MORE;
		if (i == pos || buf[i] != ':')
			return invalid(out, "a malformed trailer field");
		if ((r = line_end(buf, len, i, HTTP_HEAD_MAX, &eol)) <= 0)
			return r == 0 ? HTTP_FOLLOW_NEED_MORE : invalid(out,
			    "a malformed or overlong trailer field");
		pos = eol + 2;
	}
	if (pos + 1 == len)
		return HTTP_FOLLOW_NEED_MORE;
	if (buf[pos + 1] != '\n')
		return invalid(out, "a trailer section not ended by CRLF");
	out->pass = pos + 2;
	f->state = HTTP_FOLLOW_ST_HEAD;
	return HTTP_FOLLOW_PASS;
}

enum http_follow_status
http_follow(struct http_follow *f, const uint8_t *buf, size_t len,
    struct http_follow_out *out)
{
	memset(out, 0, sizeof(*out));
	switch (f->state) {
	case HTTP_FOLLOW_ST_HEAD:
		return follow_head(f, buf, len, out);
	case HTTP_FOLLOW_ST_BODY:
	case HTTP_FOLLOW_ST_DATA:
		out->pass = f->left;	/* whether held yet or not */
		f->left = 0;
		f->state = f->state == HTTP_FOLLOW_ST_BODY ?
		    HTTP_FOLLOW_ST_HEAD : HTTP_FOLLOW_ST_DATA_END;
		return HTTP_FOLLOW_PASS;
	case HTTP_FOLLOW_ST_CHUNK:
		return follow_chunk_size(f, buf, len, out);
	case HTTP_FOLLOW_ST_DATA_END:
		return follow_data_end(f, buf, len, out);
	case HTTP_FOLLOW_ST_TRAILER:
		return follow_trailer(f, buf, len, out);
	case HTTP_FOLLOW_ST_OPAQUE:
		return HTTP_FOLLOW_OPAQUE;
	}
	return invalid(out, "no such state");
}
