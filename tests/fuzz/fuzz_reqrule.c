/*
 * Fuzz request rules. The input is "PATTERN\nMETHOD\nTARGET" (a part
 * left out is empty). Invariants:
 *   - a parsed rule's path starts with '/', is printable ASCII without
 *     space, '?' or '#', and has no "." or ".." segment; its methods are
 *     known bits, none without a path; its canonical text re-parses to an
 *     equal pattern;
 *   - its glob matches its own text with each '*' taken out or made "z";
 *   - the rule allows names (gk_allow_name) exactly as the pattern
 *     without methods and path does, and inspects exactly those when it
 *     is a rule (its name, a name below it; its port, any, another);
 *   - gk_path_match agrees with a plain table-driven matcher on short
 *     texts (the PATTERN as a glob, and the rule's path, on the TARGET);
 *   - gk_allow_request allows only an inspected host, a method the rule
 *     names (or any), a path without control bytes or dot segments that
 *     the glob matches; its reason is empty then, else printable and
 *     within its buffer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "tests/fuzz/fuzz_check.h"

#define REF_MAX	64	/* bytes the reference matcher takes */

/* Does glob g[0..gn) ('*': any bytes) match s[0..sn)? A table. */
static bool
ref_seg(const char *g, size_t gn, const char *s, size_t sn)
{
	bool d[REF_MAX + 2][REF_MAX + 2];
	size_t i, j;

	for (i = gn + 1; i-- > 0;)
		for (j = sn + 1; j-- > 0;) {
			if (i == gn)
				d[i][j] = j == sn;
			else if (g[i] == '*')
				d[i][j] = d[i + 1][j] || (j < sn &&
				    d[i][j + 1]);
			else
				d[i][j] = j < sn && g[i] == s[j] &&
				    d[i + 1][j + 1];
		}
	return d[0][0];
}

struct segs {
	const char	*s[REF_MAX + 2];
	size_t		 n[REF_MAX + 2];
	size_t		 k;
};

/* The segments of p[0..n) after its leading '/'. */
static void
ref_split(const char *p, size_t n, struct segs *sg)
{
	size_t i, start = 1;

	sg->k = 0;
	for (i = 1; i <= n; i++) {
		if (i < n && p[i] != '/')
			continue;
		sg->s[sg->k] = p + start;
		sg->n[sg->k++] = i - start;
		start = i + 1;
	}
}

static bool
ref_match(const char *g, size_t gn, const char *p, size_t pn)
{
	bool m[REF_MAX + 3][REF_MAX + 3];
	struct segs G, P;
	size_t i, j;

	if (gn == 0 || pn == 0 || g[0] != '/' || p[0] != '/')
		return false;
	ref_split(g, gn, &G);
	ref_split(p, pn, &P);
	for (i = G.k + 1; i-- > 0;)
		for (j = P.k + 1; j-- > 0;) {
			if (i == G.k)
				m[i][j] = j == P.k;
			else if (G.n[i] == 2 && G.s[i][0] == '*' &&
			    G.s[i][1] == '*')
				m[i][j] = m[i + 1][j] || (j < P.k &&
				    m[i][j + 1]);
			else
				m[i][j] = j < P.k && ref_seg(G.s[i], G.n[i],
				    P.s[j], P.n[j]) && m[i + 1][j + 1];
		}
	return m[0][0];
}

/* gk_path_match and the reference, on a NUL-free glob of short texts. */
static void
check_glob(const char *g, size_t gn, const char *p, size_t pn)
{
	char glob[REF_MAX + 1];

	if (gn > REF_MAX || pn > REF_MAX || memchr(g, '\0', gn) != NULL)
		return;
	memcpy(glob, g, gn);
	glob[gn] = '\0';
	CHECK(gk_path_match(glob, p, pn) == ref_match(glob, gn, p, pn));
}

