/*
 * gk-run's tool caches (--cache) and the mount points they need, planned
 * against a real home directory made here (spawn_testutil.h):
 * spawn_resolve_mounts() with --dry-run (nothing is created), and once
 * for real (the private directories are); every project's own set, the
 * shared one, the name of a project's directory.
 */
#include <sys/stat.h>

#include <errno.h>
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
	char	 bin[300];	/* PATH: npm and python3, no other */
	char	*path;		/* PATH before */
	char	 proj[300];
	char	 priv[600];	/* proj's private caches */
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

/* HOME/.gk-run/cache/NAME-HASH of a project. */
static void
cache_dir_of(const struct fixture *fx, const char *project, char *out,
    size_t len)
{
	char key[128];

	assert_int_equal(spawn_cache_key(project, key, sizeof(key)), 0);
	assert_true(snprintf(out, len, "%s/.gk-run/cache/%s", fx->home, key) <
	    (int)len);
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
	cache_dir_of(fx, fx->proj, fx->priv, sizeof(fx->priv));
	/* the tools on PATH are the test's, not the machine's */
	snprintf(fx->bin, sizeof(fx->bin), "%s.bin", fx->home);
	assert_int_equal(spawn_mkdirs(fx->bin, 0755), 0);
	touch(fx->bin, "npm", false);
	snprintf(p, sizeof(p), "%s/npm", fx->bin);
	assert_int_equal(chmod(p, 0755), 0);
	touch(fx->bin, "python3", false);
	snprintf(p, sizeof(p), "%s/python3", fx->bin);
	assert_int_equal(chmod(p, 0755), 0);
	fx->path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", fx->bin, 1);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->path != NULL)
		setenv("PATH", fx->path, 1);
	else
		unsetenv("PATH");
	free(fx->path);
	spawn_test_home_remove(fx->home);
	spawn_test_home_remove(fx->bin);
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

/* A small file's text without its last newline (static). */
static const char *
slurp(const char *path)
{
	static char buf[1024];
	size_t n;
	FILE *f;

	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static void
test_private(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m, *home;
	struct plan pl;
	char want[700];

	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	/* ~/.npm: gk-run's own directory, bound writable */
	assert_non_null(m = at(fx, &pl, ".npm"));
	assert_int_equal(m->kind, SPAWN_MNT_BIND);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/proj-", fx->home);
	assert_true(strncmp(m->src, want, strlen(want)) == 0);
	snprintf(want, sizeof(want), "%s/.npm", fx->priv);
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

	/* for real: the private directories exist afterwards, 0700, with
	 * the project's path in .project */
	plan_for(fx, SPAWN_CACHE_PRIVATE, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.npm", fx->priv);
	assert_int_equal(access(want, F_OK), 0);
	snprintf(want, sizeof(want), "%s/.cargo/registry", fx->priv);
	assert_int_equal(access(want, F_OK), 0);
	snprintf(want, sizeof(want), "%s/.project", fx->priv);
	assert_string_equal(slurp(want), fx->proj);
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

	/* started from HOME, writable: no SYNTH there (yarn's cache: yarn
	 * on PATH) */
	touch(fx->bin, "yarn", false);
	snprintf(p, sizeof(p), "%s/yarn", fx->bin);
	assert_int_equal(chmod(p, 0755), 0);
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, fx->home, &pl);
	assert_int_equal(at(fx, &pl, "")->kind, SPAWN_MNT_RW);
	assert_int_equal(at(fx, &pl, ".yarn/berry")->kind, SPAWN_MNT_BIND);
	spawn_mounts_free(pl.m, pl.n);
}

/* Which places the host lacks get a mount point: their tool's used on
 * this host (never from what a sandbox could write). */
static void
test_wanted(void **state)
{
	struct fixture *fx = *state;
	const char *h = fx->home;
	struct plan pl;
	char back[700], p[700];

	/* nothing says gradle is used: no mount point, no SYNTH for it */
	assert_false(spawn_cache_wanted(h, ".gradle/caches"));
	assert_false(spawn_cache_wanted(h, ".bun/install/cache"));
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	assert_null(at(fx, &pl, ".gradle/caches"));
	assert_null(at(fx, &pl, "go/pkg/mod"));
	assert_non_null(at(fx, &pl, ".npm"));		/* npm on PATH */
	assert_non_null(at(fx, &pl, ".cargo/registry"));	/* ~/.cargo */
	spawn_mounts_free(pl.m, pl.n);
	/* the project's files and the private directory are the sandbox's
	 * to write: they decide nothing */
	touch(fx->proj, "build.gradle.kts", false);
	snprintf(back, sizeof(back), "%s/.gradle/caches/modules-2", fx->priv);
	assert_int_equal(spawn_mkdirs(back, 0700), 0);
	assert_false(spawn_cache_wanted(h, ".gradle/caches"));
	/* the program on PATH (an executable); the tool's own directory */
	touch(fx->bin, "go", false);
	snprintf(p, sizeof(p), "%s/go", fx->bin);
	assert_false(spawn_cache_wanted(h, "go/pkg/mod"));
	assert_int_equal(chmod(p, 0755), 0);
	assert_true(spawn_cache_wanted(h, "go/pkg/mod"));
	touch(h, ".bun", true);
	assert_true(spawn_cache_wanted(h, ".bun/install/cache"));
	/* a place the host has, or one gk-run does not know: always */
	touch(h, ".yarn/berry", true);
	assert_true(spawn_cache_wanted(h, ".yarn/berry"));
	assert_true(spawn_cache_wanted(h, ".cache"));
}

/* The name of a project's directory: readable, the path's hash. */
static void
test_key(void **state)
{
	static const struct {
		const char	*project;
		const char	*want;
	} cases[] = {
		{ "/", "root-8a5edab282632443" },
		{ "/home/alice/proj", "proj-2af6b4a70d443ffd" },
		{ "/home/alice/.hidden", "_hidden-7f235fe5c4026a5f" },
		{ "/srv/a b\nc", "a_b_c-487c72d134729bda" },
		/* a long name is cut at SPAWN_CACHE_NAME_MAX */
		{ "/srv/0123456789012345678901234567890123456789abc",
		    "0123456789012345678901234567890123456789"
		    "-f6bcefa4e217d838" },
	};
	char out[128];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(spawn_cache_key(cases[i].project, out,
		    sizeof(out)), 0);
		assert_string_equal(out, cases[i].want);
	}
	/* the room for it, exactly, and one byte less */
	n = strlen(cases[1].want) + 1;
	assert_int_equal(spawn_cache_key(cases[1].project, out, n), 0);
	assert_int_equal(spawn_cache_key(cases[1].project, out, n - 1), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(spawn_cache_key("proj", out, sizeof(out)), -1);
	assert_int_equal(errno, EINVAL);
	/* one byte apart, two names */
	assert_int_equal(spawn_cache_key("/home/alice/proj2", out,
	    sizeof(out)), 0);
	assert_string_not_equal(out, cases[1].want);
}

/* The source of the mount at HOME/rel (a BIND). */
static const char *
src_of(const struct fixture *fx, const struct plan *pl, const char *rel)
{
	const struct spawn_mount *m = at(fx, pl, rel);

	assert_non_null(m);
	assert_int_equal(m->kind, SPAWN_MNT_BIND);
	return m->src;
}

/* Two projects, two sets; --cache shared, one; $GK_RUN_CACHE's root. */
static void
test_projects(void **state)
{
	struct fixture *fx = *state;
	char other[512], priv2[600], want[700];
	struct plan pl;
	size_t i;

	touch(fx->home, "proj2", true);
	snprintf(other, sizeof(other), "%s/proj2", fx->home);
	cache_dir_of(fx, other, priv2, sizeof(priv2));
	plan_for(fx, SPAWN_CACHE_PRIVATE, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.local/lib", fx->priv);
	assert_string_equal(src_of(fx, &pl, ".local/lib"), want);
	spawn_mounts_free(pl.m, pl.n);
	plan_for(fx, SPAWN_CACHE_PRIVATE, false, NULL, other, &pl);
	snprintf(want, sizeof(want), "%s/.local/lib", priv2);
	assert_string_equal(src_of(fx, &pl, ".local/lib"), want);
	/* nothing of the first project's is bound */
	for (i = 0; i < pl.n; i++)
		assert_true(pl.m[i].src == NULL ||
		    strncmp(pl.m[i].src, fx->priv, strlen(fx->priv)) != 0);
	spawn_mounts_free(pl.m, pl.n);
	snprintf(want, sizeof(want), "%s/.project", priv2);
	assert_string_equal(slurp(want), other);

	/* shared: the same set from both, no .project */
	plan_for(fx, SPAWN_CACHE_SHARED, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/shared/.npm",
	    fx->home);
	assert_string_equal(src_of(fx, &pl, ".npm"), want);
	assert_int_equal(at(fx, &pl, ".gk-run")->kind, SPAWN_MNT_HIDE_DIR);
	spawn_mounts_free(pl.m, pl.n);
	plan_for(fx, SPAWN_CACHE_SHARED, true, NULL, other, &pl);
	assert_string_equal(src_of(fx, &pl, ".npm"), want);
	spawn_mounts_free(pl.m, pl.n);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/shared/.project",
	    fx->home);
	assert_int_equal(access(want, F_OK), -1);

	/* $GK_RUN_CACHE: the projects' sets under it */
	snprintf(want, sizeof(want), "%s/ci-cache", fx->home);
	setenv("GK_RUN_CACHE", want, 1);
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	unsetenv("GK_RUN_CACHE");
	snprintf(want, sizeof(want), "%s/ci-cache/%s/.npm", fx->home,
	    strrchr(fx->priv, '/') + 1);
	assert_string_equal(src_of(fx, &pl, ".npm"), want);
	spawn_mounts_free(pl.m, pl.n);
}

/* spawn_resolve_mounts for real from proj, which fails: its message. */
static const char *
plan_fails(struct fixture *fx)
{
	static char err[SPAWN_ERRLEN];
	struct spawn_mount *m;
	struct spawn_opts o;
	size_t n;

	memset(&o, 0, sizeof(o));
	o.fs = SPAWN_FS_SANDBOX;
	o.cache = SPAWN_CACHE_PRIVATE;
	o.control = "/nonexistent/gk-test/control.sock";
	assert_int_equal(spawn_resolve_mounts(&o, fx->proj, &m, &n, err,
	    sizeof(err)), -1);
	return err;
}

/* A project's directory whose .project names another, or is a link:
 * refused, never used. */
static void
test_claim(void **state)
{
	struct fixture *fx = *state;
	char p[700];
	FILE *f;

	snprintf(p, sizeof(p), "%s/.project", fx->priv);
	assert_int_equal(spawn_mkdirs(fx->priv, 0700), 0);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "/home/mallory/proj\n");
	fclose(f);
	assert_non_null(strstr(plan_fails(fx), "holds the caches of "
	    "/home/mallory/proj, not of this project"));
	/* a prefix of the path is another path */
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "%.*s\n", (int)strlen(fx->proj) - 1, fx->proj);
	fclose(f);
	assert_non_null(strstr(plan_fails(fx), "holds the caches of "));
	/* a link is not followed */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink("/etc/hostname", p), 0);
	assert_non_null(strstr(plan_fails(fx), "cannot make or read"));
}

