/*
 * gk_control: the control socket server. One listener, one session per
 * connection; a session reads request lines, answers each in order, and
 * owns the cages it created: closing it destroys them.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>

#include "gk_audit.h"
#include "gk_cage.h"
#include "gk_control.h"
#include "gk_ctlreq.h"
#include "gk_log.h"
#include "gk_stats.h"

#define CTL_OUT_HIGH	(1024 * 1024)	/* stop reading above */
#define CTL_RETRY_SEC	1		/* after EMFILE */
#define CTL_FLUSH_SEC	10		/* to flush a last reply */
#define CTL_ERRLEN	1024

enum ctlconn_state {
	CTL_ST_READY,		/* reading requests */
	CTL_ST_FLUSHING,	/* no more requests: flush replies, close */
};

struct ctlconn {
	TAILQ_ENTRY(ctlconn)	 entry;
	struct gk_control	*ctl;
	struct bufferevent	*bev;
	uint64_t		 id;
	enum ctlconn_state	 state;
	bool			 eof;	/* the peer stopped sending */
	uid_t			 uid;
	pid_t			 pid;
	struct gk_cage		**cages;	/* created here */
	size_t			 ncages;
	size_t			 cagecap;
};

struct gk_control {
	struct event_base	*base;
	struct evconnlistener	*lev;
	struct event		*retry_ev;
	char			*path;
	dev_t			 dev;	/* of the socket we bound */
	ino_t			 ino;
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	TAILQ_HEAD(, ctlconn)	 conns;
	size_t			 nconns;
	uint64_t		 next_id;
};

static void	ctlconn_drive(struct ctlconn *);
static void	ctlconn_close(struct ctlconn *, const char *);

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

