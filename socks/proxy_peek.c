/*
 * proxy_peek: the rules for what a cage's client sends into a tunnel,
 * shown by the relay before any of it reaches the server.
 *
 * TLS: the ClientHello's server name must be the requested host (for an
 * address target: an allowed name this cage resolved to that address; no
 * server name only for CIDR-allowed addresses). Anything that looks like
 * TLS but is no hello a server name can be read from (other records
 * first, an SSLv2-format hello, a malformed hello) is refused. A hello
 * that passed goes to the server, and what the client sends next is held
 * until the server's first handshake message is seen: after a
 * HelloRetryRequest the client's second ClientHello (RFC 8446 4.1.4)
 * must name the same server (or none, as the first) before it goes on;
 * any other answer ends the looking (a TLS 1.3 server asks for a retry
 * at most once; the rest of the handshake is encrypted).
 *
 * Plain bytes: http_sniff() says whether they start like an HTTP request
 * (after up to HTTP_BLANK_MAX blank bytes, as servers skip them). A
 * request is followed to the end of the connection, every head checked
 * for its Host: the relay passes what was checked (and bodies, unlooked
 * at) and shows what comes next. On port 80 nothing else is accepted;
 * elsewhere a line or binary protocol goes by host and port. PROXY
 * protocol headers are refused everywhere: a server that takes one would
 * read what follows it unchecked.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_limit.h"
#include "sni/sni.h"
#include "socks/parse/socks.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

#define HTTP_PORT	80	/* only HTTP (or TLS) is expected there */

/* the watch decides within what the relay shows it */
_Static_assert(SNI_SRV_MAX_WIRE <= RELAY_WATCH_MAX, "RELAY_WATCH_MAX");

enum peek_tls {
	PEEK_TLS_SNI,		/* a ClientHello with a server name */
	PEEK_TLS_ABSENT,	/* a ClientHello without one */
	PEEK_TLS_SSL2,		/* an SSLv2-format hello: none either */
};

static enum relay_peek
peek_deny(struct proxy_outcome *o, enum gk_deny_reason r, const char *what,
    const struct gk_host *t)
{
	proxy_outcome_deny(o, r, "%s to %s", what, t->name);
	return RELAY_PEEK_DENY;
}

static enum relay_peek
peek_tls(const struct gk_cage *c, const struct gk_host *t,
    const struct sni_result *r, enum peek_tls kind, struct proxy_outcome *o)
{
	if (kind != PEEK_TLS_SNI) {
		if (t->is_addr &&
		    gk_allow_addr_cidr(gk_cage_allow(c), &t->addr))
			return RELAY_PEEK_ALLOW;
		proxy_outcome_deny(o, GK_REASON_NO_SNI, "%s without a server "
		    "name to %s; only a CIDR pattern allows that",
		    kind == PEEK_TLS_SSL2 ? "an SSLv2-format ClientHello" :
		    "TLS", t->name);
		return RELAY_PEEK_DENY;
	}
	snprintf(o->seen, sizeof(o->seen), "%s", r->name);
	if (!t->is_addr) {
		if (sni_matches(r, t->name, strlen(t->name)))
			return RELAY_PEEK_ALLOW;
		proxy_outcome_deny(o, GK_REASON_SNI_MISMATCH, "TLS server name "
		    "%s differs from the requested host %s", r->name, t->name);
		return RELAY_PEEK_DENY;
	}
	/* an address target: the SNI must be an allowed name this cage
	 * resolved to exactly that address (or the address is a CIDR) */
	if (gk_allow_addr_cidr(gk_cage_allow(c), &t->addr) ||
	    (gk_cage_allows_name(c, r->name, r->name_len, t->port) &&
	    gk_cage_pinned_name(c, &t->addr, r->name, gk_now())))
		return RELAY_PEEK_ALLOW;
	proxy_outcome_deny(o, GK_REASON_SNI_MISMATCH, "TLS server name %s is "
	    "not an allowed name this cage resolved to %s", r->name, t->name);
	return RELAY_PEEK_DENY;
}

