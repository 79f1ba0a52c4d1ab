/*
 * The sandbox's first process, from fork to exec.
 *
 * gk-run (the parent) holds gatekeeperd's control connection and never
 * leaves the user namespace it started in: gatekeeperd refuses control
 * peers from any other, and every sandboxed program is in another, so
 * the process that talks to gatekeeperd is the one that stays outside.
 * The child it forks makes the cage's user and network namespaces, hands
 * the network namespace to the parent over the start channel (a
 * SOCK_SEQPACKET socketpair), waits for the cage, builds bwrap's command
 * line and becomes bwrap.
 *
 * On the channel each message is one kind byte and its body:
 *   child -> parent   'N' + the netns fd (SCM_RIGHTS)  namespaces made
 *                     'D' + a UDP socket               --net none: its
 *                                                      namespaces made,
 *                                                      the resolver's
 *                                                      socket in them
 *                     'L' + the listener fd            the unix socket
 *                                                      gate (not with
 *                                                      --fs host)
 *                     'E' + text                       failed, no exec
 *                     'X' + errno (int)                execve failed
 *   parent -> child   'C' + struct spawn_cage          the cage (with its
 *                                                      CA, credentials):
 *                                                      go on
 * Both ends are CLOEXEC: once bwrap runs, the parent reads EOF. If the
 * parent goes away first, the child gets SIGKILL (PR_SET_PDEATHSIG) or
 * reads EOF, and exits without running anything. Once it has the cage,
 * the child forks the process that execs bwrap and stays as its keeper
 * (spawn_keeper.c): gk-run's child is then the keeper, which exits as
 * bwrap does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "spawner/client/gk_client.h"
#include "spawner/spawn_int.h"

#define MSG_MAX		(1 + (SPAWN_ERRLEN > sizeof(struct spawn_cage) ? \
			    SPAWN_ERRLEN : sizeof(struct spawn_cage)))

int
spawn_fds_add(struct spawn_fds *f, int fd, const uint8_t *data, size_t len,
    bool out)
{
	if (f->n == SPAWN_DATA_FDS_MAX)
		return -1;
	f->fd[f->n] = fd;
	f->src[f->n] = (struct spawn_fdsrc){ fd, data, len, out };
	f->n++;
	return fd;
}

/* One message: kind, body, and optionally an fd. 0 or -1 (errno). */
static int
chan_send(int chan, char kind, const void *body, size_t len, int fd)
{
	union gk_cmsg_fd cm;
	char msg[MSG_MAX];
	struct msghdr mh;
	struct iovec iov;
	ssize_t n;

	if (len > sizeof(msg) - 1) {
		errno = EMSGSIZE;
		return -1;
	}
	msg[0] = kind;
	if (len > 0)
		memcpy(msg + 1, body, len);
	iov = (struct iovec){ msg, len + 1 };
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd != -1)
		gk_client_pass_fd(&mh, &cm, fd);
	do
		n = sendmsg(chan, &mh, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n == -1 ? -1 : 0;
}

/*
 * One message into buf (at most len bytes, kind first), waiting at most
 * wait_ms (-1: forever). Returns its length, 0 on EOF, -1 (errno;
 * ETIMEDOUT). A passed fd lands in *fd (CLOEXEC), else *fd is -1.
 */
