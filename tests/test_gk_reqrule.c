/*
 * Tests for gk_reqrule: request rules in allow patterns ("GET,HEAD
 * github.com/acme/x"): their grammar and messages, canonical text and
 * equality, the path glob, which hosts are inspected, and which requests
 * pass, with the reason for those that do not.
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

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))
#define NPATS		6

struct rule_case {
	const char		*in;
	enum gk_pat_status	 st;
	const char		*want;	/* canonical text, or in the message */
	uint16_t		 methods;
	const char		*path;
};

static const struct rule_case rule_cases[] = {
	/* methods and paths */
	{ "GET,HEAD github.com/acme/**", GK_PAT_OK,
	    "GET,HEAD github.com/acme/**", GK_METHOD_GET | GK_METHOD_HEAD,
	    "/acme/**" },
	{ "POST api.github.com/repos/acme/*/pulls", GK_PAT_OK,
	    "POST api.github.com/repos/acme/*/pulls", GK_METHOD_POST,
	    "/repos/acme/*/pulls" },
	{ "registry.npmjs.org/**", GK_PAT_OK, "registry.npmjs.org/**", 0,
	    "/**" },
	{ "GET registry.npmjs.org/**", GK_PAT_OK,
	    "GET registry.npmjs.org/**", GK_METHOD_GET, "/**" },
	{ "OPTIONS,DELETE,PATCH,PUT,POST,HEAD,GET A.Example.:443/", GK_PAT_OK,
	    "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS a.example:443/",
	    GK_METHOD_ALL, "/" },
	{ "GET,GET a.example/x", GK_PAT_OK, "GET a.example/x", GK_METHOD_GET,
	    "/x" },
	{ "*.github.com/**/info/refs", GK_PAT_OK, "*.github.com/**/info/refs",
	    0, "/**/info/refs" },
	{ "**.github.com:443/a", GK_PAT_OK, "*.github.com:443/a", 0, "/a" },
	{ "a.example/A%2fB/*.tgz", GK_PAT_OK, "a.example/A%2fB/*.tgz", 0,
	    "/A%2fB/*.tgz" },
	{ "a.example//x/", GK_PAT_OK, "a.example//x/", 0, "//x/" },
	{ "a.example/.well-known/x", GK_PAT_OK, "a.example/.well-known/x", 0,
	    "/.well-known/x" },
	{ "a.example/@scope/*:x;y=1", GK_PAT_OK, "a.example/@scope/*:x;y=1", 0,
	    "/@scope/*:x;y=1" },
	/* methods */
	{ "get a.example/x", GK_PAT_BAD_METHOD, "'get' is not a method; a "
	    "rule names GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS "
	    "(upper case)" },
	{ "GET,CONNECT a.example/x", GK_PAT_BAD_METHOD,
	    "'CONNECT' is not a method" },
	{ "GET,,HEAD a.example/x", GK_PAT_BAD_METHOD, "empty method" },
	{ ",GET a.example/x", GK_PAT_BAD_METHOD, "empty method" },
	{ "GET, a.example/x", GK_PAT_BAD_METHOD, "empty method" },
	{ "GET a.example", GK_PAT_BAD_PATH, "methods need a path after the "
	    "host, as in 'GET,HEAD example.com/**'" },
	{ "GET *.a.example:443", GK_PAT_BAD_PATH, "methods need a path" },
	/* spaces */
	{ "GET  a.example/x", GK_PAT_BAD_CHAR, "white space is allowed only "
	    "as one space after the methods" },
	{ "GET a.example /x", GK_PAT_BAD_CHAR, "white space is allowed only" },
	{ "GET\ta.example/x", GK_PAT_BAD_CHAR, "'\\x09' is not allowed" },
	{ "a.example/x y", GK_PAT_BAD_PATH, "' ' is not allowed in a path" },
	{ " a.example/x", GK_PAT_BAD_CHAR, "' ' is not allowed in a host" },
	{ "GET ", GK_PAT_EMPTY, "no host name: write a rule as "
	    "'[METHODS ]HOST/PATH'" },
	{ "GET /x", GK_PAT_EMPTY, "no host name" },
	{ "/x", GK_PAT_EMPTY, "no host name" },
	/* paths */
	{ "a.example/x?y=1", GK_PAT_BAD_PATH, "a path ends at '?' or '#'" },
	{ "a.example/x#top", GK_PAT_BAD_PATH, "a path ends at '?' or '#'" },
	{ "a.example/b\xc3\xbc", GK_PAT_BAD_PATH, "'\\xc3' is not allowed in "
	    "a path" },
	{ "a.example/x\x7f", GK_PAT_BAD_PATH, "'\\x7f' is not allowed" },
	{ "a.example/a**", GK_PAT_BAD_PATH, "'**' must be a whole segment" },
	{ "a.example/**b/c", GK_PAT_BAD_PATH, "'**' must be a whole segment" },
	{ "a.example/a/***", GK_PAT_BAD_PATH, "'**' must be a whole segment" },
	{ "a.example/a/../b", GK_PAT_BAD_PATH, "'..' is a dot segment" },
	{ "a.example/./b", GK_PAT_BAD_PATH, "'.' is a dot segment" },
	{ "a.example/a/.", GK_PAT_BAD_PATH, "'.' is a dot segment" },
	{ "a.example/a/%2E%2e/b", GK_PAT_BAD_PATH, "'%2E%2e' is a dot" },
	{ "a.example/a/..;v=1/b", GK_PAT_BAD_PATH, "'..;v=1' is a dot" },
	{ "a.example/a%2f..%2fb", GK_PAT_BAD_PATH, "'..' is a dot segment" },
	{ "a.example/a\\..\\b", GK_PAT_BAD_PATH, "'..' is a dot segment" },
	/* rules need a name */
	{ "GET 203.0.113.7/x", GK_PAT_BAD_PATH, "an address cannot carry "
	    "methods or a path: request rules need a host name" },
	{ "GET 203.0.113.0/24", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "203.0.113.0/24/x", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "203.0.113.7:443/x", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "[2001:db8::1]:443/x", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "GET [2001:db8::1]", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "GET 2001:db8::/32", GK_PAT_BAD_PATH, "an address cannot carry" },
	/* the host part as before */
	{ "203.0.113.0/24:443", GK_PAT_OK, "203.0.113.0/24:443", 0, "" },
	{ "[2001:db8::/32]:443", GK_PAT_OK, "[2001:db8::/32]:443", 0, "" },
	{ "[2001:db8::]/32", GK_PAT_BAD_CIDR, "put the prefix inside" },
	{ "2001:db8::/32", GK_PAT_BAD_CIDR, "must be in brackets" },
	{ "*.com/x", GK_PAT_PUBLIC_SUFFIX, "com is a public suffix" },
	{ "a.example:0/x", GK_PAT_BAD_PORT, "port '0'" },
	{ "a.example:/x", GK_PAT_BAD_PORT, "port ''" },
	{ "a..example/x", GK_PAT_EMPTY_LABEL, "two dots in a row" },
	{ "a!.example/x", GK_PAT_BAD_CHAR, "'!' is not allowed in a host" },
	{ "https://a.example/x", GK_PAT_BAD_CHAR, "this looks like a URL" },
	{ "GET http://a.example/", GK_PAT_BAD_CHAR, "this looks like a URL" },
	{ "a.example:443:1/x", GK_PAT_BAD_CIDR, "must be in brackets" },
};

