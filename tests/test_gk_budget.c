/*
 * test_gk_budget: upload budgets. The text (gk_upload.h): sizes with
 * units, patterns in canonical form, refusals that say why. The facet
 * (gk_budget.h): a cage's budgets from its spec and the daemon's
 * default; grants that never pass a budget, even with tunnels sending at
 * once; what a tunnel did not send given back; a spent budget refusing
 * new connections to its hosts only, with figures; cage.show's and the
 * destroy line's fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/policy/gk_upload.h"

static bool
parse(const char *s, struct gk_upload *u, char *err, size_t errlen)
{
	return gk_upload_parse((const uint8_t *)s, strlen(s), u, err, errlen);
}

static void
test_text(void **state)
{
	struct gk_upload u;
	char err[256], text[GK_UPLOAD_TEXT];

	(void)state;
	assert_true(parse("10M", &u, err, sizeof(err)));
	assert_true(u.all);
	assert_int_equal(u.bytes, 10ULL << 20);
	assert_true(parse("1.5K@API.GitHub.com:443", &u, err, sizeof(err)));
	assert_false(u.all);
	assert_int_equal(u.bytes, 1536);
	assert_string_equal(u.pattern, "api.github.com:443");
	gk_upload_format(&u, text, sizeof(text));
	assert_string_equal(text, "1.5K@api.github.com:443");
	assert_true(parse("100@*.example.com", &u, err, sizeof(err)));
	gk_upload_format(&u, text, sizeof(text));
	assert_string_equal(text, "100@*.example.com");
	/* refusals say what is wrong and what would do */
	assert_false(parse("0", &u, err, sizeof(err)));
	assert_non_null(strstr(err, "out of range (1 to 1024T)"));
	assert_false(parse("ten", &u, err, sizeof(err)));
	assert_non_null(strstr(err, "SIZE@HOSTPATTERN"));
	assert_false(parse("1M@", &u, err, sizeof(err)));
	assert_false(parse("1M@*.com", &u, err, sizeof(err)));
	assert_non_null(strstr(err, "*.com"));
	assert_false(parse("1M@10.0.0.0/8", &u, err, sizeof(err)));
	assert_non_null(strstr(err, "address range"));
	assert_false(parse("1M@GET github.com/acme/**", &u, err, sizeof(err)));
	assert_non_null(strstr(err, "request rule"));
	assert_false(parse("1M@a@b", &u, err, sizeof(err)));
}

static struct gk_cage_table *table;

static struct gk_cage *
cage_with(const char *const *budgets, size_t n, const char *src)
{
	static struct gk_upload ups[GK_UPLOADS_MAX];
	struct gk_cage_spec s;
	const char *pats[] = { "*.example.com" };
	enum gk_cage_err e;
	char err[256];
	size_t i;

	for (i = 0; i < n; i++)
		assert_true(parse(budgets[i], &ups[i], err, sizeof(err)));
	memset(&s, 0, sizeof(s));
	assert_int_equal(gk_addr_parse(src, &s.source), 0);
	s.allow = gk_allowlist_new(pats, 1, err, sizeof(err));
	s.nsfd = -1;
	s.uploads = ups;
	s.nuploads = n;
	return gk_cage_begin(table, &s, &e, err, sizeof(err));
}

static void
test_grants(void **state)
{
	const char *b[] = { "1M", "100K@up.example.com" };
	struct gk_cage *c;
	uint32_t m1 = 0, m2 = 0, m3 = 0;
	uint64_t g, sent = 0;
	char why[256];

	(void)state;
	table = gk_cage_table_new();
	assert_non_null(c = cage_with(b, 2, "10.9.0.2"));
	assert_true(gk_budget_covers(c, "other.example.com", 443));
	/* two tunnels to the counted host take turns: never past 100K */
	while ((g = gk_budget_take(c, "up.example.com", 443, &m1, why,
	    sizeof(why))) > 0 && sent < (1 << 20)) {
		sent += g;
		g = gk_budget_take(c, "UP.example.com", 443, &m2, why,
		    sizeof(why));
		sent += g;
	}
	assert_int_equal(sent, 100 * 1024);
	assert_int_equal(m1, 3);	/* both budgets */
	assert_int_equal(m1, m2);
	assert_non_null(strstr(why, "100K@up.example.com is spent: 102400 "
	    "of 102400 bytes sent"));
	assert_true(gk_budget_spent(c, "up.example.com", 443, why,
	    sizeof(why)));
	/* another host still goes, within the total: with less than four
	 * grants' worth left, a quarter of it */
	assert_false(gk_budget_spent(c, "other.example.com", 443, why,
	    sizeof(why)));
	g = gk_budget_take(c, "other.example.com", 443, &m3, why, sizeof(why));
	assert_int_equal(g, (1024 - 100) * 1024 / 4);
	assert_int_equal(m3, 1);
	/* a tunnel that ends having sent less gives the rest back */
	gk_budget_give(c, m1, 1000);
	assert_false(gk_budget_spent(c, "up.example.com", 443, why,
	    sizeof(why)));
	g = gk_budget_take(c, "up.example.com", 443, &m1, why, sizeof(why));
	assert_int_equal(g, 1000);
	gk_cage_end(c, "test");
	gk_cage_table_free(table);
}

static void
test_default_and_json(void **state)
{
	const char *b[] = { "2M@*.example.com" };
	struct gk_upload dflt;
	struct gk_budget_conf conf = { &dflt, 1 };
	struct json_object *a, *o, *v, *d;
	struct gk_cage *c;
	uint32_t m = 0;
	char err[256];

	(void)state;
	table = gk_cage_table_new();
	/* a cage with none and no default: no facet, no cost */
	assert_non_null(c = cage_with(b, 0, "10.9.0.3"));
	assert_false(gk_budget_covers(c, "a.example.com", 443));
	assert_null(gk_budget_json(c));
	assert_int_equal(gk_budget_take(c, "a.example.com", 443, &m, err,
	    sizeof(err)), UINT64_MAX);
	gk_cage_end(c, "test");
	assert_true(parse("5K", &dflt, err, sizeof(err)));
	gk_budget_configure(table, &conf);
	assert_non_null(c = cage_with(b, 1, "10.9.0.4"));
	assert_int_equal(gk_budget_take(c, "a.example.com", 443, &m, err,
	    sizeof(err)), 5 * 1024);	/* the tighter default bites */
	assert_int_equal(m, 3);
	assert_int_equal(gk_budget_take(c, "a.example.com", 443, &m, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(err, "5K is spent: 5120 of 5120 bytes sent by "
	    "the cage"));
	assert_non_null(a = gk_budget_json(c));
	assert_int_equal(json_object_array_length(a), 2);
	o = json_object_array_get_idx(a, 1);
	assert_true(json_object_object_get_ex(o, "budget", &v));
	assert_string_equal(json_object_get_string(v), "5K");
	assert_true(json_object_object_get_ex(o, "sent", &v));
	assert_int_equal(json_object_get_uint64(v), 5120);
	assert_true(json_object_object_get_ex(o, "refused", &v));
	assert_int_equal(json_object_get_uint64(v), 1);
	json_object_put(a);
	d = json_object_new_object();
	gk_budget_ended(c, d);
	assert_true(json_object_object_get_ex(d, "upload", &v));
	json_object_put(d);
	gk_cage_end(c, "test");
	gk_cage_table_free(table);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_default_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
