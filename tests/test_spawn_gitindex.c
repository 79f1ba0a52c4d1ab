/*
 * A git index's gitlinks (spawn_gitindex.c): index files git 2.39 wrote
 * (versions 2, 3 and 4, SHA-1 and SHA-256; tests/data/gitindex), each
 * holding files, a symlink, an intent-to-add entry (extended flags) and
 * three gitlinks, one with a path longer than the flags' 12 bits; a
 * split index and its shared part; then every way the bytes can be cut
 * short or wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"
#include "tests/testdata.h"

#define CAP	16384
#define SEEN	8

struct seen {
	char	*path[SEEN];
	size_t	 n;
};

static void
collect(void *arg, const char *path, size_t len)
{
	struct seen *s = arg;

	assert_int_equal(strlen(path), len);
	if (s->n < SEEN)
		s->path[s->n] = strdup(path);
	s->n++;
}

static void
seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n && i < SEEN; i++)
		free(s->path[i]);
	s->n = 0;
}

/* The long gitlink's path: 22 components of 200 'd's, then "gl". */
static bool
is_long(const char *p)
{
	size_t i, k;

	for (k = 0; k < 22; k++, p += 201) {
		for (i = 0; i < 200; i++)
			if (p[i] != 'd')
				return false;
		if (p[200] != '/')
			return false;
	}
	return strcmp(p, "gl") == 0;
}

/* What the reader says of buf, the paths it reports dropped. */
static enum spawn_gitindex_st
st_of(const uint8_t *buf, size_t len, size_t oidlen)
{
	struct seen s = { .n = 0 };
	enum spawn_gitindex_st st;

	st = spawn_gitindex_gitlinks(buf, len, oidlen, collect, &s, NULL);
	seen_free(&s);
	return st;
}

static void
expect_three(const char *file, size_t oidlen)
{
	static uint8_t buf[CAP];
	struct seen s = { .n = 0 };
	size_t len;

	len = test_data_load("gitindex", file, buf, sizeof(buf));
	assert_int_equal(spawn_gitindex_gitlinks(buf, len, oidlen, collect,
	    &s, NULL), SPAWN_GITINDEX_OK);
	/* in the index's order: "ddd..." sorts before "dir/" */
	assert_int_equal(s.n, 3);
	assert_true(is_long(s.path[0]));
	assert_string_equal(s.path[1], "dir/sub");
	assert_string_equal(s.path[2], "vendor/lib");
	seen_free(&s);
}

static void
test_v2(void **state)
{
	(void)state;
	expect_three("v2.index", 20);
}

static void
test_v3(void **state)
{
	(void)state;
	expect_three("v3.index", 20);
}

static void
test_v4(void **state)
{
	(void)state;
	expect_three("v4.index", 20);
}

static void
test_sha256(void **state)
{
	static uint8_t buf[CAP];
	size_t len;

	(void)state;
	expect_three("sha256-v3.index", 32);
	/* read with SHA-1's length, it does not parse */
	len = test_data_load("gitindex", "sha256-v3.index", buf, sizeof(buf));
	assert_int_not_equal(st_of(buf, len, 20), SPAWN_GITINDEX_OK);
}

static void
test_empty(void **state)
{
	static uint8_t buf[CAP];
	struct seen s = { .n = 0 };
	size_t len;

	(void)state;
	len = test_data_load("gitindex", "empty.index", buf, sizeof(buf));
	assert_int_equal(spawn_gitindex_gitlinks(buf, len, 20, collect, &s,
	    NULL), SPAWN_GITINDEX_OK);
	assert_int_equal(s.n, 0);
}

/* A split index (git update-index --split-index): its "link" names the
 * shared part, which holds the gitlinks; a whole index has no link. */
static void
test_split(void **state)
{
	static uint8_t buf[CAP];
	struct spawn_gitindex_link link;
	struct seen s = { .n = 0 };
	char hex[41], want[64];
	size_t len, i;

	(void)state;
	len = test_data_load("gitindex", "split.index", buf, sizeof(buf));
	assert_int_equal(spawn_gitindex_gitlinks(buf, len, 20, collect, &s,
	    &link), SPAWN_GITINDEX_OK);
	assert_true(link.split);
	for (i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", link.shared[i]);
	test_data_load("gitindex", "split.shared-hex", (uint8_t *)want,
	    sizeof(want));
	assert_memory_equal(hex, want, 40);
	seen_free(&s);
	len = test_data_load("gitindex", "split.sharedindex", buf,
	    sizeof(buf));
	assert_int_equal(spawn_gitindex_gitlinks(buf, len, 20, collect, &s,
	    &link), SPAWN_GITINDEX_OK);
	assert_false(link.split);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.path[0], "later/sub");
	assert_string_equal(s.path[1], "shared/sub");
	seen_free(&s);
	len = test_data_load("gitindex", "v2.index", buf, sizeof(buf));
	assert_int_equal(spawn_gitindex_gitlinks(buf, len, 20, NULL, NULL,
	    &link), SPAWN_GITINDEX_OK);
	assert_false(link.split);
}

/* Every prefix short of the entries' end is INVALID, and never read
 * past (ASan): the entries end before the extensions and checksum. */
static void
test_truncated(void **state)
{
	static const char *const files[] = { "v2.index", "v3.index",
	    "v4.index" };
	static uint8_t buf[CAP];
	size_t len, cut, f, ok_from;
	uint8_t *copy;

	(void)state;
	for (f = 0; f < 3; f++) {
		len = test_data_load("gitindex", files[f], buf, sizeof(buf));
		ok_from = len;
		for (cut = 0; cut < len; cut++) {
			copy = malloc(cut + 1);
			assert_non_null(copy);
			memcpy(copy, buf, cut);
			if (st_of(copy, cut, 20) == SPAWN_GITINDEX_OK &&
			    ok_from == len)
				ok_from = cut;
			free(copy);
		}
		/* OK only once the last entry is whole: the 20-byte
		 * checksum (and any extension) is not needed */
		assert_true(ok_from > 12 && ok_from <= len - 20);
	}
}

static void
test_wrong(void **state)
{
	static uint8_t buf[CAP];
	size_t len;

	(void)state;
	len = test_data_load("gitindex", "v4.index", buf, sizeof(buf));
	/* not "DIRC" */
	buf[0] = 'X';
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_INVALID);
	buf[0] = 'D';
	/* versions 1 and 5 */
	buf[7] = 1;
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_UNSUPPORTED);
	buf[7] = 5;
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_UNSUPPORTED);
	buf[7] = 4;
	/* an object id length other than 20 or 32 */
	assert_int_equal(st_of(buf, len, 24), SPAWN_GITINDEX_INVALID);
	/* more entries than there are */
	buf[11] = 200;
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_INVALID);
	assert_int_equal(st_of(NULL, 0, 20), SPAWN_GITINDEX_INVALID);
}

/* Version 4: the first entry's prefix varint may drop nothing. */
static void
test_v4_drop(void **state)
{
	static uint8_t buf[CAP];
	size_t len, at = 12 + 40 + 20 + 2;

	(void)state;
	len = test_data_load("gitindex", "v4.index", buf, sizeof(buf));
	assert_int_equal(buf[at], 0);	/* "a.txt": nothing to drop */
	buf[at] = 3;
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_INVALID);
	buf[at] = 0x80;			/* a varint that goes on */
	assert_int_equal(st_of(buf, len, 20), SPAWN_GITINDEX_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v3),
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_wrong),
		cmocka_unit_test(test_v4_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
