/*
 * gk_policy: allowlist patterns (DESIGN.md, "Allowlist patterns") and
 * matching of names and addresses against an allowlist.
 *
 * The parser is pure apart from the Public Suffix List, which is loaded
 * once (lazily, or by gk_policy_psl_load() at startup) and then only read.
 * Matching allocates nothing: a linear scan comparing lengths first.
 */
#include <arpa/inet.h>
#include <libpsl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_reqrule.h"

#define SHOW_MAX	100	/* pattern bytes quoted in full */
#define IS_DIGIT(c)	((c) >= '0' && (c) <= '9')

WHY(why_ok, GK_PAT_OK, "no error");
WHY(why_empty, GK_PAT_EMPTY, "the pattern is empty");
WHY(why_no_host, GK_PAT_EMPTY, "no host name or address before the port");
WHY(why_too_long, GK_PAT_TOO_LONG,
    "the pattern is $N characters long; the limit is 1024");
WHY(why_non_ascii, GK_PAT_NON_ASCII,
    "non-ASCII byte $S; write internationalized names in punycode (xn--...), "
    "as printed by 'idn2 NAME'");
WHY(why_leading_dot, GK_PAT_EMPTY_LABEL,
    "empty label: a name cannot start with a dot");
WHY(why_double_dot, GK_PAT_EMPTY_LABEL, "empty label (two dots in a row)");
WHY(why_trailing_dots, GK_PAT_EMPTY_LABEL,
    "empty label: only one trailing dot is allowed");
WHY(why_label_long, GK_PAT_LABEL_TOO_LONG,
    "label '$S' is $N characters long; the limit is 63");
WHY(why_name_long, GK_PAT_NAME_TOO_LONG,
    "the name is $N characters long; the limit is 253");
WHY(why_bad_char, GK_PAT_BAD_CHAR,
    "'$S' is not allowed in a host name (letters, digits, '-', '_', '.')");
WHY(why_bad_wildcard, GK_PAT_BAD_WILDCARD,
    "'*' is only allowed as a whole leading label, as in '*.example.com'");
WHY(why_bare_wildcard, GK_PAT_BARE_WILDCARD,
    "a bare wildcard would allow every name; list the names you need");
WHY(why_bad_port, GK_PAT_BAD_PORT, "port '$S' is not a number from 1 to 65535");
WHY(why_not_v4, GK_PAT_BAD_CIDR,
    "'$S' is not a host name nor a valid IPv4 address");
WHY(why_not_v6, GK_PAT_BAD_CIDR, "'$S' is not a valid IPv6 address");
WHY(why_numeric_tld, GK_PAT_BAD_CIDR,
    "'$S' is not a host name nor a valid IP address");
WHY(why_unbracketed, GK_PAT_BAD_CIDR,
    "IPv6 addresses must be in brackets, as in '[2001:db8::1]:443'");
WHY(why_v4_bracketed, GK_PAT_BAD_CIDR,
    "brackets are for IPv6 only; write IPv4 addresses without them");
WHY(why_no_close, GK_PAT_BAD_CIDR, "missing ']' after the IPv6 address");
WHY(why_after_close, GK_PAT_BAD_CIDR,
    "only ':PORT' may follow ']'; put the prefix inside: '[2001:db8::/32]'");
WHY(why_prefix, GK_PAT_BAD_CIDR, "prefix '$S' is not a number from 0 to $B");
WHY(why_host_bits, GK_PAT_BAD_CIDR, "host bits are set; the network is '$T'");
WHY(why_public_suffix, GK_PAT_PUBLIC_SUFFIX,
    "$P is a public suffix, where anyone can register names; list the exact "
    "names you need (e.g. 'example.$P' or '*.example.$P')");
WHY(why_no_psl, GK_PAT_PUBLIC_SUFFIX,
    "the public suffix list could not be loaded, so wildcards are refused; "
    "list the exact names you need");

struct gk_allowlist {
	size_t			 n;
	struct gk_pattern	*pat;
	uint16_t		*namelen;	/* strlen(pat[i].name) */
};

/* A bounded string builder with snprintf-like truncation. */
struct sbuf {
	char	*buf;
	size_t	 size;
	size_t	 pos;	/* bytes written, excluding the NUL */
};

