/*
 * gk_contain_facet: a namespace cage's processes, through the daemon's
 * containment hooks, whose record is the facet's slot.
 */
#include <stdio.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_facet.h"

static const struct gk_cage_containment *
hooks(const struct gk_cage *c)
{
	return gk_cage_facet_hooks(c, GK_FACET_CONTAIN);
}

void
gk_contain_facet_set(struct gk_cage_table *t,
    const struct gk_cage_containment *h)
{
	gk_cage_table_set_facet(t, GK_FACET_CONTAIN, h);
}

/*
 * Without containment, limits are refused unless best effort; a cage
 * without limits runs anyway (the daemon said so at start).
 */
int
gk_contain_facet_begin(struct gk_cage *c, const struct gk_cage_spec *s,
    char *err, size_t errlen)
{
	const struct gk_cage_containment *h = hooks(c);
	bool any = s->limits != NULL && gk_rlimits_any(s->limits);
	struct gk_rlimits none = { 0 };
	char why[512];

	if (!s->netns)
		return 0;
	if (h == NULL || h->create == NULL) {
		if (!any || s->limits_best_effort)
			return 0;
		snprintf(err, errlen, "cannot create the cage: limits were "
		    "asked for, but this gatekeeperd cannot contain cages' "
		    "processes (no writable cgroup hierarchy; see its start-up "
		    "log)");
		return -1;
	}
	if (h->create(h->arg, c, s->owner != NULL ? s->owner->pid : 0,
	    s->limits != NULL ? s->limits : &none, s->limits_best_effort,
	    s->adopt, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "cannot create the cage: %s", why);
		return -1;
	}
	return 0;
}

void
gk_contain_facet_end(struct gk_cage *c, const char *reason)
{
	const struct gk_cage_containment *h = hooks(c);

	(void)reason;
	if (gk_cage_contained(c) && h != NULL && h->end != NULL)
		h->end(h->arg, c);
	gk_cage_facet_set(c, GK_FACET_CONTAIN, NULL);
}

bool
gk_cage_contained(const struct gk_cage *c)
{
	return gk_cage_facet(c, GK_FACET_CONTAIN) != NULL;
}

void
gk_cage_contain_poll(struct gk_cage *c)
{
	const struct gk_cage_containment *h = hooks(c);

	if (gk_cage_contained(c) && h != NULL && h->poll != NULL)
		h->poll(h->arg, c);
}

struct json_object *
gk_cage_contain_describe(const struct gk_cage *c)
{
	const struct gk_cage_containment *h = hooks(c);

	if (!gk_cage_contained(c) || h == NULL || h->describe == NULL)
		return NULL;
	return h->describe(h->arg, c);
}

int
gk_cage_contain_attach(struct gk_cage *c, int pidfd, pid_t owner,
    uid_t uid, gk_attach_done done, void *done_arg, char *err,
    size_t errlen)
{
	const struct gk_cage_containment *h = hooks(c);

	if (!gk_cage_contained(c) || h == NULL || h->attach == NULL) {
		snprintf(err, errlen, "cage %s has no cgroup (this gatekeeperd "
		    "does not contain cages' processes; see its start-up log)",
		    gk_cage_id(c));
		return -1;
	}
	return h->attach(h->arg, c, pidfd, owner, uid, done, done_arg, err,
	    errlen);
}
