/*
 * proxy_policy: the rules applied at connect time (the rules for the
 * client's first bytes are proxy_peek.c). Pure decisions over the cage
 * table; counting and the audit line are in proxy_deny_record().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_limit.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

struct gk_cage *
proxy_cage(const struct proxy_ctx *ctx, const struct proxy_who *who)
{
	struct gk_cage *c = gk_cage_by_source(ctx->cages, &who->source);

	if (c == NULL || strcmp(gk_cage_id(c), who->id) != 0)
		return NULL;
	return c;
}

bool
proxy_outcome_deny(struct proxy_outcome *o, enum gk_deny_reason r,
    const char *fmt, ...)
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
		if (gk_cage_allows_name(c, names[i], strlen(names[i]), port))
			return names[i];
	return NULL;
}

void
proxy_target_label(const struct gk_cage *c, struct gk_host *t)
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

/* An address in a special range: what it is, by its address (not the
 * name a pin gave it). */
static bool
deny_special(struct proxy_outcome *o, const struct gk_addr *a,
    enum gk_special sp)
{
	char at[GK_ADDR_STRLEN];

	return proxy_outcome_deny(o, GK_REASON_SPECIAL_RANGE, "%s is %s; only "
	    "a CIDR pattern naming it allows it", gk_addr_ntop(a, at,
	    sizeof(at)), gk_special_what(sp));
}

void
proxy_special_why(struct proxy_outcome *o, const char *name,
    const struct gk_addr *a, enum gk_special sp)
{
	char at[GK_ADDR_STRLEN];

	snprintf(o->why, sizeof(o->why), "%s resolves only to special "
	    "addresses: %s is %s; only a CIDR pattern naming it allows that",
	    name, gk_addr_ntop(a, at, sizeof(at)), gk_special_what(sp));
}

static bool
policy_allows(const struct proxy_ctx *ctx, const struct gk_cage *c,
    const struct gk_host *t, struct proxy_outcome *o)
{
	const struct gk_hostpolicy *hp;
	char why[PROXY_WHY_MAX];
	const char *first;
	enum gk_special sp;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!t->is_addr && proxy_leak(c, (const uint8_t *)t->name,
	    strlen(t->name), "the target's name", o))
		return false;
	hp = gk_cage_policy(c);
	if (!t->is_addr && gk_hostpolicy_denies_name(hp, t->name,
	    strlen(t->name), t->port))
		return proxy_outcome_deny(o, GK_REASON_HOST_POLICY, "the host "
		    "policy (version %s) denies %s:%u for every cage",
		    hp->version, t->name, t->port);
	if (t->is_addr && gk_hostpolicy_denies_addr(hp, &t->addr, t->port))
		return proxy_outcome_deny(o, GK_REASON_HOST_POLICY, "the host "
		    "policy (version %s) denies %s:%u for every cage",
		    hp->version, t->name, t->port);
	if (!t->is_addr) {
		if (gk_cage_allows_name(c, t->name, strlen(t->name), t->port))
			return true;
		gk_allow_explain(gk_cage_allow(c), t->name, strlen(t->name),
		    t->port,
		    why, sizeof(why));
		return proxy_outcome_deny(o, GK_REASON_NOT_ALLOWLISTED, "%s",
		    why);
	}
	sp = gk_special_classify(&t->addr, ctx->host);
	if (sp != GK_SPECIAL_NONE &&
	    !gk_allow_addr_cidr(gk_cage_allow(c), &t->addr))
		return deny_special(o, &t->addr, sp);
	if (gk_allow_addr(gk_cage_allow(c), &t->addr, t->port))
		return true;
	if (gk_allow_addr_cidr(gk_cage_allow(c), &t->addr))
		return proxy_outcome_deny(o, GK_REASON_NOT_ALLOWLISTED, "a "
		    "CIDR pattern covers %s, but not on port %u", t->name,
		    t->port);
	if (pin_name(c, &t->addr, t->port, &first) != NULL)
		return true;
	if (first != NULL)		/* pinned, but not for this port */
		return proxy_outcome_deny(o, GK_REASON_NOT_ALLOWLISTED, "%s "
		    "was resolved by this cage, but no pattern allows its "
		    "names on port %u", t->name, t->port);
	return proxy_outcome_deny(o, GK_REASON_IP_NOT_PINNED, "%s is not "
	    "allowed by a CIDR pattern and this cage's DNS answers did not "
	    "lead to it; connect by name", t->name);
}

/* The policy's word, then the cage's upload budgets'. */
bool
proxy_allowed(const struct proxy_ctx *ctx, const struct gk_cage *c,
    const struct gk_host *t, struct proxy_outcome *o)
{
	return policy_allows(ctx, c, t, o) && proxy_budget_ok(c, t, o);
}

void
proxy_deny_record(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, const struct proxy_outcome *o)
{
	gk_stats.connections[who->proto][GK_CONNV_DENIED]++;
	proxy_deny_count(ctx, who, t, o);
}

