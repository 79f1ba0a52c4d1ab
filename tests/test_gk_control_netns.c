/*
 * Control socket server: namespace cages, {"op":"cage.create",
 * "netns":true} with the namespace fd passed as SCM_RIGHTS: refused
 * without plumbing, the plumbing hooks (a recorder, tests/
 * control_testutil.h) called and undone with the connection, and no
 * passed fd ever kept.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_control.h"
#include "tests/control_testutil.h"

/* Send `req` + "\n" in one sendmsg with `pfd` attached; parse the reply. */
static struct json_object *
rpc_fd(struct fixture *f, int fd, const char *req, int pfd)
{
	static char line[65536];
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} cbuf;
	char buf[4096];
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *cm;
	struct json_object *o;

	snprintf(buf, sizeof(buf), "%s\n", req);
	iov.iov_base = buf;
	iov.iov_len = strlen(buf);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.b;
	msg.msg_controllen = sizeof(cbuf.b);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pfd, sizeof(int));
	assert_int_equal(sendmsg(fd, &msg, MSG_NOSIGNAL), (ssize_t)iov.iov_len);
	if (read_line(f, fd, line, sizeof(line)) < 0)
		fail_msg("no reply to %s", req);
	if ((o = json_tokener_parse(line)) == NULL)
		fail_msg("reply is not JSON: %s", line);
	return o;
}

static int
count_fds(void)
{
	char path[64];
	int n = 0, i;

	for (i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i);
		n += access(path, F_OK) == 0;
	}
	return n;
}

#define NS_CREATE "{\"op\":\"cage.create\",\"netns\":true,\"allow\":[\"a.com\"]}"

static void
test_netns_without_plumbing(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	int fd = client(f), pfd = open("/dev/null", O_RDONLY), before;

	before = count_fds();
	o = rpc_fd(f, fd, NS_CREATE, pfd);
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "does not plumb network "
	    "namespaces"));
	json_object_put(o);
	assert_int_equal(count_fds(), before);	/* the passed copy closed */
	close(pfd);
	close(fd);
}

static void
test_netns_cage(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	struct stat st;
	char id[GK_CAGE_ID_LEN + 1], line[256];
	int fd, pfd, before;

	set_plumb(f);
	fd = client(f);
	pfd = open("/dev/null", O_RDONLY);
	assert_int_equal(fstat(pfd, &st), 0);
	before = count_fds();
	/* no fd sent with it */
	rpc_err(f, fd, NS_CREATE, "none came with it");
	/* an fd with a request that takes none: closed, request answered */
	o = rpc_fd(f, fd, "{\"op\":\"stats\"}", pfd);
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(count_fds(), before);
	/* a source inside the handed-out subnet */
	rpc_err(f, fd, "{\"op\":\"cage.create\",\"source\":\"10.143.7.7\","
	    "\"allow\":[]}", "inside the cage subnet");
	/* plumbing refuses: its message comes back, nothing is created */
	prec.refuse = true;
	o = rpc_fd(f, fd, NS_CREATE, pfd);
	assert_false(ok(o));
	assert_string_equal(gets_(o, "error"), "namespace refused for the "
	    "test");
	json_object_put(o);
	assert_int_equal(gk_cage_count(f->cages), 0);
	prec.refuse = false;
	/* a bad pattern: refused before any plumbing */
	o = rpc_fd(f, fd, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"allow\":[\"*.com\"]}", pfd);
	assert_false(ok(o));
	assert_int_equal(prec.ups, 0);
	json_object_put(o);
	/* the real thing */
	o = rpc_fd(f, fd, NS_CREATE, pfd);
	assert_true(ok(o));
	assert_int_equal(prec.ups, 1);
	assert_int_equal(prec.ino, st.st_ino);
	assert_string_equal(gets_(o, "cage.source"), "10.143.0.9");
	assert_string_equal(gets_(o, "cage.gateway"), "10.143.0.1");
	assert_string_equal(gets_(o, "cage.dns"), "10.143.0.1:53");
	assert_string_equal(gets_(o, "cage.socks"), "10.143.0.1:1080");
	assert_string_equal(gets_(o, "cage.http"), "10.143.0.1:3128");
	assert_true(prec.transparent);	/* the default */
	assert_true(json_object_get_boolean(get(o, "cage.transparent")));
	assert_int_equal(strlen(gets_(o, "cage.token")), GK_CAGE_TOKEN_LEN);
	assert_false(prec.open);	/* no CIDR pattern */
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	assert_int_equal(gk_cage_by_id(f->cages, id)->link, 42);
	json_object_put(o);
	/* a CIDR pattern later: every address goes to the listener */
	snprintf(line, sizeof(line), "{\"op\":\"cage.update\",\"id\":"
	    "\"%s\",\"allow\":[\"203.0.113.0/24:443\"]}", id);
	o = rpc(f, fd, line);
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(prec.opens, 1);
	assert_true(gk_addr_eq(&prec.last_open,
	    &gk_cage_by_id(f->cages, id)->source));
	assert_int_equal(count_fds(), before);
	assert_int_equal(gk_cage_count(f->cages), 1);
	/* the connection closes: the plumbing is undone for that address */
	close(fd);
	spin(f, 5);
	assert_int_equal(gk_cage_count(f->cages), 0);
	assert_int_equal(prec.downs, 1);
	assert_int_equal(prec.last_down.family, AF_INET);
	close(pfd);
}

/* Two fds in one message, and an fd arriving in the middle of a line. */
static void
test_netns_stray_fds(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	int fd, pfd, before;

	set_plumb(f);
	fd = client(f);
	pfd = open("/dev/null", O_RDONLY);
	before = count_fds();
	send_all(fd, "{\"op\":", 6);
	spin(f, 3);
	o = rpc_fd(f, fd, "\"stats\"}", pfd);	/* fd lands mid-line */
	assert_true(ok(o));
	json_object_put(o);
	spin(f, 3);
	assert_int_equal(count_fds(), before);
	rpc_err(f, fd, NS_CREATE, "none came with it");
	assert_int_equal(prec.ups, 0);
	close(fd);
	close(pfd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_netns_without_plumbing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_netns_cage, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_netns_stray_fds, setup,
		    teardown),
	};

	log_init("test_gk_control_netns", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
