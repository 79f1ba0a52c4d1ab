/*
 * spawn_gitlinks: a repository the host's git enters on its own stays
 * the user's.
 *
 * In a repository, `git status` (a shell prompt, an editor) enters each
 * populated gitlink of the index, a submodule, and runs git there with
 * that repository's own config: core.fsmonitor runs a command. A sandbox
 * that can write a repository's index (its git directory is writable)
 * and a directory of its work tree can make a repository there, set its
 * config, and register it as a gitlink (`git add` of a nested
 * repository, `git update-index --cacheinfo 160000,...`), no .gitmodules
 * needed. So, for each writable repository whose hooks and config are
 * guarded (spawn_guard: the git directory of the working directory or a
 * --rw directory, of the repository the working directory is in, of a
 * worktree, and each worktree of theirs):
 *   - at the start, the .git of each gitlink of its index that the
 *     sandbox could touch is pinned like the repository's own: a
 *     directory becomes a mount point (it cannot be moved away or
 *     replaced) with its hooks and config guarded; a file ("gitdir: X")
 *     is read-only and its git directory X pinned and guarded the same
 *     way. Each pinned entry's device and inode are noted;
 *   - at the end, once the sandbox is gone, each gitlink of those
 *     indexes is looked at again. Where the sandbox could have written
 *     its .git, and the .git (or the git directory its file names) is
 *     not one pinned at the start (a repository the sandbox made, or one
 *     it put in place of another by renaming a directory above), the
 *     .git is renamed to .git-untrusted-by-gk-run beside it (found
 *     without following a link), so that the host's git does not enter
 *     it, and gk-run says so. An index (or a split index's shared part)
 *     that is not a regular file (a link to one of the sandbox's making,
 *     a FIFO) is moved aside the same way.
 * Repositories deeper in a writable directory are the sandbox's like
 * every file there (their config is writable), as the README says.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define INDEX_MAX	(512u * 1024 * 1024)	/* a bigger index: not read */
#define QUARANTINE	"-untrusted-by-gk-run"	/* after the name */
#define QUARANTINE_TRIES 100
#define GITLINK_DEPTH_MAX 4	/* submodules of submodules of ... */

/* One repository: its git directory, the index file in it, its work
 * tree. */
typedef int (*repo_fn)(void *arg, const char *gitdir, const char *worktree);

/* A worktree's git directory names its .git file in "gitdir" (guarded:
 * read-only in the sandbox): the work tree is the directory of that. */
static int
worktrees_of(const char *gitdir, repo_fn fn, void *arg)
{
	char dir[PATH_MAX], sub[PATH_MAX], line[PATH_MAX], *slash;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (snprintf(dir, sizeof(dir), "%s/worktrees", gitdir) >=
	    (int)sizeof(dir) || (d = opendir(dir)) == NULL)
		return 0;
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(sub) || !spawn_first_line(sub, "gitdir", line) ||
		    line[0] != '/' || (slash = strrchr(line, '/')) == NULL ||
		    strcmp(slash, "/.git") != 0)
			continue;
		*slash = '\0';
		r = fn(arg, sub, line[0] != '\0' ? line : "/");
	}
	closedir(d);
	return r;
}

/* Each writable repository whose git directory is guarded (see the
 * top), from the mounts of the plan (or of the plan being made); with
 * pins_only, only those of pinned gitlinks. */
static int
each_repo(const struct spawn_mount *m, size_t n, const char *cwd,
    bool pins_only, repo_fn fn, void *arg)
{
	char g[PATH_MAX], w[PATH_MAX], *slash;
	struct stat st;
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < n; i++) {
		if (m[i].kind != SPAWN_MNT_RW || (pins_only && !m[i].gitlink))
			continue;
		if (m[i].gitdir || m[i].gitlink) {
			snprintf(g, sizeof(g), "%s", m[i].path);
			slash = strrchr(g, '/');
			if (slash != NULL && strcmp(slash, "/.git") == 0) {
				snprintf(w, sizeof(w), "%.*s",
				    (int)(slash - g), g);
				r = fn(arg, g, w[0] != '\0' ? w : "/");
			}
			/* a worktree's own comes with its common one's; a
			 * submodule's git directory (.git/modules/NAME) has
			 * its work tree in its config: not followed */
			if (r == 0 && m[i].gitdir)
				r = worktrees_of(g, fn, arg);
			continue;
		}
		if ((m[i].implicit && !m[i].place &&
		    strcmp(m[i].path, cwd) != 0) ||
		    snprintf(g, sizeof(g), "%s/.git", m[i].path) >=
		    (int)sizeof(g) || lstat(g, &st) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		r = fn(arg, g, m[i].path);
		if (r == 0)
			r = worktrees_of(g, fn, arg);
	}
	return r;
}

