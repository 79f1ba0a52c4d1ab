/*
 * nft_int.h: the nft module's internal interfaces.
 *
 *   nft_pool.c   cage address pool (pure)
 *   nft_rules.c  nftnl objects and batches for the ruleset and elements
 *                (pure: builds buffers, no I/O)
 *   nft_mnl.c    sends batches over NETLINK_NETFILTER, checks every ACK
 *   nft_link.c   links, addresses, routes, sysctls (libnl-route-3)
 *   nft_netns.c  running code inside a netns; validating a passed netns
 *   nft_plumb.c  the public API: start/stop, cage up, pins, teardown worker
 *   nft_nflog.c  refused SYNs from nfnetlink_log (socket and parser)
 */
#ifndef NFT_INT_H
#define NFT_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "gatekeeper/base/gk_err.h"
#include "nft/nft.h"

struct nftnl_batch;
struct nftnl_chain;
struct nftnl_set;
struct nftnl_table;
struct nl_sock;

/* ---- nft_pool.c ---- */

enum nft_pool_state {
	NFT_POOL_OUTSIDE,	/* not in the subnet */
	NFT_POOL_RESERVED,	/* network, broadcast or gateway */
	NFT_POOL_FREE,
	NFT_POOL_USED,		/* allocated */
	NFT_POOL_DRAINING,	/* teardown running */
};

struct nft_pool;

/* subnet/prefix (8..30, host bits zero); gateway excluded if inside. */
struct nft_pool		*nft_pool_new(struct in_addr subnet, uint8_t prefix,
			    struct in_addr gateway, char *err, size_t errlen);
void			 nft_pool_free(struct nft_pool *pl);
/* FREE -> USED, next-fit. 0, or -1 (ENOSPC) when exhausted. */
int			 nft_pool_alloc(struct nft_pool *pl,
			    struct in_addr *out);
/* USED -> FREE (flag cleared). -1 (EINVAL) in any other state. */
int			 nft_pool_release(struct nft_pool *pl,
			    struct in_addr a);
/* USED -> DRAINING. -1 (EINVAL) in any other state. */
int			 nft_pool_drain(struct nft_pool *pl, struct in_addr a);
/* DRAINING -> FREE (flag cleared). -1 (EINVAL) in any other state. */
int			 nft_pool_drained(struct nft_pool *pl,
			    struct in_addr a);
/*
 * Caller-defined bits per address (nft_plumb: which sets besides cages
 * hold the cage). Set only while USED (-1, EINVAL otherwise); read in any
 * state; every way back to FREE clears them.
 */
#define NFT_POOL_F_TP		0	/* in set transparent */
#define NFT_POOL_F_OPEN		1	/* in set open */
#define NFT_POOL_FLAGS		2
int			 nft_pool_set_flag(struct nft_pool *pl,
			    struct in_addr a, unsigned which, bool on);
bool			 nft_pool_flag(const struct nft_pool *pl,
			    struct in_addr a, unsigned which);
enum nft_pool_state	 nft_pool_state(const struct nft_pool *pl,
			    struct in_addr a);
uint32_t		 nft_pool_nfree(const struct nft_pool *pl);

/* ---- nft_rules.c ---- */

#define NFT_TABLE	"gatekeeper"
#define NFT_SET		"cages"		/* every cage: anti-spoofing */
#define NFT_SET_TP	"transparent"	/* cages whose TCP is redirected */
#define NFT_SET_PINS	"pins"		/* (cage link . address) a cage's
					 * TCP may go to (with timeouts) */
#define NFT_SET_OPEN	"open"		/* transparent cages whose TCP goes
					 * to the listener wherever it is
					 * for (CIDR allowlists) */
#define NFT_KEYLEN	(NFT_IFNAMSIZ + 4)	/* ifname . ipv4_addr (both) */
#define NFT_PIN_KEYLEN	8			/* ifindex . ipv4_addr */