static void
check_rule(const struct rule_case *c)
{
	char txt[GK_PATTERN_MAX + 1], msg[2048];
	struct gk_pattern p, q;
	enum gk_pat_status got;
	size_t len = strlen(c->in), n;

	got = gk_pattern_parse((const uint8_t *)c->in, len, &p);
	n = gk_pattern_error((const uint8_t *)c->in, len, got, msg,
	    sizeof(msg));
	assert_int_equal(strlen(msg), n);
	if (got != c->st)
		fail_msg("'%s': got %s, want %s (%s)", c->in,
		    gk_pat_strstatus(got), gk_pat_strstatus(c->st), msg);
	if (c->st != GK_PAT_OK) {
		if (strstr(msg, c->want) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", c->in, msg,
			    c->want);
		return;
	}
	assert_int_equal(p.methods, c->methods);
	assert_string_equal(p.path, c->path);
	n = gk_pattern_format(&p, txt, sizeof(txt));
	assert_int_equal(strlen(txt), n);
	assert_string_equal(txt, c->want);
	assert_int_equal(gk_pattern_parse((const uint8_t *)txt, n, &q),
	    GK_PAT_OK);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_true(gk_pattern_equal(&p, &q));
}

static void
test_parse(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(rule_cases); i++)
		check_rule(&rule_cases[i]);
	assert_string_equal(gk_pat_strstatus(GK_PAT_BAD_METHOD),
	    "bad method");
	assert_string_equal(gk_pat_strstatus(GK_PAT_BAD_PATH), "bad path");
}

