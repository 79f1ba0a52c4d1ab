/*
 * gk_ctlended: recently ended cages, for the operator. As a cage ends
 * (gk_cage_table_on_end) its cage.show summary is kept, without what
 * ended with it (pins, questions), with when and why it ended; cage.show
 * and denials answer from it for CTL_ENDED_SEC seconds, the last
 * CTL_ENDED_MAX cages at most.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"

/* Is e kept still? An expired one is let go here. */
static bool
live(struct ctl_ended *e, time_t now)
{
	if (e->summary == NULL)
		return false;
	if (now - e->when <= CTL_ENDED_SEC)
		return true;
	json_object_put(e->summary);
	e->summary = NULL;
	return false;
}

void
ctl_ended_keep(const struct gk_cage *c, const char *reason, void *arg)
{
	struct gk_control *ctl = arg;
	struct ctl_ended *e = &ctl->ended[ctl->ended_next];
	struct json_object *o = gk_ctl_cage_show_json(c);
	char ts[GK_UTC_STAMP_LEN];

	/* what ended with it is not its summary */
	json_object_object_del(o, "pins");
	json_object_object_del(o, "pinned");
	json_object_object_del(o, "questions");
	json_object_object_del(o, "pending");
	gk_utc_stamp(ts, sizeof(ts));
	json_object_object_add(o, "ended_at", json_object_new_string(ts));
	json_object_object_add(o, "end_reason",
	    json_object_new_string(reason));
	json_object_put(e->summary);
	e->summary = o;
	snprintf(e->id, sizeof(e->id), "%s", gk_cage_id(c));
	e->uid = gk_cage_uid(c);
	e->when = gk_now();
	ctl->ended_next = (ctl->ended_next + 1) % CTL_ENDED_MAX;
}

void
ctl_ended_clear(struct gk_control *ctl)
{
	size_t i;

	for (i = 0; i < CTL_ENDED_MAX; i++) {
		json_object_put(ctl->ended[i].summary);
		ctl->ended[i].summary = NULL;
	}
}

/* The last kept cage with this id; NULL: none. */
static struct ctl_ended *
find(struct gk_control *ctl, const char *id)
{
	time_t now = gk_now();
	size_t i, k;

	for (i = 1; i <= CTL_ENDED_MAX; i++) {
		k = (ctl->ended_next + CTL_ENDED_MAX - i) % CTL_ENDED_MAX;
		if (live(&ctl->ended[k], now) &&
		    strcmp(ctl->ended[k].id, id) == 0)
			return &ctl->ended[k];
	}
	return NULL;
}

bool
ctl_ended_reply(struct ctlconn *cc, const struct gk_ctlreq *req,
    bool denials)
{
	struct ctl_ended *e = find(cc->ctl, req->id);
	struct json_object *o, *recent;

	if (e == NULL)
		return false;
	if (cc->uid != 0 && e->uid != cc->uid) {
		ctl_reply_coded(cc, CTL_NOT_PERMITTED, "not permitted: cage "
		    "%s (ended) belonged to uid %u; uid %u sees only its own "
		    "cages (root sees all)", e->id, (unsigned)e->uid,
		    (unsigned)cc->uid);
		return true;
	}
	o = e->summary;
	if (denials) {
		if (!json_object_object_get_ex(o, "recent", &recent))
			recent = NULL;
		ctl_reply_ok(cc, "denials", recent != NULL ?
		    json_object_get(recent) : json_object_new_array());
		return true;
	}
	/* how long ago, as of this answer */
	json_object_object_add(o, "ended",
	    json_object_new_int64((int64_t)(gk_now() - e->when)));
	ctl_reply_ok(cc, "cage", json_object_get(o));
	return true;
}

void
ctl_ended_denials(struct gk_control *ctl, uid_t uid, struct json_object *arr)
{
	struct json_object *recent;
	time_t now = gk_now();
	size_t i, j, n;

	for (i = 0; i < CTL_ENDED_MAX; i++) {
		if (!live(&ctl->ended[i], now) ||
		    (uid != 0 && uid != ctl->ended[i].uid) ||
		    !json_object_object_get_ex(ctl->ended[i].summary,
		    "recent", &recent))
			continue;
		n = json_object_array_length(recent);
		for (j = 0; j < n; j++)
			json_object_array_add(arr, json_object_get(
			    json_object_array_get_idx(recent, j)));
	}
}
