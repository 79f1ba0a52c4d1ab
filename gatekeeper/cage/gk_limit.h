/*
 * gk_limit: what one cage may make the daemon hold, so that no cage can
 * starve the others (README "Per-cage limits").
 *
 *  - Rates, as token buckets (a second's worth of burst): DNS queries,
 *    and names asked upstream because they were not cached.
 *  - Holdings, as counts: queries waiting on the upstream, DNS-over-TCP
 *    connections, proxy connections before their tunnel, tunnels. Each
 *    holding is a gk_hold the service embeds in its session; the cage
 *    keeps a list of them and ends every one when the cage ends.
 *  - Descriptors: the daemon raises its soft limit to the hard one and
 *    keeps a reserve for the control socket and new cages; holdings
 *    charge the rest, and once half of it is in use a cage above its
 *    share (the rest divided by the cages holding any) gets no more.
 *  - Audit lines per second (gk_audit asks gk_limit_audit_line()).
 *
 * A refusal is a limit event: counted in gk_stats.limit_events and in the
 * cage, and audited ("cage.limit") at most once per second per cage and
 * limit, the line carrying how many were refused since the last one.
 * Values come from the configuration (gk_limit_configure(), again on
 * SIGHUP); 0 means no limit. One thread: plain integers.
 */
#ifndef GK_LIMIT_H
#define GK_LIMIT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/state/gk_stats.h"

struct gk_audit;
struct gk_cage;

/* The configured budgets (per cage; 0: none). */
struct gk_limits {
	uint32_t	 dns_rate;		/* queries per second */
	uint32_t	 dns_upstream;		/* waiting on the upstream */
	uint32_t	 dns_upstream_rate;	/* upstream questions/s */
	uint32_t	 dns_tcp;
	uint32_t	 handshakes;
	uint32_t	 tunnels;
	uint32_t	 audit_rate;		/* audit lines per second */
};

#define GK_LIMIT_RESERVE_MAX	512	/* descriptors kept back */
#define GK_LIMIT_RESERVE_MIN	16

enum gk_hold_kind {
	GK_HOLD_HANDSHAKE,	/* a proxy connection before its tunnel */
	GK_HOLD_TUNNEL,
	GK_HOLD_DNS_TCP,
	GK_HOLD__MAX
};

struct gk_bucket {
	uint64_t	 last_ms;	/* tokens were added up to here */
	uint32_t	 tokens;
};

struct gk_hold;
typedef void (*gk_hold_end_cb)(struct gk_hold *h);

/*
 * One thing a cage holds, embedded in the service's session. The cage's
 * end calls `end`, which must close the thing at once (and may call
 * gk_hold_drop(), which is then a no-op for the cage).
 */
struct gk_hold {
	TAILQ_ENTRY(gk_hold)	 entry;
	struct gk_cage		*cage;		/* NULL: none or gone */
	enum gk_hold_kind	 kind;
	bool			 held;		/* counted in a cage */
	uint32_t		 fds;		/* charged descriptors */
	gk_hold_end_cb		 end;
	struct gk_addr		 dst;		/* where it connects (family
						 * 0: nowhere yet); keeps the
						 * cage's pins of it */
};

TAILQ_HEAD(gk_hold_list, gk_hold);

/* A cage's budget state: the limits facet's slot. */
struct gk_cage_lim {
	struct gk_hold_list	 holds;
	uint32_t		 held[GK_HOLD__MAX];
	uint32_t		 upstream;	/* queries waiting upstream */
	uint32_t		 fds;
	struct gk_bucket	 dns;
	struct gk_bucket	 up_rate;
	uint64_t		 audit_sec;	/* window of audit_lines */
	uint32_t		 audit_lines;
	uint64_t		 hits[GK_LIM__MAX];	/* refused, in total */
};

/* The daemon's descriptor budget. */
struct gk_fd_budget {
	uint64_t	 limit;		/* RLIMIT_NOFILE soft, after raising */
	uint64_t	 reserve;	/* never charged to a cage */
	uint64_t	 held;		/* charged now (holdings, pipes) */
	uint32_t	 holders;	/* cages with a descriptor charged */
};

extern struct gk_limits		gk_limits;
extern struct gk_fd_budget	gk_fds;

/* The values, and the audit log for cage.limit lines (may be NULL). */
void		 gk_limit_configure(const struct gk_limits *l,
		    struct gk_audit *audit);
/*
 * Raise RLIMIT_NOFILE's soft limit to the hard one and size the reserve
 * (an eighth of the limit, within the bounds above). Returns the limit;
 * `raised_from` is the soft limit found.
 */
