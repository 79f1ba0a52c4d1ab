/*
 * proxy_tunnel: a connection's TUNNEL state, from the moment both sockets
 * exist until the relay ends: the relay is the connection's part, its
 * peek the policy's look at each request or hello, and the relay's end
 * the connection's (also when its cage ends): one info line with the
 * connection id, cage, target, why it ended, the bytes each way and how
 * long it lived since accept.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_traffic.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

static void
tunnel_allowed(struct proxy_conn *s)
{
	struct gk_cage *c;

	if (s->decided)
		return;
	s->decided = true;
	gk_stats.connections[s->who.proto][GK_CONNV_ALLOWED]++;
	if ((c = proxy_cage(s->ctx, &s->who)) != NULL)
		gk_cage_count(c, GK_TALLY_CONNECTION, 0);
}

static char deny_why[PROXY_WHY_MAX];	/* the last DENY's, for its 403 */

/* A plain-HTTP request a request rule refused: a 403 with gatekeeper's
 * reason (other refusals in a tunnel are a close, as before). */
static size_t
tunnel_deny_reply(void *arg, uint8_t *buf, size_t cap)
{
	struct proxy_conn *s = arg;
	char text[PROXY_WHY_MAX + 32];

	if (!s->ps.following || deny_why[0] == '\0')
		return 0;
	snprintf(text, sizeof(text), "gatekeeper: refused: %s", deny_why);
	return http_reply_text((char *)buf, cap, "403 Forbidden", text);
}

static enum relay_peek
tunnel_peek_cb(void *arg, const uint8_t *buf, size_t len, bool eof,
    uint64_t *pass)
{
	struct proxy_conn *s = arg;
	struct proxy_outcome o;
	enum relay_peek v;

	v = proxy_peek(s->ctx, &s->who, &s->t, &s->ps, buf, len, eof, pass,
	    &o);
	if (v == RELAY_PEEK_ALLOW || v == RELAY_PEEK_PASS ||
	    v == RELAY_PEEK_WATCH || v == RELAY_PEEK_TAKE)
		tunnel_allowed(s);
	else if (v == RELAY_PEEK_DENY) {
		/* a plain-HTTP request a rule refused: its 403 says why */
		snprintf(deny_why, sizeof(deny_why), "%s", s->ps.following &&
		    o.reason == GK_REASON_REQUEST_RULE ? o.why : "");
		/* a later request: the connection was counted allowed */
		if (s->decided)
			proxy_deny_count(s->ctx, &s->who, &s->t, &o);
		else
			proxy_deny_record(s->ctx, &s->who, &s->t, &o);
		s->decided = true;
	}
	return v;
}

static bool
tunnel_watch_cb(void *arg, const uint8_t *buf, size_t len, bool eof)
{
	struct proxy_conn *s = arg;

	return proxy_peek_watch(&s->ps, buf, len, eof);
}

/* A TAKE: a bound host's TLS goes to a broker. */
static void
tunnel_take_cb(void *arg, int cfd, int sfd, const uint8_t *held, size_t len)
{
	proxy_broker_take(arg, cfd, sfd, held, len);
}

/* The relay ended (by itself, or from proxy_conn_end): so does s. */
static void
tunnel_done_cb(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct proxy_conn *s = arg;

	s->relay = NULL;	/* it frees itself after we return */
	s->up = up;
	s->down = down;
	proxy_conn_end(s, reason);
}

void
proxy_tunnel_end(struct proxy_conn *s, const char *why)
{
	tunnel_allowed(s);	/* ended before the client sent a byte */
	log_info("conn=%llu cage=%s proto=%s host=%s port=%u action=close "
	    "reason=%s up=%llu down=%llu ms=%llu",
	    (unsigned long long)s->who.conn, s->who.id,
	    gk_proto_name(s->who.proto), s->t.name, s->t.port, why,
	    (unsigned long long)s->up, (unsigned long long)s->down,
	    (unsigned long long)(gk_clock_ms() - s->who.start_ms));
	gk_stats.active_tunnels--;
	gk_traffic_add(proxy_cage(s->ctx, &s->who), s->t.name, s->t.port,
	    s->up, s->down);
	gk_stats_host_tunnel(s->t.name, s->up, s->down);
	proxy_allow_sample(s->ctx, &s->who, &s->t, why, s->up, s->down);
	proxy_budget_end(s);
}

int
proxy_tunnel_begin(struct proxy_conn *s, int server_fd,
    struct relay_opts *o, bool peek)
{
	const struct proxy_ctx *ctx = s->ctx;
	int client_fd = s->fd;

	s->fd = -1;		/* the relay's now, whatever happens */
	if (gk_hold_move(&s->hold, s->hold.cage, GK_HOLD_TUNNEL, 2) !=
	    GK_LIM__MAX) {
		log_info("conn=%llu cage=%s action=close reason=limit",
		    (unsigned long long)s->who.conn, s->who.id);
		close(client_fd);
		close(server_fd);
		proxy_conn_end(s, "limit");
		return -1;
	}
	if (s->t.is_addr) {	/* keeps the cage's pins of it */
		s->hold.dst = s->t.addr;
		if (s->hold.cage != NULL)
			gk_cage_pin_keep(s->hold.cage, &s->t.addr, gk_now() +
			    GK_PIN_INUSE_KEEP);
	}
	proxy_peek_init(&s->ps);
	o->conn = s->who.conn;
	o->idle_sec = ctx->idle_sec;
	o->peek = peek ? tunnel_peek_cb : NULL;
	o->watch = tunnel_watch_cb;
	o->take = tunnel_take_cb;
	o->deny_reply = tunnel_deny_reply;
	/* request rules: a server that speaks first is not heard before
	 * the client's first bytes are judged (HTTP and TLS never do) */
	o->hold_server = s->hold.cage != NULL &&
	    gk_allow_inspects(gk_cage_allow(s->hold.cage), s->t.name,
	    strlen(s->t.name), s->t.port);
	o->peek_ms = ctx->handshake_timeout_ms;
	if (proxy_budget_applies(s))
		o->quota = proxy_budget_quota;
	if ((s->relay = relay_new(ctx->base, client_fd, server_fd, o,
	    tunnel_done_cb, s)) == NULL) {
		log_warn("conn=%llu cage=%s action=close reason=nomem: relay",
		    (unsigned long long)s->who.conn, s->who.id);
		close(client_fd);
		close(server_fd);
		proxy_conn_end(s, "nomem");
		return -1;
	}
	proxy_enter_state(s, PROXY_ST_TUNNEL);
	gk_stats.active_tunnels++;
	if (!peek)
		tunnel_allowed(s);
	return 0;
}
