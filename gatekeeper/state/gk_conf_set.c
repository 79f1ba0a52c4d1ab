/*
 * gk_conf_set: one key's value, from the config file or the command line
 * (gk_conf.h's gk_conf_set), checked and stored.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_conf.h"
#include "gatekeeper/state/gk_conf_int.h"

static int
parse_uint(const char *v, unsigned long min, unsigned long max,
    unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	*out = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0' || *out < min || *out > max)
		return -1;
	return 0;
}

static int
set_port(const char *key, const char *v, uint16_t *port, char *err,
    size_t errlen)
{
	unsigned long n;

	if (parse_uint(v, 1, 65535, &n) == -1)
		return gk_seterr(err, errlen,
		    "%s: '%s' is not a port (1-65535)", key, v);
	*port = (uint16_t)n;
	return 0;
}

static int
set_subnet(struct gk_conf *c, const char *v, char *err, size_t errlen)
{
	char buf[GK_ADDR_STRLEN];
	const char *slash = strchr(v, '/');
	unsigned long prefix;
	struct gk_addr a, net;
	unsigned i;
	size_t n;

	if (slash == NULL || (n = (size_t)(slash - v)) >= sizeof(buf))
		return gk_seterr(err, errlen, "cage-subnet: '%s' is not an "
		    "IPv4 CIDR such as 10.143.0.0/16", v);
	memcpy(buf, v, n);
	buf[n] = '\0';
	if (gk_addr_parse(buf, &a) == -1 || a.family != AF_INET ||
	    parse_uint(slash + 1, 8, 30, &prefix) == -1)
		return gk_seterr(err, errlen, "cage-subnet: '%s' is not an "
		    "IPv4 CIDR with a prefix of 8 to 30, such as 10.143.0.0/16",
		    v);
	net = a;
	for (i = (unsigned)prefix; i < 32; i++)
		net.bytes[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	if (!gk_addr_eq(&net, &a))
		return gk_seterr(err, errlen, "cage-subnet: '%s' has host bits "
		    "set; did you mean %s/%lu?", v,
		    gk_addr_ntop(&net, buf, sizeof(buf)), prefix);
	c->cage_net = a;
	c->cage_prefix = (uint8_t)prefix;
	return 0;
}

/* max-upload, repeatable: a later source replaces the earlier list; "off"
 * empties it. */
static int
set_upload(struct gk_conf *c, const char *v, int src, char *err,
    size_t errlen)
{
	char e[256];

	if (c->uploads_src != src) {
		c->nuploads = 0;
		c->uploads_src = src;
	}
	if (strcmp(v, "off") == 0) {
		c->nuploads = 0;
		return 0;
	}
	if (c->nuploads == GK_UPLOADS_MAX)
		return gk_seterr(err, errlen, "max-upload: more than %d "
		    "budgets", GK_UPLOADS_MAX);
	if (!gk_upload_parse((const uint8_t *)v, strlen(v),
	    &c->uploads[c->nuploads], e, sizeof(e)))
		return gk_seterr(err, errlen, "max-upload: %s", e);
	c->nuploads++;
	return 0;
}

static int
set_upstream(struct gk_conf *c, const char *v, int src, char *err,
    size_t errlen)
{
	struct gk_upstream u;

	if (c->upstream_src != src) {
		/* a later source replaces the earlier list */
		c->nupstreams = 0;
		c->upstream_src = src;
	}
	u.port = 53;
	if (gk_addr_parse_port(v, &u.addr, &u.port) == -1)
		return gk_seterr(err, errlen, "upstream: '%s' is not IP[:PORT] "
		    "(IPv6 as [addr]:port)", v);
	if (c->nupstreams == GK_CONF_MAX_UPSTREAMS)
		return gk_seterr(err, errlen,
		    "upstream: more than %d upstreams", GK_CONF_MAX_UPSTREAMS);
	c->upstreams[c->nupstreams++] = u;
	return 0;
}

