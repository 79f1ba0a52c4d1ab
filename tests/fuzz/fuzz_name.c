/*
 * Differential fuzzing of the host-name rule. The same bytes are handed
 * to every path that decides "is this a host name" and must get the same
 * verdict, and the same lower-case text, as gk_name_parse():
 *
 *   pattern   gk_pattern_parse(): an exact name pattern without a port
 *             (and the allowlist built from it allows the raw bytes);
 *   DNS       the bytes split at dots into a wire-format question,
 *             dns_query_parse(): name_host and the presentation text (a
 *             name no wire form can hold, with an empty or long label or
 *             over 255 wire bytes, is refused by the rule too);
 *   TLS       a minimal ClientHello with the bytes as its server name,
 *             sni_parse(): SNI_OK, or SNI_INVALID for a refused name;
 *   SOCKS5    a CONNECT request with ATYP 3, socks5_parse_request(): a
 *             name target (an address target is no name);
 *   HTTP      "CONNECT bytes:443" (http_parse_request) and "Host:
 *             bytes:443" (http_peek_host), when the bytes hold no
 *             control byte or space (those would re-frame the head).
 *
 * The rule's own invariants: an accepted text is lower case, 1..253
 * bytes, and parses back to itself.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/dns_msg.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/policy/gk_policy.h"
#include "sni/sni.h"
#include "socks/parse/socks.h"
#include "tests/fuzz/fuzz_check.h"

#define IN_MAX		1024	/* longer inputs: the rule alone */

static uint8_t	msg[IN_MAX + 128];

/* A path's verdict against the rule's. */
static void
agree(const char *path, const struct gk_name *ref, bool ref_ok, bool ok,
    const char *text)
{
	if (ok != ref_ok) {
		fprintf(stderr, "%s says %s, gk_name_parse says %s (%s)\n",
		    path, ok ? "name" : "no name", ref_ok ? "name" : "no name",
		    ref_ok ? ref->text : "refused");
		abort();
	}
	if (ok && strcmp(text, ref->text) != 0) {
		fprintf(stderr, "%s text '%s', gk_name_parse text '%s'\n",
		    path, text, ref->text);
		abort();
	}
}

static void
check_rule(const struct gk_name *ref)
{
	struct gk_name again;
	uint8_t c;
	size_t i;

	CHECK(ref->len >= 1 && ref->len <= GK_NAME_MAX);
	CHECK(strlen(ref->text) == ref->len);
	for (i = 0; i < ref->len; i++) {
		c = (uint8_t)ref->text[i];
		CHECK(c == '.' || (gk_name_char(c) && gk_lower(c) == c));
	}
	CHECK(gk_name_parse((const uint8_t *)ref->text, ref->len, &again) ==
	    GK_NAME_OK && strcmp(again.text, ref->text) == 0);
}

static void
via_pattern(const uint8_t *d, size_t n, const struct gk_name *ref,
    bool ref_ok)
{
	struct gk_allowlist *al;
	struct gk_pattern p;
	const char *pats[1];
	char text[GK_PATTERN_MAX + 1], err[512];
	bool ok;

	/* a plain exact pattern (a request rule's text is no name) */
	ok = gk_pattern_parse(d, n, &p) == GK_PAT_OK &&
	    p.kind == GK_PAT_EXACT && p.port == 0 && p.path[0] == '\0' &&
	    p.methods == 0;
	agree("pattern", ref, ref_ok, ok, p.name);
	if (!ok)
		return;
	memcpy(text, d, n);		/* accepted: n <= 254, no NUL */
	text[n] = '\0';
	pats[0] = text;
	CHECK((al = gk_allowlist_new(pats, 1, err, sizeof(err))) != NULL);
	CHECK(gk_allow_name(al, (const char *)d, n, 443));
	CHECK(gk_allow_name(al, ref->text, ref->len, 0));
	gk_allowlist_free(al);
}

/* The bytes as an uncompressed wire name; 0 if no wire form holds them. */
static size_t
dns_wire(const uint8_t *d, size_t n, uint8_t *w)
{
	size_t i, start = 0, o = 0, l;

	if (n > 0 && d[n - 1] == '.')
		n--;
	for (i = 0; n > 0 && i <= n; i++) {
		if (i < n && d[i] != '.')
			continue;
		l = i - start;
		if (l == 0 || l > DNS_MAX_LABEL || o + 1 + l + 1 > DNS_MAX_NAME)
			return 0;
		w[o++] = (uint8_t)l;
		memcpy(w + o, d + start, l);
		o += l;
		start = i + 1;
	}
	w[o++] = 0;
	return o;
}

