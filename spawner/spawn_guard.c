/*
 * spawn_guard: files that make the host run code stay read-only in every
 * writable place of the sandbox.
 *
 * A sandboxed program may write the working directory and each --rw
 * directory; what it writes there the host's own tools read later. Git
 * runs hooks and config (core.fsmonitor, core.pager, aliases), direnv
 * runs .envrc, editors run workspace settings, shells run their start-up
 * files. So in each writable place these are read-only, and so are
 * those the host lacks, which the sandbox could otherwise create: a
 * missing one gets an empty read-only placeholder (an empty directory,
 * in a work tree also for a file's name, since `git add -A` ignores
 * empty directories; an empty file inside a git directory and in $HOME)
 * that bwrap creates on the host as the mount point, and
 * gk-run removes the placeholders it made once the sandbox is gone.
 * --rw of exactly such a path lifts the guard. An existing .git is
 * pinned (a mount point of its own, see dotgit()), or the sandbox could
 * move it away and put a copy of its own making, hooks and all, in its
 * place.
 */
#include <sys/stat.h>

#include <sys/file.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

struct guarded {
	const char	*rel;
	bool		 file;		/* a missing one's placeholder is an
					   empty file (else an empty
					   directory: see guard()) */
	bool		 existing;	/* guarded only where it exists (on
					   Linux): no placeholder can stand
					   in for it */
	bool		 dot;		/* a missing one is made on the host
					   holding ".", which git reads as
					   "this directory" (see dot_file()) */
};

/* In every writable place (spawn_usage() lists them: keep in step). */
static const struct guarded place_guards[] = {
	{ ".git", false, false },	/* see dotgit() */
	{ ".git/hooks", false, false }, { ".git/info", false, false },
	{ ".git/config", true, false },
	{ ".git/config.worktree", true, false },
	{ ".git/commondir", true, false, true },
	/* in the work tree: directories, which `git add -A` ignores */
	{ ".gitmodules", false, false }, { ".envrc", false, false },
	{ ".vscode", false, false }, { ".idea", false, false },
	{ NULL, false, false },
};

/*
 * In a git directory made writable (spawn_project): a repository's, or
 * a worktree's own. "commondir" names the directory whose config and
 * hooks git uses: a sandbox that wrote one into a repository's git
 * directory would have the host's git run a config of its making. Git
 * dies on an empty one, so a missing one is made on the host holding "."
 * (this very directory, as if there were none), read-only inside.
 */
static const struct guarded gitdir_guards[] = {
	{ "hooks", false, false }, { "info", false, false },
	{ "config", true, false }, { "config.worktree", true, false },
	{ "commondir", true, false, true },
	{ "gitdir", true, true },	/* a worktree's back-link (read at
					   the run's end: spawn_gitlinks) */
	{ NULL, false, false },
};

/* In each worktree's git directory, gitdir/worktrees/NAME: what git
 * reads there when run in that worktree. */
static const struct guarded worktree_guards[] = {
	{ "commondir", true, true }, { "config.worktree", true, false },
	{ "gitdir", true, true },
	{ NULL, false, false },
};

/* In $HOME, when it is writable. */
static const struct guarded home_guards[] = {
	{ ".bashrc", true, false }, { ".bash_profile", true, false },
	{ ".bash_login", true, false }, { ".bash_logout", true, false },
	{ ".profile", true, false }, { ".zshrc", true, false },
	{ ".zshenv", true, false }, { ".zprofile", true, false },
	{ ".zlogin", true, false }, { ".gitconfig", true, false },
	{ ".bash_aliases", true, false }, { ".xprofile", true, false },
	{ ".xsessionrc", true, false }, { ".pam_environment", true, false },
	{ ".config/git", false, false }, { ".config/fish", false, false },
	{ ".config/autostart", false, false },
	{ ".config/systemd", false, false },
	{ ".config/environment.d", false, false },
	{ ".config/gk-run", false, false },	/* gk-run's own settings */
	{ NULL, false, false },
};

#define MODULES_DEPTH_MAX	4	/* submodules of submodules of ... */

/* Writable inside, and backed by the host (not a tmpfs or a cache). */
static bool
host_writable(const struct spawn_mlist *l, const char *path)
{
	const struct spawn_mount *c = spawn_ml_covering(l, path);

	return c != NULL && c->kind == SPAWN_MNT_RW;
}

