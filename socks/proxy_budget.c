/*
 * proxy_budget: upload budgets (gk_budget.h) at the proxies. A spent
 * budget refuses a new connection to its hosts; a tunnel's relay (or
 * broker) asks here for the bytes it sends, and a refusal cuts it: the
 * cut is a denial (upload_budget) told to the owner and audited, with
 * the budget's figures. At its end a tunnel gives back what it reserved
 * and did not send.
 */
#include <string.h>

#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

bool
proxy_budget_ok(const struct gk_cage *c, const struct gk_host *t,
    struct proxy_outcome *o)
{
	char why[PROXY_WHY_MAX];

	if (!gk_budget_spent(c, t->name, t->port, why, sizeof(why)))
		return true;
	return proxy_outcome_deny(o, GK_REASON_UPLOAD_BUDGET, "%s", why);
}

bool
proxy_budget_applies(const struct proxy_conn *s)
{
	return gk_budget_covers(proxy_cage(s->ctx, &s->who), s->t.name,
	    s->t.port);
}

uint64_t
proxy_budget_quota(void *arg)
{
	struct proxy_conn *s = arg;
	struct gk_cage *c = proxy_cage(s->ctx, &s->who);
	struct proxy_outcome o;
	char why[PROXY_WHY_MAX];
	uint64_t g;

	if (c == NULL)
		return 0;	/* its cage is gone: so is the tunnel */
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	g = gk_budget_take(c, s->t.name, s->t.port, &s->budget_mask, why,
	    sizeof(why));
	if (g > 0) {
		s->granted += g;
		return g;
	}
	proxy_outcome_deny(&o, GK_REASON_UPLOAD_BUDGET, "%s; the tunnel was "
	    "cut", why);
	if (s->decided)
		proxy_deny_count(s->ctx, &s->who, &s->t, &o);
	else
		proxy_deny_record(s->ctx, &s->who, &s->t, &o);
	s->decided = true;
	return 0;
}

void
proxy_budget_end(struct proxy_conn *s)
{
	if (s->budget_mask != 0 && s->granted > s->up)
		gk_budget_give(proxy_cage(s->ctx, &s->who), s->budget_mask,
		    s->granted - s->up);
	s->budget_mask = 0;
	s->granted = 0;
}
