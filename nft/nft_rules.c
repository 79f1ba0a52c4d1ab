/*
 * nft_rules: the nftables objects for table inet gatekeeper and the
 * batches that carry them. Pure: builds libnftnl objects and netlink
 * buffers, no I/O (nft_mnl.c sends them).
 *
 * Every rule starts with `iifname "gk-*"` (meta iifname, compare the
 * first 3 bytes), so only cage links are ever matched; every base chain
 * has policy accept (a drop policy would hit the whole host). Rules that
 * look at IPv4 headers first check meta nfproto ipv4 themselves: libnftnl
 * adds no dependencies for us in an inet table.
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

/* nft's datatype ids, only so that `nft list` prints the set's key type:
 * a concatenation is (type1 << 6) | type2. The kernel ignores it. */
#define NFT_DT_IFNAME		41
#define NFT_DT_IPADDR		7
#define NFT_DT_IFINDEX		20
#define NFT_DT_BITS		6

#define BATCH_PAGE		(256 * 1024)
#define ELEMS_PER_MSG		64

static const struct {
	const char	*name;
	const char	*type;
	uint32_t	 hook;
	int32_t		 prio;
} chains[NFT_CH_MAX] = {
	[NFT_CH_GUARD] =	{ "guard", "filter", NF_INET_PRE_ROUTING,
				    NF_IP_PRI_RAW },
	[NFT_CH_NAT_PRE] =	{ "nat_pre", "nat", NF_INET_PRE_ROUTING,
				    NF_IP_PRI_NAT_DST },
	[NFT_CH_FILTER_PRE] =	{ "filter_pre", "filter",
				    NF_INET_PRE_ROUTING, NF_IP_PRI_FILTER },
	[NFT_CH_INPUT] =	{ "input", "filter", NF_INET_LOCAL_IN,
				    NF_IP_PRI_FILTER },
	[NFT_CH_FORWARD] =	{ "forward", "filter", NF_INET_FORWARD,
				    NF_IP_PRI_FILTER },
};

const char *
nft_chain_name(enum nft_chain_id id)
{
	return id < NFT_CH_MAX ? chains[id].name : "?";
}

static int
add_rule(struct nft_ruleset *rs, const struct nft_conf *c,
    const struct nft_rule_spec *s)
{
	struct nftnl_rule *r;

	if ((r = nft_rule_build(c, s)) == NULL)
		return -1;
	nftnl_chain_rule_add_tail(r, rs->chain[s->chain]);
	return 0;
}

/* The specs being listed: written while they fit, all counted. */
struct specs {
	struct nft_rule_spec	*s;
	size_t			 max;
	size_t			 n;
};

static void
spec(struct specs *sp, enum nft_chain_id ch, unsigned m, uint16_t p,
    enum rule_action a, const char *t)
{
	if (sp->n < sp->max)
		sp->s[sp->n] = (struct nft_rule_spec){ ch, m, p, a, t };
	sp->n++;
}

/* Before routing: the guard, DNS and transparent NAT, the filter. */
static void
specs_pre(const struct nft_conf *c, struct specs *sp)
{
	/* With dns_port 53 a query to the gateway needs no NAT; with another
	 * port, gateway:53 is translated too. */
	unsigned dnsm = c->dns_port == 53 ? M_IPV4 | M_NOT_GW : M_IPV4;

#define R(ch, m, p, a, t)	spec(sp, ch, m, p, a, t)
	R(NFT_CH_GUARD, M_NOT_IPV4, 0, A_DROP, "cage: no IPv6");
	R(NFT_CH_GUARD, M_IPV4 | M_SPOOF, 0, A_DROP,
	    "cage: source must be the link's own cage address");
	R(NFT_CH_NAT_PRE, dnsm | M_UDP, 53, A_DNAT_DNS,
	    "cage: DNS to the resolver");
	R(NFT_CH_NAT_PRE, dnsm | M_TCP, 53, A_DNAT_DNS,
	    "cage: DNS to the resolver");
	/* Transparent TCP, for the cages in set transparent only, to an
	 * address the cage's DNS answers pinned to it (set pins), or to any
	 * address for a cage whose allowlist has CIDR patterns (set open):
	 * the listener checks the rest. Redirected traffic has daddr ==
	 * gateway after dstnat, so filter_pre's TCP reset never sees it;
	 * the rest is refused there at the SYN (ECONNREFUSED), and told to
	 * gatekeeperd through the log group first. */
	if (c->transparent_port != 0) {
		R(NFT_CH_NAT_PRE, M_IPV4 | M_NOT_GW | M_TCP | M_TP | M_PIN,
		    0, A_REDIRECT, "cage: transparent TCP, pinned address");
		R(NFT_CH_NAT_PRE, M_IPV4 | M_NOT_GW | M_TCP | M_TP | M_OPEN,
		    0, A_REDIRECT, "cage: transparent TCP, CIDR allowlist");
	}
	R(NFT_CH_FILTER_PRE, M_IPV4 | M_NOT_GW | M_UDP, 0, A_REJECT_PORT,
	    "cage: only the gateway");
	if (c->transparent_port != 0)
		R(NFT_CH_FILTER_PRE, M_IPV4 | M_NOT_GW | M_TCP | M_SYN | M_TP,
		    0, A_LOG, "cage: refused, told to gatekeeperd");
	R(NFT_CH_FILTER_PRE, M_IPV4 | M_NOT_GW | M_TCP, 0, A_REJECT_RST,
	    "cage: only the gateway");
	R(NFT_CH_FILTER_PRE, M_IPV4 | M_NOT_GW, 0, A_REJECT_ADMIN,
	    "cage: only the gateway");
#undef R
}

