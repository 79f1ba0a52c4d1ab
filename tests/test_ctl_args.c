/*
 * gatekeeperctl's command line: every command's argv with the fields a
 * parse fills, the request line each one makes, and a table of bad
 * inputs with the status and a piece of the message expected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/ctl/ctl_args.h"
#include "spawner/ctl/ctl_req.h"

#define MAXARGS	16

/* Parse a NULL-terminated list of words (argv[0] is added). */
static enum ctl_args_status
vparse(struct ctl_args *a, const char *env, char *err, size_t errlen,
    const char *const *words)
{
	static char *argv[MAXARGS + 2];
	int argc = 0;

	argv[argc++] = (char *)"gatekeeperctl";
	while (*words != NULL && argc < MAXARGS)
		argv[argc++] = (char *)*words++;
	argv[argc] = NULL;
	return ctl_args_parse(argc, argv, env, a, err, errlen);
}

#define WORDS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* A parse that must succeed; its request line must be `req`. */
static void
ok_case(struct ctl_args *a, const char *const *words, const char *req)
{
	char err[CTL_ERRLEN], *line;

	err[0] = '\0';
	if (vparse(a, NULL, err, sizeof(err), words) != CTL_ARGS_RUN)
		fail_msg("%s: %s", words[0], err);
	line = ctl_req_build(a, err, sizeof(err));
	assert_non_null(line);
	assert_string_equal(line, req);
	free(line);
}

static void
test_commands(void **state)
{
	struct ctl_args a;

	(void)state;
	ok_case(&a, WORDS("list"), "{\"op\":\"cage.list\"}\n");
	assert_int_equal(a.cmd, CTL_CMD_LIST);
	assert_string_equal(a.control, GK_CONTROL_PATH_DEFAULT);
	assert_false(a.json);
	assert_int_equal(a.timeout, CTL_TIMEOUT_DEFAULT);
	ctl_args_clear(&a);

	ok_case(&a, WORDS("show", "k3j9x0qa"),
	    "{\"op\":\"cage.show\",\"id\":\"k3j9x0qa\"}\n");
	assert_string_equal(a.cage, "k3j9x0qa");
	ctl_args_clear(&a);

	ok_case(&a, WORDS("denials"), "{\"op\":\"denials\"}\n");
	assert_false(a.follow);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("denials", "--follow", "--cage", "k3j9x0qa"),
	    "{\"op\":\"denials\",\"id\":\"k3j9x0qa\",\"follow\":true}\n");
	assert_true(a.follow);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("denials", "-f", "-ck3j9x0qa"),
	    "{\"op\":\"denials\",\"id\":\"k3j9x0qa\",\"follow\":true}\n");
	ctl_args_clear(&a);
	ok_case(&a, WORDS("denials", "--cage=k3j9x0qa"),
	    "{\"op\":\"denials\",\"id\":\"k3j9x0qa\"}\n");
	ctl_args_clear(&a);

	ok_case(&a, WORDS("allow", "k3j9x0qa", "*.github.com",
	    "example.com:443"), "{\"op\":\"cage.update\",\"id\":\"k3j9x0qa\","
	    "\"add\":[\"*.github.com\",\"example.com:443\"]}\n");
	assert_int_equal(a.npatterns, 2);
	assert_string_equal(a.patterns[0], "*.github.com");
	ctl_args_clear(&a);
	ok_case(&a, WORDS("revoke", "k3j9x0qa", "203.0.113.0/24"),
	    "{\"op\":\"cage.update\",\"id\":\"k3j9x0qa\","
	    "\"remove\":[\"203.0.113.0/24\"]}\n");
	ctl_args_clear(&a);

	ok_case(&a, WORDS("destroy", "k3j9x0qa"),
	    "{\"op\":\"cage.destroy\",\"id\":\"k3j9x0qa\"}\n");
	ctl_args_clear(&a);
	ok_case(&a, WORDS("stats"), "{\"op\":\"stats\"}\n");
	ctl_args_clear(&a);
	ok_case(&a, WORDS("reload"), "{\"op\":\"reload\"}\n");
	ctl_args_clear(&a);
	ok_case(&a, WORDS("pending"), "{\"op\":\"pending\"}\n");
	ctl_args_clear(&a);

	ok_case(&a, WORDS("approve", "17"), "{\"op\":\"pending\"}\n");
	assert_int_equal(a.cmd, CTL_CMD_APPROVE);
	assert_int_equal(a.qid, 17);
	assert_int_equal(a.decision, CTL_DECIDE_ONCE);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("approve", "--run", "18446744073709551615"),
	    "{\"op\":\"pending\"}\n");
	assert_true(a.qid == UINT64_MAX);
	assert_int_equal(a.decision, CTL_DECIDE_RUN);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("approve", "007", "-o"), "{\"op\":\"pending\"}\n");
	assert_int_equal(a.qid, 7);
	assert_int_equal(a.decision, CTL_DECIDE_ONCE);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("deny", "0"), "{\"op\":\"pending\"}\n");
	assert_int_equal(a.decision, CTL_DECIDE_DENY);
	assert_int_equal(a.qid, 0);
	ctl_args_clear(&a);
}

