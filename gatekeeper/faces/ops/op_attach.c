/*
 * op_attach: cage.attach: a process into the cage's cgroup.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* The answer to a cage.attach that waited for its cgroup. */
static void
attach_done(void *arg, struct gk_cage *c, int rc, const char *err)
{
	struct ctlconn *cc = arg;

	if (rc == -1)
		ctl_reply_error(cc, "cannot put the process in cage %s: %s",
		    gk_cage_id(c), err);
	else
		ctl_reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
	ctlconn_resume(cc);
}

void
op_attach(struct ctlconn *cc, const struct gk_ctlreq *req, int pidfd)
{
	char err[CTL_ERRLEN];
	struct gk_cage *c;
	int rc;

	if ((c = ctl_find_managed(cc, req)) == NULL)
		return;
	if (pidfd == -1) {
		ctl_reply_error(cc, "cage.attach needs a pidfd of the process "
		    "sent with the request line (sendmsg with SCM_RIGHTS); none "
		    "came with it");
		return;
	}
	if (!gk_cage_contained(c)) {
		ctl_reply_error(cc, "cage %s has no cgroup (this gatekeeperd "
		    "does not contain cages' processes; see its start-up log)",
		    gk_cage_id(c));
		return;
	}
	rc = gk_cage_contain_attach(c, pidfd, cc->pid, cc->uid, attach_done,
	    cc, err, sizeof(err));
	if (rc == 1) {		/* its answer when the move is done (systemd's
				   job, or gk_cgmove.c's thread) */
		ctlconn_wait(cc);
		return;
	}
	attach_done(cc, c, rc, err);
}
