/*
 * proxy_tunnel: a connection that passed the policy, from the moment both
 * sockets exist until the relay ends. It owns itself; the session that
 * made it is gone by then. It has one end, the relay's (tunnel_done_cb),
 * also when its cage ends: one info line with the connection id, cage,
 * target, why it ended, the bytes each way and how long it lived since
 * accept.
 */
#include <sys/queue.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

struct proxy_tunnel {
	TAILQ_ENTRY(proxy_tunnel) entry;
	struct gk_hold		 hold;		/* in its cage's budget */
	const struct proxy_ctx	*ctx;
	struct proxy_who	 who;
	struct gk_host	 t;
	struct relay		*relay;
	struct proxy_peek_state	 ps;
	bool			 decided;	/* counted allowed or denied */
};

static TAILQ_HEAD(, proxy_tunnel) tunnels = TAILQ_HEAD_INITIALIZER(tunnels);

static void
tunnel_allowed(struct proxy_tunnel *tn)
{
	struct gk_cage *c;

	if (tn->decided)
		return;
	tn->decided = true;
	gk_stats.connections[tn->who.proto][GK_CONNV_ALLOWED]++;
	if ((c = proxy_cage(tn->ctx, &tn->who)) != NULL)
		gk_cage_count(c, GK_TALLY_CONNECTION, 0);
}

static enum relay_peek
tunnel_peek_cb(void *arg, const uint8_t *buf, size_t len, bool eof,
    uint64_t *pass)
{
	struct proxy_tunnel *tn = arg;
	struct proxy_outcome o;
	enum relay_peek v;

	v = proxy_peek(tn->ctx, &tn->who, &tn->t, &tn->ps, buf, len, eof,
	    pass, &o);
	if (v == RELAY_PEEK_ALLOW || v == RELAY_PEEK_PASS ||
	    v == RELAY_PEEK_WATCH)
		tunnel_allowed(tn);
	else if (v == RELAY_PEEK_DENY) {
		/* a later request: the connection was counted allowed */
		if (tn->decided)
			proxy_deny_count(tn->ctx, &tn->who, &tn->t, &o);
		else
			proxy_deny_record(tn->ctx, &tn->who, &tn->t, &o);
		tn->decided = true;
	}
	return v;
}

static bool
tunnel_watch_cb(void *arg, const uint8_t *buf, size_t len, bool eof)
{
	struct proxy_tunnel *tn = arg;

	return proxy_peek_watch(&tn->ps, buf, len, eof);
}

static void
tunnel_done_cb(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct proxy_tunnel *tn = arg;

	tunnel_allowed(tn);	/* ended before the client sent a byte */
	log_info("conn=%llu cage=%s proto=%s host=%s port=%u action=close "
	    "reason=%s up=%llu down=%llu ms=%llu",
	    (unsigned long long)tn->who.conn, tn->who.id,
	    gk_proto_name(tn->who.proto), tn->t.name, tn->t.port, reason,
	    (unsigned long long)up, (unsigned long long)down,
	    (unsigned long long)(gk_clock_ms() - tn->who.start_ms));
	gk_stats.active_tunnels--;
	gk_hold_drop(&tn->hold);
	TAILQ_REMOVE(&tunnels, tn, entry);
	free(tn);		/* the relay frees itself after we return */
}

/* Its cage ended: both sockets closed now, whatever the relay's state;
 * the relay's end (tunnel_done_cb) is the tunnel's, as always. */
static void
tunnel_hold_end(struct gk_hold *h)
{
	struct proxy_tunnel *tn = (struct proxy_tunnel *)((char *)h -
	    offsetof(struct proxy_tunnel, hold));

	relay_end(tn->relay, "cage_ended");
}

int
proxy_tunnel_start(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, int client_fd, int server_fd,
    struct relay_opts *o, bool peek, struct gk_hold *from)
{
	struct proxy_tunnel *tn;

	if ((tn = calloc(1, sizeof(*tn))) == NULL ||
	    gk_hold_transfer(from, &tn->hold, GK_HOLD_TUNNEL, 2,
	    tunnel_hold_end) != GK_LIM__MAX) {
		log_info("conn=%llu cage=%s action=close reason=%s",
		    (unsigned long long)who->conn, who->id, tn == NULL ?
		    "nomem" : "limit");
		free(tn);
		close(client_fd);
		close(server_fd);
		return -1;
	}
	tn->ctx = ctx;
	tn->who = *who;
	tn->t = *t;
	if (t->is_addr) {	/* keeps the cage's pins of it */
		tn->hold.dst = t->addr;
		if (tn->hold.cage != NULL)
			gk_cage_pin_keep(tn->hold.cage, &t->addr, gk_now() +
			    GK_PIN_INUSE_KEEP);
	}
	proxy_peek_init(&tn->ps);
	o->idle_sec = ctx->idle_sec;
	o->peek = peek ? tunnel_peek_cb : NULL;
	o->watch = tunnel_watch_cb;
	o->peek_ms = ctx->handshake_timeout_ms;
	if (!peek)
		tunnel_allowed(tn);
	tn->relay = relay_new(ctx->base, client_fd, server_fd, o,
	    tunnel_done_cb, tn);
	if (tn->relay == NULL) {
		log_warn("conn=%llu relay", (unsigned long long)who->conn);
		close(client_fd);
		close(server_fd);
		gk_hold_drop(&tn->hold);
		free(tn);
		return -1;
	}
	gk_stats.active_tunnels++;
	TAILQ_INSERT_TAIL(&tunnels, tn, entry);
	return 0;
}

void
proxy_tunnels_free_all(void)
{
	struct proxy_tunnel *tn;

	while ((tn = TAILQ_FIRST(&tunnels)) != NULL) {
		TAILQ_REMOVE(&tunnels, tn, entry);
		relay_free(tn->relay);
		gk_stats.active_tunnels--;
		gk_hold_drop(&tn->hold);
		free(tn);
	}
}
