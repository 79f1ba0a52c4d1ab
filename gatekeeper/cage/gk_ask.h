/*
 * gk_ask: a cage that asks before it denies ("ask": true in cage.create).
 *
 * A connection to a name outside the cage's allowlist is held on a
 * question to the cage's owner ({"event":"ask"}, gk_events.h): one
 * question per host and port while it is open, however many connections
 * wait on it. The owner's answer (cage.decide) or the timeout ends it
 * ({"event":"ask.done"}), and every connection waiting on it learns the
 * outcome at once:
 *
 *   once      they go on; the next connection asks again
 *   run/save  they go on, and host:port joins the cage's allowlist
 *   deny      they are refused, and so is host:port from then on
 *   timeout   they are refused (never allowed because time ran out)
 *
 * Each question is counted (gatekeeper_asks_total{decision}), logged and
 * audited (proxy.ask) once, when it ends.
 *
 * Placeholders: a program that resolves names itself must reach a proxy
 * before it can be held. The cage's DNS answers a name outside its
 * allowlist with a placeholder address of its own, from GK_ASK_NET
 * (198.18.0.0/15, never routed anywhere), and nothing is asked upstream.
 * The transparent proxy maps a connection to a placeholder back to its
 * name (gk_ask_placeholder_name) and holds it like a named request; no
 * packet to a placeholder leaves the host.
 */
#ifndef GK_ASK_H
#define GK_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/state/gk_stats.h"

#define GK_ASK_QUESTIONS_MAX	256	/* open at once, per cage */
#define GK_ASK_DENIED_MAX	1024	/* host:port denied, per cage */
#define GK_ASK_PLACEHOLDERS	4096	/* names with an address, per cage;
					   the oldest is reused after */
#define GK_ASK_PLACEHOLDER_TTL	5	/* seconds, in the DNS answer */

struct event_base;
struct gk_audit;
struct gk_cage;
struct gk_ask_wait;

/* The outcome for one held connection; runs once, then w is gone. */
typedef void	(*gk_ask_cb)(void *arg, enum gk_decision d);

/*
 * The questions facet (gk_facet.h): with "ask" in the spec the cage asks,
 * its questions waiting ask_timeout seconds (on the table's loop, audited
 * in its log). At its end (after its holdings ended) open questions go
 * silently.
 */
struct gk_cage_spec;
int		 gk_ask_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_ask_end(struct gk_cage *c, const char *reason);
/* Does c ask (else it denies at once)? */
bool		 gk_cage_asks(const struct gk_cage *c);

/* Is a in 198.18.0.0/15? */
bool		 gk_ask_net(const struct gk_addr *a);
/* The placeholder standing for `name` (normalized) in asking cage c,
 * made if new. -1: c does not ask, or no memory. */
int		 gk_ask_placeholder(struct gk_cage *c, const char *name,
		    struct gk_addr *out);
/* The name placeholder `a` stands for in c; NULL: none. */
const char	*gk_ask_placeholder_name(const struct gk_cage *c,
		    const struct gk_addr *a);

enum gk_ask_status {
	GK_ASK_HELD,		/* *w is set; cb runs later, never inside */
	GK_ASK_DENIED,		/* host:port was denied for this cage */
	GK_ASK_FULL,		/* too many open questions, or no memory */
};

/*
 * Hold a connection of kind `kind` to host:port (a normalized name the
 * cage's allowlist does not allow there) on its question, asked now if
 * none is open.
 */
enum gk_ask_status gk_ask_hold(struct gk_cage *c, const char *host,
		    uint16_t port, enum gk_deny_kind kind, gk_ask_cb cb,
		    void *arg, struct gk_ask_wait **w);
/* The held connection went away; its callback will not run. */
void		 gk_ask_cancel(struct gk_ask_wait *w);
/*
 * The owner's answer to question `id` (once, run, save or deny) from
 * `by` ("tty", "supervisor"). 0, or -1 with a message in err when no
 * such question is open in c.
 */
int		 gk_ask_decide(struct gk_cage *c, uint64_t id,
		    enum gk_decision d, const char *by, char *err,
		    size_t errlen);
/* Seconds a question of c waits (0: c does not ask). */
uint32_t	 gk_ask_timeout(const struct gk_cage *c);
/* Open questions (for cage.list). */
size_t		 gk_ask_open(const struct gk_cage *c);

/* An open question, as cage.show and pending tell it. */
struct gk_ask_info {
	uint64_t	 id;
	const char	*host;
	uint16_t	 port;
	enum gk_deny_kind kind;
	uint64_t	 age_ms;	/* since it was asked */
	uint64_t	 left_ms;	/* until it times out */
	uint32_t	 held;		/* connections held on it, ever */
};
/* Each open question of c, oldest first (none if c does not ask). */
void		 gk_ask_foreach(const struct gk_cage *c,
		    void (*cb)(const struct gk_ask_info *, void *), void *arg);

#endif /* GK_ASK_H */
