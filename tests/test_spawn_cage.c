/*
 * The control protocol as gk-run speaks it: the cage label, the
 * cage.create request line and the reply parser, with every value that
 * reaches the sandbox (resolv.conf, proxy variables) checked strictly.
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

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

/* The label and whether it ends in the command's hash, " [3f2a9c]". */
static void
check_label(size_t i, const char *label, const char *want, bool hashed)
{
	size_t j, n = strlen(label), wn = strlen(want);

	assert_true(n <= SPAWN_LABEL_MAX);
	for (j = 0; j < n; j++)
		assert_true(label[j] >= 0x20 && label[j] < 0x7f);
	if (!hashed) {
		if (strcmp(label, want) != 0)
			fail_msg("case %zu: '%s', expected '%s'", i, label,
			    want);
		return;
	}
	if (n != wn + 9 || strncmp(label, want, wn) != 0 ||
	    label[wn] != ' ' || label[wn + 1] != '[' || label[n - 1] != ']' ||
	    strspn(label + wn + 2, "0123456789abcdef") != 6)
		fail_msg("case %zu: '%s', expected '%s [xxxxxx]'", i, label,
		    want);
}

static void
test_label(void **state)
{
	static const struct {
		const char	*cmd[6];
		const char	*want;	/* without the hash */
		bool		 hashed;
	} cases[] = {
		{ { "git", "clone", "https://github.com/acme/x.git" },
		    "gk-run: git clone ... github.com", true },
		{ { "/usr/bin/make", "-j4", "test" }, "gk-run: make -j4 test",
		    false },
		{ { "curl", "-H", "Authorization: Bearer s3cr3t", "x" },
		    "gk-run: curl -H ...", true },
		{ { "env", "TOKEN=abc", "sh" }, "gk-run: env ...", true },
		/* the URL's host, never its credentials */
		{ { "pip", "install", "--index-url",
		    "https://user:pw@pypi.example/simple" },
		    "gk-run: pip install --index-url ... pypi.example", true },
		{ { "curl", "http://u@[2001:db8::1]:8080/x" },
		    "gk-run: curl ... [2001:db8::1]", true },
		{ { "curl", "http://a@b@evil.example:1/" },
		    "gk-run: curl ... evil.example", true },
		{ { "curl", "https://a%40b.example/" }, "gk-run: curl ...",
		    true },
		{ { "curl", "https://", "x" }, "gk-run: curl ...", true },
		{ { "a\tb\nc", "x" }, "gk-run: a?b?c x", false },
		{ { "./build.sh" }, "gk-run: build.sh", false },
		{ { "dir/" }, "gk-run: dir/", false },
		{ { "" }, "gk-run: ", false },
		{ { "x", "" }, "gk-run: x ...", true },
		{ { "python3", "-c", "print(1)" }, "gk-run: python3 -c ...",
		    true },
		{ { "0123456789012345678901234567890123456789", "aaaaaaaaaa",
		    "bbbbbbbbbb" },
		    "gk-run: 0123456789012345678901234567890123456789 ...",
		    true },
		{ { "012345678901234567890123456789012345678901234567890" },
		    "gk-run: 0123456789012345678901234567890123456789012 ...",
		    true },
		/* a long host that does not fit is left out */
		{ { "0123456789012345678901234567890123456789", "-v",
		    "https://a-very-long-host-name.example.org/" },
		    "gk-run: 0123456789012345678901234567890123456789 -v ...",
		    true },
	};
	char label[SPAWN_LABEL_MAX + 1];
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (n = 0; n < 6 && cases[i].cmd[n] != NULL; n++)
			;
		spawn_cage_label((char *const *)cases[i].cmd, n, label);
		check_label(i, label, cases[i].want, cases[i].hashed);
	}
}

/*
 * Four curl runs the same up to the URL (issue 31): four labels, so
 * four series in gatekeeper_label_denied_total; the same command again,
 * the same label (no new series per run).
 */
