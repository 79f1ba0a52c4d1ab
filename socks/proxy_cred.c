/*
 * proxy_cred: a cage's credentials on the proxies' paths (gk_cred.h).
 *
 * A placeholder's mark where it does not belong is a leak, refused like
 * any denial (reason credential_leak, the credential named, never its
 * bytes): in a SOCKS5, CONNECT or transparent target's name, a TLS server
 * name, a plain-HTTP request head, or a brokered request to a host the
 * credential is not bound to.
 *
 * A TLS connection whose checked server name is bound to a credential is
 * taken from the relay before its ClientHello goes anywhere and given to
 * a broker (broker.h): TLS ends here with the cage's leaf for that name,
 * and in each request head the bound placeholders become their secrets
 * (http_cred.h), the Host checked against the name as the peek does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "socks/broker.h"
#include "socks/parse/http_cred.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

bool
proxy_leak(const struct gk_cage *c, const uint8_t *buf, size_t len,
    const char *where, struct proxy_outcome *o)
{
	const char *cred;

	if ((cred = gk_cred_leak(c, buf, len, NULL, NULL)) == NULL)
		return false;
	proxy_outcome_deny(o, GK_REASON_CREDENTIAL_LEAK, "credential %s's "
	    "placeholder in %s", cred, where);
	o->credential = cred;
	o->seen[0] = '\0';
	return true;
}

/* The cage's credentials as the rewriter takes them, bound to host. */
static size_t
cred_set(const struct gk_cage *c, const char *host, struct http_cred *set)
{
	struct gk_cred_view v;
	size_t i, n = 0;

	for (i = 0; n < HTTP_CRED_MAX && gk_cred_at(c, i, host, &v); i++) {
		set[n].name = v.name;
		set[n].placeholder = v.placeholder;
		set[n].placeholder_len = v.len;
		set[n].secret = v.secret;
		set[n].secret_len = v.len;
		set[n].bound = v.bound;
		n++;
	}
	return n;
}

bool
proxy_leak_head(const struct gk_cage *c, const uint8_t *head, size_t len,
    const char *where, struct proxy_outcome *o)
{
	static uint8_t out[HTTP_HEAD_MAX + HTTP_BLANK_MAX];
	struct http_cred set[HTTP_CRED_MAX];
	size_t n, olen, which = 0;

	if (proxy_leak(c, head, len, where, o))
		return true;
	if (c == NULL || gk_cred_count(c) == 0)
		return false;
	/* none bound: the rewriter only looks, Basic values decoded too */
	n = cred_set(c, NULL, set);
	if (http_cred_rewrite(head, len, set, n, out, sizeof(out), &olen,
	    &which, NULL) != HTTP_CRED_LEAK)
		return false;
	proxy_outcome_deny(o, GK_REASON_CREDENTIAL_LEAK, "credential %s's "
	    "placeholder in %s (base64, Basic)", set[which].name, where);
	o->credential = set[which].name;
	o->seen[0] = '\0';
	return true;
}

/* A refused request of a brokered connection: counted and told. */
static enum broker_verdict
refuse(struct proxy_conn *s, struct proxy_outcome *o, char *why,
    size_t whylen)
{
	proxy_deny_count(s->ctx, &s->who, &s->t, o);
	snprintf(why, whylen, "gatekeeper: refused: %s", o->why);
	return BROKER_REFUSE;
}

/* The Host of a brokered request must be the checked name. */
static bool
head_host_ok(struct proxy_conn *s, const struct gk_cage *c,
    const struct http_follow_out *fo, struct proxy_outcome *o)
{
	if (fo->st == HTTP_ABSENT ||
	    strcmp(fo->host.host.name, s->ps.tls_name) == 0)
		return true;
	snprintf(o->seen, sizeof(o->seen), "%.*s", (int)sizeof(o->seen) - 1,
	    fo->host.host.name);
	proxy_outcome_deny(o, GK_REASON_HOST_MISMATCH, "HTTP Host %.100s "
	    "differs from the TLS server name %s", fo->host.host.name,
	    s->ps.tls_name);
	/* a placeholder in it is the worse: said so instead */
	(void)proxy_leak(c, (const uint8_t *)fo->host.host.name,
	    strlen(fo->host.host.name), "an HTTP Host", o);
	return false;
}

