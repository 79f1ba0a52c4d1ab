/*
 * Tests for gk_reqlearn: a request's learnable path (cut, cleaned,
 * refused), rules made from learned requests (methods merged, paths cut
 * shorter past the per-host bound), and the round trip: every rule made
 * parses back and allows each request it was learned from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_reqlearn.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

struct path_case {
	const char	*method;
	const char	*target;
	const char	*want;		/* NULL: not learnable */
};

static const struct path_case path_cases[] = {
	{ "GET", "/", "/" },
	{ "GET", "/acme", "/acme" },
	{ "GET", "/acme/", "/acme/" },
	{ "GET", "/acme/hello.git/info/refs?service=git-upload-pack",
	    "/acme/hello.git/info/refs" },
	{ "POST", "/acme/hello.git/git-upload-pack", "/acme/hello.git/"
	    "git-upload-pack" },
	{ "GET", "/a/b/c/d/e/f", "/a/b/c/d/**" },
	{ "GET", "/a/b/c/d/", "/a/b/c/d/**" },	/* five segments */
	{ "GET", "/a/b/c/d#frag", "/a/b/c/d" },
	{ "GET", "http://registry.npmjs.org/left-pad?x", "/left-pad" },
	{ "GET", "http://registry.npmjs.org", "/" },
	{ "GET", "/a/x*y/c", "/a/**" },		/* a star: cut before it */
	{ "GET", "/a/**/c", "/a/**" },
	{ "GET", "/**", "/**" },
	{ "GET", "/a/b**c", "/a/**" },
	{ "DELETE", "/@scope%2fpkg/-rev/1", "/@scope%2fpkg/-rev/1" },
	/* not learnable */
	{ "GET", "*", NULL },
	{ "GET", "example.com:443", NULL },
	{ "GET", "", NULL },
	{ "PROPFIND", "/a", NULL },		/* no rule names it */
	{ "get", "/a", NULL },
	{ "GET", "/a/../b", NULL },
	{ "GET", "/a/%2e%2e/b", NULL },
	{ "GET", "/a/./b", NULL },
	{ "GET", "/a b", NULL },
	{ "GET", "/a\x7f", NULL },
	{ "GET", "/\xc3\xa9", NULL },
};

static void
test_path(void **state)
{
	char out[GK_LEARN_PATH_MAX + 1];
	size_t i;
	bool ok;

	(void)state;
	for (i = 0; i < NITEMS(path_cases); i++) {
		const struct path_case *c = &path_cases[i];

		ok = gk_reqlearn_path(c->method, strlen(c->method), c->target,
		    strlen(c->target), out, sizeof(out));
		if (ok != (c->want != NULL) || (ok && strcmp(out,
		    c->want) != 0))
			fail_msg("%s %s: got %s '%s', want '%s'", c->method,
			    c->target, ok ? "ok" : "refused", ok ? out : "",
			    c->want != NULL ? c->want : "(refused)");
	}
}

/* Long paths: cut to fit, never past the buffer. */
static void
test_path_long(void **state)
{
	char target[2048], out[GK_LEARN_PATH_MAX + 1], small[8];

	(void)state;
	memset(target, 'a', sizeof(target) - 1);
	target[0] = '/';
	target[sizeof(target) - 1] = '\0';
	/* over GK_PATH_MAX: no rule could hold it */
	assert_false(gk_reqlearn_path("GET", 3, target, strlen(target), out,
	    sizeof(out)));
	target[600] = '\0';	/* one segment of 599 bytes: all of it cut */
	assert_true(gk_reqlearn_path("GET", 3, target, strlen(target), out,
	    sizeof(out)));
	assert_string_equal(out, "/**");
	assert_true(gk_reqlearn_path("GET", 3, "/ab/cdefgh", 10, small,
	    sizeof(small)));
	assert_string_equal(small, "/ab/**");
	assert_false(gk_reqlearn_path("GET", 3, "/a", 2, small, 0));
}

static struct gk_learned_req
req(const char *host, uint16_t port, const char *method, const char *target)
{
	struct gk_learned_req r;

	memset(&r, 0, sizeof(r));
	snprintf(r.host, sizeof(r.host), "%s", host);
	r.port = port;
	r.methods = gk_method_bit(method, strlen(method));
	assert_true(gk_reqlearn_path(method, strlen(method), target,
	    strlen(target), r.path, sizeof(r.path)));
	return r;
}

/* Rules as text, one per line. */
static void
rules_text(const struct gk_learned_req *v, size_t n, char *buf, size_t len)
{
	size_t i, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < n && pos < len; i++) {
		pos += gk_reqlearn_format(&v[i], buf + pos, len - pos);
		if (pos < len - 1) {
			buf[pos++] = '\n';
			buf[pos] = '\0';
		}
	}
}

