/*
 * gk_events: a cage's denials told to its owner, the control connection
 * that created it with "events": true (gk-run prints them). One line per
 * distinct (host, port, reason) in the cage's life, however often the
 * program retries, so a flood of denials costs no more than its answers:
 *
 *   {"event":"deny","cage":"k3j9x0qa","time":"2026-11-25T10:00:00.123Z",
 *    "kind":"http","host":"registry.yarnpkg.com","port":443,
 *    "reason":"not_allowlisted","why":"..."}
 *
 * "kind" is dns (a lookup: "port" 0), socks5, http or transparent;
 * "reason" a gatekeeper_denied_total reason. After GK_EVENTS_DISTINCT
 * distinct denials one {"event":"deny.more","cage":...} line says that
 * later ones are not told. Lines wait in the connection's output, at most
 * GK_EVENTS_BUFFERED bytes of them; beyond that (an owner that does not
 * read) they are dropped.
 */
#ifndef GK_EVENTS_H
#define GK_EVENTS_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/state/gk_stats.h"

#define GK_EVENTS_DISTINCT	1024
#define GK_EVENTS_RECENT	32	/* distinct denials kept per cage */
#define GK_EVENTS_BUFFERED	(256 * 1024)

struct gk_cage;
struct gk_cage_spec;
struct gk_line_sink;

/*
 * A learning cage used a name its allowlist does not cover, on `port` (0:
 * a lookup): once per name and port, {"event":"learn","cage":...,
 * "time":...,"host":"x.example","port":443}.
 */
void		 gk_events_learn(const struct gk_cage *c, const char *name,
		    size_t len, uint16_t port);
/*
 * A learning cage's request to an inspected host (gk_learn_request):
 * once per host, port, method and learnable path (gk_reqlearn_path),
 * counted with the names above, {"event":"learn.request","cage":...,
 * "time":...,"host":"github.com","port":443,"method":"GET",
 * "path":"/acme/hello.git/info/refs"}.
 */
void		 gk_events_learn_request(const struct gk_cage *c,
		    const char *host, uint16_t port, const char *method,
		    const char *path);
/*
 * The cage's own limit `limit` ("memory", "pids") of `value` acted
 * `count` more times: {"event":"limit","cage":...,"time":...,
 * "limit":"memory","value":67108864,"count":1} (every time).
 */
void		 gk_events_limit(const struct gk_cage *c, const char *limit,
		    uint64_t value, uint64_t count);
/*
 * An asking cage's question (gk_ask.h), every one told:
 * {"event":"ask","cage":...,"time":...,"id":"17","host":"example.org",
 *  "port":443,"kind":"http","timeout":60}, and its end:
 * {"event":"ask.done","cage":...,"time":...,"id":"17","host":...,
 *  "port":443,"decision":"run","by":"tty"}.
 */
void		 gk_events_ask(const struct gk_cage *c, uint64_t id,
		    const char *host, uint16_t port, enum gk_deny_kind kind,
		    uint32_t timeout);
void		 gk_events_ask_done(const struct gk_cage *c, uint64_t id,
		    const char *host, uint16_t port, const char *decision,
		    const char *by);
/*
 * A connection the cage was allowed to make failed upstream (`failure`:
 * "unreachable", "refused" or "timeout"; `why` for people: "it has no
 * address (the upstream DNS said NXDOMAIN)"). Its owner is told once per
 * host and port in the cage's life, however often the program retries:
 * {"event":"unreachable","cage":...,"time":...,"kind":"http",
 *  "host":"pypi.org","port":443,"failure":"unreachable","why":"..."};
 * after GK_EVENTS_DISTINCT of them one {"event":"unreachable.more",...}.
 * c may be NULL (nothing is told).
 */
void		 gk_events_unreachable(const struct gk_cage *c,
		    enum gk_deny_kind kind, const char *host, uint16_t port,
		    const char *failure, const char *why);
void		 gk_events_deny(struct gk_cage *c, enum gk_deny_kind kind,
		    const char *host, uint16_t port, enum gk_deny_reason reason,
		    const char *why);
/*
 * Every denial is also kept among the cage's GK_EVENTS_RECENT most recent
 * distinct (kind, host, port, reason) ones, with how often and when last,
 * and told to every connection following denials (gk_events_watch) that
 * may see the cage: every one, not deduplicated,
 *   {"event":"deny","cage":...,"label":"demo","time":...,"kind":"http",
 *    "host":...,"port":443,"reason":...,"why":...},
 * {"event":"deny.dropped","count":N} first when N lines were dropped for
 * a watcher that read too slowly, and {"event":"cage.end","cage":...,
 * "label":...} when a cage it may see ends.
 */
struct json_object;

/* One follower of denials (the control connection embeds it). */
struct gk_events_watch {
	TAILQ_ENTRY(gk_events_watch) entry;
	struct gk_line_sink	*sink;
	uid_t			 uid;
	char			 id[GK_CAGE_ID_LEN + 1];	/* "": all */
	uint64_t		 dropped;	/* not sent yet: told */
	bool			 on;
};
/* c's recent denials appended to arr, oldest first: {"cage","label",
 * "time","kind","host","port","reason","count"}. */
void		 gk_events_recent_json(const struct gk_cage *c,
		    struct json_object *arr);
/* w (zeroed, or unwatched) follows into `sink` the denials of cage `id`
 * ("": of every cage), of `uid`'s cages only unless it is root; again: a
 * new id. */
void		 gk_events_watch(struct gk_events_watch *w,
		    struct gk_line_sink *sink, uid_t uid, const char *id);
/* Before w goes. */
void		 gk_events_unwatch(struct gk_events_watch *w);
void		 gk_events_cage_end(const struct gk_cage *c);
/* Someone other than its owner ends the cage: the owner is told first,
 * {"event":"cage.end","cage":...,"time":...,"reason":"destroyed by uid
 * 0"} (gk-run says so before its command is killed). */
void		 gk_events_owner_end(const struct gk_cage *c, uid_t by);
/* The same, for another reason ("gatekeeperd stopped"). */
void		 gk_events_owner_told(const struct gk_cage *c,
		    const char *why);

/* The events facet (gk_facet.h): its recent denials, and with "events",
 * "learn" or "ask" in the spec its sets of what its owner was told. */
int		 gk_events_begin(struct gk_cage *c,
		    const struct gk_cage_spec *s, char *err, size_t errlen);
void		 gk_events_end(struct gk_cage *c, const char *reason);

#endif /* GK_EVENTS_H */
