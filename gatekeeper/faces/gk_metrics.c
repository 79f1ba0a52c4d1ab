/*
 * gk_metrics: the names and labels of DESIGN.md, "Metrics". Global
 * counters never reset; per-cage series exist exactly while the cage does.
 */
#include <sys/resource.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "config.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/faces/gk_metrics.h"
#include "gatekeeper/state/gk_stats.h"

struct gk_metrics {
	struct evhttp			*http;
	const struct gk_cage_table	*cages;
};

static void
head(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

static void
render_dns(struct evbuffer *b)
{
	int v;

	head(b, "gatekeeper_dns_queries_total", "counter",
	    "DNS queries by verdict.");
	for (v = 0; v < GK_DNSV__MAX; v++)
		evbuffer_add_printf(b,
		    "gatekeeper_dns_queries_total{verdict=\"%s\"} %llu\n",
		    gk_dns_verdict_name(v),
		    (unsigned long long)gk_stats.dns_queries[v]);
	head(b, "gatekeeper_dns_cache_hits_total", "counter",
	    "DNS answers served from the cache.");
	evbuffer_add_printf(b, "gatekeeper_dns_cache_hits_total %llu\n",
	    (unsigned long long)gk_stats.dns_cache_hits);
	head(b, "gatekeeper_dns_cache_misses_total", "counter",
	    "Allowed DNS queries not in the cache.");
	evbuffer_add_printf(b, "gatekeeper_dns_cache_misses_total %llu\n",
	    (unsigned long long)gk_stats.dns_cache_misses);
	head(b, "gatekeeper_dns_upstream_errors_total", "counter",
	    "Upstream DNS timeouts and failures (answered SERVFAIL).");
	evbuffer_add_printf(b, "gatekeeper_dns_upstream_errors_total %llu\n",
	    (unsigned long long)gk_stats.dns_upstream_errors);
}

static void
render_conns(struct evbuffer *b)
{
	int p, v, k, r;

	head(b, "gatekeeper_connections_total", "counter",
	    "Proxied connections by protocol and verdict.");
	for (p = GK_PROTO_SOCKS; p < GK_PROTO__MAX; p++)
		for (v = 0; v < GK_CONNV__MAX; v++)
			evbuffer_add_printf(b, "gatekeeper_connections_total"
			    "{proto=\"%s\",verdict=\"%s\"} %llu\n",
			    gk_proto_name(p), gk_conn_verdict_name(v),
			    (unsigned long long)gk_stats.connections[p][v]);
	head(b, "gatekeeper_denied_total", "counter",
	    "Denials by kind and reason; never reset.");
	for (k = 0; k < GK_KIND__MAX; k++)
		for (r = 0; r < GK_REASON__MAX; r++)
			evbuffer_add_printf(b, "gatekeeper_denied_total"
			    "{kind=\"%s\",reason=\"%s\"} %llu\n",
			    gk_deny_kind_name(k), gk_deny_reason_name(r),
			    (unsigned long long)gk_stats.denied[k][r]);
	head(b, "gatekeeper_bytes_total", "counter",
	    "Bytes relayed by direction.");
	for (k = 0; k < GK_DIR__MAX; k++)
		evbuffer_add_printf(b,
		    "gatekeeper_bytes_total{direction=\"%s\"} %llu\n",
		    gk_direction_name(k),
		    (unsigned long long)gk_stats.bytes[k]);
	head(b, "gatekeeper_tls_ech_total", "counter",
	    "TLS ClientHellos carrying an Encrypted Client Hello extension "
	    "(checked by their outer server name).");
	evbuffer_add_printf(b, "gatekeeper_tls_ech_total %llu\n",
	    (unsigned long long)gk_stats.tls_ech);
	head(b, "gatekeeper_active_tunnels", "gauge",
	    "Tunnels open now.");
	evbuffer_add_printf(b, "gatekeeper_active_tunnels %llu\n",
	    (unsigned long long)gk_stats.active_tunnels);
}

/* One histogram's series; labels "" or `verdict="allowed",`-style. */
static void
render_hist(struct evbuffer *b, const char *name, const char *labels,
    const struct gk_hist *h)
{
	const char *sep = labels[0] != '\0' ? "," : "";
	uint64_t cum = 0;
	size_t i;

	for (i = 0; i < GK_HIST_BOUNDS; i++) {
		cum += h->le[i];
		evbuffer_add_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name,
		    labels, sep, (double)gk_hist_bounds_us[i] / 1e6,
		    (unsigned long long)cum);
	}
	cum += h->le[GK_HIST_BOUNDS];
	evbuffer_add_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name,
	    labels, sep, (unsigned long long)cum);
	evbuffer_add_printf(b, "%s_sum%s%s%s %.6f\n", name,
	    labels[0] != '\0' ? "{" : "", labels, labels[0] != '\0' ? "}" : "",
	    (double)h->sum_us / 1e6);
	evbuffer_add_printf(b, "%s_count%s%s%s %llu\n", name,
	    labels[0] != '\0' ? "{" : "", labels, labels[0] != '\0' ? "}" : "",
	    (unsigned long long)h->count);
}

