/*
 * op_create: cage.create: a cage begins from the request's spec; the reply
 * gives its token and, for a namespace cage, the endpoints it reaches and
 * its cgroup.
 */
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_stats.h"

/* The reply to cage.create: the cage, its token, and for a plumbed cage
 * the endpoints its namespace reaches and its cgroup. */
static void
reply_created(struct ctlconn *cc, struct gk_cage *c,
    const struct gk_ctlreq *req)
{
	const struct gk_cage_plumbing *p = gk_plumb_facet(cc->ctl->cages);
	struct json_object *o, *cg;

	/* the token is for the creator only: never listed or audited */
	o = gk_ctl_cage_json(c, false);
	json_object_object_add(o, "token",
	    json_object_new_string(gk_cage_token(c)));
	if (req->ask) {
		json_object_object_add(o, "ask", json_object_new_boolean(1));
		json_object_object_add(o, "ask_timeout",
		    json_object_new_int64(req->ask_timeout));
	}
	/* request rules: the authority the sandbox must trust */
	if (gk_cred_ca_pem(c) != NULL)
		json_object_object_add(o, "ca",
		    json_object_new_string(gk_cred_ca_pem(c)));
	if (gk_cage_plumbed(c) && p != NULL) {
		json_object_object_add(o, "gateway",
		    json_object_new_string(p->gateway));
		json_object_object_add(o, "dns",
		    json_object_new_string(p->dns));
		json_object_object_add(o, "socks",
		    json_object_new_string(p->socks));
		json_object_object_add(o, "http",
		    json_object_new_string(p->http));
		/* whether its other TCP is carried (else refused at once) */
		json_object_object_add(o, "transparent",
		    json_object_new_boolean(req->transparent &&
		    p->transparent[0] != '\0'));
		if ((cg = gk_cage_contain_describe(c)) != NULL)
			json_object_object_add(o, "cgroup", cg);
	}
	ctl_reply_ok(cc, "cage", o);
}

/* Check a source-named create; the address must be free and, when
 * gatekeeperd plumbs cages, outside the pool it hands out. */
static bool
source_usable(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	const struct gk_cage_plumbing *p = gk_plumb_facet(cc->ctl->cages);
	struct gk_cage *c;

	if ((c = gk_cage_by_source(cc->ctl->cages, &req->source_addr)) !=
	    NULL) {
		ctl_reply_error(cc, "source address %s is in use by cage %s; "
		    "destroy that cage or pick another address", req->source,
		    gk_cage_id(c));
		return false;
	}
	if (p != NULL && p->owns != NULL &&
	    p->owns(p->arg, &req->source_addr)) {
		ctl_reply_error(cc, "source address %s is inside the cage subnet "
		    "that gatekeeperd hands out; send a network namespace "
		    "(\"netns\":true) instead, or pick an address outside "
		    "it", req->source);
		return false;
	}
	return true;
}

/* The spec of the cage req asks for, from connection cc. */
static void
create_spec(struct ctlconn *cc, const struct gk_ctlreq *req, int nsfd,
    struct gk_allowlist *al, struct gk_cage_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->label = req->label;
	s->uid = cc->uid;
	s->owner = &cc->owner;
	s->allow = al;
	s->source = req->source_addr;
	s->netns = req->netns;
	s->nsfd = nsfd;
	s->transparent = req->transparent;
	s->limits = &req->limits;
	s->limits_best_effort = req->limits_best_effort;
	s->adopt = req->reattach && req->reattach_cg[0] != '\0' ?
	    req->reattach_cg : NULL;
	s->events = req->events;
	s->learn = req->learn;
	s->ask = req->ask;
	s->ask_timeout = req->ask_timeout;
	s->uploads = req->uploads;
	s->nuploads = req->nuploads;
	s->command = req->command;
	s->ncommand = req->ncommand;
}

/*
 * What the cage.create audit line says of the cage besides its source
 * and allowlist: what the request asked for (its canonical spec, less
 * what the line has already) and "spec_sha256", the hash of that spec.
 */
static struct json_object *
created_summary(const struct gk_ctlreq *req)
{
	struct json_object *spec = gk_ctlreq_spec(req), *o;
	char hex[65];

	o = json_object_new_object();
	json_object_object_foreach(spec, k, v) {
		if (strcmp(k, "allow") != 0 && strcmp(k, "label") != 0 &&
		    strcmp(k, "source") != 0)
			json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(spec);
	if (gk_ctlreq_spec_sha256(req, hex) == 0)
		json_object_object_add(o, "spec_sha256",
		    json_object_new_string(hex));
	return o;
}

void
op_create(struct ctlconn *cc, const struct gk_ctlreq *req, int nsfd)
{
	struct gk_cage_spec spec;
	struct gk_allowlist *al;
	char err[CTL_ERRLEN];
	enum gk_cage_err e;
	struct gk_cage *c;

	if (!req->netns && !source_usable(cc, req))
		return;
	if ((al = ctl_make_allow(cc, req)) == NULL)
		return;
	create_spec(cc, req, nsfd, al, &spec);
	if ((c = gk_cage_begin(cc->ctl->cages, &spec, &e, err,
	    sizeof(err))) == NULL) {
		gk_allowlist_free(al);
		if (e == GK_CAGE_E_FACET)
			ctl_reply_error(cc, "%s", err);
		else
			ctl_reply_error(cc, "cannot create the cage: %s", err);
		return;
	}
	gk_stats.cages_created++;
	ctl_audit_change(cc, "cage.create", c, req->reattach,
	    created_summary(req));
	reply_created(cc, c, req);
}
