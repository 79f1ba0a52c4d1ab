/*
 * Fuzz the --allow-file parser. Invariants: every pattern it returns
 * re-parses with gk_pattern_parse() and holds no white space but a
 * rule's one space after its methods, no '#' or NUL; an error is one
 * printable line "fuzz.allow:LINE: ..." whose line number is within the
 * input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spawn_strv sv = { 0 };
	struct gk_pattern p;
	char err[SPAWN_ERRLEN];
	size_t i, lines = 1, line;
	const char *sp;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	err[0] = '\0';
	if (spawn_allowfile_parse(data, size, "fuzz.allow", &sv, err,
	    sizeof(err)) == 0) {
		for (i = 0; i < sv.n; i++) {
			CHECK(strpbrk(sv.v[i], "\t\r\v\f#") == NULL);
			CHECK(gk_pattern_parse((const uint8_t *)sv.v[i],
			    strlen(sv.v[i]), &p) == GK_PAT_OK);
			sp = strchr(sv.v[i], ' ');
			CHECK(sp == NULL || (p.methods != 0 &&
			    strchr(sp + 1, ' ') == NULL));
		}
		CHECK(sv.n <= GK_ALLOWLIST_MAX);
	} else {
		CHECK(strncmp(err, "fuzz.allow:", 11) == 0);
		line = strtoul(err + 11, NULL, 10);
		CHECK(size > SPAWN_ALLOWFILE_MAX || (line >= 1 &&
		    line <= lines));
		for (i = 0; err[i] != '\0'; i++)
			CHECK(err[i] >= 0x20 && err[i] < 0x7f);
	}
	spawn_strv_clear(&sv);
	return 0;
}
