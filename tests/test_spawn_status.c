/*
 * bwrap's --json-status-fd lines (spawn_status.c): what bwrap 0.8 writes,
 * captured, and every way a line can be wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"

static const struct {
	const char		*line;
	enum spawn_status_st	 st;
	int			 pid;
	int			 code;
} cases[] = {
	/* captured from bwrap 0.8.0 (--unshare-pid, sh -c 'exit 3') */
	{ "{ \"child-pid\": 22429, \"mnt-namespace\": 4026532319, "
	    "\"pid-namespace\": 4026532320 }\n", SPAWN_STATUS_OK, 22429, -1 },
	{ "{ \"exit-code\": 3 }\n", SPAWN_STATUS_OK, 0, 3 },
	{ "{ \"exit-code\": 0 }", SPAWN_STATUS_OK, 0, 0 },
	{ "{ \"exit-code\": 255 }\r\n", SPAWN_STATUS_OK, 0, 255 },
	{ "{}", SPAWN_STATUS_OK, 0, -1 },
	{ "{ \"cgroup-namespace\": 1 }", SPAWN_STATUS_OK, 0, -1 },
	{ "{ \"child-pid\": 2 }", SPAWN_STATUS_OK, 2, -1 },
	/* out of range: never a pid gk-run could signal by mistake */
	{ "{ \"child-pid\": 1 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"child-pid\": 0 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"child-pid\": -5 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"child-pid\": 2147483648 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": 256 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": -1 }", SPAWN_STATUS_INVALID, 0, -1 },
	/* wrong types */
	{ "{ \"child-pid\": \"12\" }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": 3.5 }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": true }", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"child-pid\": 9, \"exit-code\": \"x\" }", SPAWN_STATUS_INVALID,
	    0, -1 },
	/* not one JSON object */
	{ "", SPAWN_STATUS_INVALID, 0, -1 },
	{ "\n", SPAWN_STATUS_INVALID, 0, -1 },
	{ "[1]", SPAWN_STATUS_INVALID, 0, -1 },
	{ "12", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": 3 } {", SPAWN_STATUS_INVALID, 0, -1 },
	{ "{ \"exit-code\": 3", SPAWN_STATUS_INVALID, 0, -1 },
	{ "gk-run-exec-error 2", SPAWN_STATUS_INVALID, 0, -1 },
};

static void
test_cases(void **state)
{
	struct spawn_status s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s.child_pid = 77;
		s.exit_code = 77;
		if (spawn_status_parse(cases[i].line, strlen(cases[i].line),
		    &s) != cases[i].st || s.child_pid != cases[i].pid ||
		    s.exit_code != cases[i].code)
			fail_msg("case %zu '%s': pid %d code %d", i,
			    cases[i].line, s.child_pid, s.exit_code);
	}
}

/* A NUL inside, and a line at and over the limit. */
static void
test_bounds(void **state)
{
	static char big[SPAWN_STATUS_LINE_MAX + 2];
	struct spawn_status s;
	size_t n;

	(void)state;
	assert_int_equal(spawn_status_parse("{ \"exit-code\": 3 }\0x", 20,
	    &s), SPAWN_STATUS_INVALID);
	/* {"x":"aaa...a"} of exactly SPAWN_STATUS_LINE_MAX bytes */
	memset(big, 'a', sizeof(big));
	memcpy(big, "{\"x\":\"", 6);
	n = SPAWN_STATUS_LINE_MAX;
	memcpy(big + n - 2, "\"}", 2);
	assert_int_equal(spawn_status_parse(big, n, &s), SPAWN_STATUS_OK);
	memcpy(big + n - 2, "aa", 2);
	memcpy(big + n - 1, "\"}", 2);
	assert_int_equal(spawn_status_parse(big, n + 1, &s),
	    SPAWN_STATUS_INVALID);
	assert_int_equal(s.child_pid, 0);
	assert_int_equal(s.exit_code, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
