/*
 * proxy_policy: the rules applied at connect time and to the client's
 * first bytes. Pure decisions over the cage table; counting and the audit
 * line are in proxy_deny_record().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "gk_audit.h"
#include "gk_cage.h"
#include "gk_log.h"
#include "gk_special.h"
#include "gk_time.h"
#include "proxy.h"
#include "sni.h"
#include "socks.h"

struct gk_cage *
proxy_cage(const struct proxy_ctx *ctx, const struct proxy_who *who)
{
	struct gk_cage *c = gk_cage_by_source(ctx->cages, &who->source);

	if (c == NULL || strcmp(c->id, who->id) != 0)
		return NULL;
	return c;
}

static bool
deny(struct proxy_outcome *o, enum gk_deny_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool
deny(struct proxy_outcome *o, enum gk_deny_reason r, const char *fmt, ...)
{
	va_list ap;

	o->res = PROXY_DENIED;
	o->reason = r;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
	return false;
}

/*
 * The names the address is pinned to in this cage: the first one allowed
 * on port (NULL if none), and in *first any one of them (NULL: not pinned
 * at all).
 */
static const char *
pin_name(const struct gk_cage *c, const struct gk_addr *a, uint16_t port,
    const char **first)
{
	const char *names[256];		/* CDN addresses carry many names */
	size_t n, i;

	n = gk_cage_pin_names(c, a, gk_now(), names, 256);
	*first = n > 0 ? names[0] : NULL;
	for (i = 0; i < n; i++)
		if (gk_allow_name(c->allow, names[i], strlen(names[i]), port))
			return names[i];
	return NULL;
}

void
proxy_target_label(const struct gk_cage *c, struct proxy_target *t)
{
	const char *name = NULL, *first = NULL;

	if (c != NULL)
		name = pin_name(c, &t->addr, t->port, &first);
	if (name == NULL)
		name = first;
	if (name != NULL)
		snprintf(t->name, sizeof(t->name), "%s", name);
	else
		gk_addr_ntop(&t->addr, t->name, sizeof(t->name));
}

bool
proxy_allowed(const struct proxy_ctx *ctx, const struct gk_cage *c,
    const struct proxy_target *t, struct proxy_outcome *o)
{
	char why[PROXY_WHY_MAX];
	const char *first;
	enum gk_special sp;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!t->is_addr) {
		if (gk_allow_name(c->allow, t->name, strlen(t->name), t->port))
			return true;
		gk_allow_explain(c->allow, t->name, strlen(t->name), t->port,
		    why, sizeof(why));
		return deny(o, GK_REASON_NOT_ALLOWLISTED, "%s", why);
	}
	sp = gk_special_classify(&t->addr, ctx->host);
	if (sp != GK_SPECIAL_NONE && !gk_allow_addr_cidr(c->allow, &t->addr))
		return deny(o, GK_REASON_SPECIAL_RANGE, "%s is a %s address; "
		    "only a CIDR pattern naming it allows it", t->name,
		    gk_special_name(sp));
	if (gk_allow_addr(c->allow, &t->addr, t->port))
		return true;
	if (gk_allow_addr_cidr(c->allow, &t->addr))
		return deny(o, GK_REASON_NOT_ALLOWLISTED, "a CIDR pattern covers "
		    "%s, but not on port %u", t->name, t->port);
	if (pin_name(c, &t->addr, t->port, &first) != NULL)
		return true;
	if (first != NULL)		/* pinned, but not for this port */
		return deny(o, GK_REASON_NOT_ALLOWLISTED, "%s was resolved by "
		    "this cage, but no pattern allows its names on port %u",
		    t->name, t->port);
	return deny(o, GK_REASON_IP_NOT_PINNED, "%s is not allowed by a CIDR "
	    "pattern and this cage's DNS answers did not lead to it; connect "
	    "by name", t->name);
}

/* ---- peek ---- */

enum peek_tls {
	PEEK_TLS_SNI,		/* a ClientHello with a server name */
	PEEK_TLS_ABSENT,	/* a ClientHello without one */
	PEEK_TLS_SSL2,		/* an SSLv2-format hello: none either */
};

