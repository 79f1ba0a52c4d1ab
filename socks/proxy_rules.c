/*
 * proxy_rules: request rules on the proxies' paths (gk_policy.h): a host
 * that a pattern with a path covers is inspected, and each request to it
 * (a brokered TLS connection's, or a plain-HTTP one's) must match a rule
 * of that host by method and path; else it is refused as request_rule,
 * its why naming the method, the path and the closest rule. A learning
 * cage's requests there are learned (gk_learn_request), and one no rule
 * allows goes through when a rule could be learned from it.
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_learn.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

/* The request line's method and target, from a head's first line. */
static bool
request_line(const uint8_t *head, size_t len, const char **m, size_t *ml,
    const char **tg, size_t *tl)
{
	const uint8_t *end, *sp1, *sp2;

	if ((end = memchr(head, '\n', len)) == NULL ||
	    (sp1 = memchr(head, ' ', (size_t)(end - head))) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL)
		return false;
	*m = (const char *)head;
	*ml = (size_t)(sp1 - head);
	*tg = (const char *)sp1 + 1;
	*tl = (size_t)(sp2 - sp1 - 1);
	return true;
}

bool
proxy_rules_ok(const struct gk_cage *c, const struct gk_host *t,
    const uint8_t *head, size_t len, const struct http_follow_out *fo,
    struct proxy_outcome *o)
{
	const struct gk_allowlist *al = gk_cage_allow(c);
	const char *name = t->name, *m, *tg;
	size_t ml, tl;
	char why[PROXY_WHY_MAX - 64];

	if (t->is_addr) {	/* the Host names it (checked: pinned) */
		if (fo == NULL || fo->st != HTTP_OK || fo->host.host.is_addr)
			return true;	/* no name: no rule can cover it */
		name = fo->host.host.name;
	}
	if (!gk_allow_inspects(al, name, strlen(name), t->port))
		return true;
	if (!request_line(head, len, &m, &ml, &tg, &tl)) {
		proxy_outcome_deny(o, GK_REASON_REQUEST_RULE, "a request to "
		    "%s whose request line cannot be read", name);
		return false;
	}
	if (gk_allow_request(al, name, strlen(name), t->port, m, ml, tg, tl,
	    why, sizeof(why))) {
		(void)gk_learn_request(c, name, t->port, m, ml, tg, tl, true);
		return true;
	}
	/* a learning cage: let through what a rule could allow */
	if (gk_learn_request(c, name, t->port, m, ml, tg, tl, false))
		return true;
	/* why names the method, the path (escaped) and the closest rule */
	proxy_outcome_deny(o, GK_REASON_REQUEST_RULE, "%s (on %s)", why, name);
	return false;
}
