/*
 * gk_conf_int.h: internals shared by gk_conf.c (the key table, the file
 * and the command line) and gk_conf_keep.c (which fields hold each key).
 */
#ifndef GK_CONF_INT_H
#define GK_CONF_INT_H

#include <stdbool.h>

#include "gatekeeper/state/gk_conf.h"

/* One per key of gk_conf.c's keys[] table, in its order. */
enum gk_conf_key {
	K_CONFIG, K_CONTROL, K_LISTEN, K_DNS_PORT, K_SOCKS_PORT, K_HTTP_PORT,
	K_TRANSPARENT_PORT,
	K_CAGE_SUBNET, K_PLUMBING, K_UPSTREAM, K_TTL_CAP, K_UPSTREAM_TIMEOUT,
	K_CACHE_SIZE, K_CONNECT_TIMEOUT, K_IDLE_TIMEOUT, K_METRICS,
	K_AUDIT_LOG, K_LOG_LEVEL, K_HANDSHAKE_TIMEOUT, K_PIN_GRACE, K_CAGE_DNS_RATE,
	K_CAGE_DNS_UPSTREAM, K_CAGE_DNS_UPSTREAM_RATE, K_CAGE_DNS_TCP,
	K_CAGE_HANDSHAKES, K_CAGE_TUNNELS, K_CAGE_AUDIT_RATE, K_CGROUP,
	K_POLICY, K_FOREGROUND,
	K_CHECK, K_VERBOSE, K_HELP, K_VERSION, K__MAX
};

/*
 * Copy run's value of key k into nc (every field that holds it); true
 * when nc held another value. Keys without a field of their own (verbose,
 * help, version) never differ.
 */
bool		 gk_conf_keep_key(enum gk_conf_key k, struct gk_conf *nc,
		    const struct gk_conf *run);

#endif /* GK_CONF_INT_H */
