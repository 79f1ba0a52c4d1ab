/*
 * op_stats: stats: the daemon's counters.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_stats.h"

void
op_stats(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	(void)req;
	(void)fd;
	ctl_reply_ok(cc, "stats", gk_ctl_stats_json(&gk_stats,
	    gk_cage_table_count(cc->ctl->cages)));
}
