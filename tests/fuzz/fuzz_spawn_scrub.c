/*
 * Fuzz the settings files' scrubbers (spawn_scrub.c). The first byte
 * picks the format. Invariants: the length never changes; a refusal
 * (-1) leaves the bytes as they were and reports nothing; only bytes of a
 * secret change, and each changed byte is a placeholder's (its fill); a
 * second pass over the scrubbed bytes changes nothing more that the first
 * did not (the placeholders are stable); the count is never above the
 * bytes changed when a byte changed.
 *
 * The reports (spawn_scrub_report): each reported secret lies inside the
 * buffer, after the one before it, and is one the pass replaced: its
 * bytes are now spawn_scrub_placeholder() of what they were; never more
 * reported (with those that did not fit) than replaced; its hosts are
 * host names as gk_name writes them, its port not 0, its label set;
 * docker's config reports none; the second pass reports each of them
 * again (a placeholder is reported where its secret was).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"
#include "spawner/spawn_scrub.h"
#include "tests/fuzz/fuzz_check.h"

/* One report of a pass that replaced n secrets of a (from orig). */
static void
check_bind(const struct spawn_scrub_bind *bd, const char *a,
    const char *orig, size_t size, size_t prev_end)
{
	char name[GK_NAME_MAX + 1], *ph;
	size_t h;

	CHECK(bd->len > 0 && bd->off <= size && bd->len <= size - bd->off);
	CHECK(bd->off >= prev_end);
	CHECK((ph = malloc(bd->len)) != NULL);
	memcpy(ph, orig + bd->off, bd->len);
	spawn_scrub_placeholder(ph, bd->len);
	CHECK(memcmp(a + bd->off, ph, bd->len) == 0);
	free(ph);
	CHECK(bd->nhosts >= 1 && bd->nhosts <= SPAWN_SCRUB_HOSTS_MAX);
	for (h = 0; h < bd->nhosts; h++) {
		CHECK(gk_name_normalize(bd->host[h], strlen(bd->host[h]),
		    name) == (int)strlen(bd->host[h]));
		CHECK(strcmp(name, bd->host[h]) == 0);
	}
	CHECK(bd->port != 0 && bd->label != NULL && bd->label[0] != '\0');
}

/* Every report of r1 is in r2 (when r2 kept them all). */
static void
check_again(const struct spawn_scrub_binds *r1,
    const struct spawn_scrub_binds *r2)
{
	size_t i, j;

	if (r2->more > 0)
		return;
	for (i = 0; i < r1->n; i++) {
		for (j = 0; j < r2->n; j++)
			if (r2->b[j].off == r1->b[i].off &&
			    r2->b[j].len == r1->b[i].len &&
			    strcmp(r2->b[j].host[0], r1->b[i].host[0]) == 0)
				break;
		CHECK(j < r2->n);
	}
}

static void
check_reports(enum spawn_scrub_fmt f, const struct spawn_scrub_binds *r,
    int n, const char *a, const char *orig, size_t size)
{
	size_t i, end = 0;

	if (n == -1 || f == SPAWN_SCRUB_DOCKER) {
		CHECK(r->n == 0 && r->more == 0);
		return;
	}
	CHECK(r->n <= SPAWN_SCRUB_BIND_MAX);
	CHECK(r->n + r->more <= (size_t)n);
	CHECK(r->more == 0 || r->n == SPAWN_SCRUB_BIND_MAX);
	for (i = 0; i < r->n; i++) {
		check_bind(&r->b[i], a, orig, size, end);
		end = r->b[i].off + r->b[i].len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct spawn_scrub_binds r1, r2;
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
	n = spawn_scrub_report(f, a, size, &r1);
	if (n == -1)
		CHECK(memcmp(a, data, size) == 0);
	for (i = 0; i < size; i++) {
		if (a[i] == (char)data[i])
			continue;
		changed++;
		CHECK(strchr("gkplaceholder", a[i]) != NULL && a[i] != '\0');
	}
	CHECK(n != 0 || changed == 0);
	check_reports(f, &r1, n, a, (const char *)data, size);
	/* the plain call replaces the same */
	memcpy(b, data, size);
	CHECK(spawn_scrub(f, b, size) == n && memcmp(a, b, size) == 0);
	memcpy(b, a, size);
	m = spawn_scrub_report(f, b, size, &r2);
	CHECK((m == -1) == (n == -1));
	CHECK(memcmp(a, b, size) == 0);
	if (n != -1)
		check_again(&r1, &r2);
	free(a);
	free(b);
	return 0;
}
