/*
 * Unit tests for the control request parser: one table of lines, each
 * with the status and a piece of the message (or of the result) expected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gatekeeper/policy/gk_ctlreq.h"

struct pcase {
	const char		*in;
	size_t			 len;	/* 0: strlen(in) */
	enum gk_ctl_status	 st;
	const char		*want;	/* in err; on OK the op */
};

#define CREATE	"{\"op\":\"cage.create\","

static const struct pcase cases[] = {
	/* every op */
	{ CREATE "\"source\":\"127.0.0.2\",\"allow\":[\"*.github.com\","
	    "\"github.com\"],\"label\":\"demo\"}", 0, GK_CTL_OK,
	    "cage.create" },
	{ CREATE "\"source\":\"fd00::2\",\"allow\":[]}", 0, GK_CTL_OK,
	    "cage.create" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"allow\":[\"a.b\"]}",
	    0, GK_CTL_OK, "cage.update" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"0000zzzz\"}", 0, GK_CTL_OK,
	    "cage.destroy" },
	{ "{\"op\":\"cage.list\"}", 0, GK_CTL_OK, "cage.list" },
	{ "  {\"op\" : \"stats\"}  \r", 0, GK_CTL_OK, "stats" },
	{ "{\"op\":\"stats\"}\n", 0, GK_CTL_OK, "stats" },
	{ "{\"op\":\"st\\u0061ts\"}", 0, GK_CTL_OK, "stats" },
	/* empty, too long */
	{ "", 0, GK_CTL_EMPTY, "empty request" },
	{ " \t\r", 0, GK_CTL_EMPTY, "empty request" },
	/* bad JSON */
	{ "{\"op\":\"stats\"", 0, GK_CTL_BAD_JSON, "line ends inside" },
	{ "{\"op\":\"stats\",}", 0, GK_CTL_BAD_JSON, "offset 14" },
	{ "{op:\"stats\"}", 0, GK_CTL_BAD_JSON, "bad JSON at offset" },
	{ "{'op':'stats'}", 0, GK_CTL_BAD_JSON, "single quotes" },
	{ "{\"op\":\"st\xff\"}", 0, GK_CTL_BAD_JSON, "utf-8" },
	{ "{\"op\":\"stats\"}\0", 15, GK_CTL_BAD_JSON,
	    "NUL byte at offset 14" },
	{ "{\"op\":\"st\0ats\"}", 15, GK_CTL_BAD_JSON, "NUL byte at offset 9" },
	{ "\0", 1, GK_CTL_BAD_JSON, "NUL byte at offset 0" },
	{ "{\"op\":\"stats\"} x", 0, GK_CTL_BAD_JSON, "unexpected data at "
	    "offset 15" },
	{ "{\"op\":\"stats\"}{\"op\":\"stats\"}", 0, GK_CTL_BAD_JSON,
	    "unexpected data at offset 14" },
	{ "{\"op\":\"stats\"}]", 0, GK_CTL_BAD_JSON, "unexpected data" },
	{ "nope", 0, GK_CTL_BAD_JSON, "bad JSON" },
	/* depth */
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[[\"a.com\"]]}", 0,
	    GK_CTL_BAD_JSON, "nesting too deep" },
	{ "{\"op\":{\"a\":{\"b\":1}}}", 0, GK_CTL_BAD_JSON,
	    "nesting too deep" },
	{ "{\"op\":{\"a\":1}}", 0, GK_CTL_BAD_OP, "not an object" },
	/* not an object */
	{ "[\"op\",\"stats\"]", 0, GK_CTL_NOT_OBJECT, "not an array" },
	{ "\"stats\"", 0, GK_CTL_NOT_OBJECT, "not a string" },
	{ "42", 0, GK_CTL_NOT_OBJECT, "not a number" },
	{ "null", 0, GK_CTL_NOT_OBJECT, "not null" },
	{ "true", 0, GK_CTL_NOT_OBJECT, "not a boolean" },
	/* duplicate keys */
	{ "{\"op\":\"stats\",\"op\":\"cage.list\"}", 0, GK_CTL_DUPLICATE_KEY,
	    "duplicate key \"op\"" },
	{ "{\"op\":\"stats\",\"o\\u0070\":\"stats\"}", 0,
	    GK_CTL_DUPLICATE_KEY, "duplicate key in the request" },
	{ "{\"x\":1,\"x\":2,\"op\":\"stats\"}", 0, GK_CTL_DUPLICATE_KEY,
	    "duplicate key" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[\"op\",\"op\"]}", 0,
	    GK_CTL_OK, "cage.create" },
	/* op */
	{ "{}", 0, GK_CTL_BAD_OP, "missing \"op\"" },
	{ "{\"id\":\"abcd1234\"}", 0, GK_CTL_BAD_OP, "known ops: "
	    "cage.create, cage.update, cage.destroy, cage.list, cage.show, "
	    "cage.attach, cage.decide, denials, pending, stats, reload, "
	    "cage.credential" },
	/* the operator's ops */
	{ "{\"op\":\"cage.show\",\"id\":\"abcd1234\"}", 0, GK_CTL_OK,
	    "cage.show" },
	{ "{\"op\":\"cage.show\"}", 0, GK_CTL_MISSING_FIELD,
	    "missing \"id\" for cage.show" },
	{ "{\"op\":\"cage.show\",\"id\":\"abcd1234\",\"follow\":true}", 0,
	    GK_CTL_UNKNOWN_FIELD, "unknown field \"follow\" for cage.show" },
	{ "{\"op\":\"denials\"}", 0, GK_CTL_OK, "denials" },
	{ "{\"op\":\"denials\",\"id\":\"abcd1234\",\"follow\":true}", 0,
	    GK_CTL_OK, "denials" },
	{ "{\"op\":\"denials\",\"follow\":\"yes\"}", 0, GK_CTL_BAD_TYPE,
	    "\"follow\" must be true or false" },
	{ "{\"op\":\"denials\",\"id\":\"NOPE\"}", 0, GK_CTL_BAD_VALUE,
	    "invalid cage id" },
	{ "{\"op\":\"pending\"}", 0, GK_CTL_OK, "pending" },
	{ "{\"op\":\"pending\",\"id\":\"abcd1234\"}", 0,
	    GK_CTL_UNKNOWN_FIELD, "unknown field \"id\" for pending" },
	{ "{\"op\":\"reload\"}", 0, GK_CTL_OK, "reload" },
	{ "{\"op\":\"reload\",\"policy\":\"x\"}", 0, GK_CTL_UNKNOWN_FIELD,
	    "unknown field \"policy\" for reload" },
	/* cage.update: a whole list, or a change */
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"add\":[\"a.b\"]}",
	    0, GK_CTL_OK, "cage.update" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"remove\":[\"a.b\"],"
	    "\"add\":[\"c.d\"]}", 0, GK_CTL_OK, "cage.update" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"allow\":[],"
	    "\"add\":[\"c.d\"]}", 0, GK_CTL_BAD_VALUE, "not both" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"add\":[],"
	    "\"remove\":[]}", 0, GK_CTL_BAD_VALUE, "both empty" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"add\":\"a.b\"}",
	    0, GK_CTL_BAD_TYPE, "\"add\" must be an array" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"remove\":[1]}",
	    0, GK_CTL_BAD_TYPE, "remove[0] must be a pattern string" },
	{ "{\"op\":\"cage.create\",\"source\":\"10.0.0.1\",\"allow\":[],"
	    "\"add\":[\"a.b\"]}", 0, GK_CTL_UNKNOWN_FIELD,
	    "unknown field \"add\" for cage.create" },
	{ "{\"op\":\"cage.attach\",\"id\":\"abcd1234\"}", 0, GK_CTL_OK,
	    "cage.attach" },
	{ "{\"op\":\"cage.attach\"}", 0, GK_CTL_MISSING_FIELD, "\"id\"" },
	/* limits */
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"memory\":"
	    "268435456,\"pids\":64,\"cpus\":1.5}}", 0, GK_CTL_OK,
	    "cage.create" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{}}", 0,
	    GK_CTL_OK, "cage.create" },
	{ CREATE "\"source\":\"127.0.0.2\",\"allow\":[],\"limits\":"
	    "{\"pids\":5}}", 0, GK_CTL_BAD_VALUE, "namespace cage" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"memory\":"
	    "1000}}", 0, GK_CTL_BAD_VALUE, "\"memory\" is 1000; it must be "
	    "4194304 to" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"memory\":"
	    "\"1G\"}}", 0, GK_CTL_BAD_TYPE, "must be a whole number" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"pids\":0}}",
	    0, GK_CTL_BAD_VALUE, "\"pids\" is 0" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"pids\":-3}}",
	    0, GK_CTL_BAD_VALUE, "\"pids\" is -3" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"cpus\":0}}",
	    0, GK_CTL_BAD_VALUE, "0.01 to 1024" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"cpus\":"
	    "true}}", 0, GK_CTL_BAD_TYPE, "must be a number" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{\"swap\":1}}",
	    0, GK_CTL_UNKNOWN_FIELD, "unknown member of \"limits\": \"swap\"" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":[1]}", 0,
	    GK_CTL_BAD_TYPE, "\"limits\" must be an object" },
	{ CREATE "\"netns\":true,\"allow\":[],\"limits\":{"
	    "\"best_effort\":1}}", 0, GK_CTL_BAD_TYPE, "true or false" },
	{ "{\"op\":\"cage.nuke\"}", 0, GK_CTL_BAD_OP, "unknown op "
	    "'cage.nuke'; known ops: cage.create" },
	{ "{\"op\":\"\"}", 0, GK_CTL_BAD_OP, "unknown op ''" },
	{ "{\"op\":\"a\\u0001b\"}", 0, GK_CTL_BAD_OP, "'a\\x01b'" },
	{ "{\"op\":\"stats\\u0000\"}", 0, GK_CTL_BAD_VALUE, "NUL character" },
	{ "{\"op\":1}", 0, GK_CTL_BAD_OP, "\"op\" must be a string, not a "
	    "number" },
	{ "{\"op\":null}", 0, GK_CTL_BAD_OP, "not null" },
	{ "{\"op\":[\"stats\"]}", 0, GK_CTL_BAD_OP, "not an array" },
	/* unknown and missing fields */
	{ "{\"op\":\"stats\",\"verbose\":true}", 0, GK_CTL_UNKNOWN_FIELD,
	    "unknown field \"verbose\" for stats" },
	{ "{\"op\":\"cage.list\",\"a\":1,\"b\":2}", 0, GK_CTL_UNKNOWN_FIELD,
	    "unknown fields \"a\", \"b\" for cage.list" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"abcd1234\",\"allow\":[]}", 0,
	    GK_CTL_UNKNOWN_FIELD, "\"allow\" for cage.destroy" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"label\":\"x\","
	    "\"allow\":[]}", 0, GK_CTL_UNKNOWN_FIELD, "\"label\" for "
	    "cage.update" },
	{ "{\"op\":\"stats\",\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1}", 0,
	    GK_CTL_UNKNOWN_FIELD, "\"d\", ..." },
	{ "{\"op\":\"stats\",\"\\u0007\":1}", 0, GK_CTL_UNKNOWN_FIELD,
	    "\"\\x07\"" },
	{ CREATE "\"allow\":[]}", 0, GK_CTL_MISSING_FIELD, "missing "
	    "\"source\" or \"netns\" for cage.create" },
	/* a namespace instead of a source */
	{ CREATE "\"netns\":true,\"allow\":[\"a.com\"]}", 0, GK_CTL_OK,
	    "cage.create" },
	{ CREATE "\"netns\":true,\"allow\":[],\"label\":\"x\"}", 0,
	    GK_CTL_OK, "cage.create" },
	{ CREATE "\"netns\":false,\"allow\":[]}", 0, GK_CTL_BAD_VALUE,
	    "\"netns\" must be true" },
	{ CREATE "\"netns\":1,\"allow\":[]}", 0, GK_CTL_BAD_TYPE,
	    "\"netns\" must be true (and the namespace fd sent with the "
	    "request line), not a number" },
	{ CREATE "\"netns\":\"yes\",\"allow\":[]}", 0, GK_CTL_BAD_TYPE,
	    "not a string" },
	{ CREATE "\"netns\":true,\"source\":\"10.0.0.1\",\"allow\":[]}",
	    0, GK_CTL_BAD_VALUE, "either \"source\" or \"netns\"" },
	{ CREATE "\"netns\":true,\"transparent\":false,\"allow\":[]}", 0,
	    GK_CTL_OK, "cage.create" },
	{ CREATE "\"netns\":true,\"transparent\":1,\"allow\":[]}", 0,
	    GK_CTL_BAD_TYPE, "\"transparent\" must be true or false, not a "
	    "number" },
	{ CREATE "\"source\":\"10.0.0.1\",\"transparent\":true,"
	    "\"allow\":[]}", 0, GK_CTL_BAD_VALUE, "applies to cages made "
	    "from a network namespace" },
	{ CREATE "\"netns\":true}", 0, GK_CTL_MISSING_FIELD,
	    "missing \"allow\"" },
	/* events: this connection is told the cage's denials */
	{ CREATE "\"netns\":true,\"events\":true,\"allow\":[]}", 0,
	    GK_CTL_OK, "cage.create" },
	{ CREATE "\"source\":\"10.0.0.1\",\"events\":false,\"allow\":[]}",
	    0, GK_CTL_OK, "cage.create" },
	{ CREATE "\"netns\":true,\"events\":\"yes\",\"allow\":[]}", 0,
	    GK_CTL_BAD_TYPE, "\"events\" must be true or false, not a "
	    "string" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"events\":true,"
	    "\"allow\":[]}", 0, GK_CTL_UNKNOWN_FIELD, "\"events\" for "
	    "cage.update" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\",\"netns\":true,"
	    "\"allow\":[]}", 0, GK_CTL_UNKNOWN_FIELD, "\"netns\" for "
	    "cage.update" },
	{ CREATE "\"source\":\"10.0.0.1\"}", 0, GK_CTL_MISSING_FIELD,
	    "missing \"allow\"" },
	{ "{\"op\":\"cage.update\",\"id\":\"abcd1234\"}", 0,
	    GK_CTL_MISSING_FIELD, "missing \"allow\" for cage.update" },
	{ "{\"op\":\"cage.update\",\"allow\":[]}", 0, GK_CTL_MISSING_FIELD,
	    "missing \"id\"" },
	{ "{\"op\":\"cage.destroy\"}", 0, GK_CTL_MISSING_FIELD,
	    "missing \"id\" for cage.destroy" },
	/* types */
	{ CREATE "\"source\":167772161,\"allow\":[]}", 0, GK_CTL_BAD_TYPE,
	    "\"source\" must be a string, not a number" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":\"a.com\"}", 0,
	    GK_CTL_BAD_TYPE, "\"allow\" must be an array" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":{}}", 0, GK_CTL_BAD_TYPE,
	    "not an object" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[\"a.com\",7]}", 0,
	    GK_CTL_BAD_TYPE, "allow[1] must be a pattern string" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[null]}", 0,
	    GK_CTL_BAD_TYPE, "allow[0]" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[true]}", 0,
	    GK_CTL_BAD_TYPE, "not a boolean" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[],\"label\":5}", 0,
	    GK_CTL_BAD_TYPE, "\"label\" must be a string" },
	{ "{\"op\":\"cage.destroy\",\"id\":12345678}", 0, GK_CTL_BAD_TYPE,
	    "\"id\" must be a string" },
	/* values */
	{ CREATE "\"source\":\"10.0.0.256\",\"allow\":[]}", 0,
	    GK_CTL_BAD_VALUE, "invalid source address '10.0.0.256'" },
	{ CREATE "\"source\":\"\",\"allow\":[]}", 0, GK_CTL_BAD_VALUE,
	    "invalid source address ''" },
	{ CREATE "\"source\":\"10.0.0.1:53\",\"allow\":[]}", 0,
	    GK_CTL_BAD_VALUE, "invalid source address" },
	{ CREATE "\"source\":\"[fd00::1]\",\"allow\":[]}", 0,
	    GK_CTL_BAD_VALUE, "invalid source address" },
	{ CREATE "\"source\":\"10.0.0.1\\u0000\",\"allow\":[]}", 0,
	    GK_CTL_BAD_VALUE, "\"source\" contains a NUL" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[\"a\\u0000.com\"]}", 0,
	    GK_CTL_BAD_VALUE, "allow[0] contains a NUL" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[],\"label\":\"a\\tb\"}",
	    0, GK_CTL_BAD_VALUE, "non-printable" },
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[],\"label\":\"caf\\u00e9\""
	    "}", 0, GK_CTL_BAD_VALUE, "non-ASCII byte at offset 3" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"abcd123\"}", 0, GK_CTL_BAD_VALUE,
	    "invalid cage id 'abcd123'" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"abcd12345\"}", 0,
	    GK_CTL_BAD_VALUE, "invalid cage id" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"ABCD1234\"}", 0,
	    GK_CTL_BAD_VALUE, "a-z and 0-9" },
	{ "{\"op\":\"cage.destroy\",\"id\":\"\"}", 0, GK_CTL_BAD_VALUE,
	    "invalid cage id ''" },
	/* patterns are not checked here */
	{ CREATE "\"source\":\"10.0.0.1\",\"allow\":[\"*.com\",\"\"]}", 0,
	    GK_CTL_OK, "cage.create" },
};

