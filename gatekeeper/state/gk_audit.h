/*
 * gk_audit: the audit log, one JSON object per line:
 *   {"time":"2026-11-23T12:00:00.123Z","event":"dns.deny",
 *    "cage":"k3j9x0qa","label":"demo", ...details}
 * Lines are buffered and written at most every 100 ms (and at exit), so a
 * flood of denies costs no more than the answers it produces.
 */
#ifndef GK_AUDIT_H
#define GK_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;
struct gk_cage;
struct gk_addr;
struct json_object;

struct gk_audit;

/* path: a file (appended, 0640), "-" for stdout, NULL for no audit log. */
struct gk_audit	*gk_audit_open(struct event_base *base, const char *path,
		    char *err, size_t errlen);
void		 gk_audit_close(struct gk_audit *a);
/* Reopen the file (after log rotation; SIGHUP). */
int		 gk_audit_reopen(struct gk_audit *a);
/* Every line from now on says which host policy ran ("policy":version;
 * NULL or "": none). */
void		 gk_audit_set_policy(struct gk_audit *a, const char *version);
void		 gk_audit_flush(struct gk_audit *a);
/*
 * Allowed connections sampled into the log (audit-allowed N): one in
 * every N that end, counted across the daemon, the first, the N+1-th
 * and so on (0, the default: none). gk_audit_allowed_take() counts one
 * and says whether its line is to be written ("conn.allow", by the
 * caller, within its cage's audit budget); never with a NULL a.
 */
void		 gk_audit_set_allowed(struct gk_audit *a, uint32_t every);
bool		 gk_audit_allowed_take(struct gk_audit *a);

/*
 * A generic event. `details` (may be NULL) is a JSON object whose members
 * are merged into the line; it is consumed (put). `c` may be NULL.
 */
void		 gk_audit_event(struct gk_audit *a, const char *event,
		    const struct gk_cage *c, struct json_object *details);

/*
 * A per-cage limit refused something: "cage.limit" lines with the limit's
 * name and value. The first refusal of a (cage, limit) writes a line at
 * once ("refused": 1, its example); the rest within the next second are
 * counted and written as one line when the second is over ("refused": N,
 * up to three examples). So a flood costs two lines a second per limit.
 */
void		 gk_audit_limit(struct gk_audit *a, const struct gk_cage *c,
		    const char *limit, uint64_t value, const char *example);

/*
 * The hot path: a denied DNS query. The first denial of a (cage, name,
 * type) writes a line at once; identical ones within the next second are
 * folded into one follow-up line carrying "repeated": N (written when the
 * second is over), so a flood costs a counter increment, not a line.
 *
 * gk_audit_dns_deny_fold() returns true when the denial was folded (the
 * caller is done); otherwise the caller computes `why` and calls
 * gk_audit_dns_deny(), which writes the line and opens the fold window.
 */
bool		 gk_audit_dns_deny_fold(struct gk_audit *a,
		    const struct gk_cage *c, const char *name, uint16_t qtype);
void		 gk_audit_dns_deny(struct gk_audit *a, struct gk_cage *c,
		    const struct gk_addr *client, const char *name,
		    uint16_t qtype, const char *why);
/* A query whose name carries a credential's placeholder (name redacted
 * by the caller): a dns.deny line with reason credential_leak and the
 * credential's name; never folded. */
void		 gk_audit_dns_leak(struct gk_audit *a, struct gk_cage *c,
		    const struct gk_addr *client, const char *name,
		    uint16_t qtype, const char *why, const char *credential);

#endif /* GK_AUDIT_H */
