/*
 * proxy_listen: the listeners and the handshake phase both proxies share:
 * accept, find the cage by source address, run the protocol's reader on a
 * bufferevent until it dials, refuses or hands over to a tunnel.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/state/gk_cage.h"
#include "socks/proxy_int.h"

#define REFUSE_FLUSH_SEC	5

static uint64_t	next_conn;	/* the last connection id given out */

static const char *
strstate(enum proxy_state st)
{
	static const char *names[] = { "greeting", "auth", "request",
	    "target", "dialing", "refusing" };

	return (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] :
	    "?";
}

void
proxy_enter_state(struct proxy_session *s, enum proxy_state st)
{
	/* nothing leaves REFUSING but the close; DIALING only refuses */
	assert(s->state != PROXY_ST_REFUSING);
	assert(s->state != PROXY_ST_DIALING || st == PROXY_ST_REFUSING);
	log_debug("conn=%llu %s: %s -> %s", (unsigned long long)s->who.conn,
	    s->l->proto->name, strstate(s->state), strstate(st));
	s->state = st;
}

static void
session_free(struct proxy_session *s)
{
	struct proxy_listener *l = s->l;

	if (l->proto->free != NULL)
		l->proto->free(s);
	proxy_dial_cancel(s->dial);
	if (s->timer != NULL)
		event_free(s->timer);
	if (s->bev != NULL)
		bufferevent_free(s->bev);
	if (s->fd != -1)
		close(s->fd);
	gk_hold_drop(&s->hold);
	TAILQ_REMOVE(&l->sessions, s, entry);
	gk_listen_session_done(l->listen);
	free(s);
}

/* Its cage ended. */
static void
session_hold_end(struct gk_hold *h)
{
	proxy_session_close((struct proxy_session *)((char *)h -
	    offsetof(struct proxy_session, hold)), "its cage ended");
}

void
proxy_session_close(struct proxy_session *s, const char *why)
{
	log_debug("conn=%llu %s session closed in %s: %s",
	    (unsigned long long)s->who.conn, s->l->proto->name,
	    strstate(s->state), why);
	session_free(s);
}

static void
refuse_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	proxy_session_close(arg, "refused");
}

static void
refuse_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	proxy_session_close(arg, "refused (client gone)");
}

void
proxy_session_refuse(struct proxy_session *s, const void *reply, size_t len)
{
	struct timeval tv = { REFUSE_FLUSH_SEC, 0 };

	proxy_enter_state(s, PROXY_ST_REFUSING);
	proxy_dial_cancel(s->dial);
	s->dial = NULL;
	bufferevent_disable(s->bev, EV_READ);
	bufferevent_setcb(s->bev, NULL, refuse_write_cb, refuse_event_cb, s);
	bufferevent_set_timeouts(s->bev, NULL, &tv);
	if (len == 0 || bufferevent_write(s->bev, reply, len) == -1) {
		proxy_session_close(s, "refused");
		return;
	}
	bufferevent_enable(s->bev, EV_WRITE);
}

/*
 * Write a handshake reply. With nothing queued, send(2) it at once: the
 * socket is almost always writable, and a bufferevent_write() would cost
 * a loop turn and two epoll_ctl(2) calls before the client sees a byte.
 * What send() does not take (EAGAIN, a short write, an error) goes
 * through the bufferevent as before, which reports any error itself.
 */
void
proxy_session_write(struct proxy_session *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n = 0;

	if (len > 0 &&
	    evbuffer_get_length(bufferevent_get_output(s->bev)) == 0) {
		n = send(s->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			n = 0;
	}
	if ((size_t)n < len)
		bufferevent_write(s->bev, p + n, len - (size_t)n);
}

int
proxy_session_dial(struct proxy_session *s, proxy_dial_cb cb)
{
	uint64_t ms = (uint64_t)s->ctx->connect_timeout_ms +
	    s->ctx->handshake_timeout_ms;
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000) * 1000 };
	struct gk_cage *c;

	if (s->have_cage && (c = proxy_cage(s->ctx, &s->who)) != NULL &&
	    !gk_limit_hold_room(c, GK_HOLD_TUNNEL))
		return -2;
	proxy_enter_state(s, PROXY_ST_DIALING);
	/* the client is done; the dial keeps its own time (the lookup,
	 * then connect-timeout) */
	evtimer_add(s->timer, &tv);
	s->dial = proxy_dial_start(s->ctx, &s->who, &s->t, cb, s);
	return s->dial == NULL ? -1 : 0;
}

void
proxy_session_failed(struct proxy_session *s, const struct proxy_outcome *o)
{
	gk_stats.connections[s->who.proto][GK_CONNV_FAILED]++;
	log_info("conn=%llu cage=%s proto=%s host=%s port=%u action=fail "
	    "reason=%s (%s)", (unsigned long long)s->who.conn, s->who.id,
	    gk_proto_name(s->who.proto), s->t.name, s->t.port,
	    proxy_strresult(o->res), o->why);
}

void
proxy_session_deny(struct proxy_session *s, const struct proxy_outcome *o)
{
	proxy_deny_record(s->ctx, &s->who, &s->t, o);
}

