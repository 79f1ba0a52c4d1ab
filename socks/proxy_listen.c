/*
 * proxy_listen: the listeners, and a connection's life all proxies share:
 * accept, find the cage by source address, read the client into the
 * connection's buffer and run the protocol's reader on it until it dials,
 * refuses or becomes a tunnel; and its one end (proxy_conn_end), from
 * any state.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "socks/broker.h"
#include "socks/proxy_int.h"

#define REFUSE_FLUSH_SEC	5
#define IN_FIRST		2048	/* the input buffer's first size */

static uint64_t	next_conn;	/* the last connection id given out */

static const char *
strstate(enum proxy_state st)
{
	static const char *names[] = { "greeting", "auth", "request",
	    "target", "asking", "resolve_a", "resolve_aaaa", "connect",
	    "tunnel", "refusing" };

	return (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] :
	    "?";
}

void
proxy_enter_state(struct proxy_conn *s, enum proxy_state st)
{
	/* nothing leaves REFUSING or TUNNEL but the end; dialing goes on
	 * dialing, or to TUNNEL or REFUSING */
	assert(s->state != PROXY_ST_REFUSING && s->state != PROXY_ST_TUNNEL);
	assert(!PROXY_DIALING(s) || st >= PROXY_ST_RESOLVE_A);
	log_debug("conn=%llu %s: %s -> %s", (unsigned long long)s->who.conn,
	    s->l->proto->name, strstate(s->state), strstate(st));
	s->state = st;
}

/* What the handshake holds (its events, buffers, the protocol's state),
 * at the end or when the relay takes over. */
static void
handshake_free(struct proxy_conn *s)
{
	if (!s->proto_freed && s->l->proto->free != NULL)
		s->l->proto->free(s);
	s->proto_freed = true;
	if (s->timer != NULL)
		event_free(s->timer);
	if (s->rd != NULL)
		event_free(s->rd);
	if (s->wr != NULL)
		event_free(s->wr);
	s->timer = s->rd = s->wr = NULL;
	free(s->in);
	free(s->out);
	s->in = s->out = NULL;
	s->in_len = s->in_cap = s->out_len = s->out_off = 0;
	if (s->counted)		/* a handshake less */
		gk_listen_session_done(s->l->listen);
	s->counted = false;
}

void
proxy_conn_end(struct proxy_conn *s, const char *why)
{
	/* the relay's end is the tunnel's: it calls back here */
	if (s->state == PROXY_ST_TUNNEL && s->relay != NULL) {
		relay_end(s->relay, why);
		return;
	}
	if (s->state == PROXY_ST_TUNNEL && s->broker != NULL) {
		broker_end(s->broker, why);	/* it calls back here */
		return;
	}
	if (s->state == PROXY_ST_TUNNEL)
		proxy_tunnel_end(s, why);
	else
		log_debug("conn=%llu %s closed in %s: %s",
		    (unsigned long long)s->who.conn, s->l->proto->name,
		    strstate(s->state), why);
	handshake_free(s);
	proxy_dial_stop(s);
	proxy_ask_stop(s);
	if (s->fd != -1)
		close(s->fd);
	gk_hold_drop(&s->hold);
	TAILQ_REMOVE(&s->l->conns, s, entry);
	free(s);
}

/* Its cage ended. */
static void
conn_hold_end(struct gk_hold *h)
{
	struct proxy_conn *s = (struct proxy_conn *)(void *)((char *)h -
	    offsetof(struct proxy_conn, hold));

	proxy_conn_end(s, s->state == PROXY_ST_TUNNEL ? "cage_ended" :
	    "its cage ended");
}

/* Everything written has gone to the client (or never will). */
static bool
out_done(const struct proxy_conn *s)
{
	return s->broken || s->out_off == s->out_len;
}

