/*
 * gk_plumb_facet: a namespace cage's network, through the daemon's
 * plumbing hooks; its slot is the host link's index.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_plumb_facet.h"

struct plumbed {
	uint32_t	 link;
};

void
gk_plumb_facet_set(struct gk_cage_table *t, const struct gk_cage_plumbing *p)
{
	gk_cage_table_set_facet(t, GK_FACET_PLUMB, p);
}

const struct gk_cage_plumbing *
gk_plumb_facet(const struct gk_cage_table *t)
{
	return gk_cage_table_facet(t, GK_FACET_PLUMB);
}

int
gk_plumb_facet_begin(struct gk_cage *c, const struct gk_cage_spec *s,
    char *err, size_t errlen)
{
	const struct gk_cage_plumbing *h = gk_cage_facet_hooks(c,
	    GK_FACET_PLUMB);
	struct plumbed *p;
	struct gk_addr addr;
	uint32_t link = 0;

	if (!s->netns)
		return 0;
	if (h == NULL || h->up == NULL) {
		snprintf(err, errlen, "this gatekeeperd does not plumb network "
		    "namespaces (kernel plumbing is off: see --plumbing and "
		    "--listen); create the cage with a \"source\" address");
		return -1;
	}
	if (s->nsfd == -1) {
		snprintf(err, errlen, "\"netns\":true needs the network "
		    "namespace fd sent with the request line (sendmsg with "
		    "SCM_RIGHTS); none came with it");
		return -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, errlen, "cannot create the cage: out of memory");
		return -1;
	}
	if (h->up(h->arg, s->nsfd, s->uid, s->transparent,
	    gk_allow_has_cidr(s->allow), &addr, &link, err, errlen) == -1) {
		log_warnx("uid=%u pid=%d namespace refused: %s",
		    (unsigned)s->uid, s->owner != NULL ? (int)s->owner->pid :
		    0, err);
		free(p);
		return -1;
	}
	p->link = link;
	gk_cage_set_source(c, &addr);
	gk_cage_facet_set(c, GK_FACET_PLUMB, p);
	return 0;
}

void
gk_plumb_facet_end(struct gk_cage *c, const char *reason)
{
	const struct gk_cage_plumbing *h = gk_cage_facet_hooks(c,
	    GK_FACET_PLUMB);
	struct plumbed *p = gk_cage_facet(c, GK_FACET_PLUMB);

	(void)reason;
	if (p == NULL)
		return;
	if (h != NULL && h->down != NULL)
		h->down(h->arg, gk_cage_source(c));
	gk_cage_facet_set(c, GK_FACET_PLUMB, NULL);
	free(p);
}

bool
gk_cage_plumbed(const struct gk_cage *c)
{
	return gk_cage_facet(c, GK_FACET_PLUMB) != NULL;
}

uint32_t
gk_cage_plumb_link(const struct gk_cage *c)
{
	const struct plumbed *p = gk_cage_facet(c, GK_FACET_PLUMB);

	return p != NULL ? p->link : 0;
}

void
gk_cage_plumb_open(struct gk_cage *c)
{
	const struct gk_cage_plumbing *h = gk_cage_facet_hooks(c,
	    GK_FACET_PLUMB);

	if (gk_cage_plumbed(c) && h != NULL && h->open != NULL &&
	    gk_allow_has_cidr(gk_cage_allow(c)))
		h->open(h->arg, gk_cage_source(c));
}
