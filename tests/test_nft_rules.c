/*
 * Tests for nft_rules, the pure ruleset and batch builder: chains (hooks,
 * priorities, policy accept), the two sets, every rule's expression list
 * as the kernel will receive it, the transparent and non-53 DNS variants,
 * the set element key layout, and the message sequence of each batch
 * (element batches touching set cages and set transparent).
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

static struct nft_conf
conf(uint16_t dns, uint16_t tport)
{
	struct nft_conf c;

	memset(&c, 0, sizeof(c));
	inet_pton(AF_INET, "10.143.0.1", &c.gateway);
	inet_pton(AF_INET, "10.143.0.0", &c.subnet);
	c.prefix = 16;
	c.dns_port = dns;
	c.socks_port = 1080;
	c.http_port = 3128;
	c.transparent_port = tport;
	return c;
}

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
	} else
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
		 * the resolver; only cages in set transparent. */
		GK "; " V4 "; " NOTGW "; " TCP "; " INTP
		    "; imm r1 3a99; redir port=r1 flags=2",
	},
	[NFT_CH_FILTER_PRE] = {
		/* Unchanged: UDP (QUIC too) gets port-unreachable, the
		 * TCP of cages not in set transparent a reset. */
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

/* Both sets: ifname . ipv4_addr, ids 1 and 2 (the lookups use them). */
static void
check_sets(const struct nft_ruleset *rs)
{
	const struct nftnl_set *s[2] = { rs->set, rs->tset };
	static const char *const name[2] = { "cages", "transparent" };
	size_t i;

	for (i = 0; i < 2; i++) {
		assert_non_null(s[i]);
		assert_string_equal(nftnl_set_get_str(s[i], NFTNL_SET_NAME),
		    name[i]);
		assert_string_equal(nftnl_set_get_str(s[i], NFTNL_SET_TABLE),
		    NFT_TABLE);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_FAMILY),
		    NFPROTO_INET);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_KEY_LEN),
		    20);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_KEY_TYPE),
		    41 << 6 | 7);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_ID), i + 1);
		assert_int_equal(nftnl_set_get_u32(s[i], NFTNL_SET_FLAGS), 0);
	}
}

static void
test_default_ruleset(void **state)
{
	struct nft_conf c = conf(53, 0);
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
		c = conf(v[k][0], v[k][1]);
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
	struct nft_conf c = conf(53, 15001);
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
	struct nft_conf c = conf(53, 0);
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
	struct nft_conf c = conf(5353, 0);
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

static void
test_elem_key(void **state)
{
	static const struct {
		const char	*ifname;
		const char	*addr;
		const char	*hex;
	} cases[] = {
		{ "gk-abcd1234", "10.143.0.2",
		    "676b2d616263643132333400000000000a8f0002" },
		{ "gk-0123456789ab", "10.143.255.254",
		    "676b2d30313233343536373839616200" "0a8ffffe" },
		{ "gk-x", "192.0.2.1",
		    "676b2d78000000000000000000000000c0000201" },
	};
	uint8_t key[NFT_KEYLEN];
	char h[2 * NFT_KEYLEN + 1];
	struct in_addr a;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(key, 0xee, sizeof(key));
		inet_pton(AF_INET, cases[i].addr, &a);
		nft_elem_key(key, cases[i].ifname, a);
		for (j = 0; j < NFT_KEYLEN; j++)
			snprintf(h + 2 * j, 3, "%02x", key[j]);
		assert_string_equal(h, cases[i].hex);
	}
}

/* Message types of a finished batch, in order; checks flags and seqs. */
static size_t
batch_types(struct nftnl_batch *b, uint16_t *types, size_t max)
{
	struct iovec iov[8];
	const struct nlmsghdr *nlh;
	uint32_t seq = 0;
	size_t n = 0;
	int i, niov, len;

	niov = nftnl_batch_iovec_len(b);
	assert_true(niov >= 1 && niov <= 8);
	nftnl_batch_iovec(b, iov, (uint32_t)niov);
	for (i = 0; i < niov; i++) {
		nlh = iov[i].iov_base;
		len = (int)iov[i].iov_len;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			assert_true(n < max);
			if (n > 0)
				assert_int_equal(nlh->nlmsg_seq, seq + 1);
			seq = nlh->nlmsg_seq;
			types[n++] = nlh->nlmsg_type;
			if (nlh->nlmsg_type != NFNL_MSG_BATCH_BEGIN &&
			    nlh->nlmsg_type != NFNL_MSG_BATCH_END)
				assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		}
		assert_int_equal(len, 0);
	}
	return n;
}

#define T(x)	((uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | (x)))

