/*
 * gatekeeperd: the host service. Composes the cage table, the control
 * socket, the allowlisting DNS resolver, metrics and the audit log on one
 * libevent loop.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "dns/dns.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/gk_contain.h"
#include "gatekeeper/gk_plumb.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_hostpol.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/faces/gk_metrics.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/state/gk_conf.h"
#include "socks/broker.h"
#include "socks/proxy.h"

struct gk_daemon {
	struct event_base	*base;
	struct gk_conf		 conf;
	int			 argc;
	char			**argv;
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	struct dns_server	*dns;
	struct gk_control	*control;
	struct gk_metrics	*metrics;
	struct gk_plumb		*plumb;		/* NULL: plumbing off */
	struct gk_contain	*contain;	/* NULL: not contained */
	struct gk_cage_plumbing	 plumbing;	/* the cages' facets' hooks */
	struct gk_budget_conf	 budgets;	/* max-upload, for new cages */
	struct gk_cage_containment containment;
	struct gk_hostaddrs	 host;
	struct proxy_ctx	 proxy;
	struct proxy_listener	*socks, *http, *transparent;
	struct event		*ev_hostaddrs;
	struct event		*ev_term, *ev_int, *ev_hup;
	struct gk_hostpolicy	 policy;	/* have_policy: loaded */
	bool			 have_policy;
};

/* Is the policy path the configuration's own (it must exist), not the
 * default one (absent is fine)? */
static bool
policy_named(const struct gk_conf *c)
{
	return strcmp(c->policy, GK_POLICY_DEFAULT_PATH) != 0;
}

/* The policy `np` (have: loaded, else none) runs from now on: cages
 * beyond its bound are narrowed, the table and the audit told. */
static void
policy_install(struct gk_daemon *d, struct gk_hostpolicy *np, bool have)
{
	size_t n = 0;

	if (have)
		n = gk_hostpol_narrow(d->cages, np, d->audit);
	gk_cage_table_set_policy(d->cages, NULL);
	if (d->have_policy)
		gk_hostpolicy_clear(&d->policy);
	d->policy = *np;
	d->have_policy = have;
	gk_cage_table_set_policy(d->cages, have ? &d->policy : NULL);
	gk_audit_set_policy(d->audit, have ? d->policy.version : NULL);
	if (have)
		log_info("host policy %s: version %s, %zu deny pattern(s), %s%s",
		    d->conf.policy, d->policy.version,
		    gk_allowlist_len(d->policy.deny), d->policy.bound == NULL ?
		    "no bound" : "a bound", n > 0 ? "; live cages narrowed to it"
		    : "");
}

static void
dns_conf(const struct gk_conf *c, struct dns_server_conf *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->listen = c->listen;
	sc->port = c->dns_port;
	sc->upstreams = c->upstreams;
	sc->nupstreams = c->nupstreams;
	sc->ttl_cap = c->ttl_cap;
	sc->pin_grace = c->pin_grace;
	sc->timeout_ms = c->upstream_timeout_ms;
	sc->cache_size = c->cache_size;
}

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct gk_daemon *d = arg;

	(void)what;
	log_info("%s: stopping", strsignal((int)sig));
	(void)sd_notify(0, "STOPPING=1");
	event_base_loopbreak(d->base);
}

static void	proxy_conf(struct gk_daemon *d);
static void	control_conf(struct gk_daemon *d);

/* "a:1: x\nb:2: y\n" -> "a:1: x; b:2: y" for one log line */
static void
one_line(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '\n')
		s[--n] = '\0';
	for (; *s != '\0'; s++)
		if (*s == '\n')
			*s = ';';
}

/*
 * Reload the configuration file and the host policy (SIGHUP, or the
 * control socket's "reload"): 0, or -1 with what was kept in err (the
 * whole running configuration, or only the running host policy).
 */
