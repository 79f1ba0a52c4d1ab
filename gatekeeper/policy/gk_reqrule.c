/*
 * gk_reqrule: request rules, allow patterns with methods and a path
 * ("GET,HEAD github.com/acme/x"): cutting them off a pattern's text,
 * and checking a request (method, target) against the rules that cover
 * its host. Pure: no I/O, no logging, nothing allocated.
 *
 * A path glob is matched segment by segment ('/' separates them): '**'
 * as a whole segment takes any number of segments, '*' any bytes within
 * one. Both use the greedy scan with one backtrack point (the last star
 * seen), which is exact for atoms that each take one element, and costs
 * at most (pattern length) x (path length) steps.
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_reqrule.h"

#define SHOW_PATH	100	/* request path bytes quoted in a why */
#define SHOW_METHOD	16
#define NONE		((size_t)-1)

static const struct {
	const char	*name;
	uint16_t	 bit;
} method_tab[] = {
	{ "GET", GK_METHOD_GET }, { "HEAD", GK_METHOD_HEAD },
	{ "POST", GK_METHOD_POST }, { "PUT", GK_METHOD_PUT },
	{ "PATCH", GK_METHOD_PATCH }, { "DELETE", GK_METHOD_DELETE },
	{ "OPTIONS", GK_METHOD_OPTIONS },
};
#define NMETHODS	(sizeof(method_tab) / sizeof(method_tab[0]))

WHY(why_method_empty, GK_PAT_BAD_METHOD,
    "empty method: separate methods with ',' and end them with one space, "
    "as in 'GET,HEAD example.com/**'");
WHY(why_bad_method, GK_PAT_BAD_METHOD,
    "'$S' is not a method; a rule names GET, HEAD, POST, PUT, PATCH, DELETE "
    "or OPTIONS (upper case)");
WHY(why_space, GK_PAT_BAD_CHAR,
    "white space is allowed only as one space after the methods, as in "
    "'GET,HEAD example.com/**'");
WHY(why_url, GK_PAT_BAD_CHAR,
    "this looks like a URL; give the host only, as in 'example.com:443', "
    "or the host and a path, as in 'example.com/acme/**'");
WHY(why_rule_no_host, GK_PAT_EMPTY,
    "no host name: write a rule as '[METHODS ]HOST/PATH', as in "
    "'GET example.com/**'");
WHY(why_rule_addr, GK_PAT_BAD_PATH,
    "an address cannot carry methods or a path: request rules need a host "
    "name");
WHY(why_no_path, GK_PAT_BAD_PATH,
    "methods need a path after the host, as in 'GET,HEAD example.com/**'");
WHY(why_path_query, GK_PAT_BAD_PATH,
    "a path ends at '?' or '#': queries and fragments are not matched");
WHY(why_path_char, GK_PAT_BAD_PATH,
    "'$S' is not allowed in a path (printable ASCII but space, '?' and "
    "'#'; write other bytes percent-encoded, as requests carry them)");
WHY(why_path_dstar, GK_PAT_BAD_PATH,
    "'**' must be a whole segment, as in '/acme/**' or '/a/**/b'");
WHY(why_path_dot, GK_PAT_BAD_PATH,
    "'$S' is a dot segment; a request path with one never matches, so "
    "write the path without it");

uint16_t
gk_method_bit(const char *m, size_t n)
{
	size_t i;

	for (i = 0; m != NULL && i < NMETHODS; i++) {
		if (strlen(method_tab[i].name) == n &&
		    memcmp(method_tab[i].name, m, n) == 0)
			return method_tab[i].bit;
	}
	return 0;
}

/* Append s[0..n) to buf at *pos, cut to fit, NUL-terminated. */
static void
put(char *buf, size_t len, size_t *pos, const char *s, size_t n)
{
	if (*pos + 1 >= len)
		return;
	if (n > len - *pos - 1)
		n = len - *pos - 1;
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = '\0';
}

