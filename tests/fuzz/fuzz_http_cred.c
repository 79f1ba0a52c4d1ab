/*
 * Fuzz the credential broker's head rewrite (socks/parse/http_cred.c).
 * The input: a selector byte (which credentials, whether the fuzzed one
 * is bound, how much room out has), the fuzzed credential's placeholder
 * (a length byte, then its bytes; its secret is each byte ^ 1), then the
 * head. Invariants:
 *   - without credentials, rewriting is the identity on the heads
 *     http_follow passes whole, and INVALID on every other input;
 *   - nothing is written past outcap, *out_len <= outcap;
 *   - LEAK names an unbound credential whose mark http_cred_find sees in
 *     the head or a decoded Basic value holds; no LEAK (OK, TOO_LONG)
 *     means no unbound mark in the raw head;
 *   - OK: nothing replaced means the same bytes; the lines are as many,
 *     the same up to the first ':' (the request line: ' '), and the
 *     output ends in CRLF CRLF (it need not be a head http_follow
 *     passes: a secret in Host can make its label too long);
 *   - TOO_LONG: with room enough the same call says OK, longer than the
 *     room was; a smaller room that is enough gives the same bytes;
 *   - http_cred_find returns the lowest index whose mark is there.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "socks/parse/http_cred.h"
#include "socks/parse/socks.h"
#include "tests/fuzz/fuzz_check.h"

#define GUARD	64
#define BIG	(4 * HTTP_HEAD_MAX)

static uint8_t big[BIG], small[BIG + GUARD], dec[HTTP_HEAD_MAX];
static uint8_t fz_ph[255], fz_sec[255];

static const struct http_cred fixed[] = {
	{ "A", (const uint8_t *)"ghp_0123456789abcdefghijABCDEFGHIJ012345", 40,
	  (const uint8_t *)"ghp_realSECRETrealSECRETrealSECRETreal00", 40,
	  true },
	{ "B", (const uint8_t *)"abcd1234", 8,
	  (const uint8_t *)"abcd1234abcd1234", 16, true },
	{ "U", (const uint8_t *)"glpat-UnboundPlaceholder0123", 28,
	  (const uint8_t *)"glpat-UnboundSecretValue0123", 28, false },
};

static uint8_t
lc(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* The mark of c in s[0..n), ASCII case-insensitive: a naive search. */
static bool
has_mark(const uint8_t *s, size_t n, const struct http_cred *c)
{
	size_t off, ml, i, k;

	if (c->placeholder_len == 0)
		return false;
	off = http_cred_mark(c->placeholder_len, &ml);
	CHECK(ml >= 1 && ml <= HTTP_CRED_MARK_MAX && off + ml ==
	    c->placeholder_len);
	for (i = 0; i + ml <= n; i++) {
		for (k = 0; k < ml && lc(s[i + k]) ==
		    lc(c->placeholder[off + k]); k++)
			;
		if (k == ml)
			return true;
	}
	return false;
}

/* Lenient base64: the alphabet's characters up to the first other. */
static size_t
b64_lenient(const uint8_t *s, size_t n, uint8_t *d)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789+/";
	const char *p;
	uint32_t acc = 0;
	size_t i, bits = 0, o = 0;

	for (i = 0; i < n && s[i] != '\0' && (p = strchr(abc, s[i])) != NULL;
	    i++) {
		acc = acc << 6 | (uint32_t)(p - abc);
		if ((bits += 6) >= 8) {
			bits -= 8;
			d[o++] = (uint8_t)(acc >> bits);
		}
	}
	return o;
}

/* Does a (Proxy-)Authorization: Basic value of the head hold c's mark? */
static bool
basic_has_mark(const uint8_t *h, size_t n, const struct http_cred *c)
{
	const uint8_t *eol;
	size_t pos = 0, e, v;

	while (pos < n && (eol = memchr(h + pos, '\r', n - pos)) != NULL) {
		e = (size_t)(eol - h);
		for (v = pos; v < e && h[v] != ':'; v++)
			;
		if (v < e && ((v - pos == 13 && strncasecmp((const char *)h +
		    pos, "authorization", 13) == 0) || (v - pos == 19 &&
		    strncasecmp((const char *)h + pos, "proxy-authorization",
		    19) == 0))) {
			for (v++; v < e && (h[v] == ' ' || h[v] == '\t'); v++)
				;
			if (e - v > 6 && strncasecmp((const char *)h + v,
			    "basic ", 6) == 0) {
				for (v += 6; v < e && h[v] == ' '; v++)
					;
				if (has_mark(dec, b64_lenient(h + v, e - v,
				    dec), c))
					return true;
			}
		}
		pos = e + 2;
	}
	return false;
}

static bool
follow_whole(const uint8_t *h, size_t n)
{
	struct http_follow f;
	struct http_follow_out o;

	http_follow_init(&f);
	return http_follow(&f, h, n, &o) == HTTP_FOLLOW_HEAD && o.pass == n;
}

static size_t
crlf_count(const uint8_t *h, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i + 1 < n; i++)
		c += h[i] == '\r' && h[i + 1] == '\n';
	return c;
}

/* Line by line, the bytes through the first ':' (the request line: the
 * first ' ') are the same: names and line structure untouched. */