static bool
host_ok(const struct gk_cage *c, const struct gk_host *t,
    const struct gk_host *h)
{
	if (h->is_addr)
		return t->is_addr && gk_addr_eq(&h->addr, &t->addr);
	if (!t->is_addr)
		return strcmp(h->name, t->name) == 0;
	/* a name for an address target: allowed and pinned there */
	return gk_allow_addr_cidr(gk_cage_allow(c), &t->addr) ||
	    (gk_cage_allows_name(c, h->name, strlen(h->name), t->port) &&
	    gk_cage_pinned_name(c, &t->addr, h->name, gk_now()));
}

/* A request head of the followed stream: its Host must match. */
static bool
head_ok(const struct gk_cage *c, const struct gk_host *t,
    const struct proxy_peek_state *ps, const struct http_follow_out *fo,
    struct proxy_outcome *o)
{
	const char *name = fo->host.host.name;

	if (fo->st == HTTP_ABSENT)	/* HTTP/1.0 without Host */
		return true;
	if (host_ok(c, t, &fo->host.host))
		return true;
	snprintf(o->seen, sizeof(o->seen), "%s", name);
	if (ps->f.requests > 1)
		proxy_outcome_deny(o, GK_REASON_HOST_MISMATCH, "HTTP Host "
		    "%.100s of request %llu on the connection differs from "
		    "the requested host %s", name,
		    (unsigned long long)ps->f.requests, t->name);
	else
		proxy_outcome_deny(o, GK_REASON_HOST_MISMATCH, "HTTP Host "
		    "%.100s differs from the requested host %s", name,
		    t->name);
	return false;
}

/* The follower wants more than is held; off bytes were checked. */
static enum relay_peek
follow_wait(const struct gk_host *t, const struct proxy_peek_state *ps,
    uint64_t off, size_t len, bool eof, const struct http_follow_out *fo,
    uint64_t *pass, struct proxy_outcome *o)
{
	if (off > 0) {		/* the rest is shown again at once */
		*pass = off;
		return RELAY_PEEK_PASS;
	}
	if (!eof)
		return RELAY_PEEK_MORE;
	/* the client ended: between requests (blank bytes at most) is fine */
	if (len == 0 || (ps->f.state == HTTP_FOLLOW_ST_HEAD &&
	    fo->blank == len))
		return RELAY_PEEK_ALLOW;
	return peek_deny(o, GK_REASON_MALFORMED, "malformed HTTP request: the "
	    "client ended inside a request head, chunk-size line or trailer",
	    t);
}

/* Every request of a plain HTTP stream: check heads, pass the rest. */
static enum relay_peek
peek_follow(const struct gk_cage *c, const struct gk_host *t,
    struct proxy_peek_state *ps, const uint8_t *buf, size_t len, bool eof,
    uint64_t *pass, struct proxy_outcome *o)
{
	struct http_follow_out fo;
	uint64_t off = 0;
	char what[128];

	/* bounded: every HEAD and PASS takes at least one byte */
	for (;;) {
		switch (http_follow(&ps->f, buf + off, len - (size_t)off,
		    &fo)) {
		case HTTP_FOLLOW_NEED_MORE:
			return follow_wait(t, ps, off, len, eof, &fo, pass, o);
		case HTTP_FOLLOW_HEAD:
			if (proxy_leak_head(c, buf + off, (size_t)fo.pass,
			    "a plain-HTTP request head", o) ||
			    !head_ok(c, t, ps, &fo, o) ||
			    !proxy_rules_ok(c, t, buf + off + fo.blank,
			    (size_t)fo.pass - fo.blank, &fo, o))
				return RELAY_PEEK_DENY;
			off += fo.pass;
			break;
		case HTTP_FOLLOW_PASS:
			off += fo.pass;
			if (off > len) {	/* a body goes on unheld */
				*pass = off;
				return RELAY_PEEK_PASS;
			}
			break;
		case HTTP_FOLLOW_OPAQUE:	/* websocket frames */
			return RELAY_PEEK_ALLOW;
		case HTTP_FOLLOW_INVALID:
			snprintf(what, sizeof(what), "malformed HTTP request "
			    "(request %llu on the connection): %s",
			    (unsigned long long)ps->f.requests + 1, fo.why);
			return peek_deny(o, GK_REASON_MALFORMED, what, t);
		}
	}
}