static void
test_merge(void **state)
{
	struct gk_learned_req v[8];
	char text[1024];
	size_t n = 0;

	(void)state;
	v[n++] = req("github.com", 443, "GET",
	    "/acme/hello.git/info/refs?service=git-upload-pack");
	v[n++] = req("github.com", 443, "POST",
	    "/acme/hello.git/git-upload-pack");
	v[n++] = req("github.com", 443, "HEAD", "/acme/hello.git/info/refs");
	v[n++] = req("api.github.com", 443, "POST",
	    "/repos/acme/hello/pulls");
	v[n++] = req("github.com", 443, "GET",
	    "/acme/hello.git/info/refs?x=1");
	v[n++] = req("github.com", 8443, "GET", "/x");
	n = gk_reqlearn_merge(v, n);
	rules_text(v, n, text, sizeof(text));
	assert_string_equal(text,
	    "POST api.github.com:443/repos/acme/hello/pulls\n"
	    "POST github.com:443/acme/hello.git/git-upload-pack\n"
	    "GET,HEAD github.com:443/acme/hello.git/info/refs\n"
	    "GET github.com:8443/x\n");
	assert_int_equal(n, 4);
	assert_int_equal(gk_reqlearn_merge(v, 0), 0);
}

/* Past GK_LEARN_HOST_RULES paths a host's are cut a segment shorter,
 * until few enough; other hosts keep theirs. */
static void
test_merge_bound(void **state)
{
	struct gk_learned_req v[3 * GK_LEARN_HOST_RULES + 2];
	char t[64], text[4096];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 2 * GK_LEARN_HOST_RULES; i++) {
		snprintf(t, sizeof(t), "/-/pkg%zu/v/%zu.tgz", (i / 2) % 4, i);
		v[n++] = req("registry.npmjs.org", 443, i % 2 ? "GET" : "HEAD",
		    t);
	}
	for (i = 0; i < GK_LEARN_HOST_RULES; i++) {
		snprintf(t, sizeof(t), "/p%zu", i);
		v[n++] = req("pypi.org", 443, "GET", t);
	}
	v[n++] = req("a.example", 0, "PUT", "/x/y");
	v[n++] = req("a.example", 0, "GET", "/x/y");
	n = gk_reqlearn_merge(v, n);
	rules_text(v, n, text, sizeof(text));
	assert_int_equal(n, 1 + GK_LEARN_HOST_RULES + 4);
	assert_non_null(strstr(text, "GET,PUT a.example/x/y\n"));
	assert_non_null(strstr(text, "GET pypi.org:443/p15\n"));
	for (i = 0; i < 4; i++) {
		snprintf(t, sizeof(t), "GET,HEAD registry.npmjs.org:443/-/pkg"
		    "%zu/v/**\n", i);
		assert_non_null(strstr(text, t));
	}
}

/* The round trip: the rules parse back and allow what they were learned
 * from, and nothing else's method. */
static void
test_round_trip(void **state)
{
	static const char *const reqs[][3] = {
		{ "github.com", "GET", "/acme/hello.git/info/refs?s=1" },
		{ "github.com", "POST", "/acme/hello.git/git-upload-pack" },
		{ "github.com", "GET", "/acme/x*y/z" },
		{ "api.github.com", "PATCH", "/repos/acme/hello/pulls/1/x/y" },
		{ "api.github.com", "GET", "/" },
		{ "a.example", "OPTIONS", "/a/b/" },
	};
	struct gk_learned_req v[NITEMS(reqs)];
	char text[NITEMS(reqs)][GK_PATTERN_MAX + 1], err[256];
	const char *pats[NITEMS(reqs)];
	struct gk_allowlist *al;
	struct gk_pattern p;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(reqs); i++)
		v[i] = req(reqs[i][0], 443, reqs[i][1], reqs[i][2]);
	n = gk_reqlearn_merge(v, NITEMS(reqs));
	for (i = 0; i < n; i++) {
		gk_reqlearn_format(&v[i], text[i], sizeof(text[i]));
		assert_int_equal(gk_pattern_parse((const uint8_t *)text[i],
		    strlen(text[i]), &p), GK_PAT_OK);
		pats[i] = text[i];
	}
	al = gk_allowlist_new(pats, n, err, sizeof(err));
	assert_non_null(al);
	for (i = 0; i < NITEMS(reqs); i++) {
		assert_true(gk_allow_inspects(al, reqs[i][0],
		    strlen(reqs[i][0]), 443));
		if (!gk_allow_request(al, reqs[i][0], strlen(reqs[i][0]), 443,
		    reqs[i][1], strlen(reqs[i][1]), reqs[i][2],
		    strlen(reqs[i][2]), err, sizeof(err)))
			fail_msg("%s %s%s: %s", reqs[i][1], reqs[i][0],
			    reqs[i][2], err);
	}
	assert_false(gk_allow_request(al, "github.com", 10, 443, "DELETE", 6,
	    "/acme/hello.git/git-upload-pack", 31, err, sizeof(err)));
	gk_allowlist_free(al);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_path_long),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_bound),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
