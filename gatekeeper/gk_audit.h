/*
 * gk_audit: the audit log, one JSON object per line:
 *   {"time":"2026-11-23T12:00:00.123Z","event":"dns.deny",
 *    "cage":"k3j9x0qa","label":"demo", ...details}
 * Lines are buffered and written at most every 100 ms (and at exit), so a
 * flood of denies costs no more than the answers it produces.
 */
#ifndef GK_AUDIT_H
#define GK_AUDIT_H

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
void		 gk_audit_flush(struct gk_audit *a);

/*
 * A generic event. `details` (may be NULL) is a JSON object whose members
 * are merged into the line; it is consumed (put). `c` may be NULL.
 */
void		 gk_audit_event(struct gk_audit *a, const char *event,
		    const struct gk_cage *c, struct json_object *details);

/* The hot path: a denied DNS query, formatted without building objects. */
void		 gk_audit_dns_deny(struct gk_audit *a, const struct gk_cage *c,
		    const struct gk_addr *client, const char *name,
		    uint16_t qtype, const char *why);

#endif /* GK_AUDIT_H */