static void
test_label_apart(void **state)
{
	static const char *const urls[] = {
		"https://a.example/", "https://b.example/",
		"https://a.example/x", "https://a.example/y",
	};
	char labels[4][SPAWN_LABEL_MAX + 1], again[SPAWN_LABEL_MAX + 1];
	const char *cmd[7] = { "curl", "-sS", "-o", "/dev/null", "-w",
	    "%{http_code}", NULL };
	size_t i, j;

	(void)state;
	for (i = 0; i < 4; i++) {
		cmd[6] = urls[i];
		spawn_cage_label((char *const *)cmd, 7, labels[i]);
		assert_true(strncmp(labels[i], "gk-run: curl -sS -o /dev/null "
		    "-w ... ", 37) == 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(labels[i], labels[j]);
		spawn_cage_label((char *const *)cmd, 7, again);
		assert_string_equal(labels[i], again);
	}
	assert_non_null(strstr(labels[1], " b.example ["));
}

static void
test_request(void **state)
{
	struct spawn_strv allow = { 0 }, ups = { 0 };
	struct gk_rlimits none = { 0, 0, 0 }, lim = { 256ULL << 20, 64, 1500 };
	char err[SPAWN_ERRLEN], *line;
	size_t i;

	(void)state;
	spawn_strv_push(&allow, "*.github.com");
	spawn_strv_push(&allow, "[2001:db8::/32]:443");
	spawn_strv_push(&allow, "192.0.2.0/24");
	line = spawn_cage_request("gk-run: sh -c \"echo /\"", true, true,
	    false, 0, &none, false, NULL, &allow, NULL, NULL, err,
	    sizeof(err));
	assert_non_null(line);
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"gk-run: sh -c \\\"echo /\\\"\",\"transparent\":true,"
	    "\"events\":true,\"allow\":"
	    "[\"*.github.com\",\"[2001:db8::/32]:443\",\"192.0.2.0/24\"]}\n");
	free(line);
	spawn_strv_clear(&allow);
	/* an empty allowlist is an empty array */
	line = spawn_cage_request("l", false, false, false, 0, &none, false,
	    NULL, &allow, NULL, NULL, err, sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"l\",\"transparent\":false,\"allow\":[]}\n");
	free(line);
	/* --ask: events too (the questions come as events), the timeout */
	line = spawn_cage_request("l", false, false, false, 45, &none, false,
	    NULL, &allow, NULL, NULL, err, sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"l\",\"transparent\":false,\"events\":true,"
	    "\"ask\":true,\"ask_timeout\":45,\"allow\":[]}\n");
	free(line);
	/* limits, as numbers gatekeeperd checks again */
	line = spawn_cage_request("l", false, false, false, 0, &lim, true,
	    NULL, &allow, NULL, NULL, err, sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"l\",\"transparent\":false,\"limits\":{\"memory\":"
	    "268435456,\"pids\":64,\"cpus\":1.5,\"best_effort\":true},"
	    "\"allow\":[]}\n");
	free(line);
	/* upload budgets, in their canonical texts */
	spawn_strv_push(&ups, "10M");
	spawn_strv_push(&ups, "1M@*.example.com");
	line = spawn_cage_request("l", false, false, false, 0, &none, false,
	    NULL, &allow, &ups, NULL, err, sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"l\",\"transparent\":false,\"max_upload\":"
	    "[\"10M\",\"1M@*.example.com\"],\"allow\":[]}\n");
	free(line);
	spawn_strv_clear(&ups);
	/* the same sandbox again, after a restart */
	line = spawn_cage_request("l", false, false, false, 0, &none, false,
	    "cage-ab-1-2-3", &allow, NULL, NULL, err, sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"label\":\"l\",\"transparent\":false,\"reattach\":"
	    "\"cage-ab-1-2-3\",\"allow\":[]}\n");
	free(line);
	/* over gatekeeperd's line limit */
	for (i = 0; i < 300; i++)
		spawn_strv_pushf(&allow, "%0250zu.example", i);
	assert_null(spawn_cage_request("l", true, true, true, 0, &none,
	    false, NULL, &allow, NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "the allowlist is too long for one "
	    "request"));
	spawn_strv_clear(&allow);
}

