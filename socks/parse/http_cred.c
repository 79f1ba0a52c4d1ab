/*
 * http_cred: placeholders to secrets in a brokered request head, and the
 * marks of placeholders where they must not be (http_cred.h).
 *
 * The head is first checked the way the tunnel's follower checks one
 * (http_follow(): strict lines, no obs-fold, one head ending at len), so
 * the walk over its lines here trusts the structure. Leaks are looked
 * for before anything is written. The substitution scans each span once
 * from left to right with one memmem() cursor per credential, so a
 * secret that holds a placeholder is never rewritten again.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"
#include "socks/parse/http_cred.h"
#include "socks/parse/socks.h"

/* A Basic token68 is at most a head's size: its decoding fits this. */
#define BASIC_DEC_MAX	(HTTP_HEAD_MAX / 4 * 3)

static const char b64_abc[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A head already checked, and the credentials to apply to it. */
struct head {
	const uint8_t		*buf;
	size_t			 len;
	size_t			 start;	/* the request line (after blanks) */
	const struct http_cred	*creds;
	size_t			 n;
};

/* Where the rewritten bytes go: out, base64-encoded into out, or only
 * counted. */
struct sink {
	uint8_t		*out;
	size_t		 cap;
	size_t		 pos;
	bool		 err;		/* out of room */
	bool		 count;		/* write nothing */
	bool		 b64;		/* encode what is put */
	uint8_t		 grp[3];	/* b64: bytes not yet encoded */
	size_t		 ngrp;
};

/* A header line's name and its value without the OWS around it. */
struct field {
	bool		 auth;		/* (Proxy-)Authorization */
	size_t		 vs;		/* value start */
	size_t		 ve;		/* value end */
};

/* ---- marks ---- */

size_t
http_cred_mark(size_t placeholder_len, size_t *mark_len)
{
	*mark_len = placeholder_len < HTTP_CRED_MARK_MAX ? placeholder_len :
	    HTTP_CRED_MARK_MAX;
	return placeholder_len - *mark_len;
}

static bool
cred_usable(const struct http_cred *c)
{
	return c->placeholder != NULL && c->placeholder_len > 0;
}

/* Does s[0..n) hold p[0..m) (ASCII case-insensitive)? m > 0. */
static bool
holds_ci(const uint8_t *s, size_t n, const uint8_t *p, size_t m)
{
	uint8_t first = gk_lower(p[0]);
	size_t i, k;

	if (m > n)
		return false;
	for (i = 0; i <= n - m; i++) {
		if (gk_lower(s[i]) != first)
			continue;
		for (k = 1; k < m && gk_lower(s[i + k]) == gk_lower(p[k]); k++)
			;
		if (k == m)
			return true;
	}
	return false;
}

/* The lowest index of creds (the unbound ones only, with unbound_only)
 * whose mark s[0..n) holds, or -1. */
static ssize_t
find_mark(const uint8_t *s, size_t n, const struct http_cred *creds,
    size_t nc, bool unbound_only)
{
	size_t i, off, ml;

	for (i = 0; i < nc; i++) {
		if (!cred_usable(&creds[i]) || (unbound_only && creds[i].bound))
			continue;
		off = http_cred_mark(creds[i].placeholder_len, &ml);
		if (holds_ci(s, n, creds[i].placeholder + off, ml))
			return (ssize_t)i;
	}
	return -1;
}

ssize_t
http_cred_find(const uint8_t *buf, size_t len, const struct http_cred *creds,
    size_t n)
{
	if (buf == NULL || creds == NULL)
		return -1;
	return find_mark(buf, len, creds, n, false);
}

/* ---- base64 (RFC 4648 4) ---- */

static int
b64_sextet(uint8_t c)
{
	const char *p;

	if (c == '\0' || (p = strchr(b64_abc, c)) == NULL)
		return -1;
	return (int)(p - b64_abc);
}

/*
 * Standard base64: whole quads, the last one padded with one or two '=',
 * or ending in two or three characters unpadded. false if s[0..n) is not
 * that or its decoding would not fit cap.
 */
static bool
b64_decode(const uint8_t *s, size_t n, uint8_t *dst, size_t cap,
    size_t *dlen)
{
	size_t end = n, i, j, rest;
	uint32_t quad;
	int v;

	if (n % 4 == 0 && n > 0 && s[n - 1] == '=')
		end -= s[n - 2] == '=' ? 2 : 1;
	if (end == 0 || end % 4 == 1)
		return false;
	rest = end % 4;
	*dlen = end / 4 * 3 + (rest > 0 ? rest - 1 : 0);
	if (*dlen > cap)
		return false;
	for (i = 0, j = 0; i < end; i += 4) {
		quad = 0;
		for (rest = 0; rest < 4; rest++) {
			v = i + rest < end ? b64_sextet(s[i + rest]) : 0;
			if (v < 0)
				return false;
			quad = quad << 6 | (uint32_t)v;
		}
		for (rest = 0; rest < 3 && j < *dlen; rest++)
			dst[j++] = (uint8_t)(quad >> (16 - 8 * rest));
	}
	return true;
}

/* ---- output ---- */

static void
put_raw(struct sink *k, const void *p, size_t n)
{
	if (k->count || n == 0)
		return;
	if (k->err || k->cap - k->pos < n) {
		k->err = true;
		return;
	}
	memcpy(k->out + k->pos, p, n);
	k->pos += n;
}

/* Encode the held group: 4 characters, '='-padded if it is short. */
static void
b64_group(struct sink *k)
{
	char q[4];
	uint32_t w;

	w = (uint32_t)k->grp[0] << 16 | (uint32_t)k->grp[1] << 8 | k->grp[2];
	q[0] = b64_abc[w >> 18 & 63];
	q[1] = b64_abc[w >> 12 & 63];
	q[2] = k->ngrp > 1 ? b64_abc[w >> 6 & 63] : '=';
	q[3] = k->ngrp > 2 ? b64_abc[w & 63] : '=';
	put_raw(k, q, sizeof(q));
	explicit_bzero(k->grp, sizeof(k->grp));
	k->ngrp = 0;
}

static void
put(struct sink *k, const uint8_t *p, size_t n)
{
	size_t i;

	if (!k->b64) {
		put_raw(k, p, n);
		return;
	}
	for (i = 0; i < n; i++) {
		k->grp[k->ngrp++] = p[i];
		if (k->ngrp == 3)
			b64_group(k);
	}
}

/* End base64 output: the last group, padded. */
static void
b64_end(struct sink *k)
{
	if (k->ngrp > 0)
		b64_group(k);
	k->b64 = false;
}

/* ---- substitution ---- */

/* The offset of c's placeholder in s[from..n), or n if it is not there. */
static size_t
next_at(const uint8_t *s, size_t n, size_t from, const struct http_cred *c)
{
	const uint8_t *p;

	if (from >= n || n - from < c->placeholder_len)
		return n;
	p = memmem(s + from, n - from, c->placeholder, c->placeholder_len);
	return p == NULL ? n : (size_t)(p - s);
}

/*
 * Put s[0..n), each bound credential's placeholder replaced by its
 * secret, to k. Returns the number of substitutions.
 */
static unsigned
subst(const uint8_t *s, size_t n, const struct http_cred *creds, size_t nc,
    struct sink *k)
{
	size_t next[HTTP_CRED_MAX], pos = 0, i, best;
	unsigned count = 0;

	for (i = 0; i < nc; i++)
		next[i] = creds[i].bound && cred_usable(&creds[i]) ?
		    next_at(s, n, 0, &creds[i]) : n;
	for (;;) {
		best = nc;
		for (i = 0; i < nc; i++) {
			if (next[i] < pos)	/* overlapped a substitution */
				next[i] = next_at(s, n, pos, &creds[i]);
			if (next[i] < n && (best == nc || next[i] < next[best] ||
			    (next[i] == next[best] && creds[i].placeholder_len >
			    creds[best].placeholder_len)))
				best = i;
		}
		if (best == nc)
			break;
		put(k, s + pos, next[best] - pos);
		put(k, creds[best].secret, creds[best].secret_len);
		pos = next[best] + creds[best].placeholder_len;
		count++;
	}
	put(k, s + pos, n - pos);
	return count;
}

/* ---- the head ---- */

/* Is head[0..len) one head http_follow() passes whole? *start: after the
 * blank bytes it skips. */
static bool
head_check(const uint8_t *head, size_t len, size_t *start)
{
	struct http_follow f;
	struct http_follow_out o;

	if (head == NULL || len == 0 || len > HTTP_BLANK_MAX + HTTP_HEAD_MAX)
		return false;
	http_follow_init(&f);
	if (http_follow(&f, head, len, &o) != HTTP_FOLLOW_HEAD || o.pass != len)
		return false;
	*start = o.blank;
	return true;
}

/* Could each bound secret stand in a head? */
static bool
secrets_check(const struct http_cred *creds, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!creds[i].bound || !cred_usable(&creds[i]))
			continue;
		if (creds[i].secret == NULL && creds[i].secret_len > 0)
			return false;
		for (j = 0; j < creds[i].secret_len; j++) {
			if (creds[i].secret[j] < 0x21 ||
			    creds[i].secret[j] > 0x7e)
				return false;
		}
	}
	return true;
}