/* The longest pattern (1024 bytes) holds the longest path (1023). */
static void
test_lengths(void **state)
{
	char buf[GK_PATTERN_MAX + 8], txt[GK_PATTERN_MAX + 1], msg[512];
	struct gk_pattern p;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "a/", 2);
	assert_int_equal(gk_pattern_parse((const uint8_t *)buf, GK_PATTERN_MAX,
	    &p), GK_PAT_OK);
	assert_int_equal(strlen(p.path), GK_PATH_MAX);
	assert_int_equal(gk_pattern_format(&p, txt, sizeof(txt)),
	    GK_PATTERN_MAX);
	assert_int_equal(gk_pattern_parse((const uint8_t *)buf,
	    GK_PATTERN_MAX + 1, &p), GK_PAT_TOO_LONG);
	gk_pattern_error((const uint8_t *)buf, GK_PATTERN_MAX + 1,
	    GK_PAT_TOO_LONG, msg, sizeof(msg));
	assert_non_null(strstr(msg, "the pattern is 1025 characters long; "
	    "the limit is 1024"));
	/* the longest canonical text: every method, names and a path */
	memcpy(buf, "OPTIONS,DELETE,PATCH,PUT,POST,HEAD,GET a/", 41);
	assert_int_equal(gk_pattern_parse((const uint8_t *)buf, GK_PATTERN_MAX,
	    &p), GK_PAT_OK);
	assert_int_equal(p.methods, GK_METHOD_ALL);
	assert_int_equal(gk_pattern_format(&p, txt, sizeof(txt)),
	    GK_PATTERN_MAX);
	/* cut to fit, terminated */
	assert_int_equal(gk_pattern_format(&p, txt, 6), 5);
	assert_string_equal(txt, "GET,H");
	assert_int_equal(gk_pattern_format(&p, txt, 40), 39);
	assert_string_equal(txt, "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS ");
	assert_int_equal(gk_pattern_format(&p, txt, 42), 41);
	assert_string_equal(txt, "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS a/");
	assert_int_equal(gk_pattern_format(&p, NULL, 0), 0);
}

static void
test_methods(void **state)
{
	(void)state;
	assert_int_equal(gk_method_bit("GET", 3), GK_METHOD_GET);
	assert_int_equal(gk_method_bit("HEAD", 4), GK_METHOD_HEAD);
	assert_int_equal(gk_method_bit("POST", 4), GK_METHOD_POST);
	assert_int_equal(gk_method_bit("PUT", 3), GK_METHOD_PUT);
	assert_int_equal(gk_method_bit("PATCH", 5), GK_METHOD_PATCH);
	assert_int_equal(gk_method_bit("DELETE", 6), GK_METHOD_DELETE);
	assert_int_equal(gk_method_bit("OPTIONS", 7), GK_METHOD_OPTIONS);
	assert_int_equal(gk_method_bit("GETX", 3), GK_METHOD_GET);
	assert_int_equal(gk_method_bit("GET", 2), 0);
	assert_int_equal(gk_method_bit("get", 3), 0);
	assert_int_equal(gk_method_bit("CONNECT", 7), 0);
	assert_int_equal(gk_method_bit("", 0), 0);
	assert_int_equal(gk_method_bit(NULL, 0), 0);
}

