/*
 * A cage's life in the audit log, through the control socket (the
 * fixture of tests/control_testutil.h): cage.create's "command" and
 * "mounts" checked and summed up in its line with the spec's SHA-256
 * (the same spec, the same hash; another spec, another), cage.destroy's
 * "exit", "signal" and "reason" from the cage's own connection (refused
 * from any other), an operator's destroy said as such, and a connection
 * still open at the end counted in the destroy line's traffic.
 */
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
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/cage/gk_traffic.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "tests/control_testutil.h"

#define CREATE	"{\"op\":\"cage.create\",\"source\":\"127.0.0.2\"," \
		"\"allow\":[\"a.example\",\"*.b.example:443\"],\"label\":\"life\""

/* The audit line of `event` for cage id (the last one), parsed. */
static struct json_object *
audit_line(struct fixture *f, const char *event, const char *id)
{
	char want[64], *t = audit_text(f), *line, *end, *found = NULL;
	struct json_object *o;

	snprintf(want, sizeof(want), "\"event\":\"%s\"", event);
	for (line = t; line != NULL && *line != '\0'; line = end) {
		end = strchr(line, '\n');
		if (end != NULL)
			*end++ = '\0';
		if (strstr(line, want) != NULL && strstr(line, id) != NULL)
			found = line;
	}
	assert_non_null(found);
	assert_non_null(o = json_tokener_parse(found));
	return o;
}

/* Create with `more` members; the new cage's id into id. */
static void
create(struct fixture *f, int fd, const char *more, char id[16])
{
	struct json_object *o;
	char req[2048];

	snprintf(req, sizeof(req), CREATE "%s}", more);
	o = rpc(f, fd, req);
	if (!ok(o))
		fail_msg("%s: %s", req, json_object_to_json_string(o));
	snprintf(id, 16, "%s", gets_(o, "cage.id"));
	json_object_put(o);
}

static void
destroy(struct fixture *f, int fd, const char *id, const char *more)
{
	struct json_object *o;
	char req[512];

	snprintf(req, sizeof(req), "{\"op\":\"cage.destroy\",\"id\":\"%s\""
	    "%s}", id, more);
	o = rpc(f, fd, req);
	assert_true(ok(o));
	json_object_put(o);
}

static void
test_create_line(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char id[16], id2[16], hash[65];
	int fd = client(f);

	create(f, fd, ",\"command\":[\"sh\",\"-c\",\"exit 7\"],\"mounts\":"
	    "[\"rw:/home/u/src\",\"hide:/home/u/.ssh\"]", id);
	o = audit_line(f, "cage.create", id);
	assert_string_equal(gets_(o, "allow.1"), "*.b.example:443");
	assert_string_equal(gets_(o, "patterns"), "2");
	assert_string_equal(gets_(o, "command.2"), "exit 7");
	assert_string_equal(gets_(o, "mounts.1"), "hide:/home/u/.ssh");
	assert_string_equal(gets_(o, "netns"), "false");
	assert_int_equal(strlen(gets_(o, "spec_sha256")), 64);
	snprintf(hash, sizeof(hash), "%s", gets_(o, "spec_sha256"));
	json_object_put(o);
	destroy(f, fd, id, "");
	/* the same spec (keys in another order): the same hash */
	snprintf(id2, sizeof(id2), "%s", id);
	o = rpc(f, fd, "{\"mounts\":[\"rw:/home/u/src\",\"hide:/home/u/.ssh\"]"
	    ",\"label\":\"life\",\"op\":\"cage.create\",\"allow\":"
	    "[\"a.example\",\"*.b.example:443\"],\"command\":[\"sh\",\"-c\","
	    "\"exit 7\"],\"source\":\"127.0.0.2\"}");
	assert_true(ok(o));
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);
	o = audit_line(f, "cage.create", id);
	assert_string_equal(gets_(o, "spec_sha256"), hash);
	json_object_put(o);
	destroy(f, fd, id, "");
	/* another command: another hash */
	create(f, fd, ",\"command\":[\"sh\",\"-c\",\"exit 8\"],\"mounts\":"
	    "[\"rw:/home/u/src\",\"hide:/home/u/.ssh\"]", id);
	o = audit_line(f, "cage.create", id);
	assert_string_not_equal(gets_(o, "spec_sha256"), hash);
	json_object_put(o);
	close(fd);
	spin(f, 4);
}

