/*
 * op_reload: reload (root only): what SIGHUP does.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

void
op_reload(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	const struct gk_ctl_reload *h = &cc->ctl->reload;
	char policy[128], err[CTL_ERRLEN];
	struct json_object *o;

	(void)req;
	(void)fd;
	if (cc->uid != 0) {
		ctl_reply_coded(cc, CTL_NOT_PERMITTED, "not permitted: reload "
		    "is for root (uid %u manages only its own cages)",
		    (unsigned)cc->uid);
		return;
	}
	if (h->fn == NULL) {
		ctl_reply_error(cc, "this gatekeeperd cannot reload over the "
		    "control socket; send it SIGHUP");
		return;
	}
	if (h->fn(h->arg, policy, sizeof(policy), err, sizeof(err)) == -1) {
		ctl_reply_error(cc, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "policy", json_object_new_string(policy));
	json_object_object_add(o, "cages",
	    json_object_new_uint64(gk_cage_table_count(cc->ctl->cages)));
	ctl_reply_ok(cc, "reload", o);
}