/* What the bytes after blank ones are to TLS: NOT_TLS, NEED_MORE, or
 * (refused) a record or hello a server might take after skipping them. */
static enum sni_status
tls_after_blanks(const uint8_t *buf, size_t len, size_t blank)
{
	struct sni_result r;

	if (blank == 0 || blank >= len)
		return SNI_NOT_TLS;
	return sni_parse(buf + blank, len - blank, &r);
}

/* Bytes that are not TLS: an HTTP request, or another protocol. */
static enum relay_peek
peek_plain(const struct gk_cage *c, const struct gk_host *t,
    struct proxy_peek_state *ps, const uint8_t *buf, size_t len, bool eof,
    uint64_t *pass, struct proxy_outcome *o)
{
	struct http_sniff_result sr;
	enum sni_status st;

	switch (http_sniff(buf, len, &sr)) {
	case HTTP_SNIFF_NEED_MORE:
		if (!eof)
			return RELAY_PEEK_MORE;
		return peek_deny(o, GK_REASON_MALFORMED, "malformed first bytes: "
		    "the client ended inside its first line", t);
	case HTTP_SNIFF_PROXY:
		return peek_deny(o, GK_REASON_MALFORMED, "a PROXY protocol header "
		    "(what follows it would reach the server unchecked)", t);
	case HTTP_SNIFF_BLANKS:
		proxy_outcome_deny(o, GK_REASON_MALFORMED, "more than %d blank "
		    "bytes (CR, LF, SP, HTAB) before the first line to %s",
		    HTTP_BLANK_MAX, t->name);
		return RELAY_PEEK_DENY;
	case HTTP_SNIFF_OTHER:
		st = tls_after_blanks(buf, len, sr.blank);
		if (st == SNI_NEED_MORE && !eof)
			return RELAY_PEEK_MORE;
		if (st != SNI_NOT_TLS)
			return peek_deny(o, GK_REASON_MALFORMED, "blank bytes "
			    "before a TLS record", t);
		if (t->port == HTTP_PORT)
			return peek_deny(o, GK_REASON_MALFORMED, "neither an HTTP "
			    "request nor TLS on port 80", t);
		/* request rules let requests through, nothing else */
		if (gk_allow_inspects(gk_cage_allow(c), t->name,
		    strlen(t->name), t->port))
			return peek_deny(o, GK_REASON_REQUEST_RULE, "neither an "
			    "HTTP request nor TLS (request rules allow only "
			    "the requests they name)", t);
		return RELAY_PEEK_ALLOW;	/* a line protocol, binary */
	case HTTP_SNIFF_REQUEST:
		break;
	}
	ps->following = true;
	http_follow_init(&ps->f);
	return peek_follow(c, t, ps, buf, len, eof, pass, o);
}

/* The resolver hands out no ECH keys, so this is GREASE or a client
 * with keys from elsewhere; the outer name is what gets checked. */
