/*
 * gk-run's guards on the git files that make the host run code, planned
 * against real directories made here (spawn_testutil.h; it is HOME too,
 * so the search for a project stops there): a repository, a worktree
 * whose repository is elsewhere, a plain directory; Linux and macOS.
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
	char	 root[256];
};

struct plan {
	struct spawn_mount	*m;
	size_t			 n;
};

/* root/rel (in a static buffer). */
static const char *
path_of(const struct fixture *fx, const char *rel)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
	return p;
}

/* root/rel: a directory (dir), else a file holding text. */
static void
make(const struct fixture *fx, const char *rel, bool dir, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
	if (dir) {
		assert_int_equal(spawn_mkdirs(p, 0755), 0);
		return;
	}
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char text[600];

	assert_non_null(fx);
	spawn_test_home("gk-guard-test", fx->root, sizeof(fx->root));
	/* a repository (no info/, no config.worktree) */
	make(fx, "repo/.git/hooks", true, NULL);
	make(fx, "repo/.git/objects", true, NULL);
	make(fx, "repo/.git/config", false, "[core]\n");
	/* a worktree of it, elsewhere */
	make(fx, "repo/.git/worktrees/wt", true, NULL);
	make(fx, "repo/.git/worktrees/wt/commondir", false, "../..\n");
	make(fx, "repo/.git/HEAD", false, "ref: refs/heads/main\n");
	/* the repository vouches for it: its gitdir names the .git file */
	snprintf(text, sizeof(text), "%s/wt/.git\n", fx->root);
	make(fx, "repo/.git/worktrees/wt/gitdir", false, text);
	make(fx, "wt", true, NULL);
	snprintf(text, sizeof(text), "gitdir: %s/repo/.git/worktrees/wt\n",
	    fx->root);
	make(fx, "wt/.git", false, text);
	make(fx, "plain", true, NULL);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	spawn_test_home_remove(fx->root);
	free(fx);
	return 0;
}

/* The plan for a run from root/cwd (with --dry-run, nothing is made on
 * the host). */
static void
plan_dry(const struct fixture *fx, const char *cwd, enum spawn_platform pf,
    struct plan *pl, bool dry)
{
	struct spawn_opts o;
	char err[SPAWN_ERRLEN], p[512];

	memset(&o, 0, sizeof(o));
	o.fs = SPAWN_FS_SANDBOX;
	o.platform = pf;
	o.dry_run = dry;
	o.control = "/nonexistent/gk-test/control.sock";
	snprintf(p, sizeof(p), "%s/%s", fx->root, cwd);
	err[0] = '\0';
	assert_int_equal(spawn_resolve_mounts(&o, p, &pl->m, &pl->n, err,
	    sizeof(err)), 0);
}

static void
plan_for(const struct fixture *fx, const char *cwd, enum spawn_platform pf,
    struct plan *pl)
{
	plan_dry(fx, cwd, pf, pl, true);
}

/* The mount at root/rel, or NULL. */
static const struct spawn_mount *
at(const struct fixture *fx, const struct plan *pl, const char *rel)
{
	char p[512];
	size_t i;

	snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
	for (i = 0; i < pl->n; i++)
		if (strcmp(pl->m[i].path, p) == 0)
			return &pl->m[i];
	return NULL;
}

static void
test_repository(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m;
	struct plan pl;

	plan_for(fx, "repo", SPAWN_PLATFORM_LINUX, &pl);
	/* .git: writable, but a mount point (it cannot be moved away) */
	assert_non_null(m = at(fx, &pl, "repo/.git"));
	assert_int_equal(m->kind, SPAWN_MNT_RW);
	assert_false(m->placeholder);
	/* an empty one (maybe another run's placeholder): a fresh empty
	 * read-only directory over it, not a bind of it */
	assert_int_equal(at(fx, &pl, "repo/.git/hooks")->kind,
	    SPAWN_MNT_HIDE_DIR);
	assert_false(at(fx, &pl, "repo/.git/hooks")->placeholder);
	assert_int_equal(at(fx, &pl, "repo/.git/config")->kind,
	    SPAWN_MNT_RO);
	/* missing: placeholders */
	assert_non_null(m = at(fx, &pl, "repo/.git/info"));
	assert_int_equal(m->kind, SPAWN_MNT_HIDE_DIR);
	assert_true(m->placeholder);
	assert_non_null(m = at(fx, &pl, "repo/.git/config.worktree"));
	assert_int_equal(m->kind, SPAWN_MNT_HIDE_FILE);
	assert_true(m->placeholder);
	/* in the work tree: a directory, which git add -A ignores */
	assert_int_equal(at(fx, &pl, "repo/.envrc")->kind,
	    SPAWN_MNT_HIDE_DIR);
	spawn_mounts_free(pl.m, pl.n);
}

