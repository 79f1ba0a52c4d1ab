/*
 * Tests for nft_pool: subnet validation, reserved addresses (network,
 * broadcast, gateway), exhaustion, next-fit order, that an address
 * being torn down is never handed out before its teardown completed, and
 * the per-address flag (set only while in use, kept while draining,
 * cleared on the way back to free).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nft/nft_int.h"

static struct in_addr
A(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		fail_msg("bad address literal %s", s);
	return a;
}

static const char *
S(struct in_addr a)
{
	static char buf[4][INET_ADDRSTRLEN];
	static int i;

	i = (i + 1) % 4;
	return inet_ntop(AF_INET, &a, buf[i], sizeof(buf[i]));
}

static struct nft_pool *
pool(const char *net, uint8_t prefix, const char *gw)
{
	char err[256];
	struct nft_pool *pl;

	pl = nft_pool_new(A(net), prefix, A(gw), err, sizeof(err));
	if (pl == NULL)
		fail_msg("%s/%u gw %s refused: %s", net, prefix, gw, err);
	return pl;
}

static void
test_new(void **state)
{
	static const struct {
		const char	*net;
		uint8_t		 prefix;
		const char	*gw;
		long		 nfree;		/* -1: refused */
		const char	*errpart;
	} cases[] = {
		{ "10.143.0.0", 16, "10.143.0.1", 65533, NULL },
		{ "10.143.0.0", 24, "10.143.0.1", 253, NULL },
		{ "10.143.0.0", 24, "10.143.0.200", 253, NULL },
		{ "10.143.0.0", 29, "10.143.0.1", 5, NULL },
		{ "10.143.0.0", 30, "10.143.0.1", 1, NULL },
		{ "10.143.0.4", 30, "10.143.0.1", 2, NULL },	/* gw outside */
		{ "10.0.0.0", 8, "10.0.0.1", 16777213, NULL },
		{ "10.143.0.0", 31, "10.143.0.1", -1, "/31" },
		{ "10.143.0.0", 32, "10.143.0.1", -1, "/32" },
		{ "10.0.0.0", 7, "10.0.0.1", -1, "/7" },
		{ "10.143.0.1", 16, "10.143.0.1", -1, "host bits" },
		{ "10.143.0.8", 28, "10.143.0.1", -1, "host bits" },
		{ "10.143.0.0", 24, "10.143.0.0", -1, "network or broadcast" },
		{ "10.143.0.0", 24, "10.143.0.255", -1, "network or broadcast" },
	};
	struct nft_pool *pl;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		pl = nft_pool_new(A(cases[i].net), cases[i].prefix,
		    A(cases[i].gw), err, sizeof(err));
		if (cases[i].nfree == -1) {
			if (pl != NULL)
				fail_msg("%s/%u accepted", cases[i].net,
				    cases[i].prefix);
			assert_int_equal(errno, EINVAL);
			if (strstr(err, cases[i].errpart) == NULL)
				fail_msg("%s/%u: '%s' lacks '%s'",
				    cases[i].net, cases[i].prefix, err,
				    cases[i].errpart);
			continue;
		}
		if (pl == NULL)
			fail_msg("%s/%u refused: %s", cases[i].net,
			    cases[i].prefix, err);
		assert_int_equal(nft_pool_nfree(pl), cases[i].nfree);
		nft_pool_free(pl);
	}
	nft_pool_free(NULL);
}

static void
test_states(void **state)
{
	static const struct {
		const char		*addr;
		enum nft_pool_state	 st;
	} cases[] = {
		{ "10.143.0.0", NFT_POOL_RESERVED },
		{ "10.143.0.1", NFT_POOL_RESERVED },
		{ "10.143.0.7", NFT_POOL_RESERVED },
		{ "10.143.0.2", NFT_POOL_FREE },
		{ "10.143.0.6", NFT_POOL_FREE },
		{ "10.143.0.8", NFT_POOL_OUTSIDE },
		{ "10.142.255.255", NFT_POOL_OUTSIDE },
		{ "192.0.2.1", NFT_POOL_OUTSIDE },
	};
	struct nft_pool *pl = pool("10.143.0.0", 29, "10.143.0.1");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (nft_pool_state(pl, A(cases[i].addr)) != cases[i].st)
			fail_msg("%s: state %d, want %d", cases[i].addr,
			    nft_pool_state(pl, A(cases[i].addr)),
			    cases[i].st);
		if (cases[i].st == NFT_POOL_FREE)
			continue;
		/* Nothing moves an address that is not in the pool. */
		assert_int_equal(nft_pool_release(pl, A(cases[i].addr)), -1);
		assert_int_equal(nft_pool_drain(pl, A(cases[i].addr)), -1);
		assert_int_equal(nft_pool_drained(pl, A(cases[i].addr)), -1);
	}
	nft_pool_free(pl);
}

