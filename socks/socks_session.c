/*
 * socks_session: SOCKS5 (RFC 1928) CONNECT with no authentication, or
 * RFC 1929 username/password where the username is a cage's token.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/parse/socks.h"
#include "socks/proxy_int.h"

static void
reply_code(struct proxy_conn *s, uint8_t rep)
{
	uint8_t out[SOCKS5_REPLY_MAX];
	size_t n = socks5_build_reply(rep, NULL, 0, out, sizeof(out));

	proxy_conn_refuse(s, out, n);
}

static void
deny_reply(struct proxy_conn *s, const struct proxy_outcome *o)
{
	proxy_conn_deny(s, o);
	reply_code(s, SOCKS5_REP_NOT_ALLOWED);
}

static void
refuse_unknown(struct proxy_conn *s, const uint8_t *reply, size_t n)
{
	struct proxy_outcome o;

	memset(&o, 0, sizeof(o));
	o.reason = GK_REASON_UNKNOWN_SOURCE;
	snprintf(o.why, sizeof(o.why), "no cage has this source address or "
	    "token");
	snprintf(s->t.name, sizeof(s->t.name), "-");
	proxy_conn_deny(s, &o);
	proxy_conn_refuse(s, reply, n);
}

/* Returns bytes consumed, 0 when more are needed (or s is finished). */
static size_t
on_greeting(struct proxy_conn *s, const uint8_t *buf, size_t len)
{
	struct socks5_greeting g;
	uint8_t out[2];
	size_t n;

	switch (socks5_parse_greeting(buf, len, &g)) {
	case SOCKS5_NEED_MORE:
		return 0;
	case SOCKS5_OK:
		break;
	case SOCKS5_INVALID:
	case SOCKS5_BAD_VERSION:
	case SOCKS5_BAD_COMMAND:
	case SOCKS5_BAD_ATYP:
	case SOCKS5_BAD_NAME:
		proxy_conn_end(s, "not a SOCKS5 greeting");
		return 0;
	}
	if (s->have_cage && g.no_auth) {
		n = socks5_build_method(SOCKS5_METHOD_NONE, out, sizeof(out));
		proxy_enter_state(s, PROXY_ST_REQUEST);
	} else if (g.userpass) {
		n = socks5_build_method(SOCKS5_METHOD_USERPASS, out,
		    sizeof(out));
		proxy_enter_state(s, PROXY_ST_AUTH);
	} else {
		n = socks5_build_method(SOCKS5_METHOD_NO_ACCEPTABLE, out,
		    sizeof(out));
		refuse_unknown(s, out, n);
		return 0;
	}
	proxy_conn_write(s, out, n);
	return g.consumed;
}

static size_t
on_auth(struct proxy_conn *s, const uint8_t *buf, size_t len)
{
	struct socks5_auth a;
	uint8_t out[2];
	size_t n, used;
	bool ok;

	switch (socks5_parse_auth(buf, len, &a)) {
	case SOCKS5_NEED_MORE:
		return 0;
	case SOCKS5_OK:
		break;
	case SOCKS5_INVALID:
	case SOCKS5_BAD_VERSION:
	case SOCKS5_BAD_COMMAND:
	case SOCKS5_BAD_ATYP:
	case SOCKS5_BAD_NAME:
		n = socks5_build_auth_reply(false, out, sizeof(out));
		proxy_conn_refuse(s, out, n);
		return 0;
	}
	/* the token names the cage; without one, the source address must */
	ok = proxy_conn_cage_by_token(s, a.user) != NULL || s->have_cage;
	used = a.consumed;
	explicit_bzero(&a, sizeof(a));
	n = socks5_build_auth_reply(ok, out, sizeof(out));
	if (!ok) {
		refuse_unknown(s, out, n);
		return 0;
	}
	proxy_conn_write(s, out, n);
	proxy_enter_state(s, PROXY_ST_REQUEST);
	return used;
}

