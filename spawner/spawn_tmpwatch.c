/*
 * What the command left in the sandbox's own /tmp, when the working
 * directory is under /tmp.
 *
 * The sandbox's /tmp is a fresh tmpfs (bwrap's) with the working
 * directory bound into it. Run from /tmp/proj, `echo hi > ../x` or `git
 * worktree add ../wt2` succeed and write into that tmpfs, which is gone
 * with the sandbox: the host never sees them. So gk-run keeps a
 * descriptor of that tmpfs and, once the sandbox has ended, names what
 * is there outside the mounts, with how to keep it.
 *
 * The descriptor is taken while bwrap's pid 1 waits on --block-fd, after
 * its mounts and before it runs the command: gk-run polls (bounded)
 * /proc/PID/root/tmp until it is the sandbox's (a tmpfs that is not the
 * host's /tmp, holding the mount point of the working directory; bwrap's
 * own set-up tmpfs holds only newroot and oldroot), opens it, then lets
 * the command run. Held open, the tmpfs outlives the sandbox's mount
 * namespace, unmounted from every tree; it goes when gk-run closes it.
 *
 * The walk reads names only: no file's content is read, no link followed
 * (fstatat AT_SYMLINK_NOFOLLOW, openat O_NOFOLLOW), and it never leaves
 * the tmpfs (st_dev). It enters only the directories bwrap made for the
 * mounts below /tmp (the working directory's parents); the mount points
 * themselves are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "gatekeeper/base/gk_time.h"
#include "spawner/spawn_int.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC	0x01021994
#endif

#define ATTACH_MS	3000	/* bwrap's set-up, at most */
#define SHOW_MAX	4	/* names in the message */
#define NAMES_MAX	64	/* kept, sorted, to choose from */
#define WALK_DEPTH	16
#define SCAN_MAX	10000	/* entries looked at: the walk stays cheap */

struct left {
	char		*rel;		/* below /tmp */
	bool		 isdir;
};

static struct {
	const struct spawn_plan *plan;
	int		 wfd;		/* --block-fd's write end, or -1 */
	int		 tfd;		/* the sandbox's /tmp, or -1 */
	dev_t		 dev;
	struct left	 left[NAMES_MAX];
	size_t		 n, total, scanned;
} w = { .wfd = -1, .tfd = -1 };

/* The working directory's first component below /tmp ("proj"), or "". */
static void
first_below_tmp(const char *cwd, char *out, size_t len)
{
	const char *s = cwd + strlen("/tmp/");
	size_t n = strcspn(s, "/");

	snprintf(out, len, "%.*s", (int)n, s);
}

void
spawn_tmpwatch_prepare(struct spawn_plan *p, struct spawn_fds *f)
{
	size_t i;
	int sv[2];

	if (p->fs != SPAWN_FS_SANDBOX || !spawn_path_under(p->cwd, "/tmp") ||
	    strcmp(p->cwd, "/tmp") == 0)
		return;
	for (i = 0; i < p->nmounts; i++)
		if (strcmp(p->mounts[i].path, "/tmp") == 0 &&
		    p->mounts[i].kind != SPAWN_MNT_TMPFS)
			return;		/* --ro or --rw /tmp: the host's */
	/* a socket, not a pipe: the byte that lets the command run is sent
	 * with MSG_NOSIGNAL (bwrap's pid 1 may be gone) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return;
	if (spawn_fds_add(f, sv[0], NULL, 0, false) == -1) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	p->block_fd = sv[0];
	w.wfd = sv[1];
	w.plan = p;
}

/* Is fd the sandbox's /tmp (see the top)? */
static bool
is_sandbox_tmp(int fd, const struct stat *host, const char *first)
{
	struct statfs sfs;
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev != host->st_dev &&
	    fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC &&
	    fstatat(fd, first, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode);
}

void
spawn_tmpwatch_attach(pid_t pid1)
{
	struct timespec ms = { 0, 1000000 };
	struct stat host, st;
	char path[64], proc[32], first[NAME_MAX + 1];
	uint64_t until;
	int fd;

	if (w.wfd == -1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid1);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid1);
	first_below_tmp(w.plan->cwd, first, sizeof(first));
	until = gk_clock_ms() + ATTACH_MS;
	while (stat("/tmp", &host) == 0 && gk_clock_ms() < until) {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd != -1 && is_sandbox_tmp(fd, &host, first) &&
		    fstat(fd, &st) == 0) {
			w.tfd = fd;
			w.dev = st.st_dev;
			break;
		}
		if (fd != -1)
			close(fd);
		else if (errno == EACCES || errno == EPERM)
			break;
		if (stat(proc, &st) == -1)
			break;		/* bwrap's pid 1 is gone */
		nanosleep(&ms, NULL);
	}
	/* the command runs now, watched or not */
	(void)send(w.wfd, "", 1, MSG_NOSIGNAL);
	close(w.wfd);
	w.wfd = -1;
}

