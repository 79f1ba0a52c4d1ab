/*
 * test_spawn_conf: gk-run's configuration files (spawn_conf.c): the
 * directives, comments and blanks, and each refusal with its line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn_conf.h"

struct seen {
	char	 text[1024];	/* "opt=val;" for each */
	int	 stop_at;	/* refuse this line (0: none) */
};

static bool
record(void *arg, const char *opt, const char *val, size_t vlen,
    unsigned line, char *err, size_t errlen)
{
	struct seen *s = arg;
	size_t used = strlen(s->text);

	if (s->stop_at == (int)line) {
		snprintf(err, errlen, "%u: refused by the caller", line);
		return false;
	}
	snprintf(s->text + used, sizeof(s->text) - used, "%s=%.*s;", opt,
	    (int)vlen, val);
	return true;
}

static int
parse(const char *text, struct seen *s, char *err, size_t errlen)
{
	return spawn_conf_parse(text, strlen(text), record, s, err, errlen);
}

static void
test_directives(void **state)
{
	struct seen s = { "", 0 };
	char err[256] = "";

	(void)state;
	assert_int_equal(parse("# gk-run defaults\n\n  hide ~/.config/vpn  \n"
	    "ro\t/opt/tools\r\nrw ~/src/shared\npreset npm\n"
	    "pass-env NPM_TOKEN\n   # indented comment\nhide /a b c", &s, err,
	    sizeof(err)), 0);
	assert_string_equal(s.text, "hide=~/.config/vpn;ro=/opt/tools;"
	    "rw=~/src/shared;preset=npm;pass-env=NPM_TOKEN;hide=/a b c;");
	memset(&s, 0, sizeof(s));
	assert_int_equal(parse("", &s, err, sizeof(err)), 0);
	assert_string_equal(s.text, "");
}

static void
test_refused(void **state)
{
	struct seen s = { "", 0 };
	char err[256], big[SPAWN_CONF_LINE_MAX + 20];

	(void)state;
	assert_int_equal(parse("ro /x\nhdie ~/x\n", &s, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "2: unknown directive 'hdie' (hide, ro, rw, "
	    "preset, pass-env)");
	assert_int_equal(parse("preset\n", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "1: preset needs a value");
	assert_int_equal(parse("\n\nrw src/x\n", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "3: rw: a path is absolute or starts with ~/");
	assert_int_equal(parse("hide ~user/x\n", &s, err, sizeof(err)), -1);
	assert_int_equal(spawn_conf_parse("ro /x\0", 6, record, &s, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL"));
	memset(big, 'x', sizeof(big));
	memcpy(big, "ro /", 4);
	assert_int_equal(spawn_conf_parse(big, sizeof(big), record, &s, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "1: a line over 4096 bytes");
	/* the caller's refusal stops the parse, its words kept */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(parse("ro /a\nro /b\nro /c\n", &s, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "2: refused by the caller");
	assert_string_equal(s.text, "ro=/a;");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directives),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