size_t
gk_methods_format(uint16_t methods, char *buf, size_t len)
{
	size_t i, pos = 0;
	bool first = true;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; i < NMETHODS; i++) {
		if ((methods & method_tab[i].bit) == 0)
			continue;
		if (!first)
			put(buf, len, &pos, ",", 1);
		put(buf, len, &pos, method_tab[i].name,
		    strlen(method_tab[i].name));
		first = false;
	}
	return pos;
}

/* Letters and commas: what a list of methods (or a typo in one) is. */
static bool
methods_like(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (b[i] != ',' && !(b[i] >= 'A' && b[i] <= 'Z') &&
		    !(b[i] >= 'a' && b[i] <= 'z'))
			return false;
	}
	return n > 0;
}

/* "GET,HEAD" at b[0..n) into *out. */
static enum gk_pat_status
methods_parse(const uint8_t *b, size_t n, uint16_t *out, struct pat_diag *d)
{
	size_t i, start = 0;
	uint16_t bit;

	for (i = 0; i <= n; i++) {
		if (i < n && b[i] != ',')
			continue;
		if (i == start)
			return pat_fail(d, &why_method_empty, start, 0);
		bit = gk_method_bit((const char *)b + start, i - start);
		if (bit == 0)
			return pat_fail(d, &why_bad_method, start, i - start);
		*out |= bit;
		start = i + 1;
	}
	return GK_PAT_OK;
}

/* A separator of segments as a server may read one: its length or 0. */
static size_t
sep_len(const uint8_t *p, size_t n, size_t i)
{
	if (p[i] == '/' || p[i] == '\\')
		return 1;
	if (n - i >= 3 && p[i] == '%' &&
	    ((p[i + 1] == '2' && (p[i + 2] | 0x20) == 'f') ||
	    (p[i + 1] == '5' && (p[i + 2] | 0x20) == 'c')))
		return 3;
	return 0;
}

/* "." or ".." once "%2e" reads as '.' and a ';' ends the segment. */
static bool
dot_piece(const uint8_t *p, size_t n)
{
	size_t i = 0, dots = 0;

	while (i < n && p[i] != ';') {
		if (p[i] == '.')
			i++;
		else if (n - i >= 3 && p[i] == '%' && p[i + 1] == '2' &&
		    (p[i + 2] | 0x20) == 'e')
			i += 3;
		else
			return false;
		if (++dots > 2)
			return false;
	}
	return dots > 0;
}

/* The first dot segment of p[0..n): true with its span. */
static bool
find_dot_segment(const uint8_t *p, size_t n, size_t *off, size_t *len)
{
	size_t i = 0, start = 0, k;

	for (;;) {
		k = i < n ? sep_len(p, n, i) : 1;
		if (k == 0) {
			i++;
			continue;
		}
		if (dot_piece(p + start, i - start)) {
			*off = start;
			*len = i - start;
			return true;
		}
		if (i >= n)
			return false;
		i += k;
		start = i;
	}
}

/* A rule's path glob at b[off..len), which starts with '/'. */
static enum gk_pat_status
path_check(const uint8_t *b, size_t off, size_t len, struct pat_diag *d)
{
	const uint8_t *slash;
	size_t i, s, e, doff, dlen;

	for (i = off; i < len; i++) {
		if (b[i] == '?' || b[i] == '#')
			return pat_fail(d, &why_path_query, i, len - i);
		if (b[i] <= 0x20 || b[i] >= 0x7f)
			return pat_fail(d, &why_path_char, i, 1);
	}
	for (s = off + 1; s <= len; s = e + 1) {
		slash = memchr(b + s, '/', len - s);
		e = slash != NULL ? (size_t)(slash - b) : len;
		for (i = s; e - s != 2 && i + 1 < e; i++) {
			if (b[i] == '*' && b[i + 1] == '*')
				return pat_fail(d, &why_path_dstar, s, e - s);
		}
	}
	if (find_dot_segment(b + off, len - off, &doff, &dlen))
		return pat_fail(d, &why_path_dot, off + doff, dlen);
	return GK_PAT_OK;
}

