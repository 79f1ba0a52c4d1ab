/*
 * http_session: the HTTP proxy. CONNECT host:port tunnels (peeked like
 * SOCKS5 tunnels) and absolute-form requests (GET http://host/path),
 * forwarded to the origin in origin form with "Connection: close".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/parse/socks.h"
#include "socks/proxy_int.h"

struct http_session {
	struct proxy_conn	 base;		/* first */
	bool			 connect;	/* CONNECT, else forward */
	uint8_t			*head;		/* origin-form head to send */
	size_t			 head_len;
	size_t			 consumed;	/* request head bytes */
	int64_t			 body_limit;	/* forwarded: -1 chunked */
};

static void
respond(struct proxy_conn *s, int code, const char *reason,
    const char *deny, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
respond(struct proxy_conn *s, int code, const char *reason,
    const char *deny, const char *fmt, ...)
{
	char body[512], msg[1024 + sizeof(body)];
	va_list ap;
	int bl, hl;

	va_start(ap, fmt);
	bl = vsnprintf(body, sizeof(body) - 1, fmt, ap);
	va_end(ap);
	if (bl < 0)
		bl = 0;
	if ((size_t)bl > sizeof(body) - 2)
		bl = (int)sizeof(body) - 2;
	body[bl++] = '\n';
	hl = snprintf(msg, sizeof(msg) - sizeof(body), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\n%s%s%sConnection: close\r\n\r\n",
	    code, reason, bl, deny != NULL ? "X-Gatekeeper-Deny: " : "",
	    deny != NULL ? deny : "", deny != NULL ? "\r\n" : "");
	if (hl < 0)
		hl = 0;
	if ((size_t)hl > sizeof(msg) - sizeof(body) - 1)
		hl = (int)(sizeof(msg) - sizeof(body) - 1);
	/* head and body in one send */
	memcpy(msg + hl, body, (size_t)bl);
	proxy_conn_refuse(s, msg, (size_t)hl + (size_t)bl);
}

static void
deny_403(struct proxy_conn *s, const struct proxy_outcome *o)
{
	const char *r = gk_deny_reason_name(o->reason);
	char phrase[GK_NAME_MAX + 96];

	proxy_conn_deny(s, o);
	/* clients print the status line, not the body: it names the host
	 * and the rule (the name is a checked host name: no CR, LF) */
	snprintf(phrase, sizeof(phrase), "Forbidden by gatekeeper: %s:%u "
	    "%s", s->t.name, s->t.port, proxy_reason_phrase(o->reason));
	respond(s, 403, phrase, r, "gatekeeper: %s:%u denied for cage "
	    "%s: %s (%s)", s->t.name, s->t.port,
	    s->have_cage ? s->who.id : "-", r, o->why);
}

/*
 * A dial that failed: the status line says what happened, as the 403's
 * does ("502 Bad Gateway: pypi.org:443 could not be reached: it has no
 * address (the upstream DNS said NXDOMAIN)"), printable ASCII only and
 * bounded, since clients print the status line and not the body.
 */
static void
fail_reply(struct proxy_conn *s, int code, const char *status,
    const struct proxy_outcome *o)
{
	char phrase[GK_NAME_MAX + 160];
	size_t i;

	proxy_conn_failed(s, o);
	/* cut to the buffer: a status line stays short */
	if (snprintf(phrase, sizeof(phrase), "%s: %s:%u could not be "
	    "reached: %s", status, s->t.name, s->t.port, o->why) < 0)
		phrase[0] = '\0';
	for (i = 0; phrase[i] != '\0'; i++)
		if (phrase[i] < 0x20 || phrase[i] > 0x7e)
			phrase[i] = '?';
	respond(s, code, phrase, NULL, "gatekeeper: %s:%u could not be "
	    "reached (%s): %s", s->t.name, s->t.port,
	    proxy_strresult(o->res), o->why);
}

static void
deny_unknown(struct proxy_conn *s)
{
	struct proxy_outcome o;

	memset(&o, 0, sizeof(o));
	o.reason = GK_REASON_UNKNOWN_SOURCE;
	snprintf(o.why, sizeof(o.why), "no cage has this source address; "
	    "run the program in a cage or give the cage's token as the proxy "
	    "user name");
	deny_403(s, &o);
}

static void
dial_cb(void *arg, const struct proxy_outcome *o)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct proxy_conn *s = arg;
	struct http_session *hs = (struct http_session *)s;

	switch (o->res) {
	case PROXY_CONNECTED:
		proxy_conn_consume(s, hs->consumed);
		if (hs->connect)
			proxy_conn_to_tunnel(s, o->fd, (const uint8_t *)ok,
			    sizeof(ok) - 1, NULL, 0, true, -1);
		else	/* the body only: a pipelined request is dropped */
			proxy_conn_to_tunnel(s, o->fd, NULL, 0, hs->head,
			    hs->head_len, false, hs->body_limit);
		return;
	case PROXY_DENIED:
	case PROXY_GONE:
		deny_403(s, o);
		return;
	case PROXY_TIMEOUT:
		fail_reply(s, 504, "Gateway Timeout", o);
		return;
	case PROXY_UNREACHABLE:
	case PROXY_REFUSED:
	case PROXY_ERROR:
	default:
		fail_reply(s, 502, "Bad Gateway", o);
		return;
	}
}