static int
set_timeout(struct gk_conf *c, const char *v, char *err, size_t errlen)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!isdigit((unsigned char)v[0]) || errno != 0 || *end != '\0' ||
	    d < 0.1 || d > 30)
		return gk_seterr(err, errlen, "upstream-timeout: '%s' is not a "
		    "number of seconds from 0.1 to 30", v);
	c->upstream_timeout_ms = (uint32_t)(d * 1000 + 0.5);
	return 0;
}

static int
set_metrics(struct gk_conf *c, const char *v, char *err, size_t errlen)
{
	uint16_t port = 0;
	struct gk_addr a;

	if (strcmp(v, "off") == 0) {
		c->metrics_off = true;
		return 0;
	}
	if (gk_addr_parse_port(v, &a, &port) == -1 || port == 0)
		return gk_seterr(err, errlen, "metrics: '%s' is not ADDR:PORT "
		    "(such as 127.0.0.1:9477) or off", v);
	c->metrics_off = false;
	c->metrics_addr = a;
	c->metrics_port = port;
	return 0;
}

int
gk_conf_set_string(const char *key, char *dst, size_t dstlen, const char *v,
    char *err, size_t errlen)
{
	if (v[0] == '\0')
		return gk_seterr(err, errlen, "%s: empty value", key);
	if (strlen(v) >= dstlen)
		return gk_seterr(err, errlen, "%s: longer than %zu bytes", key,
		    dstlen - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* The per-cage limits: a count from 0 (none) up to max. */
static int
set_limit_key(struct gk_conf *c, int k, const char *v, char *err,
    size_t errlen)
{
	static const struct {
		int		 key;
		size_t		 off;
		unsigned long	 max;
	} lims[] = {
		{ K_CAGE_DNS_RATE, offsetof(struct gk_limits, dns_rate),
		    10000000 },
		{ K_CAGE_DNS_UPSTREAM, offsetof(struct gk_limits,
		    dns_upstream), 100000 },
		{ K_CAGE_DNS_UPSTREAM_RATE, offsetof(struct gk_limits,
		    dns_upstream_rate), 10000000 },
		{ K_CAGE_DNS_TCP, offsetof(struct gk_limits, dns_tcp),
		    1000000 },
		{ K_CAGE_HANDSHAKES, offsetof(struct gk_limits, handshakes),
		    1000000 },
		{ K_CAGE_TUNNELS, offsetof(struct gk_limits, tunnels),
		    1000000 },
		{ K_CAGE_AUDIT_RATE, offsetof(struct gk_limits, audit_rate),
		    1000000 },
	};
	unsigned long n;
	uint32_t v32;
	size_t i;

	for (i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
		if (lims[i].key != k)
			continue;
		if (parse_uint(v, 0, lims[i].max, &n) == -1)
			return gk_seterr(err, errlen, "%s: '%s' is not a "
			    "number from 0 (no limit) to %lu", gk_conf_keys[k].name, v,
			    lims[i].max);
		v32 = (uint32_t)n;
		memcpy((char *)&c->limits + lims[i].off, &v32, sizeof(v32));
		return 0;
	}
	return gk_seterr(err, errlen, "%s: not a limit", gk_conf_keys[k].name);
}

int
gk_conf_find_key(const char *name)
{
	int i;

	for (i = 0; i < K__MAX; i++)
		if (strcmp(gk_conf_keys[i].name, name) == 0)
			return i;
	return -1;
}

static int
set_number_key(struct gk_conf *c, int k, const char *v, char *err,
    size_t errlen)
{
	unsigned long n;

	if (k == K_CONNECT_TIMEOUT) {
		if (parse_uint(v, 1, 120, &n) == -1)
			return gk_seterr(err, errlen, "connect-timeout: '%s' "
			    "is not a number of seconds from 1 to 120", v);
		c->connect_timeout_ms = (uint32_t)n * 1000;
		return 0;
	}
	if (k == K_HANDSHAKE_TIMEOUT) {
		if (parse_uint(v, 1, 120, &n) == -1)
			return gk_seterr(err, errlen, "handshake-timeout: '%s' "
			    "is not a number of seconds from 1 to 120", v);
		c->handshake_timeout_ms = (uint32_t)n * 1000;
		return 0;
	}
	if (k == K_PIN_GRACE) {
		if (parse_uint(v, 0, 86400, &n) == -1)
			return gk_seterr(err, errlen, "pin-grace: '%s' is not a "
			    "number of seconds from 0 to 86400", v);
		c->pin_grace = (uint32_t)n;
		return 0;
	}
	if (k == K_IDLE_TIMEOUT) {
		if (parse_uint(v, 0, 86400, &n) == -1)
			return gk_seterr(err, errlen, "idle-timeout: '%s' is "
			    "not a number of seconds from 0 to 86400", v);
		c->idle_timeout_s = (uint32_t)n;
		return 0;
	}
	if (k == K_AUDIT_ALLOWED) {
		if (parse_uint(v, 0, 1000000, &n) == -1)
			return gk_seterr(err, errlen, "audit-allowed: '%s' is "
			    "not a number from 0 (none) to 1000000", v);
		c->audit_allowed = (uint32_t)n;
		return 0;
	}
	if (k == K_TTL_CAP) {
		if (parse_uint(v, 1, 86400, &n) == -1)
			return gk_seterr(err, errlen, "ttl-cap: '%s' is not a "
			    "number of seconds from 1 to 86400", v);
		c->ttl_cap = (uint32_t)n;
		return 0;
	}
	if (parse_uint(v, 0, 10000000, &n) == -1)
		return gk_seterr(err, errlen, "cache-size: '%s' is not a "
		    "number of entries from 0 to 10000000", v);
	c->cache_size = n;
	return 0;
}

/* The keys naming a file: control, audit-log, policy, upstream-ca. */
static int
set_path(struct gk_conf *c, int k, const char *value, char *err,
    size_t errlen)
{
	char *dst = k == K_CONTROL ? c->control : k == K_AUDIT_LOG ?
	    c->audit_log : k == K_UPSTREAM_CA ? c->upstream_ca : c->policy;
	size_t len = k == K_CONTROL ? sizeof(c->control) : k == K_AUDIT_LOG ?
	    sizeof(c->audit_log) : k == K_UPSTREAM_CA ?
	    sizeof(c->upstream_ca) : sizeof(c->policy);

	return gk_conf_set_string(gk_conf_keys[k].name, dst, len, value, err,
	    errlen);
}

static int
set_listen(struct gk_conf *c, const char *value, char *err, size_t errlen)
{
	if (gk_addr_parse(value, &c->listen) == -1)
		return gk_seterr(err, errlen, "listen: '%s' is not an IP "
		    "address", value);
	return 0;
}

static int
set_transparent(struct gk_conf *c, const char *key, const char *value,
    char *err, size_t errlen)
{
	if (strcmp(value, "off") == 0) {
		c->transparent_port = 0;
		return 0;
	}
	if (set_port(key, value, &c->transparent_port, err, errlen) == -1)
		return gk_seterr(err, errlen, "transparent-port: '%s' is not "
		    "a port (1-65535) or off", value);
	return 0;
}

static int
set_plumbing(struct gk_conf *c, const char *value, char *err, size_t errlen)
{
	if (strcmp(value, "auto") == 0)
		c->plumbing = GK_PLUMB_AUTO;
	else if (strcmp(value, "on") == 0)
		c->plumbing = GK_PLUMB_ON;
	else if (strcmp(value, "off") == 0)
		c->plumbing = GK_PLUMB_OFF;
	else
		return gk_seterr(err, errlen, "plumbing: '%s' is not one of "
		    "auto, on, off", value);
	return 0;
}

static int
set_cgroup(struct gk_conf *c, const char *key, const char *value,
    char *err, size_t errlen)
{
	if (strchr(value, '/') != NULL || strcmp(value, ".") == 0 ||
	    strcmp(value, "..") == 0)
		return gk_seterr(err, errlen, "cgroup: '%s' must be one name "
		    "(no '/'), or off", value);
	return gk_conf_set_string(key, c->cgroup, sizeof(c->cgroup), value, err,
	    errlen);
}

/* control-connections: a count, or auto (0: derived from the open-files
 * limit at start, gk_limit_control_conns()). */
static int
set_conns(struct gk_conf *c, const char *value, char *err, size_t errlen)
{
	unsigned long n;

	if (strcmp(value, "auto") == 0) {
		c->control_conns = 0;
		return 0;
	}
	if (parse_uint(value, 1, GK_CONF_CONNS_MAX, &n) == -1)
		return gk_seterr(err, errlen, "control-connections: '%s' is not "
		    "a number of connections from 1 to %d, or auto", value,
		    GK_CONF_CONNS_MAX);
	c->control_conns = (uint32_t)n;
	return 0;
}

static int
set_log_level(struct gk_conf *c, const char *value, char *err, size_t errlen)
{
	int lvl;

	if ((lvl = log_level_parse(value)) == -1)
		return gk_seterr(err, errlen, "log-level: '%s' is not one of "
		    "error, warn, info, debug", value);
	c->log_level = lvl;
	return 0;
}

/* key (k: its index, or -1) is no config key. */
static int
not_a_key(int k, const char *key, char *err, size_t errlen)
{
	if (k >= 0 && !gk_conf_keys[k].in_file)
		return gk_seterr(err, errlen, "'%s' is a command-line option, "
		    "not a config key", key);
	return gk_seterr(err, errlen, "unknown key '%s' (see gatekeeperd "
	    "--help for the keys)", key);
}

int
gk_conf_set(struct gk_conf *c, const char *key, const char *value, int src,
    char *err, size_t errlen)
{
	int k = gk_conf_find_key(key);

	switch (k) {
	case K_CONTROL:
	case K_AUDIT_LOG:
	case K_POLICY:
	case K_UPSTREAM_CA:
		return set_path(c, k, value, err, errlen);
	case K_LISTEN:
		return set_listen(c, value, err, errlen);
	case K_DNS_PORT:
	case K_SOCKS_PORT:
	case K_HTTP_PORT:
		return set_port(key, value, k == K_DNS_PORT ? &c->dns_port :
		    k == K_SOCKS_PORT ? &c->socks_port : &c->http_port, err,
		    errlen);
	case K_TRANSPARENT_PORT:
		return set_transparent(c, key, value, err, errlen);
	case K_CAGE_SUBNET:
		return set_subnet(c, value, err, errlen);
	case K_PLUMBING:
		return set_plumbing(c, value, err, errlen);
	case K_UPSTREAM:
		return set_upstream(c, value, src, err, errlen);
	case K_MAX_UPLOAD:
		return set_upload(c, value, src, err, errlen);
	case K_TTL_CAP:
	case K_CACHE_SIZE:
	case K_CONNECT_TIMEOUT:
	case K_IDLE_TIMEOUT:
	case K_HANDSHAKE_TIMEOUT:
	case K_PIN_GRACE:
	case K_AUDIT_ALLOWED:
		return set_number_key(c, k, value, err, errlen);
	case K_CAGE_DNS_RATE:
	case K_CAGE_DNS_UPSTREAM:
	case K_CAGE_DNS_UPSTREAM_RATE:
	case K_CAGE_DNS_TCP:
	case K_CAGE_HANDSHAKES:
	case K_CAGE_TUNNELS:
	case K_CAGE_AUDIT_RATE:
		return set_limit_key(c, k, value, err, errlen);
	case K_UPSTREAM_TIMEOUT:
		return set_timeout(c, value, err, errlen);
	case K_METRICS:
		return set_metrics(c, value, err, errlen);
	case K_CGROUP:
		return set_cgroup(c, key, value, err, errlen);
	case K_LOG_LEVEL:
		return set_log_level(c, value, err, errlen);
	case K_CONTROL_CONNS:
		return set_conns(c, value, err, errlen);
	default:
		return not_a_key(k, key, err, errlen);
	}
}