/* The ruleset batch: both sets before the chains, then the rules. */
static void
check_ruleset_batch(uint16_t tport, size_t nrules)
{
	struct nft_conf c = conf(53, tport);
	struct nft_ruleset rs;
	struct nftnl_batch *b;
	uint16_t types[64];
	uint32_t seq = 100;
	size_t n, i;

	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_ruleset(b, &rs, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	n = batch_types(b, types, 64);
	/* begin, table (add, delete, add), 2 sets, 5 chains, rules, end */
	assert_int_equal(n, 1 + 3 + 2 + 5 + nrules + 1);
	assert_int_equal(seq, 100 + n);
	assert_int_equal(types[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(types[1], T(NFT_MSG_NEWTABLE));
	assert_int_equal(types[2], T(NFT_MSG_DELTABLE));
	assert_int_equal(types[3], T(NFT_MSG_NEWTABLE));
	assert_int_equal(types[4], T(NFT_MSG_NEWSET));
	assert_int_equal(types[5], T(NFT_MSG_NEWSET));
	for (i = 6; i < 11; i++)
		assert_int_equal(types[i], T(NFT_MSG_NEWCHAIN));
	for (; i < n - 1; i++)
		assert_int_equal(types[i], T(NFT_MSG_NEWRULE));
	assert_int_equal(types[n - 1], NFNL_MSG_BATCH_END);
	nftnl_batch_free(b);
	nft_ruleset_clear(&rs);
}

static void
test_ruleset_batch(void **state)
{
	struct nftnl_batch *b;
	uint16_t types[64];
	uint32_t seq = 1;

	(void)state;
	check_ruleset_batch(0, 17);
	check_ruleset_batch(15001, 19);	/* + redirect, + its accept */

	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_deltable(b, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(batch_types(b, types, 64), 3);
	assert_int_equal(types[1], T(NFT_MSG_DELTABLE));
	nftnl_batch_free(b);
}

/*
 * The key of one NFTA_LIST_ELEM nest. (libnftnl numbers the elements of a
 * list 1, 2, 3... and its own parser then refuses all but the first; the
 * kernel ignores the numbers. So parse with libmnl.)
 */
static const void *
elem_key(const struct nlattr *elem, uint16_t *len)
{
	const struct nlattr *a, *d;

	mnl_attr_for_each_nested(a, elem) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested(d, a) {
			if (mnl_attr_get_type(d) != NFTA_DATA_VALUE)
				continue;
			*len = mnl_attr_get_payload_len(d);
			return mnl_attr_get_payload(d);
		}
	}
	return NULL;
}

/*
 * Check one element message: its set name is returned in *set, its keys
 * must be want[first...] in order. Returns how many elements it carried.
 */
static size_t
check_elem_msg(const struct nlmsghdr *nlh, const char **set,
    const struct nft_elem *const *want, size_t first, size_t n)
{
	const struct nlattr *a, *e;
	uint8_t wkey[NFT_KEYLEN];
	const void *key;
	uint16_t klen;
	size_t got = 0;
	int seen = 0;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case NFTA_SET_ELEM_LIST_TABLE:
			assert_string_equal(mnl_attr_get_str(a), NFT_TABLE);
			seen |= 1;
			break;
		case NFTA_SET_ELEM_LIST_SET:
			*set = mnl_attr_get_str(a);
			seen |= 2;
			break;
		case NFTA_SET_ELEM_LIST_ELEMENTS:
			mnl_attr_for_each_nested(e, a) {
				assert_true(first + got < n);
				assert_non_null(key = elem_key(e, &klen));
				assert_int_equal(klen, NFT_KEYLEN);
				nft_elem_key(wkey, want[first + got]->ifname,
				    want[first + got]->addr);
				assert_memory_equal(key, wkey, NFT_KEYLEN);
				got++;
			}
			break;
		default:
			break;
		}
	}
	assert_int_equal(seen, 3);
	return got;
}

/*
 * The batch holds, in order: messages for set cages with want_c[0..nc),
 * then messages for set transparent with want_t[0..nt); at most 64
 * elements in one message, all of type `type`.
 */
static void
check_elems(struct nftnl_batch *b, const struct nft_elem *const *want_c,
    size_t nc, const struct nft_elem *const *want_t, size_t nt,
    uint16_t type)
{
	struct iovec iov[8];
	const struct nlmsghdr *nlh;
	const char *set = NULL;
	size_t gotc = 0, gott = 0, k, msgc = 0, msgt = 0;
	int len, niov;

	niov = nftnl_batch_iovec_len(b);
	assert_int_equal(niov, 1);
	nftnl_batch_iovec(b, iov, (uint32_t)niov);
	nlh = iov[0].iov_base;
	len = (int)iov[0].iov_len;
	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		assert_int_equal(nlh->nlmsg_type, T(type));
		assert_int_equal(nlh->nlmsg_flags & NLM_F_EXCL,
		    type == NFT_MSG_NEWSETELEM ? NLM_F_EXCL : 0);
		/* Peek at the set name first: cages, then transparent. */
		if (msgt == 0 && gotc < nc) {
			k = check_elem_msg(nlh, &set, want_c, gotc, nc);
			assert_string_equal(set, "cages");
			gotc += k;
			msgc++;
		} else {
			k = check_elem_msg(nlh, &set, want_t, gott, nt);
			assert_string_equal(set, "transparent");
			gott += k;
			msgt++;
		}
		assert_true(k >= 1 && k <= 64);
	}
	assert_int_equal(gotc, nc);
	assert_int_equal(gott, nt);
	assert_int_equal(msgc, (nc + 63) / 64);
	assert_int_equal(msgt, (nt + 63) / 64);
}