static void
render_latency(struct evbuffer *b)
{
	char labels[64];
	int v;

	head(b, "gatekeeper_dns_answer_seconds", "histogram",
	    "Time from a cage's DNS query to its answer, by verdict (asked "
	    "upstream: until the upstream's answer is sent on).");
	for (v = 0; v < GK_DNSV__MAX; v++) {
		snprintf(labels, sizeof(labels), "verdict=\"%s\"",
		    gk_dns_verdict_name(v));
		render_hist(b, "gatekeeper_dns_answer_seconds", labels,
		    &gk_stats.dns_answer[v]);
	}
	head(b, "gatekeeper_upstream_connect_seconds", "histogram",
	    "Time from connect(2) to an established upstream connection, "
	    "for the proxies' dials that succeeded.");
	render_hist(b, "gatekeeper_upstream_connect_seconds", "",
	    &gk_stats.upstream_connect);
}

static void
render_asks(struct evbuffer *b)
{
	int d;

	head(b, "gatekeeper_asks_total", "counter",
	    "Questions asking cages put to their owners (one per host and "
	    "port, however many connections waited on it), by outcome.");
	for (d = 0; d < GK_DECISION__MAX; d++)
		evbuffer_add_printf(b, "gatekeeper_asks_total{decision=\"%s\"} "
		    "%llu\n", gk_decision_name(d),
		    (unsigned long long)gk_stats.asks[d]);
}

static void
render_limits(struct evbuffer *b)
{
	int l;

	head(b, "gatekeeper_cage_limit_events_total", "counter",
	    "Things a per-cage limit refused (a query, a connection, an "
	    "audit line), by limit.");
	for (l = 0; l < GK_LIM__MAX; l++)
		evbuffer_add_printf(b, "gatekeeper_cage_limit_events_total"
		    "{limit=\"%s\"} %llu\n", gk_limit_kind_name(l),
		    (unsigned long long)gk_stats.limit_events[l]);
	head(b, "gatekeeper_descriptors", "gauge",
	    "The daemon's descriptor budget: its limit, the reserve kept "
	    "for the control socket and new cages, and what cages' "
	    "connections hold now.");
	evbuffer_add_printf(b, "gatekeeper_descriptors{state=\"limit\"} %llu\n"
	    "gatekeeper_descriptors{state=\"reserve\"} %llu\n"
	    "gatekeeper_descriptors{state=\"held\"} %llu\n",
	    (unsigned long long)gk_fds.limit,
	    (unsigned long long)gk_fds.reserve,
	    (unsigned long long)gk_fds.held);
}

/* A Prometheus label value: \ and " escaped (labels are printable). */
static void
label_value(struct evbuffer *b, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add(b, "\\", 1);
		evbuffer_add(b, v, 1);
	}
}

