/*
 * gk_ctlops: the control requests (cage.create, cage.update,
 * cage.destroy, cage.attach, cage.decide, cage.list, cage.show, denials,
 * pending, stats, reload) and their replies, for gk_control.
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
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/state/gk_ask.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_control.h"
#include "gatekeeper/state/gk_control_int.h"
#include "gatekeeper/state/gk_ctljson.h"
#include "gatekeeper/state/gk_events.h"
#include "gatekeeper/state/gk_stats.h"

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

static void
reply_ok(struct ctlconn *cc, const char *key, struct json_object *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	if (key != NULL)
		json_object_object_add(o, key, v);
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

/* ---- cages owned by a connection -------------------------------------- */

static int
own_cage(struct ctlconn *cc, struct gk_cage *c)
{
	struct gk_cage **n;
	size_t cap;

	if (cc->ncages == cc->cagecap) {
		cap = cc->cagecap == 0 ? 4 : cc->cagecap * 2;
		if ((n = reallocarray(cc->cages, cap, sizeof(*n))) == NULL)
			return -1;
		cc->cages = n;
		cc->cagecap = cap;
	}
	cc->cages[cc->ncages++] = c;
	c->owner = cc;
	return 0;
}

static void
disown_cage(struct ctlconn *cc, struct gk_cage *c)
{
	size_t i;

	for (i = 0; i < cc->ncages; i++) {
		if (cc->cages[i] == c) {
			cc->cages[i] = cc->cages[--cc->ncages];
			break;
		}
	}
	c->owner = NULL;
}

/* What its limits refused over its life: {"dns_rate": N, ...}. */
static struct json_object *
limits_json(const struct gk_cage *c)
{
	struct json_object *o = json_object_new_object();
	int l;

	for (l = 0; l < GK_LIM__MAX; l++)
		if (c->lim.hits[l] > 0)
			json_object_object_add(o, gk_limit_kind_name(l),
			    json_object_new_int64((int64_t)c->lim.hits[l]));
	return o;
}

void
ctl_cage_drop(struct gk_control *ctl, struct gk_cage *c, const char *reason)
{
	struct json_object *d = json_object_new_object();
	char addr[GK_ADDR_STRLEN];

	json_object_object_add(d, "reason", json_object_new_string(reason));
	json_object_object_add(d, "limits", limits_json(c));
	gk_audit_event(ctl->audit, "cage.destroy", c, d);
	log_info("cage=%s label=\"%s\" source=%s action=destroy reason=\"%s\"",
	    c->id, c->label, gk_addr_ntop(&c->source, addr, sizeof(addr)),
	    reason);
	gk_events_cage_end(c);
	if (c->owner != NULL)
		disown_cage(c->owner, c);
	/* its processes first: nothing of the cage outlives its network */
	if (c->cg != NULL && ctl->contain.end != NULL)
		ctl->contain.end(ctl->contain.arg, c);
	if (c->plumbed && ctl->plumb.down != NULL)
		ctl->plumb.down(ctl->plumb.arg, &c->source);
	gk_cage_destroy(ctl->cages, c);
}

static void
audit_change(struct ctlconn *cc, const char *event, const struct gk_cage *c,
    bool reattach)
{
	struct json_object *d = json_object_new_object();
	char addr[GK_ADDR_STRLEN];

	json_object_object_add(d, "uid", json_object_new_int64(cc->uid));
	if (reattach)	/* the same sandbox again, after a restart */
		json_object_object_add(d, "reattach",
		    json_object_new_boolean(1));
	json_object_object_add(d, "source", json_object_new_string(
	    gk_addr_ntop(&c->source, addr, sizeof(addr))));
	json_object_object_add(d, "allow", gk_ctl_allow_json(c->allow));
	gk_audit_event(cc->ctl->audit, event, c, d);
	log_info("cage=%s label=\"%s\" source=%s uid=%u action=%s%s "
	    "patterns=%zu ctl=%llu", c->id, c->label, addr,
	    (unsigned)cc->uid, event + 5, reattach ? " reattach=1" : "",
	    gk_allowlist_len(c->allow), (unsigned long long)cc->id);
}

/* The reply to cage.create: the cage, its token, and for a plumbed cage
 * the endpoints its namespace reaches and its cgroup. */
