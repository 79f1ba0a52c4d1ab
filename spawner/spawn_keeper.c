/*
 * The keeper: the sandbox's first process stays, between gk-run and
 * bwrap, so that nothing of the sandbox outlives gk-run, at any moment.
 *
 * bwrap's --die-with-parent ties bwrap to its parent, and bwrap's pid 1
 * (the sandbox's init, which takes every process of the sandbox with it
 * when it dies) to bwrap; but pid 1 ties itself only at the end of its
 * set-up, after the mounts. A gk-run killed (kill -9) in those few
 * milliseconds took bwrap along and left pid 1, orphaned, to go on and
 * run the command under init. Where a cage's cgroup holds the sandbox,
 * gatekeeperd's end of the cage killed them; where none does (--net none
 * and --net host runs, a gatekeeperd with --cgroup off) nothing did.
 *
 * So the first process, once the namespaces and the cage are made,
 * becomes a child subreaper and forks the process that execs bwrap. An
 * orphan below it (bwrap's pid 1 when bwrap died) is reparented to the
 * keeper instead of init, and the keeper kills it. The keeper:
 *   - learns of gk-run's death by a parent-death signal of its own
 *     (KEEPER_PARENT_GONE, caught), then kills bwrap and every child it
 *     is left with, waits until none is left (bounded), and does what
 *     gk-run would have done at its end on the host (it shares the
 *     host's mount namespace): the gitlinks' check
 *     (spawn_gitlinks_check()) and the placeholders' removal, through
 *     the registry gk-run holds (spawn_guard_cleanup(), the same open
 *     file and so the same lock);
 *   - relays the signals gk-run sends before the sandbox's process group
 *     is known (spawn_run.c's deliver()) to bwrap;
 *   - when bwrap exits, kills what bwrap left (its pid 1 killed during
 *     set-up), then exits as bwrap did (the status or the signal), which
 *     gk-run reads as before.
 * It holds no file descriptor of gk-run's or the sandbox's but stderr
 * (for what spawn_gitlinks_check() says), the placeholders' registry
 * and the view gk-run's child made (spawn_view.c; let go before that
 * work, or its mount points could not be removed):
 * a reader of the sandbox's output sees its end when the sandbox's
 * processes end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define KEEPER_PARENT_GONE	(SIGRTMIN + 3)	/* gk-run died */
#define KEEPER_REAP_MS		5000	/* what is killed is gone by then */
#define KEEPER_POLL_MS		20	/* a check for what does not die */

/* SIGKILL to each child this process has now; how many there were. */
static int
kill_children(void)
{
	char path[64], buf[4096], *s, *e;
	int fd, n = 0;
	ssize_t len;
	long pid;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)getpid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	for (s = buf; *s != '\0'; s = e) {
		errno = 0;
		pid = strtol(s, &e, 10);
		if (e == s)
			break;
		if (errno == 0 && pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	}
	return n;
}

/*
 * Kill every child, those reparented here included, and reap them all:
 * until none is left, or (a kernel without /proc/PID/task/TID/children,
 * a child that does not die) for at most KEEPER_REAP_MS.
 */
static void
reap_all(void)
{
	struct timespec t0, now, step = { 0, KEEPER_POLL_MS * 1000000L };
	sigset_t chld;
	int ms;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		(void)kill_children();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (int)((now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms >= KEEPER_REAP_MS)
			return;
		/* the next death wakes this at once (every signal is blocked
		 * here, SIGCHLD stays pending); a child that does not die,
		 * or one reparented here meanwhile, within KEEPER_POLL_MS */
		(void)sigtimedwait(&chld, NULL, &step);
	}
}

/* Exit as bwrap did. */
static void __attribute__((noreturn))
exit_as(int wstatus)
{
	struct rlimit none = { 0, 0 };
	sigset_t one;
	int sig;

	if (!WIFSIGNALED(wstatus))
		_exit(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
		    SPAWN_EXIT_FAIL);
	sig = WTERMSIG(wstatus);
	(void)setrlimit(RLIMIT_CORE, &none);	/* bwrap's core, not ours */
	(void)signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	(void)sigprocmask(SIG_UNBLOCK, &one, NULL);
	(void)kill(getpid(), sig);
	_exit(128 + sig);
}

static void __attribute__((noreturn))
keep(const struct spawn_plan *plan, int guard_fd, pid_t bwrap, int sfd)
{
	struct signalfd_siginfo si;
	int wstatus = 0;
	pid_t w;

	for (;;) {
		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si)) {
			if (errno == EINTR)
				continue;
			break;		/* cannot happen; end it all */
		}
		if ((int)si.ssi_signo == KEEPER_PARENT_GONE)
			break;
		if (si.ssi_signo != SIGCHLD) {
			(void)kill(bwrap, (int)si.ssi_signo);
			continue;
		}
		/* bwrap, or an orphan that came here and died */
		while ((w = waitpid(-1, &wstatus, WNOHANG)) > 0)
			if (w == bwrap) {
				reap_all();
				exit_as(wstatus);
			}
	}
	(void)kill(bwrap, SIGKILL);
	reap_all();
	/* a mount point in the view is busy while the view holds it */
	spawn_view_drop();
	spawn_gitlinks_check(plan);
	spawn_guard_cleanup(guard_fd, plan);
	_exit(SPAWN_EXIT_FAIL);
}

/* Every fd from 3 up closed but a and b (-1: none). */
static void
close_all_but(int a, int b)
{
	int keep[2] = { a < b ? a : b, a < b ? b : a }, from = 3, i;

	for (i = 0; i < 2; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from)
			(void)close_range((unsigned int)from,
			    (unsigned int)keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	(void)close_range((unsigned int)from, ~0U, 0);
}

pid_t
spawn_keeper_fork(pid_t parent, const struct spawn_plan *plan, int guard_fd,
    char *err, size_t errlen)
{
	sigset_t all, old;
	pid_t self = getpid(), pid;
	int sfd;

	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) == -1 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1) == -1 ||
	    prctl(PR_SET_PDEATHSIG, KEEPER_PARENT_GONE) == -1) {
		gk_seterr(err, errlen, "cannot keep the sandbox (prctl): %s",
		    strerror(errno));
		return -1;
	}
	if (getppid() != parent)
		_exit(SPAWN_EXIT_FAIL);		/* gk-run is gone already */
	if ((pid = fork()) == -1) {
		gk_seterr(err, errlen, "cannot fork bwrap: %s",
		    strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* bwrap's: dies with the keeper, whatever ends it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != self)
			_exit(SPAWN_EXIT_FAIL);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	/* nothing of gk-run's or the sandbox's stays open here but
	 * stderr, the registry and the view (let go at gk-run's death) */
	(void)close_range(0, 1, 0);
	close_all_but(guard_fd, spawn_view_fd());
	if ((sfd = signalfd(-1, &all, SFD_CLOEXEC)) == -1) {
		(void)kill(pid, SIGKILL);
		reap_all();
		_exit(SPAWN_EXIT_FAIL);
	}
	keep(plan, guard_fd, pid, sfd);
}
