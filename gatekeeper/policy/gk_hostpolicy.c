/*
 * gk_hostpolicy: the host policy file (gk_hostpolicy.h). The parser
 * copies the file once, cuts each directive's argument out of the copy
 * and hands the pattern texts to gk_allowlist_new(); matching and the
 * bound check are linear scans over the parsed patterns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_sha256.h"
#include "gatekeeper/policy/gk_hostpolicy.h"

#define LINE_MAX_LEN	1024	/* bytes in a line, newline aside */
#define SHOW_MAX	40	/* token bytes quoted in full */
#define SHOWN_NAME	256	/* the file's name in messages */
#define DIGEST_HEX	12	/* hex digits of the computed version */

struct hp_parse {
	char		 shown[SHOWN_NAME];	/* the file's name */
	char		*copy;		/* the file, NUL-terminated */
	const char	**deny, **allow;
	size_t		 ndeny, nallow;
	size_t		 version_line;	/* 0: no version line yet */
	struct gk_hostpolicy *out;
	char		*err;
	size_t		 errlen;
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next token at *pp (before end), or NULL at the end or a comment. */
static char *
next_token(char **pp, char *end, size_t *n)
{
	char *p = *pp, *tok;

	while (p < end && is_space(*p))
		p++;
	if (p == end || *p == '#') {
		*pp = end;
		return NULL;
	}
	tok = p;
	while (p < end && !is_space(*p))
		p++;
	*n = (size_t)(p - tok);
	*pp = p;
	return tok;
}

static int
line_err(struct hp_parse *ps, size_t lineno, const char *msg)
{
	return gk_seterr(ps->err, ps->errlen, "%s:%zu: %s", ps->shown, lineno,
	    msg);
}

static int
do_version(struct hp_parse *ps, size_t lineno, const char *v, size_t n)
{
	char msg[256], q[SHOW_MAX * 4 + 8];
	size_t i;

	if (ps->version_line != 0) {
		snprintf(msg, sizeof(msg), "a second version line (the first "
		    "is line %zu)", ps->version_line);
		return line_err(ps, lineno, msg);
	}
	if (n > GK_HOSTPOLICY_VERSION_MAX) {
		snprintf(msg, sizeof(msg), "the version is %zu characters "
		    "long; the limit is %d", n, GK_HOSTPOLICY_VERSION_MAX);
		return line_err(ps, lineno, msg);
	}
	for (i = 0; i < n; i++) {
		if ((unsigned char)v[i] <= 0x20 ||
		    (unsigned char)v[i] >= 0x7f) {
			snprintf(msg, sizeof(msg), "version '%s' is not "
			    "printable ASCII", gk_escape(v, n, SHOW_MAX, q, sizeof(q)));
			return line_err(ps, lineno, msg);
		}
	}
	memcpy(ps->out->version, v, n);
	ps->out->version[n] = '\0';
	ps->version_line = lineno;
	return 0;
}

static int
do_pattern(struct hp_parse *ps, size_t lineno, bool deny, char *s, size_t n)
{
	char msg[512];
	enum gk_pat_status st;
	struct gk_pattern p;

	st = gk_pattern_parse((const uint8_t *)s, n, &p);
	if (st != GK_PAT_OK) {
		gk_pattern_error((const uint8_t *)s, n, st, msg, sizeof(msg));
		return line_err(ps, lineno, msg);
	}
	if (p.path[0] != '\0')
		return line_err(ps, lineno, "a host policy names hosts; a "
		    "request rule (a pattern with a path) belongs in a cage's "
		    "allowlist");
	if ((deny ? ps->ndeny : ps->nallow) >= GK_ALLOWLIST_MAX) {
		snprintf(msg, sizeof(msg), "more than %d %s patterns",
		    GK_ALLOWLIST_MAX, deny ? "deny" : "allow");
		return line_err(ps, lineno, msg);
	}
	s[n] = '\0';	/* a space, '\n' or the copy's final NUL */
	if (deny)
		ps->deny[ps->ndeny++] = s;
	else
		ps->allow[ps->nallow++] = s;
	return 0;
}

static int
one_line(struct hp_parse *ps, size_t lineno, char *s, size_t n)
{
	char msg[512], q1[SHOW_MAX * 4 + 8], q2[SHOW_MAX * 4 + 8];
	char *p = s, *dir, *arg, *extra;
	size_t dn, an = 0, xn = 0;

	if (memchr(s, '\0', n) != NULL)
		return line_err(ps, lineno, "a NUL byte in the line; is it "
		    "really a policy file?");
	if (n > LINE_MAX_LEN) {
		snprintf(msg, sizeof(msg), "the line is %zu bytes long; the "
		    "limit is %d", n, LINE_MAX_LEN);
		return line_err(ps, lineno, msg);
	}
	if ((dir = next_token(&p, s + n, &dn)) == NULL)
		return 0;	/* blank or a comment */
	arg = next_token(&p, s + n, &an);
	extra = next_token(&p, s + n, &xn);
	if ((dn != 4 || memcmp(dir, "deny", 4) != 0) &&
	    (dn != 5 || memcmp(dir, "allow", 5) != 0) &&
	    (dn != 7 || memcmp(dir, "version", 7) != 0)) {
		snprintf(msg, sizeof(msg), "unknown directive '%s'; use deny "
		    "PATTERN, allow PATTERN or version STRING",
		    gk_escape(dir, dn, SHOW_MAX, q1, sizeof(q1)));
		return line_err(ps, lineno, msg);
	}
	if (arg == NULL) {
		snprintf(msg, sizeof(msg), "'%.*s' needs %s", (int)dn, dir,
		    dn == 7 ? "a STRING, as in 'version 2026-11-25.1'" :
		    "a PATTERN, as in '*.example.com'");
		return line_err(ps, lineno, msg);
	}
	if (extra != NULL) {
		snprintf(msg, sizeof(msg), "'%.*s' takes one argument; "
		    "'%s' follows '%s' (one directive per line)", (int)dn,
		    dir, gk_escape(extra, xn, SHOW_MAX, q2, sizeof(q2)),
		    gk_escape(arg, an, SHOW_MAX, q1, sizeof(q1)));
		return line_err(ps, lineno, msg);
	}
	if (dn == 7)
		return do_version(ps, lineno, arg, an);
	return do_pattern(ps, lineno, dn == 4, arg, an);
}

/* "sha256:" and the first DIGEST_HEX hex digits of the file's digest. */
static int
digest_version(struct hp_parse *ps, const uint8_t *buf, size_t len)
{
	uint8_t md[GK_SHA256_LEN];
	size_t i;
	int n;

	gk_sha256(buf, len, md);
	n = snprintf(ps->out->version, sizeof(ps->out->version), "sha256:");
	for (i = 0; i < DIGEST_HEX / 2; i++)
		snprintf(ps->out->version + n + i * 2, 3, "%02x", md[i]);
	return 0;
}

static int
scan_lines(struct hp_parse *ps, size_t len)
{
	char *nl;
	size_t pos = 0, lineno = 0, n;

	while (pos < len) {
		lineno++;
		nl = memchr(ps->copy + pos, '\n', len - pos);
		n = nl != NULL ? (size_t)(nl - (ps->copy + pos)) : len - pos;
		if (one_line(ps, lineno, ps->copy + pos, n) == -1)
			return -1;
		pos += n + (nl != NULL);
	}
	return 0;
}

static int
build_lists(struct hp_parse *ps)
{
	char msg[512];

	ps->out->deny = gk_allowlist_new(ps->deny, ps->ndeny, msg,
	    sizeof(msg));
	if (ps->out->deny == NULL)
		return gk_seterr(ps->err, ps->errlen, "%s: %s", ps->shown,
		    msg);
	if (ps->nallow == 0)
		return 0;
	ps->out->bound = gk_allowlist_new(ps->allow, ps->nallow, msg,
	    sizeof(msg));
	if (ps->out->bound == NULL)
		return gk_seterr(ps->err, ps->errlen, "%s: %s", ps->shown,
		    msg);
	return 0;
}

int
gk_hostpolicy_parse(const uint8_t *buf, size_t len, const char *name,
    struct gk_hostpolicy *out, char *err, size_t errlen)
{
	struct hp_parse ps;
	size_t lines;
	int r = -1;