static const struct {
	const char	*glob, *path;
	bool		 want;
} glob_cases[] = {
	{ "/**", "/", true },
	{ "/**", "/a/b/c", true },
	{ "/**", "/a/", true },
	{ "/", "/", true },
	{ "/", "/a", false },
	{ "/acme/**", "/acme", true },
	{ "/acme/**", "/acme/", true },
	{ "/acme/**", "/acme/x/y", true },
	{ "/acme/**", "/acmex", false },
	{ "/acme/**", "/Acme/x", false },
	{ "/acme/**", "/", false },
	{ "/a/*/b", "/a/x/b", true },
	{ "/a/*/b", "/a//b", true },
	{ "/a/*/b", "/a/x/y/b", false },
	{ "/a/*/b", "/a/b", false },
	{ "/a/**/b", "/a/b", true },
	{ "/a/**/b", "/a/x/y/b", true },
	{ "/a/**/b", "/a/x/y/bc", false },
	{ "/a/**/b/**/c", "/a/b/c", true },
	{ "/a/**/b/**/c", "/a/x/b/y/b/z/c", true },
	{ "/a/**/b/**/c", "/a/x/c/b", false },
	{ "/**/git-upload-pack", "/acme/hello.git/git-upload-pack", true },
	{ "/**/git-upload-pack", "/acme/hello.git/git-receive-pack", false },
	{ "/**/git-upload-pack", "/git-upload-pack", true },
	{ "/*.tgz", "/a.tgz", true },
	{ "/*.tgz", "/.tgz", true },
	{ "/*.tgz", "/a/b.tgz", false },
	{ "/a*b*c", "/abc", true },
	{ "/a*b*c", "/aXbYbZc", true },
	{ "/a*b*c", "/aXbYcZ", false },
	{ "/*", "/", true },
	{ "/*", "/x", true },
	{ "/*", "/x/", false },
	{ "/x/", "/x/", true },
	{ "/x/", "/x", false },
	{ "/@s%2f*", "/@s%2fpkg", true },
	{ "/@s%2f*", "/@s%2Fpkg", false },
	{ "/**/**", "/a", true },
	{ "/**/*/**", "/", true },
	{ "x", "/x", false },
	{ "/x", "x", false },
	{ "", "/", false },
};

static void
test_glob(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(glob_cases); i++) {
		if (gk_path_match(glob_cases[i].glob, glob_cases[i].path,
		    strlen(glob_cases[i].path)) != glob_cases[i].want)
			fail_msg("'%s' on '%s': want %d", glob_cases[i].glob,
			    glob_cases[i].path, glob_cases[i].want);
	}
	assert_false(gk_path_match(NULL, "/", 1));
	assert_false(gk_path_match("/**", NULL, 0));
	assert_false(gk_path_match("/**", "/", 0));
	assert_true(gk_path_match("/a", "/ab", 2));	/* n bytes only */
}

static struct gk_allowlist *
mklist(const char *const *pats)
{
	struct gk_allowlist *al;
	char err[512];
	size_t n = 0;

	while (n < NPATS && pats[n] != NULL)
		n++;
	if ((al = gk_allowlist_new(pats, n, err, sizeof(err))) == NULL)
		fail_msg("allowlist: %s", err);
	return al;
}