/* Every transition, and every wrong one. */
static void
test_transitions(void **state)
{
	struct nft_pool *pl = pool("10.143.0.0", 29, "10.143.0.1");
	struct in_addr a;

	(void)state;
	assert_int_equal(nft_pool_alloc(pl, &a), 0);
	assert_string_equal(S(a), "10.143.0.2");
	assert_int_equal(nft_pool_state(pl, a), NFT_POOL_USED);
	assert_int_equal(nft_pool_drained(pl, a), -1);	/* USED */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(nft_pool_drain(pl, a), 0);
	assert_int_equal(nft_pool_state(pl, a), NFT_POOL_DRAINING);
	assert_int_equal(nft_pool_release(pl, a), -1);	/* DRAINING */
	assert_int_equal(nft_pool_drain(pl, a), -1);
	assert_int_equal(nft_pool_nfree(pl), 4);
	assert_int_equal(nft_pool_drained(pl, a), 0);
	assert_int_equal(nft_pool_state(pl, a), NFT_POOL_FREE);
	assert_int_equal(nft_pool_nfree(pl), 5);
	assert_int_equal(nft_pool_release(pl, a), -1);	/* FREE */
	assert_int_equal(nft_pool_drain(pl, a), -1);
	assert_int_equal(nft_pool_drained(pl, a), -1);
	assert_int_equal(nft_pool_nfree(pl), 5);
	nft_pool_free(pl);
}

/* The flag: only on USED addresses; survives draining; never outlives
 * the address's time out of the pool. */
static void
test_flag(void **state)
{
	struct nft_pool *pl = pool("10.143.0.0", 29, "10.143.0.1");
	struct in_addr a, b;

	(void)state;
	assert_int_equal(nft_pool_alloc(pl, &a), 0);
	assert_int_equal(nft_pool_alloc(pl, &b), 0);
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_TP, true), 0);
	assert_true(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	assert_false(nft_pool_flag(pl, b, NFT_POOL_F_TP));	/* per address */
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_OPEN));	/* per flag */
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_FLAGS, true), -1);
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_OPEN, true), 0);
	assert_true(nft_pool_flag(pl, a, NFT_POOL_F_OPEN));
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_TP, false), 0);
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_TP, true), 0);
	/* Draining keeps it (teardown reads it), and it cannot change. */
	assert_int_equal(nft_pool_drain(pl, a), 0);
	assert_true(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_TP, false),
	    -1);
	assert_int_equal(errno, EINVAL);
	assert_true(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	/* Back to FREE: cleared, and not settable. */
	assert_int_equal(nft_pool_drained(pl, a), 0);
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_OPEN));
	assert_int_equal(nft_pool_set_flag(pl, a, NFT_POOL_F_TP, true), -1);
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	/* Release clears it too. */
	assert_int_equal(nft_pool_set_flag(pl, b, NFT_POOL_F_TP, true), 0);
	assert_int_equal(nft_pool_release(pl, b), 0);
	assert_false(nft_pool_flag(pl, b, NFT_POOL_F_TP));
	/* Reserved and outside addresses: never flagged. */
	assert_int_equal(nft_pool_set_flag(pl, A("10.143.0.1"), NFT_POOL_F_TP,
	    true), -1);
	assert_int_equal(nft_pool_set_flag(pl, A("10.143.0.0"), NFT_POOL_F_TP,
	    true), -1);
	assert_int_equal(nft_pool_set_flag(pl, A("192.0.2.1"), NFT_POOL_F_TP,
	    true), -1);
	assert_false(nft_pool_flag(pl, A("10.143.0.1"), NFT_POOL_F_TP));
	assert_false(nft_pool_flag(pl, A("192.0.2.1"), NFT_POOL_F_TP));
	/* A reused address starts unflagged. */
	while (nft_pool_alloc(pl, &b) == 0 && b.s_addr != a.s_addr)
		;
	assert_int_equal(b.s_addr, a.s_addr);
	assert_false(nft_pool_flag(pl, a, NFT_POOL_F_TP));
	nft_pool_free(pl);
}

