/*
 * op_show: cage.show: one cage, whole (or one that ended lately, as it
 * was: gk_ctlended.c).
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

void
op_show(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_cage *c;

	(void)fd;
	/* a cage that ended lately: its summary, how long ago and why */
	if (gk_cage_by_id(cc->ctl->cages, req->id) == NULL &&
	    ctl_ended_reply(cc, req, false))
		return;
	if ((c = ctl_find_managed(cc, req)) != NULL)
		ctl_reply_ok(cc, "cage", gk_ctl_cage_show_json(c));
}