#define OKCAGE(fields)	"{\"ok\":true,\"cage\":{" fields "}}"
#define MIN_FIELDS						\
	"\"id\":\"abcd1234\",\"gateway\":\"10.143.0.1\","		\
	"\"socks\":\"10.143.0.1:1080\",\"http\":\"10.143.0.1:3128\""

struct rcase {
	const char	*line;
	int		 rc;
	const char	*want;		/* message, or the socks endpoint */
};

static const struct rcase rcases[] = {
	{ OKCAGE("\"id\":\"abcd1234\",\"label\":\"gk-run: x\",\"source\":"
	    "\"10.143.0.2\",\"uid\":1000,\"allow\":[\"*.github.com\"],"
	    "\"token\":\"tok_1.2-3~\",\"gateway\":\"10.143.0.1\",\"dns\":"
	    "\"10.143.0.1:53\",\"socks\":\"10.143.0.1:1080\",\"http\":"
	    "\"10.143.0.1:3128\",\"future\":{\"x\":[1,2]}") "\r\n", 0,
	    "10.143.0.1:1080" },
	{ OKCAGE(MIN_FIELDS), 0, "10.143.0.1:1080" },
	{ OKCAGE(MIN_FIELDS ",\"dns\":null,\"token\":null"), 0,
	    "10.143.0.1:1080" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"fd00::1\",\"socks\":"
	    "\"[fd00::1]:1080\",\"http\":\"[fd00::1]:3128\""), 0,
	    "[fd00::1]:1080" },
	{ "{\"ok\":false,\"error\":\"pattern evil.example is not allowed "
	    "for uid 1000\"}", -1, "gatekeeperd refused the cage: pattern "
	    "evil.example is not allowed for uid 1000" },
	{ "{\"ok\":false,\"error\":\"bad\\nthing\\u001b[31m\"}", -1,
	    "gatekeeperd refused the cage: bad?thing?[31m" },
	{ "{\"ok\":false}", -1, "gatekeeperd refused the cage and gave no "
	    "reason; see its log (journalctl -u gatekeeperd)" },
	{ "{\"ok\":false,\"error\":\"\"}", -1, "gave no reason" },
	{ "", -1, "gatekeeperd sent a reply gk-run does not understand (an "
	    "empty line); are gk-run and gatekeeperd from the same release?" },
	{ "hello", -1, "does not understand (not JSON)" },
	{ "{\"ok\":true} x", -1, "(not JSON)" },
	{ "[1]", -1, "(no \"ok\")" },
	{ "{\"ok\":1}", -1, "(no \"ok\")" },
	{ "{\"ok\":true}", -1, "(no \"cage\" object)" },
	{ OKCAGE(MIN_FIELDS ",\"cgroup\":{\"kill\":\"/sys/fs/cgroup/x/"
	    "cgroup.kill\",\"limits\":{\"memory\":67108864}}"), 0,
	    "10.143.0.1:1080" },
	{ OKCAGE(MIN_FIELDS ",\"cgroup\":{\"kill\":\"x\"}"), -1,
	    "a bad \"cgroup\".\"kill\"" },
	{ OKCAGE(MIN_FIELDS ",\"cgroup\":[]"), -1, "a bad \"cgroup\"" },
	{ "{\"ok\":true,\"cage\":[]}", -1, "(no \"cage\" object)" },
	{ OKCAGE("\"id\":\"abcd1234\",\"gateway\":\"10.143.0.1\","
	    "\"socks\":\"10.143.0.1:1080\""), -1,
	    "(\"cage\" has no \"http\")" },
	{ OKCAGE("\"id\":\"a b\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"10.143.0.1:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "(\"id\" is not valid: a b)" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\\nnameserver 1.1.1.1\","
	    "\"socks\":\"10.143.0.1:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "(\"gateway\" is not valid: 10.143.0.1?nameserver 1.1.1.1)" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"gw.example\",\"socks\":"
	    "\"10.143.0.1:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"gateway\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":1,\"socks\":"
	    "\"10.143.0.1:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"gateway\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"10.143.0.1:0\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"socks\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"10.143.0.1:65536\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"socks\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"proxy:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"socks\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"fd00::1:1080\",\"http\":\"10.143.0.1:3128\""), -1,
	    "\"socks\" is not valid" },
	{ OKCAGE("\"id\":\"x\",\"gateway\":\"10.143.0.1\",\"socks\":"
	    "\"10.143.0.1:1080\",\"http\":\"10.143.0.1:31x\""), -1,
	    "\"http\" is not valid" },
	{ OKCAGE(MIN_FIELDS ",\"dns\":\"10.143.0.1\""), -1,
	    "\"dns\" is not valid" },
	{ OKCAGE(MIN_FIELDS ",\"token\":\"a@b\""), -1,
	    "\"token\" is not valid" },
	{ OKCAGE(MIN_FIELDS ",\"token\":\"\""), -1, "\"token\" is not valid" },
};

