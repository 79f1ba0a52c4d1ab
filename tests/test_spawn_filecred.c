/*
 * test_spawn_filecred: the settings files' secrets bound to the hosts
 * their files name (spawn_filecred.c): only hosts the run's allowlist
 * covers (on the file's port), only values gatekeeperd carries, no more
 * than the cage's credentials left; each bound one's random placeholder
 * written over the fixed one in the view; names KIND_N that no
 * --credential has; the note by file and host; nothing left once
 * cleared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"
#include "spawner/spawn_scrub.h"

/* Random bytes: 0, 1, 2, ... (62 and up wrap: no bias, 248.. skipped);
 * fail: none. */
struct counter {
	uint8_t		 next;
	bool		 fail;
};

static int
counting(void *arg, uint8_t *buf, size_t len)
{
	struct counter *c = arg;
	size_t i;

	if (c->fail)
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = c->next++ % 62;
	return 0;
}

struct fx {
	struct spawn_strv	 allow;
	struct spawn_filecreds	 fc;
	struct counter		 rnd;
	struct spawn_scrub_binds b;
	char			 orig[8192];
	char			 view[8192];
};

static struct fx *
fx_new(const char *const *allow)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	for (; *allow != NULL; allow++)
		assert_int_equal(spawn_strv_push(&fx->allow, *allow), 0);
	spawn_filecreds_init(&fx->fc, &fx->allow, NULL, 0, counting,
	    &fx->rnd);
	return fx;
}

static void
fx_free(struct fx *fx)
{
	spawn_filecreds_clear(&fx->fc);
	spawn_strv_clear(&fx->allow);
	free(fx);
}

/* Scrub text as f into fx->view and bind it as `file`, KIND_N. */
static void
scrub_bind(struct fx *fx, enum spawn_scrub_fmt f, const char *text,
    const char *file, const char *kind)
{
	size_t len = strlen(text);

	assert_true(len < sizeof(fx->view));
	memcpy(fx->orig, text, len + 1);
	memcpy(fx->view, text, len + 1);
	assert_true(spawn_scrub_report(f, fx->view, len, &fx->b) >= 0);
	assert_int_equal(spawn_filecreds_bind(&fx->fc, file, kind, fx->orig,
	    fx->view, &fx->b), 0);
	assert_int_equal(strlen(fx->view), len);
}

/* Credential i: name, value (a secret of the file), its hosts. */
static void
cred_is(const struct fx *fx, size_t i, const char *name, const char *value,
    const char *hosts)
{
	const struct spawn_cred *c = &fx->fc.c[i];
	char got[512] = "";
	size_t h;

	assert_true(i < fx->fc.n);
	assert_string_equal(c->name, name);
	assert_string_equal(c->value, value);
	assert_int_equal(c->len, strlen(value));
	assert_int_equal(strlen(c->placeholder), c->len);
	assert_true(strcmp(c->placeholder, value) != 0);
	/* the view holds the placeholder where the value was */
	assert_non_null(strstr(fx->view, c->placeholder));
	assert_null(strstr(fx->view, value));
	for (h = 0; h < c->hosts.n; h++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
		    h > 0 ? " " : "", c->hosts.v[h]);
	assert_string_equal(got, hosts);
}

static void
test_allowlist(void **state)
{
	static const char *const allow[] = { "registry.npmjs.org:443",
	    "*.github.com", "npm.corp.example:443", NULL };
	struct fx *fx = fx_new(allow);
	char note[256];

	(void)state;
	scrub_bind(fx, SPAWN_SCRUB_NPMRC,
	    "@corp:registry=https://npm.corp.example:4873/\n"
	    "//registry.npmjs.org/:_authToken=npm_0123456789abcdefABCDEF\n"
	    "//npm.corp.example:4873/:_authToken=corp-token-1234\n"
	    "//other.example/:_authToken=other-token-1234\n"
	    "//x.example/:_auth=dXNlcjpwYXNzd29yZA==\n", "~/.npmrc", "NPMRC");
	/* the corp registry's port is not allowed, other.example not at
	 * all: their fixed placeholders stay */
	assert_int_equal(fx->fc.n, 1);
	cred_is(fx, 0, "NPMRC_1", "npm_0123456789abcdefABCDEF",
	    "registry.npmjs.org");
	assert_memory_equal(fx->fc.c[0].placeholder, "npm_ABCDEFGH", 12);
	assert_non_null(strstr(fx->view, ":_authToken=gkplaceholdergk\n"));
	assert_non_null(strstr(fx->view, ":_authToken=gkplaceholdergkp\n"));
	/* gh: github.com and its API, both under *.github.com */
	scrub_bind(fx, SPAWN_SCRUB_GHHOSTS, "github.com:\n"
	    "    oauth_token: gho_0123456789abcdef\n", "~/.config/gh/hosts.yml",
	    "GH");
	assert_int_equal(fx->fc.n, 2);
	cred_is(fx, 1, "GH_1", "gho_0123456789abcdef",
	    "github.com api.github.com");
	assert_true(spawn_filecreds_note(&fx->fc, note, sizeof(note)));
	assert_string_equal(note, "~/.npmrc (registry.npmjs.org), "
	    "~/.config/gh/hosts.yml (github.com, api.github.com)");
	fx_free(fx);
}

