/*
 * op_update: cage.update: a new allowlist, or patterns added and removed.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

void
op_update(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_allowlist *al;
	struct gk_cage *c;

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL ||
	    (al = req->edit ? ctl_edit_allow(cc, req, c) :
	    ctl_make_allow(cc, req)) == NULL)
		return;
	gk_cage_set_allow(c, al);
	gk_cage_plumb_open(c);
	ctl_audit_change(cc, "cage.update", c, false);
	ctl_reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
}
