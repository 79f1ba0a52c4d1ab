/*
 * gk_ctlsock: binding the control socket (parent directory, stale socket
 * check, mode 0660, group "gatekeeper"). Internal to gk_control.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/faces/gk_control_int.h"

/* mkdir -p the directory part of path, 0755. */
static int
make_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *p, c;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((p = strrchr(dir, '/')) == NULL || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "control socket directory %s: "
			    "%s", dir, strerror(errno));
			return -1;
		}
		if ((*p = c) == '\0')
			break;
	}
	return 0;
}

/* The path is free, or a stale socket was removed: 0. Else -1. */
static int
clear_stale(const char *path, const struct sockaddr_un *sun, char *err,
    size_t errlen)
{
	struct stat st;
	int fd, r, e;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : gk_seterr(err, errlen,
		    "control socket %s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s: the path exists and "
		    "is not a socket; remove it or choose another path with "
		    "--control", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return gk_seterr(err, errlen, "socket: %s", strerror(errno));
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	e = errno;
	close(fd);
	if (r == -1 && e == ECONNREFUSED) {
		log_info("removing stale control socket %s", path);
		if (unlink(path) == -1 && errno != ENOENT)
			return gk_seterr(err, errlen, "cannot remove stale "
			    "control socket %s: %s", path, strerror(errno));
		return 0;
	}
	if (r == 0 || e == EAGAIN || e == EINPROGRESS)
		snprintf(err, errlen, "control socket %s: another gatekeeperd "
		    "is running (it answers on this socket); stop it first or "
		    "use --control to choose another path", path);
	else
		snprintf(err, errlen, "control socket %s exists and cannot be "
		    "checked: %s", path, strerror(e));
	return -1;
}

static void
set_owner(const char *path)
{
	struct group *gr;

	if ((gr = getgrnam(GK_CONTROL_GROUP)) == NULL) {
		log_debug("no group %s: control socket %s stays root only",
		    GK_CONTROL_GROUP, path);
		return;
	}
	if (chown(path, (uid_t)-1, gr->gr_gid) == -1)
		log_warn("chown %s to group %s", path, GK_CONTROL_GROUP);
}

int
gk_ctlsock_bind(const char *path, dev_t *dev, ino_t *ino, char *err,
    size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t mask;
	int fd, r;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path) || path[0] == 0)
		return gk_seterr(err, errlen, "control socket path '%s' is "
		    "empty or too long (at most %zu bytes)", path,
		    sizeof(sun.sun_path) - 1);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (make_parent(path, err, errlen) == -1 ||
	    clear_stale(path, &sun, err, errlen) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return gk_seterr(err, errlen, "socket: %s", strerror(errno));
	mask = umask(0177);	/* no window with a wider mode */
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(mask);
	if (r == -1 || chmod(path, 0660) == -1 ||
	    stat(path, &st) == -1 || listen(fd, 128) == -1) {
		snprintf(err, errlen, "control socket %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	set_owner(path);
	return fd;
}