static void
ech_seen(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_cage *c, const struct gk_host *t,
    const struct sni_result *r)
{
	json_object *d;

	gk_stats.tls_ech++;
	if (!gk_limit_audit_ok(proxy_cage(ctx, who), "proxy.ech", t->name))
		return;
	log_info("conn=%llu cage=%s host=%s sni=%s ech=1",
	    (unsigned long long)who->conn, gk_cage_id(c), t->name, r->name);
	if (ctx->audit == NULL)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "conn", json_object_new_int64(
	    (int64_t)who->conn));
	json_object_object_add(d, "host", json_object_new_string(t->name));
	json_object_object_add(d, "port", json_object_new_int(t->port));
	json_object_object_add(d, "sni", json_object_new_string(r->name));
	gk_audit_event(ctx->audit, "proxy.ech", c, d);
}

/* A first hello passed: send it, and watch what the server answers. */
static enum relay_peek
peek_tls_pass(struct proxy_peek_state *ps, const struct sni_result *r,
    enum relay_peek v, uint64_t *pass)
{
	if (v != RELAY_PEEK_ALLOW)
		return v;
	snprintf(ps->tls_name, sizeof(ps->tls_name), "%s", r->name);
	ps->tls = PROXY_TLS_WATCH;
	*pass = r->consumed;
	return RELAY_PEEK_WATCH;
}

bool
proxy_peek_watch(struct proxy_peek_state *ps, const uint8_t *buf,
    size_t len, bool eof)
{
	struct sni_srv_result sr;

	if (ps->tls != PROXY_TLS_WATCH)
		return true;
	switch (sni_srv_parse(buf, len, &sr)) {
	case SNI_SRV_NEED_MORE:
		if (!eof)
			return false;
		/* the server ended before it could ask for a retry */
		ps->tls = PROXY_TLS_DONE;
		return true;
	case SNI_SRV_HRR:
		ps->tls = PROXY_TLS_RETRY;
		return true;
	case SNI_SRV_INVALID:
		ps->tls = PROXY_TLS_BAD_SERVER;
		return true;
	case SNI_SRV_HELLO:
	case SNI_SRV_OTHER:
		break;
	}
	ps->tls = PROXY_TLS_DONE;
	return true;
}

/* A first hello with a server name: refused, passed and watched, or
 * (a name bound to a credential, or one request rules inspect) taken
 * for the broker. */
static enum relay_peek
peek_sni(const struct gk_cage *c, const struct gk_host *t,
    struct proxy_peek_state *ps, const struct sni_result *r, uint64_t *pass,
    struct proxy_outcome *o)
{
	enum relay_peek v;

	if (proxy_leak(c, (const uint8_t *)r->name, r->name_len, "a TLS "
	    "server name", o))
		return RELAY_PEEK_DENY;
	v = peek_tls(c, t, r, PEEK_TLS_SNI, o);
	if (v != RELAY_PEEK_ALLOW || (!gk_cred_bound(c, r->name, r->name_len) &&
	    !gk_allow_inspects(gk_cage_allow(c), r->name, r->name_len,
	    t->port)))
		return peek_tls_pass(ps, r, v, pass);
	snprintf(ps->tls_name, sizeof(ps->tls_name), "%s", r->name);
	return RELAY_PEEK_TAKE;
}