/* An inspected host's request: a rule must allow it (request rules). */
static bool
broker_rules_ok(struct proxy_conn *s, const struct gk_cage *c,
    const uint8_t *head, size_t len, const struct http_follow_out *fo,
    struct proxy_outcome *o)
{
	struct gk_host h;

	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", s->ps.tls_name);
	h.port = s->t.port;
	return proxy_rules_ok(c, &h, head, len, fo, o);
}

static enum broker_verdict
broker_head(void *arg, const uint8_t *head, size_t len, uint8_t *out,
    size_t outcap, size_t *outlen, const struct http_follow_out *fo,
    char *why, size_t whylen)
{
	struct proxy_conn *s = arg;
	struct http_cred set[HTTP_CRED_MAX];
	struct proxy_outcome o;
	struct gk_cage *c;
	size_t n, which = 0;
	unsigned replaced = 0;
	enum http_cred_status st;

	memset(&o, 0, sizeof(o));
	if ((c = proxy_cage(s->ctx, &s->who)) == NULL) {
		proxy_outcome_deny(&o, GK_REASON_UNKNOWN_SOURCE, "the cage is "
		    "gone");
		return refuse(s, &o, why, whylen);
	}
	if (!head_host_ok(s, c, fo, &o) || !broker_rules_ok(s, c, head, len,
	    fo, &o) || !proxy_budget_ok(c, &s->t, &o))
		return refuse(s, &o, why, whylen);
	n = cred_set(c, s->ps.tls_name, set);
	st = http_cred_rewrite(head, len, set, n, out, outcap, outlen, &which,
	    &replaced);
	if (st == HTTP_CRED_LEAK) {
		proxy_outcome_deny(&o, GK_REASON_CREDENTIAL_LEAK, "credential "
		    "%s's placeholder in a request to %s, a host it is not "
		    "bound to", set[which].name, s->ps.tls_name);
		o.credential = set[which].name;
		return refuse(s, &o, why, whylen);
	}
	if (st != HTTP_CRED_OK) {
		proxy_outcome_deny(&o, GK_REASON_MALFORMED, "a request head "
		    "the broker cannot rewrite: %s", http_cred_strstatus(st));
		return refuse(s, &o, why, whylen);
	}
	if (replaced > 0)
		gk_cred_used(c, replaced);
	return BROKER_PASS;
}

static void
broker_done(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct proxy_conn *s = arg;

	s->broker = NULL;	/* it frees itself */
	s->up = up;
	s->down = down;
	proxy_conn_end(s, reason);
}

void
proxy_broker_take(struct proxy_conn *s, int cfd, int sfd,
    const uint8_t *held, size_t len)
{
	struct broker_opts o;
	struct gk_cage *c = proxy_cage(s->ctx, &s->who);

	memset(&o, 0, sizeof(o));
	s->relay = NULL;	/* it frees itself after this */
	o.conn = s->who.conn;
	o.idle_sec = s->ctx->idle_sec;
	o.handshake_ms = s->ctx->handshake_timeout_ms;
	o.name = s->ps.tls_name;
	o.upstream = s->ctx->upstream_tls;
	o.held = held;
	o.held_len = len;
	o.head = broker_head;
	o.done = broker_done;
	o.quota = proxy_budget_applies(s) ? proxy_budget_quota : NULL;
	o.arg = s;
	if (c == NULL || o.upstream == NULL ||
	    gk_cred_leaf(c, s->ps.tls_name, &o.cert, &o.key) == -1 ||
	    (s->broker = broker_new(s->ctx->base, cfd, sfd, &o)) == NULL) {
		log_warn("conn=%llu cage=%s host=%s action=close reason=broker: "
		    "%s", (unsigned long long)s->who.conn, s->who.id,
		    s->ps.tls_name, c == NULL ? "the cage is gone" :
		    o.upstream == NULL ? "no upstream TLS" :
		    "cannot make a leaf certificate or the broker");
		close(cfd);
		close(sfd);
		proxy_conn_end(s, "broker");
		return;
	}
	log_info("conn=%llu cage=%s host=%s action=broker",
	    (unsigned long long)s->who.conn, s->who.id, s->ps.tls_name);
}