static void
label_series(struct evbuffer *b, const char *label, const uint64_t *denied)
{
	int k;

	for (k = 0; k < GK_KIND__MAX; k++) {
		evbuffer_add_printf(b, "gatekeeper_label_denied_total{label=\"");
		label_value(b, label);
		evbuffer_add_printf(b, "\",kind=\"%s\"} %llu\n",
		    gk_deny_kind_name(k), (unsigned long long)denied[k]);
	}
}

/* One host's series: its bytes each way, or its tunnels. */
static void
host_series(struct evbuffer *b, bool bytes, const char *host,
    const struct gk_host_series *hs)
{
	int d;

	for (d = 0; bytes && d < GK_DIR__MAX; d++) {
		evbuffer_add_printf(b, "gatekeeper_host_bytes_total{host=\"");
		label_value(b, host);
		evbuffer_add_printf(b, "\",direction=\"%s\"} %llu\n",
		    gk_direction_name(d), (unsigned long long)hs->bytes[d]);
	}
	if (bytes)
		return;
	evbuffer_add_printf(b, "gatekeeper_host_connections_total{host=\"");
	label_value(b, host);
	evbuffer_add_printf(b, "\"} %llu\n",
	    (unsigned long long)hs->connections);
}

/* Traffic by destination host: the first hosts, then the rest. */
static void
render_hosts(struct evbuffer *b)
{
	size_t i, k;

	head(b, "gatekeeper_host_bytes_total", "counter", "Bytes relayed by "
	    "destination host and direction, added as each tunnel ends (the "
	    "first " GK_STR(GK_HOST_SERIES_MAX) " hosts; later ones under \""
	    GK_LABEL_OTHER "\").");
	for (k = 0; k < 2; k++) {
		if (k == 1)
			head(b, "gatekeeper_host_connections_total", "counter",
			    "Tunnels ended by destination host (the first "
			    GK_STR(GK_HOST_SERIES_MAX) " hosts; later ones "
			    "under \"" GK_LABEL_OTHER "\").");
		for (i = 0; i < gk_stats.nhosts; i++)
			host_series(b, k == 0, gk_stats.hosts[i].host,
			    &gk_stats.hosts[i]);
		host_series(b, k == 0, GK_LABEL_OTHER, &gk_stats.host_other);
	}
}

static int
count_fds(void)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory itself */
}

