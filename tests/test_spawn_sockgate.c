/*
 * The unix socket gate: the pure verdict for a connect's resolved path
 * (spawn_sockgate_decide), table-driven; and the filter the sandbox's
 * first process loads, loaded for real in a forked child.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawner/spawn.h"
#include "spawner/spawn_int.h"

static const struct spawn_sockid given[] = {
	{ 8, 100 },		/* --socket /var/run/docker.sock */
	{ 9, 7 },		/* --socket /var/lib/svc/api.sock */
};

struct decide_case {
	const char		*name;
	struct spawn_sock_class	 c;
	size_t			 nallowed;
	enum spawn_sock_verdict	 want;
};

static const struct decide_case decide_cases[] = {
	{ "host socket, read-only mount, none given",
	    { true, true, 8, 100 }, 0, SPAWN_SOCK_REFUSE },
	{ "host socket given with --socket",
	    { true, true, 8, 100 }, 2, SPAWN_SOCK_ALLOW },
	{ "the second --socket",
	    { true, true, 9, 7 }, 2, SPAWN_SOCK_ALLOW },
	{ "given list not consulted past nallowed",
	    { true, true, 9, 7 }, 1, SPAWN_SOCK_REFUSE },
	{ "same inode, other device",
	    { true, true, 9, 100 }, 2, SPAWN_SOCK_REFUSE },
	{ "same device, other inode",
	    { true, true, 8, 101 }, 2, SPAWN_SOCK_REFUSE },
	{ "the sandbox's own: a writable mount",
	    { true, false, 40, 5 }, 0, SPAWN_SOCK_ALLOW },
	{ "a writable mount, with sockets given",
	    { true, false, 40, 5 }, 2, SPAWN_SOCK_ALLOW },
	{ "not a socket, read-only",
	    { false, true, 8, 100 }, 2, SPAWN_SOCK_NOTSOCK },
	{ "not a socket, writable",
	    { false, false, 40, 5 }, 0, SPAWN_SOCK_NOTSOCK },
	{ "device and inode 0, none given",
	    { true, true, 0, 0 }, 0, SPAWN_SOCK_REFUSE },
	{ "a host socket hard-linked into a writable place",
	    { true, false, 40, 6, true }, 0, SPAWN_SOCK_REFUSE },
	{ "... with other sockets given",
	    { true, false, 40, 6, true }, 2, SPAWN_SOCK_REFUSE },
	{ "a hard-linked socket given with --socket",
	    { true, true, 8, 100, true }, 2, SPAWN_SOCK_ALLOW },
};

static void
test_decide(void **state)
{
	const struct decide_case *t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
		t = &decide_cases[i];
		if (spawn_sockgate_decide(&t->c, given, t->nallowed) !=
		    t->want)
			fail_msg("%s", t->name);
	}
	/* no list at all */
	assert_int_equal(spawn_sockgate_decide(&decide_cases[0].c, NULL, 0),
	    SPAWN_SOCK_REFUSE);
}

static void
test_wanted(void **state)
{
	struct spawn_plan p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.fs = SPAWN_FS_SANDBOX;
	assert_true(spawn_sockgate_wanted(&p));
	p.fs = SPAWN_FS_HOST;
	assert_false(spawn_sockgate_wanted(&p));
}

/* In a child: 0 when the filter acts as described, else a step number. */
static int
filter_child(void)
{
	char err[SPAWN_ERRLEN];
	int fd, sv[2], s;

	if ((fd = spawn_sockgate_install(err, sizeof(err))) < 0)
		return 1;
	if (socket(AF_UNIX, SOCK_DGRAM, 0) != -1 || errno != EPERM)
		return 2;
	if (socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0) != -1 ||
	    errno != EPERM)
		return 3;
	if (socket(AF_UNIX, SOCK_RAW, 0) != -1 || errno != EPERM)
		return 4;
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != -1 || errno != EPERM)
		return 5;
	if (syscall(SYS_io_uring_setup, 1, NULL) != -1 || errno != EPERM)
		return 6;
	/* stream, seqpacket and other families are made as ever */
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return 7;
	close(s);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == -1)
		return 8;
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		return 9;
	close(s);
	return 0;
}

static void
test_filter(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if ((pid = fork()) == 0)
		_exit(filter_child());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
