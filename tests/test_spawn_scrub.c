/*
 * test_spawn_scrub: settings files shown inside with their secrets
 * replaced (spawn_scrub.c): what is replaced, what stays, the shape of a
 * placeholder, and what makes a file be hidden whole instead; which
 * secrets are reported with the host their file names, and which not.
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

/* ---- reports: the secrets bound to the hosts their files name ------- */

static struct spawn_scrub_binds binds;
static char orig[8192];

/* spawn_scrub_report over text; the count. The text before is in orig,
 * the result in the returned buffer (static). */
static const char *
report(enum spawn_scrub_fmt f, const char *text, int *n)
{
	static char buf[8192];
	size_t len = strlen(text);

	assert_true(len < sizeof(buf));
	memcpy(orig, text, len + 1);
	memcpy(buf, text, len + 1);
	memset(&binds, 0xa5, sizeof(binds));	/* emptied by the call */
	*n = spawn_scrub_report(f, buf, len, &binds);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* Report i is `secret` (in orig) for host (and host2, or NULL) on port,
 * labelled label; the output holds a placeholder there. */
static void
bound(const char *out, size_t i, const char *secret, const char *host,
    const char *host2, uint16_t port, const char *label)
{
	const struct spawn_scrub_bind *b = &binds.b[i];
	size_t len = strlen(secret);
	char ph[256];

	assert_true(i < binds.n);
	assert_int_equal(b->len, len);
	assert_memory_equal(orig + b->off, secret, len);
	memcpy(ph, secret, len);
	spawn_scrub_placeholder(ph, len);
	assert_memory_equal(out + b->off, ph, len);
	assert_string_equal(b->host[0], host);
	assert_int_equal(b->nhosts, host2 != NULL ? 2 : 1);
	if (host2 != NULL)
		assert_string_equal(b->host[1], host2);
	assert_int_equal(b->port, port);
	assert_string_equal(b->label, label);
}

static void
test_report_npmrc(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = report(SPAWN_SCRUB_NPMRC,
	    "@corp:registry=https://npm.corp.example/\n"
	    "//registry.npmjs.org/:_authToken=npm_0123456789abcdefABCDEF\n"
	    "//NPM.Corp.Example:4873/a/b/:_authToken = \"corp-tok-1234\"\n"
	    "_authToken=bare-token-5678\n"
	    "//old.example/:_auth=dXNlcjpwYXNzd29yZA==\n"
	    "//old.example/:_password=cGFzc3dvcmQx\n"
	    "//10.0.0.1/:_authToken=ip-token-1234\n"
	    "//x.example:99999/:_authToken=badport-1234\n"
	    "//y.example:_authToken=noslash-1234\n"
	    "//e.example/:_authToken=esc\\aped-1234\n"
	    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n", &n);
	assert_int_equal(n, 9);
	assert_int_equal(binds.n, 3);
	assert_int_equal(binds.more, 0);
	bound(out, 0, "npm_0123456789abcdefABCDEF", "registry.npmjs.org", NULL,
	    443, "_authToken");
	/* the host as gk_name writes it, the port the key's */
	bound(out, 1, "corp-tok-1234", "npm.corp.example", NULL, 4873,
	    "_authToken");
	/* a bare _authToken: the registry's, by default npmjs' */
	bound(out, 2, "bare-token-5678", "registry.npmjs.org", NULL, 443,
	    "_authToken");
	/* a registry= of its own, the last one; plain HTTP binds nothing */
	out = report(SPAWN_SCRUB_NPMRC, "_authToken=bare-token-5678\n"
	    "registry=http://first.example/\n"
	    "registry = \"https://u@Reg.Example:8443/npm/\"\n", &n);
	assert_int_equal(n, 1);
	assert_int_equal(binds.n, 1);
	bound(out, 0, "bare-token-5678", "reg.example", NULL, 8443,
	    "_authToken");
	out = report(SPAWN_SCRUB_NPMRC, "registry=http://reg.example/\n"
	    "_authToken=bare-token-5678\n", &n);
	assert_int_equal(n, 1);
	assert_int_equal(binds.n, 0);
}

static void
test_report_netrc_gitcred(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = report(SPAWN_SCRUB_NETRC, "machine GitHub.com login me\n"
	    "  password ghp_0123456789abcdefghij account acct-1234\n"
	    "machine password password \"quoted-1234\"\n"
	    "machine 192.0.2.1 password ip-pass-1234\n"
	    "machine e.example password esc\\aped-1234\n"
	    "default login anonymous password guest-1234\n", &n);
	assert_int_equal(n, 6);
	assert_int_equal(binds.n, 2);
	bound(out, 0, "ghp_0123456789abcdefghij", "github.com", NULL, 443,
	    "password");
	/* a machine's name is not a keyword; quotes are not the value's */
	bound(out, 1, "quoted-1234", "password", NULL, 443, "password");
	assert_null(strstr(out, "guest-1234"));
	assert_null(strstr(out, "acct-1234"));
	out = report(SPAWN_SCRUB_GITCRED,
	    "https://me:ghp_0123456789abcdefghij@github.com\n"
	    "HTTPS://oauth2:glpat-abcdefghij@GitLab.example:8443/group\n"
	    "http://u:plain-pass-1234@h.example\n"
	    "https://u:p%40ss-1234@h.example/path\n"
	    "https://u:ip-pass-1234@192.0.2.1/\n", &n);
	assert_int_equal(n, 5);
	assert_int_equal(binds.n, 2);
	bound(out, 0, "ghp_0123456789abcdefghij", "github.com", NULL, 443,
	    "password");
	bound(out, 1, "glpat-abcdefghij", "gitlab.example", NULL, 8443,
	    "password");
}

static void
test_report_pypirc_cargo(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = report(SPAWN_SCRUB_PYPIRC, "[distutils]\nindex-servers =\n"
	    "    pypi\n    corp\n"
	    "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcC\n"
	    "[testpypi]\npassword: pypi-testtoken1234\n"
	    "[corp]\npassword=corp-pass-1234\n"
	    "repository = https://pypi.corp.example/legacy/\n"
	    "[plain]\nrepository: http://pypi.plain.example/\n"
	    "password = plain-pass-1234\n"
	    "[other]\npassword = other-pass-1234\n", &n);
	assert_int_equal(n, 5);
	assert_int_equal(binds.n, 3);
	bound(out, 0, "pypi-AgEIcHlwaS5vcmcC", "upload.pypi.org", NULL, 443,
	    "password");
	/* "key: value" is configparser's too */
	bound(out, 1, "pypi-testtoken1234", "test.pypi.org", NULL, 443,
	    "password");
	/* the repository may come after the password */
	bound(out, 2, "corp-pass-1234", "pypi.corp.example", NULL, 443,
	    "password");
	out = report(SPAWN_SCRUB_CARGO, "token = \"top-level-1234\"\n"
	    "[registry]\ntoken = \"cio0123456789\"\n"
	    "[registries.corp]\ntoken = 'corp-tok-1234'\n", &n);
	assert_int_equal(n, 3);
	assert_int_equal(binds.n, 1);
	bound(out, 0, "cio0123456789", "crates.io", NULL, 443, "token");
}

static void
test_report_gh_docker(void **state)
{
	const char *out;
	int n;

	(void)state;
	out = report(SPAWN_SCRUB_GHHOSTS, "oauth_token: top-level-1234\n"
	    "github.com:\n    users:\n        me:\n"
	    "            oauth_token: gho_0123456789abcdef\n"
	    "    oauth_token: gho_fedcba9876543210\n    user: me\n"
	    "GHE.Corp:\n    token: \"ghe-tok-1234\"\n"
	    "note: x\n    oauth_token: after-note-1234\n", &n);
	assert_int_equal(n, 5);
	assert_int_equal(binds.n, 3);
	bound(out, 0, "gho_0123456789abcdef", "github.com", "api.github.com",
	    443, "oauth_token");
	bound(out, 1, "gho_fedcba9876543210", "github.com", "api.github.com",
	    443, "oauth_token");
	bound(out, 2, "ghe-tok-1234", "ghe.corp", NULL, 443, "token");
	/* base64 with the user name: replaced, never reported */
	report(SPAWN_SCRUB_DOCKER, "{\"auths\":{\"ghcr.io\":{\"auth\":"
	    "\"dXNlcjpTRUNSRVQ=\",\"identitytoken\":\"tok-1234\"}}}", &n);
	assert_int_equal(n, 2);
	assert_int_equal(binds.n, 0);
}

static void
test_report_bounds(void **state)
{
	char text[4096], *p = text;
	const char *out;
	int i, n;

	(void)state;
	for (i = 0; i < SPAWN_SCRUB_BIND_MAX + 8; i++)
		p += sprintf(p, "machine h%d.example password pass-%04d\n", i,
		    i);
	out = report(SPAWN_SCRUB_NETRC, text, &n);
	assert_int_equal(n, SPAWN_SCRUB_BIND_MAX + 8);
	assert_int_equal(binds.n, SPAWN_SCRUB_BIND_MAX);
	assert_int_equal(binds.more, 8);
	bound(out, SPAWN_SCRUB_BIND_MAX - 1, "pass-0031", "h31.example", NULL,
	    443, "password");
	/* refused: nothing reported */
	memcpy(orig, "a\0b", 3);
	assert_int_equal(spawn_scrub_report(SPAWN_SCRUB_NETRC, orig, 3,
	    &binds), -1);
	assert_int_equal(binds.n, 0);
	assert_int_equal(binds.more, 0);
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
		cmocka_unit_test(test_report_npmrc),
		cmocka_unit_test(test_report_netrc_gitcred),
		cmocka_unit_test(test_report_pypirc_cargo),
		cmocka_unit_test(test_report_gh_docker),
		cmocka_unit_test(test_report_bounds),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
