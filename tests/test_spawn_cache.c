/*
 * gk-run's tool caches (--cache) and the mount points they need, planned
 * against a real home directory made here (spawn_testutil.h): spawn_resolve_mounts() with --dry-run (nothing is created), and
 * once for real (the private directories are).
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawner/spawn_int.h"
#include "tests/spawn_testutil.h"

struct fixture {
	char	 home[256];
	char	 proj[300];
	char	*cwd;
};

static void
touch(const char *home, const char *rel, bool dir)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", home, rel);
	if (dir) {
		assert_int_equal(spawn_mkdirs(p, 0755), 0);
		return;
	}
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
}

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char p[512];

	assert_non_null(fx);
	spawn_test_home("gk-cache-test", fx->home, sizeof(fx->home));
	/* a home like a developer's: some tools there, no npm cache */
	touch(fx->home, ".bashrc", false);
	touch(fx->home, ".cargo/bin", true);
	touch(fx->home, ".cargo/env", false);
	touch(fx->home, ".ssh", true);
	touch(fx->home, ".local/bin", true);
	touch(fx->home, ".local/bin/mytool", false);
	touch(fx->home, "proj", true);
	snprintf(p, sizeof(p), "%s/.profile", fx->home);
	assert_int_equal(symlink(".bashrc", p), 0);
	snprintf(fx->proj, sizeof(fx->proj), "%s/proj", fx->home);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	spawn_test_home_remove(fx->home);
	free(fx);
	return 0;
}

struct plan {
	struct spawn_mount	*m;
	size_t			 n;
};

static void
plan_for(struct fixture *fx, enum spawn_cache cache, bool dry_run,
    const char *rw, const char *cwd, struct plan *pl)
{
	struct spawn_optpath op = { SPAWN_PATH_RW, rw };
	struct spawn_opts o;
	char err[SPAWN_ERRLEN];

	memset(&o, 0, sizeof(o));
	o.fs = SPAWN_FS_SANDBOX;
	o.cache = cache;
	o.dry_run = dry_run;
	o.control = "/nonexistent/gk-test/control.sock";
	if (rw != NULL) {
		o.paths = &op;
		o.npaths = 1;
	}
	err[0] = '\0';
	assert_int_equal(spawn_resolve_mounts(&o, cwd != NULL ? cwd :
	    fx->proj, &pl->m, &pl->n, err, sizeof(err)), 0);
}

/* The mount at HOME/rel, or NULL. */
static const struct spawn_mount *
at(const struct fixture *fx, const struct plan *pl, const char *rel)
{
	char p[512];
	size_t i;

	snprintf(p, sizeof(p), "%s%s%s", fx->home, rel[0] != '\0' ? "/" : "",
	    rel);
	for (i = 0; i < pl->n; i++)
		if (strcmp(pl->m[i].path, p) == 0)
			return &pl->m[i];
	return NULL;
}

static size_t
index_of(const struct plan *pl, const struct spawn_mount *m)
{
	return (size_t)(m - pl->m);
}

