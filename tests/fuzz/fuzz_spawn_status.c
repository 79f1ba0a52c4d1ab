/*
 * Fuzz gk-run's parser for bwrap's --json-status-fd lines. Invariants: a
 * line is OK or INVALID; an OK line's child pid is 0 (absent) or above 1
 * (never this process's group or init), its exit code -1 (absent) or
 * 0..255; an INVALID line reports neither; a newline at the end changes
 * nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spawn_status s, t;
	enum spawn_status_st st, st2;
	char *nl;

	st = spawn_status_parse((const char *)data, size, &s);
	CHECK(st == SPAWN_STATUS_OK || st == SPAWN_STATUS_INVALID);
	if (st == SPAWN_STATUS_OK) {
		CHECK(s.child_pid == 0 || s.child_pid > 1);
		CHECK(s.exit_code >= -1 && s.exit_code <= 255);
	} else
		CHECK(s.child_pid == 0 && s.exit_code == -1);
	if (size > 0 && size < SPAWN_STATUS_LINE_MAX && data[size - 1] != '\n' &&
	    data[size - 1] != '\r' && (nl = malloc(size + 1)) != NULL) {
		memcpy(nl, data, size);
		nl[size] = '\n';
		st2 = spawn_status_parse(nl, size + 1, &t);
		CHECK(st2 == st && t.child_pid == s.child_pid &&
		    t.exit_code == s.exit_code);
		free(nl);
	}
	return 0;
}