/* The object id length of the repository at gitdir: 32 when its config
 * (guarded) says objectformat = sha256, else 20. */
static size_t
oid_length(const char *gitdir)
{
	size_t len, oid = 20;
	char *cfg, *s;
	int fd;

	if ((fd = spawn_open_regular(gitdir, "config")) == -1)
		return oid;
	cfg = (char *)spawn_fd_slurp(fd, 1 << 20, &len);
	close(fd);
	if (cfg == NULL)
		return oid;
	cfg[len] = '\0';
	for (s = cfg; *s != '\0'; s++)
		*s = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
	if ((s = strstr(cfg, "objectformat")) != NULL &&
	    strstr(s, "sha256") != NULL &&
	    strcspn(s, "\n") > (size_t)(strstr(s, "sha256") - s))
		oid = 32;
	free(cfg);
	return oid;
}

/*
 * The gitlinks of gitdir/name, an index, to fn; the shared part's name
 * into shared ("" when whole). 0, or -1: name is there but not a
 * regular file (a link, a FIFO: the host's git would follow or block).
 */
static int
read_one(const char *gitdir, const char *name, size_t oid,
    spawn_gitlink_fn fn, void *arg, char shared[80])
{
	struct spawn_gitindex_link link;
	size_t len, i;
	uint8_t *buf;
	int fd;

	shared[0] = '\0';
	if ((fd = spawn_open_regular(gitdir, name)) == -1)
		return errno == ENOENT ? 0 : -1;
	buf = spawn_fd_slurp(fd, INDEX_MAX, &len);
	close(fd);
	if (buf == NULL || spawn_gitindex_gitlinks(buf, len, oid, fn, arg,
	    &link) != SPAWN_GITINDEX_OK)
		fprintf(stderr, "gk-run: warning: cannot read the git index "
		    "%s/%s; its submodules are not checked\n", gitdir, name);
	else if (link.split) {
		memcpy(shared, "sharedindex.", 12);
		for (i = 0; i < oid; i++)
			snprintf(shared + 12 + 2 * i, 3, "%02x", link.shared[i]);
	}
	free(buf);
	return 0;
}

/*
 * The gitlinks of gitdir's index (and of its shared part, when split),
 * to fn. The name of one that is not a regular file into bad (else "").
 */
static void
read_index(const char *gitdir, spawn_gitlink_fn fn, void *arg,
    char bad[80])
{
	size_t oid = oid_length(gitdir);
	char shared[80], none[80];

	bad[0] = '\0';
	if (read_one(gitdir, "index", oid, fn, arg, shared) == -1)
		snprintf(bad, 80, "index");
	else if (shared[0] != '\0' &&
	    read_one(gitdir, shared, oid, fn, arg, none) == -1)
		snprintf(bad, 80, "%s", shared);
}

/*
 * A path git itself could have put in an index: relative, no empty, "."
 * or ".." component. Any other is the sandbox's raw writing; skipped, or
 * "." would have the repository's own .git moved aside at the end.
 */
static bool
plain_path(const char *rel)
{
	const char *s = rel, *e;
	size_t n;

	if (rel[0] == '/')
		return false;
	for (;;) {
		e = strchrnul(s, '/');
		n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (*e == '\0')
			return true;
		s = e + 1;
	}
}

/* ---- at the start ------------------------------------------------------ */

struct pin_ctx {
	struct spawn_mlist		*l;
	const struct spawn_opts		*o;
	const char			*worktree;
	int				 wfd;	/* the work tree, O_PATH */
	int				 r;
};

/* Pin path (a directory: a mount point, guarded as a git directory; a
 * file: read-only), noting its identity. */
static int
pin(struct pin_ctx *c, const char *path, const struct stat *st)
{
	enum spawn_mnt kind = S_ISDIR(st->st_mode) ? SPAWN_MNT_RW :
	    SPAWN_MNT_RO;
	const struct spawn_mount *cov = spawn_ml_covering(c->l, path);
	size_t i;

	if (cov == NULL || cov->kind != SPAWN_MNT_RW)
		return 0;		/* the sandbox cannot touch it */
	for (i = 0; i < c->l->n; i++)
		if (strcmp(c->l->m[i].path, path) == 0) {
			if (c->l->m[i].kind != kind)
				return 0;	/* a guard of its own */
			c->l->m[i].gitlink = true;
			c->l->m[i].dev = st->st_dev;
			c->l->m[i].ino = st->st_ino;
			return 0;
		}
	if (spawn_ml_add(c->l, kind, strdup(path), true) == -1)
		return -1;
	c->l->m[c->l->n - 1].gitlink = true;
	c->l->m[c->l->n - 1].dev = st->st_dev;
	c->l->m[c->l->n - 1].ino = st->st_ino;
	return kind == SPAWN_MNT_RW ? spawn_guard_gitdir(c->l, path, c->o) :
	    0;
}

