/*
 * Unit tests for the cage table and its pins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_learn.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "tests/cage_testutil.h"

static struct gk_allowlist *
allow(const char *p1, const char *p2)
{
	const char *pats[2] = { p1, p2 };
	struct gk_allowlist *al;
	char err[256];

	al = gk_allowlist_new(pats, p1 == NULL ? 0 : p2 == NULL ? 1 : 2, err,
	    sizeof(err));
	assert_non_null(al);
	return al;
}

static struct gk_addr
addr(const char *s)
{
	struct gk_addr a;

	assert_int_equal(gk_addr_parse(s, &a), 0);
	return a;
}

static struct gk_addr
addr_n(uint32_t n)
{
	struct gk_addr a;
	uint8_t b[4] = { 10, (uint8_t)(n >> 16), (uint8_t)(n >> 8),
	    (uint8_t)n };

	gk_addr_from_bytes(&a, AF_INET, b);
	return a;
}

/* Is `a` pinned (unexpired at `now`) to the cage, for any name? */
static bool
pinned(const struct gk_cage *c, const struct gk_addr *a, time_t now)
{
	const char *names[1];

	return gk_cage_pin_names(c, a, now, names, 1) > 0;
}

static void
test_create_lookup_destroy(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_addr a = addr("10.143.0.2"), b = addr("fd00::2");
	struct gk_cage *c, *d;
	enum gk_cage_err e;
	size_t i;

	(void)state;
	assert_non_null(t);
	c = gk_test_cage(t, &a, "demo", 1000, allow("example.com", NULL),
	    &e);
	assert_non_null(c);
	assert_int_equal(e, GK_CAGE_E_OK);
	assert_int_equal(strlen(gk_cage_id(c)), GK_CAGE_ID_LEN);
	for (i = 0; i < GK_CAGE_ID_LEN; i++)
		assert_true((gk_cage_id(c)[i] >= 'a' && gk_cage_id(c)[i] <= 'z') ||
		    (gk_cage_id(c)[i] >= '0' && gk_cage_id(c)[i] <= '9'));
	assert_string_equal(gk_cage_label(c), "demo");
	assert_int_equal(gk_cage_uid(c), 1000);
	assert_true(gk_cage_created(c) > 0);
	d = gk_test_cage(t, &b, NULL, 0, allow(NULL, NULL), &e);
	assert_non_null(d);
	assert_string_equal(gk_cage_label(d), "");
	assert_int_equal(gk_cage_table_count(t), 2);
	assert_ptr_equal(gk_cage_by_source(t, &a), c);
	assert_ptr_equal(gk_cage_by_source(t, &b), d);
	assert_ptr_equal(gk_cage_by_id(t, gk_cage_id(c)), c);
	assert_ptr_equal(gk_cage_by_id(t, gk_cage_id(d)), d);
	assert_null(gk_cage_by_id(t, "zzzzzzzz"));
	b = addr("10.143.0.3");
	assert_null(gk_cage_by_source(t, &b));
	gk_cage_end(c, "test");
	assert_int_equal(gk_cage_table_count(t), 1);
	assert_null(gk_cage_by_source(t, &a));
	gk_cage_end(NULL, "test");
	gk_cage_table_free(t);	/* frees d */
	gk_cage_table_free(NULL);
}

static void
test_source_in_use(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_addr a = addr("10.143.0.2");
	struct gk_allowlist *al;
	struct gk_cage *c;
	enum gk_cage_err e;

	(void)state;
	c = gk_test_cage(t, &a, "one", 0, allow(NULL, NULL), &e);
	assert_non_null(c);
	al = allow("example.com", NULL);
	assert_null(gk_test_cage(t, &a, "two", 0, al, &e));
	assert_int_equal(e, GK_CAGE_E_SOURCE_IN_USE);
	assert_non_null(gk_cage_strerror(e));
	/* not taken on failure: still ours */
	gk_allowlist_free(al);
	assert_int_equal(gk_cage_table_count(t), 1);
	gk_cage_end(c, "test");
	c = gk_test_cage(t, &a, "two", 0, allow(NULL, NULL), &e);
	assert_non_null(c);
	gk_cage_table_free(t);
}

