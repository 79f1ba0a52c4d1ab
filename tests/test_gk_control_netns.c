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
#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control.h"
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

/*
 * cage.attach (pfd along) and a stats request in one write: the first
 * reply must be the attach's (a cage), the second the stats'. Returns
 * the attach's.
 */
static struct json_object *
rpc_attach_then_stats(struct fixture *f, int fd, const char *id, int pfd)
{
	static char line[65536];
	struct json_object *o, *s;
	char req[256];

	snprintf(req, sizeof(req), "{\"op\":\"cage.attach\",\"id\":\"%s\"}"
	    "\n{\"op\":\"stats\"}", id);
	o = rpc_fd(f, fd, req, pfd);
	assert_true(ok(o));
	assert_non_null(get(o, "cage.id"));
	if (read_line(f, fd, line, sizeof(line)) < 0)
		fail_msg("no reply to stats after an attach answered later");
	assert_non_null(s = json_tokener_parse(line));
	assert_true(ok(s));
	assert_null(get(s, "cage"));
	json_object_put(s);
	return o;
}

/* A request with pfd attached that must be refused with exactly `want`. */
static void
rpc_fd_refused(struct fixture *f, int fd, const char *req, int pfd,
    const char *want)
{
	struct json_object *o = rpc_fd(f, fd, req, pfd);

	assert_false(ok(o));
	assert_string_equal(gets_(o, "error"), want);
	json_object_put(o);
}

/* {"op":OP,"id":ID<more>} (more: further members, "" for none), with pfd
 * attached unless it is -1. */
static struct json_object *
rpc_id(struct fixture *f, int fd, const char *op, const char *id,
    const char *more, int pfd)
{
	char line[512];

	snprintf(line, sizeof(line), "{\"op\":\"%s\",\"id\":\"%s\"%s}", op,
	    id, more);
	return pfd == -1 ? rpc(f, fd, line) : rpc_fd(f, fd, line, pfd);
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
	char id[GK_CAGE_ID_LEN + 1];
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
	rpc_fd_refused(f, fd, NS_CREATE, pfd, "namespace refused for the "
	    "test");
	assert_int_equal(gk_cage_table_count(f->cages), 0);
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
	assert_int_equal(gk_cage_plumb_link(gk_cage_by_id(f->cages, id)),
	    42);
	json_object_put(o);
	/* a CIDR pattern later: every address goes to the listener */
	o = rpc_id(f, fd, "cage.update", id,
	    ",\"allow\":[\"203.0.113.0/24:443\"]", -1);
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(prec.opens, 1);
	assert_true(gk_addr_eq(&prec.last_open,
	    gk_cage_source(gk_cage_by_id(f->cages, id))));
	assert_int_equal(count_fds(), before);
	assert_int_equal(gk_cage_table_count(f->cages), 1);
	/* the connection closes: the plumbing is undone for that address */
	close(fd);
	spin(f, 5);
	assert_int_equal(gk_cage_table_count(f->cages), 0);
	assert_int_equal(prec.downs, 1);
	assert_int_equal(prec.last_down.family, AF_INET);
	close(pfd);
}

/* ---- containment stand-in ---------------------------------------------- */

static struct {
	int		 creates, attaches, ends;
	struct gk_rlimits lim;
	bool		 best_effort;
	pid_t		 owner;
	bool		 refuse;
	int		 token;		/* its containment slot */
	/* an attach answered later, from the loop (a systemd scope's) */
	bool		 later;
	struct event_base *base;
	gk_attach_done done;
	void		*done_arg;
	struct gk_cage	*cage;
} crec;

static int
rec_create(void *arg, struct gk_cage *c, pid_t owner,
    const struct gk_rlimits *l, bool best_effort, const char *adopt,
    char *err, size_t errlen)
{
	(void)arg;
	assert_null(adopt);
	crec.creates++;
	crec.lim = *l;
	crec.best_effort = best_effort;
	crec.owner = owner;
	if (crec.refuse) {
		snprintf(err, errlen, "no pids controller here");
		return -1;
	}
	gk_cage_facet_set(c, GK_FACET_CONTAIN, &crec.token);
	return 0;
}

static void
rec_attached_cb(evutil_socket_t fd, short what, void *arg)
{
	gk_attach_done done = crec.done;

	(void)fd;
	(void)what;
	(void)arg;
	crec.done = NULL;
	if (done != NULL)
		done(crec.done_arg, crec.cage, 0, NULL);
}

