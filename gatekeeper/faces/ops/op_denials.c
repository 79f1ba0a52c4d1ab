/*
 * op_denials: denials: recent denials, one cage's or every visible one's,
 * and with follow, new ones as they come; pending: open questions.
 */
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* Cages this peer may see: all for root, else its own uid's. */
struct seen_arg {
	struct json_object	*arr;
	uid_t			 uid;
	bool			 questions;	/* else denials */
};

static void
seen_one(struct gk_cage *c, void *arg)
{
	struct seen_arg *sa = arg;

	if (sa->uid != 0 && sa->uid != gk_cage_uid(c))
		return;
	if (sa->questions)
		gk_ctl_questions_json(c, sa->arr);
	else
		gk_events_recent_json(c, sa->arr);
}

static int
by_time(const void *x, const void *y)
{
	struct json_object *const *a = x, *const *b = y, *ta, *tb;

	if (!json_object_object_get_ex(*a, "time", &ta) ||
	    !json_object_object_get_ex(*b, "time", &tb))
		return 0;
	return strcmp(json_object_get_string(ta), json_object_get_string(tb));
}

/* Recent denials (one cage's, or every visible one's, those that ended
 * in the last minutes too, oldest first); with follow, new ones as they
 * come. */
void
op_denials(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct seen_arg sa = { NULL, cc->uid, false };
	struct gk_cage *c = NULL;

	(void)fd;
	if (req->id[0] != '\0' &&
	    gk_cage_by_id(cc->ctl->cages, req->id) == NULL &&
	    ctl_ended_reply(cc, req, true))
		return;		/* one that ended lately */
	if (req->id[0] != '\0' && (c = ctl_find_managed(cc, req)) == NULL)
		return;
	sa.arr = json_object_new_array();
	if (c != NULL)
		gk_events_recent_json(c, sa.arr);
	else {
		gk_cage_foreach(cc->ctl->cages, seen_one, &sa);
		ctl_ended_denials(cc->ctl, cc->uid, sa.arr);
		json_object_array_sort(sa.arr, by_time);
	}
	ctl_reply_ok(cc, "denials", sa.arr);
	if (req->follow)
		gk_events_watch(&cc->watch, &cc->owner.sink, cc->uid,
		    req->id);
}

void
op_pending(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct seen_arg sa = { json_object_new_array(), cc->uid, true };

	(void)req;
	(void)fd;
	gk_cage_foreach(cc->ctl->cages, seen_one, &sa);
	ctl_reply_ok(cc, "questions", sa.arr);
}