static const psl_ctx_t	*psl_ctx;	/* NULL: fail closed */
static psl_ctx_t	*psl_owned;
static bool		 psl_tried;

static const char *const pat_status_str[] = {
	[GK_PAT_OK] = "ok", [GK_PAT_EMPTY] = "empty",
	[GK_PAT_TOO_LONG] = "too long", [GK_PAT_EMPTY_LABEL] = "empty label",
	[GK_PAT_LABEL_TOO_LONG] = "label too long",
	[GK_PAT_NAME_TOO_LONG] = "name too long",
	[GK_PAT_NON_ASCII] = "non-ASCII",
	[GK_PAT_BAD_CHAR] = "bad character",
	[GK_PAT_BAD_WILDCARD] = "bad wildcard",
	[GK_PAT_BARE_WILDCARD] = "bare wildcard",
	[GK_PAT_BAD_PORT] = "bad port", [GK_PAT_BAD_CIDR] = "bad address",
	[GK_PAT_PUBLIC_SUFFIX] = "public suffix",
	[GK_PAT_BAD_METHOD] = "bad method", [GK_PAT_BAD_PATH] = "bad path",
};

int
gk_policy_psl_load(const char *path)
{
	psl_ctx_t *ctx;

	ctx = path != NULL ? psl_load_file(path) : psl_latest(NULL);
	if (ctx != NULL && psl_suffix_count(ctx) == 0) {
		psl_free(ctx);
		ctx = NULL;
	}
	psl_free(psl_owned);
	psl_owned = ctx;
	psl_ctx = ctx;
	if (psl_ctx == NULL && path == NULL && psl_builtin() != NULL &&
	    psl_suffix_count(psl_builtin()) != 0)
		psl_ctx = psl_builtin();
	psl_tried = true;
	return psl_ctx != NULL ? 0 : -1;
}

const char *
gk_pat_strstatus(enum gk_pat_status st)
{
	if ((size_t)st >= sizeof(pat_status_str) / sizeof(pat_status_str[0]))
		return "unknown";
	return pat_status_str[st];
}