static void
test_label(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_addr a = addr("10.143.0.2");
	struct gk_allowlist *al = allow(NULL, NULL);
	char label[GK_CAGE_LABEL_MAX + 2];
	enum gk_cage_err e;
	struct gk_cage *c;

	(void)state;
	memset(label, 'x', GK_CAGE_LABEL_MAX + 1);
	label[GK_CAGE_LABEL_MAX + 1] = '\0';
	assert_null(gk_test_cage(t, &a, label, 0, al, &e));
	assert_int_equal(e, GK_CAGE_E_BAD_LABEL);
	assert_null(gk_test_cage(t, &a, "tab\there", 0, al, &e));
	assert_int_equal(e, GK_CAGE_E_BAD_LABEL);
	assert_null(gk_test_cage(t, &a, "del\x7f", 0, al, &e));
	assert_int_equal(e, GK_CAGE_E_BAD_LABEL);
	assert_null(gk_test_cage(t, &a, "caf\xc3\xa9", 0, al, &e));
	assert_int_equal(e, GK_CAGE_E_BAD_LABEL);
	assert_int_equal(gk_cage_table_count(t), 0);
	label[GK_CAGE_LABEL_MAX] = '\0';
	c = gk_test_cage(t, &a, label, 0, al, &e);
	assert_non_null(c);
	assert_string_equal(gk_cage_label(c), label);
	gk_cage_table_free(t);

	t = gk_cage_table_new();
	c = gk_test_cage(t, &a, " ~printable! ", 0, allow(NULL, NULL), &e);
	assert_non_null(c);
	gk_cage_table_free(t);
}

#define MANY	10000

static void
test_many(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage **cages;
	struct gk_addr a;
	enum gk_cage_err e;
	size_t i, j;

	(void)state;
	cages = calloc(MANY, sizeof(*cages));
	assert_non_null(cages);
	for (i = 0; i < MANY; i++) {
		a = addr_n((uint32_t)i);
		cages[i] = gk_test_cage(t, &a, "many", (uid_t)i,
		    allow(NULL, NULL), &e);
		assert_non_null(cages[i]);
	}
	assert_int_equal(gk_cage_table_count(t), MANY);
	for (i = 0; i < MANY; i++) {
		a = addr_n((uint32_t)i);
		assert_ptr_equal(gk_cage_by_source(t, &a), cages[i]);
		assert_ptr_equal(gk_cage_by_id(t, gk_cage_id(cages[i])), cages[i]);
	}
	/* ids unique (lookup by id found each one; check a sample too) */
	for (i = 0; i < 200; i++)
		for (j = i + 1; j < 200; j++)
			assert_string_not_equal(gk_cage_id(cages[i]),
			    gk_cage_id(cages[j]));
	for (i = 0; i < MANY; i += 2)
		gk_cage_end(cages[i], "test");
	assert_int_equal(gk_cage_table_count(t), MANY / 2);
	for (i = 0; i < MANY; i++) {
		a = addr_n((uint32_t)i);
		if (i % 2 == 0)
			assert_null(gk_cage_by_source(t, &a));
		else
			assert_ptr_equal(gk_cage_by_source(t, &a), cages[i]);
	}
	free(cages);
	gk_cage_table_free(t);
}

static void
count_cb(struct gk_cage *c, void *arg)
{
	(void)c;
	(*(size_t *)arg)++;
}

static void
test_foreach(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_addr a;
	enum gk_cage_err e;
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 100; i++) {
		a = addr_n((uint32_t)i);
		assert_non_null(gk_test_cage(t, &a, NULL, 0,
		    allow(NULL, NULL), &e));
	}
	gk_cage_foreach(t, count_cb, &n);
	assert_int_equal(n, 100);
	gk_cage_table_free(t);
}

