/*
 * gk_conf_keep: which fields of struct gk_conf hold each key, to compare
 * a newly loaded value with the running one and put the running one back.
 * Whether a key may change on SIGHUP is gk_conf.c's keys[] table's call;
 * this file only knows, for every key, where its value lives.
 */
#include <stddef.h>
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

/* A key held by one field: where it is, and whether it is a string. */
struct field {
	size_t	off;
	size_t	len;	/* 0: no field (a key with none, or a special one) */
	bool	str;
};
#define F(f)	{ offsetof(struct gk_conf, f), \
		    sizeof(((struct gk_conf *)0)->f), false }
#define F_STR(f) { offsetof(struct gk_conf, f), \
		    sizeof(((struct gk_conf *)0)->f), true }

static const struct field fields[K__MAX] = {
	[K_CONTROL] = F_STR(control),
	[K_CONTROL_CONNS] = F(control_conns),
	[K_DNS_PORT] = F(dns_port),
	[K_SOCKS_PORT] = F(socks_port),
	[K_HTTP_PORT] = F(http_port),
	[K_TRANSPARENT_PORT] = F(transparent_port),
	[K_PLUMBING] = F(plumbing),
	[K_TTL_CAP] = F(ttl_cap),
	[K_UPSTREAM_TIMEOUT] = F(upstream_timeout_ms),
	[K_CACHE_SIZE] = F(cache_size),
	[K_CONNECT_TIMEOUT] = F(connect_timeout_ms),
	[K_IDLE_TIMEOUT] = F(idle_timeout_s),
	[K_AUDIT_LOG] = F_STR(audit_log),
	[K_POLICY] = F_STR(policy),
	[K_UPSTREAM_CA] = F_STR(upstream_ca),
	[K_CGROUP] = F_STR(cgroup),
	[K_LOG_LEVEL] = F(log_level),
	[K_HANDSHAKE_TIMEOUT] = F(handshake_timeout_ms),
	[K_PIN_GRACE] = F(pin_grace),
	[K_CAGE_DNS_RATE] = F(limits.dns_rate),
	[K_CAGE_DNS_UPSTREAM] = F(limits.dns_upstream),
	[K_CAGE_DNS_UPSTREAM_RATE] = F(limits.dns_upstream_rate),
	[K_CAGE_DNS_TCP] = F(limits.dns_tcp),
	[K_CAGE_HANDSHAKES] = F(limits.handshakes),
	[K_CAGE_TUNNELS] = F(limits.tunnels),
	[K_CAGE_AUDIT_RATE] = F(limits.audit_rate),
	[K_AUDIT_ALLOWED] = F(audit_allowed),
	[K_FOREGROUND] = F(foreground),
	[K_CHECK] = F(check_only),
	/* K_VERBOSE (folded into log_level), K_HELP, K_VERSION: none */
};

bool
gk_conf_keep_key(enum gk_conf_key k, struct gk_conf *nc,
    const struct gk_conf *run)
{
	const struct field *f;
	bool changed;

	/* the keys held by more than a field; the rest by fields[] (an
	 * int: no case for each of those) */
	switch ((int)k) {
	case K_CONFIG:
		changed = KEEP(config_given);
		return KEEP_STR(config_path) || changed;
	case K_LISTEN:
		return keep_addr(&nc->listen, &run->listen);
	case K_CAGE_SUBNET:
		changed = keep_addr(&nc->cage_net, &run->cage_net);
		return KEEP(cage_prefix) || changed;
	case K_UPSTREAM:
		return keep_upstreams(nc, run);
	case K_METRICS:
		return keep_metrics(nc, run);
	default:
		break;
	}
	if ((int)k < 0 || k >= K__MAX)
		return false;
	f = &fields[k];
	if (f->len == 0)
		return false;
	if (f->str)
		return keep_str((char *)nc + f->off, (const char *)run + f->off,
		    f->len);
	return keep_bytes((char *)nc + f->off, (const char *)run + f->off,
	    f->len);
}
