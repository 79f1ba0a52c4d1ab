/*
 * gk_cage: the cage table. A cage is one sandbox's identity (id, label,
 * owner uid, source address) and policy (its allowlist), the addresses its
 * DNS answers pinned to it (each until a deadline), and its own counters.
 *
 * Lookup by source address and by id are O(1) (hash tables). Times are
 * monotonic seconds supplied by the caller, so the table is testable.
 */
#ifndef GK_CAGE_H
#define GK_CAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/state/gk_limit.h"
#include "gatekeeper/state/gk_stats.h"

#define GK_CAGE_MAX		65536	/* cages in one table */
#define GK_CAGE_PINS_MAX	4096	/* pinned (name, address) per cage */
/*
 * The kernel's copy of a cage's pins (its nftables set of addresses the
 * cage may open TCP to) keeps an address until the latest pin of it plus
 * GK_PIN_SYNC_SLACK seconds, and is told again once a pin reaches past
 * that less GK_PIN_SYNC_EARLY: it outlives the pin by 2 to 32 s, and is
 * updated at most once every 30 s per address, however often the name is
 * looked up. (Within those seconds after a pin lapses, a connection there
 * is accepted and then reset by the listener, not refused at the SYN.)
 */
#define GK_PIN_SYNC_SLACK	32
#define GK_PIN_SYNC_EARLY	2
/* Pins due within GK_PIN_INUSE_AHEAD seconds, of addresses a connection
 * of the cage still uses, are kept GK_PIN_INUSE_KEEP seconds more
 * (gk_cage_expire, every few seconds; gk_cage_pin_keep, when the
 * connection opens): while it is open, and up to that long after. */
#define GK_PIN_INUSE_AHEAD	10
#define GK_PIN_INUSE_KEEP	20

struct gk_ask;
struct gk_pinset;
struct gk_cage_events;
struct gk_cage_recent;

struct gk_cage {
	char		 id[GK_CAGE_ID_LEN + 1];
	char		 label[GK_CAGE_LABEL_MAX + 1];
	/* a secret naming the cage where the source address cannot
	 * (SOCKS5 username, HTTP proxy Basic user); given at create only */
	char		 token[GK_CAGE_TOKEN_LEN + 1];
	uid_t		 uid;
	struct gk_addr	 source;
	struct gk_allowlist *allow;		/* owned */
	time_t		 created;		/* wall clock, for display */

	/* Per-cage counters; series live while the cage lives. */
	uint64_t	 denied[GK_KIND__MAX];
	uint64_t	 dns_queries;
	uint64_t	 connections;

	void		*owner;			/* control connection */
	bool		 plumbed;		/* veth + nft made for it */
	uint32_t	 link;			/* its host link's ifindex:
						 * pins are synced to the
						 * kernel (0: none) */
	bool		 events;		/* owner told its denials */
	bool		 learn;			/* any name; owner told each */
	struct gk_ask	*ask;			/* holds and asks (gk_ask.c's;
						 * NULL: denies at once) */
	struct gk_cage_events *ev;		/* gk_events.c's */
	struct gk_cage_recent *recent;		/* gk_events.c's */
	struct gk_cage_lim lim;			/* budgets, holdings */
	void		*cg;			/* its cgroup (gk_contain.c's;
						 * NULL: not contained) */

	/* private to gk_cage.c */
	struct gk_cage_table *table;
	struct gk_pinset *pins;
	struct gk_cage	*src_next;
	struct gk_cage	*id_next;
};

enum gk_cage_err {
	GK_CAGE_E_OK,
	GK_CAGE_E_SOURCE_IN_USE,
	GK_CAGE_E_TOO_MANY,
	GK_CAGE_E_BAD_LABEL,	/* over 64 bytes or a non-printable byte */
	GK_CAGE_E_NOMEM,
};

struct gk_cage_table;

struct gk_cage_table *gk_cage_table_new(void);
/* Frees every cage still in it. */
void		 gk_cage_table_free(struct gk_cage_table *t);
size_t		 gk_cage_count(const struct gk_cage_table *t);

/*
 * Create a cage. Takes ownership of `allow` on success only. A label may be
 * NULL or empty. The id is random, printable and unique in the table.
 */
struct gk_cage	*gk_cage_create(struct gk_cage_table *t,
		    const struct gk_addr *source, const char *label, uid_t uid,
		    struct gk_allowlist *allow, enum gk_cage_err *err);