static void
session_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *s = arg;
	ssize_t n;

	(void)what;
	n = send(fd, s->out + s->out_off, s->out_len - s->out_off,
	    MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		proxy_conn_end(s, s->state == PROXY_ST_REFUSING ?
		    "refused (client gone)" : "client error");
		return;
	}
	s->out_off += (size_t)n;
	if (!out_done(s))
		return;
	event_del(s->wr);
	if (s->state == PROXY_ST_REFUSING)
		proxy_conn_end(s, "refused");
}

/* Keep p[0, len) for EV_WRITE; false when out of memory. */
static bool
out_queue(struct proxy_conn *s, const uint8_t *p, size_t len)
{
	uint8_t *np;

	if (s->out_off == s->out_len)
		s->out_off = s->out_len = 0;
	if ((np = realloc(s->out, s->out_len + len)) == NULL)
		return false;
	s->out = np;
	memcpy(s->out + s->out_len, p, len);
	s->out_len += len;
	if (s->wr == NULL)
		s->wr = event_new(s->ctx->base, s->fd, EV_WRITE | EV_PERSIST,
		    session_write_cb, s);
	return s->wr != NULL && event_add(s->wr, NULL) == 0;
}

/*
 * Write a handshake reply. With nothing queued, send(2) it at once: the
 * socket is almost always writable. What send() does not take waits for
 * EV_WRITE. A failed send (the client gone) marks the session broken:
 * nothing more is written, and the read side sees the end.
 */
void
proxy_conn_write(struct proxy_conn *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n = 0;

	if (len == 0 || s->broken)
		return;
	if (s->out_off == s->out_len) {
		n = send(s->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			s->broken = true;
			return;
		}
		if (n == -1)
			n = 0;
	}
	if ((size_t)n < len && !out_queue(s, p + n, len - (size_t)n))
		s->broken = true;
}

void
proxy_conn_refuse(struct proxy_conn *s, const void *reply, size_t len)
{
	struct timeval tv = { REFUSE_FLUSH_SEC, 0 };

	proxy_enter_state(s, PROXY_ST_REFUSING);
	proxy_dial_stop(s);
	proxy_ask_stop(s);
	event_del(s->rd);
	proxy_conn_write(s, reply, len);
	if (out_done(s)) {
		proxy_conn_end(s, "refused");
		return;
	}
	/* the rest goes out with EV_WRITE, or the timer ends it */
	evtimer_add(s->timer, &tv);
}

const uint8_t *
proxy_conn_input(const struct proxy_conn *s, size_t *len)
{
	*len = s->in_len;
	return s->in;
}

/* Read again when there is room (and reading still makes sense). */
static void
in_resume(struct proxy_conn *s)
{
	if (s->state != PROXY_ST_REFUSING && s->in_len < s->in_max &&
	    !event_pending(s->rd, EV_READ, NULL))
		event_add(s->rd, NULL);
}

void
proxy_conn_consume(struct proxy_conn *s, size_t n)
{
	if (n >= s->in_len)
		s->in_len = 0;
	else {
		memmove(s->in, s->in + n, s->in_len - n);
		s->in_len -= n;
	}
	in_resume(s);
}

void
proxy_conn_read_max(struct proxy_conn *s, size_t max)
{
	s->in_max = max;
	if (s->in_len >= s->in_max)
		event_del(s->rd);
	else
		in_resume(s);
}

/* Room to read into (the buffer grown up to in_max); -1: no memory. */
static ssize_t
in_room(struct proxy_conn *s)
{
	size_t cap;
	uint8_t *np;

	if (s->in_len >= s->in_max)
		return 0;
	if (s->in_len == s->in_cap) {
		cap = s->in_cap == 0 ? IN_FIRST : 2 * s->in_cap;
		if (cap > s->in_max)
			cap = s->in_max;
		if ((np = realloc(s->in, cap)) == NULL)
			return -1;
		s->in = np;
		s->in_cap = cap;
	}
	cap = s->in_cap < s->in_max ? s->in_cap : s->in_max;
	return (ssize_t)(cap - s->in_len);
}