/* The git directory a .git file names (relative to the file's
 * directory), canonical, into out; false when there is none. */
static bool
named_gitdir(const char *dir, char out[PATH_MAX])
{
	char line[PATH_MAX], *p;
	bool ok;

	if (!spawn_first_line(dir, ".git", line) ||
	    strncmp(line, "gitdir: ", 8) != 0 ||
	    (p = spawn_named_path(dir, line + 8)) == NULL)
		return false;
	ok = snprintf(out, PATH_MAX, "%s", p) < PATH_MAX;
	free(p);
	return ok;
}

static void
pin_one(void *arg, const char *rel, size_t len)
{
	struct pin_ctx *c = arg;
	char dir[PATH_MAX], path[PATH_MAX], gd[PATH_MAX];
	struct stat st, gst;
	int dfd, gfd;

	(void)len;
	if (c->r != 0 || !plain_path(rel) ||
	    snprintf(dir, sizeof(dir), "%s/%s", c->worktree, rel) >=
	    (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/.git", dir) >= (int)sizeof(path))
		return;
	/* no link followed: the paths pinned are the ones git uses */
	if ((dfd = spawn_openat_nofollow(c->wfd, rel, O_PATH | O_DIRECTORY |
	    O_CLOEXEC, 0)) == -1)
		return;
	gfd = spawn_openat_nofollow(dfd, ".git", O_PATH | O_CLOEXEC, 0);
	close(dfd);
	if (gfd == -1)
		return;
	if (fstat(gfd, &st) == -1) {
		close(gfd);
		return;
	}
	close(gfd);
	if (S_ISREG(st.st_mode) && named_gitdir(dir, gd) &&
	    lstat(gd, &gst) == 0 && S_ISDIR(gst.st_mode))
		c->r = pin(c, gd, &gst);
	if (c->r == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		c->r = pin(c, path, &st);
}

static int
pin_repo(void *arg, const char *gitdir, const char *worktree)
{
	struct pin_ctx *c = arg;

	char bad[80];

	c->worktree = worktree;
	if ((c->wfd = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	read_index(gitdir, pin_one, c, bad);
	close(c->wfd);
	if (bad[0] != '\0')
		fprintf(stderr, "gk-run: warning: %s/%s is not a regular file; "
		    "it is moved aside at the end\n", gitdir, bad);
	return c->r;
}

int
spawn_gitlinks_pin(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *cwd)
{
	struct pin_ctx c = { l, o, NULL, -1, 0 };
	struct spawn_mount *snap;
	size_t from = 0, to;
	int depth;

	if (o->fs != SPAWN_FS_SANDBOX || o->platform != SPAWN_PLATFORM_LINUX)
		return 0;
	/*
	 * Rounds: the writable repositories, then the repositories pinned
	 * in the round before (their indexes are writable too: git status
	 * enters their gitlinks in turn). Each round reads a copy of the
	 * mounts it starts from, since pinning adds to them.
	 */
	for (depth = 0; depth < GITLINK_DEPTH_MAX && from < l->n; depth++) {
		to = l->n;
		if ((snap = malloc((to - from) * sizeof(*snap))) == NULL)
			return -1;
		memcpy(snap, l->m + from, (to - from) * sizeof(*snap));
		c.r = each_repo(snap, to - from, cwd, depth > 0, pin_repo, &c);
		free(snap);
		if (c.r != 0)
			return c.r;
		from = to;
	}
	return 0;
}

/* ---- at the end -------------------------------------------------------- */

struct check_ctx {
	const struct spawn_plan	*p;
	const char		*gitdir;
	const char		*worktree;
	int			 wfd;		/* the work tree, O_PATH */
};

static bool
pinned(const struct spawn_plan *p, const struct stat *st)
{
	size_t i;

	for (i = 0; i < p->nmounts; i++)
		if (p->mounts[i].gitlink && p->mounts[i].dev == st->st_dev &&
		    p->mounts[i].ino == st->st_ino)
			return true;
	return false;
}

/* Could the sandbox write path (a writable mount shows it)? */
static bool
writable_in(const struct spawn_plan *p, const char *path)
{
	struct spawn_mlist l = { p->mounts, p->nmounts, p->nmounts };
	const struct spawn_mount *cov = spawn_ml_covering(&l, path);

	return cov != NULL && cov->kind == SPAWN_MNT_RW;
}

/* Rename name in the directory dfd (O_PATH) aside, to name-untrusted-
 * by-gk-run (or -N); the new name into out. */
static bool
quarantine(int dfd, const char *name, char *out, size_t outlen)
{
	int i;

	for (i = 1; i <= QUARANTINE_TRIES; i++) {
		if (i == 1)
			snprintf(out, outlen, "%s%s", name, QUARANTINE);
		else
			snprintf(out, outlen, "%s%s-%d", name, QUARANTINE, i);
		if (renameat2(dfd, name, dfd, out, RENAME_NOREPLACE) == 0)
			return true;
		if (errno != EEXIST)
			return false;
	}
	return false;
}

static void
check_one(void *arg, const char *rel, size_t len)
{
	struct check_ctx *c = arg;
	char dir[PATH_MAX], gd[PATH_MAX], moved[128], show[256], repo[256];
	struct stat st, gst;
	bool ok;
	int dfd, gfd;

	(void)len;
	if (!plain_path(rel) ||
	    snprintf(dir, sizeof(dir), "%s/%s", c->worktree, rel) >=
	    (int)sizeof(dir) ||
	    (dfd = spawn_openat_nofollow(c->wfd, rel, O_PATH | O_DIRECTORY |
	    O_CLOEXEC, 0)) == -1)
		return;		/* missing, or a link: git does not enter */
	if ((gfd = spawn_openat_nofollow(dfd, ".git", O_PATH | O_CLOEXEC, 0)) == -1 ||
	    fstat(gfd, &st) == -1) {
		if (gfd != -1)
			close(gfd);
		close(dfd);
		return;		/* not populated */
	}
	close(gfd);
	ok = !writable_in(c->p, dir) || pinned(c->p, &st);
	/* a file: the git directory it names must be the one pinned too,
	 * where the sandbox could have replaced it */
	if (ok && S_ISREG(st.st_mode) && named_gitdir(dir, gd) &&
	    lstat(gd, &gst) == 0)
		ok = !writable_in(c->p, gd) || pinned(c->p, &gst);
	if (ok || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) ||
	    S_ISLNK(st.st_mode))) {
		close(dfd);
		return;
	}
	spawn_printable(dir, show, sizeof(show));
	spawn_printable(c->worktree, repo, sizeof(repo));
	if (quarantine(dfd, ".git", moved, sizeof(moved)))
		fprintf(stderr, "gk-run: %s/.git is a git repository the "
		    "sandbox made or replaced, registered in the index of %s "
		    "(a submodule): the host's git would enter it and run its "
		    "config; it is now %s/%s (look at its config and hooks "
		    "before renaming it back)\n", show, repo, show, moved);
	else
		fprintf(stderr, "gk-run: warning: %s/.git is a git repository "
		    "the sandbox made or replaced, registered in the index of "
		    "%s, and it could not be moved aside (%s): the host's git "
		    "would run its config; look at it before running git in "
		    "%s\n", show, repo, strerror(errno), repo);
	close(dfd);
}

static int
check_repo(void *arg, const char *gitdir, const char *worktree)
{
	struct check_ctx *c = arg;

	char bad[80], moved[128], show[256];
	int gfd;

	c->gitdir = gitdir;
	c->worktree = worktree;
	if ((c->wfd = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	read_index(gitdir, check_one, c, bad);
	close(c->wfd);
	if (bad[0] == '\0' ||
	    (gfd = open(gitdir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	/* an index that is a link (to one of the sandbox's making) or a
	 * FIFO: the host's git would read through it or block */
	spawn_printable(gitdir, show, sizeof(show));
	if (quarantine(gfd, bad, moved, sizeof(moved)))
		fprintf(stderr, "gk-run: %s/%s is not a regular file (the "
		    "sandbox made it): it is now %s/%s\n", show, bad, show,
		    moved);
	else
		fprintf(stderr, "gk-run: warning: %s/%s is not a regular file "
		    "(the sandbox made it) and could not be moved aside: %s\n",
		    show, bad, strerror(errno));
	close(gfd);
	return 0;
}

void
spawn_gitlinks_check(const struct spawn_plan *p)
{
	struct check_ctx c = { p, NULL, NULL, -1 };

	if (p->fs != SPAWN_FS_SANDBOX)
		return;
	(void)each_repo(p->mounts, p->nmounts, p->cwd, false, check_repo, &c);
}
