/*
 * gk_contain_facet: a namespace cage's processes (the containment facet,
 * gk_facet.h). Its begin asks the daemon's containment
 * (gatekeeper/gk_contain.c, with gatekeeper/cgroup/) for the cage's
 * cgroup and limits; the record it makes is the facet's slot. Its end
 * kills the cage's processes and removes the cgroup. Without containment
 * cages have no cgroup, limits are refused (unless best effort) and
 * cage.attach answers that processes are not contained.
 */
#ifndef GK_CONTAIN_FACET_H
#define GK_CONTAIN_FACET_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/policy/gk_rlimits.h"

struct gk_cage;
struct gk_cage_spec;
struct gk_cage_table;
struct json_object;

typedef void	(*gk_attach_done)(void *arg, struct gk_cage *c, int rc,
		    const char *err);

/* The daemon's containment, given to the table (gk_contain_facet_set). */
struct gk_cage_containment {
	void	*arg;
	/* A namespace cage was made for peer `owner`: its cgroup, with
	 * limits l (if some cannot be enforced: -1 with a message, unless
	 * best_effort); or, with `adopt` (a reattach), the existing cgroup
	 * of that name if `owner` made it. Keeps its record in the cage's
	 * GK_FACET_CONTAIN slot. 0 or -1. */
	int	(*create)(void *arg, struct gk_cage *c, pid_t owner,
		    const struct gk_rlimits *l, bool best_effort,
		    const char *adopt, char *err, size_t errlen);
	/* cage.attach: the process of `pidfd`, a child of peer `owner`
	 * with uid `uid`, into c's cgroup. 0 done, -1 with a message, or
	 * 1 under way: done(done_arg, c, rc, err) follows from the loop,
	 * unless c ends first. */
	int	(*attach)(void *arg, struct gk_cage *c, int pidfd,
		    pid_t owner, uid_t uid, gk_attach_done done,
		    void *done_arg, char *err, size_t errlen);
	/* c ends: its processes are killed, its cgroup goes, its slot is
	 * cleared. */
	void	(*end)(void *arg, struct gk_cage *c);
	/* Before a reply to c's owner: c's limit events so far are
	 * counted and told (so they come before the reply). */
	void	(*poll)(void *arg, struct gk_cage *c);
	/* What the create reply says of it: {"kill":PATH,"limits":{...},
	 * ...}, or NULL (not contained). */
	struct json_object *(*describe)(void *arg, const struct gk_cage *c);
};

void		 gk_contain_facet_set(struct gk_cage_table *t,
		    const struct gk_cage_containment *h);

int		 gk_contain_facet_begin(struct gk_cage *c,
		    const struct gk_cage_spec *s, char *err, size_t errlen);
void		 gk_contain_facet_end(struct gk_cage *c, const char *reason);

/* Has c a cgroup? */
bool		 gk_cage_contained(const struct gk_cage *c);
/* Its limit events so far, counted and told (see poll above). */
void		 gk_cage_contain_poll(struct gk_cage *c);
/* See describe above: NULL when c has no cgroup. */
struct json_object *gk_cage_contain_describe(const struct gk_cage *c);
/* See attach above; -1 with a message when c has no cgroup. */
int		 gk_cage_contain_attach(struct gk_cage *c, int pidfd,
		    pid_t owner, uid_t uid, gk_attach_done done,
		    void *done_arg, char *err, size_t errlen);

#endif /* GK_CONTAIN_FACET_H */
