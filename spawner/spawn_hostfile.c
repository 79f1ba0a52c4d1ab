/*
 * The host files gk-run itself reads and writes for the user: the
 * allow-files, --ask-save's and --learn's. They may sit in a directory
 * the sandbox writes, so no link is followed to them: the directory is
 * opened once by the path the user gave, the file by its last component
 * only beneath that directory, and it must be a regular file. The fds
 * stay open for the run; --learn's file is replaced through the same
 * directory fd (a fresh temporary file, fsync, renameat).
 */
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define TMP_TRIES	8

/* Split `arg` into its directory (opened) and last component. */
static int
open_dir(struct spawn_hostfile *h, char *err, size_t errlen)
{
	const char *slash = strrchr(h->arg, '/');
	char show[256], *dir;

	spawn_printable(h->arg, show, sizeof(show));
	h->base = slash != NULL ? slash + 1 : h->arg;
	if (h->base[0] == '\0' || strcmp(h->base, ".") == 0 ||
	    strcmp(h->base, "..") == 0)
		return gk_seterr(err, errlen, "%s %s: not a file name", h->opt,
		    show);
	if (slash == NULL)
		dir = strdup(".");
	else if (slash == h->arg)
		dir = strdup("/");
	else
		dir = strndup(h->arg, (size_t)(slash - h->arg));
	if (dir == NULL)
		return gk_seterr(err, errlen, "out of memory");
	h->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (h->dirfd == -1)
		return gk_seterr(err, errlen, "%s %s: %s", h->opt, show,
		    strerror(errno));
	return 0;
}

/* The file's canonical path: its directory's, then its name. */
static int
canonical(struct spawn_hostfile *h)
{
	char link[64], dir[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", h->dirfd);
	if ((n = readlink(link, dir, sizeof(dir) - 1)) <= 0 || dir[0] != '/')
		return -1;
	dir[n] = '\0';
	return asprintf(&h->path, "%s%s%s", dir, n == 1 ? "" : "/",
	    h->base) == -1 ? -1 : 0;
}

int
spawn_hostfile_open(struct spawn_hostfile *h, const char *opt,
    const char *arg, bool create, char *err, size_t errlen)
{
	char show[256];
	struct stat st;
	int fd;

	memset(h, 0, sizeof(*h));
	h->opt = opt;
	h->arg = arg;
	h->dirfd = h->fd = -1;
	if (open_dir(h, err, errlen) == -1)
		return -1;
	spawn_printable(arg, show, sizeof(show));
	if (create && (fd = spawn_openat_nofollow(h->dirfd, h->base, O_WRONLY |
	    O_CREAT | O_EXCL | O_CLOEXEC, 0644)) != -1)
		close(fd);
	h->fd = spawn_openat_nofollow(h->dirfd, h->base, O_PATH | O_CLOEXEC, 0);
	if (h->fd == -1 && errno == ELOOP)
		goto link;
	if (h->fd == -1)
		goto fail;
	if (fstat(h->fd, &st) == -1)
		goto fail;
	if (S_ISLNK(st.st_mode))
		goto link;
	if (!S_ISREG(st.st_mode)) {
		gk_seterr(err, errlen, "%s %s: not a regular file", opt, show);
		goto out;
	}
	if (canonical(h) == -1)
		goto fail;
	return 0;
link:
	gk_seterr(err, errlen, "%s %s: a symbolic link; gk-run follows none "
	    "there (name the file itself)", opt, show);
	goto out;
fail:
	gk_seterr(err, errlen, "%s %s: %s", opt, show, strerror(errno));
out:
	spawn_hostfile_close(h);
	return -1;
}

int
spawn_hostfile_reopen(const struct spawn_hostfile *h, int flags)
{
	char link[64];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", h->fd);
	return open(link, flags | O_CLOEXEC);
}

void
spawn_hostfile_close(struct spawn_hostfile *h)
{
	if (h->fd != -1)
		close(h->fd);
	if (h->dirfd != -1)
		close(h->dirfd);
	free(h->path);
	h->fd = h->dirfd = -1;
	h->path = NULL;
}

FILE *
spawn_hostfile_tmp(const struct spawn_hostfile *h, char *tmp, size_t tmplen)
{
	uint32_t r;
	FILE *f;
	int i, fd = -1;

	for (i = 0; i < TMP_TRIES && fd == -1; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid() ^ (uint32_t)i << 24;
		if ((size_t)snprintf(tmp, tmplen, "%s.tmp.%08x", h->base,
		    r) >= tmplen) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		fd = spawn_openat_nofollow(h->dirfd, tmp, O_WRONLY | O_CREAT |
		    O_EXCL | O_CLOEXEC, 0644);
		if (fd == -1 && errno != EEXIST)
			return NULL;
	}
	if (fd == -1)
		return NULL;
	if ((f = fdopen(fd, "w")) == NULL) {
		unlinkat(h->dirfd, tmp, 0);
		close(fd);
	}
	return f;
}

int
spawn_hostfile_commit(const struct spawn_hostfile *h, FILE *f,
    const char *tmp)
{
	bool ok;
	int saved;

	ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	saved = errno;
	if (fclose(f) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (ok && renameat(h->dirfd, tmp, h->dirfd, h->base) == 0)
		return 0;
	if (ok)
		saved = errno;
	unlinkat(h->dirfd, tmp, 0);
	errno = saved;
	return -1;
}