/* utime, stime, starttime (ticks), vsize, rss (pages) from stat */
static int
read_stat(unsigned long long v[5])
{
	char buf[1024], *p;
	size_t n;
	FILE *f;

	if ((f = fopen("/proc/self/stat", "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* after ")": state(3) ... utime(14) stime(15) ... starttime(22)
	 * vsize(23) rss(24) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	    "%llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %llu",
	    &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		return -1;
	return 0;
}

static double
boot_time(void)
{
	char line[256];
	double bt = 0;
	FILE *f;

	if ((f = fopen("/proc/stat", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "btime %lf", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

static void
render_process(struct evbuffer *b)
{
	unsigned long long st[5];
	double hz = (double)sysconf(_SC_CLK_TCK);
	struct rlimit rl;

	if (read_stat(st) == 0) {
		head(b, "process_cpu_seconds_total", "counter",
		    "Total user and system CPU time spent in seconds.");
		evbuffer_add_printf(b, "process_cpu_seconds_total %.2f\n",
		    (double)(st[0] + st[1]) / hz);
		head(b, "process_start_time_seconds", "gauge",
		    "Start time of the process since unix epoch in seconds.");
		evbuffer_add_printf(b, "process_start_time_seconds %.2f\n",
		    boot_time() + (double)st[2] / hz);
		head(b, "process_virtual_memory_bytes", "gauge",
		    "Virtual memory size in bytes.");
		evbuffer_add_printf(b, "process_virtual_memory_bytes %llu\n",
		    st[3]);
		head(b, "process_resident_memory_bytes", "gauge",
		    "Resident memory size in bytes.");
		evbuffer_add_printf(b, "process_resident_memory_bytes %llu\n",
		    st[4] * (unsigned long long)sysconf(_SC_PAGESIZE));
	}
	head(b, "process_open_fds", "gauge", "Number of open file descriptors.");
	evbuffer_add_printf(b, "process_open_fds %d\n", count_fds());
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		head(b, "process_max_fds", "gauge",
		    "Maximum number of open file descriptors.");
		evbuffer_add_printf(b, "process_max_fds %llu\n",
		    (unsigned long long)rl.rlim_cur);
	}
}

/* The host policy that runs: its version ("none" without one). */
static void
render_policy(struct evbuffer *b, const struct gk_hostpolicy *p)
{
	const char *v = p != NULL ? p->version : "none";

	head(b, "gatekeeper_policy_info", "gauge",
	    "The host policy every cage stays within; the value is always 1.");
	evbuffer_add(b, "gatekeeper_policy_info{version=\"", 32);
	label_value(b, v);
	evbuffer_add(b, "\"} 1\n", 5);
}

void
gk_metrics_render(struct evbuffer *b, const struct gk_cage_table *cages)
{
	size_t i;

	head(b, "gatekeeper_build_info", "gauge",
	    "Build information; the value is always 1.");
	evbuffer_add_printf(b, "gatekeeper_build_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	render_policy(b, gk_cage_table_policy(cages));
	head(b, "gatekeeper_cages", "gauge", "Cages alive now.");
	evbuffer_add_printf(b, "gatekeeper_cages %zu\n",
	    gk_cage_table_count(cages));
	render_dns(b);
	render_conns(b);
	render_latency(b);
	render_asks(b);
	render_limits(b);
	head(b, "gatekeeper_label_denied_total", "counter",
	    "Denials by the label of the cage that had them, by kind: one "
	    "series per label (the first " GK_STR(GK_LABEL_SERIES_MAX) " "
	    "labels; later ones under \"" GK_LABEL_OTHER "\"), kept after "
	    "their cages end.");
	for (i = 0; i < gk_stats.nlabels; i++)
		label_series(b, gk_stats.labels[i].label,
		    gk_stats.labels[i].denied);
	label_series(b, GK_LABEL_OTHER, gk_stats.label_other);
	render_hosts(b);
	render_process(b);
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct gk_metrics *m = arg;
	struct evbuffer *b;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		evhttp_send_error(req, 405, "use GET");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	gk_metrics_render(b, m->cages);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void
other_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, 404, "only /metrics is served here");
}

struct gk_metrics *
gk_metrics_new(struct event_base *base, const struct gk_addr *addr,
    uint16_t port, const struct gk_cage_table *cages, char *err,
    size_t errlen)
{
	char host[GK_ADDR_STRLEN];
	struct gk_metrics *m;

	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->http = evhttp_new(base)) == NULL) {
		snprintf(err, errlen, "metrics: out of memory");
		free(m);
		return NULL;
	}
	m->cages = cages;
	gk_addr_ntop(addr, host, sizeof(host));
	if (evhttp_bind_socket(m->http, host, port) == -1) {
		snprintf(err, errlen, "metrics %s%s%s:%u: %s (choose another "
		    "--metrics address or 'off')",
		    addr->family == AF_INET6 ? "[" : "", host,
		    addr->family == AF_INET6 ? "]" : "", port,
		    strerror(errno));
		gk_metrics_free(m);
		return NULL;
	}
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
	evhttp_set_max_headers_size(m->http, 16 * 1024);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_timeout(m->http, 10);
	evhttp_set_cb(m->http, "/metrics", metrics_cb, m);
	evhttp_set_gencb(m->http, other_cb, m);
	return m;
}

void
gk_metrics_free(struct gk_metrics *m)
{
	if (m == NULL)
		return;
	if (m->http != NULL)
		evhttp_free(m->http);
	free(m);
}