/* The one set of before, at the root: moved to old/ once, unused. */
static void
test_old_layout(void **state)
{
	struct fixture *fx = *state;
	char want[700];
	struct plan pl;

	touch(fx->home, ".gk-run/cache/.npm/_cacache", true);
	touch(fx->home, ".gk-run/cache/.local/lib/python3/site-packages",
	    true);
	touch(fx->home, ".gk-run/cache/.local/lib/python3/site-packages/"
	    "x.pth", false);
	/* --dry-run moves nothing and shows the project's */
	plan_for(fx, SPAWN_CACHE_PRIVATE, true, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.local/lib", fx->priv);
	assert_string_equal(src_of(fx, &pl, ".local/lib"), want);
	spawn_mounts_free(pl.m, pl.n);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.npm", fx->home);
	assert_int_equal(access(want, F_OK), 0);

	plan_for(fx, SPAWN_CACHE_PRIVATE, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.local/lib", fx->priv);
	assert_string_equal(src_of(fx, &pl, ".local/lib"), want);
	spawn_mounts_free(pl.m, pl.n);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.npm", fx->home);
	assert_int_equal(access(want, F_OK), -1);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/.local", fx->home);
	assert_int_equal(access(want, F_OK), -1);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/old/.npm/_cacache",
	    fx->home);
	assert_int_equal(access(want, F_OK), 0);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/old/.local/lib/"
	    "python3/site-packages/x.pth", fx->home);
	assert_int_equal(access(want, F_OK), 0);
	/* shared is a new set, not the old one */
	plan_for(fx, SPAWN_CACHE_SHARED, false, NULL, NULL, &pl);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/shared/.local/lib",
	    fx->home);
	assert_string_equal(src_of(fx, &pl, ".local/lib"), want);
	spawn_mounts_free(pl.m, pl.n);
	snprintf(want, sizeof(want), "%s/.gk-run/cache/shared/.local/lib/"
	    "python3", fx->home);
	assert_int_equal(access(want, F_OK), -1);
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
		cmocka_unit_test_setup_teardown(test_wanted, setup, teardown),
		cmocka_unit_test(test_key),
		cmocka_unit_test_setup_teardown(test_projects, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_layout, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