static void
check_names(const uint8_t *h, size_t n, const uint8_t *o, size_t on)
{
	const uint8_t *a, *b;
	size_t i = 0, j = 0, k;
	uint8_t stop = ' ';

	while (i < n && j < on) {
		a = memchr(h + i, '\r', n - i);
		b = memchr(o + j, '\r', on - j);
		CHECK((a == NULL) == (b == NULL));
		if (a == NULL)
			break;
		for (k = 0; i + k < (size_t)(a - h) && h[i + k] != stop; k++)
			CHECK(j + k < on && o[j + k] == h[i + k]);
		for (k = i; k < (size_t)(a - h) && strchr("\n \t", h[k]) !=
		    NULL; k++)
			;
		if (k < (size_t)(a - h))	/* not only blank bytes */
			stop = ':';
		i = (size_t)(a - h) + 2;
		j = (size_t)(b - o) + 2;
	}
}

static bool
bad_bound_secret(const struct http_cred *set, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!set[i].bound || set[i].placeholder_len == 0)
			continue;
		for (j = 0; j < set[i].secret_len; j++)
			if (set[i].secret[j] < 0x21 || set[i].secret[j] > 0x7e)
				return true;
	}
	return false;
}

static void
check_find(const uint8_t *h, size_t n, const struct http_cred *set,
    size_t nc)
{
	ssize_t r = http_cred_find(h, n, set, nc);
	size_t i;

	CHECK(r >= -1 && r < (ssize_t)nc);
	for (i = 0; i < (r < 0 ? nc : (size_t)r); i++)
		CHECK(!has_mark(h, n, &set[i]));
	if (r >= 0)
		CHECK(has_mark(h, n, &set[r]));
}

/* Without credentials: the identity, or INVALID. */
static bool
check_identity(const uint8_t *h, size_t n)
{
	enum http_cred_status st;
	bool valid = follow_whole(h, n);
	unsigned rep = 7;
	size_t len;

	st = http_cred_rewrite(h, n, NULL, 0, big, sizeof(big), &len, NULL,
	    &rep);
	CHECK(st == (valid ? HTTP_CRED_OK : HTTP_CRED_INVALID));
	CHECK(rep == 0);
	if (valid)
		CHECK(len == n && memcmp(big, h, n) == 0);
	else
		CHECK(len == 0);
	return valid;
}

static void
check_leak(const uint8_t *h, size_t n, const struct http_cred *set,
    size_t nc, enum http_cred_status st, size_t which)
{
	size_t i;

	if (st == HTTP_CRED_LEAK) {
		CHECK(which < nc && !set[which].bound);
		CHECK(http_cred_find(h, n, &set[which], 1) == 0 ||
		    basic_has_mark(h, n, &set[which]));
		return;
	}
	if (st == HTTP_CRED_INVALID)
		return;
	for (i = 0; i < nc; i++)
		if (!set[i].bound)
			CHECK(http_cred_find(h, n, &set[i], 1) == -1);
}

static void
check_set(const uint8_t *h, size_t n, const struct http_cred *set,
    size_t nc, size_t cap, bool valid)
{
	enum http_cred_status st, st2;
	size_t len, len2, which = 99, i;
	unsigned rep, rep2;

	memset(small, 0xa5, sizeof(small));
	st = http_cred_rewrite(h, n, set, nc, small, cap, &len, &which, &rep);
	for (i = cap; i < cap + GUARD; i++)
		CHECK(small[i] == 0xa5);
	CHECK(len <= cap);
	CHECK(st != HTTP_CRED_LEAK || which < nc);
	if (!valid || bad_bound_secret(set, nc))
		CHECK(st == HTTP_CRED_INVALID);
	else
		CHECK(st != HTTP_CRED_INVALID);
	check_leak(h, n, set, nc, st, which);
	if (st != HTTP_CRED_OK && st != HTTP_CRED_TOO_LONG)
		return;
	st2 = http_cred_rewrite(h, n, set, nc, big, sizeof(big), &len2, NULL,
	    &rep2);
	CHECK(st2 == HTTP_CRED_OK);
	if (st == HTTP_CRED_TOO_LONG) {
		CHECK(len == 0 && len2 > cap);
		return;
	}
	CHECK(len == len2 && rep == rep2 && memcmp(small, big, len) == 0);
	if (rep == 0)
		CHECK(len == n && memcmp(small, h, n) == 0);
	CHECK(crlf_count(small, len) == crlf_count(h, n));
	CHECK(len >= 4 && memcmp(small + len - 4, "\r\n\r\n", 4) == 0);
	check_names(h, n, small, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_cred set[4];
	size_t nc = 0, p, i, cap;
	uint8_t sel;
	bool valid;

	if (size < 2)
		return 0;
	sel = data[0];
	p = data[1] < size - 2 ? data[1] : size - 2;
	memcpy(fz_ph, data + 2, p);
	for (i = 0; i < p; i++)
		fz_sec[i] = fz_ph[i] ^ 1;
	data += 2 + p;
	size -= 2 + p;
	for (i = 0; i < 3; i++)
		if (sel & (1u << i))
			set[nc++] = fixed[i];
	if (sel & 0x08)
		set[nc++] = (struct http_cred){ "F", fz_ph, p, fz_sec, p,
		    (sel & 0x10) != 0 };
	cap = (sel >> 5) == 0 ? BIG : size + (sel >> 5) * 8 - 24;
	if (cap > BIG)
		cap = 0;
	valid = check_identity(data, size);
	check_find(data, size, set, nc);
	check_set(data, size, set, nc, cap, valid);
	return 0;
}
