/*
 * gk_hostpol: the host policy file at run time (gk_hostpolicy.h is its
 * pure parser): read at start and on SIGHUP, and a narrower bound applied
 * to the cages that live when it comes.
 */
#ifndef GK_HOSTPOL_H
#define GK_HOSTPOL_H

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/policy/gk_hostpolicy.h"

struct gk_audit;
struct gk_cage_table;

/*
 * Read and parse the policy at `path` into out. 1: loaded; 0: no policy
 * ("off", or the default path absent: `named` false); -1 with one line
 * in err (a file named by the configuration that is missing, unreadable,
 * too large or invalid: "FILE:LINE: ...").
 */
int		 gk_hostpol_load(const char *path, bool named,
		    struct gk_hostpolicy *out, char *err, size_t errlen);
/*
 * Every cage of t keeps only the patterns of its allowlist within p's
 * bound (pins of names it no longer allows go with them, as for
 * cage.update): logged and audited ("cage.update", reason "policy", the
 * patterns removed). Returns how many cages changed.
 */
size_t		 gk_hostpol_narrow(struct gk_cage_table *t,
		    const struct gk_hostpolicy *p, struct gk_audit *a);

#endif /* GK_HOSTPOL_H */