/* Decimal digits only, no sign, value in [lo, hi]. */
static bool
parse_uint(const uint8_t *s, size_t n, size_t maxdigits, unsigned lo,
    unsigned hi, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (n == 0 || n > maxdigits)
		return false;
	for (i = 0; i < n; i++) {
		if (!IS_DIGIT(s[i]))
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * Check and lower-case a host name (one trailing dot allowed) into out,
 * with gk_name_parse() (the rule every path shares) and its failures
 * turned into messages. `base` is the offset of s in the pattern.
 */
static enum gk_pat_status
name_scan(const uint8_t *s, size_t n, char out[GK_NAME_MAX + 1],
    struct pat_diag *d, size_t base)
{
	struct gk_name nm;
	size_t off, stripped = n > 0 && s[n - 1] == '.' ? n - 1 : n;
	const struct pat_why *why;

	switch (gk_name_parse(s, n, &nm)) {
	case GK_NAME_OK:
		memcpy(out, nm.text, nm.len + 1);
		return GK_PAT_OK;
	case GK_NAME_EMPTY:
		why = &why_leading_dot;
		break;
	case GK_NAME_EMPTY_LABEL:
		off = nm.err_off;
		why = off == 0 ? &why_leading_dot : off == stripped ?
		    &why_trailing_dots : &why_double_dot;
		break;
	case GK_NAME_LABEL_TOO_LONG:
		why = &why_label_long;
		break;
	case GK_NAME_TOO_LONG:
		why = &why_name_long;
		break;
	case GK_NAME_NON_ASCII:
		why = &why_non_ascii;
		break;
	case GK_NAME_NUMERIC:
		why = &why_numeric_tld;
		break;
	case GK_NAME_BAD_CHAR:
	default:
		why = &why_bad_char;
		break;
	}
	return pat_fail(d, why, base + nm.err_off, nm.err_len);
}

static void
addr_mask(struct gk_addr *a, unsigned prefix)
{
	size_t i, n = gk_addr_len(a);

	for (i = 0; i < n; i++) {
		if (prefix >= 8) {
			prefix -= 8;
			continue;
		}
		a->bytes[i] &= (uint8_t)(0xff00 >> prefix);
		prefix = 0;
	}
}

/* "ADDR" or "ADDR/PREFIX" at s (offset base) of the given family. */
static enum gk_pat_status
parse_cidr(const uint8_t *s, size_t n, size_t base, int family,
    struct gk_pattern *out, struct pat_diag *d)
{
	char text[GK_ADDR_STRLEN];
	const uint8_t *slash;
	unsigned maxbits = family == AF_INET ? 32 : 128, prefix = maxbits;
	const struct pat_why *bad;
	size_t alen;

	d->net.family = (sa_family_t)family;
	slash = memchr(s, '/', n);
	alen = slash != NULL ? (size_t)(slash - s) : n;
	bad = family == AF_INET ? &why_not_v4 : &why_not_v6;
	if (alen == 0 || alen >= sizeof(text))
		return pat_fail(d, bad, base, alen);
	memcpy(text, s, alen);
	text[alen] = '\0';
	if (inet_pton(family, text, out->net.bytes) != 1) {
		if (family == AF_INET6 &&
		    inet_pton(AF_INET, text, out->net.bytes) == 1)
			return pat_fail(d, &why_v4_bracketed, base, alen);
		return pat_fail(d, bad, base, alen);
	}
	out->net.family = (sa_family_t)family;
	if (slash != NULL && !parse_uint(slash + 1, n - alen - 1, 3, 0,
	    maxbits, &prefix))
		return pat_fail(d, &why_prefix, base + alen + 1, n - alen - 1);
	d->net = out->net;
	d->prefix = prefix;
	addr_mask(&d->net, prefix);
	if (!gk_addr_eq(&d->net, &out->net))
		return pat_fail(d, &why_host_bits, base, n);
	out->kind = GK_PAT_CIDR;
	out->prefix = (uint8_t)prefix;
	return GK_PAT_OK;
}

static enum gk_pat_status
parse_port(const uint8_t *s, size_t n, size_t base, uint16_t *port,
    struct pat_diag *d)
{
	unsigned v;

	if (!parse_uint(s, n, 5, 1, 65535, &v))
		return pat_fail(d, &why_bad_port, base, n);
	*port = (uint16_t)v;
	return GK_PAT_OK;
}

/* "[ADDR]", "[ADDR/P]", either followed by ":PORT". */
static enum gk_pat_status
parse_bracketed(const uint8_t *b, size_t len, struct gk_pattern *out,
    struct pat_diag *d)
{
	const uint8_t *close;
	size_t c;

	close = memchr(b, ']', len);
	if (close == NULL)
		return pat_fail(d, &why_no_close, 0, len);
	c = (size_t)(close - b);
	if (c + 1 < len) {
		if (b[c + 1] != ':')
			return pat_fail(d, &why_after_close, c + 1,
			    len - c - 1);
		if (parse_port(b + c + 2, len - c - 2, c + 2, &out->port,
		    d) != GK_PAT_OK)
			return GK_PAT_BAD_PORT;
	}
	return parse_cidr(b + 1, c - 1, 1, AF_INET6, out, d);
}

/* "name", "*.name" or "**.name" (no port). */
static enum gk_pat_status
parse_name_pattern(const uint8_t *b, size_t n, struct gk_pattern *out,
    struct pat_diag *d)
{
	enum gk_pat_status st;
	size_t i, skip = 0;

	if (n >= 2 && b[0] == '*' && b[1] == '*')
		skip = 2;
	else if (b[0] == '*')
		skip = 1;
	if (skip > 0) {
		if (n == skip || (n == skip + 1 && b[skip] == '.'))
			return pat_fail(d, &why_bare_wildcard, 0, n);
		if (b[skip] != '.')
			return pat_fail(d, &why_bad_wildcard, 0, n);
		skip++;
	}
	for (i = skip; i < n; i++) {
		if (b[i] == '*')
			return pat_fail(d, &why_bad_wildcard, i, 1);
	}
	st = name_scan(b + skip, n - skip, out->name, d, skip);
	if (st != GK_PAT_OK)
		return st;
	if (skip == 0) {
		out->kind = GK_PAT_EXACT;
		return GK_PAT_OK;
	}
	out->kind = GK_PAT_WILDCARD;
	if (!psl_tried)
		(void)gk_policy_psl_load(NULL);
	if (psl_ctx == NULL)
		return pat_fail(d, &why_no_psl, skip, n - skip);
	if (psl_is_public_suffix(psl_ctx, out->name))
		return pat_fail(d, &why_public_suffix, skip, n - skip);
	return GK_PAT_OK;
}

/* The host part: a name pattern or an address, either with ":PORT". */
static enum gk_pat_status
host_parse(const uint8_t *b, size_t len, struct gk_pattern *out,
    struct pat_diag *d)
{
	size_t i, host, ncolon = 0, v4 = 0;

	for (i = 0; i < len; i++) {
		if (b[i] >= 0x80)
			return pat_fail(d, &why_non_ascii, i, 1);
	}
	for (i = 0, host = len; i < len; i++) {
		if (b[i] < 0x20 || b[i] == 0x7f)
			return pat_fail(d, &why_bad_char, i, 1);
		if (b[i] == ':' && ncolon++ == 0)
			host = i;
		if (ncolon == 0 && (IS_DIGIT(b[i]) || b[i] == '.' ||
		    b[i] == '/'))
			v4++;	/* only these: an IPv4 address or CIDR */
	}
	if (b[0] == '[')
		return parse_bracketed(b, len, out, d);
	if (ncolon > 1)
		return pat_fail(d, &why_unbracketed, 0, len);
	if (host < len && parse_port(b + host + 1, len - host - 1, host + 1,
	    &out->port, d) != GK_PAT_OK)
		return GK_PAT_BAD_PORT;
	if (host == 0)
		return pat_fail(d, &why_no_host, 0, 0);
	if (v4 == host && IS_DIGIT(b[0]))
		return parse_cidr(b, host, 0, AF_INET, out, d);
	return parse_name_pattern(b, host, out, d);
}

static enum gk_pat_status
pat_parse(const uint8_t *b, size_t len, struct gk_pattern *out,
    struct pat_diag *d)
{
	enum gk_pat_status st;
	size_t hoff, hlen;

	memset(out, 0, sizeof(*out));
	memset(d, 0, sizeof(*d));
	d->why = &why_ok;
	if (len == 0)
		return pat_fail(d, &why_empty, 0, 0);
	if (len > GK_PATTERN_MAX)
		return pat_fail(d, &why_too_long, 0, len);
	if ((st = gk_rule_split(b, len, out, &hoff, &hlen, d)) != GK_PAT_OK)
		return st;
	if ((st = host_parse(b + hoff, hlen, out, d)) != GK_PAT_OK)
		d->off += hoff;
	return st;
}

enum gk_pat_status
gk_pattern_parse(const uint8_t *buf, size_t len, struct gk_pattern *out)
{
	struct pat_diag d;
	enum gk_pat_status st;

	st = pat_parse(buf, len, out, &d);
	if (st != GK_PAT_OK)
		memset(out, 0, sizeof(*out));
	return st;
}

static void
sb_init(struct sbuf *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->size = size;
	sb->pos = 0;
	if (size > 0)
		buf[0] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (sb->pos + 1 >= sb->size)
		return;
	va_start(ap, fmt);
	r = vsnprintf(sb->buf + sb->pos, sb->size - sb->pos, fmt, ap);
	va_end(ap);
	if (r > 0)
		sb->pos += (size_t)r < sb->size - sb->pos ? (size_t)r :
		    sb->size - sb->pos - 1;
}

static void
sb_putc(struct sbuf *sb, char c)
{
	if (sb->pos + 1 < sb->size) {
		sb->buf[sb->pos++] = c;
		sb->buf[sb->pos] = '\0';
	}
}

/* Quote-safe text (gk_escape): at most max (<= SHOW_MAX) bytes of it. */
static void
sb_escape(struct sbuf *sb, const uint8_t *s, size_t n, size_t max)
{
	char q[SHOW_MAX * 4 + 8];

	sb_printf(sb, "%s", gk_escape(s, n, max, q, sizeof(q)));
}

static void
render(struct sbuf *sb, const char *t, const uint8_t *b,
    const struct pat_diag *d, const struct gk_pattern *p)
{
	char net[GK_ADDR_STRLEN];
	bool v6 = d->net.family == AF_INET6;

	for (; *t != '\0'; t++) {
		if (*t != '$') {
			sb_putc(sb, *t);
			continue;
		}
		switch (*++t) {
		case 'S':
			sb_escape(sb, b + d->off, d->n, 40);
			break;
		case 'N':
			sb_printf(sb, "%zu", d->n);
			break;
		case 'B':
			sb_printf(sb, "%u", v6 ? 128 : 32);
			break;
		case 'T':
			gk_addr_ntop(&d->net, net, sizeof(net));
			sb_printf(sb, "%s%s/%u%s", v6 ? "[" : "", net,
			    d->prefix, v6 ? "]" : "");
			break;
		default:	/* 'P' */
			sb_printf(sb, "%s", p->name);
			break;
		}
	}
}

size_t
gk_pattern_error(const uint8_t *buf, size_t len, enum gk_pat_status st,
    char *msg, size_t msglen)
{
	struct gk_pattern p;
	struct pat_diag d;
	struct sbuf sb;

	sb_init(&sb, msg, msglen);
	if (buf == NULL)
		len = 0;
	sb_printf(&sb, "invalid pattern '");
	sb_escape(&sb, buf, len, SHOW_MAX);
	sb_printf(&sb, "': ");
	if (pat_parse(buf, len, &p, &d) == st)
		render(&sb, d.why->msg, buf, &d, &p);
	else	/* not the status of this text: no details */
		sb_printf(&sb, "%s", gk_pat_strstatus(st));
	return sb.pos;
}

size_t
gk_pattern_format(const struct gk_pattern *p, char *buf, size_t len)
{
	char addr[GK_ADDR_STRLEN], pfx[8] = "", port[8] = "";
	bool v6 = p->net.family == AF_INET6;
	struct sbuf sb;

	sb_init(&sb, buf, len);
	if (p->port != 0)
		snprintf(port, sizeof(port), ":%u", p->port);
	if (p->methods != 0) {
		sb.pos = gk_methods_format(p->methods, buf, len);
		sb_putc(&sb, ' ');
	}
	switch (p->kind) {
	case GK_PAT_EXACT:
	case GK_PAT_WILDCARD:
		sb_printf(&sb, "%s%s%s", p->kind == GK_PAT_WILDCARD ? "*." : "",
		    p->name, port);
		break;
	case GK_PAT_CIDR:
		gk_addr_ntop(&p->net, addr, sizeof(addr));
		if (p->prefix != gk_addr_len(&p->net) * 8)
			snprintf(pfx, sizeof(pfx), "/%u", p->prefix);
		sb_printf(&sb, "%s%s%s%s%s", v6 ? "[" : "", addr, pfx,
		    v6 ? "]" : "", port);
		break;
	}
	sb_printf(&sb, "%s", p->path);
	return sb.pos;
}

bool
gk_pattern_equal(const struct gk_pattern *a, const struct gk_pattern *b)
{
	if (a->kind != b->kind || a->port != b->port ||
	    a->methods != b->methods || strcmp(a->path, b->path) != 0)
		return false;
	if (a->kind == GK_PAT_CIDR)
		return a->prefix == b->prefix && gk_addr_eq(&a->net, &b->net);
	return strcmp(a->name, b->name) == 0;
}

/* Append p unless already present; false if the list is full. */
static bool
allowlist_add(struct gk_allowlist *al, const struct gk_pattern *p)
{
	size_t i, n = strlen(p->name);

	for (i = 0; i < al->n; i++) {
		if (al->namelen[i] == n && gk_pattern_equal(&al->pat[i], p))
			return true;
	}
	if (al->n == GK_ALLOWLIST_MAX)
		return false;
	al->pat[al->n] = *p;
	al->namelen[al->n++] = (uint16_t)n;
	return true;
}

struct gk_allowlist *
gk_allowlist_edit(const struct gk_allowlist *al,
    bool (*drop)(const struct gk_pattern *, void *), void *arg,
    const char *const *add, size_t nadd, char *err, size_t errlen)
{
	struct gk_allowlist *na;
	struct gk_pattern p;
	enum gk_pat_status st;
	size_t i, n = gk_allowlist_len(al), cap;
	const char *s;

	if (errlen > 0)
		err[0] = '\0';
	cap = n + nadd < GK_ALLOWLIST_MAX ? n + nadd : GK_ALLOWLIST_MAX;
	if ((na = calloc(1, sizeof(*na))) == NULL ||
	    (na->pat = calloc(cap + 1, sizeof(*na->pat))) == NULL ||
	    (na->namelen = calloc(cap + 1, sizeof(*na->namelen))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (drop == NULL || !drop(&al->pat[i], arg))
			(void)allowlist_add(na, &al->pat[i]);
	for (i = 0; i < nadd; i++) {
		s = add[i] != NULL ? add[i] : "";
		st = gk_pattern_parse((const uint8_t *)s, strlen(s), &p);
		if (st != GK_PAT_OK) {
			gk_pattern_error((const uint8_t *)s, strlen(s), st,
			    err, errlen);
			goto fail;
		}
		if (!allowlist_add(na, &p)) {
			snprintf(err, errlen, "too many patterns: the limit "
			    "is %d", GK_ALLOWLIST_MAX);
			goto fail;
		}
	}
	return na;
fail:
	gk_allowlist_free(na);
	return NULL;
}

struct gk_allowlist *
gk_allowlist_new(const char *const *patterns, size_t n, char *err,
    size_t errlen)
{
	return gk_allowlist_edit(NULL, NULL, NULL, patterns, n, err, errlen);
}

void
gk_allowlist_free(struct gk_allowlist *al)
{
	if (al == NULL)
		return;
	free(al->pat);
	free(al->namelen);
	free(al);
}

size_t
gk_allowlist_len(const struct gk_allowlist *al)
{
	return al != NULL ? al->n : 0;
}

const struct gk_pattern *
gk_allowlist_at(const struct gk_allowlist *al, size_t i)
{
	return al != NULL && i < al->n ? &al->pat[i] : NULL;
}

bool
gk_pat_covers(const struct gk_pattern *p, size_t plen, const char *nm,
    size_t n)
{
	if (p->kind == GK_PAT_CIDR)
		return false;
	if (n == plen)
		return memcmp(nm, p->name, n) == 0;
	if (p->kind != GK_PAT_WILDCARD || n <= plen + 1)
		return false;
	return nm[n - plen - 1] == '.' &&
	    memcmp(nm + n - plen, p->name, plen) == 0;
}

static bool
port_ok(uint16_t want, uint16_t port)
{
	return want == 0 || port == 0 || want == port;
}

bool
gk_allow_name_by(const struct gk_allowlist *al, const char *name, size_t len,
    uint16_t port, bool rules)
{
	char nm[GK_NAME_MAX + 1];
	size_t i;
	int n;

	if (al == NULL || name == NULL ||
	    (n = gk_name_normalize(name, len, nm)) < 0)
		return false;
	for (i = 0; i < al->n; i++) {
		if ((!rules || al->pat[i].path[0] != '\0') &&
		    port_ok(al->pat[i].port, port) &&
		    gk_pat_covers(&al->pat[i], al->namelen[i], nm, (size_t)n))
			return true;
	}
	return false;
}

bool
gk_allow_name(const struct gk_allowlist *al, const char *name, size_t len,
    uint16_t port)
{
	return gk_allow_name_by(al, name, len, port, false);
}

bool
gk_allow_addr(const struct gk_allowlist *al, const struct gk_addr *a,
    uint16_t port)
{
	const struct gk_pattern *p;
	size_t i;

	for (i = 0; al != NULL && a != NULL && i < al->n; i++) {
		p = &al->pat[i];
		if (p->kind == GK_PAT_CIDR && p->net.family == a->family &&
		    port_ok(p->port, port) &&
		    gk_addr_in_prefix(a, &p->net, p->prefix))
			return true;
	}
	return false;
}

bool
gk_allow_has_cidr(const struct gk_allowlist *al)
{
	size_t i;

	for (i = 0; i < gk_allowlist_len(al); i++)
		if (gk_allowlist_at(al, i)->kind == GK_PAT_CIDR)
			return true;
	return false;
}

bool
gk_allow_addr_cidr(const struct gk_allowlist *al, const struct gk_addr *a)
{
	return gk_allow_addr(al, a, 0);
}

/* Whole labels two names share, counted from the right. */
static size_t
shared_labels(const char *a, size_t an, const char *b, size_t bn)
{
	size_t k = 0;

	while (an > 0 && bn > 0 && a[an - 1] == b[bn - 1]) {
		an--;
		bn--;
		if ((an == 0 || a[an - 1] == '.') &&
		    (bn == 0 || b[bn - 1] == '.'))
			k++;
	}
	return k;
}

/* Nothing covers nm on this port: name the closest pattern. */
static void
explain_denied(struct sbuf *sb, const struct gk_allowlist *al,
    const char *nm, size_t n, size_t wrong, size_t best, size_t k)
{
	char text[GK_PATTERN_MAX + 1];
	struct gk_pattern p;
	size_t plen, lp, ln;

	if (wrong < al->n) {
		p = al->pat[wrong];
		p.port = p.methods = 0;
		p.path[0] = '\0';
		gk_pattern_format(&p, text, sizeof(text));
		sb_printf(sb, "'%s' covers the name but only on port %u",
		    text, al->pat[wrong].port);
		return;
	}
	p = al->pat[best < al->n ? best : 0];
	p.methods = 0;
	p.path[0] = '\0';
	plen = strlen(p.name);
	lp = shared_labels(p.name, plen, p.name, plen);
	ln = shared_labels(nm, n, nm, n);
	if (k == 0 || (k < 2 && k < lp && k < ln)) {
		sb_printf(sb, "no pattern shares a domain with '%s'", nm);
		return;
	}
	gk_pattern_format(&p, text, sizeof(text));
	if (p.kind == GK_PAT_EXACT && k == lp)
		sb_printf(sb, "closest pattern '%s' is exact; '*.%s' would "
		    "cover %s", text, text, nm);
	else if (p.kind == GK_PAT_WILDCARD && k == ln)
		sb_printf(sb, "closest pattern '%s' covers only names under "
		    "%s; add '%s' to allow it", text, p.name, nm);
	else
		sb_printf(sb, "closest pattern '%s' does not cover %s; add "
		    "'%s' to allow it", text, nm, nm);
}

size_t
gk_allow_explain(const struct gk_allowlist *al, const char *name, size_t len,
    uint16_t port, char *buf, size_t buflen)
{
	char nm[GK_NAME_MAX + 1], text[GK_PATTERN_MAX + 1];
	size_t i, k, n, best = SIZE_MAX, bestk = 0, wrong = SIZE_MAX;
	struct sbuf sb;
	bool cov;
	int r;

	sb_init(&sb, buf, buflen);
	if (al == NULL || al->n == 0) {
		sb_printf(&sb, "the allowlist is empty");
		return sb.pos;
	}
	if (name == NULL || (r = gk_name_normalize(name, len, nm)) < 0) {
		sb_printf(&sb, "'");
		sb_escape(&sb, (const uint8_t *)name, name ? len : 0, SHOW_MAX);
		sb_printf(&sb, "' is not a host name (and name patterns never "
		    "match IP literals)");
		return sb.pos;
	}
	n = (size_t)r;
	for (i = 0; i < al->n; i++) {
		if (al->pat[i].kind == GK_PAT_CIDR)
			continue;
		cov = gk_pat_covers(&al->pat[i], al->namelen[i], nm, n);
		if (cov && port_ok(al->pat[i].port, port)) {
			gk_pattern_format(&al->pat[i], text, sizeof(text));
			sb_printf(&sb, "'%s' allows %s", text, nm);
			return sb.pos;
		}
		if (cov && wrong == SIZE_MAX)
			wrong = i;
		k = shared_labels(nm, n, al->pat[i].name, al->namelen[i]);
		if (k > bestk) {
			bestk = k;
			best = i;
		}
	}
	explain_denied(&sb, al, nm, n, wrong, best, bestk);
	return sb.pos;
}
