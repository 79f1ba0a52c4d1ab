/*
 * Tests for gk_rlimits: sizes with binary units (exact fractions, bounds,
 * bad forms with their messages), CPU counts in thousandths, and the
 * text forms printed back (which parse to the same value).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "gatekeeper/policy/gk_rlimits.h"

static uint64_t
size_ok(const char *s)
{
	char err[256] = "";
	uint64_t v = 0;

	if (gk_size_parse(s, strlen(s), &v, err, sizeof(err)) != 0)
		fail_msg("\"%s\": %s", s, err);
	return v;
}

static void
size_bad(const char *s, const char *msg)
{
	char err[256] = "";
	uint64_t v = 7;

	assert_int_equal(gk_size_parse(s, strlen(s), &v, err, sizeof(err)),
	    -1);
	assert_int_equal(v, 7);
	if (strstr(err, msg) == NULL)
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", s, err, msg);
}

static void
test_sizes(void **state)
{
	(void)state;
	assert_int_equal(size_ok("256M"), 256ULL << 20);
	assert_int_equal(size_ok("256m"), 256ULL << 20);
	assert_int_equal(size_ok("256MiB"), 256ULL << 20);
	assert_int_equal(size_ok("256mb"), 256ULL << 20);
	assert_int_equal(size_ok("1.5G"), 3ULL << 29);
	assert_int_equal(size_ok("1T"), 1ULL << 40);
	assert_int_equal(size_ok("4096K"), 4ULL << 20);
	assert_int_equal(size_ok("67108864"), 64ULL << 20);
	assert_int_equal(size_ok("1024T"), 1ULL << 50);
	size_bad("", "bad size");
	size_bad("M", "bad size");
	size_bad("12X", "bad size");
	size_bad("12 M", "bad size");
	size_bad("12Mx", "bad size");
	size_bad("1.M", "bad size");
	size_bad(".5G", "bad size");
	size_bad("-1M", "bad size");
	size_bad("1.5", "bad size");		/* a fraction of a byte */
	size_bad("1.0001G", "bad size");	/* four decimals */
	size_bad("4.001M", "not a whole number of bytes");
	size_bad("3M", "out of range");
	size_bad("1025T", "out of range");
	size_bad("99999999999999999999", "bad size");
	size_bad("9999999999999999T", "out of range");
	size_bad("\001M\n", "bad size \"?M?\"");	/* shown printable */
}

static void
test_size_nul(void **state)
{
	char err[256];
	uint64_t v;

	(void)state;
	/* the length counts: an embedded NUL is a bad unit */
	assert_int_equal(gk_size_parse("8M\0", 3, &v, err, sizeof(err)), -1);
	assert_int_equal(gk_size_parse("8\0", 2, &v, err, sizeof(err)), -1);
	assert_int_equal(gk_size_parse("8MB", 2, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 8ULL << 20);
}

static void
test_cpus(void **state)
{
	char err[256];
	uint32_t m;

	(void)state;
	assert_int_equal(gk_cpus_parse("2", 1, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 2000);
	assert_int_equal(gk_cpus_parse("1.5", 3, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 1500);
	assert_int_equal(gk_cpus_parse("0.01", 4, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 10);
	assert_int_equal(gk_cpus_parse("0.125", 5, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 125);
	assert_int_equal(gk_cpus_parse("0.009", 5, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(gk_cpus_parse("1025", 4, &m, err, sizeof(err)), -1);
	assert_int_equal(gk_cpus_parse("1.0005", 6, &m, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "bad CPU count"));
	assert_int_equal(gk_cpus_parse("2x", 2, &m, err, sizeof(err)), -1);
	assert_int_equal(gk_cpus_parse("", 0, &m, err, sizeof(err)), -1);
}

static void
test_format(void **state)
{
	static const struct {
		uint64_t	 v;
		const char	*s;
	} sz[] = {
		{ 256ULL << 20, "256M" }, { 3ULL << 29, "1.5G" },
		{ 5ULL << 28, "1.25G" }, { 1ULL << 40, "1T" },
		{ 4ULL << 20, "4M" }, { (4ULL << 20) + 1, "4194305" },
		{ 1000, "1000" }, { 1536, "1.5K" },
	};
	char buf[GK_RLIM_TEXT];
	uint64_t back;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		gk_size_format(sz[i].v, buf, sizeof(buf));
		assert_string_equal(buf, sz[i].s);
		if (sz[i].v >= GK_RLIM_MEMORY_MIN) {
			assert_int_equal(gk_size_parse(buf, strlen(buf), &back,
			    NULL, 0), 0);
			assert_int_equal(back, sz[i].v);
		}
	}
	gk_cpus_format(1500, buf, sizeof(buf));
	assert_string_equal(buf, "1.5");
	gk_cpus_format(2000, buf, sizeof(buf));
	assert_string_equal(buf, "2");
	gk_cpus_format(250, buf, sizeof(buf));
	assert_string_equal(buf, "0.25");
	gk_cpus_format(125, buf, sizeof(buf));
	assert_string_equal(buf, "0.125");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_size_nul),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
