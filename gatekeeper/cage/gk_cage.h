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

#include <sys/queue.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/policy/gk_rlimits.h"
#include "gatekeeper/policy/gk_upload.h"
#include "gatekeeper/state/gk_stats.h"

#define GK_CAGE_MAX		65536	/* cages in one table */
#define GK_CAGE_PINS_MAX	4096	/* pinned (name, address) per cage */
/*
 * The kernel's copy of a cage's pins (its nftables set of addresses the
 * cage may open TCP to) keeps an address exactly until the latest pin of
 * it expires (its capped TTL plus --pin-grace, or longer while in use),
 * never longer: it is told again only when a pin reaches past that (a
 * fresh upstream answer; repeated answers from the cache pin no later).
 * When the cage ends, its addresses are taken out of the kernel's copy.
 */
/* Pins due within GK_PIN_INUSE_AHEAD seconds, of addresses a connection
 * of the cage still uses, are kept GK_PIN_INUSE_KEEP seconds more
 * (gk_cage_expire, every few seconds; gk_cage_pin_keep, when the
 * connection opens): while it is open, and up to that long after. */
#define GK_PIN_INUSE_AHEAD	10
#define GK_PIN_INUSE_KEEP	20

struct event_base;
struct gk_audit;
struct json_object;
struct gk_cage;

/*
 * Where event lines for a cage's owner (and for followers of denials)
 * go: the control connection implements it. send queues o's line (and
 * takes o) unless, with `spare` bytes more, it would not fit in what may
 * wait; false when it was dropped.
 */
struct gk_line_sink {
	bool	(*send)(struct gk_line_sink *s, struct json_object *o,
		    size_t spare);
};

/*
 * Who made a cage (the control connection embeds one): the cage's events
 * go to its sink, and the cages it owns end when it does
 * (gk_cage_owner_end). The list is gk_cage.c's.
 */
struct gk_cage_owner {
	struct gk_line_sink	 sink;
	LIST_HEAD(, gk_cage)	 cages;
	uid_t			 uid;
	pid_t			 pid;
};

/*
 * What a new cage is to be (gk_cage_begin). The facets (gk_facet.h) read
 * theirs from it. `allow` is taken on success only.
 */
struct gk_cage_spec {
	const char		*label;		/* NULL or "": none */
	uid_t			 uid;
	struct gk_cage_owner	*owner;		/* NULL: none (tests) */
	struct gk_allowlist	*allow;
	struct gk_addr		 source;	/* unless netns */
	/* plumbing: the namespace (nsfd, the caller's) gets an address */
	bool			 netns;
	int			 nsfd;
	bool			 transparent;
	/* containment (netns cages) */
	const struct gk_rlimits	*limits;	/* NULL: none */
	bool			 limits_best_effort;
	const char		*adopt;		/* reattach: its cgroup */
	/* the owner's channel */
	bool			 events;	/* told its denials */
	bool			 learn;		/* any name; told each */
	bool			 ask;		/* holds and asks */
	uint32_t		 ask_timeout;	/* seconds */
	/* its upload budgets (gk_budget.h) */
	const struct gk_upload	*uploads;
	size_t			 nuploads;
	/* what runs in it, for the audit (gk_life.h) */
	char *const		*command;
	size_t			 ncommand;
};

enum gk_cage_err {
	GK_CAGE_E_OK,
	GK_CAGE_E_SOURCE_IN_USE,
	GK_CAGE_E_TOO_MANY,
	GK_CAGE_E_BAD_LABEL,	/* over 64 bytes or a non-printable byte */
	GK_CAGE_E_NOMEM,
	GK_CAGE_E_FACET,	/* a facet refused: its message says why */
};

struct gk_cage_table;

struct gk_cage_table *gk_cage_table_new(void);
/* Frees every cage still in it (no audit lines, no facet ends: the
 * daemon ends its cages first). */
