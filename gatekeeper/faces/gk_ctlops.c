/*
 * gk_ctlops: the control requests' dispatcher, for gk_control: a request
 * line parsed, the op table's row for it run (the ops are in faces/ops/,
 * one file each), and the replies they share.
 */
#include <sys/socket.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/faces/ops/ops.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_audit.h"

/* ---- replies ---------------------------------------------------------- */

static void
reply(struct ctlconn *cc, struct json_object *o)
{
	struct evbuffer *out = bufferevent_get_output(cc->bev);
	const char *s;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	evbuffer_add(out, s, strlen(s));
	evbuffer_add(out, "\n", 1);
	json_object_put(o);
}

void
ctl_reply_ok(struct ctlconn *cc, const char *key, struct json_object *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	if (key != NULL)
		json_object_object_add(o, key, v);
	reply(cc, o);
}

void
ctl_reply_merge(struct ctlconn *cc, struct json_object *fields)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_foreach(fields, k, v)
		json_object_object_add(o, k, json_object_get(v));
	json_object_put(fields);
	reply(cc, o);
}

static void
reply_error(struct ctlconn *cc, const char *code, const char *fmt,
    va_list ap)
{
	struct json_object *o = json_object_new_object();
	char msg[CTL_ERRLEN];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	if (code != NULL)
		json_object_object_add(o, "code", json_object_new_string(code));
	reply(cc, o);
}

void
ctl_reply_error(struct ctlconn *cc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_error(cc, NULL, fmt, ap);
	va_end(ap);
}

void
ctl_reply_coded(struct ctlconn *cc, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_error(cc, code, fmt, ap);
	va_end(ap);
}

void
ctl_audit_change(struct ctlconn *cc, const char *event, const struct gk_cage *c,
    bool reattach, struct json_object *more)
{
	struct json_object *d = json_object_new_object(), *a;
	char addr[GK_ADDR_STRLEN];
	size_t n = gk_allowlist_len(gk_cage_allow(c));

	json_object_object_add(d, "uid", json_object_new_int64(cc->uid));
	if (reattach)	/* the same sandbox again, after a restart */
		json_object_object_add(d, "reattach",
		    json_object_new_boolean(1));
	json_object_object_add(d, "source", json_object_new_string(
	    gk_addr_ntop(gk_cage_source(c), addr, sizeof(addr))));
	a = gk_ctl_allow_json(gk_cage_allow(c));
	if (n > GK_CTL_ALLOW_SHOWN)	/* a line stays a line */
		json_object_array_del_idx(a, GK_CTL_ALLOW_SHOWN,
		    n - GK_CTL_ALLOW_SHOWN);
	json_object_object_add(d, "allow", a);
	json_object_object_add(d, "patterns", json_object_new_int64(
	    (int64_t)n));
	if (more != NULL) {
		json_object_object_foreach(more, k, v)
			json_object_object_add(d, k, json_object_get(v));
		json_object_put(more);
	}
	gk_audit_event(cc->ctl->audit, event, c, d);
	log_info("cage=%s label=\"%s\" source=%s uid=%u action=%s%s "
	    "patterns=%zu ctl=%llu", gk_cage_id(c), gk_cage_label(c), addr,
	    (unsigned)cc->uid, event + 5, reattach ? " reattach=1" : "",
	    gk_allowlist_len(gk_cage_allow(c)), (unsigned long long)cc->id);
}

/* The cage named by req->id, if this peer may see and manage it; else
 * reply. */
struct gk_cage *
ctl_find_managed(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_cage *c;

	if ((c = gk_cage_by_id(cc->ctl->cages, req->id)) == NULL) {
		ctl_reply_coded(cc, CTL_NO_SUCH_CAGE, "unknown cage id '%s': "
		    "no such cage (a cage goes when the connection that made "
		    "it closes, and is shown for %d minutes after); "
		    "gatekeeperctl list shows the current ones", req->id,
		    CTL_ENDED_SEC / 60);
		return NULL;
	}
	if (cc->uid != 0 && gk_cage_uid(c) != cc->uid) {
		ctl_reply_coded(cc, CTL_NOT_PERMITTED, "not permitted: cage "
		    "%s belongs to uid %u; uid %u sees and changes only its "
		    "own cages (root manages all)", gk_cage_id(c),
		    (unsigned)gk_cage_uid(c), (unsigned)cc->uid);
		return NULL;
	}
	return c;
}

/* The fd passed with the line starting at the input's start, if any. */
static int
take_nsfd(struct ctlconn *cc)
{
	int fd = -1;

	if (cc->nsfd != -1 && cc->nsfd_off == cc->in_off) {
		fd = cc->nsfd;
		cc->nsfd = -1;
	}
	return fd;
}

/* One row per op (ops.h). */
static op_fn *const op_table[GK_CTL_OP__MAX] = {
	[GK_CTL_OP_CAGE_CREATE] = op_create,
	[GK_CTL_OP_CAGE_UPDATE] = op_update,
	[GK_CTL_OP_CAGE_DESTROY] = op_destroy,
	[GK_CTL_OP_CAGE_LIST] = op_list,
	[GK_CTL_OP_CAGE_SHOW] = op_show,
	[GK_CTL_OP_CAGE_ATTACH] = op_attach,
	[GK_CTL_OP_CAGE_DECIDE] = op_decide,
	[GK_CTL_OP_DENIALS] = op_denials,
	[GK_CTL_OP_PENDING] = op_pending,
	[GK_CTL_OP_STATS] = op_stats,
	[GK_CTL_OP_RELOAD] = op_reload,
	[GK_CTL_OP_CAGE_CREDENTIAL] = op_credential,
};

static void
poll_one(struct gk_cage *c, void *arg)
{
	(void)arg;
	gk_cage_contain_poll(c);
}

void
ctl_handle_line(struct ctlconn *cc, const uint8_t *line, size_t len)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];
	int nsfd = take_nsfd(cc);

	if (gk_ctlreq_parse(line, len, &req, err, sizeof(err)) != GK_CTL_OK) {
		log_debug("ctl=%llu bad request: %s",
		    (unsigned long long)cc->id, err);
		ctl_reply_error(cc, "%s", err);
		goto done;
	}
	/* the owner learns of its cages' limit events before any answer */
	gk_cage_owner_foreach(&cc->owner, poll_one, NULL);
	if (req.op > GK_CTL_OP_NONE && req.op < GK_CTL_OP__MAX &&
	    op_table[req.op] != NULL)
		op_table[req.op](cc, &req, nsfd);
	else
		ctl_reply_error(cc, "internal error: no op");
	gk_ctlreq_clear(&req);
done:
	if (nsfd != -1)		/* plumbing keeps no reference to it */
		close(nsfd);
}