/* Digits and dots, a digit first: what only an IPv4 address is. */
static bool
v4_like(const uint8_t *s, size_t n)
{
	size_t i;

	if (n == 0 || s[0] < '0' || s[0] > '9')
		return false;
	for (i = 0; i < n; i++)
		if (s[i] != '.' && (s[i] < '0' || s[i] > '9'))
			return false;
	return true;
}

/*
 * Where the path starts in b[start..len) (len: no path); *addr: the host
 * part is an address, whose '/' is a prefix ("10.0.0.0/8"): a path
 * follows a port or a second '/'.
 */
static size_t
find_path(const uint8_t *b, size_t len, size_t start, bool *addr)
{
	const uint8_t *r = b + start, *p;
	size_t n = len - start, s1, c;

	*addr = r[0] == '[';
	if (*addr) {	/* "[ADDR]:PORT/PATH"; "[ADDR]/P" is a mistake */
		if ((p = memchr(r, ']', n)) == NULL || p + 1 == r + n ||
		    p[1] != ':' ||
		    (p = memchr(p, '/', n - (size_t)(p - r))) == NULL)
			return len;
		return (size_t)(p - b);
	}
	p = memchr(r, '/', n);
	s1 = p != NULL ? (size_t)(p - r) : n;
	p = memchr(r, ':', s1);
	c = p != NULL ? (size_t)(p - r) : s1;
	if (p != NULL && memchr(p + 1, ':', s1 - c - 1) != NULL) {
		*addr = true;	/* an IPv6 address without brackets */
		return len;
	}
	if (!v4_like(r, c))
		return start + s1;
	*addr = true;
	if (c < s1 && s1 < n)
		return start + s1;
	if (s1 < n && (p = memchr(r + s1 + 1, '/', n - s1 - 1)) != NULL)
		return (size_t)(p - b);
	return len;
}

enum gk_pat_status
gk_rule_split(const uint8_t *b, size_t len, struct gk_pattern *out,
    size_t *hoff, size_t *hlen, struct pat_diag *d)
{
	const uint8_t *sp = memchr(b, ' ', len);
	size_t start = 0, path;
	enum gk_pat_status st;
	bool addr;

	if (sp != NULL && methods_like(b, (size_t)(sp - b))) {
		start = (size_t)(sp - b) + 1;
		st = methods_parse(b, start - 1, &out->methods, d);
		if (st != GK_PAT_OK)
			return st;
		if ((sp = memchr(b + start, ' ', len - start)) != NULL)
			return pat_fail(d, &why_space, (size_t)(sp - b), 1);
		if (start == len)
			return pat_fail(d, &why_rule_no_host, start, 0);
	}
	path = find_path(b, len, start, &addr);
	if (path > start && path + 1 < len && b[path - 1] == ':' &&
	    b[path + 1] == '/')
		return pat_fail(d, &why_url, path - 1, 3);
	if (addr && (path < len || out->methods != 0))
		return pat_fail(d, &why_rule_addr, start, len - start);
	if (path == len && out->methods != 0)
		return pat_fail(d, &why_no_path, 0, len);
	if (path == start)
		return pat_fail(d, &why_rule_no_host, start, 0);
	if (path < len) {
		if ((st = path_check(b, path, len, d)) != GK_PAT_OK)
			return st;
		if (len - path > GK_PATH_MAX)	/* not with GK_PATTERN_MAX */
			return pat_fail(d, &why_path_char, path, 1);
		memcpy(out->path, b + path, len - path);
		out->path[len - path] = '\0';
	}
	*hoff = start;
	*hlen = path - start;
	return GK_PAT_OK;
}

/* Glob g[0..gn) ('*': any bytes) against one segment s[0..sn). */
static bool
seg_match(const char *g, size_t gn, const char *s, size_t sn)
{
	size_t gi = 0, si = 0, star = NONE, mark = 0;

	while (si < sn) {
		if (gi < gn && g[gi] == '*') {
			star = gi++;
			mark = si;
		} else if (gi < gn && g[gi] == s[si]) {
			gi++;
			si++;
		} else if (star != NONE) {
			gi = star + 1;
			si = ++mark;
		} else
			return false;
	}
	while (gi < gn && g[gi] == '*')
		gi++;
	return gi == gn;
}

