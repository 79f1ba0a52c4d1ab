/*
 * The unix socket gate: a sandbox connects only to the host sockets it
 * was given (--socket) and to sockets in its own writable places,
 * wherever the host's other sockets live (/var/tmp, /var/lib, ...).
 *
 * The sandbox's first process installs a second seccomp filter before it
 * becomes bwrap (spawn_sockgate_install): connect(2) notifies gk-run
 * (SECCOMP_RET_USER_NOTIF), AF_UNIX sockets of type SOCK_DGRAM (and
 * SOCK_RAW, which is the same) cannot be made at all (EPERM), and
 * io_uring_setup fails (EPERM; its connect and socket operations never
 * pass through seccomp). Stream and seqpacket sockets ignore or refuse
 * the address of sendto/sendmsg, so with no datagram unix socket a send
 * reaches no new socket: only connect needs to stop, and sends cost
 * nothing.
 *
 * gk-run's supervisor thread (spawn_sockgate_start) never answers
 * "continue": between its check and the kernel's own work another thread
 * of the sandbox could swap the descriptor (dup2) or rewrite the
 * address. It does the connect itself, on the sandbox's own socket
 * (pidfd_getfd: the same open file, its options and bound name kept),
 * and answers with the result:
 *  - a socket of another family, an abstract or unnamed unix address:
 *    connected to the address as read (the socket's network namespace
 *    decides where it leads, as it would inside);
 *  - a unix pathname: resolved as the sandbox sees it (openat2 below
 *    /proc/TID/root with RESOLVE_IN_ROOT, relative to its cwd: its
 *    symbolic links, absolute ones too, stay inside its root; magic
 *    links are not followed), to an O_PATH fd. The decision is about that
 *    inode, and the connect goes to that inode (/proc/self/fd/N): what
 *    the sandbox renames or links afterwards changes nothing. A socket
 *    given with --socket (same device and inode), or one on a mount the
 *    sandbox can write (its tmpfs, the project, --rw: the only places it
 *    can bind a socket), is connected; one on a read-only mount (the
 *    host's files, bound read-only) is refused with ECONNREFUSED, as if
 *    no one listened there, and said on stderr.
 * A connect that has to wait never holds up the others: TCP ones under
 * way wait in one waiter thread, one to a unix listener whose queue is
 * full in a thread of its own. In a --net none run, the first connect
 * that finds no route (ENETUNREACH) is said on stderr with what to type
 * (spawn_nonet.c), unless a lookup was said before.
 */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <seccomp.h>

#include "gatekeeper/base/gk_thread.h"
#include "spawner/spawn_int.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

/* Linux 6.6: the notifying thread and the supervisor hand the CPU to
 * each other directly */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, uint64_t)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	1
#endif

#define GATE_WORKERS_MAX	256	/* threads waiting at once */
#define GATE_PENDING_MAX	255	/* TCP connects the waiter holds */
#define GATE_SAID_MAX		16	/* refusals told on stderr */

struct spawn_sockgate {
	int			 fd;		/* the seccomp listener */
	struct spawn_sockid	*allowed;	/* --socket's inodes */
	size_t			 nallowed;
	bool			 quiet;
	bool			 nonet;		/* --net none: no route is
						   said (spawn_nonet.c) */
	unsigned int		 said;
	unsigned int		 workers;	/* under lock */
	int			 wake[2];	/* to the waiter: jobs */
	pthread_mutex_t		 lock;
};

/* One connect to do: the socket, where to, and whom to answer. */
struct gate_job {
	struct spawn_sockgate	*g;
	uint64_t		 id;
	int			 sock;		/* the sandbox's socket */
	int			 target;	/* O_PATH fd of a unix socket,
						   or -1: use addr */
	struct sockaddr_storage	 addr;
	socklen_t		 addrlen;
	bool			 pending;	/* TCP under way: its outcome */
};