/* One step of a sequence: alloc (+), release (r), drain (d) or drained
 * (D) of 10.143.0.<n>; "-" expects exhaustion. */
static void
run_step(struct nft_pool *pl, const char *st, size_t i, size_t j)
{
	struct in_addr a, want;
	char buf[INET_ADDRSTRLEN];
	int rc;

	if (st[0] == '-') {
		if (nft_pool_alloc(pl, &a) != -1)
			fail_msg("case %zu step %zu: got %s, want exhaustion",
			    i, j, S(a));
		assert_int_equal(errno, ENOSPC);
		return;
	}
	snprintf(buf, sizeof(buf), "10.143.0%s", st + 1);
	want = A(buf);
	if (st[0] == '+') {
		assert_int_equal(nft_pool_alloc(pl, &a), 0);
		if (a.s_addr != want.s_addr)
			fail_msg("case %zu step %zu: got %s, want %s", i, j,
			    S(a), S(want));
		return;
	}
	rc = st[0] == 'r' ? nft_pool_release(pl, want) : st[0] == 'd' ?
	    nft_pool_drain(pl, want) : nft_pool_drained(pl, want);
	if (rc != 0)
		fail_msg("case %zu step %zu (%s) failed", i, j, st);
}

/* Allocation order, step by step (see run_step). */
static void
test_sequences(void **state)
{
	static const struct {
		const char	*net;
		uint8_t		 prefix;
		const char	*gw;
		const char	*steps[16];
	} cases[] = {
		/* /29: .2-.6, then exhausted; .0 .1 .7 never. */
		{ "10.143.0.0", 29, "10.143.0.1", { "+.2", "+.3", "+.4",
		    "+.5", "+.6", "-", "-" } },
		/* Next-fit: a released address waits for the wrap. */
		{ "10.143.0.0", 29, "10.143.0.1", { "+.2", "+.3", "r.2",
		    "+.4", "+.5", "+.6", "+.2", "-", "r.4", "+.4" } },
		/* Release-before-reuse: draining is not free. */
		{ "10.143.0.0", 30, "10.143.0.1", { "+.2", "-", "d.2", "-",
		    "D.2", "+.2", "-" } },
		{ "10.143.0.0", 29, "10.143.0.1", { "+.2", "+.3", "+.4",
		    "+.5", "+.6", "d.3", "-", "D.3", "+.3", "-" } },
		/* The gateway in the middle is skipped. */
		{ "10.143.0.0", 29, "10.143.0.4", { "+.1", "+.2", "+.3",
		    "+.5", "+.6", "-" } },
		/* Gateway outside the subnet: all hosts. */
		{ "10.143.0.8", 30, "10.143.0.1", { "+.9", "+.10", "-" } },
	};
	struct nft_pool *pl;
	const char *st;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pl = pool(cases[i].net, cases[i].prefix, cases[i].gw);
		for (j = 0; (st = cases[i].steps[j]) != NULL; j++)
			run_step(pl, st, i, j);
		nft_pool_free(pl);
	}
}

/* A /16 to the last address: all distinct, none reserved. */
static void
test_exhaust_16(void **state)
{
	struct nft_pool *pl = pool("10.143.0.0", 16, "10.143.0.1");
	uint8_t *seen = calloc(65536, 1);
	struct in_addr a, gw = A("10.143.0.1");
	uint32_t off, n;

	(void)state;
	assert_non_null(seen);
	for (n = 0; nft_pool_alloc(pl, &a) == 0; n++) {
		off = ntohl(a.s_addr) - ntohl(A("10.143.0.0").s_addr);
		assert_true(off < 65536);
		assert_int_not_equal(off, 0);
		assert_int_not_equal(off, 65535);
		assert_int_not_equal(a.s_addr, gw.s_addr);
		if (seen[off]++)
			fail_msg("%s handed out twice", S(a));
	}
	assert_int_equal(n, 65533);
	assert_int_equal(nft_pool_nfree(pl), 0);
	/* One back in the middle: it is the only one left. */
	assert_int_equal(nft_pool_drain(pl, A("10.143.128.77")), 0);
	assert_int_equal(nft_pool_alloc(pl, &a), -1);
	assert_int_equal(nft_pool_drained(pl, A("10.143.128.77")), 0);
	assert_int_equal(nft_pool_alloc(pl, &a), 0);
	assert_string_equal(S(a), "10.143.128.77");
	free(seen);
	nft_pool_free(pl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_transitions),
		cmocka_unit_test(test_flag),
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_exhaust_16),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
