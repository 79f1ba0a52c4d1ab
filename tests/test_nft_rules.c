/*
 * Tests for nft_rules, the pure ruleset builder: chains (hooks,
 * priorities, policy accept), the two sets, every rule's expression list
 * as the kernel will receive it, the transparent and non-53 DNS variants.
 * The batches are in test_nft_batch.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>

#include "nft/nft_int.h"
#include "tests/nft_testutil.h"



/* ---- rendering expressions as short readable strings ---- */

static const char *
reg(uint32_t r)
{
	switch (r) {
	case NFT_REG_VERDICT:
		return "rv";
	case NFT_REG_1:
		return "r1";
	case NFT_REG_2:
		return "r2";
	case NFT_REG32_00:
		return "r32_0";
	case NFT_REG32_01:
		return "r32_1";
	case NFT_REG32_04:
		return "r32_4";
	default:
		return "r?";
	}
}

static const char *
meta_key(uint32_t k)
{
	switch (k) {
	case NFT_META_IIFNAME:
		return "iifname";
	case NFT_META_IIF:
		return "iif";
	case NFT_META_OIFNAME:
		return "oifname";
	case NFT_META_NFPROTO:
		return "nfproto";
	case NFT_META_L4PROTO:
		return "l4proto";
	default:
		return "?";
	}
}

static void
hex(const struct nftnl_expr *e, uint16_t attr, char *out, size_t len)
{
	const uint8_t *d;
	uint32_t n = 0, i;

	d = nftnl_expr_get(e, attr, &n);
	out[0] = '\0';
	for (i = 0; d != NULL && i < n && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, len - 2 * i, "%02x", d[i]);
}

static void
render_imm(const struct nftnl_expr *e, char *out, size_t len)
{
	char h[64];
	uint32_t v;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
		v = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);
		snprintf(out, len, "verdict %s", v == NF_ACCEPT ? "accept" :
		    v == NF_DROP ? "drop" : "?");
		return;
	}
	hex(e, NFTNL_EXPR_IMM_DATA, h, sizeof(h));
	snprintf(out, len, "imm %s %s",
	    reg(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG)), h);
}