static void
test_bad_requests(void **state)
{
	static const struct {
		const char	*more, *want;
	} bad[] = {
		{ "\"exit\":256", "\"exit\" must be the command's exit status" },
		{ "\"exit\":1,\"signal\":\"SIGKILL\"",
		    "either \"exit\" or \"signal\"" },
		{ "\"signal\":\"kill\"", "a signal's name" },
		{ "\"reason\":\"walltime\"", "give it with \"exit\" or" },
		{ "\"exit\":0,\"reason\":\"bored\"", "\"walltime\" or" },
	};
	struct fixture *f = *state;
	char id[16], req[512];
	int fd = client(f), other = client(f);
	size_t i;

	rpc_err(f, fd, CREATE ",\"command\":\"sh\"}", "\"command\" must be "
	    "an array of strings");
	rpc_err(f, fd, CREATE ",\"command\":[1]}", "command[0] must be a "
	    "string");
	rpc_err(f, fd, CREATE ",\"mounts\":[\"/x\"]}", "mounts[0] must be "
	    "MODE:PATH");
	rpc_err(f, fd, CREATE ",\"mounts\":[\"rx:/x\"]}", "MODE ro, rw");
	rpc_err(f, fd, "{\"op\":\"cage.list\",\"command\":[]}",
	    "unknown field \"command\"");
	create(f, fd, "", id);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(req, sizeof(req), "{\"op\":\"cage.destroy\","
		    "\"id\":\"%s\",%s}", id, bad[i].more);
		rpc_err(f, fd, req, bad[i].want);
	}
	/* only its own connection says how its command ended */
	snprintf(req, sizeof(req), "{\"op\":\"cage.destroy\",\"id\":\"%s\","
	    "\"exit\":0}", id);
	rpc_err(f, other, req, "only the connection that created cage");
	assert_non_null(gk_cage_by_id(f->cages, id));
	close(fd);
	close(other);
	spin(f, 4);
}

static void
test_destroy_line(void **state)
{
	static const struct {
		const char	*more, *reason, *key, *value;
	} cases[] = {
		{ ",\"exit\":7", "exited", "exit", "7" },
		{ ",\"signal\":\"SIGTERM\",\"reason\":\"walltime\"",
		    "walltime", "signal", "SIGTERM" },
		{ ",\"signal\":\"SIGKILL\",\"reason\":\"memory\"", "memory",
		    "signal", "SIGKILL" },
		{ ",\"signal\":\"SIGHUP\"", "killed", "signal", "SIGHUP" },
	};
	struct fixture *f = *state;
	struct json_object *o;
	char id[16];
	int fd = client(f), op = client(f);
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		create(f, fd, ",\"command\":[\"sh\",\"-c\",\"exit 7\"]", id);
		destroy(f, fd, id, cases[i].more);
		o = audit_line(f, "cage.destroy", id);
		assert_string_equal(gets_(o, "reason"), cases[i].reason);
		assert_string_equal(gets_(o, cases[i].key), cases[i].value);
		assert_null(get(o, strcmp(cases[i].key, "exit") == 0 ?
		    "signal" : "exit"));
		assert_string_equal(gets_(o, "command.2"), "exit 7");
		json_object_put(o);
	}
	/* an operator's destroy: said as such, no status */
	create(f, fd, ",\"command\":[\"sleep\",\"99\"]", id);
	destroy(f, op, id, "");
	o = audit_line(f, "cage.destroy", id);
	assert_non_null(strstr(gets_(o, "reason"), "destroyed by uid"));
	assert_null(get(o, "exit"));
	json_object_put(o);
	close(fd);
	close(op);
	spin(f, 4);
}

static struct gk_cage *open_cage;

/* A tunnel still open when its cage ends: its bytes as it ends. */
static void
open_end_cb(struct gk_hold *h)
{
	(void)h;
	gk_traffic_add(open_cage, "a.example", 443, 1000, 2000);
}

static void
test_open_tunnel_counted(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	struct gk_hold h;
	char id[16];
	int fd = client(f);

	create(f, fd, "", id);
	assert_non_null(open_cage = gk_cage_by_id(f->cages, id));
	gk_traffic_add(open_cage, "a.example", 443, 5, 6);	/* one ended */
	memset(&h, 0, sizeof(h));
	assert_int_equal(gk_hold_take(&h, open_cage, GK_HOLD_TUNNEL, 0,
	    open_end_cb), GK_LIM__MAX);
	destroy(f, fd, id, "");
	o = audit_line(f, "cage.destroy", id);
	assert_string_equal(gets_(o, "reason"), "request");
	assert_string_equal(gets_(o, "traffic.up"), "1005");
	assert_string_equal(gets_(o, "traffic.down"), "2006");
	assert_string_equal(gets_(o, "traffic.hosts.0.connections"), "2");
	json_object_put(o);
	close(fd);
	spin(f, 4);
}

/* Many patterns: the first GK_CTL_ALLOW_SHOWN named, all counted. */
static void
test_allow_bounded(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char req[16384], id[16];
	size_t n;
	int fd = client(f), i;

	n = (size_t)snprintf(req, sizeof(req), "{\"op\":\"cage.create\","
	    "\"source\":\"127.0.0.3\",\"allow\":[");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s\"h%d.example"
		    "\"", i > 0 ? "," : "", i);
	snprintf(req + n, sizeof(req) - n, "]}");
	o = rpc(f, fd, req);
	assert_true(ok(o));
	snprintf(id, sizeof(id), "%s", gets_(o, "cage.id"));
	json_object_put(o);
	o = audit_line(f, "cage.create", id);
	assert_string_equal(gets_(o, "patterns"), "100");
	assert_int_equal(json_object_array_length(get(o, "allow")),
	    GK_CTL_ALLOW_SHOWN);
	json_object_put(o);
	close(fd);
	spin(f, 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_destroy_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_open_tunnel_counted,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_bounded, setup,
		    teardown),
	};

	log_init("test_gk_life", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