static void
check_case(const struct pcase *pc)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];
	enum gk_ctl_status st;
	size_t len = pc->len != 0 ? pc->len : strlen(pc->in);
	uint8_t *buf;

	buf = malloc(len + 1);	/* exact size is enough; +1 for len 0 */
	assert_non_null(buf);
	memcpy(buf, pc->in, len);
	memset(err, 'X', sizeof(err));
	st = gk_ctlreq_parse(buf, len, &req, err, sizeof(err));
	if (st != pc->st || (st != GK_CTL_OK &&
	    strstr(err, pc->want) == NULL) || (st == GK_CTL_OK &&
	    strcmp(gk_ctl_op_name(req.op), pc->want) != 0))
		fail_msg("input %s: got %s (%s), want %s (%s)", pc->in,
		    gk_ctl_strstatus(st), st == GK_CTL_OK ?
		    gk_ctl_op_name(req.op) : err, gk_ctl_strstatus(pc->st),
		    pc->want);
	if (st != GK_CTL_OK) {
		assert_int_equal(req.op, GK_CTL_OP_NONE);
		assert_null(req.allow);
		assert_null(req.cred_value);
		assert_null(req.cred_placeholder);
		assert_null(req.hosts);
	}
	gk_ctlreq_clear(&req);
	free(buf);
}