static void
test_reply(void **state)
{
	struct spawn_cage c;
	char err[SPAWN_ERRLEN];
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		err[0] = '\0';
		rc = spawn_cage_reply(rcases[i].line, strlen(rcases[i].line),
		    &c, err, sizeof(err));
		if (rc != rcases[i].rc || (rc == 0 && strcmp(c.socks,
		    rcases[i].want) != 0) || (rc == -1 && strstr(err,
		    rcases[i].want) == NULL))
			fail_msg("case %zu: rc %d, socks '%s', message '%s', "
			    "expected '%s'", i, rc, c.socks, err,
			    rcases[i].want);
		assert_null(strchr(err, '\n'));
	}
	/* the full reply, field by field */
	assert_int_equal(spawn_cage_reply(rcases[0].line,
	    strlen(rcases[0].line), &c, err, sizeof(err)), 0);
	assert_string_equal(c.id, "abcd1234");
	assert_string_equal(c.token, "tok_1.2-3~");
	assert_string_equal(c.gateway, "10.143.0.1");
	assert_string_equal(c.dns, "10.143.0.1:53");
	assert_string_equal(c.http, "10.143.0.1:3128");
	assert_int_equal(c.transparent, -1);	/* not said */
	assert_int_equal(spawn_cage_reply(OKCAGE(MIN_FIELDS
	    ",\"transparent\":false"), strlen(OKCAGE(MIN_FIELDS
	    ",\"transparent\":false")), &c, err, sizeof(err)), 0);
	assert_int_equal(c.transparent, 0);
	assert_int_equal(spawn_cage_reply(OKCAGE(MIN_FIELDS
	    ",\"transparent\":true"), strlen(OKCAGE(MIN_FIELDS
	    ",\"transparent\":true")), &c, err, sizeof(err)), 0);
	assert_int_equal(c.transparent, 1);
	assert_false(c.ask);
	/* an asking cage: the echo of "ask" and its timeout */
	assert_int_equal(spawn_cage_reply(OKCAGE(MIN_FIELDS
	    ",\"ask\":true,\"ask_timeout\":90"), strlen(OKCAGE(MIN_FIELDS
	    ",\"ask\":true,\"ask_timeout\":90")), &c, err, sizeof(err)), 0);
	assert_true(c.ask);
	assert_int_equal(c.ask_timeout, 90);
	assert_int_equal(spawn_cage_reply(OKCAGE(MIN_FIELDS
	    ",\"ask\":\"yes\",\"ask_timeout\":90"), strlen(OKCAGE(MIN_FIELDS
	    ",\"ask\":\"yes\",\"ask_timeout\":90")), &c, err, sizeof(err)),
	    0);
	assert_false(c.ask);
	assert_int_equal(c.ask_timeout, 0);
	/* a NUL inside the line is not JSON text */
	assert_int_equal(spawn_cage_reply("{\"ok\":true}\0x", 13, &c, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not a line of text"));
}

static void
test_placeholder(void **state)
{
	struct spawn_cage c;

	(void)state;
	spawn_cage_placeholder(&c, SPAWN_PLATFORM_LINUX);
	assert_string_equal(c.gateway, "10.143.0.1");
	assert_string_equal(c.dns, "10.143.0.1:53");
	assert_string_equal(c.socks, "10.143.0.1:1080");
	assert_string_equal(c.http, "10.143.0.1:3128");
	spawn_cage_placeholder(&c, SPAWN_PLATFORM_MACOS);
	assert_string_equal(c.socks, "127.0.0.1:1080");
	assert_string_equal(c.token, "TOKEN");
}

/* What runs in the cage, as gatekeeperd's audit gets it: the command
 * with secrets taken out, printable, bounded; the mounts named. */
static void
test_life(void **state)
{
	char *cmd[80], val[] = "ghp_0123456789abcdef";
	struct spawn_cred cred = { .name = "GITHUB_TOKEN", .value = val,
	    .len = sizeof(val) - 1 };
	struct spawn_optpath paths[] = { { SPAWN_PATH_RW, "/home/u/src" },
	    { SPAWN_PATH_HIDE, "/home/u/.ssh" } };
	struct json_object *o, *line;
	char *req, num[80][8];
	int i;

	(void)state;
	cmd[0] = "curl";
	cmd[1] = "-H";
	cmd[2] = "Authorization: token ghp_0123456789abcdef";
	cmd[3] = "https://user:pw@example.com/x?a@b";
	cmd[4] = "a\tb";
	o = spawn_life_describe(cmd, 5, paths, 2, &cred, 1);
	assert_string_equal(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"command\":[\"curl\",\"-H\",\"<credential GITHUB_TOKEN>\","
	    "\"https://user:***@example.com/x?a@b\",\"a?b\"],\"mounts\":"
	    "[\"rw:/home/u/src\",\"hide:/home/u/.ssh\"]}");
	/* the request carries it */
	req = spawn_cage_request("l", false, false, false, 0,
	    &(struct gk_rlimits){ 0, 0, 0 }, false, NULL,
	    &(struct spawn_strv){ 0 }, NULL, o, NULL, 0);
	assert_non_null(strstr(req, "\"command\":[\"curl\""));
	free(req);
	json_object_put(o);
	/* bounded: 63 arguments and a count of the rest */
	for (i = 0; i < 80; i++) {
		snprintf(num[i], sizeof(num[i]), "%d", i);
		cmd[i] = num[i];
	}
	o = spawn_life_describe(cmd, 80, NULL, 0, NULL, 0);
	line = json_object_object_get(o, "command");
	assert_int_equal(json_object_array_length(line), 64);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
	    line, 63)), "... (17 more)");
	assert_false(json_object_object_get_ex(o, "mounts", NULL));
	json_object_put(o);
}

