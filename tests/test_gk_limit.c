/*
 * Unit tests for the per-cage limits: rates, holdings and their end with
 * the cage, the descriptor budget and its shares, audit lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/state/gk_stats.h"

struct fix {
	struct gk_cage_table	*t;
	struct gk_cage		*a, *b;
};

static struct gk_cage *
cage(struct gk_cage_table *t, const char *src)
{
	const char *pats[1] = { "example.org" };
	struct gk_allowlist *al;
	struct gk_cage *c;
	struct gk_addr a;
	char err[256];

	assert_int_equal(gk_addr_parse(src, &a), 0);
	assert_non_null(al = gk_allowlist_new(pats, 1, err, sizeof(err)));
	assert_non_null(c = gk_test_cage(t, &a, "t", 0, al, NULL));
	return c;
}

static int
setup(void **state)
{
	struct gk_limits l = {
		.dns_rate = 10, .dns_upstream = 2, .dns_upstream_rate = 100,
		.dns_tcp = 3, .handshakes = 4, .tunnels = 2, .audit_rate = 3,
	};
	struct fix *f;

	assert_non_null(f = calloc(1, sizeof(*f)));
	gk_limit_configure(&l, NULL);
	memset(&gk_stats, 0, sizeof(gk_stats));
	gk_fds.limit = 1000;
	gk_fds.reserve = 100;
	gk_fds.held = 0;
	gk_fds.holders = 0;
	assert_non_null(f->t = gk_cage_table_new());
	f->a = cage(f->t, "10.0.0.2");
	f->b = cage(f->t, "10.0.0.3");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	gk_cage_table_free(f->t);
	free(f);
	/* every test gives back what it took */
	assert_int_equal(gk_fds.held, 0);
	assert_int_equal(gk_fds.holders, 0);
	return 0;
}

static void
test_dns_rate(void **state)
{
	struct fix *f = *state;
	uint64_t t0 = 5000;
	int i;

	for (i = 0; i < 10; i++)
		assert_true(gk_limit_dns_query(f->a, t0));
	assert_false(gk_limit_dns_query(f->a, t0));
	assert_false(gk_limit_dns_query(f->a, t0 + 50));
	/* 10 a second: one more every 100 ms, the fraction kept */
	assert_true(gk_limit_dns_query(f->a, t0 + 100));
	assert_false(gk_limit_dns_query(f->a, t0 + 150));
	assert_true(gk_limit_dns_query(f->a, t0 + 210));
	/* another cage has its own bucket */
	assert_true(gk_limit_dns_query(f->b, t0 + 210));
	/* a long pause fills the bucket, no further */
	for (i = 0; i < 10; i++)
		assert_true(gk_limit_dns_query(f->a, t0 + 60000));
	assert_false(gk_limit_dns_query(f->a, t0 + 60000));
	assert_int_equal(gk_stats.limit_events[GK_LIM_DNS_RATE], 4);
	assert_int_equal(gk_limit_of(f->a)->hits[GK_LIM_DNS_RATE], 4);
}

static void
test_upstream(void **state)
{
	struct fix *f = *state;

	assert_true(gk_limit_upstream(f->a, 1000, "a"));
	assert_true(gk_limit_upstream(f->a, 1000, "b"));
	assert_false(gk_limit_upstream(f->a, 1000, "c"));
	assert_int_equal(gk_stats.limit_events[GK_LIM_DNS_UPSTREAM], 1);
	gk_limit_upstream_done(f->a);
	assert_true(gk_limit_upstream(f->a, 1000, "c"));
	assert_true(gk_limit_upstream(f->b, 1000, "c"));
	gk_limit_upstream_done(f->a);
	gk_limit_upstream_done(f->a);
	gk_limit_upstream_done(f->a);		/* never below zero */
	assert_int_equal(gk_limit_of(f->a)->upstream, 0);
}

static int	ended;

static void
end_cb(struct gk_hold *h)
{
	ended++;
	gk_hold_drop(h);
}

