/*
 * Control socket server: the socket file, requests on a connection, and
 * what ends a connection (close, half-close, an overlong line, shutdown).
 * The fixture (tests/control_testutil.h): a real unix socket in a
 * temporary directory, the event loop run in bounded steps, clients in
 * this process.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <fcntl.h>
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
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/cage/gk_events.h"
#include "tests/control_testutil.h"

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
	assert_int_equal(gk_cage_table_count(f->cages), 1);

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
	assert_int_equal(gk_cage_table_count(f->cages), 0);
	rpc_err(f, fd, req, "unknown cage id");
	/* ended: cage.show and denials still answer, saying so */
	snprintf(req, sizeof(req), "{\"op\":\"cage.show\",\"id\":\"%s\"}", id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	assert_string_equal(gets_(o, "cage.id"), id);
	assert_string_equal(gets_(o, "cage.label"), "demo");
	assert_string_equal(gets_(o, "cage.end_reason"), "request");
	assert_string_equal(gets_(o, "cage.ended"), "0");
	assert_non_null(get(o, "cage.ended_at"));
	assert_non_null(get(o, "cage.recent"));
	assert_null(get(o, "cage.pinned"));
	json_object_put(o);
	snprintf(req, sizeof(req), "{\"op\":\"denials\",\"id\":\"%s\"}", id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	assert_non_null(get(o, "denials"));
	json_object_put(o);
	/* a message for people names the command, not the op */
	o = rpc(f, fd, "{\"op\":\"cage.show\",\"id\":\"zzzzzzzz\"}");
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "gatekeeperctl list"));
	assert_null(strstr(gets_(o, "error"), "cage.list"));
	json_object_put(o);

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
	assert_int_equal(gk_cage_table_count(f->cages), 3);
	assert_int_equal(gk_control_nconns(f->ctl), 2);
	close(a);
	spin(f, 5);
	assert_int_equal(gk_cage_table_count(f->cages), 1);
	assert_int_equal(gk_control_nconns(f->ctl), 1);
	assert_non_null(strstr(audit_text(f),
	    "\"reason\":\"connection closed\""));
	/* b still works */
	o = rpc(f, b, "{\"op\":\"cage.list\"}");
	assert_int_equal(json_object_array_length(get(o, "cages")), 1);
	json_object_put(o);
	close(b);
	spin(f, 5);
	assert_int_equal(gk_cage_table_count(f->cages), 0);
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
	assert_int_equal(gk_cage_table_count(f->cages), 0);
	assert_non_null(strstr(audit_text(f), "\"reason\":\"shutdown\""));
	assert_int_equal(read_line(f, fd, line, sizeof(line)), -1);
	close(fd);
}

/* The operator's ops: cage.update add/remove, cage.show with recent
 * denials, denials (and following them from another connection),
 * pending, reload without a handler, the error codes. */