/* A rule allows its host as the same pattern without methods and path. */
static void
test_allow_name(void **state)
{
	static const char *const hosts[] = {
		"github.com", "api.github.com", "x.api.github.com",
		"githubXcom", "example.com", "github.com.",
	};
	static const char *const pairs[][2] = {
		{ "GET github.com/acme/**", "github.com" },
		{ "POST,PUT *.github.com:443/x", "*.github.com:443" },
		{ "api.github.com:8443/", "api.github.com:8443" },
	};
	static const uint16_t ports[] = { 0, 443, 8443, 80 };
	struct gk_allowlist *a, *b;
	size_t i, j, k;

	(void)state;
	for (i = 0; i < NITEMS(pairs); i++) {
		a = mklist((const char *const[]){ pairs[i][0], NULL });
		b = mklist((const char *const[]){ pairs[i][1], NULL });
		for (j = 0; j < NITEMS(hosts); j++)
			for (k = 0; k < NITEMS(ports); k++)
				assert_int_equal(gk_allow_name(a, hosts[j],
				    strlen(hosts[j]), ports[k]),
				    gk_allow_name(b, hosts[j],
				    strlen(hosts[j]), ports[k]));
		gk_allowlist_free(a);
		gk_allowlist_free(b);
	}
}

static const struct {
	const char	*pats[NPATS];
	const char	*name;
	uint16_t	 port;
	bool		 want;
} inspect_cases[] = {
	{ { "GET github.com/**" }, "github.com", 443, true },
	{ { "GET github.com/**" }, "GitHub.COM.", 0, true },
	{ { "GET github.com/**" }, "api.github.com", 443, false },
	{ { "github.com", "GET github.com/**" }, "github.com", 443, true },
	{ { "GET github.com/**", "*.github.com" }, "github.com", 443, true },
	{ { "github.com" }, "github.com", 443, false },
	{ { "GET *.github.com/**" }, "a.b.github.com", 443, true },
	{ { "GET *.github.com/**" }, "github.com", 443, true },
	{ { "GET github.com:443/**" }, "github.com", 443, true },
	{ { "GET github.com:443/**" }, "github.com", 80, false },
	{ { "GET github.com:443/**" }, "github.com", 0, true },
	{ { "GET github.com:443/**", "github.com:80" }, "github.com", 80,
	    false },
	{ { "192.0.2.0/24", "GET a.example/x" }, "192.0.2.1", 443, false },
	{ { "GET a.example/x" }, "a b", 443, false },
	{ { NULL }, "a.example", 443, false },
};

static void
test_inspects(void **state)
{
	struct gk_allowlist *al;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(inspect_cases); i++) {
		al = mklist(inspect_cases[i].pats);
		if (gk_allow_inspects(al, inspect_cases[i].name,
		    strlen(inspect_cases[i].name), inspect_cases[i].port) !=
		    inspect_cases[i].want)
			fail_msg("case %zu: %s:%u", i, inspect_cases[i].name,
			    inspect_cases[i].port);
		gk_allowlist_free(al);
	}
	assert_false(gk_allow_inspects(NULL, "a.example", 9, 0));
	al = mklist((const char *const[]){ "GET a.example/x", NULL });
	assert_false(gk_allow_inspects(al, NULL, 0, 0));
	gk_allowlist_free(al);
}

struct req_case {
	const char	*method, *target;
	const char	*host;
	uint16_t	 port;
	bool		 want;
	const char	*why;	/* in the reason when refused */
};

static const char *const req_pats[NPATS] = {
	"GET,HEAD github.com/**",
	"POST github.com:443/**/git-upload-pack",
	"POST api.github.com/repos/acme/*/pulls",
	"registry.npmjs.org:443/**",
	"plain.example",
	"GET *.pkg.example/@scope%2f*",
};

