/*
 * gk_life: a cage's command and how it ended, the life facet (gk_facet.h).
 * Its begin keeps the command the spec names (gk-run's, for the audit);
 * its owner may say how the command ended (gk_life_said) before it ends
 * the cage; the cage.destroy audit line then carries "command" and
 * "exit" or "signal".
 */
#ifndef GK_LIFE_H
#define GK_LIFE_H

#include <stddef.h>

struct gk_cage;
struct gk_cage_spec;
struct json_object;

int		 gk_life_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_life_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_life_end(struct gk_cage *c, const char *reason);

/* c's command exited with status (0..255), or was killed by signal
 * ("SIGKILL"; then status is -1). */
void		 gk_life_said(struct gk_cage *c, int status, const char *signal);

#endif /* GK_LIFE_H */
