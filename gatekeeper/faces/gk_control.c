/*
 * gk_control: the control socket server. One listener, one session per
 * connection; a session reads request lines, answers each in order, and
 * owns the cages it created: closing it destroys them.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/base/gk_peer.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/faces/gk_control_int.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/state/gk_stats.h"

#define CTL_OUT_HIGH	(1024 * 1024)	/* stop reading above */
#define CTL_FLUSH_SEC	10		/* to flush a last reply */
#define CTL_READ_MAX	16384		/* bytes per recvmsg */
#define CTL_FDS_MAX	4		/* fds accepted per recvmsg */

static void	ctlconn_drive(struct ctlconn *);
static void	ctlconn_read_cb(evutil_socket_t, short, void *);
static void	ctlconn_close(struct ctlconn *, const char *);

/* ---- sessions --------------------------------------------------------- */

static const char *
ctlconn_strstate(enum ctlconn_state st)
{
	switch (st) {
	case CTL_ST_READY:
		return "ready";
	case CTL_ST_WAITING:
		return "waiting";
	case CTL_ST_FLUSHING:
		return "flushing";
	}
	return "unknown";
}

static void
ctlconn_enter_state(struct ctlconn *cc, enum ctlconn_state st)
{
	struct timeval tv = { CTL_FLUSH_SEC, 0 };

	log_debug("ctl=%llu %s -> %s", (unsigned long long)cc->id,
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
	struct evbuffer *in = cc->in;
	struct evbuffer *out = bufferevent_get_output(cc->bev);
	struct evbuffer_ptr p;
	size_t eol_len, n;
	uint8_t *line;

	while (cc->state == CTL_ST_READY &&
	    evbuffer_get_length(out) < CTL_OUT_HIGH) {
		p = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		n = p.pos == -1 ? evbuffer_get_length(in) : (size_t)p.pos;
		if (n > GK_CTL_LINE_MAX) {
			ctl_reply_error(cc, "request line longer than %d bytes; "
			    "closing the connection", GK_CTL_LINE_MAX);
			return false;
		}
		if (p.pos == -1 && (!cc->eof || n == 0))
			return !cc->eof;
		/* a last line without its newline counts at EOF */
		if ((line = evbuffer_pullup(in, (ssize_t)n)) == NULL && n > 0)
			return false;
		ctl_handle_line(cc, line, n);
		if (n > 0)	/* a cage.credential's secret: not left */
			explicit_bzero(line, n);
		n += p.pos == -1 ? 0 : eol_len;
		evbuffer_drain(in, n);
		cc->in_off += n;
		if (cc->nsfd != -1 && cc->nsfd_off < cc->in_off) {
			/* it came in the middle of a line: not a request's */
			close(cc->nsfd);
			cc->nsfd = -1;
		}
	}
	return true;
}

void
ctlconn_wait(struct ctlconn *cc)
{
	ctlconn_enter_state(cc, CTL_ST_WAITING);
}

void
ctlconn_resume(struct ctlconn *cc)
{
	if (cc->state != CTL_ST_WAITING)
		return;
	ctlconn_enter_state(cc, CTL_ST_READY);
	/* on the next loop turn, not inside whoever answered */
	event_active(cc->rev, EV_READ, 0);
}

/* Keep the first fd of an SCM_RIGHTS message, at stream offset `off`;
 * close any other (one namespace per request line). */
static void
ctlconn_take_fds(struct ctlconn *cc, struct msghdr *msg, uint64_t off)
{
	struct cmsghdr *cm;
	size_t i, nfd;
	int fd;

	if ((msg->msg_flags & MSG_CTRUNC) != 0)
		log_warnx("ctl=%llu too many fds in one message; the "
		    "excess was dropped", (unsigned long long)cc->id);
	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(fd));
			if (cc->nsfd == -1 && i == 0) {
				cc->nsfd = fd;
				cc->nsfd_off = off;
			} else
				close(fd);
		}
	}
}

