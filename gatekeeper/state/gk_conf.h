/*
 * gk_conf: gatekeeperd's settings. The same keys come from the command
 * line (--key value) and the config file (key = value); the file is read
 * first, then the command line overrides it. Every value is checked for
 * range, truncation and duplicates before anything touches the system.
 */
#ifndef GK_CONF_H
#define GK_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/policy/gk_upload.h"

/* GK_CONF_DEFAULT_PATH (config.h): $sysconfdir/gatekeeper/gatekeeperd.conf */
#define GK_CONF_MAX_UPSTREAMS	8
#define GK_CONF_ERRLEN		4096
#define GK_CONF_CONNS_MAX	1048576	/* control-connections: the
					   kernel's largest open-files limit */

struct gk_upstream {
	struct gk_addr	addr;
	uint16_t	port;
};

enum gk_plumbing {
	GK_PLUMB_AUTO,		/* on when listen is inside cage_net */
	GK_PLUMB_ON,
	GK_PLUMB_OFF,
};

struct gk_conf {
	char		 config_path[PATH_MAX];
	bool		 config_given;		/* -c on the command line */
	char		 control[108];		/* sun_path */
	uint32_t	 control_conns;		/* 0: auto (gk_limit.h) */
	struct gk_addr	 listen;
	uint16_t	 dns_port;
	uint16_t	 socks_port;
	uint16_t	 http_port;
	uint16_t	 transparent_port;	/* 0: off */
	struct gk_addr	 cage_net;
	uint8_t		 cage_prefix;
	enum gk_plumbing plumbing;
	size_t		 nupstreams;		/* 0: the host's resolv.conf */
	struct gk_upstream upstreams[GK_CONF_MAX_UPSTREAMS];
	uint32_t	 ttl_cap;		/* seconds */
	uint32_t	 pin_grace;		/* seconds */
	uint32_t	 upstream_timeout_ms;
	size_t		 cache_size;		/* entries */
	uint32_t	 connect_timeout_ms;	/* proxies: dial */
	uint32_t	 idle_timeout_s;	/* proxies: tunnel idle; 0 none */
	uint32_t	 handshake_timeout_ms;	/* proxies: to the request, and
						   to the first bytes' verdict */
	struct gk_limits limits;		/* per cage */
	bool		 metrics_off;
	struct gk_addr	 metrics_addr;
	uint16_t	 metrics_port;
	char		 audit_log[PATH_MAX];	/* "" none, "-" stdout */
	uint32_t	 audit_allowed;		/* conn.allow: 1 in N; 0 none */
	char		 policy[PATH_MAX];	/* the host policy; "off" */
	char		 upstream_ca[PATH_MAX];	/* "": the system's store */
	char		 cgroup[64];		/* subtree name, "off" */
	/* max-upload: every cage's upload budgets */
	struct gk_upload uploads[GK_UPLOADS_MAX];
	size_t		 nuploads;
	int		 log_level;
	bool		 foreground;
	bool		 check_only;		/* -n */

	/* bookkeeping: which source set the upstream list last */
	int		 upstream_src;
	int		 uploads_src;
};

enum gk_conf_action {
	GK_CONF_RUN,
	GK_CONF_HELP,
	GK_CONF_VERSION,
	GK_CONF_ERROR,
};

void		 gk_conf_defaults(struct gk_conf *c);

/*
 * Set one key (long option name without dashes) from its text value.
 * `src` tags where it came from (0 file, 1 command line). 0 or -1 with a
 * message in err.
 */
int		 gk_conf_set(struct gk_conf *c, const char *key,
		    const char *value, int src, char *err, size_t errlen);

/*
 * Parse config file text. Every error is appended to errs as
 * "fname:line: message\n"; returns the number of errors.
 */
int		 gk_conf_parse_text(struct gk_conf *c, const char *fname,
		    const char *text, size_t len, char *errs, size_t errslen);

/* Read and parse a file; a missing file is fine unless must_exist. */
int		 gk_conf_load_file(struct gk_conf *c, const char *path,
		    bool must_exist, char *errs, size_t errslen);

/*
 * The whole startup order: defaults, then the config file (-c or the
 * default path), then the command line. On GK_CONF_ERROR errs says why.
 */
enum gk_conf_action gk_conf_load(struct gk_conf *c, int argc, char **argv,
		    char *errs, size_t errslen);

void		 gk_conf_usage(FILE *f);

/*
 * SIGHUP: nc was just loaded, run is the configuration running. Logs one
 * warning naming every key that changed but takes effect only after a
 * restart, and copies the running value of every such key into nc, so
 * that nc can replace run and describe what runs. Returns how many
 * changed.
 */
size_t		 gk_conf_keep_running(struct gk_conf *nc,
		    const struct gk_conf *run);

#endif /* GK_CONF_H */
