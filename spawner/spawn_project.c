/*
 * spawn_project: the parts of the project above the working directory
 * that its tools write.
 *
 * Run from a member of an npm, pnpm or cargo workspace, the package
 * manager writes at the workspace's root (node_modules, the lock file,
 * target/); run from a git worktree or a subdirectory of a repository,
 * `git commit` writes the repository's git directory (objects, refs, the
 * worktree's index). These become writable too (the git directories'
 * hooks, config, info and commondir stay read-only: spawn_guard), and a
 * workspace root counts as a writable place of its own for the guards.
 * The search goes up from the working directory and stops below $HOME
 * and / (neither is ever made writable this way) and after
 * PROJECT_DEPTH_MAX levels.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define PROJECT_DEPTH_MAX	16
#define MANIFEST_MAX		(1024 * 1024)

/* out = a/b; false when it does not fit. */
static bool
join(char out[PATH_MAX], const char *a, const char *b)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", a, b);

	return n > 0 && n < PATH_MAX;
}

/* Does dir/name exist and hold `needle` (NULL: exist at all)? */
static bool
file_has(const char *dir, const char *name, const char *needle)
{
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len;
	bool found;
	int fd;

	if (!join(path, dir, name) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return false;
	if (needle == NULL) {
		close(fd);
		return true;
	}
	buf = spawn_fd_slurp(fd, MANIFEST_MAX, &len);
	close(fd);
	if (buf == NULL)
		return false;
	buf[len] = '\0';	/* spawn_fd_slurp leaves room for one byte */
	found = strstr((const char *)buf, needle) != NULL;
	free(buf);
	return found;
}

static bool
is_workspace_root(const char *dir)
{
	return file_has(dir, "package.json", "\"workspaces\"") ||
	    file_has(dir, "pnpm-workspace.yaml", NULL) ||
	    file_has(dir, "Cargo.toml", "[workspace]");
}

static bool
may_open(const char *dir, const char *home)
{
	return strcmp(dir, "/") != 0 && (home == NULL ||
	    !spawn_path_under(home, dir));
}

/* A writable place for the project (a directory, canonical); gitdir:
 * a git directory (its hooks, config, info, config.worktree and commondir
 * are guarded). */
static int
add_rw(struct spawn_mlist *l, const char *path, const char *home,
    bool gitdir)
{
	char *real;
	struct stat st;

	if ((real = realpath(path, NULL)) == NULL)
		return 0;
	if (stat(real, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    !may_open(real, home)) {
		free(real);
		return 0;
	}
	if (spawn_ml_has(l, real)) {
		free(real);	/* said already (--ro, --rw, cwd) */
		return 0;
	}
	if (spawn_ml_add(l, SPAWN_MNT_RW, real, true) == -1)
		return -1;
	l->m[l->n - 1].place = !gitdir;
	l->m[l->n - 1].gitdir = gitdir;
	return 0;
}

/* Is path in a place that is writable already (--rw, the working
 * directory)? */
static bool
writable_already(const struct spawn_mlist *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->m[i].kind == SPAWN_MNT_RW &&
		    spawn_path_under(path, l->m[i].path))
			return true;
	return false;
}

/* "COMMON/worktrees/NAME" -> COMMON (malloc'd), else NULL. */
static char *
worktrees_parent(const char *gitdir)
{
	char *common, *slash;

	if ((common = strdup(gitdir)) == NULL)
		return NULL;
	if ((slash = strrchr(common, '/')) != NULL && slash != common) {
		*slash = '\0';
		if ((slash = strrchr(common, '/')) != NULL &&
		    strcmp(slash, "/worktrees") == 0 && slash != common) {
			*slash = '\0';
			return common;
		}
	}
	free(common);
	return NULL;
}

/*
 * A worktree's .git file says "gitdir: PATH", but the file is the
 * sandbox's: an earlier run could have written any PATH there. So PATH is
 * taken only when the repository vouches for the worktree: PATH is
 * COMMON/worktrees/NAME of a git directory COMMON (its HEAD there), and
 * PATH/gitdir, which only who can write COMMON wrote, names this very
 * .git file. Then COMMON and PATH become writable (git directories: their
 * hooks, config, info and commondir are guarded). Anything else (a
 * submodule's git directory, a forged or stale file) is left read-only,
 * said once with how to name it.
 */
static int
worktree_dirs(struct spawn_mlist *l, const char *top, const char *home)
{
	char line[PATH_MAX], back[PATH_MAX], dotgit[PATH_MAX];
	char *gitdir = NULL, *common = NULL, *self = NULL, *named = NULL;
	char show[256];
	struct stat st;
	int r = 0;

	if (!spawn_first_line(top, ".git", line) ||
	    strncmp(line, "gitdir: ", 8) != 0 ||
	    (gitdir = spawn_named_path(top, line + 8)) == NULL ||
	    writable_already(l, gitdir) || !join(dotgit, top, ".git"))
		goto out;	/* nothing, or already visible */
	self = realpath(dotgit, NULL);
	if (spawn_first_line(gitdir, "gitdir", back))
		named = spawn_named_path(gitdir, back);
	if (self != NULL && named != NULL && strcmp(self, named) == 0)
		common = worktrees_parent(gitdir);
	if (common == NULL || !join(back, common, "HEAD") ||
	    stat(back, &st) == -1) {
		spawn_printable(gitdir, show, sizeof(show));
		fprintf(stderr, "gk-run: %s/.git names the git directory %s, "
		    "which is not a worktree its repository vouches for; it "
		    "stays read-only (--rw %s makes it writable)\n", top, show,
		    show);
		goto out;
	}
	if ((r = add_rw(l, common, home, true)) == 0)
		r = add_rw(l, gitdir, home, true);
out:
	free(gitdir);
	free(common);
	free(self);
	free(named);
	return r;
}

int
spawn_project_mounts(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *cwd, const char *home)
{
	char dir[PATH_MAX], path[PATH_MAX], *slash;
	struct stat st;
	bool git_done = false, ws_done = false;
	int depth, r = 0;

	if (o->fs != SPAWN_FS_SANDBOX || o->platform != SPAWN_PLATFORM_LINUX)
		return 0;
	snprintf(dir, sizeof(dir), "%s", cwd);
	for (depth = 0; r == 0 && depth < PROJECT_DEPTH_MAX &&
	    may_open(dir, home); depth++) {
		if (!git_done) {
			if (join(path, dir, ".git") && lstat(path, &st) == 0) {
				git_done = true;
				if (S_ISREG(st.st_mode))
					r = worktree_dirs(l, dir, home);
				else if (S_ISDIR(st.st_mode) && depth > 0)
					r = add_rw(l, path, home, true);
			}
		}
		if (r == 0 && !ws_done && depth > 0 &&
		    is_workspace_root(dir)) {
			ws_done = true;
			r = add_rw(l, dir, home, false);
		}
		if ((slash = strrchr(dir, '/')) == NULL)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return r;
}