static void
render(const struct nftnl_expr *e, char *out, size_t len)
{
	const char *n = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	char h[64];

#define U(a) nftnl_expr_get_u32(e, (a))
	if (strcmp(n, "meta") == 0)
		snprintf(out, len, "meta %s>%s", meta_key(U(NFTNL_EXPR_META_KEY)),
		    reg(U(NFTNL_EXPR_META_DREG)));
	else if (strcmp(n, "cmp") == 0) {
		hex(e, NFTNL_EXPR_CMP_DATA, h, sizeof(h));
		snprintf(out, len, "cmp %s %s %s", U(NFTNL_EXPR_CMP_OP) ==
		    NFT_CMP_EQ ? "eq" : U(NFTNL_EXPR_CMP_OP) == NFT_CMP_NEQ ?
		    "neq" : "?", reg(U(NFTNL_EXPR_CMP_SREG)), h);
	} else if (strcmp(n, "payload") == 0)
		snprintf(out, len, "payload %s %u %u>%s",
		    U(NFTNL_EXPR_PAYLOAD_BASE) == NFT_PAYLOAD_NETWORK_HEADER ?
		    "nh" : U(NFTNL_EXPR_PAYLOAD_BASE) ==
		    NFT_PAYLOAD_TRANSPORT_HEADER ? "th" : "?",
		    U(NFTNL_EXPR_PAYLOAD_OFFSET), U(NFTNL_EXPR_PAYLOAD_LEN),
		    reg(U(NFTNL_EXPR_PAYLOAD_DREG)));
	else if (strcmp(n, "lookup") == 0)
		snprintf(out, len, "lookup %s %s id%u%s",
		    reg(U(NFTNL_EXPR_LOOKUP_SREG)),
		    nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET),
		    U(NFTNL_EXPR_LOOKUP_SET_ID), U(NFTNL_EXPR_LOOKUP_FLAGS) &
		    NFT_LOOKUP_F_INV ? " inv" : "");
	else if (strcmp(n, "immediate") == 0)
		render_imm(e, out, len);
	else if (strcmp(n, "reject") == 0)
		snprintf(out, len, "reject %s %u", U(NFTNL_EXPR_REJECT_TYPE) ==
		    NFT_REJECT_TCP_RST ? "tcp-rst" : U(NFTNL_EXPR_REJECT_TYPE) ==
		    NFT_REJECT_ICMP_UNREACH ? "icmp" : "?",
		    nftnl_expr_get_u8(e, NFTNL_EXPR_REJECT_CODE));
	else if (strcmp(n, "nat") == 0)
		snprintf(out, len, "nat %s ipv%d addr=%s port=%s flags=%u",
		    U(NFTNL_EXPR_NAT_TYPE) == NFT_NAT_DNAT ? "dnat" : "?",
		    U(NFTNL_EXPR_NAT_FAMILY) == NFPROTO_IPV4 ? 4 : 0,
		    reg(U(NFTNL_EXPR_NAT_REG_ADDR_MIN)),
		    reg(U(NFTNL_EXPR_NAT_REG_PROTO_MIN)),
		    U(NFTNL_EXPR_NAT_FLAGS));
	else if (strcmp(n, "redir") == 0)
		snprintf(out, len, "redir port=%s flags=%u",
		    reg(U(NFTNL_EXPR_REDIR_REG_PROTO_MIN)),
		    U(NFTNL_EXPR_REDIR_FLAGS));
	else if (strcmp(n, "ct") == 0)
		snprintf(out, len, "ct %s>%s", U(NFTNL_EXPR_CT_KEY) ==
		    NFT_CT_STATE ? "state" : U(NFTNL_EXPR_CT_KEY) ==
		    NFT_CT_STATUS ? "status" : "?",
		    reg(U(NFTNL_EXPR_CT_DREG)));
	else if (strcmp(n, "bitwise") == 0) {
		hex(e, NFTNL_EXPR_BITWISE_MASK, h, sizeof(h));
		snprintf(out, len, "bitwise %s>%s mask %s",
		    reg(U(NFTNL_EXPR_BITWISE_SREG)),
		    reg(U(NFTNL_EXPR_BITWISE_DREG)), h);
	} else if (strcmp(n, "limit") == 0)
		snprintf(out, len, "limit %llu/%llus burst %u %s",
		    (unsigned long long)nftnl_expr_get_u64(e,
		    NFTNL_EXPR_LIMIT_RATE), (unsigned long long)
		    nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT),
		    U(NFTNL_EXPR_LIMIT_BURST), U(NFTNL_EXPR_LIMIT_TYPE) ==
		    NFT_LIMIT_PKTS ? "pkts" : "?");
	else if (strcmp(n, "log") == 0)
		snprintf(out, len, "log group %u snaplen %u qthreshold %u",
		    nftnl_expr_get_u16(e, NFTNL_EXPR_LOG_GROUP),
		    U(NFTNL_EXPR_LOG_SNAPLEN),
		    nftnl_expr_get_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD));
	else
		snprintf(out, len, "%s ?", n);
#undef U
}

/* A rule as "expr; expr; ...". */
static void
render_rule(struct nftnl_rule *r, char *out, size_t len)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	struct nftnl_expr *e;
	char one[160];
	size_t off = 0;

	assert_non_null(it);
	out[0] = '\0';
	while ((e = nftnl_expr_iter_next(it)) != NULL) {
		render(e, one, sizeof(one));
		off += (size_t)snprintf(out + off, len - off, "%s%s",
		    off ? "; " : "", one);
		assert_true(off < len);
	}
	nftnl_expr_iter_destroy(it);
}

/* Rendered rules of one chain, NULL-terminated, into rules[]. */
static size_t
chain_rules(struct nftnl_chain *ch, char rules[][1024], size_t max)
{
	struct nftnl_rule_iter *it = nftnl_rule_iter_create(ch);
	struct nftnl_rule *r;
	size_t n = 0;

	assert_non_null(it);
	while ((r = nftnl_rule_iter_next(it)) != NULL) {
		assert_true(n < max);
		assert_string_equal(nftnl_rule_get_str(r, NFTNL_RULE_TABLE),
		    NFT_TABLE);
		assert_string_equal(nftnl_rule_get_str(r, NFTNL_RULE_CHAIN),
		    nftnl_chain_get_str(ch, NFTNL_CHAIN_NAME));
		assert_int_equal(nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY),
		    NFPROTO_INET);
		render_rule(r, rules[n++], 1024);
	}
	nftnl_rule_iter_destroy(it);
	return n;
}

/* ---- expected rules (default ports, gateway 10.143.0.1) ---- */

