/*
 * The control socket's client (spawner/client/gk_client.c), over a real
 * socketpair and a real unix socket: lines split across reads and
 * several in one, a line too long, a timeout, the peer closing in the
 * middle of a line, a descriptor riding with the first byte of a line,
 * connects that fail (no socket, a path too long), and the one message
 * both clients print for such a failure (gk_client_hint.c).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawner/client/gk_client.h"

static void
pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
}

static void
put(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void
test_lines(void **state)
{
	struct gk_client *c;
	const char *line;
	size_t len;
	int sv[2];

	(void)state;
	pair(sv);
	assert_non_null(c = gk_client_adopt(sv[0]));
	put(sv[1], "{\"ok\":tr");
	assert_int_equal(gk_client_read_line(c, 50, &line, &len),
	    GK_CLIENT_TIMEOUT);
	put(sv[1], "ue}\n{\"event\":\"deny\"}\nsecond");
	assert_int_equal(gk_client_read_line(c, 1000, &line, &len),
	    GK_CLIENT_OK);
	assert_int_equal(len, 11);
	assert_memory_equal(line, "{\"ok\":true}", 11);
	assert_int_equal(gk_client_read_line(c, 1000, &line, &len),
	    GK_CLIENT_OK);
	assert_memory_equal(line, "{\"event\":\"deny\"}", len);
	/* the peer goes away in the middle of a line */
	close(sv[1]);
	assert_int_equal(gk_client_read_line(c, 1000, &line, &len),
	    GK_CLIENT_CLOSED);
	assert_int_equal(gk_client_pending(c), 6);
	gk_client_close(c);
}

static void
test_too_long(void **state)
{
	struct gk_client *c;
	const char *line;
	size_t len, off;
	ssize_t n;
	char *big;
	pid_t pid;
	int sv[2], st;

	(void)state;
	pair(sv);
	assert_non_null(big = malloc(GK_CLIENT_BUF + 1));
	memset(big, 'x', GK_CLIENT_BUF);
	big[GK_CLIENT_BUF] = '\0';
	assert_non_null(c = gk_client_adopt(sv[0]));
	/* a child writes it all (more than a socket buffer holds) */
	if ((pid = fork()) == 0) {
		close(sv[0]);
		for (off = 0; off < GK_CLIENT_BUF; off += (size_t)n)
			if ((n = write(sv[1], big + off,
			    GK_CLIENT_BUF - off)) <= 0)
				_exit(1);
		_exit(0);
	}
	assert_true(pid > 0);
	close(sv[1]);
	assert_int_equal(gk_client_read_line(c, 5000, &line, &len),
	    GK_CLIENT_TOO_LONG);
	gk_client_close(c);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free(big);
}

static void
test_send_fd(void **state)
{
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	} cm;
	struct gk_client *c;
	struct msghdr mh;
	struct cmsghdr *h;
	struct iovec iov;
	char got[64];
	int sv[2], passed = -1;
	ssize_t n;

	(void)state;
	pair(sv);
	assert_non_null(c = gk_client_adopt(sv[0]));
	assert_int_equal(gk_client_send(c, "{\"op\":\"stats\"}\n",
	    STDIN_FILENO), 0);
	memset(&mh, 0, sizeof(mh));
	iov = (struct iovec){ got, sizeof(got) };
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	n = recvmsg(sv[1], &mh, MSG_CMSG_CLOEXEC);
	assert_int_equal(n, 15);
	assert_memory_equal(got, "{\"op\":\"stats\"}\n", 15);
	h = CMSG_FIRSTHDR(&mh);
	assert_non_null(h);
	assert_int_equal(h->cmsg_type, SCM_RIGHTS);
	memcpy(&passed, CMSG_DATA(h), sizeof(int));
	assert_true(passed > 2);
	close(passed);
	/* gk_client_release keeps the socket */
	assert_int_equal(gk_client_release(c), sv[0]);
	assert_int_equal(fcntl(sv[0], F_GETFD) != -1, 1);
	close(sv[0]);
	close(sv[1]);
}