/* End of the segment at i of s[0..n): the next '/' or n. */
static size_t
seg_end(const char *s, size_t n, size_t i)
{
	const char *e = memchr(s + i, '/', n - i);

	return e != NULL ? (size_t)(e - s) : n;
}

static bool
is_dstar(const char *g, size_t n)
{
	return n == 2 && g[0] == '*' && g[1] == '*';
}

bool
gk_path_match(const char *glob, const char *path, size_t n)
{
	size_t gn, gp = 0, pp = 0, ge, pe, star = NONE, mark = 0;
	const char *g;

	if (glob == NULL || path == NULL || glob[0] != '/' || n == 0 ||
	    path[0] != '/')
		return false;
	g = glob + 1;	/* segments after the leading '/' */
	gn = strlen(g);
	path++;
	n--;
	while (pp <= n) {	/* a segment of the path is left */
		ge = gp <= gn ? seg_end(g, gn, gp) : 0;
		if (gp <= gn && is_dstar(g + gp, ge - gp)) {
			star = gp = ge + 1;
			mark = pp;
			continue;
		}
		pe = seg_end(path, n, pp);
		if (gp <= gn && seg_match(g + gp, ge - gp, path + pp,
		    pe - pp)) {
			gp = ge + 1;
			pp = pe + 1;
		} else if (star != NONE) {
			gp = star;
			pp = mark = seg_end(path, n, mark) + 1;
		} else
			return false;
	}
	for (; gp <= gn; gp = ge + 1) {	/* only '**' may be left */
		ge = seg_end(g, gn, gp);
		if (!is_dstar(g + gp, ge - gp))
			return false;
	}
	return true;
}

/* Does rule p cover normalized nm[0..n) on port (0: any)? */
static bool
rule_covers(const struct gk_pattern *p, const char *nm, size_t n,
    uint16_t port)
{
	return p->path[0] != '\0' &&
	    (p->port == 0 || port == 0 || p->port == port) &&
	    gk_pat_covers(p, strlen(p->name), nm, n);
}

bool
gk_allow_inspects(const struct gk_allowlist *al, const char *name,
    size_t len, uint16_t port)
{
	return gk_allow_name_by(al, name, len, port, true);
}

/* A request being checked: its method and the path of its target. */
struct req {
	const char	*method, *path;
	size_t		 mlen, plen;
	uint16_t	 bit;		/* GK_METHOD_*, 0: another token */
	char		 host[GK_NAME_MAX + 8];	/* name[:port], for a why */
};

static bool
is_token(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    (s[i] != '\0' && strchr("!#$%&'*+-.^_`|~", s[i]) != NULL)))
			return false;
	}
	return n > 0;
}

bool
gk_target_path(const char *t, size_t n, const char **path, size_t *plen)
{
	size_t i = 0, s;

	if (n == 0)
		return false;
	if (t[0] != '/') {
		while (i < n && ((t[i] | 0x20) >= 'a' && (t[i] | 0x20) <= 'z'))
			i++;	/* a scheme: http, https */
		if (i == 0 || n - i < 3 || memcmp(t + i, "://", 3) != 0)
			return false;
		for (i += 3; i < n && t[i] != '/' && t[i] != '?' &&
		    t[i] != '#'; i++)
			;
	}
	for (s = i; i < n && t[i] != '?' && t[i] != '#'; i++)
		;
	*path = i > s ? t + s : "/";
	*plen = i > s ? i - s : 1;
	return true;
}

/* Why a request's own text never matches a rule, or NULL. */
static const char *
req_refused(const struct req *r)
{
	size_t i, off, len;

	if (!is_token(r->method, r->mlen))
		return "the method is not an HTTP token";
	for (i = 0; i < r->plen; i++) {
		if ((uint8_t)r->path[i] <= 0x20 || (uint8_t)r->path[i] >= 0x7f)
			return "a request path with a control, space or "
			    "non-ASCII byte never matches a rule";
	}
	if (find_dot_segment((const uint8_t *)r->path, r->plen, &off, &len))
		return "a request path with a '.' or '..' segment never "
		    "matches a rule";
	return NULL;
}