static bool
cage_from_auth(struct proxy_conn *s, const uint8_t *buf,
    const struct http_request *r)
{
	char user[128], pass[128];
	const struct http_header *h;
	bool ok = false;

	if (r->proxy_auth < 0)
		return false;
	h = &r->hdr[r->proxy_auth];
	if (http_parse_basic_auth(buf + h->value.off, h->value.len, user,
	    sizeof(user), pass, sizeof(pass)) == HTTP_OK)
		ok = proxy_conn_cage_by_token(s, user) != NULL;
	explicit_bzero(pass, sizeof(pass));
	return ok;
}

/* The Host header of a forwarded request must name the target too. */
static bool
host_header_ok(const uint8_t *buf, const struct http_request *r,
    const struct gk_host *t)
{
	const struct http_header *h;
	struct gk_host hh;

	if (r->host_hdr < 0)
		return true;
	h = &r->hdr[r->host_hdr];
	if (http_hostport_parse(buf + h->value.off, h->value.len, &hh) != 0)
		return false;
	if (hh.is_addr)
		return t->is_addr && gk_addr_eq(&hh.addr, &t->addr);
	return !t->is_addr && strcmp(hh.name, t->name) == 0;
}

/* The target passed the policy (or its cage's owner let it): dial. */
static void
go_on(struct proxy_conn *s)
{
	int rc;

	if ((rc = proxy_conn_dial(s, dial_cb)) == -2)
		respond(s, 503, "Service Unavailable", NULL, "gatekeeper: cage "
		    "%s has %u tunnels open, as many as it may (cage-tunnels); "
		    "close some", s->who.id, gk_limits.tunnels);
	else if (rc == -1)
		respond(s, 502, "Bad Gateway", NULL, "gatekeeper: out of "
		    "resources");
}

/* The owner answered (proxy_conn_ask). */
static void
asked(struct proxy_conn *s, bool approved, const struct proxy_outcome *o)
{
	if (approved)
		go_on(s);
	else
		deny_403(s, o);
}

