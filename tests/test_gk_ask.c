/*
 * test_gk_ask: an asking cage's questions (one per host and port, every
 * waiting connection told the outcome, run widening the allowlist, deny
 * remembered, the timeout denying) and its placeholders.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"

struct fixture {
	struct event_base	*base;
	struct gk_cage_table	*t;
	struct gk_cage		*c;
};

/* What a held connection learnt. */
struct seen {
	int		 calls;
	enum gk_decision d;
};

static void
note(void *arg, enum gk_decision d)
{
	struct seen *s = arg;

	s->calls++;
	s->d = d;
}

static int
setup(void **state)
{
	static const char *pats[] = { "github.com:443" };
	struct fixture *f = calloc(1, sizeof(*f));
	struct gk_cage_spec spec;
	struct gk_allowlist *al;
	struct gk_addr src;
	char err[256];

	assert_non_null(f);
	assert_non_null(f->base = event_base_new());
	assert_non_null(f->t = gk_cage_table_new());
	assert_non_null(al = gk_allowlist_new(pats, 1, err, sizeof(err)));
	assert_int_equal(gk_addr_parse("10.143.0.2", &src), 0);
	gk_cage_table_set_env(f->t, f->base, NULL);
	memset(&spec, 0, sizeof(spec));
	spec.source = src;
	spec.label = "t";
	spec.allow = al;
	spec.nsfd = -1;
	spec.ask = true;
	spec.ask_timeout = 1;
	assert_non_null(f->c = gk_cage_begin(f->t, &spec, NULL, err,
	    sizeof(err)));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	gk_cage_table_free(f->t);
	event_base_free(f->base);
	free(f);
	return 0;
}

static uint64_t
last_id(void)
{
	return gk_stats.asks[GK_DECISION_ONCE] + gk_stats.asks[GK_DECISION_RUN]
	    + gk_stats.asks[GK_DECISION_SAVE] + gk_stats.asks[GK_DECISION_DENY]
	    + gk_stats.asks[GK_DECISION_TIMEOUT];
}

/* Ten connections to one host:port: one question; run lets all ten go
 * on and widens the allowlist to exactly host:port. */
static void
test_one_question_run(void **state)
{
	struct fixture *f = *state;
	struct gk_ask_wait *w[10];
	struct seen s[10], other;
	struct gk_ask_wait *ow;
	uint64_t before = gk_stats.asks[GK_DECISION_RUN];
	char err[256];
	size_t i;
	uint64_t id;

	memset(s, 0, sizeof(s));
	memset(&other, 0, sizeof(other));
	for (i = 0; i < 10; i++)
		assert_int_equal(gk_ask_hold(f->c, "example.org", 443,
		    GK_KIND_HTTP, note, &s[i], &w[i]), GK_ASK_HELD);
	assert_int_equal(gk_ask_open(f->c), 1);
	assert_int_equal(gk_ask_hold(f->c, "example.org", 80, GK_KIND_HTTP,
	    note, &other, &ow), GK_ASK_HELD);
	assert_int_equal(gk_ask_open(f->c), 2);
	/* one of the ten went away before the answer */
	gk_ask_cancel(w[3]);
	/* ids are unique and increasing; find this question's by trying */
	for (id = 1; id < 100000; id++)
		if (gk_ask_decide(f->c, id, GK_DECISION_RUN, "tty", err,
		    sizeof(err)) == 0)
			break;
	assert_true(id < 100000);
	for (i = 0; i < 10; i++) {
		assert_int_equal(s[i].calls, i == 3 ? 0 : 1);
		if (i != 3)
			assert_int_equal(s[i].d, GK_DECISION_RUN);
	}
	assert_int_equal(other.calls, 0);	/* port 80 still asks */
	assert_int_equal(gk_ask_open(f->c), 1);
	assert_int_equal(gk_stats.asks[GK_DECISION_RUN], before + 1);
	assert_true(gk_cage_allows_name(f->c, "example.org", 11, 443));
	assert_false(gk_cage_allows_name(f->c, "example.org", 11, 80));
	assert_false(gk_cage_allows_name(f->c, "www.example.org", 15, 443));
	assert_true(gk_cage_allows_name(f->c, "github.com", 10, 443));
	/* answered already */
	assert_int_equal(gk_ask_decide(f->c, id, GK_DECISION_RUN, "tty", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "no open question"));
	gk_ask_cancel(ow);
}

/* deny: the waiting connection is refused, and so is the next one at
 * once, without a question; another port still asks. */