static int
reload(struct gk_daemon *d, char *err, size_t errlen)
{
	struct dns_server_conf sc;
	char errs[GK_CONF_ERRLEN];
	struct gk_hostpolicy np;
	struct gk_conf nc;
	int rc;

	(void)sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)gk_clock_ms() * 1000);
	if (gk_conf_load(&nc, d->argc, d->argv, errs, sizeof(errs)) !=
	    GK_CONF_RUN) {
		one_line(errs);
		goto failed;
	}
	/* restart-only keys keep their running values: d->conf is what runs */
	gk_conf_keep_running(&nc, &d->conf);
	dns_conf(&nc, &sc);
	if (dns_server_reload(d->dns, &sc, errs, sizeof(errs)) == -1)
		goto failed;
	if ((rc = gk_hostpol_load(nc.policy, policy_named(&nc), &np, errs,
	    sizeof(errs))) == -1) {
		snprintf(err, errlen, "reload: %s; the running host policy "
		    "(%s) is kept (the rest of the configuration was "
		    "reloaded)", errs, d->have_policy ? d->policy.version :
		    "none");
		log_warnx("%s", err);
	}
	d->conf = nc;
	if (rc != -1)
		policy_install(d, &np, rc == 1);
	proxy_conf(d);
	control_conf(d);
	log_setlevel(nc.log_level);
	gk_audit_reopen(d->audit);
	log_info("reloaded: upstreams %s, ttl-cap %us, %zu cages kept",
	    dns_server_upstreams(d->dns), nc.ttl_cap,
	    gk_cage_table_count(d->cages));
	(void)sd_notifyf(0, "READY=1\nSTATUS=reloaded; %zu cages",
	    gk_cage_table_count(d->cages));
	return rc == -1 ? -1 : 0;
failed:
	snprintf(err, errlen, "reload failed, keeping the running "
	    "configuration: %s", errs);
	log_warnx("%s", err);
	(void)sd_notify(0, "READY=1\nSTATUS=reload failed; the running "
	    "configuration is kept (see the log)");
	return -1;
}

/*
 * control-connections, at start and on every reload: the configured
 * count, or auto's; a warning when the descriptors cannot hold that many
 * (each is one, and the cages' own connections need the rest).
 */
static void
control_conf(struct gk_daemon *d)
{
	uint32_t n = gk_limit_control_conns(d->conf.control_conns);

	gk_control_set_max(d->control, n);
	if (d->conf.control_conns != 0 && n > gk_fds.limit - gk_fds.reserve)
		log_warnx("control-connections = %u: more than the %llu "
		    "descriptors gatekeeperd may use beyond its reserve; raise "
		    "its open-files limit (the unit's LimitNOFILE=)", n,
		    (unsigned long long)(gk_fds.limit - gk_fds.reserve));
	log_info("control connections: at most %u at once%s", n,
	    d->conf.control_conns == 0 ? " (auto: half the descriptors "
	    "beyond the reserve)" : "");
}

static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	char err[GK_CONF_ERRLEN + 128];

	(void)sig;
	(void)what;
	(void)reload(arg, err, sizeof(err));
}

/* The control socket's "reload". */
static int
ctl_reload(void *arg, char *policy, size_t policylen, char *err,
    size_t errlen)
{
	struct gk_daemon *d = arg;
	int rc = reload(d, err, errlen);

	snprintf(policy, policylen, "%s", d->have_policy ? d->policy.version :
	    "none");
	return rc;
}

static void
hostaddrs_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_daemon *d = arg;
	struct gk_hostaddrs h;

	(void)fd;
	(void)what;
	/* this host's addresses and gateways are never proxy targets */
	gk_hostaddrs_init(&h);
	if (gk_hostaddrs_load(&h) == -1 && h.n == 0) {
		log_warn("cannot read this host's addresses; keeping %zu",
		    d->host.n);
		return;
	}
	d->host = h;
}