static bool
dir_empty(const char *path)
{
	struct dirent *de;
	bool empty = true;
	DIR *d;

	if ((d = opendir(path)) == NULL)
		return false;
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/*
 * An existing .git in a writable place. A directory stays writable (git
 * writes objects, refs and the index there; its hooks, config and info
 * have guards of their own) but becomes a mount point, which cannot be
 * renamed or removed. A file, a worktree's "gitdir: PATH", names the git
 * directory the host's git uses: read-only. macOS: a deny rule for the
 * file only.
 */
static int
dotgit(struct spawn_mlist *l, const char *path, const struct stat *st,
    bool macos)
{
	if (S_ISREG(st->st_mode))
		return spawn_ml_add(l, SPAWN_MNT_RO, strdup(path), true);
	if (S_ISDIR(st->st_mode) && !macos)
		return spawn_ml_add(l, SPAWN_MNT_RW, strdup(path), true);
	return 0;
}

#define DOT_CONTENT	".\n"	/* a commondir naming its own directory */

/*
 * A missing commondir (see gitdir_guards): made on the host holding
 * DOT_CONTENT, beneath its directory without following a link (O_EXCL,
 * O_NOFOLLOW), then bound read-only and noted as a placeholder, which
 * the last run out removes (remove_empty()). An empty placeholder would
 * not do: git dies on it, the host's git too while the sandbox runs.
 * --dry-run only shows the mount.
 */
static int
dot_file(struct spawn_mlist *l, const char *path, bool dry)
{
	char dir[PATH_MAX], *slash;
	int dfd, fd, r;
	ssize_t n;

	if (spawn_ml_has(l, path) || !host_writable(l, path) ||
	    snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    (slash = strrchr(dir, '/')) == NULL)
		return 0;
	if (!dry) {
		*slash = '\0';
		if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			return 0;	/* gone: nothing to guard */
		fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		close(dfd);
		if (fd == -1)
			return 0;	/* made meanwhile, or not ours to make */
		n = write(fd, DOT_CONTENT, strlen(DOT_CONTENT));
		close(fd);
		if (n != (ssize_t)strlen(DOT_CONTENT))
			return -1;
	}
	r = spawn_ml_add(l, SPAWN_MNT_RO, strdup(path), true);
	if (r == 0 && !dry)
		l->m[l->n - 1].placeholder = true;
	return r;
}

/*
 * A missing guarded path (in a buffer of PATH_MAX): an empty read-only
 * placeholder at its first missing component below place (the sandbox
 * could create everything below it), a file only for the path itself
 * when file. Nothing where this user cannot create it on the host:
 * neither can the sandbox (nor could bwrap make a placeholder).
 */
static int
placeholder(struct spawn_mlist *l, const char *place, char *path, bool file)
{
	struct stat st;
	char *slash;
	int r;

	for (;;) {
		if ((slash = strrchr(path, '/')) == NULL ||
		    (size_t)(slash - path) <= strlen(place))
			break;
		*slash = '\0';
		if (lstat(path, &st) == 0) {
			*slash = '/';
			break;
		}
		file = false;	/* a missing directory above it */
	}
	if (spawn_ml_has(l, path) || !host_writable(l, path))
		return 0;
	if ((slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		r = access(path, W_OK);
		*slash = '/';
		if (r == -1)
			return 0;
	}
	r = spawn_ml_add(l, file ? SPAWN_MNT_HIDE_FILE : SPAWN_MNT_HIDE_DIR,
	    strdup(path), true);
	if (r == 0)
		l->m[l->n - 1].placeholder = true;
	return r;
}

/*
 * Guard place/rel: read-only where it exists; where it is missing, an
 * empty read-only placeholder at the first missing component (the
 * sandbox could create everything below it). macOS: a deny rule for
 * the path, existing or not.
 */
static int
guard(struct spawn_mlist *l, const char *place, const struct guarded *g,
    const struct spawn_opts *o)
{
	bool macos = o->platform == SPAWN_PLATFORM_MACOS;
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", place, g->rel) >=
	    (int)sizeof(path) || spawn_ml_has(l, path))
		return 0;
	if (lstat(path, &st) == 0 && strcmp(g->rel, ".git") == 0)
		return dotgit(l, path, &st, macos);
	if (macos)
		return spawn_ml_add(l, SPAWN_MNT_RO, strdup(path), true);
	if (lstat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode))
			return 0;
		/*
		 * Empty: maybe the placeholder of another gk-run in the same
		 * directory, which removes it when its command ends. A fresh
		 * empty one over it, not a bind of it (a bind's source must
		 * still be there when bwrap mounts it); this run leaves it.
		 */
		if (S_ISDIR(st.st_mode) && dir_empty(path))
			return spawn_ml_add(l, SPAWN_MNT_HIDE_DIR, strdup(path),
			    true);
		if (S_ISREG(st.st_mode) && st.st_size == 0)
			return spawn_ml_add(l, SPAWN_MNT_HIDE_FILE,
			    strdup(path), true);
		return spawn_ml_add(l, SPAWN_MNT_RO, strdup(path), true);
	}
	if (errno != ENOENT || g->existing)
		return 0;
	if (g->dot)
		return dot_file(l, path, o->dry_run);
	return placeholder(l, place, path, g->file);
}