void		 gk_cage_table_free(struct gk_cage_table *t);
size_t		 gk_cage_table_count(const struct gk_cage_table *t);
/* The loop asking cages' timers run on, and the audit log of cages'
 * begins and ends (NULL: none). The table keeps the pointers. */
void		 gk_cage_table_set_env(struct gk_cage_table *t,
		    struct event_base *base, struct gk_audit *audit);
/* Told of each cage of t as it ends (its connections ended, its facets
 * not yet: what it was is all there), with the reason; the control face
 * keeps a summary of recently ended cages. NULL: none. */
typedef void	(*gk_cage_end_fn)(const struct gk_cage *c,
		    const char *reason, void *arg);
void		 gk_cage_table_on_end(struct gk_cage_table *t,
		    gk_cage_end_fn fn, void *arg);
struct event_base *gk_cage_base(const struct gk_cage *c);
struct gk_audit	*gk_cage_audit(const struct gk_cage *c);

/*
 * Begin a cage as spec s says: its id (random, printable, unique) and
 * token, then each facet's begin in the facet table's order (gk_facet.h).
 * NULL when refused, with why in *e (may be NULL) and in err (the words
 * to show the one who asked); what had begun is ended.
 */
struct gk_cage	*gk_cage_begin(struct gk_cage_table *t,
		    const struct gk_cage_spec *s, enum gk_cage_err *e,
		    char *err, size_t errlen);
/*
 * End it: its connections (so that their bytes are counted), the audit
 * line (cage.destroy, with `reason`) and the log line, each facet's end
 * in reverse order (its processes, its network), then it is gone.
 * Accepts NULL.
 */
void		 gk_cage_end(struct gk_cage *c, const char *reason);
const char	*gk_cage_strerror(enum gk_cage_err e);

/* What a cage is. */
const char	*gk_cage_id(const struct gk_cage *c);
const char	*gk_cage_label(const struct gk_cage *c);
/* A secret naming the cage where the source address cannot (SOCKS5 user
 * name, HTTP proxy Basic user): for its creator only. */
const char	*gk_cage_token(const struct gk_cage *c);
uid_t		 gk_cage_uid(const struct gk_cage *c);
const struct gk_addr *gk_cage_source(const struct gk_cage *c);
const struct gk_allowlist *gk_cage_allow(const struct gk_cage *c);
time_t		 gk_cage_created(const struct gk_cage *c);	/* wall */

/* Its owner (NULL: none, or ended). */
struct gk_cage_owner *gk_cage_owner(const struct gk_cage *c);
void		 gk_cage_owner_init(struct gk_cage_owner *o, uid_t uid,
		    pid_t pid, bool (*send)(struct gk_line_sink *,
		    struct json_object *, size_t));
/* The owner goes: every cage it owns ends, with `reason`. */
void		 gk_cage_owner_end(struct gk_cage_owner *o,
		    const char *reason);
/* Each cage o owns; cb may not end cages. */
void		 gk_cage_owner_foreach(struct gk_cage_owner *o,
		    void (*cb)(struct gk_cage *, void *), void *arg);

/* Its own counters, whose series live while it lives: the one place
 * they are counted. */
enum gk_cage_tally {
	GK_TALLY_DNS_QUERY,
	GK_TALLY_CONNECTION,
	GK_TALLY_DENIED,	/* of kind k: its label's series too
				 * (gk_stats_label_denied) */
};
void		 gk_cage_count(struct gk_cage *c, enum gk_cage_tally what,
		    enum gk_deny_kind k);
uint64_t	 gk_cage_counted(const struct gk_cage *c,
		    enum gk_cage_tally what, enum gk_deny_kind k);

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
 * Kernel pin sync: for a cage with a link, fn learns that address `a`
 * must stay open to the cage until `until` (monotonic seconds), and
 * exactly that long; 0 from fn records that the kernel knows. `until` 0:
 * the cage ends, and `a` (which the kernel was told of, not lapsed yet)
 * is to be taken out.
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