/* The CR of the line at pos (a checked head has one). */
static size_t
line_cr(const struct head *h, size_t pos)
{
	const uint8_t *cr = memchr(h->buf + pos, '\r', h->len - pos);

	return cr == NULL ? h->len : (size_t)(cr - h->buf);
}

static bool
name_is(const uint8_t *p, size_t n, const char *s)
{
	size_t i;

	if (strlen(s) != n)
		return false;
	for (i = 0; i < n && gk_lower(p[i]) == (uint8_t)s[i]; i++)
		;
	return i == n;
}

/* The header line [pos, eol): name ":" OWS value OWS. */
static void
field_split(const struct head *h, size_t pos, size_t eol, struct field *f)
{
	const uint8_t *b = h->buf;
	const uint8_t *colon = memchr(b + pos, ':', eol - pos);
	size_t c = colon == NULL ? eol : (size_t)(colon - b);

	f->auth = name_is(b + pos, c - pos, "authorization") ||
	    name_is(b + pos, c - pos, "proxy-authorization");
	for (f->vs = c < eol ? c + 1 : eol; f->vs < eol &&
	    (b[f->vs] == ' ' || b[f->vs] == '\t'); f->vs++)
		;
	for (f->ve = eol; f->ve > f->vs && (b[f->ve - 1] == ' ' ||
	    b[f->ve - 1] == '\t'); f->ve--)
		;
}

