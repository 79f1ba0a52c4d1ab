/*
 * op_destroy: cage.destroy: the cage ends (its owner told first when it is
 * another peer that ends it).
 */
#include <stdio.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_life.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* Why c ends, as its cage.destroy line says: what its owner said of its
 * command's end, or who ended it. */
static void
end_reason(struct ctlconn *cc, const struct gk_ctlreq *req,
    struct gk_cage *c, char *why, size_t len)
{
	if (gk_cage_owner(c) != &cc->owner)	/* an operator */
		snprintf(why, len, "destroyed by uid %u", (unsigned)cc->uid);
	else if (req->end_reason[0] != '\0')
		snprintf(why, len, "%s", req->end_reason);
	else if (req->signal[0] != '\0')
		snprintf(why, len, "killed");
	else if (req->exited)
		snprintf(why, len, "exited");
	else
		snprintf(why, len, "request");
}

void
op_destroy(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_cage *c;
	char why[64];

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL)
		return;
	if (gk_cage_owner(c) != &cc->owner && (req->exited ||
	    req->signal[0] != '\0')) {
		ctl_reply_error(cc, "only the connection that created cage %s "
		    "(its gk-run) says how its command ended; drop \"exit\", "
		    "\"signal\" and \"reason\"", gk_cage_id(c));
		return;
	}
	end_reason(cc, req, c, why, sizeof(why));
	if (gk_cage_owner(c) != &cc->owner)
		gk_events_owner_end(c, cc->uid);
	else if (req->exited || req->signal[0] != '\0')
		gk_life_said(c, req->exited ? req->exit_status : -1,
		    req->signal);
	gk_cage_end(c, why);
	ctl_reply_ok(cc, "destroyed", json_object_new_string(req->id));
}
