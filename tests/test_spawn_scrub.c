/*
 * test_spawn_scrub: settings files shown inside with their secrets
 * replaced (spawn_scrub.c): what is replaced, what stays, the shape of a
 * placeholder, and what makes a file be hidden whole instead.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn_scrub.h"

/* Scrub text as format f; the result (static), the count in *n. */
static const char *
scrub(enum spawn_scrub_fmt f, const char *text, int *n)
{
	static char buf[8192];
	size_t len = strlen(text);

	assert_true(len < sizeof(buf));
	memcpy(buf, text, len + 1);
	*n = spawn_scrub(f, buf, len);
	assert_int_equal(strlen(buf), len);	/* never a new length */
	return buf;
}

static void
test_npmrc(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = scrub(SPAWN_SCRUB_NPMRC,
	    "; a comment with _authToken=npm_notasecret\n"
	    "@corp:registry=https://npm.corp.example/\n"
	    "//npm.corp.example/:_authToken = npm_0123456789abcdefABCDEF\n"
	    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"
	    "//old.example/:_auth=\"dXNlcjpwYXNz\"\n"
	    "//old.example/:_password=cGFzcw==\n"
	    "//old.example/:username=me\n"
	    "strict-ssl=false\r\n", &n);
	assert_int_equal(n, 3);
	assert_non_null(strstr(out, "; a comment with "
	    "_authToken=npm_notasecret\n"));
	assert_non_null(strstr(out, "@corp:registry=https://npm.corp.example/\n"));
	/* the prefix and the length kept, the rest the fill */
	assert_non_null(strstr(out, "//npm.corp.example/:_authToken = "
	    "npm_gkplaceholdergkplaceho\n"));
	assert_non_null(strstr(out, "_authToken=${NPM_TOKEN}\n"));
	assert_non_null(strstr(out, "_auth=\"gkplaceholde\"\n"));
	assert_null(strstr(out, "dXNlcjpwYXNz"));
	assert_null(strstr(out, "cGFzcw=="));
	assert_non_null(strstr(out, "username=me\n"));
	assert_non_null(strstr(out, "strict-ssl=false\r\n"));
}

static void
test_pypirc_cargo(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = scrub(SPAWN_SCRUB_PYPIRC, "[distutils]\nindex-servers = pypi\n"
	    "[pypi]\nusername = __token__\nPassword=pypi-AgEIcHlwaS5vcmcCJ\n"
	    "repository = https://upload.pypi.org/legacy/\n", &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(out, "Password=pypi-gkplaceholdergkpl\n"));
	assert_non_null(strstr(out, "username = __token__\n"));
	assert_non_null(strstr(out, "index-servers = pypi\n"));
	out = scrub(SPAWN_SCRUB_CARGO, "[registry]\ntoken = \"cio0123\"\n"
	    "[registries.corp]\ntoken = 'abc'\nindex = \"x\"\n", &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(out, "token = \"gkplace\"\n"));
	assert_non_null(strstr(out, "token = 'gkp'\n"));
	assert_non_null(strstr(out, "index = \"x\"\n"));
}

static void
test_netrc(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = scrub(SPAWN_SCRUB_NETRC, "machine api.example.com\n"
	    "  login me\n  password s3cr3t\n"
	    "machine b.example.com login u password \"q uote\" account acc1\n"
	    "macdef init\ncd password\n\n"
	    "default login anonymous password guest@\n", &n);
	assert_int_equal(n, 4);
	assert_null(strstr(out, "s3cr3t"));
	assert_non_null(strstr(out, "password gkplac\n"));
	assert_non_null(strstr(out, "account gkpl\n"));
	/* a macro's body is not words: its "password" names nothing */
	assert_non_null(strstr(out, "cd password\n"));
	assert_non_null(strstr(out, "login me\n"));
	assert_non_null(strstr(out, "password gkplac\n"));
}

static void
test_gitcred(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = scrub(SPAWN_SCRUB_GITCRED,
	    "https://me:ghp_0123456789abcdefghij@github.com\n"
	    "https://oauth2:glpat-abcdefghij@gitlab.example/group\n"
	    "https://justuser@h.example\n"
	    "https://u:p%40ss@h.example/path@x\n"
	    "not a url\n", &n);
	assert_int_equal(n, 3);
	assert_non_null(strstr(out, "https://me:ghp_gkplaceholdergkplace@"
	    "github.com\n"));
	assert_non_null(strstr(out, "https://oauth2:glpat-gkplacehol@gitlab.example/"
	    "group\n"));
	assert_non_null(strstr(out, "https://justuser@h.example\n"));
	/* the authority ends at the first '/': the path's '@' is not it */
	assert_non_null(strstr(out, "https://u:gkplac@h.example/path@x\n"));
}

static void
test_gh_docker(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = scrub(SPAWN_SCRUB_GHHOSTS, "github.com:\n    user: me\n"
	    "    oauth_token: gho_0123456789abcdef\n    git_protocol: https\n"
	    "ghe.corp:\n    oauth_token: \"abcdef\"\n", &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(out, "    oauth_token: gho_gkplaceholdergkp\n"));
	assert_non_null(strstr(out, "    oauth_token: \"gkplac\"\n"));
	assert_non_null(strstr(out, "    git_protocol: https\n"));
	out = scrub(SPAWN_SCRUB_DOCKER, "{\"auths\":{\"ghcr.io\":{\"auth\":"
	    "\"dXNlcjpTRUNSRVQ=\"},\"x\":{\"identitytoken\": \"a\\\"b\"}},"
	    "\"credsStore\":\"auth\",\"proxies\":{\"auth\":{}},"
	    "\"note\":\"the \\\"auth\\\": \\\"x\\\" inside a string\"}", &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(out, "\"auth\":\"gkplaceholdergkp\"}"));
	/* an escaped quote inside the value is the value's: all replaced */
	assert_non_null(strstr(out, "\"identitytoken\": \"gkpl\"}"));
	/* "auth" as a value, an object under "auth", and text that looks
	 * like a key inside a string are not secrets */
	assert_non_null(strstr(out, "\"credsStore\":\"auth\""));
	assert_non_null(strstr(out, "\"proxies\":{\"auth\":{}}"));
	assert_non_null(strstr(out, "\\\"x\\\" inside"));
}

static void
test_refused(void **state)
{
	char buf[SPAWN_SCRUB_LINE_MAX + 16], *big;

	(void)state;
	memcpy(buf, "a=b\0c", 5);
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_NPMRC, buf, 5), -1);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_PYPIRC, buf, sizeof(buf)),
	    -1);
	buf[SPAWN_SCRUB_LINE_MAX - 1] = '\n';
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_PYPIRC, buf,
	    SPAWN_SCRUB_LINE_MAX), 0);
	assert_non_null(big = calloc(1, SPAWN_SCRUB_MAX + 1));
	memset(big, '\n', SPAWN_SCRUB_MAX + 1);
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_NETRC, big,
	    SPAWN_SCRUB_MAX + 1), -1);
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_NETRC, big,
	    SPAWN_SCRUB_MAX), 0);
	free(big);
	assert_int_equal(spawn_scrub(SPAWN_SCRUB_NPMRC, buf, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npmrc),
		cmocka_unit_test(test_pypirc_cargo),
		cmocka_unit_test(test_netrc),
		cmocka_unit_test(test_gitcred),
		cmocka_unit_test(test_gh_docker),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