/* To the gateway itself (input) and through it (forward). */
static void
specs_in(const struct nft_conf *c, struct specs *sp)
{
#define R(ch, m, p, a, t)	spec(sp, ch, m, p, a, t)
	R(NFT_CH_INPUT, M_CT_OK, 0, A_ACCEPT, "cage: replies");
	R(NFT_CH_INPUT, M_IPV4 | M_TO_GW | M_UDP, c->dns_port, A_ACCEPT,
	    "cage: DNS");
	R(NFT_CH_INPUT, M_IPV4 | M_TO_GW | M_TCP, c->dns_port, A_ACCEPT,
	    "cage: DNS");
	R(NFT_CH_INPUT, M_IPV4 | M_TO_GW | M_TCP, c->socks_port, A_ACCEPT,
	    "cage: SOCKS5 proxy");
	R(NFT_CH_INPUT, M_IPV4 | M_TO_GW | M_TCP, c->http_port, A_ACCEPT,
	    "cage: HTTP proxy");
	/* Only what the redirect above made (ct status dnat) from a cage in
	 * set transparent: a direct connection to gateway:transparent_port
	 * (whose SO_ORIGINAL_DST would be the listener itself), from any
	 * cage, gets the TCP reset below. */
	if (c->transparent_port != 0)
		R(NFT_CH_INPUT, M_IPV4 | M_TO_GW | M_TCP | M_CT_DNAT | M_TP,
		    c->transparent_port, A_ACCEPT,
		    "cage: transparent TCP, redirected only");
	R(NFT_CH_INPUT, M_IPV4 | M_UDP, 0, A_REJECT_PORT, "cage: closed");
	R(NFT_CH_INPUT, M_IPV4 | M_TCP, 0, A_REJECT_RST, "cage: closed");
	R(NFT_CH_INPUT, 0, 0, A_DROP, "cage: closed");
	R(NFT_CH_FORWARD, 0, 0, A_DROP, "cage: nothing is routed");
	R(NFT_CH_FORWARD, M_OIF, 0, A_DROP, "cage: nothing is routed");
#undef R
}

/*
 * The ruleset as a list of specs, in chain order. Ports come from c; the
 * transparent redirect exists only when c->transparent_port != 0.
 */
static size_t
rule_specs(const struct nft_conf *c, struct nft_rule_spec *s, size_t max)
{
	struct specs sp = { s, max, 0 };

	specs_pre(c, &sp);
	specs_in(c, &sp);
	return sp.n;
}