/* Cages gk-00000000...; every `tp_every`-th one transparent (0: none). */
static void
make_elems(struct nft_elem *el, size_t n, size_t tp_every)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&el[i], 0, sizeof(el[i]));
		snprintf(el[i].ifname, sizeof(el[i].ifname), "gk-%08zx", i);
		el[i].addr.s_addr = htonl(0x0a8f0002 + (uint32_t)i);
		el[i].transparent = tp_every != 0 && i % tp_every == 0;
	}
}

static void
test_elem_batches(void **state)
{
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 129, 200 };
	/* 0: none transparent, 1: all, 2 and 3: some */
	static const size_t tp_every[] = { 0, 1, 2, 3 };
	const struct nft_elem *wc[200], *wt[200];
	struct nft_elem el[200];
	struct nftnl_batch *b;
	uint32_t seq = 1;
	size_t i, k, t, nt;
	bool add;

	(void)state;
	for (t = 0; t < sizeof(tp_every) / sizeof(tp_every[0]); t++) {
		make_elems(el, 200, tp_every[t]);
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			add = (k + t) % 2 == 0;
			for (i = nt = 0; i < sizes[k]; i++) {
				wc[i] = &el[i];
				if (el[i].transparent)
					wt[nt++] = &el[i];
			}
			assert_non_null(b = nft_batch_new(&seq));
			assert_int_equal(nft_batch_elems(b, add, el, sizes[k],
			    &seq), 0);
			assert_int_equal(nft_batch_end(b, &seq), 0);
			check_elems(b, wc, sizes[k], wt, nt, add ?
			    NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
			nftnl_batch_free(b);
		}
	}
}

/* One cage up: a single transaction adds to both sets (or cages only). */
static void
test_elem_one_cage(void **state)
{
	const struct nft_elem *w[1];
	struct nft_elem el;
	struct nftnl_batch *b;
	uint32_t seq = 7;

	(void)state;
	make_elems(&el, 1, 1);
	w[0] = &el;
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_elems(b, true, &el, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(seq, 7 + 4);	/* begin, cages, transparent, end */
	check_elems(b, w, 1, w, 1, NFT_MSG_NEWSETELEM);
	nftnl_batch_free(b);

	el.transparent = false;
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_elems(b, false, &el, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, w, 1, NULL, 0, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);
}

/* One set only: every element, whatever its .transparent says. */
static void
test_set_elems(void **state)
{
	const struct nft_elem *w[70];
	struct nft_elem el[70];
	struct nftnl_batch *b;
	uint32_t seq = 1;
	size_t i;

	(void)state;
	make_elems(el, 70, 2);
	for (i = 0; i < 70; i++)
		w[i] = &el[i];
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_set_elems(b, NFT_SET, false, el, 70,
	    &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, w, 70, NULL, 0, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);

	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_set_elems(b, NFT_SET_TP, false, el, 70,
	    &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, NULL, 0, w, 70, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);
}

static void
test_gettable(void **state)
{
	char buf[512];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	(void)state;
	nft_msg_gettable(buf, 42);
	assert_int_equal(nlh->nlmsg_type, T(NFT_MSG_GETTABLE));
	assert_int_equal(nlh->nlmsg_seq, 42);
	assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
	assert_true(nlh->nlmsg_flags & NLM_F_ACK);
	assert_true(nlh->nlmsg_len < sizeof(buf));
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
		cmocka_unit_test(test_elem_key),
		cmocka_unit_test(test_ruleset_batch),
		cmocka_unit_test(test_elem_batches),
		cmocka_unit_test(test_elem_one_cage),
		cmocka_unit_test(test_set_elems),
		cmocka_unit_test(test_gettable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