static void __attribute__((format(printf, 2, 3)))
reply_error(struct ctlconn *cc, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[CTL_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	reply(cc, o);
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

static void
cage_drop(struct gk_control *ctl, struct gk_cage *c, const char *reason)
{
	struct json_object *d = json_object_new_object();
	char addr[GK_ADDR_STRLEN];

	json_object_object_add(d, "reason", json_object_new_string(reason));
	gk_audit_event(ctl->audit, "cage.destroy", c, d);
	log_info("cage=%s label=\"%s\" source=%s action=destroy reason=\"%s\"",
	    c->id, c->label, gk_addr_ntop(&c->source, addr, sizeof(addr)),
	    reason);
	if (c->owner != NULL)
		disown_cage(c->owner, c);
	gk_cage_destroy(ctl->cages, c);
}

/* ---- operations ------------------------------------------------------- */

static struct gk_allowlist *
make_allow(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_allowlist *al;
	char err[CTL_ERRLEN] = "";

	al = gk_allowlist_new((const char *const *)req->allow, req->nallow,
	    err, sizeof(err));
	if (al == NULL)
		reply_error(cc, "%s", err[0] != '\0' ? err :
		    "cannot build the allowlist: out of memory");
	return al;
}

static void
audit_change(struct ctlconn *cc, const char *event, const struct gk_cage *c)
{
	struct json_object *d = json_object_new_object();
	char addr[GK_ADDR_STRLEN];

	json_object_object_add(d, "uid", json_object_new_int64(cc->uid));
	json_object_object_add(d, "source", json_object_new_string(
	    gk_addr_ntop(&c->source, addr, sizeof(addr))));
	json_object_object_add(d, "allow", gk_ctl_allow_json(c->allow));
	gk_audit_event(cc->ctl->audit, event, c, d);
	log_info("cage=%s label=\"%s\" source=%s uid=%u action=%s "
	    "patterns=%zu conn=%llu", c->id, c->label, addr,
	    (unsigned)cc->uid, event + 5, gk_allowlist_len(c->allow),
	    (unsigned long long)cc->id);
}

static void
op_create(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct json_object *o;
	struct gk_control *ctl = cc->ctl;
	struct gk_allowlist *al;
	struct gk_cage *c;
	enum gk_cage_err e;

	if ((c = gk_cage_by_source(ctl->cages, &req->source_addr)) != NULL) {
		reply_error(cc, "source address %s is in use by cage %s; "
		    "destroy that cage or pick another address", req->source,
		    c->id);
		return;
	}
	if ((al = make_allow(cc, req)) == NULL)
		return;
	c = gk_cage_create(ctl->cages, &req->source_addr, req->label,
	    cc->uid, al, &e);
	if (c == NULL) {
		gk_allowlist_free(al);
		reply_error(cc, "cannot create the cage: %s",
		    gk_cage_strerror(e));
		return;
	}
	if (own_cage(cc, c) == -1) {
		gk_cage_destroy(ctl->cages, c);
		reply_error(cc, "cannot create the cage: out of memory");
		return;
	}
	gk_stats.cages_created++;
	audit_change(cc, "cage.create", c);
	/* the token is for the creator only: never listed or audited */
	o = gk_ctl_cage_json(c, false);
	json_object_object_add(o, "token", json_object_new_string(c->token));
	reply_ok(cc, "cage", o);
}

/* The cage named by req->id, if this peer may manage it; else reply. */
static struct gk_cage *
find_managed(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_cage *c;

	if ((c = gk_cage_by_id(cc->ctl->cages, req->id)) == NULL ||
	    (cc->uid != 0 && c->uid != cc->uid)) {
		if (c == NULL)
			reply_error(cc, "unknown cage id '%s': no such cage "
			    "(cages go when their connection closes); "
			    "cage.list shows the current ones", req->id);
		else
			reply_error(cc, "not permitted: cage %s belongs to "
			    "uid %u; only its owner or root may change it",
			    c->id, (unsigned)c->uid);
		return NULL;
	}
	return c;
}

static void
op_update(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_allowlist *al;
	struct gk_cage *c;

	if ((c = find_managed(cc, req)) == NULL ||
	    (al = make_allow(cc, req)) == NULL)
		return;
	gk_cage_set_allow(c, al);
	audit_change(cc, "cage.update", c);
	reply_ok(cc, "cage", gk_ctl_cage_json(c, false));
}

static void
op_destroy(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	struct gk_cage *c;

	if ((c = find_managed(cc, req)) == NULL)
		return;
	cage_drop(cc->ctl, c, "request");
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
op_list(struct ctlconn *cc)
{
	struct list_arg la = { json_object_new_array(), cc->uid };

	gk_cage_foreach(cc->ctl->cages, list_one, &la);
	reply_ok(cc, "cages", la.arr);
}

static void
handle_line(struct ctlconn *cc, const uint8_t *line, size_t len)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];

	if (gk_ctlreq_parse(line, len, &req, err, sizeof(err)) != GK_CTL_OK) {
		log_debug("conn=%llu bad request: %s",
		    (unsigned long long)cc->id, err);
		reply_error(cc, "%s", err);
		return;
	}
	switch (req.op) {
	case GK_CTL_OP_CAGE_CREATE:
		op_create(cc, &req);
		break;
	case GK_CTL_OP_CAGE_UPDATE:
		op_update(cc, &req);
		break;
	case GK_CTL_OP_CAGE_DESTROY:
		op_destroy(cc, &req);
		break;
	case GK_CTL_OP_CAGE_LIST:
		op_list(cc);
		break;
	case GK_CTL_OP_STATS:
		reply_ok(cc, "stats", gk_ctl_stats_json(&gk_stats,
		    gk_cage_count(cc->ctl->cages)));
		break;
	case GK_CTL_OP_NONE:
	case GK_CTL_OP__MAX:
		reply_error(cc, "internal error: no op");
		break;
	}
	gk_ctlreq_clear(&req);
}

/* ---- sessions --------------------------------------------------------- */

static const char *
ctlconn_strstate(enum ctlconn_state st)
{
	switch (st) {
	case CTL_ST_READY:
		return "ready";
	case CTL_ST_FLUSHING:
		return "flushing";
	}
	return "unknown";
}

static void
ctlconn_enter_state(struct ctlconn *cc, enum ctlconn_state st)
{
	struct timeval tv = { CTL_FLUSH_SEC, 0 };

	log_debug("conn=%llu %s -> %s", (unsigned long long)cc->id,
	    ctlconn_strstate(cc->state), ctlconn_strstate(st));
	cc->state = st;
	if (st == CTL_ST_FLUSHING)	/* a peer that never reads */
		bufferevent_set_timeouts(cc->bev, NULL, &tv);
}

/*
 * Answer the complete lines buffered, while the replies are not piling
 * up. Returns false when the connection must stop reading.
 */
static bool
ctlconn_read_lines(struct ctlconn *cc)
{
	struct evbuffer *in = bufferevent_get_input(cc->bev);
	struct evbuffer *out = bufferevent_get_output(cc->bev);
	struct evbuffer_ptr p;
	size_t eol_len, n;
	uint8_t *line;

	while (evbuffer_get_length(out) < CTL_OUT_HIGH) {
		p = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		n = p.pos == -1 ? evbuffer_get_length(in) : (size_t)p.pos;
		if (n > GK_CTL_LINE_MAX) {
			reply_error(cc, "request line longer than %d bytes; "
			    "closing the connection", GK_CTL_LINE_MAX);
			return false;
		}
		if (p.pos == -1 && (!cc->eof || n == 0))
			return !cc->eof;
		/* a last line without its newline counts at EOF */
		if ((line = evbuffer_pullup(in, (ssize_t)n)) == NULL && n > 0)
			return false;
		handle_line(cc, line, n);
		evbuffer_drain(in, n + (p.pos == -1 ? 0 : eol_len));
	}
	return true;
}

static void
ctlconn_drive(struct ctlconn *cc)
{
	struct evbuffer *out = bufferevent_get_output(cc->bev);

	if (cc->state == CTL_ST_READY && !ctlconn_read_lines(cc))
		ctlconn_enter_state(cc, CTL_ST_FLUSHING);
	if (cc->state == CTL_ST_FLUSHING && evbuffer_get_length(out) == 0) {
		ctlconn_close(cc, cc->eof ? "connection closed" :
		    "connection closed after an error");
		return;
	}
	if (cc->state == CTL_ST_READY && !cc->eof &&
	    evbuffer_get_length(out) < CTL_OUT_HIGH)
		bufferevent_enable(cc->bev, EV_READ);
	else
		bufferevent_disable(cc->bev, EV_READ);
	/* EV_WRITE stays enabled from creation: the bev writes whatever
	 * is queued and calls ctlconn_io_cb once the output drains. */
}

static void
ctlconn_close(struct ctlconn *cc, const char *why)
{
	struct gk_control *ctl = cc->ctl;
	const char *reason;

	reason = strcmp(why, "shutdown") == 0 ? "shutdown" :
	    "connection closed";
	while (cc->ncages > 0)
		cage_drop(ctl, cc->cages[cc->ncages - 1], reason);
	log_debug("conn=%llu uid=%u pid=%d closed: %s",
	    (unsigned long long)cc->id, (unsigned)cc->uid, (int)cc->pid, why);
	TAILQ_REMOVE(&ctl->conns, cc, entry);
	ctl->nconns--;
	bufferevent_free(cc->bev);
	free(cc->cages);
	free(cc);
}

/* Both data callbacks: input arrived, or the output drained. */
static void
ctlconn_io_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	ctlconn_drive(arg);
}