static void
test_deny_remembered(void **state)
{
	struct fixture *f = *state;
	struct gk_ask_wait *w;
	struct seen s = { 0, GK_DECISION_ONCE };
	char err[256];
	uint64_t id;

	assert_int_equal(gk_ask_hold(f->c, "evil.example", 443,
	    GK_KIND_SOCKS, note, &s, &w), GK_ASK_HELD);
	for (id = 1; id < 100000; id++)
		if (gk_ask_decide(f->c, id, GK_DECISION_DENY, "supervisor",
		    err, sizeof(err)) == 0)
			break;
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.d, GK_DECISION_DENY);
	assert_int_equal(gk_ask_hold(f->c, "evil.example", 443,
	    GK_KIND_SOCKS, note, &s, &w), GK_ASK_DENIED);
	assert_null(w);
	assert_int_equal(gk_ask_open(f->c), 0);
	assert_int_equal(gk_ask_hold(f->c, "evil.example", 22,
	    GK_KIND_TRANSPARENT, note, &s, &w), GK_ASK_HELD);
	assert_int_equal(gk_ask_open(f->c), 1);
	/* once: let through, not remembered */
	for (id = 1; id < 100000; id++)
		if (gk_ask_decide(f->c, id, GK_DECISION_ONCE, "tty", err,
		    sizeof(err)) == 0)
			break;
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.d, GK_DECISION_ONCE);
	assert_false(gk_cage_allows_name(f->c, "evil.example", 12, 22));
	assert_int_equal(gk_ask_hold(f->c, "evil.example", 22,
	    GK_KIND_TRANSPARENT, note, &s, &w), GK_ASK_HELD);
	gk_ask_cancel(w);
	/* "timeout" is not an answer */
	assert_int_equal(gk_ask_decide(f->c, 1, GK_DECISION_TIMEOUT, "tty",
	    err, sizeof(err)), -1);
}

/* Nobody answers: after the cage's timeout (1 s) the question ends as
 * a denial, and the connection learns it. */
static void
test_timeout(void **state)
{
	struct fixture *f = *state;
	struct timeval bound = { 3, 0 };
	struct gk_ask_wait *w;
	struct seen s = { 0, GK_DECISION_ONCE };
	uint64_t before = gk_stats.asks[GK_DECISION_TIMEOUT], n = last_id();

	assert_int_equal(gk_ask_hold(f->c, "slow.example", 443, GK_KIND_HTTP,
	    note, &s, &w), GK_ASK_HELD);
	assert_int_equal(event_base_loopexit(f->base, &bound), 0);
	while (s.calls == 0 && event_base_loop(f->base, EVLOOP_ONCE) == 0 &&
	    last_id() == n)
		;
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.d, GK_DECISION_TIMEOUT);
	assert_int_equal(gk_stats.asks[GK_DECISION_TIMEOUT], before + 1);
	assert_false(gk_cage_allows_name(f->c, "slow.example", 12, 443));
	assert_int_equal(gk_ask_open(f->c), 0);
}

/* A question left open when the cage goes: freed, no callback. */
static void
test_cage_ends(void **state)
{
	struct fixture *f = *state;
	struct gk_ask_wait *w;
	struct seen s = { 0, GK_DECISION_ONCE };

	assert_int_equal(gk_ask_hold(f->c, "open.example", 443, GK_KIND_HTTP,
	    note, &s, &w), GK_ASK_HELD);
	gk_cage_end(f->c, "test");
	f->c = NULL;
	assert_int_equal(s.calls, 0);
}

static void
test_placeholders(void **state)
{
	struct fixture *f = *state;
	struct gk_addr a, b, c, other;
	char name[32];
	size_t i;

	assert_int_equal(gk_ask_placeholder(f->c, "example.org", &a), 0);
	assert_true(gk_ask_net(&a));
	assert_int_equal(a.bytes[0], 198);
	assert_int_equal(a.bytes[1], 18);
	assert_int_equal(gk_ask_placeholder(f->c, "example.org", &b), 0);
	assert_true(gk_addr_eq(&a, &b));
	assert_int_equal(gk_ask_placeholder(f->c, "example.net", &c), 0);
	assert_false(gk_addr_eq(&a, &c));
	assert_string_equal(gk_ask_placeholder_name(f->c, &a), "example.org");
	assert_string_equal(gk_ask_placeholder_name(f->c, &c), "example.net");
	assert_int_equal(gk_addr_parse("198.18.200.1", &other), 0);
	assert_true(gk_ask_net(&other));
	assert_null(gk_ask_placeholder_name(f->c, &other));
	assert_int_equal(gk_addr_parse("198.20.0.1", &other), 0);
	assert_false(gk_ask_net(&other));
	assert_null(gk_ask_placeholder_name(f->c, &other));
	assert_int_equal(gk_addr_parse("192.0.2.1", &other), 0);
	assert_null(gk_ask_placeholder_name(f->c, &other));
	/* past GK_ASK_PLACEHOLDERS names the oldest address is reused */
	for (i = 0; i < GK_ASK_PLACEHOLDERS - 2; i++) {
		snprintf(name, sizeof(name), "n%zu.example", i);
		assert_int_equal(gk_ask_placeholder(f->c, name, &b), 0);
	}
	assert_string_equal(gk_ask_placeholder_name(f->c, &a), "example.org");
	assert_int_equal(gk_ask_placeholder(f->c, "late.example", &b), 0);
	assert_true(gk_addr_eq(&a, &b));
	assert_string_equal(gk_ask_placeholder_name(f->c, &a),
	    "late.example");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_question_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deny_remembered, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cage_ends, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_placeholders, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