static struct gk_cage *
one_cage(struct gk_cage_table *t, const char *p1, const char *p2)
{
	struct gk_addr a = addr("10.143.0.2");
	enum gk_cage_err e;
	struct gk_cage *c;

	c = gk_test_cage(t, &a, "pins", 0, allow(p1, p2), &e);
	assert_non_null(c);
	return c;
}

static void
test_pin_extend_expire(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c = one_cage(t, "*.example.com", NULL);
	struct gk_addr a = addr("192.0.2.1"), b = addr("2001:db8::1");
	const char *names[4];

	(void)state;
	assert_false(pinned(c, &a, 0));
	assert_int_equal(gk_cage_pin_names(c, &a, 0, names, 4), 0);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &a, 100), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 50), 0);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, 100), 0);
	assert_int_equal(gk_cage_pin_count(c), 3);
	assert_true(pinned(c, &a, 49));
	assert_true(gk_cage_pinned_name(c, &a, "api.example.com", 49));
	assert_false(gk_cage_pinned_name(c, &a, "api.example.com", 50));
	assert_false(gk_cage_pinned_name(c, &a, "example.com", 10));
	assert_int_equal(gk_cage_pin_names(c, &a, 10, names, 4), 2);
	assert_int_equal(gk_cage_pin_names(c, &a, 10, names, 1), 1);
	assert_int_equal(gk_cage_pin_names(c, &a, 60, names, 4), 1);
	assert_string_equal(names[0], "www.example.com");
	/* extend, never shorten */
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 200), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 20), 0);
	assert_int_equal(gk_cage_pin_count(c), 3);
	assert_true(gk_cage_pinned_name(c, &a, "api.example.com", 199));
	/* expiry */
	assert_int_equal(gk_cage_expire(c, 99), 0);
	assert_int_equal(gk_cage_expire(c, 100), 2);
	assert_int_equal(gk_cage_pin_count(c), 1);
	assert_false(pinned(c, &b, 0));
	assert_true(pinned(c, &a, 150));
	assert_int_equal(gk_cage_expire(c, 1000), 1);
	assert_int_equal(gk_cage_pin_count(c), 0);
	assert_false(pinned(c, &a, 0));
	/* bad names */
	assert_int_equal(gk_cage_pin(c, "", &a, 10), -1);
	gk_cage_table_free(t);
}

static void
test_pin_cap(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c = one_cage(t, "*.example.com", NULL);
	struct gk_addr a;
	size_t i;

	(void)state;
	/* deadlines 1000 + i, except entry 7 which expires first */
	for (i = 0; i < GK_CAGE_PINS_MAX; i++) {
		a = addr_n((uint32_t)i);
		assert_int_equal(gk_cage_pin(c, "x.example.com", &a,
		    i == 7 ? 500 : 1000 + (time_t)i), 0);
	}
	assert_int_equal(gk_cage_pin_count(c), GK_CAGE_PINS_MAX);
	a = addr_n(GK_CAGE_PINS_MAX);
	assert_int_equal(gk_cage_pin(c, "x.example.com", &a, 9000), 0);
	assert_int_equal(gk_cage_pin_count(c), GK_CAGE_PINS_MAX);
	assert_true(pinned(c, &a, 0));
	a = addr_n(7);
	assert_false(pinned(c, &a, 0));		/* evicted */
	a = addr_n(0);
	assert_true(pinned(c, &a, 0));
	/* next to go: entry 0 (deadline 1000) */
	a = addr_n(GK_CAGE_PINS_MAX + 1);
	assert_int_equal(gk_cage_pin(c, "y.example.com", &a, 9000), 0);
	a = addr_n(0);
	assert_false(pinned(c, &a, 0));
	a = addr_n(1);
	assert_true(pinned(c, &a, 0));
	/* expiry in deadline order */
	assert_int_equal(gk_cage_expire(c, 1001), 1);	/* entry 1 */
	assert_int_equal(gk_cage_pin_count(c), GK_CAGE_PINS_MAX - 1);
	assert_int_equal(gk_cage_expire(c, 8999), GK_CAGE_PINS_MAX - 3);
	assert_int_equal(gk_cage_pin_count(c), 2);
	gk_cage_table_free(t);
}

