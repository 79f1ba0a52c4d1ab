/*
 * op_decide: cage.decide: an answer to one of an asking cage's questions.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* An answer to one of the cage's questions (gk_ask.h). */
void
op_decide(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	char err[CTL_ERRLEN];
	struct gk_cage *c;

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL)
		return;
	if (gk_ask_decide(c, req->question, req->decision, req->by, err,
	    sizeof(err)) == -1) {
		ctl_reply_error(cc, "%s", err);
		return;
	}
	ctl_reply_ok(cc, NULL, NULL);
}
