/*
 * spawn_hostio: reading the host's files that a sandbox could have
 * touched (a project tree, a git directory): never following a link
 * where the sandbox could have put one, never blocking on a FIFO it
 * made.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2	1
#endif
#endif

#include "spawner/spawn_int.h"

int
spawn_openat_nofollow(int dirfd, const char *rel, int flags, mode_t mode)
{
#if defined(HAVE_OPENAT2) && defined(SYS_openat2)
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)(flags | O_NOFOLLOW);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
	fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	if (fd != -1 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
#endif
	/* without openat2, O_NOFOLLOW guards one name only */
	if (strchr(rel, '/') != NULL) {
		errno = ENOSYS;
		return -1;
	}
	return openat(dirfd, rel, flags | O_NOFOLLOW, mode);
}

int
spawn_open_regular(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

char *
spawn_read_beneath(int dirfd, const char *rel, size_t max, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd, e;

	if ((fd = spawn_openat_nofollow(dirfd, rel, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC, 0)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else
		e = 0;
	if (e != 0) {
		close(fd);
		errno = e;
		return NULL;
	}
	buf = spawn_fd_slurp(fd, max, len);	/* EFBIG past max */
	e = errno;
	close(fd);
	errno = e;
	if (buf != NULL)
		buf[*len] = '\0';	/* slurp leaves room for it */
	return (char *)buf;
}

bool
spawn_first_line(const char *dir, const char *name, char out[PATH_MAX])
{
	uint8_t *buf;
	size_t len;
	int fd;

	if ((fd = spawn_open_regular(dir, name)) == -1)
		return false;
	buf = spawn_fd_slurp(fd, 4096, &len);
	close(fd);
	if (buf == NULL)
		return false;
	buf[len] = '\0';
	buf[strcspn((char *)buf, "\r\n")] = '\0';
	len = (size_t)snprintf(out, PATH_MAX, "%s", (char *)buf);
	free(buf);
	return len > 0 && len < PATH_MAX;
}

char *
spawn_named_path(const char *base, const char *s)
{
	char path[PATH_MAX];
	int n;

	n = s[0] == '/' ? snprintf(path, sizeof(path), "%s", s) :
	    snprintf(path, sizeof(path), "%s/%s", base, s);
	if (n < 0 || n >= (int)sizeof(path))
		return NULL;
	return realpath(path, NULL);
}
