/*
 * Fuzz the git index reader (spawn_gitindex.c). Invariants: the result
 * is one of the three; each gitlink's path is non-empty, has the length
 * reported, no NUL inside and fits SPAWN_GITINDEX_PATH_MAX; reading the
 * same bytes twice reports the same paths and link (SHA-1 and SHA-256
 * lengths); only an OK index has a link.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

struct tally {
	size_t		n;
	uint64_t	sum;	/* of the paths' bytes and lengths */
};

static void
each(void *arg, const char *path, size_t len)
{
	struct tally *t = arg;
	size_t i;

	CHECK(len > 0 && len < SPAWN_GITINDEX_PATH_MAX);
	CHECK(strlen(path) == len);
	t->n++;
	t->sum += len;
	for (i = 0; i < len; i++)
		t->sum = t->sum * 31 + (uint8_t)path[i];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t oid[] = { 20, 32 };
	struct spawn_gitindex_link la, lb;
	struct tally a, b;
	enum spawn_gitindex_st st, st2;
	size_t k;

	for (k = 0; k < 2; k++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		st = spawn_gitindex_gitlinks(data, size, oid[k], each, &a, &la);
		CHECK(st == SPAWN_GITINDEX_OK || st == SPAWN_GITINDEX_INVALID ||
		    st == SPAWN_GITINDEX_UNSUPPORTED);
		st2 = spawn_gitindex_gitlinks(data, size, oid[k], each, &b, &lb);
		CHECK(st2 == st && a.n == b.n && a.sum == b.sum);
		CHECK(la.split == lb.split &&
		    memcmp(la.shared, lb.shared, sizeof(la.shared)) == 0);
		CHECK(st == SPAWN_GITINDEX_OK || !la.split);
		CHECK(spawn_gitindex_gitlinks(data, size, oid[k], NULL, NULL,
		    NULL) == st);
	}
	return 0;
}