/*
 * A value "Basic" 1*SP token68 whose token decodes into dec: *tok is the
 * token's offset in v.
 */
static bool
basic_decode(const uint8_t *v, size_t n, size_t *tok, uint8_t *dec,
    size_t *dlen)
{
	size_t t = 5;

	if (n < 7 || !name_is(v, 5, "basic") || v[5] != ' ')
		return false;
	while (t < n && v[t] == ' ')
		t++;
	*tok = t;
	return b64_decode(v + t, n - t, dec, BASIC_DEC_MAX, dlen);
}

/* The lowest index of an unbound credential whose mark the head holds,
 * raw or in a Basic value; or -1. */
static ssize_t
head_leak(const struct head *h, uint8_t *dec)
{
	struct field f;
	size_t pos, eol, tok, dlen;
	ssize_t i;

	if ((i = find_mark(h->buf, h->len, h->creds, h->n, true)) >= 0)
		return i;
	pos = line_cr(h, h->start) + 2;
	for (; (eol = line_cr(h, pos)) > pos; pos = eol + 2) {
		field_split(h, pos, eol, &f);
		if (!f.auth || !basic_decode(h->buf + f.vs, f.ve - f.vs, &tok,
		    dec, &dlen))
			continue;
		if ((i = find_mark(dec, dlen, h->creds, h->n, true)) >= 0)
			return i;
	}
	return -1;
}