static void
ctlconn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctlconn *cc = arg;
	struct evbuffer *in = cc->in;
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int) * CTL_FDS_MAX)];
	} cbuf;
	char buf[CTL_READ_MAX];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg;
	ssize_t n;

	(void)what;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.b;
	msg.msg_controllen = sizeof(cbuf.b);
	if ((n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) == -1) {
		if (errno == EAGAIN || errno == EINTR) {
			ctlconn_drive(cc);	/* resumed: lines read before */
			return;
		}
		log_debug("ctl=%llu recvmsg: %s", (unsigned long long)cc->id,
		    strerror(errno));
		ctlconn_close(cc, "connection error");
		return;
	}
	ctlconn_take_fds(cc, &msg, cc->in_off + evbuffer_get_length(in));
	if (n == 0)
		cc->eof = true;
	else
		evbuffer_add(in, buf, (size_t)n);
	ctlconn_drive(cc);
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
		event_add(cc->rev, NULL);
	else
		event_del(cc->rev);
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
	gk_events_unwatch(&cc->watch);
	gk_cage_owner_end(&cc->owner, reason);
	log_debug("ctl=%llu uid=%u pid=%d closed: %s",
	    (unsigned long long)cc->id, (unsigned)cc->uid, (int)cc->pid, why);
	TAILQ_REMOVE(&ctl->conns, cc, entry);
	ctl->nconns--;
	gk_listen_session_done(ctl->listen);
	if (cc->nsfd != -1)
		close(cc->nsfd);
	event_free(cc->rev);
	evbuffer_free(cc->in);
	bufferevent_free(cc->bev);
	free(cc);
}

/* The output drained. */
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

/* Whether the peer process holds `group` among its supplementary groups
 * right now (setpriv --groups, sg, newgrp: not only the group file). */
static bool
peer_holds_group(int fd, gid_t group)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1)
		return false;
	for (i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/*
 * 0 if the peer may use the socket; else -1 with the reason. A peer must
 * share gatekeeperd's user namespace: a sandboxed program is always in
 * another one (bwrap's, gk-run's), however it reached the socket (a
 * restarted daemon's new socket file, a hard link, a bind mount).
 */
static int
peer_auth(struct ctlconn *cc, int fd, char *why, size_t len)
{
	const struct gk_cage_plumbing *p;
	struct gk_peer peer;
	struct group *gr;
	char what[256];

	if (gk_peer_identify(fd, &peer, what, sizeof(what)) == -1) {
		snprintf(why, len, "not permitted: %s", what);
		return -1;
	}
	cc->uid = peer.uid;
	cc->pid = peer.pid;
	cc->owner.uid = peer.uid;
	cc->owner.pid = peer.pid;
	if (!gk_ns_eq(&peer.userns, &cc->ctl->userns)) {
		snprintf(why, len, "not permitted: the peer (pid %d) runs in "
		    "another user namespace than gatekeeperd (a sandbox or a "
		    "container); cages are made with gk-run from outside any "
		    "sandbox", (int)peer.pid);
		return -1;
	}
	if ((p = gk_plumb_facet(cc->ctl->cages)) != NULL &&
	    p->peer_in_cage != NULL && p->peer_in_cage(p->arg, &peer.netns)) {
		snprintf(why, len, "not permitted: the peer (pid %d) runs "
		    "inside a cage; cages are made from outside the sandbox",
		    (int)peer.pid);
		return -1;
	}
	if (peer.uid == 0 || peer.uid == geteuid())
		return 0;
	if ((gr = getgrnam(GK_CONTROL_GROUP)) != NULL &&
	    (user_in_group(peer.uid, peer.gid, gr->gr_gid) ||
	    peer_holds_group(fd, gr->gr_gid)))
		return 0;
	snprintf(why, len, "not permitted: uid %u is not root and not in "
	    "group '%s'; ask an administrator to add you to it (usermod "
	    "-aG %s USER, then log in again)%s", (unsigned)peer.uid,
	    GK_CONTROL_GROUP, GK_CONTROL_GROUP, gr == NULL ?
	    " or to create it (groupadd --system " GK_CONTROL_GROUP ")" : "");
	return -1;
}

/*
 * A line for the connection's peer (its cages' events, followed
 * denials): sent now if nothing waits before it (so it is in gk-run's
 * socket before the denied client hears its refusal, which is sent after
 * this), else queued; dropped when the peer stopped reading requests or
 * too much waits already.
 */
static bool
ctlconn_send(struct gk_line_sink *sink, struct json_object *o, size_t spare)
{
	struct ctlconn *cc = (struct ctlconn *)(void *)((char *)sink -
	    offsetof(struct ctlconn, owner.sink));
	struct evbuffer *out;
	struct iovec iov[2];
	struct msghdr mh;
	const char *s;
	size_t len, done = 0;
	ssize_t n;

	if (cc->bev == NULL || cc->state != CTL_ST_READY) {
		json_object_put(o);
		return false;
	}
	out = bufferevent_get_output(cc->bev);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	if (evbuffer_get_length(out) + len + 1 + spare >= GK_EVENTS_BUFFERED) {
		json_object_put(o);
		return false;
	}
	if (evbuffer_get_length(out) == 0) {
		iov[0].iov_base = (void *)(uintptr_t)s;
		iov[0].iov_len = len;
		iov[1].iov_base = (void *)(uintptr_t)"\n";
		iov[1].iov_len = 1;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = 2;
		n = sendmsg(bufferevent_getfd(cc->bev), &mh,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			done = (size_t)n;
	}
	if (done < len)
		bufferevent_write(cc->bev, s + done, len - done);
	if (done < len + 1)
		bufferevent_write(cc->bev, "\n", 1);
	json_object_put(o);
	return true;
}

/* ---- the listener ----------------------------------------------------- */

/* One {"ok":false,"error":msg} line, without waiting. */
static void
reject_send(int fd, const char *msg)
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
}

static void
reject_now(int fd, const char *msg)
{
	reject_send(fd, msg);
	close(fd);
}

static void
refused_free(struct ctl_refused *r)
{
	TAILQ_REMOVE(&r->ctl->refused, r, entry);
	r->ctl->nrefused--;
	event_free(r->ev);
	close(r->fd);	/* unread requests and fds go with it */
	free(r);
}

/* The refused peer's request came (it has read or can read the reply),
 * or it closed, or its time is up. */
static void
refused_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	refused_free(arg);
}

