/*
 * Control socket server: a real unix socket in a temporary directory, the
 * event loop run in bounded steps, clients in this process (and one forked
 * client that drops privileges, when run as root).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_control.h"

struct fixture {
	char			 dir[64];
	char			 path[100];
	char			 audit_path[128];
	struct event_base	*base;
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	struct gk_control	*ctl;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512] = "";

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/gkctl.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/run/control.sock", f->dir);
	snprintf(f->audit_path, sizeof(f->audit_path), "%s/audit.log",
	    f->dir);
	f->base = event_base_new();
	f->cages = gk_cage_table_new();
	f->audit = gk_audit_open(f->base, f->audit_path, err, sizeof(err));
	assert_non_null(f->audit);
	f->ctl = gk_control_new(f->base, f->path, f->cages, f->audit, err,
	    sizeof(err));
	if (f->ctl == NULL)
		fail_msg("gk_control_new: %s", err);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	gk_control_free(f->ctl);
	gk_cage_table_free(f->cages);
	gk_audit_close(f->audit);
	event_base_free(f->base);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void
spin(struct fixture *f, int n)
{
	while (n-- > 0)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
}

static int
client(struct fixture *f)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", f->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)),
	    0);
	spin(f, 3);	/* accept */
	return fd;
}

static void
send_all(int fd, const char *s, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = send(fd, s, n, MSG_NOSIGNAL);
		assert_true(r > 0);
		s += r;
		n -= (size_t)r;
	}
}

/*
 * Read one line (without "\n") into buf, running the loop meanwhile.
 * Returns its length, or -1 at EOF / after ~5 s.
 */
static ssize_t
read_line(struct fixture *f, int fd, char *buf, size_t len)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t o = 0;
	ssize_t r;
	int i;

	for (i = 0; i < 5000 && o + 1 < len; i++) {
		spin(f, 1);
		if (poll(&pfd, 1, 1) != 1)
			continue;
		if ((r = recv(fd, buf + o, 1, 0)) <= 0)
			return -1;
		if (buf[o] == '\n') {
			buf[o] = '\0';
			return (ssize_t)o;
		}
		o++;
		i = 0;
	}
	return -1;
}

/* Send one request line, return the parsed reply (caller puts it). */
static struct json_object *
rpc(struct fixture *f, int fd, const char *req)
{
	static char line[1 << 20];
	struct json_object *o;

	send_all(fd, req, strlen(req));
	send_all(fd, "\n", 1);
	if (read_line(f, fd, line, sizeof(line)) < 0)
		fail_msg("no reply to %s", req);
	o = json_tokener_parse(line);
	if (o == NULL)
		fail_msg("reply is not JSON: %s", line);
	return o;
}

static struct json_object *
get(struct json_object *o, const char *path)
{
	char key[64], *dot;
	const char *p = path;

	while (o != NULL && *p != '\0') {
		snprintf(key, sizeof(key), "%s", p);
		if ((dot = strchr(key, '.')) != NULL)
			*dot = '\0';
		p += strlen(key) + (p[strlen(key)] == '.');
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(key));
		else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
	}
	return o;
}

static const char *
gets_(struct json_object *o, const char *path)
{
	struct json_object *v = get(o, path);

	return v == NULL ? "" : json_object_get_string(v);
}

static bool
ok(struct json_object *o)
{
	return json_object_get_boolean(get(o, "ok"));
}

/* rpc() expecting an error that contains `want`. */
static void
rpc_err(struct fixture *f, int fd, const char *req, const char *want)
{
	struct json_object *o = rpc(f, fd, req);

	if (ok(o) || strstr(gets_(o, "error"), want) == NULL)
		fail_msg("%s: got %s, want error with '%s'", req,
		    json_object_to_json_string(o), want);
	json_object_put(o);
}

