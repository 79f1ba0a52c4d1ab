/*
 * HTTP/1.x proxy request heads (RFC 9112): CONNECT authority-form and
 * absolute-form http:// requests, the Host peek for plain HTTP inside a
 * tunnel, Basic proxy credentials and the origin-form rewrite.
 *
 * Strict on purpose: lines end in CRLF (a bare CR or LF is INVALID), no
 * obs-fold, no whitespace before ':', no control characters, one Host,
 * one Proxy-Authorization, at most one of Content-Length and
 * Transfer-Encoding (RFC 9112 6.3: both is how requests are smuggled).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_addr.h"
#include "socks/parse/http_int.h"
#include "socks/parse/socks.h"

#define CL_DIGITS_MAX	18	/* Content-Length fits in uint64_t */
#define AUTH_B64_MAX	1024	/* base64 text of Basic credentials */

static const struct {
	const char	*name;
	enum http_hdr	 kind;
} hdr_names[] = {
	{ "host", HTTP_H_HOST },
	{ "proxy-authorization", HTTP_H_PROXY_AUTHORIZATION },
	{ "proxy-connection", HTTP_H_PROXY_CONNECTION },
	{ "connection", HTTP_H_CONNECTION },
	{ "keep-alive", HTTP_H_KEEP_ALIVE },
	{ "te", HTTP_H_TE },
	{ "trailer", HTTP_H_TRAILER },
	{ "upgrade", HTTP_H_UPGRADE },
	{ "content-length", HTTP_H_CONTENT_LENGTH },
	{ "transfer-encoding", HTTP_H_TRANSFER_ENCODING },
};

/* Case-insensitive: do the n bytes at p spell s? */
static bool
span_is(const uint8_t *p, size_t n, const char *s)
{
	size_t i;

	if (strlen(s) != n)
		return false;
	for (i = 0; i < n; i++) {
		if (gk_lower(p[i]) != gk_lower((uint8_t)s[i]))
			return false;
	}
	return true;
}

/* Case-insensitive prefix test. */
static bool
starts_with(const uint8_t *p, size_t n, const char *s)
{
	size_t sl = strlen(s);

	return n >= sl && span_is(p, sl, s);
}

/*
 * Find the end of the line at pos within buf[0..n): *eol is its CR.
 * NEED_MORE if the CRLF is not there yet; INVALID for a bare CR or LF or
 * a control character other than HTAB (also in an incomplete line).
 */
static enum http_status
line_end(const uint8_t *buf, size_t n, size_t pos, size_t *eol)
{
	size_t i;

	for (i = pos; i < n; i++) {
		if (buf[i] == '\r') {
			if (n - i < 2)
				return HTTP_NEED_MORE;
			if (buf[i + 1] != '\n')
				return HTTP_INVALID;
			*eol = i;
			return HTTP_OK;
		}
		if ((buf[i] < 0x20 && buf[i] != '\t') || buf[i] == 0x7f)
			return HTTP_INVALID;
	}
	return HTTP_NEED_MORE;
}

/* The method token and its SP at the start of buf[0..n). */
static enum http_status
method_scan(const uint8_t *buf, size_t n, size_t *mlen)
{
	size_t i;

	for (i = 0; i < n && i <= HTTP_METHOD_MAX; i++) {
		if (buf[i] == ' ') {
			if (i == 0)
				return HTTP_INVALID;
			*mlen = i;
			return HTTP_OK;
		}
		if (!http_is_tchar(buf[i]))
			return HTTP_INVALID;
	}
	return i > HTTP_METHOD_MAX ? HTTP_INVALID : HTTP_NEED_MORE;
}