/*
 * Yama's ptrace_scope: at 2 only a holder of CAP_SYS_PTRACE, at 3 no one
 * may take another process's socket (pidfd_getfd), not even gk-run its
 * descendant's: the gate cannot work there.
 */
bool
spawn_sockgate_possible(void)
{
	long scope = spawn_sysctl_long("/proc/sys/kernel/yama/ptrace_scope");

	/* -1: no Yama */
	return scope < 2 || (scope == 2 && geteuid() == 0);
}

bool
spawn_sockgate_wanted(const struct spawn_plan *p)
{
	return p->fs == SPAWN_FS_SANDBOX && spawn_sockgate_possible();
}

enum spawn_sock_verdict
spawn_sockgate_decide(const struct spawn_sock_class *c,
    const struct spawn_sockid *allowed, size_t nallowed)
{
	size_t i;

	if (!c->is_socket)
		return SPAWN_SOCK_NOTSOCK;
	for (i = 0; i < nallowed; i++)
		if (allowed[i].dev == c->dev && allowed[i].ino == c->ino)
			return SPAWN_SOCK_ALLOW;
	/*
	 * gk-run makes the connect, so the listener sees gk-run's
	 * credentials, not the sandbox's: a host socket hard-linked into a
	 * writable place (gatekeeperd's own control socket, handed in)
	 * must not pass for one the sandbox made. A socket bound by a
	 * program has one name.
	 */
	return c->readonly || c->linked ? SPAWN_SOCK_REFUSE : SPAWN_SOCK_ALLOW;
}

/* ---- the child: the filter -------------------------------------------- */

int
spawn_sockgate_install(char *err, size_t errlen)
{
	static const int types[] = { SOCK_DGRAM, SOCK_RAW };
	scmp_filter_ctx ctx;
	size_t i;
	int rc, fd = -1;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return -1;
	}
	rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	for (i = 0; rc == 0 && i < sizeof(types) / sizeof(types[0]); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, types[i]));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			    SCMP_SYS(socketpair), 2, SCMP_A0(SCMP_CMP_EQ,
			    AF_UNIX), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf,
			    types[i]));
	}
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(io_uring_setup), 0);
	/* sets no_new_privs, which a filter without CAP_SYS_ADMIN needs */
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (rc == 0 && (fd = seccomp_notify_fd(ctx)) < 0)
		rc = fd;
	seccomp_release(ctx);
	if (rc < 0) {
		snprintf(err, errlen, "the unix socket gate's seccomp filter: "
		    "%s", strerror(-rc));
		return -1;
	}
	return fd;
}

/* ---- the supervisor ----------------------------------------------------- */

static void
answer(const struct spawn_sockgate *g, uint64_t id, int error)
{
	struct seccomp_notif_resp resp;

	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.error = error == 0 ? 0 : -error;
	/* ENOENT: the call was interrupted meanwhile; it is restarted */
	(void)ioctl(g->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static int
do_connect(struct gate_job *j)
{
	struct sockaddr_un sun;
	int r;

	if (j->target == -1)
		r = connect(j->sock, (struct sockaddr *)&j->addr, j->addrlen);
	else {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path),
		    "/proc/self/fd/%d", j->target);
		r = connect(j->sock, (struct sockaddr *)&sun, sizeof(sun));
	}
	return r == 0 ? 0 : errno;
}

static void
job_end(struct gate_job *j)
{
	close(j->sock);
	if (j->target != -1)
		close(j->target);
	free(j);
}

/* A TCP connect under way (EINPROGRESS): its outcome, once known. */
static int
outcome(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int e = 0;

	while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
		;
	if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		e = errno;
	return e;
}