static void
reply_created(struct ctlconn *cc, struct gk_cage *c,
    const struct gk_ctlreq *req)
{
	const struct gk_ctl_plumb *p = &cc->ctl->plumb;
	struct json_object *o;

	/* the token is for the creator only: never listed or audited */
	o = gk_ctl_cage_json(c, false);
	json_object_object_add(o, "token", json_object_new_string(c->token));
	if (req->ask) {
		json_object_object_add(o, "ask", json_object_new_boolean(1));
		json_object_object_add(o, "ask_timeout",
		    json_object_new_int64(req->ask_timeout));
	}
	if (c->plumbed) {
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
		if (c->cg != NULL && cc->ctl->contain.describe != NULL)
			json_object_object_add(o, "cgroup",
			    cc->ctl->contain.describe(cc->ctl->contain.arg, c));
	}
	reply_ok(cc, "cage", o);
}

/* Check a source-named create; the address must be free and, when
 * gatekeeperd plumbs cages, outside the pool it hands out. */
static bool
source_usable(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_control *ctl = cc->ctl;
	struct gk_cage *c;

	if ((c = gk_cage_by_source(ctl->cages, &req->source_addr)) != NULL) {
		ctl_reply_error(cc, "source address %s is in use by cage %s; "
		    "destroy that cage or pick another address", req->source,
		    c->id);
		return false;
	}
	if (ctl->plumb.owns != NULL &&
	    ctl->plumb.owns(ctl->plumb.arg, &req->source_addr)) {
		ctl_reply_error(cc, "source address %s is inside the cage subnet "
		    "that gatekeeperd hands out; send a network namespace "
		    "(\"netns\":true) instead, or pick an address outside "
		    "it", req->source);
		return false;
	}
	return true;
}

/* Plumb the namespace passed with a netns create; 0 with *addr set. */
static int
plumb_netns(struct ctlconn *cc, const struct gk_ctlreq *req, int nsfd,
    const struct gk_allowlist *al, struct gk_addr *addr, uint32_t *link)
{
	struct gk_control *ctl = cc->ctl;
	char err[CTL_ERRLEN];

	if (ctl->plumb.up == NULL) {
		ctl_reply_error(cc, "this gatekeeperd does not plumb network "
		    "namespaces (kernel plumbing is off: see --plumbing and "
		    "--listen); create the cage with a \"source\" address");
		return -1;
	}
	if (nsfd == -1) {
		ctl_reply_error(cc, "\"netns\":true needs the network namespace "
		    "fd sent with the request line (sendmsg with "
		    "SCM_RIGHTS); none came with it");
		return -1;
	}
	if (ctl->plumb.up(ctl->plumb.arg, nsfd, cc->uid, req->transparent,
	    gk_allow_has_cidr(al), addr, link, err, sizeof(err)) == -1) {
		log_warnx("ctl=%llu uid=%u pid=%d namespace refused: %s",
		    (unsigned long long)cc->id, (unsigned)cc->uid,
		    (int)cc->pid, err);
		ctl_reply_error(cc, "%s", err);
		return -1;
	}
	return 0;
}

/*
 * A namespace cage's cgroup, and its limits. Without containment, limits
 * are refused unless best_effort; a cage without limits runs anyway (the
 * daemon said so at start).
 */
static int
contain(struct ctlconn *cc, const struct gk_ctlreq *req, struct gk_cage *c)
{
	const struct gk_ctl_contain *h = &cc->ctl->contain;
	bool any = gk_rlimits_any(&req->limits);
	char err[CTL_ERRLEN];

	if (h->create == NULL) {
		if (!any || req->limits_best_effort)
			return 0;
		ctl_reply_error(cc, "cannot create the cage: limits were asked "
		    "for, but this gatekeeperd cannot contain cages' processes "
		    "(no writable cgroup hierarchy; see its start-up log)");
		return -1;
	}
	if (h->create(h->arg, c, cc->pid, &req->limits,
	    req->limits_best_effort, req->reattach && req->reattach_cg[0] !=
	    '\0' ? req->reattach_cg : NULL, err, sizeof(err)) == -1) {
		ctl_reply_error(cc, "cannot create the cage: %s", err);
		return -1;
	}
	return 0;
}

