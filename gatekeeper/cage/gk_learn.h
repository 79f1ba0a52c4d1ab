/*
 * gk_learn: a learning cage ("learn": true in cage.create), the learning
 * facet (gk_facet.h). While it learns, any name its allowlist does not
 * cover is allowed (never one the host policy denies; special address
 * ranges stay refused elsewhere), and its owner is told each one
 * (gk_events_learn: gk-run writes them to an allow file). Its
 * cage.destroy line says how often learning allowed what the allowlist
 * would not have: "learned": N.
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

#endif /* GK_LEARN_H */