/* Tell a peer why it is refused; close once its request is in. */
static void
reject_linger(struct gk_control *ctl, int fd, const char *msg)
{
	struct timeval tv = { CTL_REFUSED_SEC, 0 };
	struct ctl_refused *r;

	reject_send(fd, msg);
	if (ctl->nrefused >= CTL_REFUSED_MAX ||
	    (r = calloc(1, sizeof(*r))) == NULL) {
		close(fd);
		return;
	}
	r->ctl = ctl;
	r->fd = fd;
	if ((r->ev = event_new(ctl->base, fd, EV_READ, refused_cb, r)) ==
	    NULL || event_add(r->ev, &tv) == -1) {
		if (r->ev != NULL)
			event_free(r->ev);
		free(r);
		close(fd);
		return;
	}
	TAILQ_INSERT_TAIL(&ctl->refused, r, entry);
	ctl->nrefused++;
}

/*
 * Past control-connections: the peer is told the limit and the key, and
 * the log says the same at most once a second (with how many were
 * refused since), so that a flood of refusals is a line a second.
 */
static void
refuse_full(struct gk_control *ctl, int fd)
{
	char msg[512];
	uint64_t now = gk_clock_ms();

	snprintf(msg, sizeof(msg), "gatekeeperd has %zu control connections "
	    "open, its limit (control-connections = %u; every running gk-run "
	    "holds one for its cage's life): end some cages, or raise "
	    "control-connections in gatekeeperd's configuration and reload "
	    "it (systemctl reload gatekeeperd)", ctl->nconns, ctl->conns_max);
	ctl->refused_quiet++;
	if (ctl->refused_log_ms == 0 || now - ctl->refused_log_ms >= 1000) {
		log_warnx("control connection refused: %zu open, the limit "
		    "(control-connections = %u; raise it, or end some cages); "
		    "%llu refused since the last such line", ctl->nconns,
		    ctl->conns_max, (unsigned long long)ctl->refused_quiet);
		ctl->refused_log_ms = now;
		ctl->refused_quiet = 0;
	}
	reject_linger(ctl, fd, msg);
	gk_listen_session_done(ctl->listen);
}