void
proxy_deny_count(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, const struct proxy_outcome *o)
{
	char src[GK_ADDR_STRLEN];
	struct gk_cage *c = proxy_cage(ctx, who);
	struct gk_host red;
	json_object *d;

	if (o->reason == GK_REASON_CREDENTIAL_LEAK) {
		/* its name may carry a placeholder's bytes: never logged */
		red = *t;
		gk_cred_redact(c, t->name, red.name, sizeof(red.name));
		t = &red;
	}
	gk_stats.denied[who->kind][o->reason]++;
	if (c != NULL)
		gk_cage_count(c, GK_TALLY_DENIED, who->kind);
	gk_events_deny(c, who->kind, t->name, t->port, o->reason, o->why);
	/* a flood of denials: its lines within the cage's audit budget */
	if (!gk_limit_audit_ok(c, "proxy.deny", t->name))
		return;
	gk_addr_ntop(&who->source, src, sizeof(src));
	log_info("conn=%llu cage=%s proto=%s client=%s host=%s port=%u "
	    "action=deny reason=%s", (unsigned long long)who->conn,
	    c != NULL ? gk_cage_id(c) : "-", gk_proto_name(who->proto), src,
	    t->name,
	    t->port, gk_deny_reason_name(o->reason));
	if (ctx->audit == NULL)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "conn", json_object_new_int64(
	    (int64_t)who->conn));
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
	if (o->seen[0] != '\0' && o->reason != GK_REASON_CREDENTIAL_LEAK)
		json_object_object_add(d, "seen",
		    json_object_new_string(o->seen));
	if (o->reason == GK_REASON_CREDENTIAL_LEAK && o->credential != NULL)
		json_object_object_add(d, "credential",
		    json_object_new_string(o->credential));
	gk_audit_event(ctx->audit, "proxy.deny", c, d);
}

const char *
proxy_reason_phrase(enum gk_deny_reason r)
{
	switch (r) {
	case GK_REASON_NOT_ALLOWLISTED:
		return "is not on the allowlist";
	case GK_REASON_UNKNOWN_SOURCE:
		return "(no cage has this source address)";
	case GK_REASON_IP_NOT_PINNED:
		return "is an address no allowed name resolved to";
	case GK_REASON_SPECIAL_RANGE:
		return "is in a special range, never allowed";
	case GK_REASON_SNI_MISMATCH:
		return "(the TLS server name differs)";
	case GK_REASON_NO_SNI:
		return "(TLS without a server name)";
	case GK_REASON_HOST_MISMATCH:
		return "(the Host header differs)";
	case GK_REASON_UNSUPPORTED_COMMAND:
		return "(unsupported request)";
	case GK_REASON_MALFORMED:
		return "(first bytes that cannot be checked)";
	case GK_REASON_HOST_POLICY:
		return "is denied by the host policy";
	case GK_REASON_CREDENTIAL_LEAK:
		return "(a credential's placeholder where it does not belong)";
	case GK_REASON_REQUEST_RULE:
		return "(no request rule of the host allows the request)";
	case GK_REASON_UPLOAD_BUDGET:
		return "(an upload budget is spent)";
	case GK_REASON__MAX:
		break;
	}
	return "denied";
}

void
proxy_allow_sample(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, const char *why, uint64_t up, uint64_t down)
{
	struct gk_cage *c;
	json_object *d;

	if (strcmp(why, "denied") == 0 || !gk_audit_allowed_take(ctx->audit))
		return;
	c = proxy_cage(ctx, who);
	if (!gk_limit_audit_ok(c, "conn.allow", t->name))
		return;
	d = json_object_new_object();
	if (c == NULL)		/* ended with its cage: the id only */
		json_object_object_add(d, "cage",
		    json_object_new_string(who->id));
	json_object_object_add(d, "conn", json_object_new_int64(
	    (int64_t)who->conn));
	json_object_object_add(d, "proto",
	    json_object_new_string(gk_proto_name(who->proto)));
	json_object_object_add(d, "host", json_object_new_string(t->name));
	json_object_object_add(d, "port", json_object_new_int(t->port));
	json_object_object_add(d, "reason", json_object_new_string(why));
	json_object_object_add(d, "up", json_object_new_int64((int64_t)up));
	json_object_object_add(d, "down", json_object_new_int64(
	    (int64_t)down));
	json_object_object_add(d, "ms", json_object_new_int64((int64_t)
	    (gk_clock_ms() - who->start_ms)));
	gk_audit_event(ctx->audit, "conn.allow", c, d);
}

const char *
proxy_strresult(enum proxy_result r)
{
	static const char *names[] = { "connected", "denied", "unreachable",
	    "refused", "timeout", "gone", "error" };

	return (size_t)r < sizeof(names) / sizeof(names[0]) ? names[r] :
	    "unknown";
}
