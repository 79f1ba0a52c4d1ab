/*
 * op_credential: cage.credential: a secret for the hosts it belongs to
 * (gk_cred.h), given by the connection that created the cage, and only
 * by it: a secret travels from its owner to gatekeeperd and nowhere else.
 * The reply carries the cage's new authority (PEM) for the sandbox's
 * trust; the audit line names the credential and its hosts, never a
 * value or a placeholder.
 */
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_audit.h"

static void
audit_credential(struct ctlconn *cc, const struct gk_cage *c,
    struct json_object *one)
{
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "uid", json_object_new_int64(cc->uid));
	json_object_object_add(d, "credential", json_object_get(one));
	gk_audit_event(cc->ctl->audit, "cage.credential", c, d);
}

void
op_credential(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct json_object *one, *r;
	struct gk_cage *c;
	char err[512];

	(void)fd;
	if ((c = ctl_find_managed(cc, req)) == NULL)
		return;
	if (gk_cage_owner(c) != &cc->owner) {
		ctl_reply_coded(cc, CTL_NOT_PERMITTED, "not permitted: only "
		    "the connection that created cage %s gives it credentials",
		    gk_cage_id(c));
		return;
	}
	err[0] = '\0';
	if (gk_cred_add(c, req->cred_name,
	    (const uint8_t *)req->cred_placeholder,
	    (const uint8_t *)req->cred_value, req->cred_len,
	    (const char *const *)req->hosts, req->nhosts, err,
	    sizeof(err)) == -1) {
		ctl_reply_error(cc, "cage %s: credential %s: %s", gk_cage_id(c),
		    req->cred_name, err);
		return;
	}
	one = gk_cred_json_one(c, req->cred_name);
	audit_credential(cc, c, one);
	r = json_object_new_object();
	json_object_object_add(r, "credential", one);
	json_object_object_add(r, "ca",
	    json_object_new_string(gk_cred_ca_pem(c)));
	ctl_reply_merge(cc, r);
}