static enum relay_peek
peek_tls(const struct gk_cage *c, const struct proxy_target *t,
    const struct sni_result *r, enum peek_tls kind, struct proxy_outcome *o)
{
	if (kind != PEEK_TLS_SNI) {
		if (t->is_addr && gk_allow_addr_cidr(c->allow, &t->addr))
			return RELAY_PEEK_ALLOW;
		deny(o, GK_REASON_NO_SNI, "%s without a server name to %s; "
		    "only a CIDR pattern allows that", kind == PEEK_TLS_SSL2 ?
		    "an SSLv2-format ClientHello" : "TLS", t->name);
		return RELAY_PEEK_DENY;
	}
	snprintf(o->seen, sizeof(o->seen), "%s", r->name);
	if (!t->is_addr) {
		if (sni_matches(r, t->name, strlen(t->name)))
			return RELAY_PEEK_ALLOW;
		deny(o, GK_REASON_SNI_MISMATCH, "TLS server name %s differs "
		    "from the requested host %s", r->name, t->name);
		return RELAY_PEEK_DENY;
	}
	/* an address target: the SNI must be an allowed name this cage
	 * resolved to exactly that address (or the address is a CIDR) */
	if (gk_allow_addr_cidr(c->allow, &t->addr) ||
	    (gk_allow_name(c->allow, r->name, r->name_len, t->port) &&
	    gk_cage_pinned_name(c, &t->addr, r->name, gk_now())))
		return RELAY_PEEK_ALLOW;
	deny(o, GK_REASON_SNI_MISMATCH, "TLS server name %s is not an allowed "
	    "name this cage resolved to %s", r->name, t->name);
	return RELAY_PEEK_DENY;
}

static bool
host_ok(const struct gk_cage *c, const struct proxy_target *t,
    const struct socks_host *h)
{
	if (h->is_addr)
		return t->is_addr && gk_addr_eq(&h->addr, &t->addr);
	if (!t->is_addr)
		return strcmp(h->name, t->name) == 0;
	/* a name for an address target: allowed and pinned there */
	return gk_allow_addr_cidr(c->allow, &t->addr) ||
	    (gk_allow_name(c->allow, h->name, strlen(h->name), t->port) &&
	    gk_cage_pinned_name(c, &t->addr, h->name, gk_now()));
}

/* Does the first line end in an HTTP version, as a request line does? */
static bool
http_request_line(const uint8_t *buf, size_t len)
{
	const uint8_t *eol = memchr(buf, '\n', len);
	size_t n = eol != NULL ? (size_t)(eol - buf) : len;

	return memmem(buf, n, " HTTP/", 6) != NULL;
}

static enum relay_peek
peek_http(const struct gk_cage *c, const struct proxy_target *t,
    const uint8_t *buf, size_t len, bool eof, struct proxy_outcome *o)
{
	struct http_host h;

	switch (http_peek_host(buf, len, &h)) {
	case HTTP_NEED_MORE:
		if (!eof)
			return RELAY_PEEK_MORE;
		/* ending inside a request head is as bad as a broken one */
		deny(o, GK_REASON_MALFORMED, "malformed HTTP request to "
		    "%s: the client ended inside its head", t->name);
		return RELAY_PEEK_DENY;
	case HTTP_INVALID:
		/* a line protocol (IRC, Redis, SMTP...) is not HTTP: it goes
		 * by host and port; a broken HTTP request does not go at all */
		if (!http_request_line(buf, len))
			return RELAY_PEEK_ALLOW;
		__attribute__((fallthrough));
	case HTTP_TOO_LONG:
	case HTTP_BAD_SCHEME:
	case HTTP_NOT_PROXY_REQUEST:
		deny(o, GK_REASON_MALFORMED, "malformed HTTP request to "
		    "%s", t->name);
		return RELAY_PEEK_DENY;
	case HTTP_NOT_HTTP:
	case HTTP_ABSENT:
		return RELAY_PEEK_ALLOW;
	case HTTP_OK:
		if (host_ok(c, t, &h.host))
			return RELAY_PEEK_ALLOW;
		snprintf(o->seen, sizeof(o->seen), "%s", h.host.name);
		deny(o, GK_REASON_HOST_MISMATCH, "HTTP Host %.100s differs "
		    "from the requested host %s", h.host.name, t->name);
		return RELAY_PEEK_DENY;
	}
	return RELAY_PEEK_DENY;
}

/* The resolver hands out no ECH keys, so this is GREASE or a client
 * with keys from elsewhere; the outer name is what gets checked. */
