/*
 * gk_stats: the daemon's global counters (never reset) and the names of
 * their Prometheus labels. One process, one event loop: plain integers.
 */
#ifndef GK_STATS_H
#define GK_STATS_H

#include <stdint.h>

#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/policy/gk_proto.h"

enum gk_dns_verdict {
	GK_DNSV_ALLOWED,	/* allowed name, answered or forwarded */
	GK_DNSV_DENIED,		/* name not in the cage's allowlist */
	GK_DNSV_REFUSED,	/* source address names no cage */
	GK_DNSV_FILTERED,	/* allowed name, HTTPS/SVCB answered NODATA */
	GK_DNSV_MALFORMED,	/* FORMERR */
	GK_DNSV_NOTIMP,		/* opcode other than QUERY */
	GK_DNSV_PLACEHOLDER,	/* an asking cage's unlisted name: a
				   placeholder address, nothing upstream */
	GK_DNSV__MAX
};

enum gk_proto {
	GK_PROTO_DNS,
	GK_PROTO_SOCKS,
	GK_PROTO_HTTP,
	GK_PROTO_TRANSPARENT,
	GK_PROTO__MAX
};

enum gk_conn_verdict {
	GK_CONNV_ALLOWED,
	GK_CONNV_DENIED,
	GK_CONNV_FAILED,	/* allowed, but upstream failed */
	GK_CONNV__MAX
};

/* Where a deny happened: the "kind" label. */
enum gk_deny_kind {
	GK_KIND_DNS,
	GK_KIND_SOCKS,
	GK_KIND_HTTP,
	GK_KIND_TRANSPARENT,
	GK_KIND__MAX
};

enum gk_deny_reason {
	GK_REASON_NOT_ALLOWLISTED,
	GK_REASON_UNKNOWN_SOURCE,
	GK_REASON_IP_NOT_PINNED,
	GK_REASON_SPECIAL_RANGE,
	GK_REASON_SNI_MISMATCH,
	GK_REASON_NO_SNI,
	GK_REASON_HOST_MISMATCH,
	GK_REASON_UNSUPPORTED_COMMAND,
	GK_REASON_MALFORMED,	/* first bytes no parser can vouch for */
	GK_REASON_HOST_POLICY,	/* the host policy denies it, or it is
				   outside the policy's bound */
	GK_REASON_CREDENTIAL_LEAK, /* a credential's placeholder where it
				   does not belong (gk_cred.h) */
	GK_REASON_REQUEST_RULE,	/* an inspected host's request no rule
				   of its allows (method, path) */
	GK_REASON_UPLOAD_BUDGET, /* the cage sent what an upload budget
				   allows (gk_budget.h) */
	GK_REASON__MAX
};

enum gk_direction {
	GK_DIR_UPSTREAM,	/* cage -> world */
	GK_DIR_DOWNSTREAM,	/* world -> cage */
	GK_DIR__MAX
};

/* A per-cage budget that refused something: the "limit" label. */
enum gk_limit_kind {
	GK_LIM_DNS_RATE,	/* DNS queries per second */
	GK_LIM_DNS_UPSTREAM,	/* queries waiting on the upstream */
	GK_LIM_DNS_UPSTREAM_RATE, /* uncached names asked upstream per second */
	GK_LIM_DNS_TCP,		/* DNS-over-TCP connections */
	GK_LIM_HANDSHAKES,	/* proxy connections before their tunnel */
	GK_LIM_TUNNELS,		/* open tunnels */
	GK_LIM_DESCRIPTORS,	/* its share of the daemon's descriptors */
	GK_LIM_AUDIT,		/* audit lines per second */
	GK_LIM_MEMORY,		/* processes its memory limit killed */
	GK_LIM_PIDS,		/* forks its pids limit refused */
	GK_LIM__MAX
};

/*
 * A latency histogram (Prometheus's: cumulative buckets at render): how
 * many observations fell at or below each bound of gk_hist_bounds_us,
 * the rest in the last slot (+Inf), their count and sum.
 */
#define GK_HIST_BOUNDS	14
struct gk_hist {
	uint64_t	le[GK_HIST_BOUNDS + 1];	/* not cumulative */
	uint64_t	count;
	uint64_t	sum_us;
};
extern const uint64_t gk_hist_bounds_us[GK_HIST_BOUNDS];

void		 gk_hist_observe(struct gk_hist *h, uint64_t us);
/* A cage labelled `label` had a denial of kind k. */
void		 gk_stats_label_denied(const char *label, enum gk_deny_kind k);
/* A tunnel to host ended, having moved up bytes upstream and down
 * downstream. */
void		 gk_stats_host_tunnel(const char *host, uint64_t up,
		    uint64_t down);

/*
 * Denials by cage label (gatekeeper_label_denied_total{label,kind}):
 * series that outlive their cages and do not churn with cage ids. The
 * first GK_LABEL_SERIES_MAX distinct labels get a series each; later ones
 * are folded into one, labelled GK_LABEL_OTHER.
 */
#define GK_LABEL_SERIES_MAX	64
#define GK_LABEL_OTHER		"_other"
struct gk_label_series {
	char		label[GK_CAGE_LABEL_MAX + 1];
	uint64_t	denied[GK_KIND__MAX];
};

/*
 * Traffic by destination host (gatekeeper_host_bytes_total{host,
 * direction}, gatekeeper_host_connections_total{host}): each tunnel's
 * bytes added to its host as it ends. As with labels, the first
 * GK_HOST_SERIES_MAX distinct hosts get a series each, kept for the
 * daemon's life; later ones are folded into one labelled GK_LABEL_OTHER.
 */
#define GK_HOST_SERIES_MAX	64
struct gk_host_series {
	char		host[GK_NAME_MAX + 1];
	uint64_t	bytes[GK_DIR__MAX];
	uint64_t	connections;
};

struct gk_stats {
	uint64_t	dns_queries[GK_DNSV__MAX];
	uint64_t	dns_cache_hits;
	uint64_t	dns_cache_misses;
	uint64_t	dns_upstream_errors;
	uint64_t	connections[GK_PROTO__MAX][GK_CONNV__MAX];
	uint64_t	denied[GK_KIND__MAX][GK_REASON__MAX];
	uint64_t	bytes[GK_DIR__MAX];
	uint64_t	active_tunnels;
	uint64_t	tls_ech;		/* ClientHellos with ECH */
	uint64_t	cages_created;
	uint64_t	limit_events[GK_LIM__MAX];
	uint64_t	asks[GK_DECISION__MAX];	/* questions, by outcome */
	/* from a query's arrival to its answer, by verdict */
	struct gk_hist	dns_answer[GK_DNSV__MAX];
	/* from connect(2) to an upstream connection established */
	struct gk_hist	upstream_connect;
	struct gk_label_series labels[GK_LABEL_SERIES_MAX];
	size_t		nlabels;
	uint64_t	label_other[GK_KIND__MAX];
	struct gk_host_series hosts[GK_HOST_SERIES_MAX];
	size_t		nhosts;
	struct gk_host_series host_other;
};

extern struct gk_stats gk_stats;

const char	*gk_dns_verdict_name(enum gk_dns_verdict v);
const char	*gk_proto_name(enum gk_proto p);
const char	*gk_conn_verdict_name(enum gk_conn_verdict v);
const char	*gk_deny_kind_name(enum gk_deny_kind k);
const char	*gk_deny_reason_name(enum gk_deny_reason r);
const char	*gk_direction_name(enum gk_direction d);
const char	*gk_limit_kind_name(enum gk_limit_kind l);

#endif /* GK_STATS_H */