static char *
audit_text(struct fixture *f)
{
	static char buf[65536];
	ssize_t n;
	int fd;

	gk_audit_flush(f->audit);
	fd = open(f->audit_path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void
test_socket_file(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char dir[160], err[512];

	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	snprintf(dir, sizeof(dir), "%s/run", f->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	/* a live daemon answers: refuse */
	assert_null(gk_control_new(f->base, f->path, f->cages, NULL, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "another gatekeeperd is running"));
	/* not a socket: refuse */
	snprintf(dir, sizeof(dir), "%s/file", f->dir);
	close(open(dir, O_CREAT | O_WRONLY, 0600));
	assert_null(gk_control_new(f->base, dir, f->cages, NULL, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	/* too long */
	memset(dir, 'a', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	assert_null(gk_control_new(f->base, dir, f->cages, NULL, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "too long"));
}

static void
test_stale_socket(void **state)
{
	struct fixture *f = *state;
	struct gk_control *ctl;
	struct sockaddr_un sun;
	char path[100], err[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);	/* bound, never listened: nobody answers */
	ctl = gk_control_new(f->base, path, f->cages, NULL, err, sizeof(err));
	if (ctl == NULL)
		fail_msg("%s", err);
	gk_control_free(ctl);
	assert_int_equal(lstat(path, &st), -1);	/* removed on free */
}

static void
test_create_list_update_destroy(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char id[16], req[256];
	int fd = client(f);

	o = rpc(f, fd, "{\"op\":\"cage.create\",\"source\":\"127.0.0.2\","
	    "\"allow\":[\"*.GitHub.com.\",\"github.com\"],\"label\":\"demo\"}");
	assert_true(ok(o));
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	assert_int_equal(strlen(id), GK_CAGE_ID_LEN);
	assert_string_equal(gets_(o, "cage.label"), "demo");
	assert_string_equal(gets_(o, "cage.source"), "127.0.0.2");
	assert_string_equal(gets_(o, "cage.uid"), "0");
	assert_string_equal(gets_(o, "cage.allow.0"), "*.github.com");
	json_object_put(o);
	assert_int_equal(gk_cage_count(f->cages), 1);

	o = rpc(f, fd, "{\"op\":\"cage.list\"}");
	assert_true(ok(o));
	assert_int_equal(json_object_array_length(get(o, "cages")), 1);
	assert_string_equal(gets_(o, "cages.0.id"), id);
	assert_string_equal(gets_(o, "cages.0.pins"), "0");
	assert_non_null(get(o, "cages.0.created"));
	assert_non_null(get(o, "cages.0.denied.dns"));
	json_object_put(o);

	o = rpc(f, fd, "{\"op\":\"stats\"}");
	assert_true(ok(o));
	assert_string_equal(gets_(o, "stats.cages"), "1");
	assert_non_null(get(o, "stats.dns_queries.allowed"));
	assert_non_null(get(o, "stats.cages_created"));
	json_object_put(o);

	snprintf(req, sizeof(req), "{\"op\":\"cage.update\",\"id\":\"%s\","
	    "\"allow\":[\"example.com:443\"]}", id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	assert_string_equal(gets_(o, "cage.allow.0"), "example.com:443");
	json_object_put(o);

	snprintf(req, sizeof(req), "{\"op\":\"cage.destroy\",\"id\":\"%s\"}",
	    id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(gk_cage_count(f->cages), 0);
	rpc_err(f, fd, req, "unknown cage id");

	assert_non_null(strstr(audit_text(f), "\"event\":\"cage.create\""));
	assert_non_null(strstr(audit_text(f), "\"event\":\"cage.update\""));
	assert_non_null(strstr(audit_text(f), "\"reason\":\"request\""));
	close(fd);
}

static void
test_errors_keep_connection(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char want[64];
	int fd = client(f);

	rpc_err(f, fd, "{\"op\":\"stats\"", "bad JSON");
	rpc_err(f, fd, "[1]", "must be a JSON object");
	rpc_err(f, fd, "{\"op\":\"nope\"}", "known ops: cage.create");
	rpc_err(f, fd, "{}", "missing \"op\"");
	rpc_err(f, fd, "{\"op\":\"stats\",\"x\":1}", "unknown field \"x\"");
	rpc_err(f, fd, "{\"op\":\"cage.create\",\"source\":\"1.2.3\","
	    "\"allow\":[]}", "invalid source address '1.2.3'");
	rpc_err(f, fd, "{\"op\":\"cage.create\",\"source\":\"10.0.0.9\","
	    "\"allow\":[\"*.com\"]}", "*.com");
	rpc_err(f, fd, "{\"op\":\"cage.destroy\",\"id\":\"aaaaaaaa\"}",
	    "unknown cage id 'aaaaaaaa'");
	rpc_err(f, fd, "", "empty request");
	o = rpc(f, fd, "{\"op\":\"cage.create\",\"source\":\"10.0.0.9\","
	    "\"allow\":[]}");
	assert_true(ok(o));
	snprintf(want, sizeof(want), "in use by cage %s",
	    gets_(o, "cage.id"));
	json_object_put(o);
	rpc_err(f, fd, "{\"op\":\"cage.create\",\"source\":\"10.0.0.9\","
	    "\"allow\":[]}", want);
	o = rpc(f, fd, "{\"op\":\"stats\"}");
	assert_true(ok(o));
	json_object_put(o);
	close(fd);
}

static void
test_cage_lives_with_connection(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	int a = client(f), b = client(f);

	o = rpc(f, a, "{\"op\":\"cage.create\",\"source\":\"10.0.0.1\","
	    "\"allow\":[]}");
	assert_true(ok(o));
	json_object_put(o);
	o = rpc(f, a, "{\"op\":\"cage.create\",\"source\":\"10.0.0.2\","
	    "\"allow\":[]}");
	assert_true(ok(o));
	json_object_put(o);
	o = rpc(f, b, "{\"op\":\"cage.create\",\"source\":\"10.0.0.3\","
	    "\"allow\":[]}");
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(gk_cage_count(f->cages), 3);
	assert_int_equal(gk_control_nconns(f->ctl), 2);
	close(a);
	spin(f, 5);
	assert_int_equal(gk_cage_count(f->cages), 1);
	assert_int_equal(gk_control_nconns(f->ctl), 1);
	assert_non_null(strstr(audit_text(f),
	    "\"reason\":\"connection closed\""));
	/* b still works */
	o = rpc(f, b, "{\"op\":\"cage.list\"}");
	assert_int_equal(json_object_array_length(get(o, "cages")), 1);
	json_object_put(o);
	close(b);
	spin(f, 5);
	assert_int_equal(gk_cage_count(f->cages), 0);
}

static void
test_pipelined_and_half_close(void **state)
{
	struct fixture *f = *state;
	const char *reqs = "{\"op\":\"stats\"}\n{\"op\":\"bad\"}\r\n"
	    "{\"op\":\"cage.list\"}";	/* the last without newline */
	char line[65536];
	int fd = client(f);

	send_all(fd, reqs, strlen(reqs));
	shutdown(fd, SHUT_WR);
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "\"stats\""));
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "unknown op 'bad'"));
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "\"cages\""));
	/* then EOF */
	assert_int_equal(read_line(f, fd, line, sizeof(line)), -1);
	close(fd);
	spin(f, 3);
	assert_int_equal(gk_control_nconns(f->ctl), 0);
}

static void
test_long_line(void **state)
{
	struct fixture *f = *state;
	size_t n = GK_CTL_LINE_MAX + 100;
	char *big = malloc(n), line[4096];
	int fd = client(f), other = client(f);
	struct json_object *o;
	size_t sent = 0;
	ssize_t r;

	assert_non_null(big);
	memset(big, ' ', n);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (sent < n) {
		r = send(fd, big + sent, n - sent, MSG_NOSIGNAL);
		if (r > 0)
			sent += (size_t)r;
		spin(f, 1);
	}
	fcntl(fd, F_SETFL, 0);
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "longer than 65536 bytes"));
	assert_int_equal(read_line(f, fd, line, sizeof(line)), -1);
	o = rpc(f, other, "{\"op\":\"stats\"}");	/* others unaffected */
	assert_true(ok(o));
	json_object_put(o);
	free(big);
	close(fd);
	close(other);
}