enum nft_chain_id {
	NFT_CH_GUARD,		/* prerouting, raw: anti-spoofing */
	NFT_CH_NAT_PRE,		/* prerouting, dstnat: DNS, transparent */
	NFT_CH_FILTER_PRE,	/* prerouting, filter: fast rejects */
	NFT_CH_INPUT,		/* input, filter: the gateway's ports */
	NFT_CH_FORWARD,		/* forward, filter: nothing is routed */
	NFT_CH_MAX,
};

struct nft_ruleset {
	struct nftnl_table	*table;
	struct nftnl_set	*set;		/* cages */
	struct nftnl_set	*tset;		/* transparent: always made,
						 * used with transparent_port */
	struct nftnl_set	*pset;		/* pins: the same */
	struct nftnl_set	*oset;		/* open: the same */
	struct nftnl_chain	*chain[NFT_CH_MAX];	/* own their rules */
};

struct nft_elem {
	char		ifname[NFT_IFNAMSIZ];
	struct in_addr	addr;
	bool		transparent;	/* also in set transparent */
	bool		open;		/* also in set open */
};

struct nft_pin {
	uint32_t	ifindex;	/* the cage's host link */
	struct in_addr	addr;		/* where it may open TCP */
	uint64_t	timeout_ms;	/* for add */
};

const char		*nft_chain_name(enum nft_chain_id id);
/* Build the whole ruleset for c. 0, or -1 (ENOMEM); clear it either way. */
int			 nft_ruleset_build(struct nft_ruleset *rs,
			    const struct nft_conf *c);
void			 nft_ruleset_clear(struct nft_ruleset *rs);
/* The set element key: ifname zero-padded to 16 bytes, then the address. */
void			 nft_elem_key(uint8_t key[NFT_KEYLEN],
			    const char *ifname, struct in_addr a);

/*
 * Batches: nft_batch_new writes the batch-begin message, the nft_batch_*
 * calls append messages (each with NLM_F_ACK, seq from *seq++),
 * nft_batch_end closes it. -1 (ENOMEM) on failure.
 */
struct nftnl_batch	*nft_batch_new(uint32_t *seq);
int			 nft_batch_end(struct nftnl_batch *b, uint32_t *seq);
/* add table, delete table, add table (atomic replace), sets, chains,
 * rules */
int			 nft_batch_ruleset(struct nftnl_batch *b,
			    const struct nft_ruleset *rs, uint32_t *seq);
int			 nft_batch_deltable(struct nftnl_batch *b,
			    uint32_t *seq);
/*
 * NEWSETELEM (add, NLM_F_EXCL) or DELSETELEM of n cages: every element in
 * set cages, then those with .transparent in set transparent and those
 * with .open in set open (at most 64 elements per message), all in the
 * batch b, so one transaction.
 */
int			 nft_batch_elems(struct nftnl_batch *b, bool add,
			    const struct nft_elem *el, size_t n,
			    uint32_t *seq);
/* The same for one set only (NFT_SET or NFT_SET_TP): every element. */
int			 nft_batch_set_elems(struct nftnl_batch *b,
			    const char *set, bool add,
			    const struct nft_elem *el, size_t n,
			    uint32_t *seq);
/* The pins key: the link's index (host order), then the address. */
void			 nft_pin_key(uint8_t key[NFT_PIN_KEYLEN],
			    uint32_t ifindex, struct in_addr a);
/* NEWSETELEM without NLM_F_EXCL (creates, or renews the timeout), or
 * DELSETELEM, of n elements of set pins. */
int			 nft_batch_pins(struct nftnl_batch *b, bool add,
			    const struct nft_pin *p, size_t n, uint32_t *seq);
/* A GETSETELEM request for one pins element into buf (>= 512 bytes).
 * 0, or -1 (ENOMEM). */
int			 nft_msg_getpin(char *buf, uint32_t ifindex,
			    struct in_addr a, uint32_t seq);
/* A GETTABLE request for our table into buf (>= 256 bytes). */
void			 nft_msg_gettable(char *buf, uint32_t seq);

/* ---- nft_mnl.c ---- */

