/*
 * transparent_session: the transparent proxy. nftables redirects a
 * namespace cage's TCP to any address but the gateway to this listener,
 * so programs that ignore the proxy variables still work, and still get
 * no further than the proxies let them.
 *
 * There is no handshake: the original destination (SO_ORIGINAL_DST) is
 * the target, an address target like a SOCKS5 or CONNECT request naming
 * an IP. It passes when a CIDR pattern allows it or when this cage's own
 * DNS answers pinned it to a name allowed on that port; that name is what
 * counters, logs and the audit report. The server is dialled at once
 * (server-first protocols such as SSH work), and the client's first bytes
 * are peeked before any reaches it: a TLS server name, or an HTTP Host,
 * must be an allowed name pinned to that same address.
 *
 * A refusal here resets the client's connection (it was already accepted
 * by the time the target is known), so clients fail at once. Most never
 * get here: nftables redirects only a cage's TCP to addresses its DNS
 * answers gave it (or any, with a CIDR allowlist) and refuses the rest
 * at the SYN; gatekeeperd reads those refusals from the log group and
 * records them through proxy_transparent_refused().
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netfilter_ipv4.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/proxy_int.h"

/* Close with a TCP reset: the client learns at once. */
static void
reset_close(struct proxy_conn *s, const char *why)
{
	struct linger lg = { 1, 0 };

	(void)setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	proxy_conn_end(s, why);
}

static void
tp_dial_cb(void *arg, const struct proxy_outcome *o)
{
	struct proxy_conn *s = arg;

	switch (o->res) {
	case PROXY_CONNECTED:
		proxy_conn_to_tunnel(s, o->fd, NULL, 0, NULL, 0, true, -1);
		return;
	case PROXY_DENIED:
	case PROXY_GONE:
		proxy_conn_deny(s, o);
		reset_close(s, "denied");
		return;
	case PROXY_UNREACHABLE:
	case PROXY_REFUSED:
	case PROXY_TIMEOUT:
	case PROXY_ERROR:
	default:
		break;
	}
	proxy_conn_failed(s, o);
	reset_close(s, proxy_strresult(o->res));
}

/* The original destination of a redirected connection; 0 or -1. */
static int
original_dst(int fd, struct gk_host *t)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &ss, &len) == -1 ||
	    ss.ss_family != AF_INET ||
	    gk_addr_from_sockaddr(&t->addr, (struct sockaddr *)&ss) == -1)
		return -1;
	t->is_addr = true;
	t->port = ntohs(sin->sin_port);
	return t->port == 0 ? -1 : 0;
}

static void
tp_dial(struct proxy_conn *s)
{
	int rc;

	if ((rc = proxy_conn_dial(s, tp_dial_cb)) != 0)
		reset_close(s, rc == -2 ? "over the cage's tunnel limit" :
		    "out of memory");
}

/* The owner answered (proxy_conn_ask). */
static void
tp_asked(struct proxy_conn *s, bool approved, const struct proxy_outcome *o)
{
	if (approved) {
		tp_dial(s);
		return;
	}
	proxy_conn_deny(s, o);
	reset_close(s, "denied");
}

static void
tp_start(struct proxy_conn *s)
{
	struct proxy_outcome o;
	struct gk_cage *c;

	/* what arrives while dialling is peeked; no more than the peek */
	proxy_conn_read_max(s, RELAY_PEEK_MAX);
	memset(&s->t, 0, sizeof(s->t));
	if (original_dst(s->fd, &s->t) == -1) {
		log_warnx("conn=%llu transparent: no original destination "
		    "(%s); was it redirected by nftables?",
		    (unsigned long long)s->who.conn, strerror(errno));
		reset_close(s, "no original destination");
		return;
	}
	c = s->have_cage ? proxy_cage(s->ctx, &s->who) : NULL;
	proxy_target_label(c, &s->t);
	memset(&o, 0, sizeof(o));
	if (c == NULL) {
		o.reason = GK_REASON_UNKNOWN_SOURCE;
		snprintf(o.why, sizeof(o.why), "no cage has this source "
		    "address");
		proxy_conn_deny(s, &o);
		reset_close(s, "unknown source");
		return;
	}
	/* an asking cage's placeholder: its name, held if unlisted */
	proxy_unplaceholder(c, &s->t);
	if (!proxy_allowed(s->ctx, c, &s->t, &o)) {
		if (proxy_conn_ask(s, &o, tp_asked))
			return;
		proxy_conn_deny(s, &o);
		reset_close(s, "denied");
		return;
	}
	tp_dial(s);
}

/* Bytes before the tunnel wait in the session's buffer for the peek. */
static void
tp_read(struct proxy_conn *s)
{
	(void)s;
}

static const struct proxy_proto transparent_proto = {
	.name = "transparent",
	.proto = GK_PROTO_TRANSPARENT,
	.kind = GK_KIND_TRANSPARENT,
	.first = PROXY_ST_TARGET,
	.size = sizeof(struct proxy_conn),
	.start = tp_start,
	.read = tp_read,
	.free = NULL,
};

struct proxy_listener *
transparent_listener_new(const struct proxy_ctx *ctx,
    const struct gk_addr *addr, uint16_t port, char *err, size_t errlen)
{
	return proxy_listener_new(ctx, &transparent_proto, addr, port, err,
	    errlen);
}

void
proxy_transparent_refused(const struct proxy_ctx *ctx, struct gk_cage *c,
    const struct gk_addr *dst, uint16_t port)
{
	struct proxy_who who;
	struct proxy_outcome o;
	struct gk_host t;

	memset(&who, 0, sizeof(who));
	who.start_ms = gk_clock_ms();
	who.source = *gk_cage_source(c);
	who.kind = GK_KIND_TRANSPARENT;
	who.proto = GK_PROTO_TRANSPARENT;
	snprintf(who.id, sizeof(who.id), "%s", gk_cage_id(c));
	memset(&t, 0, sizeof(t));
	t.is_addr = true;
	t.addr = *dst;
	t.port = port;
	proxy_target_label(c, &t);
	if (proxy_allowed(ctx, c, &t, &o))
		/* the kernel's copy of the pins lagged this cage's own */
		proxy_outcome_deny(&o, GK_REASON_IP_NOT_PINNED, "%s was "
		    "refused before this cage's DNS answer for it reached "
		    "the kernel; connecting again works", t.name);
	proxy_deny_record(ctx, &who, &t, &o);
}