static void
test_shutdown_destroys(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char line[256];
	int fd = client(f);

	o = rpc(f, fd, "{\"op\":\"cage.create\",\"source\":\"10.0.0.1\","
	    "\"allow\":[]}");
	assert_true(ok(o));
	json_object_put(o);
	gk_control_free(f->ctl);
	f->ctl = NULL;
	assert_int_equal(gk_cage_count(f->cages), 0);
	assert_non_null(strstr(audit_text(f), "\"reason\":\"shutdown\""));
	assert_int_equal(read_line(f, fd, line, sizeof(line)), -1);
	close(fd);
}

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

/* ---- namespace cages: the fd passing and the plumbing hooks ---------- */

/* Records what gk_control asked of the plumbing (the real one, nft/, is
 * exercised by the plumbing and end-to-end integration tests). */
struct plumb_rec {
	int		 ups, downs;
	ino_t		 ino;		/* of the fd up() was handed */
	struct gk_addr	 last_down;
	bool		 refuse;
	struct gk_ns_id	 caged;		/* peer_in_cage() says yes for it */
	bool		 transparent;	/* what the last up() was asked */
};

static struct plumb_rec prec;

static int
rec_up(void *arg, int nsfd, uid_t uid, bool transparent,
    struct gk_addr *addr, char *err, size_t errlen)
{
	struct stat st;