static void
accept_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct gk_control *ctl = arg;
	struct ctlconn *cc;
	char why[512];

	(void)sa;
	if (ctl->nconns >= ctl->conns_max) {
		refuse_full(ctl, fd);
		return;
	}
	if ((cc = calloc(1, sizeof(*cc))) == NULL ||
	    (cc->in = evbuffer_new()) == NULL ||
	    (cc->rev = event_new(ctl->base, fd, EV_READ | EV_PERSIST,
	    ctlconn_read_cb, cc)) == NULL ||
	    (cc->bev = bufferevent_socket_new(ctl->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("out of memory for a control connection");
		if (cc != NULL && cc->rev != NULL)
			event_free(cc->rev);
		if (cc != NULL && cc->in != NULL)
			evbuffer_free(cc->in);
		free(cc);
		reject_now(fd, "out of memory");
		gk_listen_session_done(ctl->listen);
		return;
	}
	cc->nsfd = -1;
	cc->ctl = ctl;
	gk_cage_owner_init(&cc->owner, 0, 0, ctlconn_send);
	cc->id = ++ctl->next_id;
	cc->state = CTL_ST_READY;
	TAILQ_INSERT_TAIL(&ctl->conns, cc, entry);
	ctl->nconns++;
	bufferevent_setcb(cc->bev, ctlconn_io_cb, ctlconn_io_cb,
	    ctlconn_event_cb, cc);
	if (peer_auth(cc, fd, why, sizeof(why)) == -1) {
		log_warnx("ctl=%llu uid=%u pid=%d refused: %s",
		    (unsigned long long)cc->id, (unsigned)cc->uid,
		    (int)cc->pid, why);
		ctl_reply_error(cc, "%s", why);
		ctlconn_enter_state(cc, CTL_ST_FLUSHING);
	} else
		log_debug("ctl=%llu uid=%u pid=%d accepted",
		    (unsigned long long)cc->id, (unsigned)cc->uid,
		    (int)cc->pid);
	ctlconn_drive(cc);
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
	TAILQ_INIT(&ctl->refused);
	ctl->conns_max = GK_CONTROL_CONNS_DEFAULT;
	if (gk_ns_self("user", &ctl->userns) == -1) {
		snprintf(err, errlen, "control socket: cannot read "
		    "gatekeeperd's own user namespace: %s", strerror(errno));
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	if ((fd = gk_ctlsock_bind(ctl->path, &ctl->dev, &ctl->ino, err,
	    errlen)) == -1) {
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	/* no cap here: past conns_max, accept_cb refuses with a message
	 * rather than leaving the client waiting */
	ctl->listen = gk_listen_new(base, fd, 0, "control socket", accept_cb,
	    ctl);
	if (ctl->listen == NULL) {
		snprintf(err, errlen, "control socket %s: out of memory", path);
		gk_control_free(ctl);
		return NULL;
	}
	gk_cage_table_on_end(cages, ctl_ended_keep, ctl);
	log_debug("control socket %s listening", path);
	return ctl;
}

void
gk_control_free(struct gk_control *ctl)
{
	struct stat st;

	if (ctl == NULL)
		return;
	if (ctl->listen != NULL)	/* the hook was set */
		gk_cage_table_on_end(ctl->cages, NULL, NULL);
	while (!TAILQ_EMPTY(&ctl->conns))
		ctlconn_close(TAILQ_FIRST(&ctl->conns), "shutdown");
	while (!TAILQ_EMPTY(&ctl->refused))
		refused_free(TAILQ_FIRST(&ctl->refused));
	ctl_ended_clear(ctl);
	gk_listen_free(ctl->listen);
	/* remove the socket only if it is still the one we bound */
	if (lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino)
		unlink(ctl->path);
	free(ctl->path);
	free(ctl);
}

void
gk_control_set_reload(struct gk_control *ctl, const struct gk_ctl_reload *h)
{
	ctl->reload = *h;
}

void
gk_control_set_max(struct gk_control *ctl, uint32_t max)
{
	ctl->conns_max = max > 0 ? max : 1;
}

size_t
gk_control_nconns(const struct gk_control *ctl)
{
	return ctl == NULL ? 0 : ctl->nconns;
}