static void
test_global_options(void **state)
{
	struct ctl_args a;
	char err[CTL_ERRLEN];

	(void)state;
	ok_case(&a, WORDS("--control", "/tmp/x.sock", "--json", "--timeout",
	    "3", "list"), "{\"op\":\"cage.list\"}\n");
	assert_string_equal(a.control, "/tmp/x.sock");
	assert_true(a.json);
	assert_int_equal(a.timeout, 3);
	ctl_args_clear(&a);
	/* after the command too, and the short forms */
	ok_case(&a, WORDS("stats", "-j", "-C", "/s", "-t3600"),
	    "{\"op\":\"stats\"}\n");
	assert_string_equal(a.control, "/s");
	assert_true(a.json);
	assert_int_equal(a.timeout, 3600);
	ctl_args_clear(&a);
	ok_case(&a, WORDS("--control=/a", "--timeout=1", "pending"),
	    "{\"op\":\"pending\"}\n");
	assert_string_equal(a.control, "/a");
	assert_int_equal(a.timeout, 1);
	ctl_args_clear(&a);
	/* $GK_CONTROL, and --control over it; an empty one is not set */
	assert_int_equal(vparse(&a, "/env.sock", err, sizeof(err),
	    WORDS("list")), CTL_ARGS_RUN);
	assert_string_equal(a.control, "/env.sock");
	ctl_args_clear(&a);
	assert_int_equal(vparse(&a, "/env.sock", err, sizeof(err),
	    WORDS("list", "--control", "/opt.sock")), CTL_ARGS_RUN);
	assert_string_equal(a.control, "/opt.sock");
	ctl_args_clear(&a);
	assert_int_equal(vparse(&a, "", err, sizeof(err), WORDS("list")),
	    CTL_ARGS_RUN);
	assert_string_equal(a.control, GK_CONTROL_PATH_DEFAULT);
	ctl_args_clear(&a);
	/* "--" ends the options: a word after it is an argument */
	ok_case(&a, WORDS("allow", "--", "k3j9x0qa", "example.com"),
	    "{\"op\":\"cage.update\",\"id\":\"k3j9x0qa\","
	    "\"add\":[\"example.com\"]}\n");
	ctl_args_clear(&a);
}

static void
test_help_version(void **state)
{
	struct ctl_args a;
	char err[CTL_ERRLEN];

	(void)state;
	assert_int_equal(vparse(&a, NULL, err, sizeof(err), WORDS("--help")),
	    CTL_ARGS_HELP);
	assert_int_equal(a.cmd, CTL_CMD_NONE);
	assert_non_null(strstr(ctl_usage(a.cmd), "Exit status: 0 success"));
	assert_int_equal(vparse(&a, NULL, err, sizeof(err), WORDS("-h")),
	    CTL_ARGS_HELP);
	/* a command's own help, whatever else is wrong or missing */
	assert_int_equal(vparse(&a, NULL, err, sizeof(err),
	    WORDS("show", "--help")), CTL_ARGS_HELP);
	assert_int_equal(a.cmd, CTL_CMD_SHOW);
	assert_non_null(strstr(ctl_usage(a.cmd), "usage: gatekeeperctl show"));
	assert_int_equal(vparse(&a, NULL, err, sizeof(err),
	    WORDS("approve", "xx", "--bogus", "-h")), CTL_ARGS_HELP);
	assert_int_equal(a.cmd, CTL_CMD_APPROVE);
	assert_int_equal(vparse(&a, NULL, err, sizeof(err),
	    WORDS("--help", "denials")), CTL_ARGS_HELP);
	assert_int_equal(a.cmd, CTL_CMD_DENIALS);
	/* after "--", --help is a word */
	assert_int_equal(vparse(&a, NULL, err, sizeof(err),
	    WORDS("show", "--", "--help")), CTL_ARGS_USAGE);
	assert_int_equal(vparse(&a, NULL, err, sizeof(err), WORDS("-V")),
	    CTL_ARGS_VERSION);
	assert_int_equal(vparse(&a, NULL, err, sizeof(err),
	    WORDS("list", "--version")), CTL_ARGS_VERSION);
	/* every command has its own text, naming it */
	for (int c = CTL_CMD_LIST; c < CTL_CMD__MAX; c++) {
		char want[64];

		snprintf(want, sizeof(want), "usage: gatekeeperctl %s",
		    ctl_cmd_name(c));
		assert_non_null(strstr(ctl_usage(c), want));
		assert_non_null(strstr(ctl_usage(CTL_CMD_NONE),
		    ctl_cmd_name(c)));
	}
}

