/*
 * gk_stats: global counters and label names.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/state/gk_stats.h"

struct gk_stats gk_stats;

#define NAME_OF(table, v)						\
	((size_t)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : "unknown")

/* 100 us to 10 s: a cached answer is microseconds, an upstream one
 * milliseconds, a dead upstream seconds. */
const uint64_t gk_hist_bounds_us[GK_HIST_BOUNDS] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	250000, 1000000, 2500000, 10000000,
};

void
gk_hist_observe(struct gk_hist *h, uint64_t us)
{
	size_t i;

	for (i = 0; i < GK_HIST_BOUNDS && us > gk_hist_bounds_us[i]; i++)
		;
	h->le[i]++;
	h->count++;
	h->sum_us += us;
}

void
gk_stats_label_denied(const char *label, enum gk_deny_kind k)
{
	struct gk_label_series *ls;
	size_t i;

	if ((size_t)k >= GK_KIND__MAX)
		return;
	for (i = 0; i < gk_stats.nlabels; i++) {
		if (strcmp(gk_stats.labels[i].label, label) == 0) {
			gk_stats.labels[i].denied[k]++;
			return;
		}
	}
	if (gk_stats.nlabels == GK_LABEL_SERIES_MAX ||
	    strlen(label) > GK_CAGE_LABEL_MAX) {
		gk_stats.label_other[k]++;
		return;
	}
	ls = &gk_stats.labels[gk_stats.nlabels++];
	snprintf(ls->label, sizeof(ls->label), "%s", label);
	ls->denied[k]++;
}

void
gk_stats_host_tunnel(const char *host, uint64_t up, uint64_t down)
{
	struct gk_host_series *hs = &gk_stats.host_other;
	size_t i;

	for (i = 0; i < gk_stats.nhosts && hs == &gk_stats.host_other; i++)
		if (strcmp(gk_stats.hosts[i].host, host) == 0)
			hs = &gk_stats.hosts[i];
	if (hs == &gk_stats.host_other &&
	    gk_stats.nhosts < GK_HOST_SERIES_MAX &&
	    strlen(host) < sizeof(hs->host)) {
		hs = &gk_stats.hosts[gk_stats.nhosts++];
		snprintf(hs->host, sizeof(hs->host), "%s", host);
	}
	hs->bytes[GK_DIR_UPSTREAM] += up;
	hs->bytes[GK_DIR_DOWNSTREAM] += down;
	hs->connections++;
}

const char *
gk_dns_verdict_name(enum gk_dns_verdict v)
{
	static const char *names[GK_DNSV__MAX] = {
		"allowed", "denied", "refused", "filtered", "malformed",
		"notimp", "placeholder",
	};
	return NAME_OF(names, v);
}

const char *
gk_proto_name(enum gk_proto p)
{
	static const char *names[GK_PROTO__MAX] = {
		"dns", "socks5", "http", "transparent",
	};
	return NAME_OF(names, p);
}

const char *
gk_conn_verdict_name(enum gk_conn_verdict v)
{
	static const char *names[GK_CONNV__MAX] = {
		"allowed", "denied", "failed",
	};
	return NAME_OF(names, v);
}

const char *
gk_deny_kind_name(enum gk_deny_kind k)
{
	static const char *names[GK_KIND__MAX] = {
		"dns", "socks5", "http", "transparent",
	};
	return NAME_OF(names, k);
}

const char *
gk_deny_reason_name(enum gk_deny_reason r)
{
	static const char *names[GK_REASON__MAX] = {
		"not_allowlisted", "unknown_source", "ip_not_pinned",
		"special_range", "sni_mismatch", "no_sni", "host_mismatch",
		"unsupported_command", "malformed", "host_policy",
		"credential_leak", "request_rule", "upload_budget",
	};
	return NAME_OF(names, r);
}

const char *
gk_direction_name(enum gk_direction d)
{
	static const char *names[GK_DIR__MAX] = { "upstream", "downstream" };
	return NAME_OF(names, d);
}

const char *
gk_limit_kind_name(enum gk_limit_kind l)
{
	static const char *names[GK_LIM__MAX] = {
		"dns_rate", "dns_upstream", "dns_upstream_rate", "dns_tcp",
		"handshakes", "tunnels", "descriptors", "audit", "memory",
		"pids",
	};
	return NAME_OF(names, l);
}