int
proxy_conn_dial(struct proxy_conn *s, proxy_dial_cb cb)
{
	uint64_t ms = (uint64_t)s->ctx->connect_timeout_ms +
	    s->ctx->handshake_timeout_ms;
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000) * 1000 };
	struct gk_cage *c;

	if (s->have_cage && (c = proxy_cage(s->ctx, &s->who)) != NULL &&
	    !gk_limit_hold_room(c, GK_HOLD_TUNNEL))
		return -2;
	/* the client is done; the dial keeps its own time (the lookup,
	 * then connect-timeout) */
	evtimer_add(s->timer, &tv);
	return proxy_dial_begin(s, cb);
}

void
proxy_conn_failed(struct proxy_conn *s, const struct proxy_outcome *o)
{
	gk_stats.connections[s->who.proto][GK_CONNV_FAILED]++;
	log_info("conn=%llu cage=%s proto=%s host=%s port=%u action=fail "
	    "reason=%s (%s)", (unsigned long long)s->who.conn, s->who.id,
	    gk_proto_name(s->who.proto), s->t.name, s->t.port,
	    proxy_strresult(o->res), o->why);
	/* its owner is told once per host and port (gk_events.h) */
	if (o->res != PROXY_ERROR)
		gk_events_unreachable(proxy_cage(s->ctx, &s->who),
		    s->who.kind, s->t.name, s->t.port,
		    proxy_strresult(o->res), o->why);
}

void
proxy_conn_deny(struct proxy_conn *s, const struct proxy_outcome *o)
{
	proxy_deny_record(s->ctx, &s->who, &s->t, o);
}

void
proxy_conn_to_tunnel(struct proxy_conn *s, int server_fd,
    const uint8_t *to_client, size_t to_client_len, const uint8_t *to_server,
    size_t to_server_len, bool peek, int64_t up_limit)
{
	size_t have = out_done(s) ? 0 : s->out_len - s->out_off;
	uint8_t *joined = NULL;
	struct relay_opts o;

	memset(&o, 0, sizeof(o));
	o.to_client = to_client;
	o.to_client_len = to_client_len;
	o.to_server = to_server;
	o.to_server_len = to_server_len;
	/* bytes the client sent past its request: the stream's start */
	o.from_client = proxy_conn_input(s, &o.from_client_len);
	if (up_limit >= 0) {
		o.up_limited = true;
		o.up_limit = (uint64_t)up_limit;
		if (o.from_client_len > o.up_limit)
			o.from_client_len = (size_t)o.up_limit;
	}
	if (o.from_client_len > RELAY_PEEK_MAX) {
		close(server_fd);
		proxy_conn_end(s, "too much data before the tunnel");
		return;
	}
	if (o.from_client_len == 0)
		o.from_client = NULL;
	/* an earlier reply the client has not taken yet goes first */
	if (have > 0) {
		if ((joined = malloc(have + to_client_len)) == NULL) {
			close(server_fd);
			proxy_conn_end(s, "out of memory");
			return;
		}
		memcpy(joined, s->out + s->out_off, have);
		if (to_client_len > 0)
			memcpy(joined + have, to_client, to_client_len);
		o.to_client = joined;
		o.to_client_len = have + to_client_len;
	}
	if (proxy_tunnel_begin(s, server_fd, &o, peek) == 0)
		handshake_free(s);	/* the relay has its copies */
	free(joined);
}

struct gk_cage *
proxy_conn_cage_by_token(struct proxy_conn *s, const char *token)
{
	struct gk_cage *c = gk_cage_by_token(s->ctx->cages, token);

	if (c == NULL)
		return NULL;
	s->who.source = *gk_cage_source(c);
	snprintf(s->who.id, sizeof(s->who.id), "%s", gk_cage_id(c));
	s->have_cage = true;
	/* from the budget of sources without a cage to its own (if it has
	 * no room, the connection stays in the former's) */
	(void)gk_hold_move(&s->hold, c, GK_HOLD_HANDSHAKE, s->hold.fds);
	return c;
}

