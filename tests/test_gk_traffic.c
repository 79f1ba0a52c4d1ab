/*
 * test_gk_traffic: what passed, per cage and destination (gk_traffic.h):
 * bytes and connections added per host and port, totals, destinations
 * past GK_TRAFFIC_HOSTS folded into "other", a cage that moved nothing,
 * and the cage.destroy line's fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_traffic.h"
#include "tests/cage_testutil.h"

static struct gk_cage_table *table;
static struct gk_cage *cage;

static int
setup(void **state)
{
	(void)state;
	table = gk_cage_table_new();
	assert_non_null(table);
	cage = gk_test_cage_one(table, "10.9.0.7", "example.com", "traffic");
	assert_non_null(cage);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	gk_cage_end(cage, "test");
	gk_cage_table_free(table);
	return 0;
}

static uint64_t
u64(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_uint64(v);
}

static void
test_nothing(void **state)
{
	struct json_object *o, *h;

	(void)state;
	o = gk_traffic_json(cage);
	assert_int_equal(u64(o, "up"), 0);
	assert_int_equal(u64(o, "connections"), 0);
	assert_true(json_object_object_get_ex(o, "hosts", &h));
	assert_int_equal(json_object_array_length(h), 0);
	assert_false(json_object_object_get_ex(o, "other", &h));
	json_object_put(o);
	gk_traffic_add(NULL, "x.example", 443, 1, 1);	/* no cage: ignored */
}

static void
test_per_host(void **state)
{
	struct json_object *o, *h, *r;

	(void)state;
	gk_traffic_add(cage, "example.com", 443, 100, 2000);
	gk_traffic_add(cage, "example.com", 443, 5, 7);
	gk_traffic_add(cage, "example.com", 80, 1, 2);
	o = gk_traffic_json(cage);
	assert_int_equal(u64(o, "up"), 106);
	assert_int_equal(u64(o, "down"), 2009);
	assert_int_equal(u64(o, "connections"), 3);
	assert_true(json_object_object_get_ex(o, "hosts", &h));
	assert_int_equal(json_object_array_length(h), 2);
	r = json_object_array_get_idx(h, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(r,
	    "host")), "example.com");
	assert_int_equal(u64(r, "port"), 443);
	assert_int_equal(u64(r, "up"), 105);
	assert_int_equal(u64(r, "connections"), 2);
	json_object_put(o);
}

static void
test_fold_and_ended(void **state)
{
	struct json_object *o, *h, *d, *t;
	char host[64];
	int i;

	(void)state;
	for (i = 0; i < GK_TRAFFIC_HOSTS + 10; i++) {
		snprintf(host, sizeof(host), "h%d.example.com", i);
		gk_traffic_add(cage, host, 443, 1, 10);
	}
	o = gk_traffic_json(cage);
	assert_true(json_object_object_get_ex(o, "hosts", &h));
	assert_int_equal(json_object_array_length(h), GK_TRAFFIC_HOSTS);
	assert_true(json_object_object_get_ex(o, "other", &t));
	assert_int_equal(u64(t, "connections"), 10);
	assert_int_equal(u64(o, "down"), 10 * (GK_TRAFFIC_HOSTS + 10));
	json_object_put(o);
	d = json_object_new_object();
	gk_traffic_ended(cage, d);
	assert_true(json_object_object_get_ex(d, "seconds", &t));
	assert_true(json_object_object_get_ex(d, "traffic", &t));
	assert_int_equal(u64(t, "connections"), GK_TRAFFIC_HOSTS + 10);
	json_object_put(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_and_ended, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
