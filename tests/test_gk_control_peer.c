/*
 * Control socket server: the peers refused at accept, each with a
 * message and then EOF: another uid (a forked client that drops
 * privileges, when run as root), another user namespace, a peer inside a
 * cage's network namespace. The fixture: tests/control_testutil.h.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_peer.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control.h"
#include "tests/control_testutil.h"

/* What a forked peer does before it connects: 0, or -1 to skip. */
static int
become_nobody(void)
{
	return setgid(65534) == -1 || setuid(65534) == -1 ? -1 : 0;
}

static int
new_userns(void)
{
	return unshare(CLONE_NEWUSER);
}

/*
 * A peer in a child process, after become(): it must be refused with a
 * message holding `want`, then see EOF. Returns the child's status: 0
 * as expected, 77 when become() could not be done here.
 */
static int
refused_peer(struct fixture *f, int (*become)(void), const char *want)
{
	char line[1024];
	pid_t pid;
	int st = -1, i, fd;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		ssize_t n;

		if (become() == -1)
			_exit(77);
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", f->path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			_exit(4);
		n = read(fd, line, sizeof(line) - 1);
		line[n < 0 ? 0 : n] = '\0';
		_exit(strstr(line, "\"ok\":false") != NULL &&
		    strstr(line, want) != NULL &&
		    read(fd, line, 1) == 0 ? 0 : 5);
	}
	for (i = 0; i < 5000; i++) {
		spin(f, 1);
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		usleep(1000);
	}
	assert_true(WIFEXITED(st));
	spin(f, 3);
	assert_int_equal(gk_control_nconns(f->ctl), 0);
	return WEXITSTATUS(st);
}

static void
test_not_permitted(void **state)
{
	struct fixture *f = *state;

	if (geteuid() != 0)
		skip();
	chmod(f->dir, 0755);
	chmod(f->path, 0666);	/* let the unprivileged child connect */
	assert_int_equal(refused_peer(f, become_nobody, "not permitted"), 0);
}

/*
 * A peer in another user namespace (as every sandboxed program is) is
 * refused, with the socket's mode and the peer's uid allowing it.
 */
static void
test_other_userns(void **state)
{
	struct fixture *f = *state;
	int st;

	st = refused_peer(f, new_userns, "another user namespace");
	if (st == 77)
		skip();		/* user namespaces not available */
	assert_int_equal(st, 0);
	assert_int_equal(gk_cage_table_count(f->cages), 0);
}

/* A peer inside a cage's namespace is refused at once. */
static void
test_peer_in_cage(void **state)
{
	struct fixture *f = *state;
	char line[1024];
	int fd;

	set_plumb(f);
	assert_int_equal(gk_ns_self("net", &prec.caged), 0);
	fd = client(f);
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "runs inside a cage"));
	assert_int_equal(read_line(f, fd, line, sizeof(line)), -1);
	close(fd);
	spin(f, 3);
	assert_int_equal(gk_control_nconns(f->ctl), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_permitted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peer_in_cage, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_userns, setup,
		    teardown),
	};

	log_init("test_gk_control_peer", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
