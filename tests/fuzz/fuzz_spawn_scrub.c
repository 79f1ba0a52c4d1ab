/*
 * Fuzz the settings files' scrubbers (spawn_scrub.c). The first byte
 * picks the format. Invariants: the length never changes; a refusal
 * (-1) leaves the bytes as they were; only bytes of a secret change, and
 * each changed byte is a placeholder's (its fill); a second pass over
 * the scrubbed bytes changes nothing more that the first did not (the
 * placeholders are stable); the count is never above the bytes changed
 * when a byte changed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn_scrub.h"
#include "tests/fuzz/fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum spawn_scrub_fmt f;
	char *a, *b;
	size_t i, changed = 0;
	int n, m;

	if (size < 1)
		return 0;
	f = (enum spawn_scrub_fmt)(data[0] % (SPAWN_SCRUB_DOCKER + 1));
	data++;
	size--;
	if ((a = malloc(size + 1)) == NULL || (b = malloc(size + 1)) == NULL) {
		free(a);
		return 0;
	}
	memcpy(a, data, size);
	n = spawn_scrub(f, a, size);
	if (n == -1)
		CHECK(memcmp(a, data, size) == 0);
	for (i = 0; i < size; i++) {
		if (a[i] == (char)data[i])
			continue;
		changed++;
		CHECK(strchr("gkplaceholder", a[i]) != NULL && a[i] != '\0');
	}
	CHECK(n != 0 || changed == 0);
	memcpy(b, a, size);
	m = spawn_scrub(f, b, size);
	CHECK((m == -1) == (n == -1));
	CHECK(memcmp(a, b, size) == 0);
	free(a);
	free(b);
	return 0;
}