/* 2: mount point m is /tmp/rel; 1: it is below it; 0: neither. */
static int
relation(const char *m, const char *rel, size_t n)
{
	if (m == NULL || strncmp(m, "/tmp/", 5) != 0 ||
	    strncmp(m + 5, rel, n) != 0)
		return 0;
	return m[5 + n] == '\0' ? 2 : m[5 + n] == '/';
}

/* Is /tmp/rel a mount point (skip), or a parent of one (enter)? */
static int
mount_relation(const char *rel)
{
	const struct spawn_plan *p = w.plan;
	size_t i, n = strlen(rel);
	int r = 0, k;

	for (i = 0; i < p->nmounts && r < 2; i++)
		if ((k = relation(p->mounts[i].path, rel, n)) > r)
			r = k;
	/* the trust files (--ro-bind-data) may be bound under /tmp too */
	for (i = 0; p->trust != NULL && i < p->trust->n && r < 2; i++)
		if ((k = relation(p->trust->file[i].path, rel, n)) > r)
			r = k;
	return r;
}

static void
note(const char *rel, bool isdir)
{
	w.total++;
	if (w.n < NAMES_MAX && (w.left[w.n].rel = strdup(rel)) != NULL)
		w.left[w.n++].isdir = isdir;
}

static void
walk(int dfd, const char *prefix, int depth)
{
	char rel[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, sub;

	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while (w.scanned < SCAN_MAX && (de = readdir(d)) != NULL) {
		w.scanned++;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(rel, sizeof(rel), "%s%s", prefix, de->d_name) >=
		    (int)sizeof(rel) || fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || st.st_dev != w.dev)
			continue;
		switch (mount_relation(rel)) {
		case 2:
			continue;
		case 1:
			if (!S_ISDIR(st.st_mode) || depth >= WALK_DEPTH ||
			    (sub = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
				continue;
			strncat(rel, "/", sizeof(rel) - strlen(rel) - 1);
			walk(sub, rel, depth + 1);
			close(sub);
			continue;
		default:
			note(rel, S_ISDIR(st.st_mode));
		}
	}
	closedir(d);
}

static int
left_cmp(const void *a, const void *b)
{
	return strcmp(((const struct left *)a)->rel,
	    ((const struct left *)b)->rel);
}

void
spawn_tmpwatch_report(const char *cmdname)
{
	char keep[PATH_MAX + 16] = "DIR", show[256];
	size_t i;

	if (w.tfd == -1)
		return;
	walk(w.tfd, "", 0);
	close(w.tfd);
	w.tfd = -1;
	if (w.total == 0)
		return;
	if (w.n > 1)
		qsort(w.left, w.n, sizeof(w.left[0]), left_cmp);
	fprintf(stderr, "gk-run: %s wrote outside the working directory, "
	    "into the sandbox's own /tmp, which is gone with it (never on "
	    "the host): ", cmdname);
	/* names the sandbox chose: shown printable */
	for (i = 0; i < w.n && i < SHOW_MAX; i++) {
		spawn_printable(w.left[i].rel, show, sizeof(show));
		fprintf(stderr, "%s/tmp/%s", i > 0 ? ", " : "", show);
		if (w.left[i].isdir && strcmp(keep, "DIR") == 0)
			snprintf(keep, sizeof(keep), "/tmp/%s", show);
	}
	if (w.total > i)
		fprintf(stderr, " and %s%zu more", w.scanned < SCAN_MAX ?
		    "" : "at least ", w.total - i);
	fprintf(stderr, "; to keep such files, give their directory with "
	    "--rw %s\n", keep);
	for (i = 0; i < w.n; i++)
		free(w.left[i].rel);
}
