/*
 * gk_stats: global counters and label names.
 */
#include <stddef.h>

#include "gatekeeper/state/gk_stats.h"

struct gk_stats gk_stats;

#define NAME_OF(table, v)						\
	((size_t)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : "unknown")

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
		"unsupported_command", "malformed",
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