static void
test_worktree(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m;
	struct plan pl;

	plan_for(fx, "wt", SPAWN_PLATFORM_LINUX, &pl);
	/* the .git file names the git directory: read-only */
	assert_non_null(m = at(fx, &pl, "wt/.git"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	/* both git directories writable, guarded */
	assert_non_null(m = at(fx, &pl, "repo/.git"));
	assert_int_equal(m->kind, SPAWN_MNT_RW);
	assert_true(m->gitdir);
	assert_non_null(m = at(fx, &pl, "repo/.git/worktrees/wt"));
	assert_int_equal(m->kind, SPAWN_MNT_RW);
	assert_true(m->gitdir);
	assert_false(m->place);
	/* an empty one (maybe another run's placeholder): a fresh empty
	 * read-only directory over it, not a bind of it */
	assert_int_equal(at(fx, &pl, "repo/.git/hooks")->kind,
	    SPAWN_MNT_HIDE_DIR);
	assert_false(at(fx, &pl, "repo/.git/hooks")->placeholder);
	assert_int_equal(at(fx, &pl, "repo/.git/config")->kind,
	    SPAWN_MNT_RO);
	/* the worktree's commondir names the common directory: read-only;
	 * its config.worktree: a placeholder */
	assert_int_equal(at(fx, &pl, "repo/.git/worktrees/wt/commondir")->kind,
	    SPAWN_MNT_RO);
	assert_non_null(m = at(fx, &pl,
	    "repo/.git/worktrees/wt/config.worktree"));
	assert_int_equal(m->kind, SPAWN_MNT_HIDE_FILE);
	assert_true(m->placeholder);
	/* the worktree's back-link to its .git file: read-only */
	assert_int_equal(at(fx, &pl, "repo/.git/worktrees/wt/gitdir")->kind,
	    SPAWN_MNT_RO);
	/* a repository lacking commondir: one holding "." (git dies on an
	 * empty one), read-only; --dry-run makes nothing */
	assert_non_null(m = at(fx, &pl, "repo/.git/commondir"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	assert_false(m->placeholder);
	assert_int_equal(access(path_of(fx, "repo/.git/commondir"), F_OK), -1);
	/* a git directory is no place for .envrc */
	assert_null(at(fx, &pl, "repo/.git/worktrees/wt/.envrc"));
	spawn_mounts_free(pl.m, pl.n);
}

/* For a run: the commondir holding "." is made on the host, noted as a
 * placeholder, and the cleanup removes it (but not one that changed). */
static void
test_commondir(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m;
	struct spawn_plan p;
	struct plan pl;
	char text[16];
	FILE *f;

	plan_dry(fx, "repo", SPAWN_PLATFORM_LINUX, &pl, false);
	assert_non_null(m = at(fx, &pl, "repo/.git/commondir"));
	assert_int_equal(m->kind, SPAWN_MNT_RO);
	assert_true(m->placeholder);
	assert_non_null(f = fopen(path_of(fx, "repo/.git/commondir"), "r"));
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, ".\n");
	memset(&p, 0, sizeof(p));
	p.mounts = pl.m;
	p.nmounts = pl.n;
	spawn_guard_cleanup(-1, &p);
	assert_int_equal(access(path_of(fx, "repo/.git/commondir"), F_OK), -1);
	spawn_mounts_free(pl.m, pl.n);
	/* one that says something else is not a placeholder any more */
	plan_dry(fx, "repo", SPAWN_PLATFORM_LINUX, &pl, false);
	make(fx, "repo/.git/commondir", false, "elsewhere\n");
	memset(&p, 0, sizeof(p));
	p.mounts = pl.m;
	p.nmounts = pl.n;
	spawn_guard_cleanup(-1, &p);
	assert_int_equal(access(path_of(fx, "repo/.git/commondir"), F_OK), 0);
	assert_int_equal(unlink(path_of(fx, "repo/.git/commondir")), 0);
	spawn_mounts_free(pl.m, pl.n);
}

static void
test_plain(void **state)
{
	struct fixture *fx = *state;
	const struct spawn_mount *m;
	struct plan pl;

	plan_for(fx, "plain", SPAWN_PLATFORM_LINUX, &pl);
	assert_non_null(m = at(fx, &pl, "plain/.git"));
	assert_int_equal(m->kind, SPAWN_MNT_HIDE_DIR);
	assert_true(m->placeholder);
	assert_null(at(fx, &pl, "plain/.git/hooks"));
	spawn_mounts_free(pl.m, pl.n);
}

static void
test_macos(void **state)
{
	struct fixture *fx = *state;
	struct plan pl;

	/* git must still write an existing .git: only its parts are
	 * denied, existing or not */
	plan_for(fx, "repo", SPAWN_PLATFORM_MACOS, &pl);
	assert_null(at(fx, &pl, "repo/.git"));
	assert_int_equal(at(fx, &pl, "repo/.git/hooks")->kind, SPAWN_MNT_RO);
	assert_int_equal(at(fx, &pl, "repo/.git/config.worktree")->kind,
	    SPAWN_MNT_RO);
	spawn_mounts_free(pl.m, pl.n);
	/* a missing .git is denied (no git init), a .git file too */
	plan_for(fx, "plain", SPAWN_PLATFORM_MACOS, &pl);
	assert_int_equal(at(fx, &pl, "plain/.git")->kind, SPAWN_MNT_RO);
	spawn_mounts_free(pl.m, pl.n);
	plan_for(fx, "wt", SPAWN_PLATFORM_MACOS, &pl);
	assert_int_equal(at(fx, &pl, "wt/.git")->kind, SPAWN_MNT_RO);
	spawn_mounts_free(pl.m, pl.n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_repository, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_worktree, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_commondir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_plain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_macos, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