#define GK	"meta iifname>r1; cmp eq r1 676b2d"	/* iifname "gk-*" */
#define V4	"meta nfproto>r1; cmp eq r1 02"
#define NOTGW	"payload nh 16 4>r1; cmp neq r1 0a8f0001"
#define TOGW	"payload nh 16 4>r1; cmp eq r1 0a8f0001"
#define UDP	"meta l4proto>r1; cmp eq r1 11"
#define TCP	"meta l4proto>r1; cmp eq r1 06"
#define DPORT(h) "payload th 2 2>r1; cmp eq r1 " h
#define DNAT53	"imm r1 0a8f0001; imm r2 0035; " \
		"nat dnat ipv4 addr=r1 port=r2 flags=2"
/* iifname . ip saddr @transparent */
#define INTP	"meta iifname>r32_0; payload nh 12 4>r32_4; " \
		"lookup r32_0 transparent id2"
/* meta iif . ip daddr @pins */
#define PINNED	"meta iif>r32_0; payload nh 16 4>r32_1; lookup r32_0 pins id3"
/* iifname . ip saddr @open */
#define INOPEN	"meta iifname>r32_0; payload nh 12 4>r32_4; " \
		"lookup r32_0 open id4"
/* tcp flags & (syn | ack) == syn */
#define SYN	"payload th 13 1>r1; bitwise r1>r1 mask 12; cmp eq r1 02"
/* ct status dnat: IPS_DST_NAT (0x20), host order */
#define DNATED	"ct status>r1; bitwise r1>r1 mask 20000000; " \
		"cmp neq r1 00000000"

static const char *const want_default[NFT_CH_MAX][10] = {
	[NFT_CH_GUARD] = {
		GK "; meta nfproto>r1; cmp neq r1 02; verdict drop",
		GK "; " V4 "; meta iifname>r32_0; payload nh 12 4>r32_4; "
		    "lookup r32_0 cages id1 inv; verdict drop",
	},
	[NFT_CH_NAT_PRE] = {
		GK "; " V4 "; " NOTGW "; " UDP "; " DPORT("0035") "; " DNAT53,
		GK "; " V4 "; " NOTGW "; " TCP "; " DPORT("0035") "; " DNAT53,
	},
	[NFT_CH_FILTER_PRE] = {
		GK "; " V4 "; " NOTGW "; " UDP "; reject icmp 3",
		GK "; " V4 "; " NOTGW "; " TCP "; reject tcp-rst 0",
		GK "; " V4 "; " NOTGW "; reject icmp 13",
	},
	[NFT_CH_INPUT] = {
		GK "; ct state>r1; bitwise r1>r1 mask 06000000; "
		    "cmp neq r1 00000000; verdict accept",
		GK "; " V4 "; " TOGW "; " UDP "; " DPORT("0035")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0035")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0438")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0c38")
		    "; verdict accept",
		GK "; " V4 "; " UDP "; reject icmp 3",
		GK "; " V4 "; " TCP "; reject tcp-rst 0",
		GK "; verdict drop",
	},
	[NFT_CH_FORWARD] = {
		GK "; verdict drop",
		"meta oifname>r1; cmp eq r1 676b2d; verdict drop",
	},
};

static void
check_chains(const struct nft_ruleset *rs)
{
	static const struct {
		const char	*name, *type;
		uint32_t	 hook;
		int32_t		 prio;
	} want[NFT_CH_MAX] = {
		{ "guard", "filter", NF_INET_PRE_ROUTING, -300 },
		{ "nat_pre", "nat", NF_INET_PRE_ROUTING, -100 },
		{ "filter_pre", "filter", NF_INET_PRE_ROUTING, 0 },
		{ "input", "filter", NF_INET_LOCAL_IN, 0 },
		{ "forward", "filter", NF_INET_FORWARD, 0 },
	};
	struct nftnl_chain *ch;
	size_t i;

	for (i = 0; i < NFT_CH_MAX; i++) {
		ch = rs->chain[i];
		assert_string_equal(nftnl_chain_get_str(ch, NFTNL_CHAIN_NAME),
		    want[i].name);
		assert_string_equal(nft_chain_name(i), want[i].name);
		assert_string_equal(nftnl_chain_get_str(ch, NFTNL_CHAIN_TYPE),
		    want[i].type);
		assert_string_equal(nftnl_chain_get_str(ch, NFTNL_CHAIN_TABLE),
		    NFT_TABLE);
		assert_int_equal(nftnl_chain_get_u32(ch, NFTNL_CHAIN_HOOKNUM),
		    want[i].hook);
		assert_int_equal(nftnl_chain_get_s32(ch, NFTNL_CHAIN_PRIO),
		    want[i].prio);
		/* Never policy drop: it would drop for the whole host. */
		assert_int_equal(nftnl_chain_get_u32(ch, NFTNL_CHAIN_POLICY),
		    NF_ACCEPT);
	}
}