/* The client's bytes, then the protocol's reader while it has a say. */
static void
session_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *s = arg;
	ssize_t room, n;

	(void)what;
	if ((room = in_room(s)) == -1) {
		proxy_conn_end(s, "out of memory");
		return;
	}
	if (room == 0) {		/* as far ahead as it may read */
		event_del(s->rd);
		return;
	}
	n = recv(fd, s->in + s->in_len, (size_t)room, 0);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		proxy_conn_end(s, n == 0 ? "client closed" :
		    "client error");
		return;
	}
	if (n == -1)
		return;
	s->in_len += (size_t)n;
	if (s->in_len >= s->in_max)
		event_del(s->rd);
	if (s->state != PROXY_ST_REFUSING && !PROXY_DIALING(s) &&
	    s->state != PROXY_ST_ASKING)
		s->l->proto->read(s);
}

static void
session_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *s = arg;

	(void)fd;
	(void)what;
	proxy_conn_end(s, s->state == PROXY_ST_REFUSING ?
	    "refused (reply not taken in time)" : "handshake timeout");
}

static void
accept_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct proxy_listener *l = arg;
	const struct proxy_ctx *ctx = l->ctx;
	struct timeval tv = { ctx->handshake_timeout_ms / 1000,
	    (suseconds_t)(ctx->handshake_timeout_ms % 1000) * 1000 };
	struct proxy_conn *s;
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
	s->counted = true;
	TAILQ_INSERT_TAIL(&l->conns, s, entry);
	if (gk_addr_from_sockaddr(&s->who.source, sa) == 0 &&
	    (c = gk_cage_by_source(ctx->cages, &s->who.source)) != NULL) {
		snprintf(s->who.id, sizeof(s->who.id), "%s", gk_cage_id(c));
		s->have_cage = true;
	}
	/* the client and the socket it will be dialled to; over the cage's
	 * budget (or the daemon's) the connection is closed at once */
	if (gk_hold_take(&s->hold, c, GK_HOLD_HANDSHAKE, 2,
	    conn_hold_end) != GK_LIM__MAX) {
		proxy_conn_end(s, "over its cage's limits");
		return;
	}
	s->in_max = PROXY_IN_MAX;
	s->rd = event_new(ctx->base, fd, EV_READ | EV_PERSIST, session_read_cb,
	    s);
	s->timer = evtimer_new(ctx->base, session_timeout_cb, s);
	if (s->rd == NULL || s->timer == NULL || evtimer_add(s->timer, &tv) ||
	    event_add(s->rd, NULL)) {
		proxy_conn_end(s, "out of memory");
		return;
	}
	if (l->proto->start != NULL)
		l->proto->start(s);
}

static int
listen_socket(const struct gk_addr *a, uint16_t port, const char *name,
    char *err, size_t errlen)
{
	char addr[GK_ADDR_STRLEN];
	int fd, one = 1;

	if ((fd = gk_listen_bind(a, port, SOCK_STREAM, 1024)) == -1) {
		snprintf(err, errlen, "%s proxy %s port %u: %s%s", name,
		    gk_addr_ntop(a, addr, sizeof(addr)), port, strerror(errno),
		    errno == EADDRINUSE ? " (another service holds the port; "
		    "stop it or choose another port)" : "");
		return -1;
	}
	/* replies and relayed bytes go out as they come: every accepted
	 * socket inherits this (one system call per listener, not per
	 * connection) */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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
	TAILQ_INIT(&l->conns);
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
	struct proxy_conn *s;

	if (l == NULL)
		return;
	while ((s = TAILQ_FIRST(&l->conns)) != NULL)
		proxy_conn_end(s, "shutdown");
	gk_listen_free(l->listen);
	free(l);
}
