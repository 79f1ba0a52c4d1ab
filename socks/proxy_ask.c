/*
 * proxy_ask: a session of an asking cage held on its question
 * (gatekeeper/cage/gk_ask.h) instead of refused, for any of the three
 * proxies. Only a name refused as not on the allowlist is asked about:
 * never an address, a special name (gk_special_name_classify), a name
 * whose addresses (looked up before the question is put) are all special
 * (refused at once, as in a cage that does not ask), or a host:port the
 * owner denied already; and the answer never lets a name reach a special
 * address (the dial drops those as for any name).
 */
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy_int.h"

/* Slack past the question's own timeout before the session's deadline. */
#define ASK_SLACK_SEC	5

void
proxy_unplaceholder(const struct gk_cage *c, struct gk_host *t)
{
	const char *name;

	if (c == NULL || !t->is_addr ||
	    (name = gk_ask_placeholder_name(c, &t->addr)) == NULL)
		return;
	snprintf(t->name, sizeof(t->name), "%s", name);
	memset(&t->addr, 0, sizeof(t->addr));
	t->is_addr = false;
}

/* Too many questions open already: o says so. */
static bool
full(struct proxy_conn *s, struct proxy_outcome *o)
{
	return proxy_outcome_deny(o, GK_REASON_NOT_ALLOWLISTED, "%s:%u is "
	    "not on the allowlist, and its cage has %d questions open "
	    "already", s->t.name, s->t.port, GK_ASK_QUESTIONS_MAX);
}

/* The question ended; the session learns how. */
static void
decided(void *arg, enum gk_decision d)
{
	struct proxy_conn *s = arg;
	proxy_ask_cb cb = s->ask_cb;
	struct proxy_outcome o;

	s->ask = NULL;
	s->ask_cb = NULL;
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	switch (d) {
	case GK_DECISION_ONCE:
	case GK_DECISION_RUN:
	case GK_DECISION_SAVE:
		log_info("conn=%llu cage=%s host=%s port=%u action=approved "
		    "decision=%s", (unsigned long long)s->who.conn, s->who.id,
		    s->t.name, s->t.port, gk_decision_name(d));
		cb(s, true, NULL);
		return;
	case GK_DECISION_DENY:
		proxy_outcome_deny(&o, GK_REASON_NOT_ALLOWLISTED, "%s:%u is "
		    "not on the allowlist, and its cage's owner denied it when "
		    "asked", s->t.name, s->t.port);
		break;
	case GK_DECISION_TIMEOUT:
	case GK_DECISION__MAX:
	default:
		proxy_outcome_deny(&o, GK_REASON_NOT_ALLOWLISTED, "%s:%u is "
		    "not on the allowlist, and its cage's owner did not answer "
		    "within %u s when asked", s->t.name, s->t.port,
		    s->ask_timeout);
		break;
	}
	cb(s, false, &o);
}

/* s is ASKING: cb learns how it ends. */
static void
asking(struct proxy_conn *s, const struct gk_cage *c, proxy_ask_cb cb)
{
	struct timeval tv;

	s->ask_cb = cb;
	s->ask_timeout = gk_ask_timeout(c);
	proxy_enter_state(s, PROXY_ST_ASKING);
	/* the question ends first; this only bounds the session */
	tv.tv_sec = (time_t)s->ask_timeout + ASK_SLACK_SEC;
	tv.tv_usec = 0;
	evtimer_add(s->timer, &tv);
}

/* Hold s on its question (asked now if none is open); false: o says why
 * not. */
static bool
hold(struct proxy_conn *s, struct gk_cage *c, struct proxy_outcome *o,
    proxy_ask_cb cb)
{
	switch (gk_ask_hold(c, s->t.name, s->t.port, s->who.kind, decided, s,
	    &s->ask)) {
	case GK_ASK_HELD:
		break;
	case GK_ASK_DENIED:
		proxy_outcome_deny(o, GK_REASON_NOT_ALLOWLISTED, "%s:%u is not "
		    "on the allowlist, and its cage's owner denied it when "
		    "asked earlier", s->t.name, s->t.port);
		return false;
	case GK_ASK_FULL:
	default:
		return full(s, o);
	}
	asking(s, c, cb);
	log_info("conn=%llu cage=%s host=%s port=%u action=ask",
	    (unsigned long long)s->who.conn, s->who.id, s->t.name, s->t.port);
	return true;
}

