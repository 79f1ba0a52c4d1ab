/*
 * op_update: cage.update: a new allowlist, or patterns added and removed.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* A request rule's host must be one the cage's authority covers: the
 * sandbox trusts the authority it got at its start, and no other. */
static bool
rules_covered(struct ctlconn *cc, const struct gk_cage *c,
    struct gk_allowlist *al)
{
	const struct gk_pattern *p;
	char text[GK_PATTERN_MAX + 16];
	size_t i;

	for (i = 0; i < gk_allowlist_len(al); i++) {
		p = gk_allowlist_at(al, i);
		if (p->path[0] == '\0' || gk_cred_covers(c, p->name))
			continue;
		gk_pattern_format(p, text, sizeof(text));
		ctl_reply_error(cc, "cage %s: the request rule '%s' is for a "
		    "host its TLS authority does not cover (made when the cage "
		    "began, for the hosts its rules named then); a cage with "
		    "rules for it from the start can", gk_cage_id(c), text);
		gk_allowlist_free(al);
		return false;
	}
	return true;
}

void
op_update(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_allowlist *al;
	struct gk_cage *c;

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL ||
	    (al = req->edit ? ctl_edit_allow(cc, req, c) :
	    ctl_make_allow(cc, req)) == NULL || !rules_covered(cc, c, al))
		return;
	gk_cage_set_allow(c, al);
	gk_cage_plumb_open(c);
	ctl_audit_change(cc, "cage.update", c, false, NULL);
	ctl_reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
}