static void
test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

static enum gk_ctl_status
parse_str(const char *s, struct gk_ctlreq *req, char *err, size_t errlen)
{
	return gk_ctlreq_parse((const uint8_t *)s, strlen(s), req, err,
	    errlen);
}

static void
test_fields(void **state)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN], addr[GK_ADDR_STRLEN];

	(void)state;
	assert_int_equal(parse_str(CREATE "\"label\":\"demo box\","
	    "\"source\":\"127.0.0.2\",\"allow\":[\"*.github.com\","
	    "\"github.com:443\"]}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.op, GK_CTL_OP_CAGE_CREATE);
	assert_string_equal(req.source, "127.0.0.2");
	assert_string_equal(gk_addr_ntop(&req.source_addr, addr,
	    sizeof(addr)), "127.0.0.2");
	assert_string_equal(req.label, "demo box");
	assert_int_equal(req.nallow, 2);
	assert_string_equal(req.allow[0], "*.github.com");
	assert_string_equal(req.allow[1], "github.com:443");
	assert_string_equal(req.id, "");
	assert_false(req.events);
	gk_ctlreq_clear(&req);
	assert_null(req.allow);
	gk_ctlreq_clear(&req);		/* twice is fine */
	gk_ctlreq_clear(NULL);

	assert_int_equal(parse_str("{\"allow\":[],\"id\":\"k3j9x0qa\","
	    "\"op\":\"cage.update\"}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_string_equal(req.id, "k3j9x0qa");
	assert_int_equal(req.nallow, 0);
	assert_non_null(req.allow);
	assert_false(req.edit);
	gk_ctlreq_clear(&req);

	assert_int_equal(parse_str("{\"op\":\"cage.update\",\"id\":"
	    "\"k3j9x0qa\",\"remove\":[\"a.example\",\"b.example:443\"]}",
	    &req, err, sizeof(err)), GK_CTL_OK);
	assert_true(req.edit);
	assert_null(req.allow);
	assert_null(req.add);
	assert_int_equal(req.nremove, 2);
	assert_string_equal(req.remove[1], "b.example:443");
	assert_null(req.remove[2]);
	gk_ctlreq_clear(&req);
	assert_null(req.remove);

	assert_int_equal(parse_str("{\"op\":\"denials\",\"follow\":true}",
	    &req, err, sizeof(err)), GK_CTL_OK);
	assert_true(req.follow);
	assert_string_equal(req.id, "");
	gk_ctlreq_clear(&req);

	assert_int_equal(parse_str(CREATE "\"netns\":true,\"events\":true,"
	    "\"allow\":[]}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_true(req.events);
	assert_true(req.netns);
	assert_false(req.learn);
	gk_ctlreq_clear(&req);
	assert_int_equal(parse_str(CREATE "\"netns\":true,\"learn\":true,"
	    "\"allow\":[]}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_true(req.learn);
	gk_ctlreq_clear(&req);
	assert_int_equal(parse_str(CREATE "\"netns\":true,\"learn\":1,"
	    "\"allow\":[]}", &req, err, sizeof(err)), GK_CTL_BAD_TYPE);
	assert_int_equal(parse_str(CREATE "\"netns\":true,\"limits\":{"
	    "\"memory\":268435456,\"pids\":64,\"cpus\":0.25,"
	    "\"best_effort\":true},\"allow\":[]}", &req, err, sizeof(err)),
	    GK_CTL_OK);
	assert_int_equal(req.limits.memory, 256ULL << 20);
	assert_int_equal(req.limits.pids, 64);
	assert_int_equal(req.limits.cpus, 250);
	assert_true(req.limits_best_effort);
	gk_ctlreq_clear(&req);
}

static void
test_label_boundary(void **state)
{
	char line[256], label[GK_CAGE_LABEL_MAX + 2], err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;

	(void)state;
	memset(label, 'l', sizeof(label) - 1);
	label[GK_CAGE_LABEL_MAX] = '\0';
	snprintf(line, sizeof(line), CREATE "\"source\":\"10.0.0.1\","
	    "\"allow\":[],\"label\":\"%s\"}", label);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)), GK_CTL_OK);
	assert_string_equal(req.label, label);
	gk_ctlreq_clear(&req);
	label[GK_CAGE_LABEL_MAX] = 'l';
	label[GK_CAGE_LABEL_MAX + 1] = '\0';
	snprintf(line, sizeof(line), CREATE "\"source\":\"10.0.0.1\","
	    "\"allow\":[],\"label\":\"%s\"}", label);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)),
	    GK_CTL_BAD_VALUE);
	assert_non_null(strstr(err, "65 bytes; at most 64"));
}

/* Build {"op":"cage.create","source":"10.0.0.1","allow":["a.com",...]} */
static char *
big_allow(size_t n, size_t *lenp)
{
	char *s = malloc(64 + n * 8);
	size_t i, o;

	if (s == NULL)
		abort();
	o = (size_t)sprintf(s, CREATE "\"source\":\"10.0.0.1\",\"allow\":[");
	for (i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "%s\"a.com\"", i ? "," : "");
	o += (size_t)sprintf(s + o, "]}");
	*lenp = o;
	return s;
}

static void
test_huge_allow(void **state)
{
	char err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;
	size_t len;
	char *s;

	(void)state;
	s = big_allow(GK_ALLOWLIST_MAX, &len);
	assert_true(len <= GK_CTL_LINE_MAX);
	assert_int_equal(gk_ctlreq_parse((uint8_t *)s, len, &req, err,
	    sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.nallow, GK_ALLOWLIST_MAX);
	gk_ctlreq_clear(&req);
	free(s);
	s = big_allow(GK_ALLOWLIST_MAX + 1, &len);
	assert_int_equal(gk_ctlreq_parse((uint8_t *)s, len, &req, err,
	    sizeof(err)), GK_CTL_BAD_VALUE);
	assert_non_null(strstr(err, "4097 patterns; at most 4096"));
	free(s);
}

static void
test_line_bounds(void **state)
{
	char err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;
	uint8_t *buf;
	size_t n = GK_CTL_LINE_MAX;

	(void)state;
	/* max: {"op":"stats"} padded with spaces to exactly the limit */
	buf = malloc(n + 1);
	assert_non_null(buf);
	memset(buf, ' ', n + 1);
	memcpy(buf, "{\"op\":\"stats\"}", 14);
	assert_int_equal(gk_ctlreq_parse(buf, n, &req, err, sizeof(err)),
	    GK_CTL_OK);
	gk_ctlreq_clear(&req);
	assert_int_equal(gk_ctlreq_parse(buf, n + 1, &req, err, sizeof(err)),
	    GK_CTL_TOO_LONG);
	assert_non_null(strstr(err, "65537 bytes"));
	free(buf);
}

static void
test_depth_bomb(void **state)
{
	char err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;
	size_t i, n = 20000;
	uint8_t *buf;

	(void)state;
	buf = malloc(2 * n);
	assert_non_null(buf);
	for (i = 0; i < n; i++) {
		buf[i] = '[';
		buf[2 * n - 1 - i] = ']';
	}
	assert_int_equal(gk_ctlreq_parse(buf, 2 * n, &req, err, sizeof(err)),
	    GK_CTL_BAD_JSON);
	assert_non_null(strstr(err, "nesting too deep"));
	for (i = 0; i < n; i++)
		buf[i] = '{';
	assert_int_equal(gk_ctlreq_parse(buf, n, &req, err, sizeof(err)),
	    GK_CTL_BAD_JSON);
	free(buf);
}

#define DECIDE "{\"op\":\"cage.decide\",\"id\":\"k3j9x0qa\","

static void
test_ask(void **state)
{
	static const struct pcase bad[] = {
		{ CREATE "\"netns\":true,\"ask\":\"yes\",\"allow\":[]}", 0,
		    GK_CTL_BAD_TYPE, "\"ask\" must be true or false" },
		{ CREATE "\"netns\":true,\"ask_timeout\":5,\"allow\":[]}", 0,
		    GK_CTL_BAD_VALUE, "for a cage that asks" },
		{ CREATE "\"netns\":true,\"ask\":true,\"ask_timeout\":0,"
		    "\"allow\":[]}", 0, GK_CTL_BAD_VALUE, "1 to 3600" },
		{ CREATE "\"netns\":true,\"ask\":true,\"ask_timeout\":3601,"
		    "\"allow\":[]}", 0, GK_CTL_BAD_VALUE, "1 to 3600" },
		{ CREATE "\"netns\":true,\"ask\":true,\"ask_timeout\":1.5,"
		    "\"allow\":[]}", 0, GK_CTL_BAD_TYPE, "whole number" },
		{ CREATE "\"netns\":true,\"ask\":true,\"learn\":true,"
		    "\"allow\":[]}", 0, GK_CTL_BAD_VALUE, "exclude each other" },
		{ DECIDE "\"ask\":\"17\"}", 0, GK_CTL_MISSING_FIELD,
		    "missing \"decision\"" },
		{ DECIDE "\"decision\":\"once\"}", 0, GK_CTL_MISSING_FIELD,
		    "missing \"ask\"" },
		{ DECIDE "\"ask\":17,\"decision\":\"once\"}", 0,
		    GK_CTL_BAD_TYPE, "\"ask\" must be a string" },
		{ DECIDE "\"ask\":\"017\",\"decision\":\"once\"}", 0,
		    GK_CTL_BAD_VALUE, "invalid question id" },
		{ DECIDE "\"ask\":\"1a\",\"decision\":\"once\"}", 0,
		    GK_CTL_BAD_VALUE, "invalid question id" },
		{ DECIDE "\"ask\":\"\",\"decision\":\"once\"}", 0,
		    GK_CTL_BAD_VALUE, "invalid question id" },
		{ DECIDE "\"ask\":\"99999999999999999999\","
		    "\"decision\":\"once\"}", 0, GK_CTL_BAD_VALUE,
		    "invalid question id" },
		{ DECIDE "\"ask\":\"3\",\"decision\":\"timeout\"}", 0,
		    GK_CTL_BAD_VALUE, "invalid decision 'timeout'" },
		{ DECIDE "\"ask\":\"3\",\"decision\":\"yes\"}", 0,
		    GK_CTL_BAD_VALUE, "once, run, save or deny" },
		{ DECIDE "\"ask\":\"3\",\"decision\":\"run\","
		    "\"by\":\"me\"}", 0, GK_CTL_BAD_VALUE,
		    "tty, supervisor or operator" },
		{ DECIDE "\"ask\":\"3\",\"decision\":\"run\","
		    "\"allow\":[]}", 0, GK_CTL_UNKNOWN_FIELD, "\"allow\"" },
	};
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_case(&bad[i]);
	assert_int_equal(parse_str(CREATE "\"netns\":true,\"ask\":true,"
	    "\"allow\":[]}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_true(req.ask);
	assert_int_equal(req.ask_timeout, GK_ASK_TIMEOUT_DEFAULT);
	gk_ctlreq_clear(&req);
	assert_int_equal(parse_str(CREATE "\"netns\":true,\"ask\":true,"
	    "\"ask_timeout\":3600,\"allow\":[]}", &req, err, sizeof(err)),
	    GK_CTL_OK);
	assert_int_equal(req.ask_timeout, 3600);
	gk_ctlreq_clear(&req);
	assert_int_equal(parse_str(DECIDE "\"ask\":\"18446744073709551\","
	    "\"decision\":\"save\",\"by\":\"tty\"}", &req, err,
	    sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.op, GK_CTL_OP_CAGE_DECIDE);
	assert_string_equal(req.id, "k3j9x0qa");
	assert_true(req.question == 18446744073709551ULL);
	assert_int_equal(req.decision, GK_DECISION_SAVE);
	assert_string_equal(req.by, "tty");
	gk_ctlreq_clear(&req);
	assert_int_equal(parse_str(DECIDE "\"ask\":\"7\","
	    "\"decision\":\"deny\"}", &req, err, sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.decision, GK_DECISION_DENY);
	assert_string_equal(req.by, "supervisor");
	gk_ctlreq_clear(&req);
	assert_string_equal(gk_decision_name(GK_DECISION_TIMEOUT), "timeout");
	assert_string_equal(gk_decision_name(GK_DECISION__MAX), "unknown");
}

/* cage.credential: a placeholder and a value of 25 bytes */
#define CRED	"{\"op\":\"cage.credential\",\"id\":\"abcd1234\","
#define PH	"ghp_placeholder0123456789"
#define VAL	"ghp_SECRETVALUE0123456789"
#define NAME	"\"name\":\"GITHUB_TOKEN\","
#define PAIR	"\"placeholder\":\"" PH "\",\"value\":\"" VAL "\","
#define HOSTS	"\"hosts\":[\"github.com\",\"*.github.com\"]"

static const struct pcase cred_cases[] = {
	{ CRED NAME PAIR HOSTS "}", 0, GK_CTL_OK, "cage.credential" },
	{ CRED "\"name\":\"_\"," PAIR HOSTS "}", 0, GK_CTL_OK,
	    "cage.credential" },
	{ CRED "\"name\":\"a1_B\"," "\"placeholder\":\"12345678\","
	    "\"value\":\"!~~~~~~~\"," HOSTS "}", 0, GK_CTL_OK,
	    "cage.credential" },
	/* every field is required, no other is allowed */
	{ "{\"op\":\"cage.credential\"," NAME PAIR HOSTS "}", 0,
	    GK_CTL_MISSING_FIELD, "missing \"id\" for cage.credential" },
	{ CRED PAIR HOSTS "}", 0, GK_CTL_MISSING_FIELD, "missing \"name\"" },
	{ CRED NAME "\"value\":\"" VAL "\"," HOSTS "}", 0,
	    GK_CTL_MISSING_FIELD, "missing \"placeholder\"" },
	{ CRED NAME "\"placeholder\":\"" PH "\"," HOSTS "}", 0,
	    GK_CTL_MISSING_FIELD, "missing \"value\"" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"" VAL "\"}",
	    0, GK_CTL_MISSING_FIELD, "missing \"hosts\"" },
	{ CRED NAME PAIR HOSTS ",\"allow\":[]}", 0, GK_CTL_UNKNOWN_FIELD,
	    "unknown field \"allow\" for cage.credential" },
	{ CREATE "\"netns\":true,\"allow\":[]," NAME "\"hosts\":[]}", 0,
	    GK_CTL_UNKNOWN_FIELD, "unknown fields \"name\", \"hosts\"" },
	{ CRED NAME PAIR HOSTS ",\"value\":\"x\"}", 0,
	    GK_CTL_DUPLICATE_KEY, "duplicate key \"value\"" },
	/* id */
	{ "{\"op\":\"cage.credential\",\"id\":\"ABCD1234\"," NAME PAIR
	    HOSTS "}", 0, GK_CTL_BAD_VALUE, "invalid cage id" },
	/* name */
	{ CRED "\"name\":\"1TOKEN\"," PAIR HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "invalid credential name '1TOKEN'" },
	{ CRED "\"name\":\"\"," PAIR HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "invalid credential name ''" },
	{ CRED "\"name\":\"GH-TOKEN\"," PAIR HOSTS "}", 0,
	    GK_CTL_BAD_VALUE, "[A-Za-z_][A-Za-z0-9_]*" },
	{ CRED "\"name\":\"A B\"," PAIR HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "invalid credential name" },
	{ CRED "\"name\":\"A\\u0000B\"," PAIR HOSTS "}", 0,
	    GK_CTL_BAD_VALUE, "\"name\" contains a NUL" },
	{ CRED "\"name\":7," PAIR HOSTS "}", 0, GK_CTL_BAD_TYPE,
	    "\"name\" must be a string, not a number" },
	/* placeholder and value */
	{ CRED NAME "\"placeholder\":\"1234567\",\"value\":\"abcdefg\","
	    HOSTS "}", 0, GK_CTL_BAD_VALUE, "\"placeholder\" is 7 bytes; it "
	    "must be 8 to 4096" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"\"," HOSTS "}",
	    0, GK_CTL_BAD_VALUE, "\"value\" is 0 bytes" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"ghp SECRET"
	    "VALUE0123456789\"," HOSTS "}", 0, GK_CTL_BAD_VALUE, "\"value\" "
	    "has a byte that is not printable ASCII or is a space at offset 3" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"ghp_SECRET"
	    "VALUE012345678\\u00e9\"," HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "\"value\" has a byte that is not printable ASCII or is a space "
	    "at offset 24" },
	{ CRED NAME "\"placeholder\":\"ghp_placeholder012345678\\u00e9\","
	    "\"value\":\"" VAL "\"," HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "\"placeholder\" has a byte that is not printable ASCII or is "
	    "a space at offset 24" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"ghp_SECRET"
	    "\\tALUE0123456789\"," HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "at offset 10" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"ghp_SECRET"
	    "\\u0000ALUE0123456789\"," HOSTS "}", 0, GK_CTL_BAD_VALUE,
	    "\"value\" contains a NUL" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"" VAL "X\","
	    HOSTS "}", 0, GK_CTL_BAD_VALUE, "\"placeholder\" is 25 bytes and "
	    "\"value\" 26; a placeholder is as long as the value" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":\"" PH "\","
	    HOSTS "}", 0, GK_CTL_BAD_VALUE, "must not be the secret" },
	{ CRED NAME "\"placeholder\":\"" PH "\",\"value\":12345678," HOSTS
	    "}", 0, GK_CTL_BAD_TYPE, "\"value\" must be a string, not a "
	    "number" },
	{ CRED NAME "\"placeholder\":[\"" PH "\"],\"value\":\"" VAL "\","
	    HOSTS "}", 0, GK_CTL_BAD_TYPE, "\"placeholder\" must be a string, "
	    "not an array" },
	/* hosts */
	{ CRED NAME PAIR "\"hosts\":[]}", 0, GK_CTL_BAD_VALUE,
	    "\"hosts\" has 0 patterns; a credential is bound to 1 to 32" },
	{ CRED NAME PAIR "\"hosts\":\"github.com\"}", 0, GK_CTL_BAD_TYPE,
	    "\"hosts\" must be an array" },
	{ CRED NAME PAIR "\"hosts\":[\"a.com\",1]}", 0, GK_CTL_BAD_TYPE,
	    "hosts[1] must be a pattern string" },
	{ CRED NAME PAIR "\"hosts\":[\"a.com\",\"\"]}", 0,
	    GK_CTL_BAD_VALUE, "hosts[1] is 0 bytes; a pattern is 1 to 1024" },
	{ CRED NAME PAIR "\"hosts\":[\"a\\u0000.com\"]}", 0,
	    GK_CTL_BAD_VALUE, "hosts[0] contains a NUL" },
	{ CRED NAME PAIR "\"hosts\":[\"a.com\",\"GET a.com/x\"]}", 0,
	    GK_CTL_BAD_VALUE, "hosts[1] is a request rule (methods and a "
	    "path); a credential is bound to host patterns" },
	{ CRED NAME PAIR "\"hosts\":[\"a.com/**\"]}", 0,
	    GK_CTL_BAD_VALUE, "hosts[0] is a request rule" },
};

/* A credential request with nhosts hosts, the last hostlen bytes long,
 * and a name of namelen bytes, into buf. */
static void
cred_line(char *buf, size_t len, size_t nhosts, size_t hostlen,
    size_t namelen)
{
	char name[GK_CTL_CRED_NAME_MAX + 2], host[GK_PATTERN_MAX + 2];
	size_t i, o;

	assert_true(namelen < sizeof(name) && hostlen < sizeof(host));
	memset(name, 'N', namelen);
	name[namelen] = '\0';
	memset(host, 'h', hostlen);
	host[hostlen] = '\0';
	o = (size_t)snprintf(buf, len, CRED "\"name\":\"%s\"," PAIR
	    "\"hosts\":[", name);
	for (i = 0; i < nhosts; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s\"%s\"",
		    i > 0 ? "," : "", i + 1 == nhosts ? host : "a.com");
	snprintf(buf + o, len - o, "]}");
}

static void
test_credential(void **state)
{
	char line[4096], err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cred_cases) / sizeof(cred_cases[0]); i++) {
		check_case(&cred_cases[i]);
		/* no message quotes the placeholder or the value */
		gk_ctlreq_parse((const uint8_t *)cred_cases[i].in,
		    strlen(cred_cases[i].in), &req, err, sizeof(err));
		assert_null(strstr(err, "SECRET"));
		assert_null(strstr(err, "placeholder0123"));
		gk_ctlreq_clear(&req);
	}
	assert_int_equal(parse_str(CRED NAME PAIR HOSTS "}", &req, err,
	    sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.op, GK_CTL_OP_CAGE_CREDENTIAL);
	assert_string_equal(req.id, "abcd1234");
	assert_string_equal(req.cred_name, "GITHUB_TOKEN");
	assert_string_equal(req.cred_placeholder, PH);
	assert_string_equal(req.cred_value, VAL);
	assert_int_equal(req.cred_len, sizeof(PH) - 1);
	assert_int_equal(req.nhosts, 2);
	assert_string_equal(req.hosts[0], "github.com");
	assert_string_equal(req.hosts[1], "*.github.com");
	assert_null(req.hosts[2]);
	assert_null(req.allow);
	gk_ctlreq_clear(&req);
	assert_null(req.cred_value);
	assert_null(req.cred_placeholder);
	assert_null(req.hosts);
	assert_string_equal(req.cred_name, "");
	/* the bounds: 32 hosts, a host of GK_PATTERN_MAX, a name of 128 */
	cred_line(line, sizeof(line), GK_CTL_CRED_HOSTS_MAX, GK_PATTERN_MAX,
	    GK_CTL_CRED_NAME_MAX);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)), GK_CTL_OK);
	assert_int_equal(req.nhosts, GK_CTL_CRED_HOSTS_MAX);
	assert_int_equal(strlen(req.hosts[31]), GK_PATTERN_MAX);
	assert_int_equal(strlen(req.cred_name), GK_CTL_CRED_NAME_MAX);
	gk_ctlreq_clear(&req);
	cred_line(line, sizeof(line), GK_CTL_CRED_HOSTS_MAX + 1, 5, 1);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)),
	    GK_CTL_BAD_VALUE);
	assert_non_null(strstr(err, "\"hosts\" has 33 patterns"));
	cred_line(line, sizeof(line), 1, GK_PATTERN_MAX + 1, 1);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)),
	    GK_CTL_BAD_VALUE);
	assert_non_null(strstr(err, "hosts[0] is 1025 bytes"));
	cred_line(line, sizeof(line), 1, 5, GK_CTL_CRED_NAME_MAX + 1);
	assert_int_equal(parse_str(line, &req, err, sizeof(err)),
	    GK_CTL_BAD_VALUE);
	assert_non_null(strstr(err, "at most 128 bytes"));
}