/* What follows a first hello, once the server's answer is known. */
static enum relay_peek
peek_retry(struct proxy_peek_state *ps, const struct gk_host *t,
    const uint8_t *buf, size_t len, bool eof, struct proxy_outcome *o)
{
	struct sni_result r;
	enum sni_status st;

	switch (ps->tls) {
	case PROXY_TLS_WATCH:		/* (the relay waits for the watch) */
		return RELAY_PEEK_MORE;
	case PROXY_TLS_BAD_SERVER:
		return peek_deny(o, GK_REASON_MALFORMED, "a TLS server answer "
		    "to a ClientHello that cannot be read (a HelloRetryRequest "
		    "or not)", t);
	case PROXY_TLS_RETRY:
		break;
	case PROXY_TLS_NONE:
	case PROXY_TLS_DONE:
	default:
		return RELAY_PEEK_ALLOW;
	}
	st = sni_parse_retry(buf, len, &r);
	if (st == SNI_NEED_MORE && !eof)
		return RELAY_PEEK_MORE;
	if (st == SNI_OK && r.name[0] != '\0')
		snprintf(o->seen, sizeof(o->seen), "%s", r.name);
	if ((st == SNI_ABSENT && ps->tls_name[0] == '\0') ||
	    (st == SNI_OK && sni_matches(&r, ps->tls_name,
	    strlen(ps->tls_name)))) {
		ps->tls = PROXY_TLS_DONE;
		return RELAY_PEEK_ALLOW;
	}
	if (st == SNI_OK || st == SNI_ABSENT) {
		proxy_outcome_deny(o, GK_REASON_SNI_MISMATCH, "TLS server name "
		    "%s of the ClientHello after a HelloRetryRequest differs "
		    "from the first one's %s", st == SNI_OK ? r.name : "(none)",
		    ps->tls_name[0] != '\0' ? ps->tls_name : "(none)");
		return RELAY_PEEK_DENY;
	}
	return peek_deny(o, GK_REASON_MALFORMED, "malformed TLS ClientHello "
	    "after a HelloRetryRequest", t);
}

/* The first bytes: TLS, or plain bytes. */
static enum relay_peek
peek_first(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_cage *c, const struct gk_host *t,
    struct proxy_peek_state *ps,
    const uint8_t *buf, size_t len, bool eof, uint64_t *pass,
    struct proxy_outcome *o)
{
	struct sni_result r;

	switch (sni_parse(buf, len, &r)) {
	case SNI_NEED_MORE:
		if (!eof)
			return RELAY_PEEK_MORE;
		return peek_deny(o, GK_REASON_MALFORMED, "malformed TLS "
		    "ClientHello: the client ended inside it", t);
	case SNI_OK:
		if (r.ech)
			ech_seen(ctx, who, c, t, &r);
		return peek_sni(c, t, ps, &r, pass, o);
	case SNI_ABSENT:
		return peek_tls_pass(ps, &r, peek_tls(c, t, &r,
		    PEEK_TLS_ABSENT, o), pass);
	case SNI_SSL2:
		return peek_tls(c, t, &r, PEEK_TLS_SSL2, o);
	case SNI_NOT_TLS:
		return peek_plain(c, t, ps, buf, len, eof, pass, o);
	case SNI_NOT_HELLO:
		return peek_deny(o, GK_REASON_MALFORMED, "a TLS record other than a "
		    "ClientHello first (alert, change_cipher_spec, application "
		    "data, or another version)", t);
	case SNI_INVALID:
	case SNI_TOO_LONG:
	default:
		return peek_deny(o, GK_REASON_MALFORMED, "malformed TLS ClientHello",
		    t);
	}
}

void
proxy_peek_init(struct proxy_peek_state *ps)
{
	memset(ps, 0, sizeof(*ps));
	http_follow_init(&ps->f);
}

enum relay_peek
proxy_peek(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, struct proxy_peek_state *ps,
    const uint8_t *buf, size_t len, bool eof, uint64_t *pass,
    struct proxy_outcome *o)
{
	struct gk_cage *c;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	*pass = 0;
	if ((c = proxy_cage(ctx, who)) == NULL) {
		proxy_outcome_deny(o, GK_REASON_UNKNOWN_SOURCE, "the cage is "
		    "gone");
		return RELAY_PEEK_DENY;
	}
	if (ps->following)
		return peek_follow(c, t, ps, buf, len, eof, pass, o);
	if (ps->tls != PROXY_TLS_NONE)
		return peek_retry(ps, t, buf, len, eof, o);
	/* a client that only listened (server-first) and left: nothing of
	 * its went anywhere */
	if (len == 0)
		return eof ? RELAY_PEEK_ALLOW : RELAY_PEEK_MORE;
	return peek_first(ctx, who, c, t, ps, buf, len, eof, pass, o);
}