static ssize_t
chan_recv(int chan, char *buf, size_t len, int *fd, int wait_ms)
{
	union gk_cmsg_fd cm;
	struct pollfd pfd = { .fd = chan, .events = POLLIN };
	struct msghdr mh;
	struct cmsghdr *c;
	struct iovec iov = { buf, len };
	ssize_t n;
	int r;

	*fd = -1;
	while ((r = poll(&pfd, 1, wait_ms)) == -1 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0)
		return -1;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(chan, &mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	for (c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c != NULL;
	    c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

/* ---- the child -------------------------------------------------------- */

static void __attribute__((noreturn))
child_fail(int chan, const char *msg)
{
	(void)chan_send(chan, 'E', msg, strlen(msg), -1);
	_exit(SPAWN_EXIT_FAIL);
}

/* fd out of the list bwrap inherits, and closed: the view has its text
 * (no stray descriptor reaches the command). */
static void
fds_drop(struct spawn_fds *f, int fd)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->fd[i] == fd) {
			f->fd[i] = f->fd[f->n - 1];
			f->src[i] = f->src[f->n - 1];
			f->n--;
			break;
		}
	close(fd);
}

static int view_root = -1;	/* the child's: its view (spawn_view.c) */

/* The view made here, where the plan and the kernel allow: after the
 * namespaces, while gk-run waits on gatekeeperd. */
static void
child_view(const struct spawn_child *c)
{
	struct timespec t0, t1;
	char err[SPAWN_ERRLEN];
	size_t i;
	int fd;

	if (!spawn_view_wanted(c->plan))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((fd = spawn_view_build(c->plan, err, sizeof(err))) == -1)
		child_fail(c->chan, err);
	if (fd >= 0) {
		view_root = fd;
		c->plan->view = true;
		/* the files' texts are in the view: bwrap gets none */
		for (i = 0; i < c->plan->nmounts; i++)
			if (c->plan->mounts[i].fd >= 0) {
				fds_drop(c->fds, c->plan->mounts[i].fd);
				c->plan->mounts[i].fd = -1;
			}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (c->verbose > 0)
		fprintf(stderr, "gk-run: the filesystem view's %zu mounts %s "
		    "(%.2f ms)\n", c->plan->nmounts, fd >= 0 ? "made by gk-run "
		    "before bwrap (GK_RUN_VIEW=bwrap leaves them to bwrap)" :
		    "left to bwrap: this kernel has no mount_setattr (Linux "
		    "5.12)", (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
}

int
spawn_view_fd(void)
{
	return view_root;
}

void
spawn_view_drop(void)
{
	char path[64];

	if (view_root == -1)
		return;
	/* the tree is reached by its fd only */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", view_root);
	(void)umount2(path, MNT_DETACH);
	close(view_root);
	view_root = -1;
}

/* CLONE_NEWNS when the child makes the view. */
static int
view_ns(const struct spawn_child *c)
{
	return spawn_view_wanted(c->plan) ? CLONE_NEWNS : 0;
}

/* Die with the parent; none of this may outlive gk-run. */
static void
child_tie(const struct spawn_child *c)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != c->parent)
		_exit(SPAWN_EXIT_FAIL);
}

/* Make the namespaces, pass them on, and wait for the cage. */
static void
child_cage(const struct spawn_child *c, struct spawn_cage *cage)
{
	char err[SPAWN_ERRLEN], msg[1 + sizeof(*cage)];
	ssize_t n;
	int nsfd, fd;

	if ((nsfd = spawn_ctl_netns(view_ns(c), err, sizeof(err))) == -1)
		child_fail(c->chan, err);
	child_tie(c);	/* new credentials may have cleared it */
	if (chan_send(c->chan, 'N', NULL, 0, nsfd) == -1)
		_exit(SPAWN_EXIT_FAIL);
	close(nsfd);
	child_view(c);
	n = chan_recv(c->chan, msg, sizeof(msg), &fd, -1);
	if (fd != -1)
		close(fd);
	if (n != (ssize_t)sizeof(msg) || msg[0] != 'C')
		_exit(SPAWN_EXIT_FAIL);		/* gk-run said why */
	memcpy(cage, msg + 1, sizeof(*cage));
	c->plan->cage = cage;
}

/*
 * --net none: the namespaces made here, not by bwrap, so that the
 * resolver's socket (spawn_nonet.c) is in the sandbox's: gk-run answers
 * it.
 */
static void
child_nonet(const struct spawn_child *c)
{
	char err[SPAWN_ERRLEN];
	int fd;

	if (spawn_netns_make(CLONE_NEWNET | view_ns(c), err,
	    sizeof(err)) == -1 ||
	    (fd = spawn_nonet_socket(err, sizeof(err))) == -1)
		child_fail(c->chan, err);
	child_tie(c);	/* new credentials may have cleared it */
	if (chan_send(c->chan, 'D', NULL, 0, fd) == -1)
		_exit(SPAWN_EXIT_FAIL);
	close(fd);
	c->plan->own_netns = true;
	child_view(c);
}

/* resolv.conf: the cage's gateway is its only resolver; --net none's is
 * gk-run's answerer (without the host's file, glibc asks 127.0.0.1 by
 * itself: nothing to mount). */
static void
child_resolv(const struct spawn_child *c)
{
	char resolv[SPAWN_ENDPOINT_MAX + 16], err[SPAWN_ERRLEN];
	int fd;

	spawn_resolv_conf(c->plan, resolv, sizeof(resolv));
	if (resolv[0] == '\0')
		return;
	if ((fd = spawn_memfd_data("gk-run-resolv", resolv,
	    strlen(resolv))) == -1)
		child_fail(c->chan, "cannot pass resolv.conf to the sandbox "
		    "(memfd_create)");
	if (c->plan->view) {
		if (spawn_view_file(view_root, "/etc/resolv.conf", fd, 0600,
		    err, sizeof(err)) == -1)
			child_fail(c->chan, err);
		close(fd);
		return;
	}
	if (spawn_fds_add(c->fds, fd, NULL, 0, false) == -1)
		child_fail(c->chan, "cannot pass resolv.conf to the sandbox "
		    "(memfd_create)");
	c->plan->resolv_fd = fd;
}

/* With credentials: the trust bundles, each ending in the cage's CA. */
static void
child_trust(const struct spawn_child *c, const struct spawn_cage *cage)
{
	struct spawn_trust *t = c->plan->trust;
	char err[SPAWN_ERRLEN];
	size_t i;

	if (t != NULL && spawn_trust_fds(t, cage->ca, c->fds, err,
	    sizeof(err)) == -1)
		child_fail(c->chan, err);
	/* readable by every user inside, as a system bundle is */
	for (i = 0; t != NULL && c->plan->view && i < t->n; i++) {
		if (t->file[i].fd == -1)
			continue;
		if (spawn_view_file(view_root, t->file[i].path, t->file[i].fd,
		    0444, err, sizeof(err)) == -1)
			child_fail(c->chan, err);
		fds_drop(c->fds, t->file[i].fd);
		t->file[i].fd = -1;	/* bwrap has nothing to bind */
	}
}

/* The unix socket gate's filter, last: its listener goes to gk-run. */
static void
child_gate(const struct spawn_child *c)
{
	char err[SPAWN_ERRLEN];
	int fd;

	if ((fd = spawn_sockgate_install(err, sizeof(err))) == -1)
		child_fail(c->chan, err);
	if (chan_send(c->chan, 'L', NULL, 0, fd) == -1)
		_exit(SPAWN_EXIT_FAIL);
	close(fd);
}

void
spawn_child_run(const struct spawn_child *c)
{
	struct spawn_strv argv = { 0 };
	struct spawn_cage cage;
	char err[SPAWN_ERRLEN], *line;
	size_t i;
	int e;

	if (c->ctl_fd != -1)
		close(c->ctl_fd);
	(void)sigprocmask(SIG_SETMASK, c->mask, NULL);
	/* terminal signals reach gk-run only, which forwards them */
	(void)setpgid(0, 0);
	child_tie(c);
	if (c->plan->net == SPAWN_NET_GATED) {
		child_cage(c, &cage);
		child_resolv(c);
		child_trust(c, &cage);
	} else if (c->plan->net == SPAWN_NET_NONE) {
		child_nonet(c);
		child_resolv(c);
	} else if (view_ns(c) != 0) {
		if (spawn_netns_make(CLONE_NEWNS, err, sizeof(err)) == -1)
			child_fail(c->chan, err);
		child_tie(c);	/* new credentials may have cleared it */
		child_view(c);
	}
	if (spawn_keeper_fork(c->parent, c->plan, c->guard_fd, err,
	    sizeof(err)) == -1)
		child_fail(c->chan, err);
	/* bwrap's process from here on; the keeper never returns */
	if (c->plan->view && spawn_view_enter(view_root, err,
	    sizeof(err)) == -1)
		child_fail(c->chan, err);
	if (spawn_bwrap_build(c->plan, &argv) == -1)
		child_fail(c->chan, "out of memory");
	if (c->verbose > 0 && (line = spawn_shell_render(&argv, NULL, 0)) !=
	    NULL)
		fprintf(stderr, "gk-run: %s\n", line);
	for (i = 0; i < c->fds->n; i++)
		(void)fcntl(c->fds->fd[i], F_SETFD, 0);
	if (c->sockgate)
		child_gate(c);
	execve(c->bwrap, argv.v, c->envp);
	e = errno;
	(void)chan_send(c->chan, 'X', &e, sizeof(e), -1);
	_exit(SPAWN_EXIT_FAIL);
}

/* ---- the parent ------------------------------------------------------- */

pid_t
spawn_start_fork(const struct spawn_child *tmpl, int *chan, char *err,
    size_t errlen)
{
	struct spawn_child c = *tmpl;
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		gk_seterr(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	c.parent = getpid();
	spawn_tmpwatch_prepare(c.plan, c.fds);
	if ((pid = fork()) == -1) {
		gk_seterr(err, errlen, "fork: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		close(sp[0]);
		c.chan = sp[1];
		spawn_child_run(&c);
	}
	close(sp[1]);
	*chan = sp[0];
	return pid;
}

/* What a message that was not the expected one means, into err. */
static int
unexpected(const char *msg, ssize_t n, const char *step, char *err,
    size_t errlen)
{
	int e;

	if (n == -1 && errno == ETIMEDOUT)
		gk_seterr(err, errlen, "the sandbox's first process did "
		    "not %s within %d s", step, SPAWN_REPLY_WAIT_MS / 1000);
	else if (n == -1)
		gk_seterr(err, errlen, "the sandbox's first process: %s",
		    strerror(errno));
	else if (n == 0)
		gk_seterr(err, errlen, "the sandbox's first process "
		    "ended before it could %s", step);
	else if (msg[0] == 'E')
		gk_seterr(err, errlen, "%.*s", (int)(n - 1), msg + 1);
	else if (msg[0] == 'X' && n == 1 + (ssize_t)sizeof(e)) {
		memcpy(&e, msg + 1, sizeof(e));
		gk_seterr(err, errlen, "cannot execute bwrap: %s",
		    strerror(e));
	} else
		gk_seterr(err, errlen, "the sandbox's first process sent "
		    "an unexpected message");
	return -1;
}

/*
 * Wait for the child's next step: kind 'N' or 'L' (a 1-byte message with an
 * fd, returned) or 0 (EOF: bwrap runs, 0 returned). -1 with err.
 */
static int
expect(int chan, char kind, const char *step, char *err, size_t errlen)
{
	char msg[MSG_MAX];
	ssize_t n;
	int fd;

	n = chan_recv(chan, msg, sizeof(msg) - 1, &fd, SPAWN_REPLY_WAIT_MS);
	if (kind != 0 && n == 1 && msg[0] == kind && fd != -1)
		return fd;
	if (fd != -1)
		close(fd);
	if (kind == 0 && n == 0)
		return 0;
	if (n > 0)
		msg[n] = '\0';
	return unexpected(msg, n, step, err, errlen);
}

int
spawn_start_netns(int chan, char *err, size_t errlen)
{
	return expect(chan, 'N', "make the cage's namespaces", err, errlen);
}

int
spawn_start_go(int chan, const struct spawn_cage *cage, char *err,
    size_t errlen)
{
	if (chan_send(chan, 'C', cage, sizeof(*cage), -1) == 0)
		return 0;
	gk_seterr(err, errlen, "the sandbox's first process went away "
	    "(%s)", strerror(errno));
	return -1;
}

int
spawn_start_nonet(int chan, char *err, size_t errlen)
{
	return expect(chan, 'D', "make the sandbox's namespaces", err,
	    errlen);
}

int
spawn_start_listener(int chan, char *err, size_t errlen)
{
	return expect(chan, 'L', "start the unix socket gate", err, errlen);
}

int
spawn_start_exec(int chan, char *err, size_t errlen)
{
	return expect(chan, 0, "start bwrap", err, errlen);
}