/* Placeholder and value of 8 and 4096 bytes; 4097 is refused. */
static void
test_credential_length(void **state)
{
	static char buf[3 * GK_CTL_CRED_MAX];
	char err[GK_CTL_ERRLEN];
	struct gk_ctlreq req;
	size_t n, len;

	(void)state;
	for (n = GK_CTL_CRED_MIN; n <= GK_CTL_CRED_MAX + 1;
	    n += n == GK_CTL_CRED_MIN ? GK_CTL_CRED_MAX - GK_CTL_CRED_MIN : 1) {
		len = (size_t)sprintf(buf, CRED NAME "\"placeholder\":\"");
		memset(buf + len, 'p', n);
		len += n;
		len += (size_t)sprintf(buf + len, "\",\"value\":\"");
		memset(buf + len, 'v', n);
		len += n;
		len += (size_t)sprintf(buf + len, "\"," HOSTS "}");
		if (gk_ctlreq_parse((uint8_t *)buf, len, &req, err,
		    sizeof(err)) != (n <= GK_CTL_CRED_MAX ? GK_CTL_OK :
		    GK_CTL_BAD_VALUE))
			fail_msg("length %zu: %s", n, err);
		if (n <= GK_CTL_CRED_MAX) {
			assert_int_equal(req.cred_len, n);
			assert_int_equal(strlen(req.cred_value), n);
			assert_int_equal(req.cred_value[n - 1], 'v');
		} else
			assert_non_null(strstr(err, "\"placeholder\" is 4097 "
			    "bytes; it must be 8 to 4096"));
		gk_ctlreq_clear(&req);
	}
}

