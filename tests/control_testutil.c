/*
 * control_testutil: the fixture of the control socket tests.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <fcntl.h>
#include <poll.h>
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

#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control.h"
#include "tests/control_testutil.h"

struct plumb_rec prec;

int
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
	gk_cage_table_set_env(f->cages, f->base, f->audit);
	f->ctl = gk_control_new(f->base, f->path, f->cages, f->audit, err,
	    sizeof(err));
	if (f->ctl == NULL)
		fail_msg("gk_control_new: %s", err);
	*state = f;
	return 0;
}

int
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

void
spin(struct fixture *f, int n)
{
	while (n-- > 0)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
}

int
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

void
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
ssize_t
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
struct json_object *
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

struct json_object *
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

const char *
gets_(struct json_object *o, const char *path)
{
	struct json_object *v = get(o, path);

	return v == NULL ? "" : json_object_get_string(v);
}

bool
ok(struct json_object *o)
{
	return json_object_get_boolean(get(o, "ok"));
}

/* rpc() expecting an error that contains `want`. */
void
rpc_err(struct fixture *f, int fd, const char *req, const char *want)
{
	struct json_object *o = rpc(f, fd, req);

	if (ok(o) || strstr(gets_(o, "error"), want) == NULL)
		fail_msg("%s: got %s, want error with '%s'", req,
		    json_object_to_json_string(o), want);
	json_object_put(o);
}

char *
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

/* ---- the plumbing stand-in ------------------------------------------ */

static int
rec_up(void *arg, int nsfd, uid_t uid, bool transparent, bool open,
    struct gk_addr *addr, uint32_t *link, char *err, size_t errlen)
{
	struct stat st;

	(void)arg;
	(void)uid;
	prec.transparent = transparent;
	prec.open = open;
	if (prec.refuse) {
		snprintf(err, errlen, "namespace refused for the test");
		return -1;
	}
	assert_int_equal(fstat(nsfd, &st), 0);
	prec.ino = st.st_ino;
	prec.ups++;
	assert_int_equal(gk_addr_parse("10.143.0.9", addr), 0);
	*link = 42;
	return 0;
}

static void
rec_open(void *arg, const struct gk_addr *addr)
{
	(void)arg;
	prec.opens++;
	prec.last_open = *addr;
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

void
set_plumb(struct fixture *f)
{
	static struct gk_cage_plumbing p;

	memset(&prec, 0, sizeof(prec));
	memset(&p, 0, sizeof(p));
	p.up = rec_up;
	p.down = rec_down;
	p.open = rec_open;
	p.owns = rec_owns;
	p.peer_in_cage = rec_in_cage;
	snprintf(p.gateway, sizeof(p.gateway), "10.143.0.1");
	snprintf(p.dns, sizeof(p.dns), "10.143.0.1:53");
	snprintf(p.socks, sizeof(p.socks), "10.143.0.1:1080");
	snprintf(p.http, sizeof(p.http), "10.143.0.1:3128");
	snprintf(p.transparent, sizeof(p.transparent), "10.143.0.1:15001");
	gk_plumb_facet_set(f->cages, &p);
}