/* What the kernel was told: the last (address, until) and how often. */
struct synced {
	struct gk_addr	 a;
	time_t		 until;
	int		 calls;
	int		 rc;
};

static int
record_sync(void *arg, const struct gk_cage *c, const struct gk_addr *a,
    time_t until)
{
	struct synced *s = arg;

	assert_int_not_equal(gk_cage_plumb_link(c), 0);
	s->a = *a;
	s->until = until;
	s->calls++;
	return s->rc;
}

/* Plumbing as the kernel's would be: a namespace cage gets 10.143.0.N
 * and host link N. */
static uint32_t next_link;

static int
fake_up(void *arg, int nsfd, uid_t uid, bool transparent, bool open,
    struct gk_addr *a, uint32_t *link, char *err, size_t errlen)
{
	char txt[32];

	(void)arg, (void)nsfd, (void)uid, (void)transparent, (void)open;
	(void)err, (void)errlen;
	snprintf(txt, sizeof(txt), "10.143.0.%u", next_link);
	*a = addr(txt);
	*link = next_link;
	return 0;
}

static int downs;

static void
fake_down(void *arg, const struct gk_addr *a)
{
	(void)arg, (void)a;
	downs++;
}

/* A namespace cage whose host link is `link`, allowing *.example.com. */
static struct gk_cage *
linked_cage(struct gk_cage_table *t, uint32_t link)
{
	static struct gk_cage_plumbing p = { .up = fake_up,
	    .down = fake_down };
	struct gk_cage_spec spec;
	struct gk_cage *c;
	char err[256];

	gk_plumb_facet_set(t, &p);
	next_link = link;
	memset(&spec, 0, sizeof(spec));
	spec.netns = true;
	spec.nsfd = 0;
	spec.allow = allow("*.example.com", NULL);
	assert_non_null(c = gk_cage_begin(t, &spec, NULL, err, sizeof(err)));
	assert_true(gk_cage_plumbed(c));
	assert_int_equal(gk_cage_plumb_link(c), link);
	return c;
}

static void
test_pin_sync(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c0 = one_cage(t, "*.example.com", NULL), *c;
	struct gk_addr a = addr("192.0.2.1"), b = addr("192.0.2.2");
	struct synced s = { .rc = 0 };
	int down0 = downs;

	(void)state;
	gk_cage_table_pin_sync(t, record_sync, &s);
	/* no link: nothing to tell */
	assert_int_equal(gk_cage_pin(c0, "www.example.com", &a, 100), 0);
	assert_int_equal(s.calls, 0);
	c = linked_cage(t, 7);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 100), 0);
	assert_int_equal(s.calls, 1);
	assert_true(gk_addr_eq(&s.a, &a));
	assert_int_equal(s.until, 100);	/* exactly as long as the pin */
	/* another name, or a pin no later than what the kernel keeps: not
	 * told again */
	assert_int_equal(gk_cage_pin(c, "x.example.com", &a, 90), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 100), 0);
	assert_int_equal(s.calls, 1);
	/* later: told, with the latest pin of the address, no slack */
	assert_int_equal(gk_cage_pin(c, "x.example.com", &a, 101), 0);
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.until, 101);
	/* a failed sync is retried at the next pin */
	s.rc = -1;
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, 50), 0);
	assert_int_equal(s.calls, 3);
	s.rc = 0;
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, 50), 0);
	assert_int_equal(s.calls, 3);		/* not an extension */
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, 51), 0);
	assert_int_equal(s.calls, 4);
	assert_true(gk_addr_eq(&s.a, &b));
	/* its end takes its plumbing down */
	gk_cage_end(c, "test");
	assert_int_equal(downs, down0 + 1);
	gk_cage_table_free(t);
}

/* A cage that ends takes its addresses out of the kernel's copy: those
 * the kernel was told of and keeps a while yet, each once. */