struct ecase {
	const char	*args[8];
	enum ctl_cmd	 cmd;		/* as known when it failed */
	const char	*want;		/* in the message */
};

static const struct ecase errors[] = {
	{ { NULL }, CTL_CMD_NONE, "no command given" },
	{ { "--json", NULL }, CTL_CMD_NONE, "no command given" },
	{ { "lst", NULL }, CTL_CMD_NONE, "unknown command 'lst'" },
	{ { "LIST", NULL }, CTL_CMD_NONE, "unknown command 'LIST'" },
	{ { "\033[1m", NULL }, CTL_CMD_NONE, "unknown command '?[1m'" },
	{ { "--bogus", "list", NULL }, CTL_CMD_NONE,
	    "unknown option '--bogus'" },
	{ { "list", "-x", NULL }, CTL_CMD_LIST, "unknown option '-x'" },
	{ { "list", "-jx", NULL }, CTL_CMD_LIST, "unknown option '-jx'" },
	{ { "list", "--json=1", NULL }, CTL_CMD_LIST,
	    "--json takes no value" },
	{ { "list", "extra", NULL }, CTL_CMD_LIST,
	    "list: unexpected argument 'extra'" },
	{ { "stats", "a", "b", NULL }, CTL_CMD_STATS,
	    "stats: unexpected argument 'a'" },
	{ { "--control", NULL }, CTL_CMD_NONE, "--control needs a value" },
	{ { "list", "--control", "", NULL }, CTL_CMD_LIST,
	    "--control: '' is not a usable socket path" },
	{ { "list", "-C", "/x", "-C", "/y", NULL }, CTL_CMD_LIST,
	    "--control is given twice" },
	{ { "list", "--timeout", "0", NULL }, CTL_CMD_LIST,
	    "--timeout: '0' is not a number of seconds from 1 to 3600" },
	{ { "list", "--timeout", "3601", NULL }, CTL_CMD_LIST,
	    "'3601' is not a number of seconds" },
	{ { "list", "--timeout", "1.5", NULL }, CTL_CMD_LIST,
	    "'1.5' is not" },
	{ { "list", "--timeout", "-1", NULL }, CTL_CMD_LIST, "'-1' is not" },
	{ { "list", "--timeout", "99999999999999999999999", NULL },
	    CTL_CMD_LIST, "is not a number of seconds" },
	{ { "list", "--timeout", "", NULL }, CTL_CMD_LIST, "'' is not" },
	{ { "--follow", "denials", NULL }, CTL_CMD_NONE,
	    "--follow is not an option before the command" },
	{ { "list", "--follow", NULL }, CTL_CMD_LIST,
	    "--follow is not an option of list" },
	{ { "show", NULL }, CTL_CMD_SHOW, "show: missing the cage ID" },
	{ { "show", "k3j9x0q", NULL }, CTL_CMD_SHOW,
	    "show: 'k3j9x0q' is not a cage id (8 lower-case letters and "
	    "digits, as gatekeeperctl list shows)" },
	{ { "show", "k3j9x0qab", NULL }, CTL_CMD_SHOW, "is not a cage id" },
	{ { "show", "K3J9X0QA", NULL }, CTL_CMD_SHOW, "is not a cage id" },
	{ { "show", "k3j9x0q-", NULL }, CTL_CMD_SHOW, "is not a cage id" },
	{ { "show", "k3j9x0qa", "x", NULL }, CTL_CMD_SHOW,
	    "show: unexpected argument 'x'" },
	{ { "destroy", NULL }, CTL_CMD_DESTROY,
	    "destroy: missing the cage ID" },
	{ { "denials", "k3j9x0qa", NULL }, CTL_CMD_DENIALS,
	    "denials: unexpected argument 'k3j9x0qa'" },
	{ { "denials", "--cage", NULL }, CTL_CMD_DENIALS,
	    "--cage needs a value" },
	{ { "denials", "--cage", "bad", NULL }, CTL_CMD_DENIALS,
	    "--cage: 'bad' is not a cage id" },
	{ { "allow", NULL }, CTL_CMD_ALLOW, "allow: missing the cage ID" },
	{ { "allow", "k3j9x0qa", NULL }, CTL_CMD_ALLOW,
	    "allow: missing the PATTERN (one at least)" },
	{ { "revoke", "k3j9x0qa", NULL }, CTL_CMD_REVOKE,
	    "revoke: missing the PATTERN" },
	{ { "allow", "k3j9x0qa", "a..b", NULL }, CTL_CMD_ALLOW,
	    "allow: invalid pattern 'a..b'" },
	{ { "allow", "k3j9x0qa", "ok.example", "", NULL }, CTL_CMD_ALLOW,
	    "allow: " },
	{ { "revoke", "k3j9x0qa", "*", NULL }, CTL_CMD_REVOKE,
	    "revoke: invalid pattern" },
	{ { "approve", NULL }, CTL_CMD_APPROVE,
	    "approve: missing the question's QID" },
	{ { "approve", "17x", NULL }, CTL_CMD_APPROVE,
	    "approve: '17x' is not a question id (a decimal number, as "
	    "gatekeeperctl pending shows)" },
	{ { "approve", "-1", NULL }, CTL_CMD_APPROVE, "unknown option '-1'" },
	{ { "approve", "+1", NULL }, CTL_CMD_APPROVE, "is not a question id" },
	{ { "approve", "", NULL }, CTL_CMD_APPROVE, "'' is not a question" },
	{ { "approve", "18446744073709551616", NULL }, CTL_CMD_APPROVE,
	    "is not a question id" },
	{ { "approve", "123456789012345678901", NULL }, CTL_CMD_APPROVE,
	    "is not a question id" },
	{ { "approve", "1", "2", NULL }, CTL_CMD_APPROVE,
	    "approve: unexpected argument '2'" },
	{ { "approve", "1", "--once", "--run", NULL }, CTL_CMD_APPROVE,
	    "approve: --once and --run exclude each other" },
	{ { "deny", "1", "--run", NULL }, CTL_CMD_DENY,
	    "--run is not an option of deny" },
	{ { "deny", "x", NULL }, CTL_CMD_DENY, "deny: 'x' is not a question" },
};