/* How the command ended, as cage.destroy says it. */
static void
test_life_end(void **state)
{
	static const struct {
		int		 status;
		bool		 walltime, oom;
		const char	*want;
	} cases[] = {
		{ 0, false, false, ",\"exit\":0}" },
		{ 7, false, false, ",\"exit\":7}" },
		{ 137, false, false, ",\"signal\":\"SIGKILL\"}" },
		{ 137, false, true, ",\"signal\":\"SIGKILL\",\"reason\":"
		    "\"memory\"}" },
		{ 143, false, true, ",\"signal\":\"SIGTERM\"}" },
		{ 143, true, false, ",\"signal\":\"SIGTERM\",\"reason\":"
		    "\"walltime\"}" },
		{ 125, true, false, ",\"exit\":125,\"reason\":\"walltime\"}" },
	};
	char want[256], *req;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		req = spawn_life_end_request("k3j9x0qa", cases[i].status,
		    cases[i].walltime, cases[i].oom);
		snprintf(want, sizeof(want), "{\"op\":\"cage.destroy\","
		    "\"id\":\"k3j9x0qa\"%s\n", cases[i].want);
		assert_string_equal(req, want);
		free(req);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_label_apart),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_placeholder),
		cmocka_unit_test(test_life),
		cmocka_unit_test(test_life_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