/* method SP request-target SP "HTTP/1." DIGIT, ending at eol. */
static enum http_status
request_line(const uint8_t *buf, size_t eol, struct http_request *out)
{
	size_t mlen, t, i;

	if (method_scan(buf, eol, &mlen) != HTTP_OK)
		return HTTP_INVALID;
	out->method_tok.off = 0;
	out->method_tok.len = mlen;
	if (mlen == 7 && memcmp(buf, "CONNECT", 7) == 0)
		out->method = HTTP_METHOD_CONNECT;
	t = mlen + 1;
	for (i = t; i < eol && buf[i] != ' '; i++) {
		if (buf[i] <= 0x20 || buf[i] >= 0x7f)
			return HTTP_INVALID;
	}
	if (i == t || eol - i != 9 || memcmp(buf + i, " HTTP/1.", 8) != 0 ||
	    buf[i + 8] < '0' || buf[i + 8] > '9')
		return HTTP_INVALID;
	out->target.off = t;
	out->target.len = i - t;
	out->minor = (unsigned)(buf[i + 8] - '0');
	return HTTP_OK;
}

static enum http_hdr
hdr_kind(const uint8_t *name, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(hdr_names) / sizeof(*hdr_names); i++) {
		if (span_is(name, n, hdr_names[i].name))
			return hdr_names[i].kind;
	}
	return HTTP_H_OTHER;
}

static enum http_status
content_length(const uint8_t *v, size_t n, uint64_t *out)
{
	size_t i;

	if (n == 0 || n > CL_DIGITS_MAX)
		return HTTP_INVALID;
	*out = 0;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return HTTP_INVALID;
		*out = *out * 10 + (uint64_t)(v[i] - '0');
	}
	return HTTP_OK;
}

/* The last transfer coding must be chunked (RFC 9112 6.3). */
static enum http_status
transfer_encoding(const uint8_t *v, size_t n)
{
	size_t s = n;

	while (s > 0 && v[s - 1] != ',')
		s--;
	while (s < n && (v[s] == ' ' || v[s] == '\t'))
		s++;
	return span_is(v + s, n - s, "chunked") ? HTTP_OK : HTTP_INVALID;
}

/* Duplicates and framing of the header just added. */
static enum http_status
header_note(const uint8_t *buf, struct http_request *out)
{
	int idx = (int)out->nhdr - 1;
	const struct http_header *h = &out->hdr[idx];
	const uint8_t *v = buf + h->value.off;

	switch (h->kind) {
	case HTTP_H_HOST:
		if (out->host_hdr >= 0)
			return HTTP_INVALID;
		out->host_hdr = idx;
		break;
	case HTTP_H_PROXY_AUTHORIZATION:
		if (out->proxy_auth >= 0)
			return HTTP_INVALID;
		out->proxy_auth = idx;
		break;
	case HTTP_H_CONTENT_LENGTH:
		if (out->body != HTTP_BODY_NONE)
			return HTTP_INVALID;
		out->body = HTTP_BODY_LENGTH;
		return content_length(v, h->value.len, &out->content_length);
	case HTTP_H_TRANSFER_ENCODING:
		if (out->body != HTTP_BODY_NONE || out->minor == 0)
			return HTTP_INVALID;
		out->body = HTTP_BODY_CHUNKED;
		return transfer_encoding(v, h->value.len);
	case HTTP_H_OTHER:
	case HTTP_H_PROXY_CONNECTION:
	case HTTP_H_CONNECTION:
	case HTTP_H_KEEP_ALIVE:
	case HTTP_H_TE:
	case HTTP_H_TRAILER:
	case HTTP_H_UPGRADE:
		break;
	}
	return HTTP_OK;
}

/* field-name ":" OWS field-value OWS, from pos to eol. */
static enum http_status
header_line(const uint8_t *buf, size_t pos, size_t eol,
    struct http_request *out)
{
	struct http_header *h;
	size_t i, v, e;

	for (i = pos; i < eol && buf[i] != ':'; i++) {
		if (!http_is_tchar(buf[i]))
			return HTTP_INVALID;	/* also obs-fold, "a :" */
	}
	if (i == pos || i == eol)
		return HTTP_INVALID;
	if (out->nhdr == HTTP_MAX_HEADERS)
		return HTTP_TOO_LONG;
	for (v = i + 1; v < eol && (buf[v] == ' ' || buf[v] == '\t'); v++)
		;
	for (e = eol; e > v && (buf[e - 1] == ' ' || buf[e - 1] == '\t'); e--)
		;
	h = &out->hdr[out->nhdr++];
	h->kind = hdr_kind(buf + pos, i - pos);
	h->line.off = pos;
	h->line.len = eol + 2 - pos;
	h->name.off = pos;
	h->name.len = i - pos;
	h->value.off = v;
	h->value.len = e - v;
	return header_note(buf, out);
}

