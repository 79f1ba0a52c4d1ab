/*
 * gk_ctljson: the control protocol's replies, as json-c objects: a
 * cage, its allowlist, the daemon's counters.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_traffic.h"
#include "gatekeeper/faces/gk_ctljson.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/state/gk_stats.h"

struct json_object *
gk_ctl_allow_json(const struct gk_allowlist *al)
{
	struct json_object *a = json_object_new_array();
	char text[GK_PATTERN_MAX + 16];
	size_t i;

	for (i = 0; i < gk_allowlist_len(al); i++) {
		gk_pattern_format(gk_allowlist_at(al, i), text, sizeof(text));
		json_object_array_add(a, json_object_new_string(text));
	}
	return a;
}

static struct json_object *
cage_base(const struct gk_cage *c)
{
	struct json_object *o = json_object_new_object();
	char addr[GK_ADDR_STRLEN];

	json_object_object_add(o, "id", json_object_new_string(gk_cage_id(c)));
	json_object_object_add(o, "label",
	    json_object_new_string(gk_cage_label(c)));
	json_object_object_add(o, "source", json_object_new_string(
	    gk_addr_ntop(gk_cage_source(c), addr, sizeof(addr))));
	json_object_object_add(o, "uid", json_object_new_int64(gk_cage_uid(c)));
	json_object_object_add(o, "allow", gk_ctl_allow_json(gk_cage_allow(c)));
	return o;
}

static struct json_object *
u64_json(uint64_t v)
{
	return json_object_new_uint64(v);
}

struct json_object *
gk_ctl_cage_json(const struct gk_cage *c, bool full)
{
	struct json_object *o = cage_base(c), *d;
	time_t created = gk_cage_created(c);
	char ts[32];
	struct tm tm;
	int k;

	if (!full)
		return o;
	gmtime_r(&created, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(o, "created", json_object_new_string(ts));
	json_object_object_add(o, "pins", u64_json(gk_cage_pin_count(c)));
	json_object_object_add(o, "dns_queries",
	    u64_json(gk_cage_counted(c, GK_TALLY_DNS_QUERY, 0)));
	json_object_object_add(o, "connections",
	    u64_json(gk_cage_counted(c, GK_TALLY_CONNECTION, 0)));
	d = json_object_new_object();
	for (k = 0; k < GK_KIND__MAX; k++)
		json_object_object_add(d, gk_deny_kind_name(k),
		    u64_json(gk_cage_counted(c, GK_TALLY_DENIED, k)));
	json_object_object_add(o, "denied", d);
	if (gk_cage_asks(c))
		json_object_object_add(o, "questions",
		    u64_json(gk_ask_open(c)));
	return o;
}

static void
pin_json(const char *name, const struct gk_addr *a, time_t expires,
    void *arg)
{
	struct json_object *o = json_object_new_object();
	char addr[GK_ADDR_STRLEN];
	time_t now = gk_now();

	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "addr", json_object_new_string(
	    gk_addr_ntop(a, addr, sizeof(addr))));
	json_object_object_add(o, "expires_in", json_object_new_int64(
	    expires > now ? (int64_t)(expires - now) : 0));
	json_object_array_add(arg, o);
}

struct q_arg {
	const struct gk_cage	*c;
	struct json_object	*arr;
};

static void
question_json(const struct gk_ask_info *q, void *arg)
{
	struct q_arg *qa = arg;
	struct json_object *o = json_object_new_object();
	char id[24];

	snprintf(id, sizeof(id), "%llu", (unsigned long long)q->id);
	json_object_object_add(o, "cage",
	    json_object_new_string(gk_cage_id(qa->c)));
	json_object_object_add(o, "label",
	    json_object_new_string(gk_cage_label(qa->c)));
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "host", json_object_new_string(q->host));
	json_object_object_add(o, "port", json_object_new_int(q->port));
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(q->kind)));
	json_object_object_add(o, "age", u64_json(q->age_ms / 1000));
	json_object_object_add(o, "expires_in",
	    u64_json((q->left_ms + 999) / 1000));
	json_object_object_add(o, "connections", u64_json(q->held));
	json_object_array_add(qa->arr, o);
}

void
gk_ctl_questions_json(const struct gk_cage *c, struct json_object *arr)
{
	struct q_arg qa = { c, arr };

	gk_ask_foreach(c, question_json, &qa);
}

struct json_object *
gk_ctl_cage_show_json(const struct gk_cage *c)
{
	struct json_object *o = gk_ctl_cage_json(c, true), *a;

	a = json_object_new_array();
	gk_cage_pin_foreach(c, gk_now(), pin_json, a);
	json_object_object_add(o, "pinned", a);
	a = json_object_new_array();
	gk_events_recent_json(c, a);
	json_object_object_add(o, "recent", a);
	if (gk_cage_asks(c)) {
		a = json_object_new_array();
		gk_ctl_questions_json(c, a);
		json_object_object_add(o, "pending", a);
	}
	if ((a = gk_cred_json(c)) != NULL)	/* names and hosts only */
		json_object_object_add(o, "credentials", a);
	json_object_object_add(o, "traffic", gk_traffic_json(c));
	if ((a = gk_budget_json(c)) != NULL)
		json_object_object_add(o, "upload", a);
	return o;
}

struct json_object *
gk_ctl_stats_json(const struct gk_stats *s, size_t ncages)
{
	struct json_object *o = json_object_new_object(), *a, *b;
	int i, j;

	a = json_object_new_object();
	for (i = 0; i < GK_DNSV__MAX; i++)
		json_object_object_add(a, gk_dns_verdict_name(i),
		    u64_json(s->dns_queries[i]));
	json_object_object_add(o, "dns_queries", a);
	json_object_object_add(o, "dns_cache_hits",
	    u64_json(s->dns_cache_hits));
	json_object_object_add(o, "dns_cache_misses",
	    u64_json(s->dns_cache_misses));
	json_object_object_add(o, "dns_upstream_errors",
	    u64_json(s->dns_upstream_errors));
	a = json_object_new_object();
	for (i = 0; i < GK_PROTO__MAX; i++) {
		b = json_object_new_object();
		for (j = 0; j < GK_CONNV__MAX; j++)
			json_object_object_add(b, gk_conn_verdict_name(j),
			    u64_json(s->connections[i][j]));
		json_object_object_add(a, gk_proto_name(i), b);
	}
	json_object_object_add(o, "connections", a);
	a = json_object_new_object();
	for (i = 0; i < GK_KIND__MAX; i++) {
		b = json_object_new_object();
		for (j = 0; j < GK_REASON__MAX; j++)
			json_object_object_add(b, gk_deny_reason_name(j),
			    u64_json(s->denied[i][j]));
		json_object_object_add(a, gk_deny_kind_name(i), b);
	}
	json_object_object_add(o, "denied", a);
	a = json_object_new_object();
	for (i = 0; i < GK_DIR__MAX; i++)
		json_object_object_add(a, gk_direction_name(i),
		    u64_json(s->bytes[i]));
	json_object_object_add(o, "bytes", a);
	json_object_object_add(o, "active_tunnels",
	    u64_json(s->active_tunnels));
	json_object_object_add(o, "cages_created",
	    u64_json(s->cages_created));
	json_object_object_add(o, "cages", u64_json(ncages));
	return o;
}
