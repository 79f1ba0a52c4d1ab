/*
 * The seccomp profiles, loaded for real: each check runs in a forked
 * child that sets no_new_privs, loads the filter (as bwrap would) and
 * reports the first check that failed in its exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "spawner/spawn.h"
#include "spawner/spawn_int.h"

/* The call fails with `e`; a call that succeeded is undone. */
static bool
fails(long r, int e)
{
	return r == -1 && errno == e;
}

static bool
raw_clone_fails(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		return false;
	}
	return errno == EPERM;
}

static bool
clone3_enosys(void)
{
	struct clone_args ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	return fails(syscall(SYS_clone3, &ca, sizeof(ca)), ENOSYS);
}

static void *
thread_fn(void *arg)
{
	return arg;
}

static bool
still_works(void)
{
	pthread_t t;
	void *ret = NULL;
	char buf[8];
	pid_t pid;
	int fd, st;

	if (getpid() <= 0 || (fd = open("/dev/zero", O_RDONLY)) == -1 ||
	    read(fd, buf, sizeof(buf)) != sizeof(buf) || close(fd) != 0)
		return false;
	if ((fd = open("/dev/null", O_WRONLY)) == -1 ||
	    write(fd, "x", 1) != 1 || close(fd) != 0)
		return false;
	/* fork is clone without CLONE_NEW*; threads fall back from clone3 */
	if ((pid = fork()) == 0)
		_exit(7);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || WEXITSTATUS(st) != 7)
		return false;
	if (pthread_create(&t, NULL, thread_fn, (void *)buf) != 0 ||
	    pthread_join(t, &ret) != 0 || ret != buf)
		return false;
	/* unshare without a namespace flag is harmless */
	return unshare(CLONE_FS) == 0;
}

/* Returns 0, or the number of the first failed check. */
static int
checks_default(void)
{
	if (!fails(unshare(CLONE_NEWUSER), EPERM))
		return 1;
	if (!fails(unshare(CLONE_NEWNET), EPERM) ||
	    !fails(unshare(CLONE_NEWNS), EPERM) ||
	    !fails(unshare(CLONE_NEWPID | CLONE_FS), EPERM))
		return 2;
	if (!raw_clone_fails(CLONE_NEWUSER))
		return 3;
	if (!raw_clone_fails(CLONE_NEWNET) ||
	    !raw_clone_fails(CLONE_NEWNS | CLONE_NEWPID))
		return 4;
	if (!clone3_enosys())
		return 5;
	if (!fails(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM))
		return 6;
	if (!fails(setns(0, 0), EPERM))
		return 7;
	if (!fails(mount("none", "/nonexistent", "tmpfs", 0, NULL), EPERM) ||
	    !fails(syscall(SYS_bpf, 0, NULL, 0), EPERM) ||
	    !fails(syscall(SYS_keyctl, 0, -3, 0), EPERM) ||
	    !fails(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM))
		return 8;
	if (!fails(syscall(SYS_io_uring_setup, 1, NULL), EPERM) ||
	    !fails(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0), EPERM))
		return 10;
	if (!still_works())
		return 9;
	return 0;
}

static int
checks_relaxed(void)
{
	long r;

	/* namespaces stay closed */
	if (!fails(unshare(CLONE_NEWUSER), EPERM) ||
	    !raw_clone_fails(CLONE_NEWUSER) || !raw_clone_fails(CLONE_NEWNET))
		return 11;
	if (!clone3_enosys())
		return 12;
	if (!fails(syscall(SYS_reboot, 0, 0, 0, NULL), EPERM) ||
	    !fails(syscall(SYS_init_module, NULL, 0, ""), EPERM) ||
	    !fails(syscall(SYS_swapoff, "/nonexistent"), EPERM))
		return 13;
	/* what relaxed allows and default does not */
	r = syscall(SYS_keyctl, 0, -3, 0);
	if (r == -1 && errno == EPERM)
		return 14;
	r = syscall(SYS_io_uring_setup, 1, NULL);	/* EFAULT: reached */
	if (r == -1 && errno == EPERM)
		return 17;
	if (!still_works())
		return 15;
	/* last: a traced child stops on every signal */
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 16;
	return 0;
}

/* Run fn under the profile in a child; its wait status. */
static int
under(enum spawn_seccomp profile, int (*fn)(void))
{
	char err[SPAWN_ERRLEN] = "";
	void *ctx;
	pid_t pid;
	int st;

	ctx = spawn_seccomp_build(profile, err, sizeof(err));
	if (ctx == NULL)
		fail_msg("build %s: %s", spawn_seccomp_name(profile), err);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    seccomp_load(ctx) != 0)
			_exit(100);
		_exit(fn());
	}
	assert_true(pid > 0);
	seccomp_release(ctx);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* Every check of fn passes under the profile (fn returns 0). */
static void
expect_checks(enum spawn_seccomp profile, int (*fn)(void))
{
	int st;

	st = under(profile, fn);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s profile: check %d failed (signal %d)",
		    spawn_seccomp_name(profile),
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void
test_default(void **state)
{
	(void)state;
	expect_checks(SPAWN_SECCOMP_DEFAULT, checks_default);
}

static void
test_relaxed(void **state)
{
	(void)state;
	expect_checks(SPAWN_SECCOMP_RELAXED, checks_relaxed);
}

static int
set_clock(void)
{
	/* NULL, NULL changes nothing even where it is allowed */
	syscall(SYS_settimeofday, NULL, NULL);
	return 0;
}

static int
port_io(void)
{
	syscall(SYS_ioperm, 0x80, 1, 0);
	return 0;
}

static void
test_kill(void **state)
{
	int st;

	(void)state;
	st = under(SPAWN_SECCOMP_DEFAULT, set_clock);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
	st = under(SPAWN_SECCOMP_DEFAULT, port_io);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
	/* relaxed does not kill */
	st = under(SPAWN_SECCOMP_RELAXED, set_clock);
	assert_true(WIFEXITED(st));
}

static void
test_off_and_export(void **state)
{
	char err[SPAWN_ERRLEN] = "";
	struct stat sb;
	int fd;

	(void)state;
	assert_null(spawn_seccomp_build(SPAWN_SECCOMP_OFF, err, sizeof(err)));
	assert_string_equal(spawn_seccomp_name(SPAWN_SECCOMP_RELAXED),
	    "relaxed");
	/* the memfd bwrap reads: whole instructions, at offset 0 */
	fd = spawn_seccomp_memfd(SPAWN_SECCOMP_DEFAULT, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_true(sb.st_size > 0 && sb.st_size % 8 == 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_relaxed),
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_off_and_export),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