static struct nftnl_chain *
chain_new(enum nft_chain_id id)
{
	struct nftnl_chain *ch;

	if ((ch = nftnl_chain_alloc()) == NULL)
		return NULL;
	nftnl_chain_set_u32(ch, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	nftnl_chain_set_u32(ch, NFTNL_CHAIN_HOOKNUM, chains[id].hook);
	nftnl_chain_set_s32(ch, NFTNL_CHAIN_PRIO, chains[id].prio);
	nftnl_chain_set_u32(ch, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	if (nftnl_chain_set_str(ch, NFTNL_CHAIN_TABLE, NFT_TABLE) != 0 ||
	    nftnl_chain_set_str(ch, NFTNL_CHAIN_NAME, chains[id].name) != 0 ||
	    nftnl_chain_set_str(ch, NFTNL_CHAIN_TYPE, chains[id].type) != 0) {
		nftnl_chain_free(ch);
		return NULL;
	}
	return ch;
}

/* ifname . ipv4_addr; or (pins) ifindex . ipv4_addr with timeouts. */
static struct nftnl_set *
set_new(const char *name, uint32_t id)
{
	bool pins = id == NFT_SET_PINS_ID;
	struct nftnl_set *s;

	if ((s = nftnl_set_alloc()) == NULL)
		return NULL;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, pins ? NFT_PIN_KEYLEN :
	    NFT_KEYLEN);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, (pins ? NFT_DT_IFINDEX :
	    NFT_DT_IFNAME) << NFT_DT_BITS | NFT_DT_IPADDR);
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, pins ? NFT_SET_TIMEOUT : 0);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) != 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, name) != 0) {
		nftnl_set_free(s);
		return NULL;
	}
	return s;
}

int
nft_ruleset_build(struct nft_ruleset *rs, const struct nft_conf *c)
{
	struct nft_rule_spec specs[32];
	size_t i, n;

	memset(rs, 0, sizeof(*rs));
	if ((rs->table = nftnl_table_alloc()) == NULL)
		goto fail;
	nftnl_table_set_u32(rs->table, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(rs->table, NFTNL_TABLE_NAME, NFT_TABLE) != 0)
		goto fail;
	if ((rs->set = set_new(NFT_SET, NFT_SET_ID)) == NULL ||
	    (rs->tset = set_new(NFT_SET_TP, NFT_SET_TP_ID)) == NULL ||
	    (rs->pset = set_new(NFT_SET_PINS, NFT_SET_PINS_ID)) == NULL ||
	    (rs->oset = set_new(NFT_SET_OPEN, NFT_SET_OPEN_ID)) == NULL)
		goto fail;
	for (i = 0; i < NFT_CH_MAX; i++)
		if ((rs->chain[i] = chain_new(i)) == NULL)
			goto fail;
	n = rule_specs(c, specs, sizeof(specs) / sizeof(specs[0]));
	if (n > sizeof(specs) / sizeof(specs[0])) {
		errno = EOVERFLOW;	/* the table above outgrew specs[] */
		goto fail_keep;
	}
	for (i = 0; i < n; i++)
		if (add_rule(rs, c, &specs[i]) != 0)
			goto fail;
	return 0;

fail:
	errno = ENOMEM;
fail_keep:
	nft_ruleset_clear(rs);
	return -1;
}

void
nft_ruleset_clear(struct nft_ruleset *rs)
{
	size_t i;

	if (rs->table != NULL)
		nftnl_table_free(rs->table);
	if (rs->set != NULL)
		nftnl_set_free(rs->set);
	if (rs->tset != NULL)
		nftnl_set_free(rs->tset);
	if (rs->pset != NULL)
		nftnl_set_free(rs->pset);
	if (rs->oset != NULL)
		nftnl_set_free(rs->oset);
	for (i = 0; i < NFT_CH_MAX; i++)
		if (rs->chain[i] != NULL)
			nftnl_chain_free(rs->chain[i]);	/* and its rules */
	memset(rs, 0, sizeof(*rs));
}

void
nft_elem_key(uint8_t key[NFT_KEYLEN], const char *ifname, struct in_addr a)
{
	memset(key, 0, NFT_KEYLEN);
	strncpy((char *)key, ifname, NFT_IFNAMSIZ - 1);
	memcpy(key + NFT_IFNAMSIZ, &a.s_addr, 4);
}

/* ---- batches ---- */

static struct nlmsghdr *
msg_hdr(struct nftnl_batch *b, uint16_t type, uint16_t flags, uint32_t *seq)
{
	return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(b), type,
	    NFPROTO_INET, flags | NLM_F_ACK, (*seq)++);
}