static void
ech_seen(const struct proxy_ctx *ctx, const struct gk_cage *c,
    const struct proxy_target *t, const struct sni_result *r)
{
	json_object *d;

	gk_stats.tls_ech++;
	log_info("cage=%s host=%s sni=%s ech=1", c->id, t->name, r->name);
	if (ctx->audit == NULL)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "host", json_object_new_string(t->name));
	json_object_object_add(d, "port", json_object_new_int(t->port));
	json_object_object_add(d, "sni", json_object_new_string(r->name));
	gk_audit_event(ctx->audit, "proxy.ech", c, d);
}

enum relay_peek
proxy_peek(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct proxy_target *t, const uint8_t *buf, size_t len, bool eof,
    struct proxy_outcome *o)
{
	struct sni_result r;
	struct gk_cage *c;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if ((c = proxy_cage(ctx, who)) == NULL) {
		deny(o, GK_REASON_UNKNOWN_SOURCE, "the cage is gone");
		return RELAY_PEEK_DENY;
	}
	/* a client that only listened (server-first) and left: nothing of
	 * its went anywhere */
	if (len == 0)
		return eof ? RELAY_PEEK_ALLOW : RELAY_PEEK_MORE;
	switch (sni_parse(buf, len, &r)) {
	case SNI_NEED_MORE:
		if (!eof)
			return RELAY_PEEK_MORE;
		deny(o, GK_REASON_MALFORMED, "malformed TLS ClientHello to "
		    "%s: the client ended inside it", t->name);
		return RELAY_PEEK_DENY;
	case SNI_OK:
		if (r.ech)
			ech_seen(ctx, c, t, &r);
		return peek_tls(c, t, &r, PEEK_TLS_SNI, o);
	case SNI_ABSENT:
		return peek_tls(c, t, &r, PEEK_TLS_ABSENT, o);
	case SNI_SSL2:
		return peek_tls(c, t, &r, PEEK_TLS_SSL2, o);
	case SNI_NOT_TLS:
		return peek_http(c, t, buf, len, eof, o);
	case SNI_NOT_HELLO:
		deny(o, GK_REASON_MALFORMED, "a TLS record other than a "
		    "ClientHello first (alert, change_cipher_spec, application "
		    "data, or another version) to %s", t->name);
		return RELAY_PEEK_DENY;
	case SNI_INVALID:
	case SNI_TOO_LONG:
	default:
		deny(o, GK_REASON_MALFORMED, "malformed TLS ClientHello to %s",
		    t->name);
		return RELAY_PEEK_DENY;
	}
}

void
proxy_deny_record(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct proxy_target *t, const struct proxy_outcome *o)
{
	char src[GK_ADDR_STRLEN];
	struct gk_cage *c = proxy_cage(ctx, who);
	json_object *d;

	gk_stats.denied[who->kind][o->reason]++;
	gk_stats.connections[who->proto][GK_CONNV_DENIED]++;
	if (c != NULL)
		c->denied[who->kind]++;
	gk_addr_ntop(&who->source, src, sizeof(src));
	log_info("cage=%s client=%s host=%s port=%u action=deny reason=%s",
	    c != NULL ? c->id : "-", src, t->name, t->port,
	    gk_deny_reason_name(o->reason));
	if (ctx->audit == NULL)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "proto",
	    json_object_new_string(gk_proto_name(who->proto)));
	json_object_object_add(d, "client", json_object_new_string(src));
	json_object_object_add(d, "host", json_object_new_string(t->name));
	if (t->is_addr && who->proto == GK_PROTO_TRANSPARENT)
		json_object_object_add(d, "address", json_object_new_string(
		    gk_addr_ntop(&t->addr, src, sizeof(src))));
	json_object_object_add(d, "port", json_object_new_int(t->port));
	json_object_object_add(d, "reason",
	    json_object_new_string(gk_deny_reason_name(o->reason)));
	json_object_object_add(d, "why", json_object_new_string(o->why));
	if (o->seen[0] != '\0')
		json_object_object_add(d, "seen",
		    json_object_new_string(o->seen));
	gk_audit_event(ctx->audit, "proxy.deny", c, d);
}

const char *
proxy_strresult(enum proxy_result r)
{
	static const char *names[] = { "connected", "denied", "unreachable",
	    "refused", "timeout", "gone", "error" };

	return (size_t)r < sizeof(names) / sizeof(names[0]) ? names[r] :
	    "unknown";
}