/* No byte a path may not hold, no "." or ".." segment. */
static bool
plain_path(const char *p, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i <= n; i++) {
		if (i < n && ((uint8_t)p[i] <= 0x20 || (uint8_t)p[i] >= 0x7f))
			return false;
		if (i < n && p[i] != '/')
			continue;
		if ((i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}

static void
check_self(const char *path)
{
	char out[GK_PATH_MAX + 1], z[GK_PATH_MAX + 1];
	size_t i, n = 0;

	for (i = 0; path[i] != '\0'; i++) {
		z[i] = path[i] == '*' ? 'z' : path[i];
		if (path[i] != '*')
			out[n++] = path[i];
	}
	CHECK(gk_path_match(path, out, n));
	CHECK(gk_path_match(path, z, i));
	CHECK(plain_path(path, i));
	for (i = 0; path[i] != '\0'; i++)
		CHECK(path[i] > 0x20 && path[i] < 0x7f && path[i] != '?' &&
		    path[i] != '#');
}

static struct gk_allowlist *
one(const struct gk_pattern *p)
{
	char text[GK_PATTERN_MAX + 1], err[512];
	const char *pats[1] = { text };
	struct gk_allowlist *al;

	gk_pattern_format(p, text, sizeof(text));
	al = gk_allowlist_new(pats, 1, err, sizeof(err));
	CHECK(al != NULL && gk_allowlist_len(al) == 1);
	CHECK(gk_pattern_equal(gk_allowlist_at(al, 0), p));
	return al;
}

/* The rule and its host part allow the same names. */
static void
check_names(const struct gk_pattern *p, struct gk_allowlist *al)
{
	struct gk_pattern h = *p;
	struct gk_allowlist *hl;
	char names[2][GK_NAME_MAX + 8];
	uint16_t ports[3] = { 0, p->port, (uint16_t)(p->port + 1) };
	size_t i, j, n;
	bool a;

	h.methods = 0;
	h.path[0] = '\0';
	hl = one(&h);
	snprintf(names[0], sizeof(names[0]), "%s", p->name);
	snprintf(names[1], sizeof(names[1]), "x.%s", p->name);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 3; j++) {
			n = strlen(names[i]);
			a = gk_allow_name(al, names[i], n, ports[j]);
			CHECK(a == gk_allow_name(hl, names[i], n, ports[j]));
			CHECK(gk_allow_inspects(al, names[i], n, ports[j]) ==
			    (a && p->path[0] != '\0'));
			CHECK(!gk_allow_inspects(hl, names[i], n, ports[j]));
		}
	gk_allowlist_free(hl);
}

static void
check_request(const struct gk_pattern *p, struct gk_allowlist *al,
    struct fuzz_field m, struct fuzz_field t)
{
	char why[256];
	size_t n = strlen(p->name);
	uint16_t bit;
	bool ok;

	memset(why, 'x', sizeof(why));
	ok = gk_allow_request(al, p->name, n, p->port, m.s, m.n, t.s, t.n,
	    why, sizeof(why));
	CHECK((fuzz_printable(why, sizeof(why)) == 0) == ok);
	if (!ok)
		return;
	CHECK(gk_allow_inspects(al, p->name, n, p->port));
	CHECK(m.n > 0 && t.n > 0);
	bit = gk_method_bit(m.s, m.n);
	CHECK(p->methods == 0 || (p->methods & bit) != 0);
	if (t.s[0] == '/' && memchr(t.s, '?', t.n) == NULL &&
	    memchr(t.s, '#', t.n) == NULL) {
		CHECK(plain_path(t.s, t.n));
		CHECK(gk_path_match(p->path, t.s, t.n));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_field pat, m, t;
	struct gk_allowlist *al;
	struct gk_pattern p, q;
	char text[GK_PATTERN_MAX + 1];
	size_t pos = 0, n;

	pat = fuzz_next_field(data, size, &pos);
	m = fuzz_next_field(data, size, &pos);
	t = fuzz_next_field(data, size, &pos);
	check_glob(pat.s, pat.n, t.s, t.n);
	if (gk_pattern_parse((const uint8_t *)pat.s, pat.n, &p) != GK_PAT_OK)
		return 0;
	CHECK((p.methods & ~GK_METHOD_ALL) == 0);
	CHECK(p.methods == 0 || p.path[0] == '/');
	CHECK(p.path[0] == '\0' || (p.path[0] == '/' &&
	    p.kind != GK_PAT_CIDR));
	n = gk_pattern_format(&p, text, sizeof(text));
	CHECK(gk_pattern_parse((const uint8_t *)text, n, &q) == GK_PAT_OK);
	CHECK(gk_pattern_equal(&p, &q) && memcmp(&p, &q, sizeof(p)) == 0);
	if (p.kind == GK_PAT_CIDR)
		return 0;
	if (p.path[0] != '\0') {
		check_self(p.path);
		check_glob(p.path, strlen(p.path), t.s, t.n);
	}
	al = one(&p);
	check_names(&p, al);
	check_request(&p, al, m, t);
	gk_allowlist_free(al);
	return 0;
}