static void
proxy_conf(struct gk_daemon *d)
{
	d->proxy.base = d->base;
	d->proxy.dns = d->dns;
	d->proxy.cages = d->cages;
	d->proxy.audit = d->audit;
	d->proxy.host = &d->host;
	d->proxy.connect_timeout_ms = d->conf.connect_timeout_ms;
	d->proxy.handshake_timeout_ms = d->conf.handshake_timeout_ms;
	d->proxy.idle_sec = d->conf.idle_timeout_s;
	gk_limit_configure(&d->conf.limits, d->audit);
	d->budgets.v = d->conf.uploads;
	d->budgets.n = d->conf.nuploads;
	gk_budget_configure(d->cages, &d->budgets);
	gk_audit_set_allowed(d->audit, d->conf.audit_allowed);
}

static int
start_proxies(struct gk_daemon *d, char *err, size_t errlen)
{
	struct timeval tv = { 30, 0 };

	hostaddrs_cb(-1, 0, d);
	d->ev_hostaddrs = event_new(d->base, -1, EV_PERSIST, hostaddrs_cb, d);
	if (d->ev_hostaddrs == NULL || event_add(d->ev_hostaddrs, &tv) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	proxy_conf(d);
	if ((d->proxy.upstream_tls = broker_upstream_ctx(
	    d->conf.upstream_ca[0] != '\0' ? d->conf.upstream_ca : NULL, err,
	    errlen)) == NULL)
		return -1;
	if ((d->socks = socks_listener_new(&d->proxy, &d->conf.listen,
	    d->conf.socks_port, err, errlen)) == NULL)
		return -1;
	if ((d->http = http_listener_new(&d->proxy, &d->conf.listen,
	    d->conf.http_port, err, errlen)) == NULL)
		return -1;
	return 0;
}

/* The audit log, if one is configured; a warning where a sandbox run as
 * root could read it. 0, or -1 with err. */
static int
open_audit(struct gk_daemon *d, char *err, size_t errlen)
{
	if (d->conf.audit_log[0] != '\0' &&
	    (d->audit = gk_audit_open(d->base, d->conf.audit_log, err,
	    errlen)) == NULL)
		return -1;
	if (d->conf.audit_log[0] == '/' && strncmp(d->conf.audit_log,
	    GK_AUDIT_DIR_DEFAULT "/", sizeof(GK_AUDIT_DIR_DEFAULT)) != 0)
		log_warnx("audit-log %s: every sandbox has %s hidden, not "
		    "this file: a sandbox run as root could read it (keep it "
		    "in %s)", d->conf.audit_log, GK_AUDIT_DIR_DEFAULT,
		    GK_AUDIT_DIR_DEFAULT);
	return 0;
}

/* The plumbing's and the cgroups' hooks: the cages' facets (with
 * plumbing only). 0, or -1 with err. */
static int
hook_control(struct gk_daemon *d, char *err, size_t errlen)
{
	if (d->plumb == NULL)
		return 0;
	gk_plumb_attach(d->plumb, d->cages, &d->proxy);
	gk_plumb_hooks(d->plumb, &d->conf, &d->plumbing);
	gk_plumb_facet_set(d->cages, &d->plumbing);
	if (gk_contain_start(&d->contain, d->base, &d->conf, d->cages) ==
	    -1) {
		snprintf(err, errlen, "cgroups: out of memory");
		return -1;
	}
	if (d->contain != NULL) {
		gk_contain_hooks(d->contain, &d->containment);
		gk_contain_facet_set(d->cages, &d->containment);
	}
	return 0;
}

static int
start(struct gk_daemon *d)
{
	struct dns_server_conf sc;
	struct gk_hostpolicy np;
	char err[1024] = "";
	uint64_t was, now;
	int rc;

	now = gk_limit_fds_init(&was);
	log_info("descriptors: %llu%s (%llu kept for the control socket and "
	    "new cages)", (unsigned long long)now, was < now ?
	    " (soft limit raised to the hard one)" : "",
	    (unsigned long long)gk_fds.reserve);
	if (open_audit(d, err, sizeof(err)) == -1)
		goto fail;
	if ((d->cages = gk_cage_table_new()) == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	gk_cage_table_set_env(d->cages, d->base, d->audit);
	if ((rc = gk_hostpol_load(d->conf.policy, policy_named(&d->conf),
	    &np, err, sizeof(err))) == -1)
		goto fail;
	policy_install(d, &np, rc == 1);
	dns_conf(&d->conf, &sc);
	if ((d->dns = dns_server_new(d->base, &sc, d->cages, d->audit, err,
	    sizeof(err))) == NULL)
		goto fail;
	if (start_proxies(d, err, sizeof(err)) == -1)
		goto fail;
	if (!d->conf.metrics_off && (d->metrics = gk_metrics_new(d->base,
	    &d->conf.metrics_addr, d->conf.metrics_port, d->cages, err,
	    sizeof(err))) == NULL)
		goto fail;
	if (gk_plumb_start(&d->plumb, d->base, &d->conf, err, sizeof(err))
	    == -1)
		goto fail;
	/* only plumbed cages' TCP is ever redirected to it */
	if (d->plumb != NULL && d->conf.transparent_port != 0 &&
	    (d->transparent = transparent_listener_new(&d->proxy,
	    &d->conf.listen, d->conf.transparent_port, err, sizeof(err))) ==
	    NULL)
		goto fail;
	if ((d->control = gk_control_new(d->base, d->conf.control, d->cages,
	    d->audit, err, sizeof(err))) == NULL)
		goto fail;
	control_conf(d);
	if (hook_control(d, err, sizeof(err)) == -1)
		goto fail;
	gk_control_set_reload(d->control, &(struct gk_ctl_reload){ d,
	    ctl_reload });
	return 0;
fail:
	log_warnx("%s", err);
	return -1;
}

static void
tell_stopped(struct gk_cage *c, void *arg)
{
	(void)arg;
	gk_events_owner_told(c, "gatekeeperd stopped");
}

static void
stop(struct gk_daemon *d)
{
	proxy_listener_free(d->socks);
	proxy_listener_free(d->http);
	proxy_listener_free(d->transparent);
	broker_ctx_free(d->proxy.upstream_tls);
	/* a restart: cages' processes stay, for gk-run to register again;
	 * a stop: they end, and their owners are told why */
	if (!gk_contain_leave(d->contain))
		gk_cage_foreach(d->cages, tell_stopped, NULL);
	/* relays free their memory on the next loop turn, and owners'
	 * last lines go out */
	event_base_loop(d->base, EVLOOP_NONBLOCK);
	gk_control_free(d->control);	/* destroys the cages */
	gk_contain_stop(d->contain);
	gk_plumb_stop(d->plumb);	/* their links, then the table */
	gk_metrics_free(d->metrics);
	if (d->ev_hostaddrs != NULL)
		event_free(d->ev_hostaddrs);
	dns_server_free(d->dns);
	gk_cage_table_free(d->cages);
	if (d->have_policy)
		gk_hostpolicy_clear(&d->policy);
	d->have_policy = false;
	gk_audit_close(d->audit);
	if (d->ev_term != NULL)
		event_free(d->ev_term);
	if (d->ev_int != NULL)
		event_free(d->ev_int);
	if (d->ev_hup != NULL)
		event_free(d->ev_hup);
	event_base_free(d->base);
}

static int
add_signals(struct gk_daemon *d)
{
	signal(SIGPIPE, SIG_IGN);
	d->ev_term = evsignal_new(d->base, SIGTERM, stop_cb, d);
	d->ev_int = evsignal_new(d->base, SIGINT, stop_cb, d);
	d->ev_hup = evsignal_new(d->base, SIGHUP, hup_cb, d);
	if (d->ev_term == NULL || d->ev_int == NULL || d->ev_hup == NULL ||
	    evsignal_add(d->ev_term, NULL) == -1 ||
	    evsignal_add(d->ev_int, NULL) == -1 ||
	    evsignal_add(d->ev_hup, NULL) == -1)
		return -1;
	return 0;
}

static void
log_ready(const struct gk_daemon *d)
{
	char addr[GK_ADDR_STRLEN], maddr[GK_ADDR_STRLEN], metrics[64];
	char tport[16];

	gk_addr_ntop(&d->conf.listen, addr, sizeof(addr));
	if (d->conf.metrics_off)
		snprintf(metrics, sizeof(metrics), "off");
	else
		snprintf(metrics, sizeof(metrics), "%s:%u",
		    gk_addr_ntop(&d->conf.metrics_addr, maddr, sizeof(maddr)),
		    d->conf.metrics_port);
	if (d->transparent != NULL)
		snprintf(tport, sizeof(tport), "port %u",
		    d->conf.transparent_port);
	else
		snprintf(tport, sizeof(tport), "off");
	log_info("ready: dns %s port %u (udp, tcp), socks5 port %u, http "
	    "proxy port %u, transparent %s, upstreams %s, ttl-cap %us, "
	    "control %s, metrics %s", addr, d->conf.dns_port,
	    d->conf.socks_port, d->conf.http_port, tport,
	    dns_server_upstreams(d->dns), d->conf.ttl_cap, d->conf.control,
	    metrics);
}

/*
 * -n: what the configuration names must exist as well (the audit log's
 * directory: gatekeeperd would fail to start without it). 0, or -1 with
 * one line on stderr.
 */
static int
check_paths(const struct gk_conf *c)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (c->audit_log[0] == '\0' || strcmp(c->audit_log, "-") == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", c->audit_log);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == -1) {
		fprintf(stderr, "gatekeeperd: audit-log %s: its directory %s: "
		    "%s; create it (the unit's LogsDirectory= makes "
		    "/var/log/gatekeeper)\n", c->audit_log, dir,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "gatekeeperd: audit-log %s: %s is not a "
		    "directory\n", c->audit_log, dir);
		return -1;
	}
	return 0;
}

/* -n: the host policy parses (or is absent where that is fine). */
static int
check_policy(const struct gk_conf *c)
{
	char err[GK_CONF_ERRLEN];
	struct gk_hostpolicy p;
	int rc;

	if ((rc = gk_hostpol_load(c->policy, policy_named(c), &p, err,
	    sizeof(err))) == -1) {
		fprintf(stderr, "gatekeeperd: %s\n", err);
		return -1;
	}
	if (rc == 1)
		gk_hostpolicy_clear(&p);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct gk_daemon d;
	char errs[GK_CONF_ERRLEN];
	int rc;

	d.argc = argc;
	d.argv = argv;
	switch (gk_conf_load(&d.conf, argc, argv, errs, sizeof(errs))) {
	case GK_CONF_HELP:
		gk_conf_usage(stdout);
		return 0;
	case GK_CONF_VERSION:
		printf("%s\n", PACKAGE_STRING);
		return 0;
	case GK_CONF_ERROR:
		fprintf(stderr, "gatekeeperd: %s", errs);
		return 2;
	case GK_CONF_RUN:
		break;
	}
	if (d.conf.check_only) {
		if (check_paths(&d.conf) == -1 || check_policy(&d.conf) == -1)
			return 2;
		printf("configuration OK\n");
		return 0;
	}
	/* a host policy the configuration names must be there and valid */
	if (check_policy(&d.conf) == -1)
		return 2;
	log_init("gatekeeperd", d.conf.log_level);
	if (gk_policy_psl_load(NULL) == -1)
		log_warnx("no public suffix list could be loaded: every "
		    "wildcard pattern will be refused (install the publicsuffix "
		    "package)");
	if ((d.base = event_base_new()) == NULL || add_signals(&d) == -1) {
		log_warnx("cannot set up the event loop");
		return 1;
	}
	if (start(&d) == -1) {
		stop(&d);
		return 1;
	}
	log_ready(&d);
	/* Type=notify: the control socket and every listener are up */
	(void)sd_notify(0, "READY=1\nSTATUS=ready");
	rc = event_base_dispatch(d.base) == -1 ? 1 : 0;
	stop(&d);
	log_info("stopped");
	return rc;
}
