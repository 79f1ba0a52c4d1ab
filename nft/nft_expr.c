/*
 * nft_expr: one rule of table inet gatekeeper from its spec
 * (nft_rule.h): the libnftnl expressions of its matches and its action,
 * in registers, and its comment. Pure: no I/O.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>

#include "nft/nft_int.h"
#include "nft/nft_rule.h"

/* Refusals told to gatekeeperd: at most this many a second (the kernel's
 * log queue and the daemon's time are shared by every cage). */
#define NFT_LOG_RATE		2000
#define NFT_LOG_BURST		500
#define NFT_LOG_SNAPLEN		64	/* IPv4 header, options, ports */

/* Register-level builder with a sticky failure flag. */
struct rb {
	struct nftnl_rule	*r;
	const struct nft_conf	*c;
	bool			 fail;
};

static struct nftnl_expr *
ex(struct rb *b, const char *name)
{
	struct nftnl_expr *e;

	if (b->fail)
		return NULL;
	if ((e = nftnl_expr_alloc(name)) == NULL) {
		b->fail = true;
		return NULL;
	}
	nftnl_rule_add_expr(b->r, e);
	return e;
}

static void
ex_meta(struct rb *b, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "meta")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
}

static void
ex_cmp(struct rb *b, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "cmp")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	if (nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len) != 0)
		b->fail = true;
}

static void
ex_payload(struct rb *b, uint32_t base, uint32_t off, uint32_t len,
    uint32_t dreg)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "payload")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
}

static void
ex_imm(struct rb *b, uint32_t dreg, const void *data, uint32_t len)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "immediate")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, dreg);
	if (nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, data, len) != 0)
		b->fail = true;
}

static void
ex_verdict(struct rb *b, int verdict)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "immediate")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
}

static void
ex_reject(struct rb *b, uint32_t type, uint8_t code)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "reject")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
}

/* iifname "gk-*" (or oifname): only the name's first 3 bytes compare. */
static void
m_link(struct rb *b, bool oif)
{
	ex_meta(b, oif ? NFT_META_OIFNAME : NFT_META_IIFNAME, NFT_REG_1);
	ex_cmp(b, NFT_CMP_EQ, NFT_IFNAME_PREFIX, strlen(NFT_IFNAME_PREFIX));
}

static void
m_nfproto(struct rb *b, uint32_t op)
{
	uint8_t v = NFPROTO_IPV4;

	ex_meta(b, NFT_META_NFPROTO, NFT_REG_1);
	ex_cmp(b, op, &v, sizeof(v));
}

/* iifname . ip saddr @set (or != @set, inv) */
static void
m_lookup(struct rb *b, const char *set, uint32_t id, bool inv)
{
	struct nftnl_expr *e;

	ex_meta(b, NFT_META_IIFNAME, NFT_REG32_00);	/* 16 bytes: 00-03 */
	ex_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG32_04);
	if ((e = ex(b, "lookup")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
	if (nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set) != 0)
		b->fail = true;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, inv ?
	    NFT_LOOKUP_F_INV : 0);
}

/* meta iif . ip daddr @pins: the host link's index, the destination. */
static void
m_pin(struct rb *b)
{
	struct nftnl_expr *e;

	ex_meta(b, NFT_META_IIF, NFT_REG32_00);
	ex_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG32_01);
	if ((e = ex(b, "lookup")) == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
	if (nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, NFT_SET_PINS) != 0)
		b->fail = true;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, NFT_SET_PINS_ID);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, 0);
}

/* A connection's first segment: SYN without ACK. */
static void
m_syn(struct rb *b)
{
	struct nftnl_expr *e;
	uint8_t mask = 0x12, zero = 0, syn = 0x02;

	ex_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1, NFT_REG_1);
	if ((e = ex(b, "bitwise")) != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 1);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 1);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 1);
	}
	ex_cmp(b, NFT_CMP_EQ, &syn, 1);
}

static void
m_daddr(struct rb *b, uint32_t op)
{
	ex_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG_1);
	ex_cmp(b, op, &b->c->gateway.s_addr, 4);
}

static void
m_l4proto(struct rb *b, uint8_t proto)
{
	ex_meta(b, NFT_META_L4PROTO, NFT_REG_1);
	ex_cmp(b, NFT_CMP_EQ, &proto, sizeof(proto));
}

static void
m_dport(struct rb *b, uint16_t port)
{
	uint16_t v = htons(port);

	ex_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
	ex_cmp(b, NFT_CMP_EQ, &v, sizeof(v));
}

/*
 * ct state established,related, or ct status dnat: (ct key & mask) != 0.
 * Both are host-order u32 bit sets.
 */
static void
m_ct_bits(struct rb *b, uint32_t key, uint32_t mask)
{
	struct nftnl_expr *e;
	uint32_t zero = 0;

	if ((e = ex(b, "ct")) != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	if ((e = ex(b, "bitwise")) != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, sizeof(mask));
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask,
		    sizeof(mask));
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero,
		    sizeof(zero));
	}
	ex_cmp(b, NFT_CMP_NEQ, &zero, sizeof(zero));
}