static void
start(struct http_session *hs, const uint8_t *buf, struct http_request *r)
{
	struct proxy_conn *s = &hs->base;
	struct proxy_outcome o;
	struct gk_cage *c;

	hs->connect = r->method == HTTP_METHOD_CONNECT;
	hs->consumed = r->head_len;
	s->t = r->dst;		/* the parser normalized the name */
	if (s->t.port == 0 || s->t.name[0] == '\0') {
		respond(s, 400, "Bad Request", NULL, "gatekeeper: bad target");
		return;
	}
	if (!s->have_cage && !cage_from_auth(s, buf, r)) {
		deny_unknown(s);
		return;
	}
	if (!hs->connect && !host_header_ok(buf, r, &s->t)) {
		memset(&o, 0, sizeof(o));
		o.reason = GK_REASON_HOST_MISMATCH;
		snprintf(o.why, sizeof(o.why), "the Host header differs from "
		    "the request's target");
		deny_403(s, &o);
		return;
	}
	/* the origin-form head is made now: the request is gone by the
	 * time an asking cage's owner answers */
	if (!hs->connect) {
		hs->body_limit = r->body == HTTP_BODY_LENGTH ?
		    (int64_t)r->content_length : r->body == HTTP_BODY_NONE ?
		    0 : -1;
		hs->head = malloc(HTTP_ORIGIN_MAX);
		if (hs->head == NULL || (hs->head_len = http_build_origin(buf,
		    r, hs->head, HTTP_ORIGIN_MAX)) == 0) {
			respond(s, 400, "Bad Request", NULL, "gatekeeper: the "
			    "request head is too large to forward");
			return;
		}
	}
	c = proxy_cage(s->ctx, &s->who);
	proxy_unplaceholder(c, &s->t);
	memset(&o, 0, sizeof(o));
	if (!hs->connect && (proxy_leak_head(c, buf, r->head_len, "a "
	    "plain-HTTP request head", &o) || !proxy_rules_ok(c, &s->t, buf,
	    r->head_len, NULL, &o))) {
		deny_403(s, &o);
		return;
	}
	if (!proxy_allowed(s->ctx, c, &s->t, &o)) {
		if (!proxy_conn_ask(s, &o, asked))
			deny_403(s, &o);
		return;
	}
	go_on(s);
}

static void
http_read(struct proxy_conn *s)
{
	struct http_session *hs = (struct http_session *)s;
	struct http_request *r;
	const uint8_t *buf;
	size_t len;

	buf = proxy_conn_input(s, &len);
	if (len > HTTP_HEAD_MAX)
		len = HTTP_HEAD_MAX + 1;
	if ((r = malloc(sizeof(*r))) == NULL) {
		proxy_conn_end(s, "out of memory");
		return;
	}
	switch (http_parse_request(buf, len, r)) {
	case HTTP_NEED_MORE:
		break;
	case HTTP_OK:
		start(hs, buf, r);
		break;
	case HTTP_TOO_LONG:
		respond(s, 431, "Request Header Fields Too Large", NULL,
		    "gatekeeper: request head over %d bytes", HTTP_HEAD_MAX);
		break;
	case HTTP_BAD_SCHEME:
		respond(s, 400, "Bad Request", NULL, "gatekeeper: only http:// "
		    "is forwarded; use CONNECT (https_proxy) for https");
		break;
	case HTTP_NOT_PROXY_REQUEST:
		respond(s, 400, "Bad Request", NULL, "gatekeeper: this is a "
		    "proxy: send absolute-form requests or CONNECT");
		break;
	case HTTP_INVALID:
	case HTTP_NOT_HTTP:
	case HTTP_ABSENT:
		respond(s, 400, "Bad Request", NULL, "gatekeeper: malformed "
		    "request");
		break;
	}
	free(r);
}

static void
http_free(struct proxy_conn *s)
{
	free(((struct http_session *)s)->head);
}

static const struct proxy_proto http_proto = {
	.name = "http",
	.proto = GK_PROTO_HTTP,
	.kind = GK_KIND_HTTP,
	.first = PROXY_ST_REQUEST,
	.size = sizeof(struct http_session),
	.read = http_read,
	.free = http_free,
};

struct proxy_listener *
http_listener_new(const struct proxy_ctx *ctx, const struct gk_addr *addr,
    uint16_t port, char *err, size_t errlen)
{
	return proxy_listener_new(ctx, &http_proto, addr, port, err, errlen);
}
