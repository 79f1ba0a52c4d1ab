/*
 * op_destroy: cage.destroy: the cage ends (its owner told first when it is
 * another peer that ends it).
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

void
op_destroy(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_cage *c;

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL)
		return;
	if (gk_cage_owner(c) != &cc->owner)
		gk_events_owner_end(c, cc->uid);
	gk_cage_end(c, "request");
	ctl_reply_ok(cc, "destroyed", json_object_new_string(req->id));
}