static void
test_open(void **state)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	struct sockaddr_un sun;
	struct gk_client *c;
	int l;

	(void)state;
	errno = 0;
	assert_null(gk_client_open("/nonexistent/gk-client-test.sock", 1000));
	assert_int_equal(errno, ENOENT);
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_null(gk_client_open(path, 1000));
	assert_int_equal(errno, ENAMETOOLONG);
	/* a real listener */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/tmp/gk-client-%d.sock",
	    (int)getpid());
	(void)unlink(sun.sun_path);
	assert_true((l = socket(AF_UNIX, SOCK_STREAM, 0)) != -1);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_non_null(c = gk_client_open(sun.sun_path, 1000));
	assert_true(gk_client_fd(c) > 2);
	gk_client_close(c);
	close(l);
	(void)unlink(sun.sun_path);
}

/* The one message both clients print when the connect failed: what it
 * means, and what to type, fitting the host. */
static void
test_open_msg(void **state)
{
	char msg[512];

	(void)state;
	gk_client_open_msg(ENOENT, "/run/gatekeeper/control.sock", 5000,
	    true, "alice", msg, sizeof(msg));
	assert_string_equal(msg, "cannot reach gatekeeperd at "
	    "/run/gatekeeper/control.sock (No such file or directory): is "
	    "gatekeeperd running? start it with: systemctl start "
	    "gatekeeperd");
	gk_client_open_msg(ECONNREFUSED, "/s", 5000, false, "alice", msg,
	    sizeof(msg));
	assert_string_equal(msg, "cannot reach gatekeeperd at /s "
	    "(Connection refused): is gatekeeperd running? this host has no "
	    "systemd; start it as root: gatekeeperd >>/var/log/"
	    "gatekeeperd.log 2>&1 & (or under a supervisor: README, \"Hosts "
	    "without systemd\")");
	gk_client_open_msg(EACCES, "/s", 5000, true, "alice", msg,
	    sizeof(msg));
	assert_string_equal(msg, "cannot reach gatekeeperd at /s "
	    "(Permission denied): only root and members of group gatekeeper "
	    "may use it; ask an administrator to add you to it (usermod -aG "
	    "gatekeeper alice, then log in again)");
	gk_client_open_msg(EPERM, "/s", 5000, false, NULL, msg, sizeof(msg));
	assert_non_null(strstr(msg, "(usermod -aG gatekeeper USER, then log "
	    "in again)"));
	gk_client_open_msg(EAGAIN, "/s", 5000, true, NULL, msg, sizeof(msg));
	assert_string_equal(msg, "cannot reach gatekeeperd at /s: it did not "
	    "accept the connection within 5 s; is it stuck? see journalctl "
	    "-u gatekeeperd");
	gk_client_open_msg(EAGAIN, "/s", 5000, false, NULL, msg, sizeof(msg));
	assert_non_null(strstr(msg, "is it stuck? see its log"));
	gk_client_open_msg(ENAMETOOLONG, "/s", 5000, true, NULL, msg,
	    sizeof(msg));
	assert_string_equal(msg, "cannot reach gatekeeperd at /s (File name "
	    "too long)");
	/* cut, never overrun */
	gk_client_open_msg(ENOENT, "/s", 5000, true, NULL, msg, 10);
	assert_string_equal(msg, "cannot re");
}

/* systemd runs a host when ROOT/run/systemd/system is a directory. */
static void
test_systemd(void **state)
{
	char root[] = "/tmp/gk-client-root.XXXXXX", path[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_false(gk_client_systemd(root));
	snprintf(path, sizeof(path), "%s/run", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/run/systemd", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/run/systemd/system", root);
	/* a link to a directory is not it (lstat) */
	assert_int_equal(symlink("/", path), 0);
	assert_false(gk_client_systemd(root));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(gk_client_systemd(root));
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/run/systemd", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/run", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_send_fd),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_open_msg),
		cmocka_unit_test(test_systemd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