static void
test_errors(void **state)
{
	struct ctl_args a;
	char err[CTL_ERRLEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		err[0] = '\0';
		if (vparse(&a, NULL, err, sizeof(err), errors[i].args) !=
		    CTL_ARGS_USAGE || strstr(err, errors[i].want) == NULL ||
		    a.cmd != errors[i].cmd)
			fail_msg("case %zu (%s): got '%s' cmd %d", i,
			    errors[i].args[0] ? errors[i].args[0] : "-", err,
			    a.cmd);
		assert_null(a.patterns);
	}
	/* $GK_CONTROL over the limit */
	char big[200];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(vparse(&a, big, err, sizeof(err), WORDS("list")),
	    CTL_ARGS_USAGE);
	assert_non_null(strstr(err, "GK_CONTROL: "));
	/* a small err buffer is cut, never overrun */
	char tiny[8];
	assert_int_equal(vparse(&a, NULL, tiny, sizeof(tiny), WORDS("lst")),
	    CTL_ARGS_USAGE);
	assert_int_equal(strlen(tiny), 7);
}

static void
test_request_limit(void **state)
{
	static char pat[GK_CTL_LINE_MAX / 16][80];
	char *argv[GK_CTL_LINE_MAX / 16 + 3], err[CTL_ERRLEN], *line;
	struct ctl_args a;
	int i, argc = 0;

	(void)state;
	argv[argc++] = (char *)"gatekeeperctl";
	argv[argc++] = (char *)"allow";
	argv[argc++] = (char *)"k3j9x0qa";
	for (i = 0; i < GK_CTL_LINE_MAX / 16; i++) {
		snprintf(pat[i], sizeof(pat[i]), "host-%05d.example.org", i);
		argv[argc++] = pat[i];
	}
	assert_int_equal(ctl_args_parse(argc, argv, NULL, &a, err,
	    sizeof(err)), CTL_ARGS_RUN);
	assert_null(ctl_req_build(&a, err, sizeof(err)));
	assert_non_null(strstr(err, "give fewer patterns at a time"));
	ctl_args_clear(&a);
	/* the decide request; strings escaped */
	line = ctl_req_decide("k3j9x0qa", "17", CTL_DECIDE_RUN, err,
	    sizeof(err));
	assert_string_equal(line, "{\"op\":\"cage.decide\",\"id\":\"k3j9x0qa\","
	    "\"ask\":\"17\",\"decision\":\"run\",\"by\":\"operator\"}\n");
	free(line);
	line = ctl_req_decide("a\"b", "1", CTL_DECIDE_DENY, err, sizeof(err));
	assert_non_null(strstr(line, "\"id\":\"a\\\"b\""));
	assert_non_null(strstr(line, "\"decision\":\"deny\""));
	free(line);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_global_options),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_request_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