static void
test_operator_ops(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char id[16], req[512], line[4096];
	struct gk_cage *c;
	int fd = client(f), wfd = client(f), dfd = client(f), i;

	o = rpc(f, fd, "{\"op\":\"cage.create\",\"source\":\"127.0.0.2\","
	    "\"allow\":[\"a.example\",\"*.b.example:443\"],\"label\":\"ops\"}");
	assert_true(ok(o));
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);

	snprintf(req, sizeof(req), "{\"op\":\"cage.update\",\"id\":\"%s\","
	    "\"add\":[\"C.example.\",\"a.example\"],\"remove\":"
	    "[\"*.b.example:443\"]}", id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	assert_string_equal(gets_(o, "cage.allow.0"), "a.example");
	assert_string_equal(gets_(o, "cage.allow.1"), "c.example");
	assert_null(get(o, "cage.allow.2"));
	json_object_put(o);
	snprintf(req, sizeof(req), "{\"op\":\"cage.update\",\"id\":\"%s\","
	    "\"remove\":[\"a.example:443\"]}", id);
	rpc_err(f, fd, req, "has no pattern 'a.example:443' to remove; its "
	    "allowlist is: a.example, c.example");
	snprintf(req, sizeof(req), "{\"op\":\"cage.update\",\"id\":\"%s\","
	    "\"add\":[\"*.com\"]}", id);
	rpc_err(f, fd, req, "invalid pattern '*.com'");
	o = rpc(f, fd, "{\"op\":\"cage.show\",\"id\":\"zzzz0000\"}");
	assert_false(ok(o));
	assert_string_equal(gets_(o, "code"), "no_such_cage");
	json_object_put(o);

	/* a follower on another connection, then denials */
	snprintf(req, sizeof(req), "{\"op\":\"denials\",\"follow\":true}");
	o = rpc(f, wfd, req);
	assert_true(ok(o));
	assert_int_equal(json_object_array_length(get(o, "denials")), 0);
	json_object_put(o);
	assert_non_null(c = gk_cage_by_id(f->cages, id));
	for (i = 0; i < 3; i++)
		gk_events_deny(c, GK_KIND_HTTP, "x.example", 443,
		    GK_REASON_NOT_ALLOWLISTED, "not in the allowlist");
	gk_events_deny(c, GK_KIND_DNS, "y.example", 0,
	    GK_REASON_NOT_ALLOWLISTED, NULL);
	for (i = 0; i < 4; i++) {
		assert_true(read_line(f, wfd, line, sizeof(line)) > 0);
		o = json_tokener_parse(line);
		assert_string_equal(gets_(o, "event"), "deny");
		assert_string_equal(gets_(o, "cage"), id);
		assert_string_equal(gets_(o, "label"), "ops");
		assert_string_equal(gets_(o, "host"), i < 3 ? "x.example" :
		    "y.example");
		assert_string_equal(gets_(o, "why"), i < 3 ?
		    "not in the allowlist" : "");
		json_object_put(o);
	}
	snprintf(req, sizeof(req), "{\"op\":\"cage.show\",\"id\":\"%s\"}", id);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	assert_int_equal(json_object_array_length(get(o, "cage.recent")), 2);
	assert_string_equal(gets_(o, "cage.recent.0.host"), "x.example");
	assert_string_equal(gets_(o, "cage.recent.0.count"), "3");
	assert_string_equal(gets_(o, "cage.recent.0.kind"), "http");
	assert_string_equal(gets_(o, "cage.recent.1.port"), "0");
	assert_non_null(get(o, "cage.pinned"));
	assert_null(get(o, "cage.pending"));	/* it does not ask */
	json_object_put(o);
	o = rpc(f, fd, "{\"op\":\"denials\"}");
	assert_int_equal(json_object_array_length(get(o, "denials")), 2);
	assert_string_equal(gets_(o, "denials.1.host"), "y.example");
	json_object_put(o);
	o = rpc(f, fd, "{\"op\":\"pending\"}");
	assert_true(ok(o));
	assert_int_equal(json_object_array_length(get(o, "questions")), 0);
	json_object_put(o);
	rpc_err(f, fd, "{\"op\":\"reload\"}", "send it SIGHUP");

	/* another connection destroys it: the owner is told first */
	snprintf(req, sizeof(req), "{\"op\":\"cage.destroy\",\"id\":\"%s\"}",
	    id);
	o = rpc(f, dfd, req);
	assert_true(ok(o));
	json_object_put(o);
	assert_true(read_line(f, fd, line, sizeof(line)) > 0);
	o = json_tokener_parse(line);
	assert_string_equal(gets_(o, "event"), "cage.end");
	assert_string_equal(gets_(o, "reason"), "destroyed by uid 0");
	json_object_put(o);
	close(fd);
	close(dfd);
	/* its followers are told it ended */
	assert_true(read_line(f, wfd, line, sizeof(line)) > 0);
	o = json_tokener_parse(line);
	assert_string_equal(gets_(o, "event"), "cage.end");
	assert_string_equal(gets_(o, "cage"), id);
	json_object_put(o);
	close(wfd);
	spin(f, 4);
}