static void
via_dns(const uint8_t *d, size_t n, const struct gk_name *ref, bool ref_ok)
{
	static const uint8_t hdr[DNS_HDR_LEN] = { 0x12, 0x34, 0x01, 0x00,
	    0x00, 0x01, 0, 0, 0, 0, 0, 0 };
	struct dns_query q;
	size_t w;

	memcpy(msg, hdr, sizeof(hdr));
	if ((w = dns_wire(d, n, msg + DNS_HDR_LEN)) == 0) {
		agree("DNS (no wire form)", ref, ref_ok, false, "");
		return;
	}
	memcpy(msg + DNS_HDR_LEN + w, "\x00\x01\x00\x01", 4);
	CHECK(dns_query_parse(msg, DNS_HDR_LEN + w + 4, &q) == DNS_OK);
	agree("DNS", ref, ref_ok, q.name_host, q.name);
}

static size_t
put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static void
via_sni(const uint8_t *d, size_t n, const struct gk_name *ref, bool ref_ok)
{
	struct sni_result r;
	enum sni_status st;
	size_t o = 9, body;

	o += put16(msg + o, 0x0303);
	memset(msg + o, 0x5a, 32);
	o += 32;
	msg[o++] = 0;				/* session id */
	o += put16(msg + o, 2);
	o += put16(msg + o, 0x1301);		/* TLS_AES_128_GCM_SHA256 */
	msg[o++] = 1;
	msg[o++] = 0;				/* null compression */
	o += put16(msg + o, n + 9);		/* extensions */
	o += put16(msg + o, 0);			/* server_name */
	o += put16(msg + o, n + 5);
	o += put16(msg + o, n + 3);		/* ServerNameList */
	msg[o++] = 0;				/* host_name */
	o += put16(msg + o, n);
	memcpy(msg + o, d, n);
	o += n;
	body = o - 9;
	memcpy(msg, "\x16\x03\x01", 3);
	put16(msg + 3, body + 4);
	msg[5] = 1;				/* ClientHello */
	msg[6] = (uint8_t)(body >> 16);
	put16(msg + 7, body);
	st = sni_parse(msg, o, &r);
	CHECK(st == SNI_OK || st == SNI_INVALID);
	agree("SNI", ref, ref_ok, st == SNI_OK, r.name);
}

static void
via_socks5(const uint8_t *d, size_t n, const struct gk_name *ref,
    bool ref_ok)
{
	struct socks5_request r;
	enum socks5_status st;

	if (n == 0 || n > 255) {
		agree("SOCKS5 (no domain of that length)", ref, ref_ok, false,
		    "");
		return;
	}
	memcpy(msg, "\x05\x01\x00\x03", 4);
	msg[4] = (uint8_t)n;
	memcpy(msg + 5, d, n);
	put16(msg + 5 + n, 443);
	st = socks5_parse_request(msg, n + 7, &r);
	if (st == SOCKS5_OK && r.dst.is_addr) {
		agree("SOCKS5 (an address)", ref, ref_ok, false, "");
		return;
	}
	agree("SOCKS5", ref, ref_ok, st == SOCKS5_OK, r.dst.name);
}

/* pre, the bytes, post, into msg (IN_MAX bytes leave room); the length. */
static size_t
frame(const char *pre, const uint8_t *d, size_t n, const char *post)
{
	size_t a = strlen(pre), b = strlen(post);

	memcpy(msg, pre, a);
	memcpy(msg + a, d, n);
	memcpy(msg + a + n, post, b);
	return a + n + b;
}

static void
via_http(const uint8_t *d, size_t n, const struct gk_name *ref, bool ref_ok)
{
	static struct http_request req;
	struct http_host h;
	enum http_status st;
	size_t i, len;

	for (i = 0; i < n; i++)
		if (d[i] <= 0x20 || d[i] == 0x7f)
			return;
	len = frame("CONNECT ", d, n, ":443 HTTP/1.1\r\n\r\n");
	st = http_parse_request(msg, len, &req);
	agree("HTTP CONNECT", ref, ref_ok,
	    st == HTTP_OK && !req.dst.is_addr, req.dst.name);
	len = frame("GET / HTTP/1.1\r\nHost: ", d, n, ":443\r\n\r\n");
	st = http_peek_host(msg, len, &h);
	agree("HTTP Host", ref, ref_ok, st == HTTP_OK && !h.host.is_addr,
	    h.host.name);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gk_name ref;
	bool ok;

	if (data == NULL)
		data = (const uint8_t *)"";
	ok = gk_name_parse(data, size, &ref) == GK_NAME_OK;
	if (ok)
		check_rule(&ref);
	if (size > IN_MAX)
		return 0;
	via_pattern(data, size, &ref, ok);
	via_dns(data, size, &ref, ok);
	via_sni(data, size, &ref, ok);
	via_socks5(data, size, &ref, ok);
	via_http(data, size, &ref, ok);
	return 0;
}