void
proxy_session_to_tunnel(struct proxy_session *s, int server_fd,
    const uint8_t *to_client, size_t to_client_len, const uint8_t *to_server,
    size_t to_server_len, bool peek, int64_t up_limit)
{
	struct evbuffer *in = bufferevent_get_input(s->bev);
	struct relay_opts o;
	int client_fd = s->fd;

	memset(&o, 0, sizeof(o));
	o.to_client = to_client;
	o.to_client_len = to_client_len;
	o.to_server = to_server;
	o.to_server_len = to_server_len;
	/* bytes the client sent past its request: the stream's start */
	o.from_client_len = evbuffer_get_length(in);
	if (up_limit >= 0) {
		o.up_limited = true;
		o.up_limit = (uint64_t)up_limit;
		if (o.from_client_len > o.up_limit)
			o.from_client_len = (size_t)o.up_limit;
	}
	if (o.from_client_len > RELAY_PEEK_MAX) {
		close(server_fd);
		proxy_session_close(s, "too much data before the tunnel");
		return;
	}
	o.from_client = o.from_client_len > 0 ?
	    evbuffer_pullup(in, (ssize_t)o.from_client_len) : NULL;
	o.conn = s->who.conn;
	s->fd = -1;		/* the tunnel's now (even if it fails) */
	proxy_tunnel_start(s->ctx, &s->who, &s->t, client_fd, server_fd, &o,
	    peek, &s->hold);
	session_free(s);
}

struct gk_cage *
proxy_session_cage_by_token(struct proxy_session *s, const char *token)
{
	struct gk_cage *c = gk_cage_by_token(s->ctx->cages, token);

	if (c == NULL)
		return NULL;
	s->who.source = c->source;
	snprintf(s->who.id, sizeof(s->who.id), "%s", c->id);
	s->have_cage = true;
	/* from the budget of sources without a cage to its own (if it has
	 * no room, the connection stays in the former's) */
	(void)gk_hold_move(&s->hold, c, GK_HOLD_HANDSHAKE, s->hold.fds);
	return c;
}

static void
session_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_session *s = arg;

	(void)bev;
	if (s->state != PROXY_ST_REFUSING && s->state != PROXY_ST_DIALING)
		s->l->proto->read(s);
}

static void
session_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	proxy_session_close(arg, (what & BEV_EVENT_EOF) ? "client closed" :
	    "client error");
}

static void
session_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	proxy_session_close(arg, "handshake timeout");
}

static void
accept_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct proxy_listener *l = arg;
	const struct proxy_ctx *ctx = l->ctx;
	struct timeval tv = { ctx->handshake_timeout_ms / 1000,
	    (suseconds_t)(ctx->handshake_timeout_ms % 1000) * 1000 };
	struct proxy_session *s;
	struct gk_cage *c = NULL;

	if ((s = calloc(1, l->proto->size)) == NULL) {
		close(fd);
		gk_listen_session_done(l->listen);
		return;
	}
	s->l = l;
	s->ctx = ctx;
	s->fd = fd;
	s->state = l->proto->first;
	s->who.conn = ++next_conn;
	s->who.start_ms = gk_clock_ms();
	s->who.kind = l->proto->kind;
	s->who.proto = l->proto->proto;
	TAILQ_INSERT_TAIL(&l->sessions, s, entry);
	if (gk_addr_from_sockaddr(&s->who.source, sa) == 0 &&
	    (c = gk_cage_by_source(ctx->cages, &s->who.source)) != NULL) {
		snprintf(s->who.id, sizeof(s->who.id), "%s", c->id);
		s->have_cage = true;
	}
	/* the client and the socket it will be dialled to; over the cage's
	 * budget (or the daemon's) the connection is closed at once */
	if (gk_hold_take(&s->hold, c, GK_HOLD_HANDSHAKE, 2,
	    session_hold_end) != GK_LIM__MAX) {
		proxy_session_close(s, "over its cage's limits");
		return;
	}
	s->bev = bufferevent_socket_new(ctx->base, fd, 0);
	s->timer = evtimer_new(ctx->base, session_timeout_cb, s);
	if (s->bev == NULL || s->timer == NULL || evtimer_add(s->timer, &tv)) {
		proxy_session_close(s, "out of memory");
		return;
	}
	bufferevent_setcb(s->bev, session_read_cb, NULL, session_event_cb, s);
	bufferevent_setwatermark(s->bev, EV_READ, 0, 64 * 1024);
	bufferevent_enable(s->bev, EV_READ);
	if (l->proto->start != NULL)
		l->proto->start(s);
}

static int
listen_socket(const struct gk_addr *a, uint16_t port, const char *name,
    char *err, size_t errlen)
{
	char addr[GK_ADDR_STRLEN];
	int fd;

	if ((fd = gk_listen_bind(a, port, SOCK_STREAM, 1024)) == -1)
		snprintf(err, errlen, "%s proxy %s port %u: %s%s", name,
		    gk_addr_ntop(a, addr, sizeof(addr)), port, strerror(errno),
		    errno == EADDRINUSE ? " (another service holds the port; "
		    "stop it or choose another port)" : "");
	return fd;
}

struct proxy_listener *
proxy_listener_new(const struct proxy_ctx *ctx, const struct proxy_proto *proto,
    const struct gk_addr *addr, uint16_t port, char *err, size_t errlen)
{
	struct proxy_listener *l;
	int fd;

	if ((fd = listen_socket(addr, port, proto->name, err, errlen)) == -1)
		return NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->ctx = ctx;
	l->proto = proto;
	TAILQ_INIT(&l->sessions);
	/* at the cap, or out of descriptors, clients wait in the backlog */
	l->listen = gk_listen_new(ctx->base, fd, PROXY_SESSIONS_MAX,
	    proto->name, accept_cb, l);
	if (l->listen == NULL) {
		proxy_listener_free(l);
		snprintf(err, errlen, "%s proxy: out of memory", proto->name);
		return NULL;
	}
	return l;
}

void
proxy_listener_free(struct proxy_listener *l)
{
	struct proxy_session *s;

	if (l == NULL)
		return;
	while ((s = TAILQ_FIRST(&l->sessions)) != NULL)
		session_free(s);
	gk_listen_free(l->listen);
	free(l);
}