/* A cage keeps its 32 most recent distinct denials: a repeat counts and
 * becomes the newest; past 32 the first remembered goes. */
static void
test_recent_ring(void **state)
{
	struct fixture *f = *state;
	struct json_object *o, *r;
	char id[16], req[128], host[32], want[32];
	struct gk_cage *c;
	int fd = client(f), i;

	o = rpc(f, fd, "{\"op\":\"cage.create\",\"source\":\"127.0.0.3\","
	    "\"allow\":[]}");
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);
	assert_non_null(c = gk_cage_by_id(f->cages, id));
	for (i = 0; i < 40; i++) {
		snprintf(host, sizeof(host), "h%d.example", i);
		gk_events_deny(c, GK_KIND_SOCKS, host, 443,
		    GK_REASON_NOT_ALLOWLISTED, NULL);
	}
	/* h39 again, and on another port: one more count, one new entry */
	gk_events_deny(c, GK_KIND_SOCKS, "h39.example", 443,
	    GK_REASON_NOT_ALLOWLISTED, NULL);
	gk_events_deny(c, GK_KIND_SOCKS, "h39.example", 80,
	    GK_REASON_NOT_ALLOWLISTED, NULL);
	snprintf(req, sizeof(req), "{\"op\":\"cage.show\",\"id\":\"%s\"}", id);
	o = rpc(f, fd, req);
	r = get(o, "cage.recent");
	assert_int_equal(json_object_array_length(r), 32);
	/* h0..h8 went (h8 for the new port-80 entry); h9 is the oldest */
	for (i = 0; i < 30; i++) {
		snprintf(want, sizeof(want), "h%d.example", i + 9);
		snprintf(req, sizeof(req), "%d.host", i);
		assert_string_equal(gets_(r, req), want);
	}
	assert_string_equal(gets_(r, "30.host"), "h39.example");
	assert_string_equal(gets_(r, "30.count"), "2");
	assert_string_equal(gets_(r, "31.port"), "80");
	assert_string_equal(gets_(r, "31.count"), "1");
	json_object_put(o);
	close(fd);
	spin(f, 4);
}

/*
 * control-connections: past the limit a peer gets one line naming the
 * limit and the key, then EOF; a slot freed is usable again, and a raised
 * limit takes at once.
 */
static void
test_connection_limit(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char line[1024];
	int a, b, c;

	gk_control_set_max(f->ctl, 2);
	a = client(f);
	b = client(f);
	c = client(f);
	assert_int_equal(gk_control_nconns(f->ctl), 2);
	/* its request is sent after the refusal was (no EPIPE), and ends
	 * the wait for it */
	send_all(c, "{\"op\":\"cage.list\"}\n", 19);
	assert_true(read_line(f, c, line, sizeof(line)) > 0);
	assert_non_null(o = json_tokener_parse(line));
	assert_false(ok(o));
	assert_non_null(strstr(gets_(o, "error"), "2 control connections "
	    "open, its limit (control-connections = 2;"));
	assert_non_null(strstr(gets_(o, "error"), "raise "
	    "control-connections"));
	json_object_put(o);
	assert_int_equal(read_line(f, c, line, sizeof(line)), -1);	/* EOF */
	close(c);
	close(a);
	spin(f, 5);
	assert_int_equal(gk_control_nconns(f->ctl), 1);
	c = client(f);
	o = rpc(f, c, "{\"op\":\"cage.list\"}");
	assert_true(ok(o));
	json_object_put(o);
	gk_control_set_max(f->ctl, 3);
	a = client(f);
	o = rpc(f, a, "{\"op\":\"cage.list\"}");
	assert_true(ok(o));
	json_object_put(o);
	assert_int_equal(gk_control_nconns(f->ctl), 3);
	close(a);
	close(b);
	close(c);
	spin(f, 5);
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
		cmocka_unit_test_setup_teardown(test_operator_ops, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_recent_ring, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit, setup,
		    teardown),
	};

	log_init("test_gk_control", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
