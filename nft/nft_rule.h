/*
 * nft_rule.h: a rule of table inet gatekeeper as a spec, between
 * nft_rules.c (the ruleset, as a list of specs) and nft_expr.c (one
 * rule's expressions).
 */
#ifndef NFT_RULE_H
#define NFT_RULE_H

#include <stdint.h>

#include "nft/nft_int.h"

struct nftnl_rule;

#define NFT_SET_ID		1	/* cages, within the ruleset batch */
#define NFT_SET_TP_ID		2	/* transparent */
#define NFT_SET_PINS_ID		3	/* pins */
#define NFT_SET_OPEN_ID		4	/* open */

/* What a rule matches, after iifname "gk-*" (or oifname, M_OIF). */
#define M_OIF		0x001	/* oifname "gk-*" instead of iifname */
#define M_NOT_IPV4	0x002	/* meta nfproto != ipv4 */
#define M_IPV4		0x004	/* meta nfproto ipv4 */
#define M_SPOOF		0x008	/* iifname . ip saddr != @cages */
#define M_TO_GW		0x010	/* ip daddr == gateway */
#define M_NOT_GW	0x020	/* ip daddr != gateway */
#define M_UDP		0x040	/* meta l4proto udp */
#define M_TCP		0x080	/* meta l4proto tcp */
#define M_CT_OK		0x100	/* ct state established,related */
#define M_TP		0x200	/* iifname . ip saddr @transparent */
#define M_CT_DNAT	0x400	/* ct status dnat (redirected) */
#define M_PIN		0x800	/* meta iif . ip daddr @pins */
#define M_OPEN		0x1000	/* iifname . ip saddr @open */
#define M_SYN		0x2000	/* tcp flags & (syn|ack) == syn */

enum rule_action {
	A_ACCEPT,
	A_DROP,
	A_REJECT_PORT,		/* icmp port-unreachable: ECONNREFUSED */
	A_REJECT_ADMIN,		/* icmp admin-prohibited: EHOSTUNREACH */
	A_REJECT_RST,		/* tcp reset: ECONNREFUSED */
	A_DNAT_DNS,		/* dnat to gateway:dns_port */
	A_REDIRECT,		/* redirect to :transparent_port */
	A_LOG,			/* limit, then log to NFT_LOG_GROUP (goes on) */
};

struct nft_rule_spec {
	enum nft_chain_id	 chain;
	unsigned		 match;
	uint16_t		 dport;		/* 0: any */
	enum rule_action	 action;
	const char		*comment;
};

/* The rule for spec s (c: the ports and addresses), or NULL (out of
 * memory). */
struct nftnl_rule *nft_rule_build(const struct nft_conf *c,
		    const struct nft_rule_spec *s);

#endif /* NFT_RULE_H */