/*
 * Does the name lead only to special addresses (none of them named by
 * a CIDR pattern)? Then o is its special_range denial: refused at once,
 * as in a cage that does not ask, never asked about.
 */
static bool
special_only(struct proxy_conn *s, const struct gk_cage *c,
    const struct dns_lookup_result *r, struct proxy_outcome *o)
{
	enum gk_special sp, first = GK_SPECIAL_NONE;
	size_t i, at = 0;

	for (i = 0; i < r->naddrs; i++) {
		sp = gk_special_classify(&r->addrs[i], s->ctx->host);
		if (sp == GK_SPECIAL_NONE ||
		    gk_allow_addr_cidr(gk_cage_allow(c), &r->addrs[i]))
			return false;
		if (first == GK_SPECIAL_NONE) {
			first = sp;
			at = i;
		}
	}
	if (first == GK_SPECIAL_NONE)
		return false;
	proxy_outcome_deny(o, GK_REASON_SPECIAL_RANGE, "-");
	proxy_special_why(o, s->t.name, &r->addrs[at], first);
	return true;
}

/* The name's addresses came: refused at once, or asked about. */
static void
looked_up(void *arg, const struct dns_lookup_result *r)
{
	struct proxy_conn *s = arg;
	struct gk_cage *c = proxy_cage(s->ctx, &s->who);
	proxy_ask_cb cb = s->ask_cb;
	struct proxy_outcome o;

	s->ask_lookup = NULL;
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	if (c == NULL)
		proxy_outcome_deny(&o, GK_REASON_UNKNOWN_SOURCE, "its cage "
		    "ended while %s was looked up", s->t.name);
	else if (!special_only(s, c, r, &o) && hold(s, c, &o, cb))
		return;
	s->ask_cb = NULL;
	cb(s, false, &o);
}

void
proxy_ask_stop(struct proxy_conn *s)
{
	gk_ask_cancel(s->ask);
	s->ask = NULL;
	if (s->ask_lookup != NULL)
		dns_lookup_cancel(s->ask_lookup);
	s->ask_lookup = NULL;
}

bool
proxy_conn_ask(struct proxy_conn *s, struct proxy_outcome *o,
    proxy_ask_cb cb)
{
	struct gk_cage *c = proxy_cage(s->ctx, &s->who);
	struct dns_lookup_result r;

	if (c == NULL || !gk_cage_asks(c) || s->t.is_addr ||
	    o->reason != GK_REASON_NOT_ALLOWLISTED ||
	    gk_special_name_classify(s->t.name) != GK_SPECIAL_NONE)
		return false;
	/* what the host policy's bound keeps from every cage: not asked */
	if (!gk_hostpolicy_may_ask(gk_cage_policy(c), s->t.name,
	    strlen(s->t.name), s->t.port)) {
		proxy_outcome_deny(o, GK_REASON_HOST_POLICY, "%s:%u is outside "
		    "the host policy's bound (version %s): no cage may allow "
		    "it, so it is not asked about", s->t.name, s->t.port,
		    gk_cage_policy(c)->version);
		return false;
	}
	if (gk_ask_open(c) >= GK_ASK_QUESTIONS_MAX)
		return full(s, o);	/* no lookup for a question not put */
	/* where the name leads first: a special address is not asked about */
	switch (dns_lookup(s->ctx->dns, s->t.name, AF_INET, looked_up, s, &r,
	    &s->ask_lookup)) {
	case DNS_LOOKUP_PENDING:
		break;
	case DNS_LOOKUP_DONE:
		return !special_only(s, c, &r, o) && hold(s, c, o, cb);
	case DNS_LOOKUP_FAILED:
	default:
		return hold(s, c, o, cb);
	}
	asking(s, c, cb);	/* its name looked up first */
	return true;
}