	memset(out, 0, sizeof(*out));
	memset(&ps, 0, sizeof(ps));
	ps.out = out;
	ps.err = err;
	ps.errlen = errlen;
	gk_printable(name != NULL ? name : "(policy)", ps.shown,
	    sizeof(ps.shown));
	if (buf == NULL)
		len = 0;
	if (len > GK_HOSTPOLICY_MAX)
		return gk_seterr(err, errlen, "%s: larger than %d bytes; is "
		    "it really a policy file?", ps.shown, GK_HOSTPOLICY_MAX);
	lines = len / 4 + 1;	/* "deny P" and a newline: 7 bytes */
	if ((ps.copy = malloc(len + 1)) == NULL ||
	    (ps.deny = calloc(lines, sizeof(*ps.deny))) == NULL ||
	    (ps.allow = calloc(lines, sizeof(*ps.allow))) == NULL) {
		gk_seterr(err, errlen, "%s: out of memory", ps.shown);
		goto fail;
	}
	if (len > 0)
		memcpy(ps.copy, buf, len);
	ps.copy[len] = '\0';
	if (scan_lines(&ps, len) == -1 || build_lists(&ps) == -1 ||
	    (ps.version_line == 0 && digest_version(&ps, buf, len) == -1))
		goto fail;
	r = 0;
fail:
	free(ps.copy);
	free(ps.deny);
	free(ps.allow);
	if (r == -1)
		gk_hostpolicy_clear(out);
	return r;
}

void
gk_hostpolicy_clear(struct gk_hostpolicy *p)
{
	if (p == NULL)
		return;
	gk_allowlist_free(p->deny);
	gk_allowlist_free(p->bound);
	memset(p, 0, sizeof(*p));
}

/* Is name (normalized, n bytes) zone z or below it? */
static bool
name_under(const char *nm, size_t n, const char *z)
{
	size_t zn = strlen(z);

	if (n == zn)
		return memcmp(nm, z, n) == 0;
	return n > zn + 1 && nm[n - zn - 1] == '.' &&
	    memcmp(nm + n - zn, z, zn) == 0;
}

/*
 * Does deny pattern d apply on port: a connection (port != 0) is denied
 * by d on any port or on that one; a lookup (port 0) only by d on every
 * port.
 */
static bool
deny_port(const struct gk_pattern *d, uint16_t port)
{
	return d->port == 0 || d->port == port;
}

bool
gk_hostpolicy_denies_name(const struct gk_hostpolicy *p, const char *name,
    size_t len, uint16_t port)
{
	char nm[GK_NAME_MAX + 1];
	const struct gk_pattern *d;
	size_t i;
	int n;

	if (p == NULL || name == NULL ||
	    (n = gk_name_normalize(name, len, nm)) < 0)
		return false;
	for (i = 0; (d = gk_allowlist_at(p->deny, i)) != NULL; i++) {
		if (d->kind == GK_PAT_CIDR || !deny_port(d, port))
			continue;
		if (d->kind == GK_PAT_EXACT ? strcmp(nm, d->name) == 0 :
		    name_under(nm, (size_t)n, d->name))
			return true;
	}
	return false;
}

bool
gk_hostpolicy_denies_addr(const struct gk_hostpolicy *p,
    const struct gk_addr *a, uint16_t port)
{
	const struct gk_pattern *d;
	size_t i;

	if (p == NULL || a == NULL)
		return false;
	for (i = 0; (d = gk_allowlist_at(p->deny, i)) != NULL; i++) {
		if (d->kind == GK_PAT_CIDR && d->net.family == a->family &&
		    deny_port(d, port) &&
		    gk_addr_in_prefix(a, &d->net, d->prefix))
			return true;
	}
	return false;
}

/* Does bound pattern b cover everything pat allows? */
static bool
pattern_covers(const struct gk_pattern *b, const struct gk_pattern *pat)
{
	if (b->port != 0 && b->port != pat->port)
		return false;
	if ((b->kind == GK_PAT_CIDR) != (pat->kind == GK_PAT_CIDR))
		return false;
	switch (b->kind) {
	case GK_PAT_EXACT:
		return pat->kind == GK_PAT_EXACT &&
		    strcmp(b->name, pat->name) == 0;
	case GK_PAT_WILDCARD:
		return name_under(pat->name, strlen(pat->name), b->name);
	case GK_PAT_CIDR:
		return b->net.family == pat->net.family &&
		    b->prefix <= pat->prefix &&
		    gk_addr_in_prefix(&pat->net, &b->net, b->prefix);
	}
	return false;
}

bool
gk_hostpolicy_within(const struct gk_hostpolicy *p,
    const struct gk_pattern *pat)
{
	const struct gk_pattern *b;
	size_t i;

	if (p == NULL || p->bound == NULL)
		return true;
	if (pat == NULL)
		return false;
	for (i = 0; (b = gk_allowlist_at(p->bound, i)) != NULL; i++) {
		if (pattern_covers(b, pat))
			return true;
	}
	return false;
}

size_t
gk_hostpolicy_outside(const struct gk_hostpolicy *p,
    const struct gk_allowlist *al, char *buf, size_t buflen)
{
	char text[GK_PATTERN_MAX + 1];
	const struct gk_pattern *pat;
	size_t i, pos = 0, count = 0;
	int r;

	if (buflen > 0)
		buf[0] = '\0';
	for (i = 0; (pat = gk_allowlist_at(al, i)) != NULL; i++) {
		if (gk_hostpolicy_within(p, pat))
			continue;
		gk_pattern_format(pat, text, sizeof(text));
		if (pos + 1 < buflen) {
			r = snprintf(buf + pos, buflen - pos, "%s%s",
			    count > 0 ? ", " : "", text);
			if (r > 0)
				pos += (size_t)r < buflen - pos ? (size_t)r :
				    buflen - pos - 1;
		}
		count++;
	}
	return count;
}