static void
test_holds_cap_and_end(void **state)
{
	struct fix *f = *state;
	struct gk_hold h[4], hb;

	ended = 0;
	assert_int_equal(gk_hold_take(&h[0], f->a, GK_HOLD_TUNNEL, 2, end_cb),
	    GK_LIM__MAX);
	assert_int_equal(gk_hold_take(&h[1], f->a, GK_HOLD_TUNNEL, 2, end_cb),
	    GK_LIM__MAX);
	assert_int_equal(gk_hold_take(&h[2], f->a, GK_HOLD_TUNNEL, 2, end_cb),
	    GK_LIM_TUNNELS);
	assert_int_equal(gk_stats.limit_events[GK_LIM_TUNNELS], 1);
	/* another kind, another cage: their own counts */
	assert_int_equal(gk_hold_take(&h[2], f->a, GK_HOLD_DNS_TCP, 1, end_cb),
	    GK_LIM__MAX);
	assert_int_equal(gk_hold_take(&hb, f->b, GK_HOLD_TUNNEL, 2, end_cb),
	    GK_LIM__MAX);
	assert_int_equal(gk_fds.held, 7);
	assert_int_equal(gk_fds.holders, 2);
	gk_hold_drop(&h[1]);
	gk_hold_drop(&h[1]);			/* idempotent */
	assert_int_equal(gk_hold_take(&h[3], f->a, GK_HOLD_TUNNEL, 2, end_cb),
	    GK_LIM__MAX);
	/* the cage ends: each holding's end runs once, all is given back */
	gk_cage_end(f->a, "test");
	f->a = NULL;
	assert_int_equal(ended, 3);
	assert_int_equal(gk_fds.held, 2);
	assert_int_equal(gk_fds.holders, 1);
	gk_hold_drop(&h[0]);			/* after its end: no-op */
	gk_hold_drop(&hb);
}

static void
test_transfer_and_move(void **state)
{
	struct fix *f = *state;
	struct gk_hold hs[3], tn[3], anon;

	for (int i = 0; i < 3; i++)
		assert_int_equal(gk_hold_take(&hs[i], f->a, GK_HOLD_HANDSHAKE,
		    2, end_cb), GK_LIM__MAX);
	assert_int_equal(gk_fds.held, 6);
	assert_int_equal(gk_hold_transfer(&hs[0], &tn[0], GK_HOLD_TUNNEL, 2,
	    end_cb), GK_LIM__MAX);
	assert_int_equal(gk_hold_transfer(&hs[1], &tn[1], GK_HOLD_TUNNEL, 2,
	    end_cb), GK_LIM__MAX);
	assert_int_equal(gk_limit_of(f->a)->held[GK_HOLD_HANDSHAKE], 1);
	assert_int_equal(gk_limit_of(f->a)->held[GK_HOLD_TUNNEL], 2);
	assert_int_equal(gk_fds.held, 6);
	assert_false(gk_limit_hold_room(f->a, GK_HOLD_TUNNEL));
	/* at the cap: refused, the handshake still held */
	assert_int_equal(gk_hold_transfer(&hs[2], &tn[2], GK_HOLD_TUNNEL, 2,
	    end_cb), GK_LIM_TUNNELS);
	assert_true(hs[2].held);
	assert_int_equal(gk_fds.held, 6);
	/* no cage yet (a token will name it), then its cage */
	assert_int_equal(gk_hold_take(&anon, NULL, GK_HOLD_HANDSHAKE, 2,
	    end_cb), GK_LIM__MAX);
	assert_int_equal(gk_hold_move(&anon, f->b, GK_HOLD_HANDSHAKE, 2),
	    GK_LIM__MAX);
	assert_int_equal(gk_limit_of(f->b)->held[GK_HOLD_HANDSHAKE], 1);
	assert_int_equal(gk_limit_of(f->b)->fds, 2);
	assert_int_equal(gk_fds.held, 8);
	gk_hold_drop(&anon);
	gk_hold_drop(&hs[2]);
	gk_hold_drop(&tn[0]);
	gk_hold_drop(&tn[1]);
	assert_int_equal(gk_limit_of(f->a)->fds, 0);
}

