/*
 * gk_learn: a learning cage ("learn": true in cage.create), the learning
 * facet (gk_facet.h). While it learns, any name its allowlist does not
 * cover is allowed (never one the host policy denies; special address
 * ranges stay refused elsewhere), and its owner is told each one
 * (gk_events_learn: gk-run writes them to an allow file). Its
 * cage.destroy line says how often learning allowed what the allowlist
 * would not have: "learned": N.
 *
 * On a host request rules inspect, a learning cage's requests are
 * learned too (gk_learn_request): each one's method and learnable path
 * (gk_reqlearn.h) told to its owner once (gk_events_learn_request), and
 * one no rule allows let through when it can be written as a rule.
 */
#ifndef GK_LEARN_H
#define GK_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gk_cage;
struct gk_cage_spec;
struct json_object;

int		 gk_learn_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_learn_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_learn_end(struct gk_cage *c, const char *reason);

/* Does c learn? */
bool		 gk_cage_learns(const struct gk_cage *c);
/* c's allowlist does not cover `name` on `port` (0: a lookup): true when
 * c learns (counted, its owner told), false when it does not. */
bool		 gk_learn_name(const struct gk_cage *c, const char *name,
		    size_t len, uint16_t port);

/*
 * A request of c to inspected host:port, method and target as sent;
 * `allowed`: a request rule allows it. True when c learns and the
 * request can be learned: its method is one rules name, its path one a
 * rule can hold (gk_reqlearn_path) without a placeholder's mark in the
 * target (gk_cred_leak); then its owner is told, and a request no rule
 * allowed counted as learning's. False otherwise (nothing told).
 */
bool		 gk_learn_request(const struct gk_cage *c, const char *host,
		    uint16_t port, const char *method, size_t mlen,
		    const char *target, size_t tlen, bool allowed);

#endif /* GK_LEARN_H */
