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

/*
 * A worktree's .git file: "gitdir: PATH". Its git directory and the
 * repository's common one (the "commondir" file in it, relative to it),
 * both git directories for the guards.
 */
static int
worktree_dirs(struct spawn_mlist *l, const char *top, const char *home)
{
	char path[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX];
	uint8_t *buf;
	size_t len;
	char *s, *e;
	int fd, r;

	if (!join(path, top, ".git") ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return 0;
	buf = spawn_fd_slurp(fd, 4096, &len);
	close(fd);
	if (buf == NULL)
		return 0;
	buf[len] = '\0';
	s = (char *)buf;
	if (strncmp(s, "gitdir: ", 8) != 0) {
		free(buf);
		return 0;
	}
	s += 8;
	s[strcspn(s, "\r\n")] = '\0';
	if (s[0] == '/' ? snprintf(gitdir, sizeof(gitdir), "%s", s) >=
	    (int)sizeof(gitdir) : !join(gitdir, top, s)) {
		free(buf);
		return 0;
	}
	free(buf);
	/* the common directory */
	memcpy(common, gitdir, sizeof(common));
	if (join(path, gitdir, "commondir") &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) != -1) {
		if ((buf = spawn_fd_slurp(fd, 4096, &len)) != NULL) {
			buf[len] = '\0';
			e = (char *)buf;
			e[strcspn(e, "\r\n")] = '\0';
			if (e[0] == '/' ? snprintf(common, sizeof(common),
			    "%s", e) >= (int)sizeof(common) :
			    !join(common, gitdir, e))
				memcpy(common, gitdir, sizeof(common));
			free(buf);
		}
		close(fd);
	}
	if ((r = add_rw(l, common, home, true)) == 0)
		r = add_rw(l, gitdir, home, true);
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