/* The thread for one connect that must wait. */
static void *
worker(void *arg)
{
	struct gate_job *j = arg;
	struct spawn_sockgate *g = j->g;

	answer(g, j->id, j->pending ? outcome(j->sock) : do_connect(j));
	job_end(j);
	pthread_mutex_lock(&g->lock);
	g->workers--;
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

static void
start_worker(struct gate_job *j)
{
	struct spawn_sockgate *g = j->g;
	pthread_attr_t attr;
	pthread_t t;
	bool queued = false;

	pthread_mutex_lock(&g->lock);
	if (g->workers < GATE_WORKERS_MAX && pthread_attr_init(&attr) == 0) {
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, worker, j) == 0) {
			g->workers++;
			queued = true;
		}
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&g->lock);
	if (!queued) {
		answer(g, j->id, EAGAIN);
		job_end(j);
	}
}

/*
 * The waiter thread: TCP connects under way, answered as each completes
 * (one thread for all of them; jobs come over g->wake).
 */
static void *
waiter(void *arg)
{
	struct spawn_sockgate *g = arg;
	struct gate_job *jobs[GATE_PENDING_MAX + 1], *j;
	struct pollfd pfd[GATE_PENDING_MAX + 1];
	size_t n = 0, i;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = g->wake[0], .events = POLLIN };
		for (i = 0; i < n; i++)
			pfd[i + 1] = (struct pollfd){ .fd = jobs[i + 1]->sock,
			    .events = POLLOUT };
		if (poll(pfd, n + 1, -1) == -1)
			continue;
		for (i = n; i > 0; i--) {
			if (pfd[i].revents == 0)
				continue;
			j = jobs[i];
			answer(g, j->id, outcome(j->sock));
			job_end(j);
			jobs[i] = jobs[n--];
		}
		if ((pfd[0].revents & POLLIN) != 0 && n < GATE_PENDING_MAX &&
		    read(g->wake[0], &j, sizeof(j)) == (ssize_t)sizeof(j))
			jobs[++n] = j;
	}
	return NULL;
}

/*
 * A connect on a blocking socket, tried without waiting first (the
 * socket's O_NONBLOCK set for the call): unix sockets are done at once
 * unless the listener's queue is full (EAGAIN), TCP ones are under way
 * (EINPROGRESS).
 */
static int
try_now(struct gate_job *j, int fl)
{
	int e;

	if (fcntl(j->sock, F_SETFL, fl | O_NONBLOCK) == -1)
		return EAGAIN;
	e = do_connect(j);
	(void)fcntl(j->sock, F_SETFL, fl);
	return e;
}

/* The result to the sandbox; without a network, its first connect that
 * found no route is said. */
static void
finish(struct gate_job *j, int e)
{
	if (e == ENETUNREACH && j->g->nonet)
		spawn_nonet_unreachable((struct sockaddr *)&j->addr);
	answer(j->g, j->id, e);
	job_end(j);
}

/* Connect now; what must wait goes to the waiter or a thread. */
static void
run_job(struct gate_job *j, int domain)
{
	struct spawn_sockgate *g = j->g;
	int fl, e;

	if ((fl = fcntl(j->sock, F_GETFL)) == -1 || (fl & O_NONBLOCK) != 0) {
		finish(j, do_connect(j));
		return;
	}
	e = try_now(j, fl);
	if (e == EINPROGRESS && domain != AF_UNIX) {
		j->pending = true;
		if (write(g->wake[1], &j, sizeof(j)) != (ssize_t)sizeof(j))
			start_worker(j);
		return;
	}
	if (e == EAGAIN && domain == AF_UNIX) {
		start_worker(j);	/* a full queue: wait in a thread */
		return;
	}
	finish(j, e);
}

static void
say_refused(struct spawn_sockgate *g, const char *path)
{
	char show[256];

	if (g->quiet || g->said++ >= GATE_SAID_MAX)
		return;
	fprintf(stderr, "gk-run: refused a connection to the host socket %s "
	    "(not given with --socket)%s\n", spawn_printable(path, show,
	    sizeof(show)), g->said == GATE_SAID_MAX ? "; further refusals "
	    "are not told" : "");
}

/*
 * The pathname `path` (the sandbox's, relative to its cwd) of the
 * thread `tid`, opened as the sandbox sees it (O_PATH) and judged.
 * Returns the O_PATH fd to connect to, or -1 with *error to answer.
 */