static void
test_partial_hosts(void **state)
{
	static const char *const allow[] = { "api.github.com", NULL };
	static const char *const none[] = { NULL };
	struct fx *fx = fx_new(allow);
	char note[64];

	(void)state;
	scrub_bind(fx, SPAWN_SCRUB_GHHOSTS, "github.com:\n"
	    "    oauth_token: gho_0123456789abcdef\n", "~/gh", "GH");
	cred_is(fx, 0, "GH_1", "gho_0123456789abcdef", "api.github.com");
	fx_free(fx);
	/* an empty allowlist covers nothing: no note */
	fx = fx_new(none);
	scrub_bind(fx, SPAWN_SCRUB_NETRC, "machine github.com password "
	    "s3cr3t-password\n", "~/.netrc", "NETRC");
	assert_int_equal(fx->fc.n, 0);
	assert_non_null(strstr(fx->view, "password gkplaceholdergk\n"));
	assert_false(spawn_filecreds_note(&fx->fc, note, sizeof(note)));
	assert_string_equal(note, "");
	fx_free(fx);
}

static void
test_values(void **state)
{
	static const char *const allow[] = { "*.corp.example", NULL };
	struct fx *fx = fx_new(allow);
	char text[8192], note[256];
	size_t n;

	(void)state;
	/* 7 bytes: too short for gatekeeperd; 8: carried; and the same
	 * secret twice is two credentials, with two placeholders */
	scrub_bind(fx, SPAWN_SCRUB_NETRC,
	    "machine a.corp.example password 1234567\n"
	    "machine b.corp.example password 12345678\n"
	    "machine c.corp.example password 12345678\n"
	    "machine B.corp.example password high\xc3\xa9-bytes\n",
	    "~/.netrc", "NETRC");
	assert_int_equal(fx->fc.n, 2);
	cred_is(fx, 0, "NETRC_1", "12345678", "b.corp.example");
	cred_is(fx, 1, "NETRC_2", "12345678", "c.corp.example");
	assert_true(strcmp(fx->fc.c[0].placeholder,
	    fx->fc.c[1].placeholder) != 0);
	assert_non_null(strstr(fx->view, "password gkplace\n"));
	assert_true(spawn_filecreds_note(&fx->fc, note, sizeof(note)));
	assert_string_equal(note, "~/.netrc (b.corp.example, "
	    "c.corp.example)");
	/* a line of 4096 bytes, the longest: its long value is bound */
	n = (size_t)snprintf(text, sizeof(text), "machine d.corp.example "
	    "password ");
	memset(text + n, 'x', 4096 - n);
	strcpy(text + 4096, "\n");
	scrub_bind(fx, SPAWN_SCRUB_NETRC, text, "~/.netrc", "NETRC");
	assert_int_equal(fx->fc.n, 3);
	assert_int_equal(fx->fc.c[2].len, 4096 - n);
	fx_free(fx);
}

static void
test_room_names(void **state)
{
	static const char *const allow[] = { "*.corp.example", NULL };
	struct spawn_cred creds[SPAWN_CRED_MAX];
	struct fx *fx = fx_new(allow);
	size_t i;

	(void)state;
	memset(creds, 0, sizeof(creds));
	for (i = 0; i < SPAWN_CRED_MAX; i++)
		snprintf(creds[i].name, sizeof(creds[i].name), "NETRC_%zu",
		    i == 0 ? (size_t)1 : i + 10);
	/* --credential NETRC_1 and 29 more: two are left */
	spawn_filecreds_init(&fx->fc, &fx->allow, creds, SPAWN_CRED_MAX - 2,
	    counting, &fx->rnd);
	scrub_bind(fx, SPAWN_SCRUB_NETRC,
	    "machine a.corp.example password pass-a-1234\n"
	    "machine b.corp.example password pass-b-1234\n"
	    "machine c.corp.example password pass-c-1234\n", "~/.netrc",
	    "NETRC");
	assert_int_equal(fx->fc.n, 2);
	cred_is(fx, 0, "NETRC_2", "pass-a-1234", "a.corp.example");
	cred_is(fx, 1, "NETRC_3", "pass-b-1234", "b.corp.example");
	assert_non_null(strstr(fx->view, "password gkplacehold\n"));
	fx_free(fx);
}

static void
test_no_random(void **state)
{
	static const char *const allow[] = { "*.corp.example", NULL };
	struct fx *fx = fx_new(allow);

	(void)state;
	fx->rnd.fail = true;
	scrub_bind(fx, SPAWN_SCRUB_NETRC, "machine a.corp.example password "
	    "pass-a-1234\n", "~/.netrc", "NETRC");
	assert_int_equal(fx->fc.n, 0);
	assert_non_null(strstr(fx->view, "password gkplacehold\n"));
	fx_free(fx);
}

static void
test_clear(void **state)
{
	static const char *const allow[] = { "*.corp.example", NULL };
	struct fx *fx = fx_new(allow);
	char note[64];

	(void)state;
	scrub_bind(fx, SPAWN_SCRUB_GITCRED,
	    "https://u:pass-a-1234@a.corp.example\n", "~/.git-credentials",
	    "GITCRED");
	cred_is(fx, 0, "GITCRED_1", "pass-a-1234", "a.corp.example");
	spawn_filecreds_clear(&fx->fc);
	assert_int_equal(fx->fc.n, 0);
	assert_null(fx->fc.c[0].value);
	assert_null(fx->fc.c[0].placeholder);
	assert_false(spawn_filecreds_note(&fx->fc, note, sizeof(note)));
	fx_free(fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_partial_hosts),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_room_names),
		cmocka_unit_test(test_no_random),
		cmocka_unit_test(test_clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
