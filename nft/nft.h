/*
 * nft: gatekeeperd's kernel plumbing on Linux.
 *
 * One nftables table, "inet gatekeeper", holds the whole policy for cage
 * links (named gk-*): the anti-spoofing set of (link . cage address), DNS
 * capture to the gateway, fast rejects for anything not for the gateway
 * (TCP reset; ICMP port-unreachable for UDP, so a connected UDP socket,
 * e.g. QUIC, fails at once with ECONNREFUSED), and the gateway's port
 * allowlist. Transparent mode (transparent_port != 0): a second set of
 * (link . cage address), "transparent", names the cages whose TCP to any
 * address but the gateway is redirected to gateway:transparent_port
 * instead of reset; the listener finds the original destination with
 * getsockopt(SOL_IP, SO_ORIGINAL_DST). That port accepts only such
 * redirected connections (ct status dnat) from cages in the set; a direct
 * connection to it, from any cage, is reset like any closed port, so the
 * listener never sees itself as the original destination. Every base
 * chain has policy accept and
 * every rule matches the cage links itself, so the rest of the host is
 * never affected. A cage is one veth pair: the host end (gk-<id>) carries
 * the gateway /32 and a /32 route to the cage; its peer, eth0, lives in the
 * cage's network namespace with the cage /32 and a default route via the
 * gateway. Cage membership changes are set-element updates only.
 *
 * Threads: call everything from the event loop's thread. Tearing a cage
 * down waits for RCU grace periods in the kernel (~40 ms), so it runs on an
 * internal worker thread; completion comes back to the loop (an eventfd
 * event), and only then does the address return to the pool.
 *
 * Errors: functions that take `err` write one line a person can act on
 * (what failed, on which object, the system's reason).
 */
#ifndef NFT_H
#define NFT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_base;

#define NFT_IFNAME_PREFIX	"gk-"	/* every cage link's name */
#define NFT_IFNAMSIZ		16	/* IFNAMSIZ: at most 15 chars + NUL */
#define NFT_LOG_GROUP		26475	/* nflog group of refused SYNs */

struct nft_conf {
	struct in_addr	gateway;	/* 10.143.0.1, on every host end */
	struct in_addr	subnet;		/* cage subnet, e.g. 10.143.0.0 */
	uint8_t		prefix;		/* 8..30, e.g. 16 */
	uint16_t	dns_port;	/* gateway ports open to cages */
	uint16_t	socks_port;
	uint16_t	http_port;
	uint16_t	transparent_port; /* 0: none (host-wide off); else
					   * TCP from transparent cages to
					   * any other address is redirected
					   * here */
};

struct nft_plumb;

/*
 * Start: validate c; atomically replace a stale `table inet gatekeeper`
 * (logged when one was there) by the table, set, chains and rules in ONE
 * nftables transaction; delete leftover veth links named gk-* (logged with
 * their count); start the teardown worker. NULL with err on failure (then
 * nothing was changed, or the fresh table was removed again), and for
 * GK_NFT_PINS set to anything but "off" (which forces the older kernels'
 * mode, logged: no pins, every transparent cage open) or empty.
 */
struct nft_plumb	*nft_plumb_new(struct event_base *base,
			    const struct nft_conf *c, char *err,
			    size_t errlen);
/*
 * Stop: wait (at most 10 s) for queued teardowns, delete every remaining
 * gk-* veth (live cages' too), delete the table. NULL is fine.
 */
void			 nft_plumb_free(struct nft_plumb *p);

/*
 * Validate a network namespace fd passed by a control client whose
 * SO_PEERCRED uid is `uid`: it must be a network namespace, not ours nor
 * pid 1's, owned by a user namespace other than the initial one whose owner
 * is `uid`, and contain no link but `lo`. 0, or -1 with err.
 */
int			 nft_netns_check(int nsfd, uid_t uid, char *err,
			    size_t errlen);

/*
 * Take a free cage address (never the network, broadcast or gateway
 * address; next-fit, so a just-released address is not reused at once).
 * 0, or -1 when the subnet is exhausted.
 */
int			 nft_addr_alloc(struct nft_plumb *p,
			    struct in_addr *out);