static int
judge_path(struct spawn_sockgate *g, pid_t tid, int rootfd,
    const char *path, int *error)
{
	struct spawn_sock_class c = { 0 };
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char full[PATH_MAX], cwd[PATH_MAX], link[64];
	struct statvfs sv;
	struct stat st;
	ssize_t n;
	int fd;

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
		if ((n = readlink(link, cwd, sizeof(cwd) - 1)) <= 0 ||
		    cwd[0] != '/') {
			*error = ECONNREFUSED;
			return -1;
		}
		cwd[n] = '\0';
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", cwd, path) >=
		    sizeof(full)) {
			*error = ENAMETOOLONG;
			return -1;
		}
	}
	if ((fd = (int)syscall(SYS_openat2, rootfd, full, &how,
	    sizeof(how))) == -1) {
		*error = errno;
		return -1;
	}
	if (fstat(fd, &st) == -1 || fstatvfs(fd, &sv) == -1) {
		*error = errno;
		close(fd);
		return -1;
	}
	c.is_socket = S_ISSOCK(st.st_mode);
	c.readonly = (sv.f_flag & ST_RDONLY) != 0;
	c.linked = st.st_nlink > 1;
	c.dev = st.st_dev;
	c.ino = st.st_ino;
	switch (spawn_sockgate_decide(&c, g->allowed, g->nallowed)) {
	case SPAWN_SOCK_ALLOW:
		return fd;
	case SPAWN_SOCK_REFUSE:
		say_refused(g, full);
		break;
	case SPAWN_SOCK_NOTSOCK:
		break;
	}
	close(fd);
	*error = ECONNREFUSED;
	return -1;
}

/* The process of thread `tid` (its fds are the thread group's). */
static pid_t
thread_group(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((f = fopen(path, "re")) == NULL)
		return tid;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid;
}

/* The sandbox thread's socket (fd) as ours; -1 with *error. */
static int
grab_socket(pid_t tid, int fd, int *pidfd, int *error)
{
	int s;

	*pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (*pidfd == -1 && errno == EINVAL)	/* before Linux 6.9 */
		*pidfd = (int)syscall(SYS_pidfd_open, thread_group(tid), 0);
	if (*pidfd == -1) {
		*error = ECONNREFUSED;
		return -1;
	}
	if ((s = (int)syscall(SYS_pidfd_getfd, *pidfd, fd, 0)) == -1)
		*error = errno == EBADF ? EBADF : ECONNREFUSED;
	return s;
}

/* The address, read once from the sandbox's memory. */
static int
read_addr(pid_t tid, const struct seccomp_data *d, struct gate_job *j)
{
	struct iovec local, remote;
	uint64_t len = d->args[2];

	if (len > sizeof(j->addr))
		return EINVAL;
	j->addrlen = (socklen_t)len;
	local = (struct iovec){ &j->addr, len };
	remote = (struct iovec){ (void *)(uintptr_t)d->args[1], len };
	if (len > 0 && process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return EFAULT;
	return 0;
}

/* Where the connect goes; 0, or the errno to answer. */
static int
aim(struct spawn_sockgate *g, pid_t tid, struct gate_job *j, int *domainp)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1], root[64];
	const struct sockaddr_un *sun = (struct sockaddr_un *)&j->addr;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	socklen_t dlen = sizeof(int);
	int domain, rootfd, error = 0;

	if (getsockopt(j->sock, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) == -1)
		return errno;
	*domainp = domain;
	/* another family, or a unix address without a path */
	if (domain != AF_UNIX || j->addrlen <= off ||
	    sun->sun_family != AF_UNIX || sun->sun_path[0] == '\0')
		return 0;
	n = j->addrlen - off;
	memcpy(path, sun->sun_path, n);
	path[n] = '\0';
	snprintf(root, sizeof(root), "/proc/%d/root", (int)tid);
	if ((rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return ECONNREFUSED;
	j->target = judge_path(g, tid, rootfd, path, &error);
	close(rootfd);
	return j->target == -1 ? error : 0;
}

static void
handle(struct spawn_sockgate *g, const struct seccomp_notif *req)
{
	struct gate_job *j;
	pid_t tid = (pid_t)req->pid;
	int pidfd = -1, error = 0, domain = AF_UNSPEC;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		answer(g, req->id, ENOMEM);
		return;
	}
	*j = (struct gate_job){ .g = g, .id = req->id, .target = -1 };
	j->sock = grab_socket(tid, (int)req->data.args[0], &pidfd, &error);
	if (j->sock != -1)
		error = read_addr(tid, &req->data, j);
	/* the thread is still the one that asked: the pid is its own */
	if (error == 0 && ioctl(g->fd, SECCOMP_IOCTL_NOTIF_ID_VALID,
	    &req->id) == -1)
		error = ECONNREFUSED;
	if (error == 0)
		error = aim(g, tid, j, &domain);
	if (pidfd != -1)
		close(pidfd);
	if (error != 0 || j->sock == -1) {
		answer(g, req->id, error != 0 ? error : ECONNREFUSED);
		if (j->sock != -1)
			close(j->sock);
		free(j);
		return;
	}
	run_job(j, domain);
}

