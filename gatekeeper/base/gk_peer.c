/*
 * gk_peer: who is at the other end of a control connection, pinned at
 * accept so that nothing can swap the process in between.
 *
 * The process that connected is held by a pidfd: SO_PEERPIDFD (Linux
 * 6.5) names exactly that process; before it, pidfd_open() of
 * SO_PEERCRED's pid, which is only as good as that pid (the peer could
 * have exited and the pid been reused in between). Its namespaces come
 * from the pidfd (PIDFD_GET_USER_NAMESPACE / _NET_NAMESPACE, Linux 6.11)
 * or from /proc/PID/ns/ followed by a check that the pidfd's process is
 * still alive, so the answer describes the process that connected.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_peer.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD		77
#endif
#define PIDFS_IOCTL_MAGIC	0xFF
#ifndef PIDFD_GET_NET_NAMESPACE
#define PIDFD_GET_NET_NAMESPACE		_IO(PIDFS_IOCTL_MAGIC, 4)
#endif
#ifndef PIDFD_GET_USER_NAMESPACE
#define PIDFD_GET_USER_NAMESPACE	_IO(PIDFS_IOCTL_MAGIC, 9)
#endif

static int
sys_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int
sys_pidfd_alive(int pidfd)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
#else
	(void)pidfd;
	errno = ENOSYS;
	return -1;
#endif
}

/* The pidfd of the process that connected; -1 if there is none. */
static int
peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 &&
	    pidfd >= 0)
		return pidfd;
	return pid > 0 ? sys_pidfd_open(pid) : -1;
}

static int
ns_stat(int nsfd, struct gk_ns_id *id)
{
	struct stat st;
	int r;

	r = fstat(nsfd, &st);
	close(nsfd);
	if (r == -1)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/*
 * One namespace of the peer: from the pidfd (exact, and ESRCH once the
 * process is gone), else from /proc (*by_proc set: the caller must check
 * that the pid still names the process that connected).
 */
static int
peer_ns(int pidfd, pid_t pid, unsigned long req, const char *name,
    struct gk_ns_id *id, bool *by_proc)
{
	char path[64];
	int nsfd = -1;

	if (pidfd != -1 && (nsfd = ioctl(pidfd, req, 0)) == -1 &&
	    errno == ESRCH)
		return -1;
	if (nsfd == -1) {
		if (pid <= 0) {		/* in a PID namespace we cannot see */
			errno = ESRCH;
			return -1;
		}
		*by_proc = true;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return nsfd == -1 ? -1 : ns_stat(nsfd, id);
}

int
gk_ns_self(const char *name, struct gk_ns_id *id)
{
	char path[64];
	int nsfd;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	return ns_stat(nsfd, id);
}

int
gk_peer_identify(int fd, struct gk_peer *p, char *why, size_t len)
{
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	bool by_proc = false;
	int pidfd, r = -1;

	memset(p, 0, sizeof(*p));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1) {
		snprintf(why, len, "cannot read the peer's credentials (%s)",
		    strerror(errno));
		return -1;
	}
	p->uid = cr.uid;
	p->gid = cr.gid;
	p->pid = cr.pid;
	pidfd = peer_pidfd(fd, cr.pid);
	if (peer_ns(pidfd, cr.pid, PIDFD_GET_USER_NAMESPACE, "user",
	    &p->userns, &by_proc) == -1 ||
	    peer_ns(pidfd, cr.pid, PIDFD_GET_NET_NAMESPACE, "net",
	    &p->netns, &by_proc) == -1) {
		if (errno == ESRCH || errno == ENOENT)
			snprintf(why, len, "the peer (pid %d) is gone or not "
			    "visible to gatekeeperd", (int)cr.pid);
		else
			snprintf(why, len, "cannot see the peer's namespaces "
			    "(pid %d: %s)", (int)cr.pid, strerror(errno));
	} else if (by_proc && pidfd != -1 && sys_pidfd_alive(pidfd) == -1 &&
	    errno != ENOSYS)
		snprintf(why, len, "the peer (pid %d) is gone", (int)cr.pid);
	else
		r = 0;
	if (pidfd != -1)
		close(pidfd);
	return r;
}