/*
 * Plumb cage address `cage` (from nft_addr_alloc) into the network
 * namespace nsfd (already checked with nft_netns_check), with host link
 * `ifname` ("gk-" + 1..12 of [A-Za-z0-9_-]). With `transparent` and a
 * transparent_port, the cage's TCP to addresses it was given (nft_cage_pin)
 * or to any address with `open` is redirected to that port (its element
 * goes into set transparent, and open, as well, in the same transaction
 * as the one in set cages); otherwise it is refused at once. *ifindex:
 * the host link's index, for nft_cage_pin.
 * Synchronous, about 1 ms (half of it the kernel creating the veth pair);
 * refuses our own netns. 0 on success: release with nft_cage_down. -1
 * with err on failure: what was done is undone, and the address goes back
 * to the pool by itself (once any undo finished); do not call
 * nft_cage_down.
 */
int			 nft_cage_up(struct nft_plumb *p, int nsfd,
			    const char *ifname, struct in_addr cage,
			    bool transparent, bool open, uint32_t *ifindex,
			    char *err, size_t errlen);
/*
 * A transparent cage's TCP to `addr` goes to the transparent listener
 * for the next `seconds` (set pins; adding it again renews it). Else it
 * is refused at the SYN, and the refusal logged to NFT_LOG_GROUP. A no-op
 * where the kernel cannot renew timeouts or GK_NFT_PINS=off (every
 * transparent cage is then open). Synchronous, ~0.1 ms. 0, or -1 with err.
 */
int			 nft_cage_pin(struct nft_plumb *p, uint32_t ifindex,
			    struct in_addr addr, uint32_t seconds, char *err,
			    size_t errlen);
/* Take `addr` out of set pins for the link now (its cage ended). An
 * element that lapsed meanwhile is no error. Synchronous. 0, or -1 with
 * err. */
int			 nft_cage_unpin(struct nft_plumb *p, uint32_t ifindex,
			    struct in_addr addr, char *err, size_t errlen);
/*
 * A transparent cage's TCP goes to the listener whatever the address
 * (its allowlist has CIDR patterns; set open), until it ends. Idempotent.
 * 0, or -1 with err.
 */
int			 nft_cage_open(struct nft_plumb *p, const char *ifname,
			    struct in_addr cage, char *err, size_t errlen);
/*
 * Tear a plumbed cage down in the background: delete the link (its peer
 * goes with it), then its set elements (cages, and transparent if it was
 * added there) in one transaction. The address returns to the pool when
 * both are done; if either failed it stays out (logged).
 */
void			 nft_cage_down(struct nft_plumb *p, const char *ifname,
			    struct in_addr cage);
/* Teardowns queued or running (their addresses are not free yet). */
size_t			 nft_plumb_pending(const struct nft_plumb *p);

/*
 * Refused SYNs: a transparent cage's TCP to an address it was not given
 * is refused in the kernel, and (at most 2000 a second, host-wide) logged
 * to NFT_LOG_GROUP; nft_nflog reads them on the loop.
 */
struct nft_refusal {
	uint32_t	 ifindex;	/* the cage's host link */
	struct in_addr	 src;		/* the cage's address */
	struct in_addr	 dst;
	uint16_t	 sport;
	uint16_t	 dport;
};
typedef void	(*nft_refusal_cb)(void *arg, const struct nft_refusal *r);
struct nft_nflog;

/*
 * Bind NFT_LOG_GROUP in our network namespace and call cb for every
 * refusal read. NULL with err (EBUSY: another program has the group).
 */
struct nft_nflog	*nft_nflog_open(struct event_base *base,
			    nft_refusal_cb cb, void *arg, char *err,
			    size_t errlen);
void			 nft_nflog_close(struct nft_nflog *l);
/* Reads that found the kernel had dropped some (the daemon was behind). */
uint64_t		 nft_nflog_lost(const struct nft_nflog *l);
/*
 * Pure: the IPv4 TCP refusals in len bytes of netlink messages as read
 * from the group's socket (anything else, or anything truncated, is
 * skipped); cb for each. Returns how many.
 */
size_t			 nft_nflog_parse(const uint8_t *buf, size_t len,
			    nft_refusal_cb cb, void *arg);

#endif /* NFT_H */