/* Has the filter no process left (the listener hung up)? Waits for a
 * call or the hang-up. */
static bool
gate_hung_up(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return true;
	return (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static void *
supervise(void *arg)
{
	struct spawn_sockgate *g = arg;
	struct seccomp_notif req;

	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(g->fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1) {
			if (errno == EINTR)
				continue;
			/* ENOENT: a call withdrawn, or every process of the
			 * sandbox gone, which the kernel says at once and
			 * again on each try: wait for the next call, or the
			 * hang-up that says there will be none */
			if (errno == ENOENT && !gate_hung_up(g->fd))
				continue;
			break;		/* the sandbox is gone */
		}
		handle(g, &req);
	}
	return NULL;
}

/* The inodes of the sockets bound read-only into the sandbox. */
static int
allowed_list(struct spawn_sockgate *g, const struct spawn_plan *p)
{
	struct stat st;
	size_t i;

	if ((g->allowed = calloc(p->nmounts + 1, sizeof(*g->allowed))) ==
	    NULL)
		return -1;
	for (i = 0; i < p->nmounts; i++)
		if (p->mounts[i].kind == SPAWN_MNT_RO &&
		    stat(p->mounts[i].path, &st) == 0 && S_ISSOCK(st.st_mode))
			g->allowed[g->nallowed++] = (struct spawn_sockid){
			    st.st_dev, st.st_ino };
	return 0;
}

struct spawn_sockgate *
spawn_sockgate_start(int fd, const struct spawn_plan *p, bool quiet,
    char *err, size_t errlen)
{
	struct spawn_sockgate *g;
	pthread_t t;
	int rc;

	if ((g = calloc(1, sizeof(*g))) == NULL || allowed_list(g, p) == -1) {
		free(g);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->fd = fd;
	g->quiet = quiet;
	g->nonet = p->net == SPAWN_NET_NONE;
	/* older kernels: EINVAL, and the usual wake-ups */
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
	    SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	pthread_mutex_init(&g->lock, NULL);
	/* signals stay with the main thread's signalfd */
	rc = pipe2(g->wake, O_CLOEXEC | O_NONBLOCK) == -1 ? errno : 0;
	if (rc == 0 && (rc = gk_thread_start(&t, waiter, g, true)) == 0) {
		/* the waiter reads when it has room */
		(void)fcntl(g->wake[0], F_SETFL, 0);
		rc = gk_thread_start(&t, supervise, g, true);
	}
	if (rc != 0) {
		snprintf(err, errlen, "the unix socket gate: %s",
		    strerror(rc));
		free(g->allowed);
		free(g);
		return NULL;
	}
	return g;
}