static void
op_create(struct ctlconn *cc, const struct gk_ctlreq *req, int nsfd)
{
	struct gk_control *ctl = cc->ctl;
	struct gk_allowlist *al;
	struct gk_addr addr;
	struct gk_cage *c;
	uint32_t link = 0;
	enum gk_cage_err e;

	if (!req->netns && !source_usable(cc, req))
		return;
	if ((al = ctl_make_allow(cc, req)) == NULL)
		return;
	if (!req->netns)
		addr = req->source_addr;
	else if (plumb_netns(cc, req, nsfd, al, &addr, &link) == -1) {
		gk_allowlist_free(al);
		return;
	}
	c = gk_cage_create(ctl->cages, &addr, req->label, cc->uid, al, &e);
	if (c == NULL || own_cage(cc, c) == -1) {
		if (c != NULL)
			gk_cage_destroy(ctl->cages, c);
		else
			gk_allowlist_free(al);
		if (req->netns)
			ctl->plumb.down(ctl->plumb.arg, &addr);
		ctl_reply_error(cc, "cannot create the cage: %s",
		    c == NULL ? gk_cage_strerror(e) : "out of memory");
		return;
	}
	c->plumbed = req->netns;
	c->link = link;
	if (req->netns && contain(cc, req, c) == -1) {
		ctl_cage_drop(ctl, c, "no containment");
		return;
	}
	c->events = req->events || req->learn || req->ask;
	c->learn = req->learn;
	if ((c->events && gk_events_enable(c) == -1) || (req->ask &&
	    gk_ask_enable(c, ctl->base, ctl->audit, req->ask_timeout) == -1)) {
		ctl_cage_drop(ctl, c, "no memory");
		ctl_reply_error(cc, "cannot create the cage: out of memory");
		return;
	}
	if (c->learn)
		log_info("cage=%s action=learn: any public name is allowed, "
		    "each one told to its owner", c->id);
	if (req->ask)
		log_info("cage=%s action=ask: names outside its allowlist are "
		    "held and its owner asked (%u s)", c->id, req->ask_timeout);
	gk_stats.cages_created++;
	audit_change(cc, "cage.create", c, req->reattach);
	reply_created(cc, c, req);
}

/* The cage named by req->id, if this peer may see and manage it; else
 * reply. */
static struct gk_cage *
find_managed(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_cage *c;

	if ((c = gk_cage_by_id(cc->ctl->cages, req->id)) == NULL) {
		ctl_reply_coded(cc, CTL_NO_SUCH_CAGE, "unknown cage id '%s': "
		    "no such cage (cages go when their connection closes); "
		    "cage.list (gatekeeperctl list) shows the current ones",
		    req->id);
		return NULL;
	}
	if (cc->uid != 0 && c->uid != cc->uid) {
		ctl_reply_coded(cc, CTL_NOT_PERMITTED, "not permitted: cage "
		    "%s belongs to uid %u; uid %u sees and changes only its "
		    "own cages (root manages all)", c->id, (unsigned)c->uid,
		    (unsigned)cc->uid);
		return NULL;
	}
	return c;
}

static void
op_update(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_allowlist *al;
	struct gk_cage *c;

	(void)fd;
	if ((c = find_managed(cc, req)) == NULL ||
	    (al = req->edit ? ctl_edit_allow(cc, req, c) :
	    ctl_make_allow(cc, req)) == NULL)
		return;
	gk_cage_set_allow(c, al);
	if (c->plumbed && cc->ctl->plumb.open != NULL &&
	    gk_allow_has_cidr(al))
		cc->ctl->plumb.open(cc->ctl->plumb.arg, &c->source);
	audit_change(cc, "cage.update", c, false);
	reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
}

/* An answer to one of the cage's questions (gk_ask.h). */
static void
op_decide(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	char err[CTL_ERRLEN];
	struct gk_cage *c;

	(void)fd;
	if ((c = find_managed(cc, req)) == NULL)
		return;
	if (gk_ask_decide(c, req->question, req->decision, req->by, err,
	    sizeof(err)) == -1) {
		ctl_reply_error(cc, "%s", err);
		return;
	}
	reply_ok(cc, NULL, NULL);
}

/* The answer to a cage.attach that waited for its cgroup. */
static void
attach_done(void *arg, struct gk_cage *c, int rc, const char *err)
{
	struct ctlconn *cc = arg;

	if (rc == -1)
		ctl_reply_error(cc, "cannot put the process in cage %s: %s",
		    c->id, err);
	else
		reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
	ctlconn_resume(cc);
}