static const struct req_case req_cases[] = {
	{ "GET", "/acme/hello.git/info/refs?service=git-upload-pack",
	    "github.com", 443, true, NULL },
	{ "HEAD", "/", "github.com", 443, true, NULL },
	{ "GET", "https://github.com/acme#x", "github.com", 443, true, NULL },
	{ "GET", "http://github.com", "github.com", 80, true, NULL },
	{ "GET", "http://github.com?q", "github.com", 80, true, NULL },
	{ "POST", "/acme/hello.git/git-upload-pack", "GitHub.com.", 443, true,
	    NULL },
	{ "POST", "/acme/hello.git/git-receive-pack", "github.com", 443, false,
	    "POST /acme/hello.git/git-receive-pack: no rule for github.com:443 "
	    "allows it; the closest, 'GET,HEAD github.com/**', allows GET,HEAD "
	    "only" },
	{ "POST", "/acme/hello.git/git-receive-pack", "github.com", 8443,
	    false, "the closest, 'GET,HEAD github.com/**', allows GET,HEAD "
	    "only" },
	{ "PUT", "/acme/x/git-upload-pack", "github.com", 443, false,
	    "the closest, 'GET,HEAD github.com/**', allows GET,HEAD only" },
	{ "POST", "/acme/hello.git/git-upload-pack", "github.com", 80, false,
	    "the closest, 'GET,HEAD github.com/**', allows GET,HEAD only" },
	{ "PUT", "/x", "github.com", 443, false, "allows GET,HEAD only" },
	{ "get", "/x", "github.com", 443, false, "allows GET,HEAD only" },
	{ "POST", "/repos/acme/hello/pulls", "api.github.com", 443, true,
	    NULL },
	{ "POST", "/repos/acme/hello/pulls/1", "api.github.com", 443, false,
	    "does not match the path" },
	{ "GET", "/repos/acme/hello/pulls", "api.github.com", 443, false,
	    "allows POST only" },
	{ "GET", "/repos/acme/hello/issues", "api.github.com", 443, false,
	    "does not match the path nor the method" },
	{ "PROPFIND", "/anything", "registry.npmjs.org", 443, true, NULL },
	{ "DELETE", "/-/user/token/x", "registry.npmjs.org", 0, true, NULL },
	{ "GET", "/x", "registry.npmjs.org", 80, false, "GET /x: no request "
	    "rule covers registry.npmjs.org:80" },
	{ "GET", "/x", "plain.example", 443, false, "no request rule covers "
	    "plain.example:443" },
	{ "GET", "/x", "evil.example", 0, false, "no request rule covers "
	    "evil.example" },
	{ "GET", "/@scope%2fpkg", "a.pkg.example", 443, true, NULL },
	{ "GET", "/@scope%2fpkg", "pkg.example", 443, true, NULL },
	{ "GET", "/@scope/pkg", "a.pkg.example", 443, false,
	    "does not match the path" },
	/* never: dot segments however written, control bytes, odd targets */
	{ "GET", "/acme/../x", "github.com", 443, false, "GET /acme/../x: a "
	    "request path with a '.' or '..' segment never matches a rule" },
	{ "GET", "/acme/./x", "github.com", 443, false, "'.' or '..' segment" },
	{ "GET", "/acme/..", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/%2e%2E/x", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/.%2e", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/..;x=1/y", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/x%2f..%2fy", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/x%5C..%5cy", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/x\\..\\y", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/x/..?q", "github.com", 443, false, "'.' or '..'" },
	{ "GET", "/acme/...", "github.com", 443, true, NULL },
	{ "GET", "/acme/..x/.y/.%2", "github.com", 443, true, NULL },
	{ "GET", "/acme/x/?a=/../b", "github.com", 443, true, NULL },
	{ "GET", "/a b", "github.com", 443, false, "a request path with a "
	    "control, space or non-ASCII byte never matches a rule" },
	{ "GET", "/a\x01", "github.com", 443, false, "control, space" },
	{ "GET", "/a\xc3\xa9", "github.com", 443, false, "non-ASCII" },
	{ "G ET", "/", "github.com", 443, false, "G ET /: the method is not "
	    "an HTTP token" },
	{ "", "/", "github.com", 443, false, "not an HTTP token" },
	{ "GET", "*", "github.com", 443, false, "request target '*' has no "
	    "path" },
	{ "CONNECT", "github.com:443", "github.com", 443, false,
	    "has no path" },
	{ "GET", "", "github.com", 443, false, "has no path" },
	{ "GET", "//x", "github.com", 443, true, NULL },
	{ "GET", "/", "a b", 443, false, "not a host name" },
};

static void
check_req(const struct gk_allowlist *al, const struct req_case *c)
{
	char why[512];
	bool got;

	memset(why, 'x', sizeof(why));
	got = gk_allow_request(al, c->host, strlen(c->host), c->port,
	    c->method, strlen(c->method), c->target, strlen(c->target), why,
	    sizeof(why));
	if (got != c->want)
		fail_msg("%s %s on %s:%u: got %d (%s)", c->method, c->target,
		    c->host, c->port, got, why);
	if (got) {
		assert_string_equal(why, "");
		return;
	}
	if (strstr(why, c->why) == NULL)
		fail_msg("%s %s: why '%s' lacks '%s'", c->method, c->target,
		    why, c->why);
}

static void
test_request(void **state)
{
	struct gk_allowlist *al;
	char why[16];
	size_t i;

	(void)state;
	al = mklist(req_pats);
	for (i = 0; i < NITEMS(req_cases); i++)
		check_req(al, &req_cases[i]);
	/* the reason is cut to fit; none is asked for */
	assert_false(gk_allow_request(al, "github.com", 10, 443, "PUT", 3,
	    "/x", 2, why, sizeof(why)));
	assert_string_equal(why, "PUT /x: no rule");
	assert_false(gk_allow_request(al, "github.com", 10, 443, "PUT", 3,
	    "/x", 2, NULL, 0));
	assert_true(gk_allow_request(al, "github.com", 10, 443, "GET", 3,
	    "/x", 2, NULL, 0));
	/* lengths, not NULs, bound the texts */
	assert_true(gk_allow_request(al, "github.comX", 10, 443, "GETX", 3,
	    "/x/../y", 2, why, sizeof(why)));
	assert_false(gk_allow_request(NULL, "github.com", 10, 443, "GET", 3,
	    "/", 1, why, sizeof(why)));
	assert_false(gk_allow_request(al, "github.com", 10, 443, NULL, 0,
	    "/", 1, why, sizeof(why)));
	assert_false(gk_allow_request(al, "github.com", 10, 443, "GET", 3,
	    NULL, 0, why, sizeof(why)));
	gk_allowlist_free(al);
}

/* Long texts are quoted escaped and cut, within the buffer. */
static void
test_request_why(void **state)
{
	static char path[4000], why[1024];
	struct gk_allowlist *al;

	(void)state;
	al = mklist((const char *const[]){ "GET a.example/x/**", NULL });
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	assert_false(gk_allow_request(al, "a.example", 9, 443, "POST", 4, path,
	    sizeof(path), why, sizeof(why)));
	assert_non_null(strstr(why, "POST /ppp"));
	assert_non_null(strstr(why, "p...: no rule for a.example:443 allows "
	    "it; the closest, 'GET a.example/x/**', does not match the path "
	    "nor the method"));
	assert_true(strlen(why) < 400);
	path[1] = '\'';
	path[2] = '\n';
	assert_false(gk_allow_request(al, "a.example", 9, 443, "GE\nT", 4, path,
	    sizeof(path), why, sizeof(why)));
	assert_non_null(strstr(why, "GE\\x0aT /"));
	assert_false(gk_allow_request(al, "a.example", 9, 443, "GET", 3, path,
	    3, why, sizeof(why)));
	assert_non_null(strstr(why, "GET /\\x27\\x0a: a request path with a "
	    "control"));
	gk_allowlist_free(al);
}

/* Methods and path take part in equality, merging and removal. */
static void
test_equal_merge(void **state)
{
	static const char *const pats[] = {
		"a.example", "a.example/x", "GET a.example/x",
		"HEAD a.example/x", "GET,HEAD a.example/x", "GET a.example/y",
		"GET a.example:443/x", "GET,HEAD a.example/x",
		"HEAD,GET A.example./x", "a.example/x", "GET a.example/x/",
	};
	struct gk_allowlist *al;
	char err[512], text[GK_PATTERN_MAX + 1];

	(void)state;
	al = gk_allowlist_new(pats, NITEMS(pats), err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_allowlist_len(al), 8);
	gk_pattern_format(gk_allowlist_at(al, 4), text, sizeof(text));
	assert_string_equal(text, "GET,HEAD a.example/x");
	gk_pattern_format(gk_allowlist_at(al, 7), text, sizeof(text));
	assert_string_equal(text, "GET a.example/x/");
	assert_false(gk_pattern_equal(gk_allowlist_at(al, 0),
	    gk_allowlist_at(al, 1)));
	assert_false(gk_pattern_equal(gk_allowlist_at(al, 1),
	    gk_allowlist_at(al, 2)));
	assert_false(gk_pattern_equal(gk_allowlist_at(al, 2),
	    gk_allowlist_at(al, 3)));
	gk_allowlist_free(al);
}

static bool
drop_rule(const struct gk_pattern *p, void *arg)
{
	return gk_pattern_equal(p, arg);
}

static void
test_edit_remove(void **state)
{
	static const char *const base[] = {
		"github.com", "GET github.com/acme/**", "POST github.com/x",
	};
	struct gk_allowlist *al, *na;
	struct gk_pattern rm;
	char err[512], text[GK_PATTERN_MAX + 1];

	(void)state;
	assert_non_null(al = gk_allowlist_new(base, 3, err, sizeof(err)));
	assert_int_equal(gk_pattern_parse((const uint8_t *)
	    "GET github.com/acme/**", 22, &rm), GK_PAT_OK);
	na = gk_allowlist_edit(al, drop_rule, &rm, NULL, 0, err, sizeof(err));
	assert_non_null(na);
	assert_int_equal(gk_allowlist_len(na), 2);
	gk_pattern_format(gk_allowlist_at(na, 1), text, sizeof(text));
	assert_string_equal(text, "POST github.com/x");
	assert_true(gk_allow_inspects(na, "github.com", 10, 443));
	gk_allowlist_free(na);
	assert_int_equal(gk_pattern_parse((const uint8_t *)"github.com", 10,
	    &rm), GK_PAT_OK);
	na = gk_allowlist_edit(al, drop_rule, &rm, NULL, 0, err, sizeof(err));
	assert_int_equal(gk_allowlist_len(na), 2);
	assert_true(gk_allow_name(na, "github.com", 10, 443));
	gk_allowlist_free(na);
	gk_allowlist_free(al);
}

/* Name explanations speak of hosts: a rule is named by its host part. */
static void
test_explain(void **state)
{
	struct gk_allowlist *al;
	char buf[512];

	(void)state;
	al = mklist((const char *const[]){ "GET,HEAD github.com/acme/**",
	    NULL });
	gk_allow_explain(al, "api.github.com", 14, 443, buf, sizeof(buf));
	assert_string_equal(buf, "closest pattern 'github.com' is exact; "
	    "'*.github.com' would cover api.github.com");
	gk_allow_explain(al, "github.com", 10, 443, buf, sizeof(buf));
	assert_string_equal(buf, "'GET,HEAD github.com/acme/**' allows "
	    "github.com");
	gk_allowlist_free(al);
	al = mklist((const char *const[]){ "GET *.github.com:443/x", NULL });
	gk_allow_explain(al, "api.github.com", 14, 80, buf, sizeof(buf));
	assert_string_equal(buf, "'*.github.com' covers the name but only on "
	    "port 443");
	gk_allowlist_free(al);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_allow_name),
		cmocka_unit_test(test_inspects),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_request_why),
		cmocka_unit_test(test_equal_merge),
		cmocka_unit_test(test_edit_remove),
		cmocka_unit_test(test_explain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