static void
test_private(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m, *home;
	struct plan pl;
	char want[512];

	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	/* ~/.npm: gk-run's own directory, bound writable */
	assert_non_null(m = at(fx, &pl, ".npm"));
	assert_int_equal(m->kind, SPAWN_MNT_BIND);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.npm", fx->home);
	assert_string_equal(m->src, want);
	/* the host lacks it: HOME is a SYNTH with its entries */
	assert_non_null(home = at(fx, &pl, ""));
	assert_int_equal(home->kind, SPAWN_MNT_SYNTH);
	assert_true(index_of(&pl, home) < index_of(&pl, m));
	assert_non_null(m = at(fx, &pl, ".bashrc"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	assert_non_null(m = at(fx, &pl, ".profile"));
	assert_int_equal(m->kind, SPAWN_MNT_SYMLINK);
	assert_string_equal(m->src, ".bashrc");
	/* ~/.cargo exists without registry/: a SYNTH of its own */
	assert_non_null(m = at(fx, &pl, ".cargo"));
	assert_int_equal(m->kind, SPAWN_MNT_SYNTH);
	assert_non_null(m = at(fx, &pl, ".cargo/bin"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	assert_non_null(m = at(fx, &pl, ".cargo/registry"));
	assert_int_equal(m->kind, SPAWN_MNT_BIND);
	/* the secret store stays hidden, the cwd writable, gk-run's own
	 * directory hidden */
	assert_int_equal(at(fx, &pl, ".ssh")->kind, SPAWN_MNT_HIDE_DIR);
	assert_int_equal(at(fx, &pl, "proj")->kind, SPAWN_MNT_RW);
	assert_int_equal(at(fx, &pl, ".gk-run")->kind, SPAWN_MNT_HIDE_DIR);
	/* ~/.local/bin: private, the host's programs bound on top */
	assert_int_equal(at(fx, &pl, ".local/bin")->kind, SPAWN_MNT_BIND);
	assert_non_null(m = at(fx, &pl, ".local/bin/mytool"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	assert_true(index_of(&pl, at(fx, &pl, ".local/bin")) <
	    index_of(&pl, m));
	/* ~/.local exists, lib/ does not: a SYNTH */
	assert_int_equal(at(fx, &pl, ".local")->kind, SPAWN_MNT_SYNTH);
	assert_int_equal(at(fx, &pl, ".local/lib")->kind, SPAWN_MNT_BIND);
	/* --dry-run created nothing */
	snprintf(want, sizeof(want), "%s/.gk-run", fx->home);
	assert_int_equal(access(want, F_OK), -1);
	spawn_mounts_free(pl.m, pl.n);

	/* for real: the private directories exist afterwards, 0700 */
	plan_for(fx, SPAWN_CACHE_PRIVATE, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.npm", fx->home);
	assert_int_equal(access(want, F_OK), 0);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.cargo/registry",
	    fx->home);
	assert_int_equal(access(want, F_OK), 0);
	spawn_mounts_free(pl.m, pl.n);
}

static void
test_tmp_host(void **state)
{
	struct fixture *fx = *state;
	struct plan pl;
	char p[512];

	plan_for(fx, SPAWN_CACHE_TMP, true, NULL, NULL, &pl);
	assert_int_equal(at(fx, &pl, ".npm")->kind, SPAWN_MNT_TMPFS);
	assert_int_equal(at(fx, &pl, ".local/bin")->kind, SPAWN_MNT_SYNTH);
	assert_int_equal(at(fx, &pl, ".local/bin/mytool")->kind,
	    SPAWN_MNT_RO);
	assert_null(at(fx, &pl, ".gk-run"));
	spawn_mounts_free(pl.m, pl.n);

	/* host: the host's own directories, made where missing */
	plan_for(fx, SPAWN_CACHE_HOST, false, NULL, NULL, &pl);
	assert_int_equal(at(fx, &pl, ".npm")->kind, SPAWN_MNT_RW);
	assert_int_equal(at(fx, &pl, ".local/bin")->kind, SPAWN_MNT_RW);
	snprintf(p, sizeof(p), "%s/.npm", fx->home);
	assert_int_equal(access(p, F_OK), 0);
	assert_null(at(fx, &pl, ""));	/* nothing missing: no SYNTH */
	spawn_mounts_free(pl.m, pl.n);
}

static void
test_explicit_and_odd(void **state)
{
	struct fixture *fx = *state;
	struct plan pl;
	char p[512];

	/* --rw of a cache path: the user's choice stands */
	snprintf(p, sizeof(p), "%s/.npm", fx->home);
	plan_for(fx, SPAWN_CACHE_PRIVATE, false, p, NULL, &pl);
	assert_int_equal(at(fx, &pl, ".npm")->kind, SPAWN_MNT_RW);
	assert_false(at(fx, &pl, ".npm")->implicit);
	spawn_mounts_free(pl.m, pl.n);
	/* ... and it was created (a directory) */
	assert_int_equal(access(p, F_OK), 0);

	/* a file where a cache directory goes: left alone */
	touch(fx->home, ".m2", false);
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	assert_null(at(fx, &pl, ".m2/repository"));
	assert_int_equal(at(fx, &pl, ".m2")->kind, SPAWN_MNT_RO);
	spawn_mounts_free(pl.m, pl.n);

	/* started from HOME, writable: no SYNTH there */
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, fx->home, &pl);
	assert_int_equal(at(fx, &pl, "")->kind, SPAWN_MNT_RW);
	assert_int_equal(at(fx, &pl, ".yarn/berry")->kind, SPAWN_MNT_BIND);
	spawn_mounts_free(pl.m, pl.n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_private, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tmp_host, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_explicit_and_odd, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