/* Bytes the literal start of glob g shares with path p[0..n). */
static size_t
shared_prefix(const char *g, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && g[i] != '\0' && g[i] != '*' && g[i] == p[i]; i++)
		;
	return i;
}

static void
why_closest(const struct req *r, const struct gk_pattern *best, int score,
    char *why, size_t whylen)
{
	char text[GK_PATTERN_MAX + 1], m[SHOW_METHOD * 4 + 8];
	char path[SHOW_PATH * 4 + 8], ms[64];

	gk_escape(r->method, r->mlen, SHOW_METHOD, m, sizeof(m));
	gk_escape(r->path, r->plen, SHOW_PATH, path, sizeof(path));
	if (best == NULL) {
		snprintf(why, whylen, "%s %s: no request rule covers %s", m,
		    path, r->host);
		return;
	}
	gk_pattern_format(best, text, sizeof(text));
	gk_methods_format(best->methods, ms, sizeof(ms));
	if (score == 2)
		snprintf(why, whylen, "%s %s: no rule for %s allows it; the "
		    "closest, '%s', allows %s only", m, path, r->host, text,
		    ms);
	else
		snprintf(why, whylen, "%s %s: no rule for %s allows it; the "
		    "closest, '%s', does not match the path%s", m, path,
		    r->host, text, score == 1 ? "" : " nor the method");
}

/* Scan the rules covering nm: true on a match, else the closest. */
static bool
req_match(const struct gk_allowlist *al, const char *nm, size_t n,
    uint16_t port, const struct req *r, char *why, size_t whylen)
{
	const struct gk_pattern *p, *best = NULL;
	size_t i, k, bestk = 0;
	int score, bests = -1;
	bool pathok, mok;

	for (i = 0; i < gk_allowlist_len(al); i++) {
		p = gk_allowlist_at(al, i);
		if (!rule_covers(p, nm, n, port))
			continue;
		mok = p->methods == 0 || (p->methods & r->bit) != 0;
		pathok = gk_path_match(p->path, r->path, r->plen);
		if (mok && pathok)
			return true;
		score = (pathok ? 2 : 0) + (mok ? 1 : 0);
		k = shared_prefix(p->path, r->path, r->plen);
		if (score > bests || (score == bests && k > bestk)) {
			best = p;
			bests = score;
			bestk = k;
		}
	}
	why_closest(r, best, bests, why, whylen);
	return false;
}

bool
gk_allow_request(const struct gk_allowlist *al, const char *name, size_t len,
    uint16_t port, const char *method, size_t mlen, const char *target,
    size_t tlen, char *why, size_t whylen)
{
	char nm[GK_NAME_MAX + 1], q[SHOW_PATH * 4 + 8];
	char m[SHOW_METHOD * 4 + 8];
	struct req r;
	const char *bad;
	int n;

	if (whylen > 0)
		why[0] = '\0';
	memset(&r, 0, sizeof(r));
	if (al == NULL || name == NULL || method == NULL || target == NULL ||
	    (n = gk_name_normalize(name, len, nm)) < 0) {
		snprintf(why, whylen, "not a host name, or no allowlist");
		return false;
	}
	if (port != 0)
		snprintf(r.host, sizeof(r.host), "%s:%u", nm, (unsigned)port);
	else
		snprintf(r.host, sizeof(r.host), "%s", nm);
	r.method = method;
	r.mlen = mlen;
	r.bit = gk_method_bit(method, mlen);
	if (!gk_target_path(target, tlen, &r.path, &r.plen)) {
		snprintf(why, whylen, "request target '%s' has no path",
		    gk_escape(target, tlen, SHOW_PATH, q, sizeof(q)));
		return false;
	}
	if ((bad = req_refused(&r)) != NULL) {
		snprintf(why, whylen, "%s %s: %s",
		    gk_escape(method, mlen, SHOW_METHOD, m, sizeof(m)),
		    gk_escape(r.path, r.plen, SHOW_PATH, q, sizeof(q)), bad);
		return false;
	}
	return req_match(al, nm, (size_t)n, port, &r, why, whylen);
}
