/*
 * proxy_ask: a session of an asking cage held on its question
 * (gatekeeper/cage/gk_ask.h) instead of refused, for any of the three
 * proxies. Only a name refused as not on the allowlist is asked about:
 * never an address, a special name (gk_special_name_classify) or a
 * host:port the owner denied already. Nothing of the name leaves the host
 * before the answer (it is not looked up: a question must not be a way
 * out), and the answer never lets a name reach a special address (the
 * dial drops those as for any name, and its denial names the address).
 */
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

void
proxy_ask_stop(struct proxy_conn *s)
{
	gk_ask_cancel(s->ask);
	s->ask = NULL;
}

bool
proxy_conn_ask(struct proxy_conn *s, struct proxy_outcome *o,
    proxy_ask_cb cb)
{
	struct gk_cage *c = proxy_cage(s->ctx, &s->who);

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
	return hold(s, c, o, cb);
}