/*
 * Guard each directory gitdir/below/NAME:
 *   - "modules": the git directories of submodules (and theirs, down to
 *     MODULES_DEPTH_MAX): git runs their hooks and config too. Those
 *     that exist are guarded (gitdir_guards); a new one is used only if
 *     .gitmodules or the config (guarded) says so.
 *   - "worktrees": the git directories of a repository's worktrees: git
 *     run in worktree NAME reads its commondir and config.worktree
 *     (worktree_guards; this run's own worktree, if any, has the full
 *     gitdir_guards as a gitdir of the plan).
 */
static int
guard_below(struct spawn_mlist *l, const char *gitdir, const char *below,
    int depth, const struct spawn_opts *o)
{
	const struct guarded *g = strcmp(below, "modules") == 0 ?
	    gitdir_guards : worktree_guards;
	char dir[PATH_MAX], sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	size_t i;
	DIR *d;
	int r = 0;

	if (depth >= MODULES_DEPTH_MAX ||
	    snprintf(dir, sizeof(dir), "%s/%s", gitdir, below) >=
	    (int)sizeof(dir) || (d = opendir(dir)) == NULL)
		return 0;
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(sub) || lstat(sub, &st) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		for (i = 0; r == 0 && g[i].rel != NULL; i++)
			r = guard(l, sub, &g[i], o);
		if (r == 0 && g == gitdir_guards)
			r = guard_below(l, sub, below, depth + 1, o);
	}
	closedir(d);
	return r;
}

int
spawn_guard_gitdir(struct spawn_mlist *l, const char *path,
    const struct spawn_opts *o)
{
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && gitdir_guards[i].rel != NULL; i++)
		r = guard(l, path, &gitdir_guards[i], o);
	if (r == 0)
		r = guard_below(l, path, "modules", 0, o);
	if (r == 0)
		r = guard_below(l, path, "worktrees", 0, o);
	return r;
}

int
spawn_guard_mounts(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *cwd, const char *home)
{
	bool macos = o->platform == SPAWN_PLATFORM_MACOS;
	char **places, **gitdirs;
	size_t i, k, n = 0, ng = 0, first = l->n;
	int r = 0;

	if (o->fs != SPAWN_FS_SANDBOX)
		return 0;
	places = calloc(l->n + 1, sizeof(*places));
	gitdirs = calloc(l->n + 1, sizeof(*gitdirs));
	if (places == NULL || gitdirs == NULL) {
		free(places);
		free(gitdirs);
		return -1;
	}
	/* the working directory, every --rw directory and the workspace
	 * root (not the host's own caches of --cache host) */
	for (i = 0; i < first; i++) {
		if (l->m[i].kind != SPAWN_MNT_RW)
			continue;
		if (l->m[i].gitdir)
			gitdirs[ng++] = l->m[i].path;
		else if (!l->m[i].implicit || l->m[i].place ||
		    strcmp(l->m[i].path, cwd) == 0)
			places[n++] = l->m[i].path;
	}
	for (k = 0; r == 0 && k < n; k++) {
		for (i = 0; r == 0 && place_guards[i].rel != NULL; i++)
			r = guard(l, places[k], &place_guards[i], o);
	}
	for (k = 0; r == 0 && k < ng; k++)
		r = spawn_guard_gitdir(l, gitdirs[k], o);
	for (k = 0; r == 0 && k < n; k++) {
		char g[PATH_MAX];

		if (snprintf(g, sizeof(g), "%s/.git", places[k]) >=
		    (int)sizeof(g))
			continue;
		r = guard_below(l, g, "modules", 0, o);
		if (r == 0)
			r = guard_below(l, g, "worktrees", 0, o);
	}
	free(gitdirs);
	if (r == 0 && home != NULL && (macos || host_writable(l, home)))
		for (i = 0; r == 0 && home_guards[i].rel != NULL; i++)
			r = guard(l, home, &home_guards[i], o);
	free(places);
	return r;
}