/* Transparent mode: every rule of every chain, in order. */
static const char *const want_tp[NFT_CH_MAX][10] = {
	[NFT_CH_GUARD] = {
		GK "; meta nfproto>r1; cmp neq r1 02; verdict drop",
		GK "; " V4 "; meta iifname>r32_0; payload nh 12 4>r32_4; "
		    "lookup r32_0 cages id1 inv; verdict drop",
	},
	[NFT_CH_NAT_PRE] = {
		GK "; " V4 "; " NOTGW "; " UDP "; " DPORT("0035") "; " DNAT53,
		GK "; " V4 "; " NOTGW "; " TCP "; " DPORT("0035") "; " DNAT53,
		/* After the DNS rules, so DNS to any address still goes to
		 * the resolver; only cages in set transparent, and only to
		 * an address pinned to the cage (or any, in set open). */
		GK "; " V4 "; " NOTGW "; " TCP "; " INTP "; " PINNED
		    "; imm r1 3a99; redir port=r1 flags=2",
		GK "; " V4 "; " NOTGW "; " TCP "; " INTP "; " INOPEN
		    "; imm r1 3a99; redir port=r1 flags=2",
	},
	[NFT_CH_FILTER_PRE] = {
		/* UDP (QUIC too) gets port-unreachable; the TCP of cages
		 * not redirected a reset, a transparent cage's SYN logged
		 * for gatekeeperd first. */
		GK "; " V4 "; " NOTGW "; " UDP "; reject icmp 3",
		GK "; " V4 "; " NOTGW "; " TCP "; " SYN "; " INTP
		    "; limit 2000/1s burst 500 pkts; "
		    "log group 26475 snaplen 64 qthreshold 1",
		GK "; " V4 "; " NOTGW "; " TCP "; reject tcp-rst 0",
		GK "; " V4 "; " NOTGW "; reject icmp 13",
	},
	[NFT_CH_INPUT] = {
		GK "; ct state>r1; bitwise r1>r1 mask 06000000; "
		    "cmp neq r1 00000000; verdict accept",
		GK "; " V4 "; " TOGW "; " UDP "; " DPORT("0035")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0035")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0438")
		    "; verdict accept",
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("0c38")
		    "; verdict accept",
		/* Redirected connections from set transparent only; a
		 * direct one falls through to the reset below. */
		GK "; " V4 "; " TOGW "; " TCP "; " DPORT("3a99") "; " DNATED
		    "; " INTP "; verdict accept",
		GK "; " V4 "; " UDP "; reject icmp 3",
		GK "; " V4 "; " TCP "; reject tcp-rst 0",
		GK "; verdict drop",
	},
	[NFT_CH_FORWARD] = {
		GK "; verdict drop",
		"meta oifname>r1; cmp eq r1 676b2d; verdict drop",
	},
};

static void
check_rules(const struct nft_ruleset *rs,
    const char *const want[NFT_CH_MAX][10])
{
	char got[16][1024];
	size_t i, j, n;

	for (i = 0; i < NFT_CH_MAX; i++) {
		n = chain_rules(rs->chain[i], got, 16);
		for (j = 0; j < n; j++) {
			if (j >= 10 || want[i][j] == NULL)
				fail_msg("%s: extra rule %zu: %s",
				    nft_chain_name(i), j, got[j]);
			if (strcmp(got[j], want[i][j]) != 0)
				fail_msg("%s rule %zu:\n got  %s\n want %s",
				    nft_chain_name(i), j, got[j], want[i][j]);
		}
		if (n < 10 && want[i][n] != NULL)
			fail_msg("%s: missing rule %zu: %s", nft_chain_name(i),
			    n, want[i][n]);
	}
}

/* The sets: ifname . ipv4_addr (pins: ifindex . ipv4_addr, with
 * timeouts), ids 1 to 4 (the lookups use them). */