	(void)arg;
	(void)uid;
	prec.transparent = transparent;
	if (prec.refuse) {
		snprintf(err, errlen, "namespace refused for the test");
		return -1;
	}
	assert_int_equal(fstat(nsfd, &st), 0);
	prec.ino = st.st_ino;
	prec.ups++;
	assert_int_equal(gk_addr_parse("10.143.0.9", addr), 0);
	return 0;
}

static void
rec_down(void *arg, const struct gk_addr *addr)
{
	(void)arg;
	prec.downs++;
	prec.last_down = *addr;
}

static bool
rec_owns(void *arg, const struct gk_addr *addr)
{
	struct gk_addr net;

	(void)arg;
	assert_int_equal(gk_addr_parse("10.143.0.0", &net), 0);
	return gk_addr_in_prefix(addr, &net, 16);
}

static bool
rec_in_cage(void *arg, const struct gk_ns_id *netns)
{
	(void)arg;
	return gk_ns_eq(netns, &prec.caged);
}

static void
set_plumb(struct fixture *f)
{
	struct gk_ctl_plumb p = { .up = rec_up, .down = rec_down,
	    .owns = rec_owns, .peer_in_cage = rec_in_cage };

	memset(&prec, 0, sizeof(prec));
	snprintf(p.gateway, sizeof(p.gateway), "10.143.0.1");
	snprintf(p.dns, sizeof(p.dns), "10.143.0.1:53");
	snprintf(p.socks, sizeof(p.socks), "10.143.0.1:1080");
	snprintf(p.http, sizeof(p.http), "10.143.0.1:3128");
	snprintf(p.transparent, sizeof(p.transparent), "10.143.0.1:15001");
	gk_control_set_plumb(f->ctl, &p);
}

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
	json_object_put(o);
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
	assert_int_equal(gk_cage_count(f->cages), 0);
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
		cmocka_unit_test_setup_teardown(test_socket_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stale_socket, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_create_list_update_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_keep_connection,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_cage_lives_with_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_and_half_close,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_destroys, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_not_permitted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_netns_without_plumbing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_netns_cage, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_netns_stray_fds, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peer_in_cage, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_userns, setup,
		    teardown),
	};

	log_init("test_gk_control", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