static void
dial_cb(void *arg, const struct proxy_outcome *o)
{
	struct proxy_conn *s = arg;
	struct sockaddr_storage bnd;
	socklen_t bl = sizeof(bnd);
	uint8_t out[SOCKS5_REPLY_MAX];
	struct gk_addr ba;
	uint16_t port = 0;
	size_t n;

	switch (o->res) {
	case PROXY_CONNECTED:
		memset(&ba, 0, sizeof(ba));
		if (getsockname(o->fd, (struct sockaddr *)&bnd, &bl) == 0 &&
		    gk_addr_from_sockaddr(&ba, (struct sockaddr *)&bnd) == 0)
			port = ntohs(((struct sockaddr_in *)&bnd)->sin_port);
		n = socks5_build_reply(SOCKS5_REP_SUCCEEDED,
		    ba.family != 0 ? &ba : NULL, port, out, sizeof(out));
		proxy_conn_to_tunnel(s, o->fd, out, n, NULL, 0, true, -1);
		return;
	case PROXY_DENIED:
		deny_reply(s, o);
		return;
	case PROXY_GONE:
		refuse_unknown(s, out, socks5_build_reply(
		    SOCKS5_REP_NOT_ALLOWED, NULL, 0, out, sizeof(out)));
		return;
	case PROXY_UNREACHABLE:
		n = SOCKS5_REP_HOST_UNREACHABLE;
		break;
	case PROXY_REFUSED:
		n = SOCKS5_REP_CONN_REFUSED;
		break;
	case PROXY_TIMEOUT:
		n = SOCKS5_REP_TTL_EXPIRED;
		break;
	case PROXY_ERROR:
	default:
		n = SOCKS5_REP_GENERAL_FAILURE;
		break;
	}
	proxy_conn_failed(s, o);
	reply_code(s, (uint8_t)n);
}

/* The owner answered (proxy_conn_ask). */
static void
asked(struct proxy_conn *s, bool approved, const struct proxy_outcome *o)
{
	if (!approved)
		deny_reply(s, o);
	else if (proxy_conn_dial(s, dial_cb) != 0)
		reply_code(s, SOCKS5_REP_GENERAL_FAILURE);
}

static size_t
on_request(struct proxy_conn *s, const uint8_t *buf, size_t len)
{
	struct socks5_request r;
	struct proxy_outcome o;
	enum socks5_status st;
	struct gk_cage *c;

	st = socks5_parse_request(buf, len, &r);
	if (st == SOCKS5_NEED_MORE)
		return 0;
	if (st == SOCKS5_BAD_COMMAND) {
		memset(&o, 0, sizeof(o));
		o.reason = GK_REASON_UNSUPPORTED_COMMAND;
		snprintf(o.why, sizeof(o.why), "SOCKS5 command %u: only "
		    "CONNECT is supported", r.cmd);
		snprintf(s->t.name, sizeof(s->t.name), "-");
		proxy_conn_deny(s, &o);
	}
	if (st != SOCKS5_OK) {
		reply_code(s, socks5_status_rep(st));
		return 0;
	}
	s->t = r.dst;		/* the parser normalized the name */
	if (s->t.port == 0) {
		reply_code(s, SOCKS5_REP_GENERAL_FAILURE);
		return 0;
	}
	c = proxy_cage(s->ctx, &s->who);
	proxy_unplaceholder(c, &s->t);
	if (!proxy_allowed(s->ctx, c, &s->t, &o)) {
		if (proxy_conn_ask(s, &o, asked))
			return r.consumed;
		deny_reply(s, &o);
		return 0;
	}
	if (proxy_conn_dial(s, dial_cb) != 0) {
		reply_code(s, SOCKS5_REP_GENERAL_FAILURE);
		return 0;
	}
	return r.consumed;
}

/* Advance through as many messages as are buffered. */
static void
socks_read(struct proxy_conn *s)
{
	enum proxy_state before;
	const uint8_t *buf;
	size_t len, used;

	for (;;) {
		buf = proxy_conn_input(s, &len);
		if (len == 0)
			return;
		before = s->state;
		switch (s->state) {
		case PROXY_ST_GREETING:
			used = on_greeting(s, buf, len);
			break;
		case PROXY_ST_AUTH:
			used = on_auth(s, buf, len);
			break;
		case PROXY_ST_REQUEST:
			used = on_request(s, buf, len);
			break;
		case PROXY_ST_TARGET:	/* the transparent proxy's */
		case PROXY_ST_ASKING:	/* past the handshake */
		case PROXY_ST_RESOLVE_A:
		case PROXY_ST_RESOLVE_AAAA:
		case PROXY_ST_CONNECT:
		case PROXY_ST_TUNNEL:
		case PROXY_ST_REFUSING:
		default:
			return;
		}
		/* need more, or closed (s is gone), or refusing */
		if (used == 0 || s->state == PROXY_ST_REFUSING)
			return;
		proxy_conn_consume(s, used);
		if (s->state == before || PROXY_DIALING(s) ||
		    s->state == PROXY_ST_ASKING)
			return;
	}
}

static const struct proxy_proto socks_proto = {
	.name = "socks5",
	.proto = GK_PROTO_SOCKS,
	.kind = GK_KIND_SOCKS,
	.first = PROXY_ST_GREETING,
	.size = sizeof(struct proxy_conn),
	.read = socks_read,
	.free = NULL,
};

struct proxy_listener *
socks_listener_new(const struct proxy_ctx *ctx, const struct gk_addr *addr,
    uint16_t port, char *err, size_t errlen)
{
	return proxy_listener_new(ctx, &socks_proto, addr, port, err, errlen);
}