static void
test_pin_unsync(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c = linked_cage(t, 9);
	struct gk_addr a = addr("192.0.2.1"), b = addr("192.0.2.2");
	struct synced s = { .rc = 0 };
	time_t now = gk_now();

	(void)state;
	gk_cage_table_pin_sync(t, record_sync, &s);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &a, now + 100), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, now + 200), 0);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, now + 1), 0);
	assert_int_equal(s.calls, 3);
	gk_cage_end(c, "test");
	/* a once (until 0); b lapses by itself */
	assert_int_equal(s.calls, 4);
	assert_true(gk_addr_eq(&s.a, &a));
	assert_int_equal(s.until, 0);
	gk_cage_table_free(t);
}

static void
hold_end(struct gk_hold *h)
{
	gk_hold_drop(h);
}

static void
test_pin_inuse(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c = linked_cage(t, 3);
	struct gk_addr a = addr("192.0.2.1"), b = addr("192.0.2.2");
	struct gk_hold h;
	struct synced s = { .rc = 0 };

	(void)state;
	gk_cage_table_pin_sync(t, record_sync, &s);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &a, 100), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 95), 0);
	assert_int_equal(gk_cage_pin(c, "www.example.com", &b, 100), 0);
	memset(&h, 0, sizeof(h));
	assert_int_equal(gk_hold_take(&h, c, GK_HOLD_TUNNEL, 0, hold_end),
	    GK_LIM__MAX);
	h.dst = a;
	/* not yet due: nothing changes */
	assert_int_equal(gk_cage_expire(c, 80), 0);
	assert_int_equal(gk_cage_pin_count(c), 3);
	/* due within GK_PIN_INUSE_AHEAD: a's pins are kept (and the kernel
	 * told), b's goes when it expires */
	assert_int_equal(gk_cage_expire(c, 92), 0);
	assert_true(pinned(c, &a, 92 + GK_PIN_INUSE_KEEP - 1));
	assert_true(gk_cage_pinned_name(c, &a, "api.example.com",
	    92 + GK_PIN_INUSE_KEEP - 1));
	assert_true(pinned(c, &b, 99));
	/* the kernel keeps a exactly as long as its pins */
	assert_int_equal(s.until, 92 + GK_PIN_INUSE_KEEP);
	assert_int_equal(gk_cage_expire(c, 100), 1);
	assert_false(pinned(c, &b, 0));
	/* kept again and again while in use, the kernel told when it must */
	assert_int_equal(gk_cage_expire(c, 500), 0);
	assert_true(pinned(c, &a, 500 + GK_PIN_INUSE_KEEP - 1));
	assert_int_equal(s.until, 500 + GK_PIN_INUSE_KEEP);
	assert_true(gk_addr_eq(&s.a, &a));
	/* the connection closed: they expire as usual */
	gk_hold_drop(&h);
	assert_int_equal(gk_cage_expire(c, 500 + GK_PIN_INUSE_KEEP), 2);
	assert_int_equal(gk_cage_pin_count(c), 0);
	/* a connection opening keeps every pin of its address */
	assert_int_equal(gk_cage_pin(c, "www.example.com", &a, 1000), 0);
	assert_int_equal(gk_cage_pin(c, "api.example.com", &a, 990), 0);
	gk_cage_pin_keep(c, &a, 1010);
	assert_true(gk_cage_pinned_name(c, &a, "api.example.com", 1009));
	assert_true(gk_cage_pinned_name(c, &a, "www.example.com", 1009));
	assert_false(pinned(c, &a, 1010));
	gk_cage_pin_keep(c, &b, 2000);		/* not pinned: nothing */
	assert_false(pinned(c, &b, 0));
	gk_cage_table_free(t);
}