static int
rec_attach(void *arg, struct gk_cage *c, int pidfd, pid_t owner,
    uid_t uid, gk_attach_done done, void *done_arg, char *err,
    size_t errlen)
{
	struct timeval tv = { 0, 20000 };

	(void)arg;
	(void)uid;
	(void)err;
	(void)errlen;
	assert_ptr_equal(gk_cage_facet(c, GK_FACET_CONTAIN), &crec.token);
	assert_true(pidfd >= 0);
	assert_int_equal(owner, getpid());
	crec.attaches++;
	if (!crec.later)
		return 0;
	crec.done = done;
	crec.done_arg = done_arg;
	crec.cage = c;
	event_base_once(crec.base, -1, EV_TIMEOUT, rec_attached_cb, NULL, &tv);
	return 1;
}

static void
rec_end(void *arg, struct gk_cage *c)
{
	(void)arg;
	crec.ends++;
	gk_cage_facet_set(c, GK_FACET_CONTAIN, NULL);
}

static struct json_object *
rec_describe(void *arg, const struct gk_cage *c)
{
	struct json_object *o = json_object_new_object();

	(void)arg;
	(void)c;
	json_object_object_add(o, "kill", json_object_new_string(
	    "/sys/fs/cgroup/x/cgroup.kill"));
	return o;
}

#define NS_LIMITS "{\"op\":\"cage.create\",\"netns\":true,\"allow\":[]," \
	"\"limits\":{\"pids\":32}}"

/* Limits, cage.attach and the cage's end go through the containment
 * hooks; without them limits are refused unless best_effort. */
static void
test_netns_contain(void **state)
{
	struct fixture *f = *state;
	static const struct gk_cage_containment h = { .create = rec_create,
	    .attach = rec_attach, .end = rec_end, .describe = rec_describe };
	struct json_object *o;
	char id[GK_CAGE_ID_LEN + 1];
	int fd, pfd;

	set_plumb(f);
	memset(&crec, 0, sizeof(crec));
	fd = client(f);
	pfd = open("/dev/null", O_RDONLY);
	/* not contained: limits refused, best effort runs */
	o = rpc_fd(f, fd, NS_LIMITS, pfd);
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "limits were asked for, "
	    "but this gatekeeperd cannot contain"));
	json_object_put(o);
	assert_int_equal(gk_cage_table_count(f->cages), 0);
	assert_int_equal(prec.downs, prec.ups);		/* undone */
	o = rpc_fd(f, fd, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"allow\":[],\"limits\":{\"pids\":32,\"best_effort\":true}}",
	    pfd);
	assert_true(ok(o));
	assert_null(get(o, "cage.cgroup"));
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);
	o = rpc_id(f, fd, "cage.attach", id, "", pfd);
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "has no cgroup"));
	json_object_put(o);
	o = rpc_id(f, fd, "cage.destroy", id, "", -1);
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(crec.ends, 0);		/* it had no cgroup */
	/* contained */
	gk_contain_facet_set(f->cages, &h);
	crec.refuse = true;
	rpc_fd_refused(f, fd, NS_LIMITS, pfd, "cannot create the cage: no "
	    "pids controller here");
	crec.refuse = false;
	o = rpc_fd(f, fd, NS_LIMITS, pfd);
	assert_true(ok(o));
	assert_int_equal(crec.lim.pids, 32);
	assert_false(crec.best_effort);
	assert_int_equal(crec.owner, getpid());
	assert_string_equal(gets_(o, "cage.cgroup.kill"),
	    "/sys/fs/cgroup/x/cgroup.kill");
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);
	o = rpc_id(f, fd, "cage.attach", id, "", -1);	/* no fd along */
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "needs a pidfd"));
	json_object_put(o);
	o = rpc_id(f, fd, "cage.attach", id, "", pfd);
	assert_true(ok(o));
	assert_int_equal(crec.attaches, 1);
	json_object_put(o);
	/* answered later (a systemd scope): a request sent behind it is
	 * answered after it, in order */
	crec.later = true;
	crec.base = f->base;
	o = rpc_attach_then_stats(f, fd, id, pfd);
	assert_int_equal(crec.attaches, 2);
	assert_null(crec.done);
	json_object_put(o);
	/* the connection closes: the cage ends, its processes with it */
	close(fd);
	spin(f, 5);
	assert_int_equal(crec.ends, 1);
	assert_int_equal(gk_cage_table_count(f->cages), 0);
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
		cmocka_unit_test_setup_teardown(test_netns_contain, setup,
		    teardown),
	};

	log_init("test_gk_control_netns", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