static void
ctlconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ctlconn *cc = arg;

	(void)bev;
	if ((what & BEV_EVENT_EOF) != 0 && (what & BEV_EVENT_READING) != 0) {
		cc->eof = true;
		ctlconn_drive(cc);
		return;
	}
	ctlconn_close(cc, (what & BEV_EVENT_TIMEOUT) != 0 ?
	    "timed out flushing a reply" : "connection error");
}

/* ---- authentication --------------------------------------------------- */

static bool
user_in_group(uid_t uid, gid_t gid, gid_t group)
{
	gid_t *groups = NULL;
	struct passwd *pw;
	int i, n = 64;
	bool found = false;

	if (gid == group)
		return true;
	if ((pw = getpwuid(uid)) == NULL)
		return false;
	if (pw->pw_gid == group)
		return true;
	for (;;) {
		free(groups);
		if ((groups = calloc((size_t)n, sizeof(*groups))) == NULL)
			return false;
		if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) != -1)
			break;
		if (n > 65536)
			n = 65536;	/* cannot happen; keeps n bounded */
	}
	for (i = 0; i < n && !found; i++)
		found = groups[i] == group;
	free(groups);
	return found;
}

/* 0 if the peer may use the socket; else -1 with the reason. */
static int
peer_auth(struct ctlconn *cc, int fd, char *why, size_t len)
{
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	struct group *gr;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1) {
		snprintf(why, len, "not permitted: cannot read the peer's "
		    "credentials (%s)", strerror(errno));
		return -1;
	}
	cc->uid = cr.uid;
	cc->pid = cr.pid;
	if (cr.uid == 0 || cr.uid == geteuid())
		return 0;
	if ((gr = getgrnam(GK_CONTROL_GROUP)) != NULL &&
	    user_in_group(cr.uid, cr.gid, gr->gr_gid))
		return 0;
	snprintf(why, len, "not permitted: uid %u is not root and not in "
	    "group '%s'; ask an administrator to add you to it (usermod "
	    "-aG %s USER, then log in again)%s", (unsigned)cr.uid,
	    GK_CONTROL_GROUP, GK_CONTROL_GROUP, gr == NULL ?
	    " or to create it (groupadd --system " GK_CONTROL_GROUP ")" : "");
	return -1;
}

