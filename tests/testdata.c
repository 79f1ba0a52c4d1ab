/*
 * Captured test data for the cmocka tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tests/testdata.h"

size_t
test_data_load(const char *dir, const char *name, uint8_t *buf, size_t cap)
{
	const char *src = getenv("GK_SRCDIR");
	char path[1024];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/%s/%s",
	    src != NULL ? src : ".", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	assert_true(n > 0 && n < cap);
	return n;
}

size_t
test_tls_load(const char *name, uint8_t *buf, size_t cap)
{
	char file[256];
	size_t n;

	snprintf(file, sizeof(file), "%s.bin", name);
	n = test_data_load("tls", file, buf, cap);
	assert_true(n > 5);		/* SNI_REC_HDR */
	return n;
}
