/*
 * op_list: cage.list: the cages this peer may see.
 */
#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

struct list_arg {
	struct json_object	*arr;
	uid_t			 uid;
};

static void
list_one(struct gk_cage *c, void *arg)
{
	struct list_arg *la = arg;

	if (la->uid == 0 || la->uid == gk_cage_uid(c))
		json_object_array_add(la->arr, gk_ctl_cage_json(c, true));
}

void
op_list(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct list_arg la = { json_object_new_array(), cc->uid };

	(void)req;
	(void)fd;
	gk_cage_foreach(cc->ctl->cages, list_one, &la);
	ctl_reply_ok(cc, "cages", la.arr);
}