struct nftnl_batch *
nft_batch_new(uint32_t *seq)
{
	struct nftnl_batch *b;

	if ((b = nftnl_batch_alloc(BATCH_PAGE, MNL_SOCKET_BUFFER_SIZE)) ==
	    NULL)
		return NULL;
	nftnl_batch_begin(nftnl_batch_buffer(b), (*seq)++);
	if (nftnl_batch_update(b) != 0) {
		nftnl_batch_free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

int
nft_batch_end(struct nftnl_batch *b, uint32_t *seq)
{
	nftnl_batch_end(nftnl_batch_buffer(b), (*seq)++);
	return nftnl_batch_update(b) == 0 ? 0 : -1;
}

static int
batch_table(struct nftnl_batch *b, const struct nftnl_table *t,
    uint16_t type, uint16_t flags, uint32_t *seq)
{
	nftnl_table_nlmsg_build_payload(msg_hdr(b, type, flags, seq), t);
	return nftnl_batch_update(b);
}

static int
batch_rules(struct nftnl_batch *b, struct nftnl_chain *ch, uint32_t *seq)
{
	struct nftnl_rule_iter *it;
	struct nftnl_rule *r;
	int rc = 0;

	if ((it = nftnl_rule_iter_create(ch)) == NULL)
		return -1;
	while (rc == 0 && (r = nftnl_rule_iter_next(it)) != NULL) {
		nftnl_rule_nlmsg_build_payload(msg_hdr(b, NFT_MSG_NEWRULE,
		    NLM_F_CREATE | NLM_F_APPEND, seq), r);
		rc = nftnl_batch_update(b);
	}
	nftnl_rule_iter_destroy(it);
	return rc;
}

int
nft_batch_ruleset(struct nftnl_batch *b, const struct nft_ruleset *rs,
    uint32_t *seq)
{
	size_t i;

	/* Create-if-missing, delete, create: replaces a stale table in the
	 * same transaction, whether or not one exists. */
	if (batch_table(b, rs->table, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    seq) != 0 ||
	    batch_table(b, rs->table, NFT_MSG_DELTABLE, 0, seq) != 0 ||
	    batch_table(b, rs->table, NFT_MSG_NEWTABLE,
	    NLM_F_CREATE | NLM_F_EXCL, seq) != 0)
		return -1;
	for (i = 0; i < 4; i++) {
		nftnl_set_nlmsg_build_payload(msg_hdr(b, NFT_MSG_NEWSET,
		    NLM_F_CREATE | NLM_F_EXCL, seq), i == 0 ? rs->set :
		    i == 1 ? rs->tset : i == 2 ? rs->pset : rs->oset);
		if (nftnl_batch_update(b) != 0)
			return -1;
	}
	for (i = 0; i < NFT_CH_MAX; i++) {
		nftnl_chain_nlmsg_build_payload(msg_hdr(b, NFT_MSG_NEWCHAIN,
		    NLM_F_CREATE | NLM_F_EXCL, seq), rs->chain[i]);
		if (nftnl_batch_update(b) != 0)
			return -1;
	}
	for (i = 0; i < NFT_CH_MAX; i++)
		if (batch_rules(b, rs->chain[i], seq) != 0)
			return -1;
	return 0;
}

int
nft_batch_deltable(struct nftnl_batch *b, uint32_t *seq)
{
	struct nftnl_table *t;
	int rc = -1;

	if ((t = nftnl_table_alloc()) == NULL)
		return -1;
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE) == 0)
		rc = batch_table(b, t, NFT_MSG_DELTABLE, 0, seq);
	nftnl_table_free(t);
	return rc;
}

/* One NEWSETELEM/DELSETELEM message for set, n (<= ELEMS_PER_MSG)
 * elements. */
static int
batch_elems_msg(struct nftnl_batch *b, const char *set, bool add,
    const struct nft_elem *const *el, size_t n, uint32_t *seq)
{
	struct nftnl_set_elem *e;
	struct nftnl_set *s;
	uint8_t key[NFT_KEYLEN];
	size_t i;
	int rc = -1;

	if ((s = nftnl_set_alloc()) == NULL)
		return -1;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) != 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, set) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((e = nftnl_set_elem_alloc()) == NULL)
			goto fail;
		nft_elem_key(key, el[i]->ifname, el[i]->addr);
		if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key,
		    sizeof(key)) != 0) {
			nftnl_set_elem_free(e);
			goto fail;
		}
		nftnl_set_elem_add(s, e);
	}
	nftnl_set_elems_nlmsg_build_payload(msg_hdr(b, add ?
	    NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, add ?
	    NLM_F_CREATE | NLM_F_EXCL : 0, seq), s);
	rc = nftnl_batch_update(b);
fail:
	nftnl_set_free(s);
	return rc;
}

enum pick { PICK_ALL, PICK_TP, PICK_OPEN };