static void
test_anon_budget(void **state)
{
	struct gk_hold h[5];
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(gk_hold_take(&h[i], NULL, GK_HOLD_HANDSHAKE,
		    2, end_cb), GK_LIM__MAX);
	assert_int_equal(gk_hold_take(&h[4], NULL, GK_HOLD_HANDSHAKE, 2,
	    end_cb), GK_LIM_HANDSHAKES);
	for (i = 0; i < 4; i++)
		gk_hold_drop(&h[i]);
}

static void
test_descriptor_shares(void **state)
{
	struct fix *f = *state;
	struct gk_hold ha, hb, hc;
	struct gk_cage *c3 = cage(f->t, "10.0.0.4");
	struct gk_limits l = { 0 };

	gk_limit_configure(&l, NULL);	/* no caps: only descriptors */
	/* budget 900: half of it freely */
	assert_int_equal(gk_hold_take(&ha, f->a, GK_HOLD_TUNNEL, 450, end_cb),
	    GK_LIM__MAX);
	/* past half, a cage gets its share: 900 / 2 holders */
	assert_false(gk_hold_fds(&ha, 1));
	assert_int_equal(gk_stats.limit_events[GK_LIM_DESCRIPTORS], 1);
	assert_int_equal(gk_hold_take(&hb, f->b, GK_HOLD_TUNNEL, 300, end_cb),
	    GK_LIM__MAX);
	/* a third cage: 900 / 3 = 300 each; b is at it */
	assert_int_equal(gk_hold_take(&hc, c3, GK_HOLD_TUNNEL, 150, end_cb),
	    GK_LIM__MAX);
	assert_false(gk_hold_fds(&hb, 1));
	assert_true(gk_hold_fds(&hc, -50));
	/* the budget itself: never past it, whoever asks */
	assert_false(gk_limit_fds_take(1000));
	assert_true(gk_limit_fds_take(2));
	gk_limit_fds_give(2);
	gk_hold_drop(&ha);
	assert_true(gk_hold_fds(&hb, 100));	/* room again */
	gk_hold_drop(&hb);
	gk_hold_drop(&hc);
	gk_cage_end(c3, "test");
}

static void
test_audit_lines(void **state)
{
	struct fix *f = *state;

	assert_true(gk_limit_audit_line(f->a, 7000));
	assert_true(gk_limit_audit_line(f->a, 7100));
	assert_true(gk_limit_audit_line(f->a, 7200));
	assert_false(gk_limit_audit_line(f->a, 7900));
	assert_true(gk_limit_audit_line(f->b, 7900));
	assert_true(gk_limit_audit_line(f->a, 8000));	/* a new second */
	assert_true(gk_limit_audit_ok(NULL, "proxy.deny", "x"));
}

/* control-connections: a count is taken as it is; auto is half of what
 * the reserve leaves, and never 0. */
static void
test_control_conns(void **state)
{
	struct gk_fd_budget was = gk_fds;

	(void)state;
	assert_int_equal(gk_limit_control_conns(4), 4);
	assert_int_equal(gk_limit_control_conns(1048576), 1048576);
	assert_int_equal(gk_limit_control_conns(0), 450);	/* 1000 - 100 */
	gk_fds.limit = 65536;
	gk_fds.reserve = 512;
	assert_int_equal(gk_limit_control_conns(0), 32512);
	gk_fds.limit = 16;
	gk_fds.reserve = 16;
	assert_int_equal(gk_limit_control_conns(0), 1);
	gk_fds.limit = UINT32_MAX;	/* RLIM_INFINITY */
	gk_fds.reserve = 512;
	assert_int_equal(gk_limit_control_conns(0), (UINT32_MAX - 512) / 2);
	gk_fds = was;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dns_rate, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upstream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holds_cap_and_end, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_transfer_and_move, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_anon_budget, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_control_conns, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_descriptor_shares, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_audit_lines, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