uint64_t	 gk_limit_fds_init(uint64_t *raised_from);
/*
 * How many control connections may be open at once: `configured`, or for
 * 0 (control-connections auto) half the descriptors beyond the reserve,
 * the other half staying for the cages' own connections. A cage at rest
 * holds one descriptor, its control connection (the veth, its address and
 * set elements hold none), so LimitNOFILE=65536 gives 32,512.
 */
uint32_t	 gk_limit_control_conns(uint32_t configured);

/*
 * The limits facet (gk_facet.h): a cage's budget state begins with it; at
 * its end every holding's end callback runs (then it holds none), and the
 * cage.destroy line says what its limits refused over its life,
 * "limits":{"dns_rate":N,...}.
 */
struct gk_cage_spec;
struct json_object;
int		 gk_limit_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_limit_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_limit_end(struct gk_cage *c, const char *reason);
/* Every holding of c ends now (its end callback run: a tunnel adds its
 * bytes to the cage's traffic); the budget state stays until the end. */
void		 gk_limit_release(struct gk_cage *c);
/* c's budget state, to read (NULL c: the sources that are no cage's). */
const struct gk_cage_lim *gk_limit_of(const struct gk_cage *c);
/* How often limit k refused c. */
uint64_t	 gk_limit_hit_count(const struct gk_cage *c,
		    enum gk_limit_kind k);
/*
 * Where c's holdings connect, sorted by gk_addr_cmp (for bsearch): NULL
 * when none (or no memory). The caller frees it.
 */
struct gk_addr	*gk_limit_hold_dsts(struct gk_cage *c, size_t *n);

/* One DNS query from c: false (a limit event) when over its rate. */
bool		 gk_limit_dns_query(struct gk_cage *c, uint64_t now_ms);
/* c wants to wait on the upstream for an uncached name: false when over
 * its count or rate; else counted until gk_limit_upstream_done(). */
bool		 gk_limit_upstream(struct gk_cage *c, uint64_t now_ms,
		    const char *name);
void		 gk_limit_upstream_done(struct gk_cage *c);

/*
 * Hold something for c (NULL: a connection no cage owns yet, charged to
 * the daemon only) with `fds` descriptors. Returns GK_LIM__MAX when taken
 * (h linked into c's list), else the limit that refused (a limit event;
 * h untouched).
 */
enum gk_limit_kind gk_hold_take(struct gk_hold *h, struct gk_cage *c,
		    enum gk_hold_kind k, uint32_t fds, gk_hold_end_cb end);
/* Hand h to another kind (a handshake becomes a tunnel) or cage (a
 * token named it), with its own check; on refusal h is unchanged. */
enum gk_limit_kind gk_hold_move(struct gk_hold *h, struct gk_cage *c,
		    enum gk_hold_kind k, uint32_t fds);
/* Hand what `from` holds to `to` (embedded elsewhere) as kind k with fds
 * descriptors: the tunnel a handshake became. On refusal nothing moved;
 * from is dropped on success. */
enum gk_limit_kind gk_hold_transfer(struct gk_hold *from, struct gk_hold *to,
		    enum gk_hold_kind k, uint32_t fds, gk_hold_end_cb end);
/* Has c room for one more of kind k? If not, a limit event. */
bool		 gk_limit_hold_room(struct gk_cage *c, enum gk_hold_kind k);
/* Charge (or give back, delta < 0) descriptors; false when refused. */
bool		 gk_hold_fds(struct gk_hold *h, int delta);
/* Give everything back and unlink. Idempotent. */
void		 gk_hold_drop(struct gk_hold *h);

/* Descriptors not tied to a holding (a relay's pipes). */
bool		 gk_limit_fds_take(uint32_t n);
void		 gk_limit_fds_give(uint32_t n);

/* May c write one more audit line this second? Counts it if so. */
bool		 gk_limit_audit_line(struct gk_cage *c, uint64_t now_ms);
/*
 * The same for the lines (audit and log) about one request of c's; on
 * refusal a limit event whose example is "EVENT WHAT". c NULL: true.
 */
bool		 gk_limit_audit_ok(struct gk_cage *c, const char *event,
		    const char *what);

/* Record a limit event for c (NULL: no cage); example: what was refused,
 * for the audit line (may be NULL). */
void		 gk_limit_hit(struct gk_cage *c, enum gk_limit_kind k,
		    const char *example);
/* n events of a cage's own limit (memory, pids) whose value is `value`:
 * counted, and one audit line. */
void		 gk_limit_hits(struct gk_cage *c, enum gk_limit_kind k,
		    uint64_t n, uint64_t value, const char *example);
/* The configured value of a limit (descriptors: the cage's share now). */
uint64_t	 gk_limit_value(enum gk_limit_kind k);

#endif /* GK_LIMIT_H */
