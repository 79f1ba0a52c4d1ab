/*
 * gk_conf_keep: which fields of struct gk_conf hold each key, to compare
 * a newly loaded value with the running one and put the running one back.
 * Whether a key may change on SIGHUP is gk_conf.c's keys[] table's call;
 * this file only knows, for every key, where its value lives.
 */
#include <string.h>

#include "gatekeeper/state/gk_conf.h"
#include "gatekeeper/state/gk_conf_int.h"

/* Copy run's bytes over nc's; true when they differed. */
static bool
keep_bytes(void *nc, const void *run, size_t len)
{
	bool changed = memcmp(nc, run, len) != 0;

	memcpy(nc, run, len);
	return changed;
}

/* A string field: bytes after the NUL may differ and do not count. */
static bool
keep_str(char *nc, const char *run, size_t size)
{
	bool changed = strcmp(nc, run) != 0;

	memcpy(nc, run, size);
	return changed;
}

static bool
keep_addr(struct gk_addr *nc, const struct gk_addr *run)
{
	bool changed = !gk_addr_eq(nc, run);

	*nc = *run;
	return changed;
}

/* "off" is one value whatever address the file named before it. */
static bool
keep_metrics(struct gk_conf *nc, const struct gk_conf *run)
{
	bool changed;

	changed = nc->metrics_off != run->metrics_off || (!run->metrics_off &&
	    (nc->metrics_port != run->metrics_port ||
	    !gk_addr_eq(&nc->metrics_addr, &run->metrics_addr)));
	nc->metrics_off = run->metrics_off;
	nc->metrics_addr = run->metrics_addr;
	nc->metrics_port = run->metrics_port;
	return changed;
}

static bool
keep_upstreams(struct gk_conf *nc, const struct gk_conf *run)
{
	bool changed = nc->nupstreams != run->nupstreams;
	size_t i;

	for (i = 0; !changed && i < run->nupstreams; i++)
		changed = nc->upstreams[i].port != run->upstreams[i].port ||
		    !gk_addr_eq(&nc->upstreams[i].addr,
		    &run->upstreams[i].addr);
	nc->nupstreams = run->nupstreams;
	memcpy(nc->upstreams, run->upstreams, sizeof(nc->upstreams));
	nc->upstream_src = run->upstream_src;
	return changed;
}

#define KEEP(f)		keep_bytes(&nc->f, &run->f, sizeof(nc->f))
#define KEEP_STR(f)	keep_str(nc->f, run->f, sizeof(nc->f))

bool
gk_conf_keep_key(enum gk_conf_key k, struct gk_conf *nc,
    const struct gk_conf *run)
{
	bool changed;

	switch (k) {
	case K_CONFIG:
		changed = KEEP(config_given);
		return KEEP_STR(config_path) || changed;
	case K_CONTROL:
		return KEEP_STR(control);
	case K_LISTEN:
		return keep_addr(&nc->listen, &run->listen);
	case K_DNS_PORT:
		return KEEP(dns_port);
	case K_SOCKS_PORT:
		return KEEP(socks_port);
	case K_HTTP_PORT:
		return KEEP(http_port);
	case K_TRANSPARENT_PORT:
		return KEEP(transparent_port);
	case K_CAGE_SUBNET:
		changed = keep_addr(&nc->cage_net, &run->cage_net);
		return KEEP(cage_prefix) || changed;
	case K_PLUMBING:
		return KEEP(plumbing);
	case K_UPSTREAM:
		return keep_upstreams(nc, run);
	case K_TTL_CAP:
		return KEEP(ttl_cap);
	case K_UPSTREAM_TIMEOUT:
		return KEEP(upstream_timeout_ms);
	case K_CACHE_SIZE:
		return KEEP(cache_size);
	case K_CONNECT_TIMEOUT:
		return KEEP(connect_timeout_ms);
	case K_IDLE_TIMEOUT:
		return KEEP(idle_timeout_s);
	case K_METRICS:
		return keep_metrics(nc, run);
	case K_AUDIT_LOG:
		return KEEP_STR(audit_log);
	case K_POLICY:
		return KEEP_STR(policy);
	case K_CGROUP:
		return KEEP_STR(cgroup);
	case K_LOG_LEVEL:
		return KEEP(log_level);
	case K_HANDSHAKE_TIMEOUT:
		return KEEP(handshake_timeout_ms);
	case K_PIN_GRACE:
		return KEEP(pin_grace);
	case K_CAGE_DNS_RATE:
		return KEEP(limits.dns_rate);
	case K_CAGE_DNS_UPSTREAM:
		return KEEP(limits.dns_upstream);
	case K_CAGE_DNS_UPSTREAM_RATE:
		return KEEP(limits.dns_upstream_rate);
	case K_CAGE_DNS_TCP:
		return KEEP(limits.dns_tcp);
	case K_CAGE_HANDSHAKES:
		return KEEP(limits.handshakes);
	case K_CAGE_TUNNELS:
		return KEEP(limits.tunnels);
	case K_CAGE_AUDIT_RATE:
		return KEEP(limits.audit_rate);
	case K_FOREGROUND:
		return KEEP(foreground);
	case K_CHECK:
		return KEEP(check_only);
	case K_VERBOSE:		/* folded into log_level */
	case K_HELP:
	case K_VERSION:
	case K__MAX:
		break;
	}
	return false;
}