/* The elements of el (all, or only those in set transparent or open) into
 * set: as many messages as needed, none if there is no such element. */
static int
batch_set(struct nftnl_batch *b, const char *set, bool add,
    const struct nft_elem *el, size_t n, enum pick which, uint32_t *seq)
{
	const struct nft_elem *pick[ELEMS_PER_MSG];
	size_t i, k = 0;

	/* A message must fit the batch's overrun space (8 KiB): ~48 bytes
	 * per element, so at most ELEMS_PER_MSG in each. */
	for (i = 0; i < n; i++) {
		if ((which == PICK_TP && !el[i].transparent) ||
		    (which == PICK_OPEN && !el[i].open))
			continue;
		pick[k++] = &el[i];
		if (k < ELEMS_PER_MSG)
			continue;
		if (batch_elems_msg(b, set, add, pick, k, seq) != 0)
			return -1;
		k = 0;
	}
	if (k > 0 && batch_elems_msg(b, set, add, pick, k, seq) != 0)
		return -1;
	return 0;
}

int
nft_batch_elems(struct nftnl_batch *b, bool add, const struct nft_elem *el,
    size_t n, uint32_t *seq)
{
	if (batch_set(b, NFT_SET, add, el, n, PICK_ALL, seq) != 0 ||
	    batch_set(b, NFT_SET_TP, add, el, n, PICK_TP, seq) != 0 ||
	    batch_set(b, NFT_SET_OPEN, add, el, n, PICK_OPEN, seq) != 0)
		return -1;
	return 0;
}

int
nft_batch_set_elems(struct nftnl_batch *b, const char *set, bool add,
    const struct nft_elem *el, size_t n, uint32_t *seq)
{
	return batch_set(b, set, add, el, n, PICK_ALL, seq);
}

void
nft_pin_key(uint8_t key[NFT_PIN_KEYLEN], uint32_t ifindex, struct in_addr a)
{
	memcpy(key, &ifindex, 4);		/* meta iif: host order */
	memcpy(key + 4, &a.s_addr, 4);
}

/* Set pins with the elements of p (their timeouts, with add). */
static struct nftnl_set *
pins_set(const struct nft_pin *p, size_t n, bool add)
{
	struct nftnl_set_elem *e;
	struct nftnl_set *s;
	uint8_t key[NFT_PIN_KEYLEN];
	size_t i;

	if ((s = nftnl_set_alloc()) == NULL)
		return NULL;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) != 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, NFT_SET_PINS) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((e = nftnl_set_elem_alloc()) == NULL)
			goto fail;
		nft_pin_key(key, p[i].ifindex, p[i].addr);
		if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key,
		    sizeof(key)) != 0) {
			nftnl_set_elem_free(e);
			goto fail;
		}
		if (add)
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT,
			    p[i].timeout_ms);
		nftnl_set_elem_add(s, e);
	}
	return s;
fail:
	nftnl_set_free(s);
	return NULL;
}

int
nft_batch_pins(struct nftnl_batch *b, bool add, const struct nft_pin *p,
    size_t n, uint32_t *seq)
{
	struct nftnl_set *s;
	size_t i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < ELEMS_PER_MSG ? n - i : ELEMS_PER_MSG;
		if ((s = pins_set(p + i, k, add)) == NULL)
			return -1;
		/* No NLM_F_EXCL: adding one that is there renews its
		 * timeout (on kernels that can; nft_plumb checks). */
		nftnl_set_elems_nlmsg_build_payload(msg_hdr(b, add ?
		    NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, add ?
		    NLM_F_CREATE : 0, seq), s);
		nftnl_set_free(s);
		if (nftnl_batch_update(b) != 0)
			return -1;
	}
	return 0;
}

int
nft_msg_getpin(char *buf, uint32_t ifindex, struct in_addr a, uint32_t seq)
{
	struct nft_pin p = { .ifindex = ifindex, .addr = a };
	struct nftnl_set *s;

	if ((s = pins_set(&p, 1, false)) == NULL)
		return -1;
	nftnl_set_elems_nlmsg_build_payload(nftnl_nlmsg_build_hdr(buf,
	    NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_ACK, seq), s);
	nftnl_set_free(s);
	return 0;
}

void
nft_msg_gettable(char *buf, uint32_t seq)
{
	struct nlmsghdr *nlh;

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET,
	    NLM_F_ACK, seq);
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, NFT_TABLE);
}