static void
test_set_allow_drops_pins(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *c = one_cage(t, "*.example.com", "other.org:443");
	struct gk_addr a = addr("192.0.2.1"), b = addr("192.0.2.2");
	char name[64];
	size_t i;

	(void)state;
	assert_int_equal(gk_cage_pin(c, "www.example.com", &a, 100), 0);
	assert_int_equal(gk_cage_pin(c, "other.org", &a, 100), 0);
	assert_int_equal(gk_cage_pin(c, "other.org", &b, 100), 0);
	assert_int_equal(gk_cage_pin(c, "example.com", &b, 300), 0);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "h%zu.example.com", i);
		assert_int_equal(gk_cage_pin(c, name, &b, 100 + (time_t)i),
		    0);
	}
	/* other.org stays (allowed on port 443 is "some port") */
	gk_cage_set_allow(c, allow("example.com", "other.org:443"));
	assert_int_equal(gk_cage_pin_count(c), 3);
	assert_false(gk_cage_pinned_name(c, &a, "www.example.com", 0));
	assert_true(gk_cage_pinned_name(c, &a, "other.org", 0));
	assert_true(gk_cage_pinned_name(c, &b, "other.org", 0));
	assert_true(gk_cage_pinned_name(c, &b, "example.com", 0));
	assert_false(gk_cage_pinned_name(c, &b, "h5.example.com", 0));
	/* heap still ordered after the rebuild */
	assert_int_equal(gk_cage_expire(c, 100), 2);
	assert_int_equal(gk_cage_pin_count(c), 1);
	gk_cage_set_allow(c, allow(NULL, NULL));
	assert_int_equal(gk_cage_pin_count(c), 0);
	assert_false(pinned(c, &b, 0));
	assert_int_equal(gk_cage_pin(c, "example.com", &b, 300), 0);
	gk_cage_table_free(t);
}

/* The learning facet: what the allowlist does not cover is allowed and
 * counted, never what the host policy denies; a cage that does not learn
 * has nothing in its slot. Requests: see gk_learn_request. */
static void
test_learn_facet(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *plain = one_cage(t, "*.example.com", NULL), *c;
	struct gk_cage_spec spec;
	struct json_object *d;
	int64_t n;
	char err[256];

	(void)state;
	memset(&spec, 0, sizeof(spec));
	spec.source = addr("10.143.0.9");
	spec.allow = allow("*.example.com", NULL);
	spec.nsfd = -1;
	spec.learn = true;
	assert_non_null(c = gk_cage_begin(t, &spec, NULL, err, sizeof(err)));
	assert_true(gk_cage_learns(c));
	assert_false(gk_cage_learns(plain));
	assert_false(gk_cage_allows_name(plain, "other.org", 9, 443));
	assert_true(gk_cage_allows_name(c, "www.example.com", 15, 443));
	assert_true(gk_cage_allows_name(c, "other.org", 9, 443));
	assert_true(gk_cage_allows_name(c, "other.org", 9, 0));
	/* requests to an inspected host: learned when a rule could hold
	 * them; counted when no rule allowed them */
	assert_false(gk_learn_request(plain, "a.example.com", 443, "GET", 3,
	    "/x", 2, false));
	assert_true(gk_learn_request(c, "a.example.com", 443, "GET", 3,
	    "/x?y", 4, true));
	assert_true(gk_learn_request(c, "a.example.com", 443, "POST", 4,
	    "/a/b/c/d/e", 10, false));
	assert_false(gk_learn_request(c, "a.example.com", 443, "GET", 3,
	    "/a/../b", 7, false));
	assert_false(gk_learn_request(c, "a.example.com", 443, "PROPFIND",
	    8, "/a", 2, false));
	d = json_object_new_object();
	gk_learn_ended(plain, d);
	assert_int_equal(json_object_object_length(d), 0);
	gk_learn_ended(c, d);
	n = json_object_get_int64(json_object_object_get(d, "learned"));
	assert_int_equal(n, 3);		/* the listed name is not learned */
	json_object_put(d);
	gk_cage_end(c, "test");
	gk_cage_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_lookup_destroy),
		cmocka_unit_test(test_source_in_use),
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_pin_extend_expire),
		cmocka_unit_test(test_pin_sync),
		cmocka_unit_test(test_pin_unsync),
		cmocka_unit_test(test_learn_facet),
		cmocka_unit_test(test_pin_inuse),
		cmocka_unit_test(test_pin_cap),
		cmocka_unit_test(test_set_allow_drops_pins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