/* ---- the listener ----------------------------------------------------- */

static void
reject_now(int fd, const char *msg)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	ssize_t r;

	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	r = send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r >= 0)
		(void)send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	json_object_put(o);
	close(fd);
}

static void
accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct gk_control *ctl = arg;
	struct ctlconn *cc;
	char why[512];

	(void)lev;
	(void)sa;
	(void)salen;
	if (ctl->nconns >= GK_CONTROL_CONNS_MAX) {
		log_warnx("%d control connections open; refusing another",
		    GK_CONTROL_CONNS_MAX);
		reject_now(fd, "too many control connections; try again later");
		return;
	}
	if ((cc = calloc(1, sizeof(*cc))) == NULL ||
	    (cc->bev = bufferevent_socket_new(ctl->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("out of memory for a control connection");
		free(cc);
		reject_now(fd, "out of memory");
		return;
	}
	cc->ctl = ctl;
	cc->id = ++ctl->next_id;
	cc->state = CTL_ST_READY;
	TAILQ_INSERT_TAIL(&ctl->conns, cc, entry);
	ctl->nconns++;
	bufferevent_setcb(cc->bev, ctlconn_io_cb, ctlconn_io_cb,
	    ctlconn_event_cb, cc);
	bufferevent_setwatermark(cc->bev, EV_READ, 0, GK_CTL_LINE_MAX + 1);
	if (peer_auth(cc, fd, why, sizeof(why)) == -1) {
		log_warnx("conn=%llu uid=%u pid=%d refused: %s",
		    (unsigned long long)cc->id, (unsigned)cc->uid,
		    (int)cc->pid, why);
		reply_error(cc, "%s", why);
		ctlconn_enter_state(cc, CTL_ST_FLUSHING);
	} else
		log_debug("conn=%llu uid=%u pid=%d accepted",
		    (unsigned long long)cc->id, (unsigned)cc->uid,
		    (int)cc->pid);
	ctlconn_drive(cc);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_control *ctl = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(ctl->lev);
}

static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct gk_control *ctl = arg;
	struct timeval tv = { CTL_RETRY_SEC, 0 };
	int e = EVUTIL_SOCKET_ERROR();

	errno = e;
	log_warn("control socket accept");
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		evconnlistener_disable(lev);
		evtimer_add(ctl->retry_ev, &tv);
	}
}

/* mkdir -p the directory part of path, 0755. */
static int
make_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *p, c;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((p = strrchr(dir, '/')) == NULL || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "control socket directory %s: "
			    "%s", dir, strerror(errno));
			return -1;
		}
		if ((*p = c) == '\0')
			break;
	}
	return 0;
}

