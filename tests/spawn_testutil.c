/*
 * The spawner filesystem tests' home directory (spawn_testutil.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/spawn_testutil.h"

void
spawn_test_home(const char *prefix, char *dir, size_t len)
{
	char tmpl[256], *real;

	snprintf(tmpl, sizeof(tmpl), "/var/tmp/%s.XXXXXX", prefix);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(real = realpath(tmpl, NULL));
	assert_true(strlen(real) < len);
	snprintf(dir, len, "%s", real);
	free(real);
	setenv("HOME", dir, 1);
	unsetenv("GK_RUN_CACHE");
	unsetenv("XDG_RUNTIME_DIR");
}

void
spawn_test_home_remove(const char *dir)
{
	char cmd[600];

	assert_true(strncmp(dir, "/var/tmp/", 9) == 0 &&
	    strchr(dir, '\'') == NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}