static void
test_small_err(void **state)
{
	struct gk_ctlreq req;
	char err[8];

	(void)state;
	assert_int_equal(parse_str("{}", &req, err, sizeof(err)),
	    GK_CTL_BAD_OP);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(parse_str("{}", &req, NULL, 0), GK_CTL_BAD_OP);
}

/* cage.create's canonical spec: members in name order, defaults filled
 * in, reattach left out; its hash follows it. */
static void
test_spec(void **state)
{
	static const char a[] = CREATE "\"netns\":true,\"allow\":[\"b.example\","
	    "\"a.example\"],\"limits\":{\"pids\":8,\"cpus\":0.5},\"command\":"
	    "[\"make\",\"test\"],\"mounts\":[\"ro:/srv\"],\"reattach\":\"\"}";
	static const char b[] = "{\"reattach\":\"cage-x\",\"mounts\":[\"ro:/srv\"],"
	    "\"command\":[\"make\",\"test\"],\"limits\":{\"cpus\":0.5,"
	    "\"pids\":8},\"allow\":[\"b.example\",\"a.example\"],\"netns\":true,"
	    "\"op\":\"cage.create\",\"transparent\":true}";
	struct gk_ctlreq req;
	struct json_object *o;
	char err[GK_CTL_ERRLEN], ha[65], hb[65];

	(void)state;
	assert_int_equal(gk_ctlreq_parse((const uint8_t *)a, strlen(a), &req,
	    err, sizeof(err)), GK_CTL_OK);
	o = gk_ctlreq_spec(&req);
	assert_string_equal(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"allow\":[\"b.example\",\"a.example\"],\"ask\":false,"
	    "\"command\":[\"make\",\"test\"],\"events\":false,\"label\":\"\","
	    "\"learn\":false,\"limits\":{\"cpus\":0.5,\"pids\":8},\"mounts\":"
	    "[\"ro:/srv\"],\"netns\":true,\"transparent\":true}");
	json_object_put(o);
	assert_int_equal(gk_ctlreq_spec_sha256(&req, ha), 0);
	gk_ctlreq_clear(&req);
	assert_int_equal(gk_ctlreq_parse((const uint8_t *)b, strlen(b), &req,
	    err, sizeof(err)), GK_CTL_OK);
	assert_int_equal(gk_ctlreq_spec_sha256(&req, hb), 0);
	gk_ctlreq_clear(&req);
	assert_string_equal(ha, hb);
	assert_int_equal(strlen(ha), 64);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_label_boundary),
		cmocka_unit_test(test_huge_allow),
		cmocka_unit_test(test_line_bounds),
		cmocka_unit_test(test_depth_bomb),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_small_err),
		cmocka_unit_test(test_ask),
		cmocka_unit_test(test_credential),
		cmocka_unit_test(test_credential_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