static void
check_sets(const struct nft_ruleset *rs)
{
	const struct nftnl_set *s[4] = { rs->set, rs->tset, rs->pset,
	    rs->oset };
	static const char *const name[4] = { "cages", "transparent", "pins",
	    "open" };
	size_t i;

	for (i = 0; i < 4; i++) {
		assert_non_null(s[i]);
		assert_string_equal(nftnl_set_get_str(s[i], NFTNL_SET_NAME),
		    name[i]);
		assert_string_equal(nftnl_set_get_str(s[i], NFTNL_SET_TABLE),
		    NFT_TABLE);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_FAMILY),
		    NFPROTO_INET);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_KEY_LEN),
		    i == 2 ? 8 : 20);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_KEY_TYPE),
		    (i == 2 ? 20 : 41) << 6 | 7);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_ID), i + 1);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_FLAGS),
		    i == 2 ? NFT_SET_TIMEOUT : 0);
	}
}

static void
test_default_ruleset(void **state)
{
	struct nft_conf c = nft_test_conf(53, 0);
	struct nft_ruleset rs;

	(void)state;
	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	check_chains(&rs);
	check_sets(&rs);
	check_rules(&rs, want_default);
	nft_ruleset_clear(&rs);
}

/* Every rule of every variant starts with the cage-link match. */
static void
test_every_rule_matches_cage_links(void **state)
{
	static const uint16_t v[][2] = { { 53, 0 }, { 53, 15001 },
	    { 5353, 0 }, { 5353, 15001 } };
	struct nft_ruleset rs;
	struct nft_conf c;
	char got[16][1024];
	size_t i, k, j, n;

	(void)state;
	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		c = nft_test_conf(v[k][0], v[k][1]);
		assert_int_equal(nft_ruleset_build(&rs, &c), 0);
		check_chains(&rs);
		for (i = 0; i < NFT_CH_MAX; i++) {
			n = chain_rules(rs.chain[i], got, 16);
			assert_true(n > 0);
			for (j = 0; j < n; j++)
				if (strncmp(got[j], GK, strlen(GK)) != 0 &&
				    strncmp(got[j], "meta oifname>r1; cmp eq "
				    "r1 676b2d;", 33) != 0)
					fail_msg("%s: rule without gk-*: %s",
					    nft_chain_name(i), got[j]);
		}
		nft_ruleset_clear(&rs);
	}
}

static void
test_transparent(void **state)
{
	struct nft_conf c = nft_test_conf(53, 15001);
	struct nft_ruleset rs;

	(void)state;
	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	check_chains(&rs);
	check_sets(&rs);
	check_rules(&rs, want_tp);
	nft_ruleset_clear(&rs);
}

/* Without a transparent port nothing looks at set transparent. */
static void
test_no_transparent_lookup(void **state)
{
	struct nft_conf c = nft_test_conf(53, 0);
	struct nft_ruleset rs;
	char got[16][1024];
	size_t i, j, n;

	(void)state;
	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	for (i = 0; i < NFT_CH_MAX; i++) {
		n = chain_rules(rs.chain[i], got, 16);
		for (j = 0; j < n; j++)
			if (strstr(got[j], "transparent") != NULL ||
			    strstr(got[j], "redir") != NULL ||
			    strstr(got[j], "ct status") != NULL)
				fail_msg("%s: %s", nft_chain_name(i), got[j]);
	}
	nft_ruleset_clear(&rs);
}

/* The resolver on another port: gateway:53 is translated as well. */
static void
test_dns_port(void **state)
{
	struct nft_conf c = nft_test_conf(5353, 0);
	struct nft_ruleset rs;
	char got[16][1024];
	size_t n;

	(void)state;
	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	n = chain_rules(rs.chain[NFT_CH_NAT_PRE], got, 16);
	assert_int_equal(n, 2);
	assert_string_equal(got[0], GK "; " V4 "; " UDP "; " DPORT("0035")
	    "; imm r1 0a8f0001; imm r2 14e9; "
	    "nat dnat ipv4 addr=r1 port=r2 flags=2");
	n = chain_rules(rs.chain[NFT_CH_INPUT], got, 16);
	assert_string_equal(got[1], GK "; " V4 "; " TOGW "; " UDP "; "
	    DPORT("14e9") "; verdict accept");
	nft_ruleset_clear(&rs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_ruleset),
		cmocka_unit_test(test_every_rule_matches_cage_links),
		cmocka_unit_test(test_transparent),
		cmocka_unit_test(test_no_transparent_lookup),
		cmocka_unit_test(test_dns_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