static void
op_attach(struct ctlconn *cc, const struct gk_ctlreq *req, int pidfd)
{
	const struct gk_ctl_contain *h = &cc->ctl->contain;
	char err[CTL_ERRLEN];
	struct gk_cage *c;
	int rc;

	if ((c = find_managed(cc, req)) == NULL)
		return;
	if (pidfd == -1) {
		ctl_reply_error(cc, "cage.attach needs a pidfd of the process "
		    "sent with the request line (sendmsg with SCM_RIGHTS); none "
		    "came with it");
		return;
	}
	if (c->cg == NULL || h->attach == NULL) {
		ctl_reply_error(cc, "cage %s has no cgroup (this gatekeeperd "
		    "does not contain cages' processes; see its start-up log)",
		    c->id);
		return;
	}
	rc = h->attach(h->arg, c, pidfd, cc->pid, cc->uid, attach_done, cc,
	    err, sizeof(err));
	if (rc == 1) {		/* its answer when systemd is done */
		ctlconn_wait(cc);
		return;
	}
	attach_done(cc, c, rc, err);
}

static void
op_destroy(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_cage *c;

	(void)fd;
	if ((c = find_managed(cc, req)) == NULL)
		return;
	if (c->owner != cc)
		gk_events_owner_end(c, cc->uid);
	ctl_cage_drop(cc->ctl, c, "request");
	reply_ok(cc, "destroyed", json_object_new_string(req->id));
}

struct list_arg {
	struct json_object	*arr;
	uid_t			 uid;
};

static void
list_one(struct gk_cage *c, void *arg)
{
	struct list_arg *la = arg;

	if (la->uid == 0 || la->uid == c->uid)
		json_object_array_add(la->arr, gk_ctl_cage_json(c, true));
}

static void
op_list(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct list_arg la = { json_object_new_array(), cc->uid };

	(void)req;
	(void)fd;
	gk_cage_foreach(cc->ctl->cages, list_one, &la);
	reply_ok(cc, "cages", la.arr);
}

static void
op_show(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct gk_cage *c;

	(void)fd;
	if ((c = find_managed(cc, req)) != NULL)
		reply_ok(cc, "cage", gk_ctl_cage_show_json(c));
}

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

	if (sa->uid != 0 && sa->uid != c->uid)
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

/* Recent denials (one cage's, or every visible one's, oldest first);
 * with follow, new ones as they come. */
static void
op_denials(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct seen_arg sa = { NULL, cc->uid, false };
	struct gk_cage *c = NULL;

	(void)fd;
	if (req->id[0] != '\0' && (c = find_managed(cc, req)) == NULL)
		return;
	sa.arr = json_object_new_array();
	if (c != NULL)
		gk_events_recent_json(c, sa.arr);
	else {
		gk_cage_foreach(cc->ctl->cages, seen_one, &sa);
		json_object_array_sort(sa.arr, by_time);
	}
	reply_ok(cc, "denials", sa.arr);
	if (req->follow)
		gk_events_watch(cc, req->id);
}

static void
op_pending(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	struct seen_arg sa = { json_object_new_array(), cc->uid, true };

	(void)req;
	(void)fd;
	gk_cage_foreach(cc->ctl->cages, seen_one, &sa);
	reply_ok(cc, "questions", sa.arr);
}

static void
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
	    json_object_new_uint64(gk_cage_count(cc->ctl->cages)));
	reply_ok(cc, "reload", o);
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

static void
op_stats(struct ctlconn *cc, const struct gk_ctlreq *req, int fd)
{
	(void)req;
	(void)fd;
	reply_ok(cc, "stats", gk_ctl_stats_json(&gk_stats,
	    gk_cage_count(cc->ctl->cages)));
}

/*
 * One row per op: its handler, given the request and the descriptor
 * that came with it (a network namespace for cage.create, a pidfd for
 * cage.attach; -1 otherwise, and the handler does not keep it).
 */
typedef void op_fn(struct ctlconn *, const struct gk_ctlreq *, int);
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
};

void
ctl_handle_line(struct ctlconn *cc, const uint8_t *line, size_t len)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];
	int nsfd = take_nsfd(cc);
	size_t i;

	if (gk_ctlreq_parse(line, len, &req, err, sizeof(err)) != GK_CTL_OK) {
		log_debug("ctl=%llu bad request: %s",
		    (unsigned long long)cc->id, err);
		ctl_reply_error(cc, "%s", err);
		goto done;
	}
	/* the owner learns of its cages' limit events before any answer */
	for (i = 0; cc->ctl->contain.poll != NULL && i < cc->ncages; i++)
		if (cc->cages[i]->cg != NULL)
			cc->ctl->contain.poll(cc->ctl->contain.arg,
			    cc->cages[i]);
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