/* One header line [pos, eol) and its CRLF, rewritten, to k. */
static unsigned
header_emit(const struct head *h, size_t pos, size_t eol, struct sink *k,
    uint8_t *dec)
{
	struct sink probe = { .count = true };
	const uint8_t *b = h->buf;
	struct field f;
	size_t tok, dlen;
	unsigned count;

	field_split(h, pos, eol, &f);
	put(k, b + pos, f.vs - pos);
	if (f.auth && basic_decode(b + f.vs, f.ve - f.vs, &tok, dec, &dlen) &&
	    subst(dec, dlen, h->creds, h->n, &probe) > 0) {
		put(k, b + f.vs, tok);
		k->b64 = true;
		count = subst(dec, dlen, h->creds, h->n, k);
		b64_end(k);
	} else
		count = subst(b + f.vs, f.ve - f.vs, h->creds, h->n, k);
	put(k, b + f.ve, eol + 2 - f.ve);
	return count;
}

/* The whole head, rewritten, to k. */
static unsigned
head_emit(const struct head *h, struct sink *k, uint8_t *dec)
{
	const uint8_t *b = h->buf, *sp;
	size_t pos, eol, t, tend;
	unsigned count;

	/* method SP target SP "HTTP/1.x" CRLF (http_follow checked it) */
	eol = line_cr(h, h->start);
	sp = memchr(b + h->start, ' ', eol - h->start);
	t = sp == NULL ? eol : (size_t)(sp - b) + 1;
	tend = eol - t >= 9 ? eol - 9 : t;
	put(k, b, t);
	count = subst(b + t, tend - t, h->creds, h->n, k);
	put(k, b + tend, eol + 2 - tend);
	for (pos = eol + 2; (eol = line_cr(h, pos)) > pos; pos = eol + 2)
		count += header_emit(h, pos, eol, k, dec);
	put(k, b + pos, h->len - pos);	/* the empty line */
	return count;
}

enum http_cred_status
http_cred_rewrite(const uint8_t *head, size_t len,
    const struct http_cred *creds, size_t n, uint8_t *out, size_t outcap,
    size_t *out_len, size_t *which, unsigned *replaced)
{
	uint8_t dec[BASIC_DEC_MAX];
	struct head h = { head, len, 0, creds, n };
	struct sink k = { .out = out, .cap = out == NULL ? 0 : outcap };
	enum http_cred_status st = HTTP_CRED_OK;
	unsigned count;
	ssize_t leak;

	*out_len = 0;
	if (replaced != NULL)
		*replaced = 0;
	if (n > HTTP_CRED_MAX || (n > 0 && creds == NULL) ||
	    !head_check(head, len, &h.start) || !secrets_check(creds, n))
		return HTTP_CRED_INVALID;
	if ((leak = head_leak(&h, dec)) >= 0) {
		if (which != NULL)
			*which = (size_t)leak;
		st = HTTP_CRED_LEAK;
	} else {
		count = head_emit(&h, &k, dec);
		if (k.err) {
			if (k.pos > 0)
				explicit_bzero(out, k.pos);
			st = HTTP_CRED_TOO_LONG;
		} else {
			*out_len = k.pos;
			if (replaced != NULL)
				*replaced = count;
		}
	}
	explicit_bzero(dec, sizeof(dec));
	return st;
}

const char *
http_cred_strstatus(enum http_cred_status st)
{
	switch (st) {
	case HTTP_CRED_OK:
		return "ok";
	case HTTP_CRED_LEAK:
		return "credential leak";
	case HTTP_CRED_TOO_LONG:
		return "rewritten head too long";
	case HTTP_CRED_INVALID:
		return "invalid";
	}
	return "unknown";
}