/* Ends everything the cage holds (gk_cage_lim_end), then frees it. */
void		 gk_cage_destroy(struct gk_cage_table *t, struct gk_cage *c);
const char	*gk_cage_strerror(enum gk_cage_err e);

struct gk_cage	*gk_cage_by_source(const struct gk_cage_table *t,
		    const struct gk_addr *source);
struct gk_cage	*gk_cage_by_id(const struct gk_cage_table *t, const char *id);
/* O(cages); compares in time independent of where tokens differ. */
struct gk_cage	*gk_cage_by_token(const struct gk_cage_table *t,
		    const char *token);

/*
 * Replace the allowlist (takes ownership; the old one is freed). Pins of
 * names no longer allowed (on any port) are dropped at once.
 */
void		 gk_cage_set_allow(struct gk_cage *c, struct gk_allowlist *al);

/* One more denial of kind k by c: its own count, and its label's series
 * (gk_stats_label_denied). */
void		 gk_cage_count_denied(struct gk_cage *c, enum gk_deny_kind k);

/*
 * The host policy every cage of t stays within (gk_hostpolicy.h; NULL:
 * none). The table keeps the pointer: the caller keeps the policy alive.
 */
struct gk_hostpolicy;
void		 gk_cage_table_set_policy(struct gk_cage_table *t,
		    const struct gk_hostpolicy *p);
const struct gk_hostpolicy *gk_cage_table_policy(const struct gk_cage_table *t);
const struct gk_hostpolicy *gk_cage_policy(const struct gk_cage *c);

/*
 * Does the cage allow `name` on `port` (0: a lookup)? Never what the
 * host policy denies; then its allowlist, or
 * any name while it learns (the owner is told each name the allowlist
 * does not cover; special address ranges stay refused elsewhere).
 */
bool		 gk_cage_allows_name(const struct gk_cage *c, const char *name,
		    size_t len, uint16_t port);

/*
 * Kernel pin sync (see GK_PIN_SYNC_SLACK): for a cage with a link, fn
 * learns that address `a` must stay open to the cage until `until`
 * (monotonic seconds); 0 from fn records that the kernel knows.
 */
typedef int	(*gk_pin_sync_fn)(void *arg, const struct gk_cage *c,
		    const struct gk_addr *a, time_t until);
void		 gk_cage_table_pin_sync(struct gk_cage_table *t,
		    gk_pin_sync_fn fn, void *arg);

/* Iterate; the callback may not destroy cages. Order is unspecified. */
void		 gk_cage_foreach(const struct gk_cage_table *t,
		    void (*cb)(struct gk_cage *, void *), void *arg);

/*
 * Pinning: `name` (normalized, as allowed) resolved to `a` for this cage
 * until `expires`. Re-pinning extends the deadline (never shortens it).
 * When the per-cage cap is reached the entry closest to expiry goes.
 */
int		 gk_cage_pin(struct gk_cage *c, const char *name,
		    const struct gk_addr *a, time_t expires);
/* Is `a` pinned to this cage for exactly this name (normalized)? */
bool		 gk_cage_pinned_name(const struct gk_cage *c,
		    const struct gk_addr *a, const char *name, time_t now);
/*
 * The names `a` is pinned to (unexpired), for audit lines and for the
 * transparent proxy. Returns how many were written (at most max).
 */
size_t		 gk_cage_pin_names(const struct gk_cage *c,
		    const struct gk_addr *a, time_t now, const char **names,
		    size_t max);
size_t		 gk_cage_pin_count(const struct gk_cage *c);
/* Every unexpired pin: name, address, when it expires (gk_now() clock);
 * unordered. cb may not change the cage. */
void		 gk_cage_pin_foreach(const struct gk_cage *c, time_t now,
		    void (*cb)(const char *, const struct gk_addr *, time_t,
		    void *), void *arg);
/*
 * Drop expired pins; returns how many went. A pin due by now +
 * GK_PIN_INUSE_AHEAD whose address a connection of the cage still uses
 * (a holding with that destination) is kept until now +
 * GK_PIN_INUSE_KEEP instead: a client that reuses an address it resolved
 * long ago keeps working while it has a connection there.
 */
size_t		 gk_cage_expire(struct gk_cage *c, time_t now);
/* A connection to `a` opened: its pins last at least until `until`. */
void		 gk_cage_pin_keep(struct gk_cage *c, const struct gk_addr *a,
		    time_t until);

#endif /* GK_CAGE_H */