/* Request line and headers through the empty line, no target checks. */
static enum http_status
head_parse(const uint8_t *buf, size_t len, struct http_request *out)
{
	size_t n = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	size_t pos = 0, eol = 0, mlen;
	enum http_status st;

	memset(out, 0, sizeof(*out));
	out->host_hdr = out->proxy_auth = -1;
	for (;;) {
		st = line_end(buf, n, pos, &eol);
		if (st == HTTP_NEED_MORE && pos == 0 &&
		    method_scan(buf, n, &mlen) == HTTP_INVALID)
			return HTTP_INVALID;
		if (st == HTTP_NEED_MORE)
			return len >= HTTP_HEAD_MAX ? HTTP_TOO_LONG : st;
		if (st != HTTP_OK)
			return st;
		if (pos == 0)
			st = request_line(buf, eol, out);
		else if (eol == pos) {
			out->head_len = eol + 2;
			return HTTP_OK;
		} else
			st = header_line(buf, pos, eol, out);
		if (st != HTTP_OK)
			return st;
		pos = eol + 2;
	}
}

/*
 * host [":" port] (IPv6 in brackets). With need_port the port must be
 * there; otherwise an absent or empty port gives defport. Port 0 fails.
 */
static int
hostport(const uint8_t *s, size_t n, bool need_port, uint16_t defport,
    struct gk_host *dst)
{
	const uint8_t *close;
	size_t hlen, i;
	uint32_t port = 0;

	if (n > 0 && s[0] == '[') {
		if ((close = memchr(s, ']', n)) == NULL)
			return -1;
		hlen = (size_t)(close - s) + 1;
		if (hlen < n && s[hlen] != ':')
			return -1;
	} else {
		for (hlen = n; hlen > 0 && s[hlen - 1] != ':'; hlen--)
			;
		hlen = hlen == 0 ? n : hlen - 1;
		if (memchr(s, ':', hlen) != NULL)
			return -1;	/* an IPv6 literal needs brackets */
	}
	if (hlen + 1 >= n) {
		if (need_port)
			return -1;
		port = defport;
	}
	for (i = hlen + 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || i - hlen > 5)
			return -1;
		port = port * 10 + (uint32_t)(s[i] - '0');
	}
	if ((port == 0 && (need_port || hlen + 1 < n)) || port > 65535)
		return -1;
	if (socks_host_parse(s, hlen, dst) == -1)
		return -1;
	dst->port = (uint16_t)port;
	return 0;
}