/* A commondir placeholder, still as dot_file() made it? */
static bool
is_dot_file(const char *path, const struct stat *st)
{
	char buf[sizeof(DOT_CONTENT)];
	const char *base = strrchr(path, '/');
	ssize_t n;
	int fd;

	if (base == NULL || strcmp(base + 1, "commondir") != 0 ||
	    st->st_size != (off_t)strlen(DOT_CONTENT) ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)strlen(DOT_CONTENT) &&
	    memcmp(buf, DOT_CONTENT, (size_t)n) == 0;
}

/* Remove path if it is still an empty directory or an empty file (or a
 * commondir placeholder). */
static void
remove_empty(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return;
	if (S_ISREG(st.st_mode) && (st.st_size == 0 ||
	    is_dot_file(path, &st)))
		(void)unlink(path);
	else if (S_ISDIR(st.st_mode))
		(void)rmdir(path);	/* if empty */
}

int
spawn_guard_lock(void)
{
	char *home, path[PATH_MAX];
	int fd = -1;

	if ((home = spawn_home()) == NULL)
		return -1;
	if (snprintf(path, sizeof(path), "%s/.gk-run", home) <
	    (int)sizeof(path) && (mkdir(path, 0700) == 0 || errno == EEXIST) &&
	    snprintf(path, sizeof(path), "%s/.gk-run/placeholders", home) <
	    (int)sizeof(path))
		fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	free(home);
	if (fd != -1 && flock(fd, LOCK_SH) == -1) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void
spawn_guard_register(int lockfd, const struct spawn_plan *p)
{
	char line[PATH_MAX + 1];
	size_t i;
	int n;

	for (i = 0; lockfd != -1 && i < p->nmounts; i++) {
		if (!p->mounts[i].placeholder)
			continue;
		/* one write per line: O_APPEND keeps concurrent runs' whole */
		n = snprintf(line, sizeof(line), "%s\n", p->mounts[i].path);
		if (n > 0 && n < (int)sizeof(line) &&
		    strchr(p->mounts[i].path, '\n') == NULL &&
		    write(lockfd, line, (size_t)n) != n)
			break;	/* a full disk: the rest stay, empty */
	}
}

void
spawn_guard_cleanup(int lockfd, const struct spawn_plan *p)
{
	uint8_t *buf;
	char *s, *e;
	size_t i, len;

	if (lockfd == -1) {
		/* no registry: this run's own, deepest first */
		for (i = p->nmounts; i-- > 0; )
			if (p->mounts[i].placeholder)
				remove_empty(p->mounts[i].path);
		return;
	}
	/* the last run in flight removes every run's placeholders (also
	 * those of a gk-run that was killed); while others run, they stay */
	if (flock(lockfd, LOCK_EX | LOCK_NB) == -1)
		return;
	if ((buf = spawn_fd_slurp(lockfd, 1 << 20, &len)) != NULL) {
		buf[len] = '\0';
		/* last line first: deeper placeholders were made later */
		for (s = (char *)buf + len; s > (char *)buf; s = e) {
			*s = '\0';
			for (e = s; e > (char *)buf && e[-1] != '\n'; e--)
				;
			if (e[0] == '/')
				remove_empty(e);
			if (e > (char *)buf)
				e--;
		}
		free(buf);
	}
	if (ftruncate(lockfd, 0) == -1)
		return;		/* removed already; a later run retries */
}
