/*
 * gk_reqlearn: request rules from the requests a learning cage made
 * (gk_reqlearn.h). A path is cut segment by segment; cutting is
 * idempotent and cutting shorter after longer is cutting shorter at
 * once, so a host's paths are cut in place one segment at a time until
 * few enough are left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_reqlearn.h"
#include "gatekeeper/policy/gk_reqrule.h"

/*
 * p (a path, '/' first) cut to at most segs segments, or before the
 * first segment holding a '*', a segment "**" for what is left; in out. False
 * when that does not fit in outlen.
 */
static bool
cut_path(const char *p, size_t segs, char *out, size_t outlen)
{
	size_t pos = 0, n = 0, e;
	const char *slash;

	while (p[pos] != '\0') {	/* p[pos] == '/' */
		slash = strchr(p + pos + 1, '/');
		e = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n == segs || memchr(p + pos + 1, '*', e - pos - 1) != NULL)
			return snprintf(out, outlen, "%.*s/**", (int)pos, p) <
			    (int)outlen;
		n++;
		pos = e;
	}
	return snprintf(out, outlen, "%s", p) < (int)outlen;
}

bool
gk_reqlearn_path(const char *method, size_t mlen, const char *target,
    size_t tlen, char *out, size_t outlen)
{
	char b[GK_PATH_MAX + 2], *star;
	struct gk_pattern pat;
	struct pat_diag d;
	const char *path;
	size_t plen, hoff, hlen, segs;

	if (outlen == 0 || method == NULL || target == NULL ||
	    gk_method_bit(method, mlen) == 0 ||
	    !gk_target_path(target, tlen, &path, &plen) || plen > GK_PATH_MAX)
		return false;
	/* what a rule's path may hold, no dot segment: checked as the rule
	 * "h/PATH" would be, its stars aside (they are cut off below) */
	b[0] = 'h';
	memcpy(b + 1, path, plen);
	b[plen + 1] = '\0';
	for (star = strchr(b, '*'); star != NULL; star = strchr(star, '*'))
		*star = 'x';
	memset(&pat, 0, sizeof(pat));
	if (gk_rule_split((const uint8_t *)b, plen + 1, &pat, &hoff, &hlen,
	    &d) != GK_PAT_OK || hlen != 1)
		return false;
	memcpy(b + 1, path, plen);
	for (segs = GK_LEARN_PATH_SEGS + 1; segs-- > 0;)
		if (cut_path(b + 1, segs, out, outlen))
			return true;
	return false;
}

static int
req_cmp(const void *pa, const void *pb)
{
	const struct gk_learned_req *a = pa, *b = pb;
	int r;

	if ((r = strcmp(a->host, b->host)) != 0)
		return r;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* Distinct paths of v[0..n), sorted. */
static size_t
distinct_paths(struct gk_learned_req *v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof(v[0]), req_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(v[i].path, v[i - 1].path) != 0)
			k++;
	return k;
}

/* One host and port's v[0..n): cut until few enough, then one rule per
 * path into out (out <= v): how many. */
static size_t
merge_host(struct gk_learned_req *v, size_t n, struct gk_learned_req *out)
{
	char cut[GK_LEARN_PATH_MAX + 1];
	size_t i, k = 0, segs = GK_LEARN_PATH_SEGS;

	while (distinct_paths(v, n) > GK_LEARN_HOST_RULES && segs > 0) {
		segs--;
		for (i = 0; i < n; i++)
			if (cut_path(v[i].path, segs, cut, sizeof(cut)))
				memcpy(v[i].path, cut, sizeof(cut));
	}
	for (i = 0; i < n; i++) {
		if (k > 0 && strcmp(out[k - 1].path, v[i].path) == 0) {
			out[k - 1].methods |= v[i].methods;
			continue;
		}
		if (&out[k] != &v[i])
			out[k] = v[i];
		k++;
	}
	return k;
}

size_t
gk_reqlearn_merge(struct gk_learned_req *v, size_t n)
{
	size_t i, j, k = 0;

	qsort(v, n, sizeof(v[0]), req_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].port == v[i].port &&
		    strcmp(v[j].host, v[i].host) == 0; j++)
			;
		k += merge_host(v + i, j - i, v + k);
	}
	return k;
}

size_t
gk_reqlearn_format(const struct gk_learned_req *r, char *buf, size_t len)
{
	char ms[64], port[8] = "";
	int n;

	gk_methods_format(r->methods, ms, sizeof(ms));
	if (r->port != 0)
		snprintf(port, sizeof(port), ":%u", (unsigned)r->port);
	n = snprintf(buf, len, "%s%s%s%s%s", ms, ms[0] != '\0' ? " " : "",
	    r->host, port, r->path);
	return n < 0 ? 0 : (size_t)n;
}