int
http_hostport_parse(const uint8_t *s, size_t n, struct gk_host *out)
{
	if (hostport(s, n, false, 0, out) == -1) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

/* http://authority[/path][?query] */
static enum http_status
absolute_form(const uint8_t *buf, struct http_request *out, size_t skip,
    uint16_t defport)
{
	const uint8_t *t = buf + out->target.off;
	size_t n = out->target.len, a;

	if (memchr(t, '#', n) != NULL)
		return HTTP_INVALID;
	for (a = skip; a < n && t[a] != '/' && t[a] != '?'; a++)
		;
	if (memchr(t + skip, '@', a - skip) != NULL)
		return HTTP_INVALID;	/* userinfo: not in http(s) URIs */
	out->authority.off = out->target.off + skip;
	out->authority.len = a - skip;
	out->path.off = out->target.off + a;
	out->path.len = n - a;
	if (hostport(t + skip, a - skip, false, defport, &out->dst) == -1)
		return HTTP_INVALID;
	return HTTP_OK;
}

/* scheme ":" with scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
static bool
has_scheme(const uint8_t *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (t[i] == ':')
			return i > 0;
		if (!((t[i] >= 'a' && t[i] <= 'z') ||
		    (t[i] >= 'A' && t[i] <= 'Z') || (i > 0 &&
		    ((t[i] >= '0' && t[i] <= '9') || t[i] == '+' ||
		    t[i] == '-' || t[i] == '.'))))
			return false;
	}
	return false;
}

static enum http_status
target_parse(const uint8_t *buf, struct http_request *out)
{
	const uint8_t *t = buf + out->target.off;
	size_t n = out->target.len;

	if (out->method == HTTP_METHOD_CONNECT) {
		out->authority = out->target;
		if (hostport(t, n, true, 0, &out->dst) == -1)
			return HTTP_INVALID;
		return HTTP_OK;
	}
	if (t[0] == '/' || (n == 1 && t[0] == '*'))
		return HTTP_NOT_PROXY_REQUEST;
	if (starts_with(t, n, "http://"))
		return absolute_form(buf, out, 7, 80);
	return has_scheme(t, n) ? HTTP_BAD_SCHEME : HTTP_INVALID;
}

enum http_status
http_parse_request(const uint8_t *buf, size_t len, struct http_request *out)
{
	enum http_status st;

	if ((st = head_parse(buf, len, out)) != HTTP_OK)
		return st;
	if ((st = target_parse(buf, out)) != HTTP_OK) {
		memset(&out->dst, 0, sizeof(out->dst));
		return st;
	}
	return HTTP_OK;
}

/* ---- Host peek ---- */

static bool
same_host(const struct gk_host *a, const struct gk_host *b)
{
	if (a->is_addr != b->is_addr)
		return false;
	if (a->is_addr)
		return gk_addr_eq(&a->addr, &b->addr);
	return strcmp(a->name, b->name) == 0;
}

/* The host a (parsed) request is for: target authority, else Host. */
static enum http_status
peek_resolve(const uint8_t *buf, struct http_request *req,
    struct gk_host *host)
{
	const struct http_header *h;
	const uint8_t *t = buf + req->target.off;
	size_t n = req->target.len;
	bool uri = true;

	if (req->method == HTTP_METHOD_CONNECT) {
		if (hostport(t, n, true, 0, &req->dst) == -1)
			return HTTP_INVALID;
	} else if (starts_with(t, n, "http://")) {
		if (absolute_form(buf, req, 7, 0) != HTTP_OK)
			return HTTP_INVALID;
	} else if (starts_with(t, n, "https://")) {
		if (absolute_form(buf, req, 8, 0) != HTTP_OK)
			return HTTP_INVALID;
	} else if (t[0] == '/' || (n == 1 && t[0] == '*'))
		uri = false;
	else
		return HTTP_INVALID;
	if (req->host_hdr < 0) {
		if (!uri)
			return req->minor == 0 ? HTTP_ABSENT : HTTP_INVALID;
		*host = req->dst;
		return HTTP_OK;
	}
	h = &req->hdr[req->host_hdr];
	if (hostport(buf + h->value.off, h->value.len, false, 0, host) == -1)
		return HTTP_INVALID;
	if (uri && (!same_host(host, &req->dst) || (host->port != 0 &&
	    req->dst.port != 0 && host->port != req->dst.port)))
		return HTTP_INVALID;
	if (uri)
		*host = req->dst;
	return HTTP_OK;
}

/* One element of an Upgrade list: protocol-name ["/" version]. */
static unsigned
upgrade_kind(const uint8_t *v, size_t n)
{
	size_t s = 0, e;

	while (s < n && (v[s] == ' ' || v[s] == '\t'))
		s++;
	for (e = s; e < n && v[e] != '/'; e++)
		;
	while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
		e--;
	if (e == s)
		return 0;		/* an empty element */
	if (span_is(v + s, e - s, "websocket"))
		return HTTP_UPGRADE_WEBSOCKET;
	if (span_is(v + s, e - s, "h2c"))
		return HTTP_UPGRADE_H2C;
	return HTTP_UPGRADE_OTHER;
}

/* What the request's Upgrade headers ask for, as HTTP_UPGRADE_* bits. */
static unsigned
upgrade_kinds(const uint8_t *buf, const struct http_request *req)
{
	const struct http_header *h;
	const uint8_t *v;
	unsigned bits = 0;
	size_t i, s, e;

	for (i = 0; i < req->nhdr; i++) {
		h = &req->hdr[i];
		if (h->kind != HTTP_H_UPGRADE)
			continue;
		v = buf + h->value.off;
		for (s = 0; s <= h->value.len; s = e + 1) {
			for (e = s; e < h->value.len && v[e] != ','; e++)
				;
			bits |= upgrade_kind(v + s, e - s);
		}
	}
	return bits;
}

enum http_status
http_peek_host(const uint8_t *buf, size_t len, struct http_host *out)
{
	struct http_request req;
	enum http_status st;
	size_t mlen;

	memset(out, 0, sizeof(*out));
	st = method_scan(buf, len, &mlen);
	if (st != HTTP_OK)
		return st == HTTP_INVALID ? HTTP_NOT_HTTP : st;
	if ((st = head_parse(buf, len, &req)) != HTTP_OK)
		return st;
	out->minor = req.minor;
	out->head_len = req.head_len;
	out->method = req.method;
	out->body = req.body;
	out->content_length = req.content_length;
	out->upgrade = upgrade_kinds(buf, &req);
	if ((st = peek_resolve(buf, &req, &out->host)) != HTTP_OK)
		memset(&out->host, 0, sizeof(out->host));
	return st;
}

/* ---- Basic credentials ---- */

static int
b64_val(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard alphabet, padding optional but correct if present. */
static int
b64_decode(const uint8_t *s, size_t n, uint8_t *dst, size_t *dlen)
{
	uint32_t acc = 0;
	size_t i, bits = 0, pad = 0;
	int v;

	*dlen = 0;
	while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
		pad++;
	if (pad > 0 && n % 4 != 0)
		return -1;
	n -= pad;
	if (n % 4 == 1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((v = b64_val(s[i])) < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dst[(*dlen)++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return 0;
}

static enum http_status
copy_cred(const uint8_t *s, size_t n, char *dst, size_t dstlen)
{
	if (dst == NULL || n >= dstlen)
		return HTTP_TOO_LONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return HTTP_OK;
}

enum http_status
http_parse_basic_auth(const uint8_t *value, size_t len, char *user,
    size_t userlen, char *pass, size_t passlen)
{
	uint8_t dec[AUTH_B64_MAX / 4 * 3];
	enum http_status st = HTTP_INVALID;
	const uint8_t *colon;
	size_t i = 5, dlen = 0;

	if (!starts_with(value, len, "basic") || len < 7 || value[5] != ' ')
		return HTTP_INVALID;
	while (i < len && value[i] == ' ')
		i++;
	while (len > i && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len - i > AUTH_B64_MAX)
		return HTTP_TOO_LONG;
	if (len == i || b64_decode(value + i, len - i, dec, &dlen) == -1)
		goto done;
	for (i = 0; i < dlen; i++) {
		if (dec[i] < 0x20 || dec[i] == 0x7f)
			goto done;
	}
	if ((colon = memchr(dec, ':', dlen)) == NULL)
		goto done;
	i = (size_t)(colon - dec);
	if ((st = copy_cred(dec, i, user, userlen)) == HTTP_OK)
		st = copy_cred(colon + 1, dlen - i - 1, pass, passlen);
done:
	explicit_bzero(dec, sizeof(dec));
	if (st != HTTP_OK) {
		if (user != NULL && userlen > 0)
			explicit_bzero(user, userlen);
		if (pass != NULL && passlen > 0)
			explicit_bzero(pass, passlen);
	}
	return st;
}

/* ---- origin-form rewrite ---- */

/* Is tok (case-insensitively) an element of the comma list v? */
static bool
list_has(const uint8_t *v, size_t n, const uint8_t *tok, size_t tlen)
{
	size_t s = 0, e;

	while (s < n) {
		for (e = s; e < n && v[e] != ','; e++)
			;
		while (s < e && (v[s] == ' ' || v[s] == '\t'))
			s++;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tlen && tlen > 0) {
			size_t k;

			for (k = 0; k < tlen && gk_lower(v[s + k]) ==
			    gk_lower(tok[k]); k++)
				;
			if (k == tlen)
				return true;
		}
		while (e < n && v[e] != ',')
			e++;
		s = e + 1;
	}
	return false;
}

bool
http_header_forwarded(const uint8_t *buf, const struct http_request *req,
    size_t i)
{
	const struct http_header *h, *c;
	size_t j;

	if (i >= req->nhdr)
		return false;
	h = &req->hdr[i];
	switch (h->kind) {
	case HTTP_H_CONTENT_LENGTH:
	case HTTP_H_TRANSFER_ENCODING:
		return true;	/* never dropped: they frame the body */
	case HTTP_H_OTHER:
		break;
	case HTTP_H_HOST:
	case HTTP_H_PROXY_AUTHORIZATION:
	case HTTP_H_PROXY_CONNECTION:
	case HTTP_H_CONNECTION:
	case HTTP_H_KEEP_ALIVE:
	case HTTP_H_TE:
	case HTTP_H_TRAILER:
	case HTTP_H_UPGRADE:
		return false;
	}
	for (j = 0; j < req->nhdr; j++) {
		c = &req->hdr[j];
		if ((c->kind == HTTP_H_CONNECTION ||
		    c->kind == HTTP_H_PROXY_CONNECTION) &&
		    list_has(buf + c->value.off, c->value.len,
		    buf + h->name.off, h->name.len))
			return false;
	}
	return true;
}

struct wr {
	uint8_t		*out;
	size_t		 len;
	size_t		 pos;
	bool		 err;
};

static void
wr_put(struct wr *w, const void *p, size_t n)
{
	if (w->err || w->len - w->pos < n) {
		w->err = true;
		return;
	}
	memcpy(w->out + w->pos, p, n);
	w->pos += n;
}

static void
wr_str(struct wr *w, const char *s)
{
	wr_put(w, s, strlen(s));
}

size_t
http_build_origin(const uint8_t *buf, const struct http_request *req,
    uint8_t *out, size_t outlen)
{
	struct wr w = { out, outlen, 0, false };
	const struct http_span *p = &req->path;
	char ver[] = " HTTP/1.0\r\n";
	size_t i, nfwd = 0;

	if (req->method == HTTP_METHOD_CONNECT || req->head_len == 0 ||
	    req->minor > 9)
		return 0;
	for (i = 0; i < req->nhdr; i++)
		nfwd += http_header_forwarded(buf, req, i);
	/* with Host and Connection added it must still be a valid head */
	if (nfwd + 2 > HTTP_MAX_HEADERS)
		return 0;
	wr_put(&w, buf + req->method_tok.off, req->method_tok.len);
	wr_str(&w, " ");
	if (p->len == 0 || buf[p->off] != '/')
		wr_str(&w, "/");
	wr_put(&w, buf + p->off, p->len);
	ver[8] = (char)('0' + req->minor);
	wr_str(&w, ver);
	wr_str(&w, "Host: ");
	wr_put(&w, buf + req->authority.off, req->authority.len);
	wr_str(&w, "\r\n");
	for (i = 0; i < req->nhdr; i++) {
		if (http_header_forwarded(buf, req, i))
			wr_put(&w, buf + req->hdr[i].line.off,
			    req->hdr[i].line.len);
	}
	wr_str(&w, "Connection: close\r\n\r\n");
	return w.err ? 0 : w.pos;
}

size_t
http_reply_text(char *buf, size_t cap, const char *status, const char *text)
{
	int n;

	n = snprintf(buf, cap, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n", status,
	    strlen(text) + 1, text);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

const char *
http_strstatus(enum http_status st)
{
	switch (st) {
	case HTTP_OK:
		return "ok";
	case HTTP_NEED_MORE:
		return "need more";
	case HTTP_INVALID:
		return "invalid";
	case HTTP_TOO_LONG:
		return "too long";
	case HTTP_BAD_SCHEME:
		return "scheme not supported";
	case HTTP_NOT_PROXY_REQUEST:
		return "not a proxy request";
	case HTTP_NOT_HTTP:
		return "not HTTP";
	case HTTP_ABSENT:
		return "no Host";
	}
	return "unknown";
}