/* The path is free, or a stale socket was removed: 0. Else -1. */
static int
clear_stale(const char *path, const struct sockaddr_un *sun, char *err,
    size_t errlen)
{
	struct stat st;
	int fd, r, e;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : (snprintf(err, errlen,
		    "control socket %s: %s", path, strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s: the path exists and "
		    "is not a socket; remove it or choose another path with "
		    "--control", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (snprintf(err, errlen, "socket: %s", strerror(errno)),
		    -1);
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	e = errno;
	close(fd);
	if (r == -1 && e == ECONNREFUSED) {
		log_info("removing stale control socket %s", path);
		if (unlink(path) == -1 && errno != ENOENT)
			return (snprintf(err, errlen, "cannot remove stale "
			    "control socket %s: %s", path, strerror(errno)),
			    -1);
		return 0;
	}
	if (r == 0 || e == EAGAIN || e == EINPROGRESS)
		snprintf(err, errlen, "control socket %s: another gatekeeperd "
		    "is running (it answers on this socket); stop it first or "
		    "use --control to choose another path", path);
	else
		snprintf(err, errlen, "control socket %s exists and cannot be "
		    "checked: %s", path, strerror(e));
	return -1;
}

static void
set_owner(const char *path)
{
	struct group *gr;

	if ((gr = getgrnam(GK_CONTROL_GROUP)) == NULL) {
		log_debug("no group %s: control socket %s stays root only",
		    GK_CONTROL_GROUP, path);
		return;
	}
	if (chown(path, (uid_t)-1, gr->gr_gid) == -1)
		log_warn("chown %s to group %s", path, GK_CONTROL_GROUP);
}

static int
ctl_bind(struct gk_control *ctl, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t mask;
	int fd, r;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(ctl->path) >= sizeof(sun.sun_path) || ctl->path[0] == 0)
		return (snprintf(err, errlen, "control socket path '%s' is "
		    "empty or too long (at most %zu bytes)", ctl->path,
		    sizeof(sun.sun_path) - 1), -1);
	memcpy(sun.sun_path, ctl->path, strlen(ctl->path) + 1);
	if (make_parent(ctl->path, err, errlen) == -1 ||
	    clear_stale(ctl->path, &sun, err, errlen) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (snprintf(err, errlen, "socket: %s", strerror(errno)),
		    -1);
	mask = umask(0177);	/* no window with a wider mode */
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(mask);
	if (r == -1 || chmod(ctl->path, 0660) == -1 ||
	    stat(ctl->path, &st) == -1 || listen(fd, 64) == -1) {
		snprintf(err, errlen, "control socket %s: %s", ctl->path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	ctl->dev = st.st_dev;
	ctl->ino = st.st_ino;
	set_owner(ctl->path);
	return fd;
}

struct gk_control *
gk_control_new(struct event_base *base, const char *path,
    struct gk_cage_table *cages, struct gk_audit *audit, char *err,
    size_t errlen)
{
	struct gk_control *ctl;
	int fd;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL ||
	    (ctl->path = strdup(path)) == NULL) {
		free(ctl);
		snprintf(err, errlen, "control socket: out of memory");
		return NULL;
	}
	ctl->base = base;
	ctl->cages = cages;
	ctl->audit = audit;
	TAILQ_INIT(&ctl->conns);
	if ((fd = ctl_bind(ctl, err, errlen)) == -1) {
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	ctl->lev = evconnlistener_new(base, accept_cb, ctl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	ctl->retry_ev = evtimer_new(base, retry_cb, ctl);
	if (ctl->lev == NULL || ctl->retry_ev == NULL) {
		if (ctl->lev == NULL)
			close(fd);
		snprintf(err, errlen, "control socket %s: out of memory", path);
		gk_control_free(ctl);
		return NULL;
	}
	evconnlistener_set_error_cb(ctl->lev, accept_error_cb);
	log_debug("control socket %s listening", path);
	return ctl;
}

void
gk_control_free(struct gk_control *ctl)
{
	struct stat st;

	if (ctl == NULL)
		return;
	while (!TAILQ_EMPTY(&ctl->conns))
		ctlconn_close(TAILQ_FIRST(&ctl->conns), "shutdown");
	if (ctl->lev != NULL)
		evconnlistener_free(ctl->lev);
	if (ctl->retry_ev != NULL)
		event_free(ctl->retry_ev);
	/* remove the socket only if it is still the one we bound */
	if (lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino)
		unlink(ctl->path);
	free(ctl->path);
	free(ctl);
}

size_t
gk_control_nconns(const struct gk_control *ctl)
{
	return ctl == NULL ? 0 : ctl->nconns;
}
