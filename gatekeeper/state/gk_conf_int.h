/*
 * gk_conf_int.h: internals shared by gk_conf.c (the key table, the file
 * and the command line), gk_conf_set.c (one key's value) and
 * gk_conf_keep.c (which fields hold each key).
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
	K_CAGE_HANDSHAKES, K_CAGE_TUNNELS, K_CAGE_AUDIT_RATE,
	K_AUDIT_ALLOWED, K_CGROUP,
	K_POLICY, K_UPSTREAM_CA, K_MAX_UPLOAD, K_CONTROL_CONNS, K_FOREGROUND,
	K_CHECK, K_VERBOSE, K_HELP, K_VERSION, K__MAX
};

#define SRC_FILE	0	/* where a value comes from */
#define SRC_CLI		1

/*
 * When a new value takes effect. SIGHUP reloads the config file and
 * applies KEY_RELOAD keys at once (dns_server_reload, the proxies'
 * timeouts, the log level); KEY_RESTART keys keep their running value
 * until a restart (gk_conf_keep_running). Command-line-only keys are
 * KEY_RESTART: a reload rereads the same argv.
 */
enum key_apply {
	KEY_RESTART,
	KEY_RELOAD,
};

struct gk_conf_keydef {
	const char	*name;
	int		 shortopt;	/* 0: none */
	bool		 arg;
	bool		 in_file;	/* allowed in the config file */
	enum key_apply	 apply;
	const char	*metavar;
	const char	*deflt;
	const char	*help;
};

/* gk_conf.c's table, one per key in enum gk_conf_key's order. */
extern const struct gk_conf_keydef gk_conf_keys[K__MAX];

/* The index of the key called name in gk_conf_keys, or -1. */
int		 gk_conf_find_key(const char *name);
/* Copy v into dst (dstlen bytes) for key; -1 with err when too long. */
int		 gk_conf_set_string(const char *key, char *dst, size_t dstlen,
		    const char *v, char *err, size_t errlen);

/*
 * Copy run's value of key k into nc (every field that holds it); true
 * when nc held another value. Keys without a field of their own (verbose,
 * help, version) never differ.
 */
bool		 gk_conf_keep_key(enum gk_conf_key k, struct gk_conf *nc,
		    const struct gk_conf *run);

#endif /* GK_CONF_INT_H */
