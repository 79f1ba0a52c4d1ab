/*
 * Fuzz gk_size_parse and gk_cpus_parse. Invariants: a size accepted is
 * within bounds and prints to a form that parses back to it; a CPU count
 * accepted is within bounds and its printed form parses back to it; a
 * refusal leaves the output alone and says why, in printable ASCII.
 */
#include <string.h>

#include "gatekeeper/policy/gk_rlimits.h"
#include "tests/fuzz/fuzz_check.h"

/* A message is printable ASCII (it quotes the input). */
static void
check_message(const char *m)
{
	for (; *m != '\0'; m++)
		CHECK(*m >= 0x20 && *m < 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], buf[GK_RLIM_TEXT];
	uint64_t v = 1, back;
	uint32_t m = 1, mback;

	err[0] = '\0';
	if (gk_size_parse((const char *)data, size, &v, err,
	    sizeof(err)) == 0) {
		CHECK(v >= GK_RLIM_MEMORY_MIN && v <= GK_RLIM_MEMORY_MAX);
		gk_size_format(v, buf, sizeof(buf));
		CHECK(gk_size_parse(buf, strlen(buf), &back, NULL, 0) == 0);
		CHECK(back == v);
	} else {
		CHECK(v == 1 && err[0] != '\0');
		check_message(err);
	}
	err[0] = '\0';
	if (gk_cpus_parse((const char *)data, size, &m, err,
	    sizeof(err)) == 0) {
		CHECK(m >= GK_RLIM_CPUS_MIN && m <= GK_RLIM_CPUS_MAX);
		gk_cpus_format(m, buf, sizeof(buf));
		CHECK(gk_cpus_parse(buf, strlen(buf), &mback, NULL, 0) == 0);
		CHECK(mback == m);
	} else {
		CHECK(m == 1 && err[0] != '\0');
		check_message(err);
	}
	return 0;
}