static void
add_matches(struct rb *b, const struct nft_rule_spec *s)
{
	m_link(b, (s->match & M_OIF) != 0);
	if (s->match & M_NOT_IPV4)
		m_nfproto(b, NFT_CMP_NEQ);
	if (s->match & M_IPV4)
		m_nfproto(b, NFT_CMP_EQ);
	if (s->match & M_SPOOF)
		m_lookup(b, NFT_SET, NFT_SET_ID, true);
	if (s->match & M_TO_GW)
		m_daddr(b, NFT_CMP_EQ);
	if (s->match & M_NOT_GW)
		m_daddr(b, NFT_CMP_NEQ);
	if (s->match & M_UDP)
		m_l4proto(b, IPPROTO_UDP);
	if (s->match & M_TCP)
		m_l4proto(b, IPPROTO_TCP);
	if (s->match & M_SYN)
		m_syn(b);
	if (s->dport != 0)
		m_dport(b, s->dport);
	if (s->match & M_CT_OK)
		m_ct_bits(b, NFT_CT_STATE, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) |
		    NF_CT_STATE_BIT(IP_CT_RELATED));
	if (s->match & M_CT_DNAT)
		m_ct_bits(b, NFT_CT_STATUS, IPS_DST_NAT);
	if (s->match & M_TP)
		m_lookup(b, NFT_SET_TP, NFT_SET_TP_ID, false);
	if (s->match & M_PIN)
		m_pin(b);
	if (s->match & M_OPEN)
		m_lookup(b, NFT_SET_OPEN, NFT_SET_OPEN_ID, false);
}

static void
act_log(struct rb *b)
{
	struct nftnl_expr *e;

	if ((e = ex(b, "limit")) != NULL) {
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, NFT_LOG_RATE);
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, NFT_LOG_BURST);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, 0);
	}
	if ((e = ex(b, "log")) != NULL) {
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, NFT_LOG_GROUP);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, NFT_LOG_SNAPLEN);
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD, 1);
	}
}

static void
act_nat(struct rb *b, enum rule_action a)
{
	struct nftnl_expr *e;
	uint16_t port;

	if (a == A_DNAT_DNS) {
		port = htons(b->c->dns_port);
		ex_imm(b, NFT_REG_1, &b->c->gateway.s_addr, 4);
		ex_imm(b, NFT_REG_2, &port, sizeof(port));
		if ((e = ex(b, "nat")) == NULL)
			return;
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FAMILY, NFPROTO_IPV4);
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_PROTO_MIN,
		    NFT_REG_2);
	} else {
		port = htons(b->c->transparent_port);
		ex_imm(b, NFT_REG_1, &port, sizeof(port));
		if ((e = ex(b, "redir")) == NULL)
			return;
		nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN,
		    NFT_REG_1);
	}
	nftnl_expr_set_u32(e, a == A_DNAT_DNS ? NFTNL_EXPR_NAT_FLAGS :
	    NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
}

static void
add_action(struct rb *b, enum rule_action a)
{
	switch (a) {
	case A_ACCEPT:
		ex_verdict(b, NF_ACCEPT);
		break;
	case A_DROP:
		ex_verdict(b, NF_DROP);
		break;
	case A_REJECT_PORT:
		ex_reject(b, NFT_REJECT_ICMP_UNREACH, 3);
		break;
	case A_REJECT_ADMIN:
		ex_reject(b, NFT_REJECT_ICMP_UNREACH, 13);
		break;
	case A_REJECT_RST:
		ex_reject(b, NFT_REJECT_TCP_RST, 0);
		break;
	case A_DNAT_DNS:
	case A_REDIRECT:
		act_nat(b, a);
		break;
	case A_LOG:
		act_log(b);
		break;
	}
}

static int
set_comment(struct nftnl_rule *r, const char *text)
{
	struct nftnl_udata_buf *u;
	int rc = -1;

	if ((u = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 8)) ==
	    NULL)
		return -1;
	if (nftnl_udata_put_strz(u, NFTNL_UDATA_RULE_COMMENT, text) &&
	    nftnl_rule_set_data(r, NFTNL_RULE_USERDATA, nftnl_udata_buf_data(u),
	    nftnl_udata_buf_len(u)) == 0)
		rc = 0;
	nftnl_udata_buf_free(u);
	return rc;
}

struct nftnl_rule *
nft_rule_build(const struct nft_conf *c, const struct nft_rule_spec *s)
{
	struct rb b = { .c = c };

	if ((b.r = nftnl_rule_alloc()) == NULL)
		return NULL;
	nftnl_rule_set_u32(b.r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(b.r, NFTNL_RULE_TABLE, NFT_TABLE) != 0 ||
	    nftnl_rule_set_str(b.r, NFTNL_RULE_CHAIN,
	    nft_chain_name(s->chain)) != 0 || set_comment(b.r, s->comment) != 0)
		b.fail = true;
	add_matches(&b, s);
	add_action(&b, s->action);
	if (b.fail) {
		nftnl_rule_free(b.r);
		return NULL;
	}
	return b.r;
}
