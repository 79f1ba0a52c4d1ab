/*
 * Fuzz gk-run's configuration parser (spawn_conf.c). Invariants: each
 * directive it reports is one of the five, with a non-empty value inside
 * the buffer that has no newline and no blank at either end, and a
 * path's value is absolute or starts with "~/"; an error names a line no
 * later than the buffer has; parsing twice gives the same result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn_conf.h"
#include "tests/fuzz/fuzz_check.h"

struct span {
	const char	*b;
	size_t		 len;
	unsigned	 n;
	uint64_t	 sum;
};

static bool
each(void *arg, const char *opt, const char *val, size_t vlen,
    unsigned line, char *err, size_t errlen)
{
	struct span *s = arg;
	bool path = strcmp(opt, "hide") == 0 || strcmp(opt, "ro") == 0 ||
	    strcmp(opt, "rw") == 0;

	(void)err;
	(void)errlen;
	CHECK(path || strcmp(opt, "preset") == 0 ||
	    strcmp(opt, "pass-env") == 0);
	CHECK(vlen > 0 && val >= s->b && val + vlen <= s->b + s->len);
	CHECK(memchr(val, '\n', vlen) == NULL);
	CHECK(val[0] != ' ' && val[0] != '\t' && val[vlen - 1] != ' ' &&
	    val[vlen - 1] != '\t' && val[vlen - 1] != '\r');
	CHECK(!path || val[0] == '/' || (vlen >= 2 && val[0] == '~' &&
	    val[1] == '/'));
	CHECK(line > s->n);	/* one directive a line, in order */
	s->n = line;
	s->sum += vlen * line;
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct span a = { (const char *)data, size, 0, 0 };
	struct span b = { (const char *)data, size, 0, 0 };
	char err[256], err2[256];
	unsigned line;
	int r1, r2;

	r1 = spawn_conf_parse((const char *)data, size, each, &a, err,
	    sizeof(err));
	r2 = spawn_conf_parse((const char *)data, size, each, &b, err2,
	    sizeof(err2));
	CHECK(r1 == r2 && a.sum == b.sum && a.n == b.n);
	if (r1 == -1) {
		CHECK(strcmp(err, err2) == 0);
		CHECK(sscanf(err, "%u:", &line) == 1);
		CHECK(line <= size + 1);
	}
	return 0;
}