struct nft_mnl {
	struct mnl_socket	*nl;
	uint32_t		 portid;
	uint32_t		 seq;
};

int			 nft_mnl_open(struct nft_mnl *m, char *err,
			    size_t errlen);
void			 nft_mnl_close(struct nft_mnl *m);
/*
 * Send a finished batch and read an ACK for every message in it. 0, or
 * -1 with errno and err naming the first message that failed.
 */
int			 nft_mnl_batch(struct nft_mnl *m, struct nftnl_batch *b,
			    char *err, size_t errlen);
/* The time left (ms) of one element of set pins. 0, or -1 with err. */
int			 nft_mnl_pin_expires(struct nft_mnl *m,
			    uint32_t ifindex, struct in_addr a, uint64_t *ms,
			    char *err, size_t errlen);
/* 1 if our table exists, 0 if not, -1 with err. */
int			 nft_mnl_table_exists(struct nft_mnl *m, char *err,
			    size_t errlen);

/* ---- nft_link.c ---- */

#define NFT_CAGE_IFNAME	"eth0"		/* the peer, inside the cage */

/* A NETLINK_ROUTE socket in the calling thread's netns (5 s timeouts). */
struct nl_sock		*nft_link_sock(char *err, size_t errlen);
/* veth ifname <-> eth0, eth0 created in nsfd's netns. */
int			 nft_link_veth_add(struct nl_sock *sk,
			    const char *ifname, int nsfd, char *err,
			    size_t errlen);
/* Host end: sysctls, gateway/32, up, route cage/32 src gateway. */
int			 nft_link_host_setup(struct nl_sock *sk,
			    const char *ifname, struct in_addr gw,
			    struct in_addr cage, char *err, size_t errlen);
/* Cage side through csk (bound in the cage), with the cage's ifindexes of
 * lo and eth0: lo up, eth0 up with cage/32, default via gw onlink. */
int			 nft_link_cage_setup(struct nl_sock *csk, int lo,
			    int eth0, struct in_addr gw, struct in_addr cage,
			    char *err, size_t errlen);
/* ifindex of name in the calling thread's netns. 0, or -1 with err. */
int			 nft_link_index(const char *name, int *idx, char *err,
			    size_t errlen);
/* Delete a link by name. 0 deleted, 1 was already gone, -1 with err. */
int			 nft_link_del(struct nl_sock *sk, const char *ifname,
			    char *err, size_t errlen);
/* Delete every veth named gk-*; *n = how many went. 0, or -1 with err. */
int			 nft_link_sweep(struct nl_sock *sk, unsigned *n,
			    char *err, size_t errlen);
/* Names of all links, comma-separated, into buf; their count or -1. */
int			 nft_link_list(struct nl_sock *sk, char *buf,
			    size_t len, char *err, size_t errlen);
bool			 nft_ifname_valid(const char *ifname);

/* ---- nft_sysctl.c ---- */

/* Write val to /proc/sys/<path>. 0, or -1 with err. */
int			 nft_sysctl_write(const char *path, const char *val,
			    char *err, size_t errlen);
/* The host end of a cage's veth, in gatekeeperd's own namespace: IPv6
 * off, strict rp_filter, no forwarding. 0, or -1 with err. */
int			 nft_sysctl_host(const char *ifname, char *err,
			    size_t errlen);
/* Inside a cage's namespace (the calling thread's): IPv6 off for all and
 * default. 0, or -1 with err. */
int			 nft_link_cage_sysctls(char *err, size_t errlen);

/* ---- nft_netns.c ---- */

/*
 * Run fn with the calling thread inside nsfd's network namespace, then
 * switch back (fatal if that is impossible). fn's result, or -1 with err.
 */
int			 nft_netns_run(int nsfd,
			    int (*fn)(void *arg, char *err, size_t errlen),
			    void *arg, char *err, size_t errlen);

/* Is nsfd our own network namespace (this thread's or the process')? */
bool			 nft_netns_is_own(int nsfd);

#endif /* NFT_INT_H */
