/*
 * gk_conf: command line and config file, one table of keys for both.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/state/gk_conf.h"
#include "gatekeeper/state/gk_conf_int.h"

#define CONF_MAX_FILE	(1024 * 1024)
#define CONF_MAX_LINE	4096
#define LONG_ONLY	256	/* getopt value of a key with no short option */

const struct gk_conf_keydef gk_conf_keys[K__MAX] = {
	[K_CONFIG] = { "config", 'c', true, false, KEY_RESTART, "FILE",
	    GK_CONF_DEFAULT_PATH, "config file (key = value); absent is fine "
	    "unless given with -c" },
	[K_CONTROL] = { "control", 'C', true, true, KEY_RESTART, "PATH",
	    GK_CONTROL_PATH_DEFAULT, "control socket (mode 0660, group "
	    GK_CONTROL_GROUP ")" },
	[K_LISTEN] = { "listen", 'l', true, true, KEY_RESTART, "ADDR",
	    GK_GATEWAY_DEFAULT, "address of the DNS listener (bound with "
	    "IP_FREEBIND)" },
	[K_DNS_PORT] = { "dns-port", 'd', true, true, KEY_RESTART, "PORT",
	    GK_STR(GK_DNS_PORT_DEFAULT), "DNS port, UDP and TCP" },
	[K_SOCKS_PORT] = { "socks-port", 's', true, true, KEY_RESTART, "PORT",
	    GK_STR(GK_SOCKS_PORT_DEFAULT), "SOCKS5 proxy port (on the listen "
	    "address)" },
	[K_HTTP_PORT] = { "http-port", 'H', true, true, KEY_RESTART, "PORT",
	    GK_STR(GK_HTTP_PORT_DEFAULT), "HTTP proxy port: CONNECT and "
	    "http:// requests" },
	[K_TRANSPARENT_PORT] = { "transparent-port", 'R', true, true,
	    KEY_RESTART, "PORT|off", GK_STR(GK_TRANSPARENT_PORT_DEFAULT),
	    "transparent proxy port: namespace cages' TCP to other "
	    "addresses is redirected here (off: refused)" },
	[K_CAGE_SUBNET] = { "cage-subnet", 'S', true, true, KEY_RESTART,
	    "CIDR", GK_CAGE_SUBNET_DEFAULT, "IPv4 range cage addresses come "
	    "from; the listen address is the cages' gateway inside it" },
	[K_PLUMBING] = { "plumbing", 'P', true, true, KEY_RESTART,
	    "auto|on|off", "auto", "veth, routes and nftables for namespace "
	    "cages; auto: on when --listen is inside --cage-subnet" },
	[K_UPSTREAM] = { "upstream", 'u', true, true, KEY_RELOAD, "IP[:PORT]",
	    "the host's /etc/resolv.conf", "upstream resolver (repeatable, "
	    "up to 8)" },
	[K_TTL_CAP] = { "ttl-cap", 't', true, true, KEY_RELOAD, "SECONDS",
	    "60", "cap on cache lifetime and on TTLs handed to cages "
	    "(1-86400)" },
	[K_UPSTREAM_TIMEOUT] = { "upstream-timeout", 'T', true, true,
	    KEY_RELOAD, "SECONDS", "2", "answer SERVFAIL when upstreams have "
	    "not answered by then (0.1-30)" },
	[K_CACHE_SIZE] = { "cache-size", 'z', true, true, KEY_RELOAD,
	    "ENTRIES", "10000", "DNS cache entries (0 disables the cache)" },
	[K_CONNECT_TIMEOUT] = { "connect-timeout", 'o', true, true,
	    KEY_RELOAD, "SECONDS", "10", "proxies: give up connecting "
	    "upstream after this long (1-120)" },
	[K_IDLE_TIMEOUT] = { "idle-timeout", 'i', true, true, KEY_RELOAD,
	    "SECONDS", "600", "proxies: close a tunnel idle this long (0: "
	    "never)" },
	[K_METRICS] = { "metrics", 'm', true, true, KEY_RESTART,
	    "ADDR:PORT|off", "127.0.0.1:9477", "Prometheus endpoint, GET "
	    "/metrics" },
	[K_AUDIT_LOG] = { "audit-log", 'a', true, true, KEY_RESTART, "PATH|-",
	    "none", "audit log, JSON lines (- for stdout)" },
	[K_LOG_LEVEL] = { "log-level", 'L', true, true, KEY_RELOAD,
	    "error|warn|info|debug", "info", "log verbosity (stderr)" },
	[K_HANDSHAKE_TIMEOUT] = { "handshake-timeout", 0, true, true,
	    KEY_RELOAD, "SECONDS", "5", "proxies: close a connection whose "
	    "request (SOCKS5, HTTP) or first bytes (TLS ClientHello, HTTP "
	    "request) are not complete by then (1-120)" },
	[K_PIN_GRACE] = { "pin-grace", 0, true, true, KEY_RELOAD, "SECONDS",
	    "600", "how long after its TTL ran out an address a cage's DNS "
	    "answer gave stays pinned to the cage (clients that cache "
	    "answers); 0-86400" },
	[K_CAGE_DNS_RATE] = { "cage-dns-rate", 0, true, true, KEY_RELOAD,
	    "QUERIES", "5000", "per cage: DNS queries a second; more are "
	    "dropped (0: no limit)" },
	[K_CAGE_DNS_UPSTREAM] = { "cage-dns-upstream", 0, true, true,
	    KEY_RELOAD, "QUERIES", "64", "per cage: DNS queries waiting on "
	    "the upstream at once; more are answered SERVFAIL (0: no limit)" },
	[K_CAGE_DNS_UPSTREAM_RATE] = { "cage-dns-upstream-rate", 0, true,
	    true, KEY_RELOAD, "NAMES", "200", "per cage: uncached names asked "
	    "upstream a second; more are answered SERVFAIL (0: no limit)" },
	[K_CAGE_DNS_TCP] = { "cage-dns-tcp", 0, true, true, KEY_RELOAD,
	    "CONNECTIONS", "16", "per cage: DNS-over-TCP connections open at "
	    "once; more are closed (0: no limit)" },
	[K_CAGE_HANDSHAKES] = { "cage-handshakes", 0, true, true, KEY_RELOAD,
	    "CONNECTIONS", "256", "per cage: proxy connections before their "
	    "tunnel (handshake, dial); more are closed (0: no limit)" },
	[K_CAGE_TUNNELS] = { "cage-tunnels", 0, true, true, KEY_RELOAD,
	    "TUNNELS", "1024", "per cage: open tunnels; more are refused (0: "
	    "no limit)" },
	[K_CAGE_AUDIT_RATE] = { "cage-audit-rate", 0, true, true, KEY_RELOAD,
	    "LINES", "50", "per cage: audit lines a second about its traffic; "
	    "the rest are counted in cage.limit lines (0: no limit)" },
	[K_AUDIT_ALLOWED] = { "audit-allowed", 0, true, true, KEY_RELOAD,
	    "N", "0", "one allowed connection in N written to the audit log "
	    "as it ends (conn.allow: host, port, bytes, ms); 0: none; within "
	    "cage-audit-rate (0-1000000)" },
	[K_CGROUP] = { "cgroup", 0, true, true, KEY_RESTART, "NAME|off",
	    "gatekeeper", "the cgroup subtree (under gatekeeperd's own, in "
	    "each hierarchy) where namespace cages' processes are contained "
	    "and limited; off: not contained" },
	[K_POLICY] = { "policy", 0, true, true, KEY_RELOAD, "FILE|off",
	    GK_POLICY_DEFAULT_PATH, "host policy: deny patterns no cage may "
	    "reach, allow patterns that bound what cages may ask for (absent "
	    "is fine unless named; off: none)" },
	[K_UPSTREAM_CA] = { "upstream-ca", 0, true, true, KEY_RESTART,
	    "FILE", "the system's", "brokered hosts (gk-run --credential): "
	    "the CA certificates their servers are verified against" },
	[K_MAX_UPLOAD] = { "max-upload", 0, true, true, KEY_RELOAD,
	    "SIZE[@HOSTPATTERN]|off", "off", "per cage: bytes it may send "
	    "upstream, in total or (with a pattern) to the hosts the pattern "
	    "matches; past it new connections are refused and tunnels cut "
	    "(repeatable, up to 16; new cages get it, with their own)" },
	[K_CONTROL_CONNS] = { "control-connections", 0, true, true,
	    KEY_RELOAD, "N|auto", "auto", "control connections open at once; "
	    "every gk-run holds one while its cage lives, more are refused "
	    "with a message naming this key (1-" GK_STR(GK_CONF_CONNS_MAX)
	    "; auto: half the descriptors gatekeeperd may open, less its "
	    "reserve)" },
	[K_FOREGROUND] = { "foreground", 'f', false, false, KEY_RESTART, NULL,
	    NULL, "stay in the foreground (the daemon never forks; for "
	    "compatibility with init scripts)" },
	[K_CHECK] = { "check", 'n', false, false, KEY_RESTART, NULL, NULL,
	    "check the configuration, print \"configuration OK\" and exit" },
	[K_VERBOSE] = { "verbose", 'v', false, false, KEY_RESTART, NULL, NULL,
	    "more log output (repeatable)" },
	[K_HELP] = { "help", 'h', false, false, KEY_RESTART, NULL, NULL,
	    "show this help and exit" },
	[K_VERSION] = { "version", 'V', false, false, KEY_RESTART, NULL, NULL,
	    "print the version and exit" },
};

/*
 * The defaults are the table's: every config key's default text goes
 * through gk_conf_set() as a value from a file would, so --help and the
 * running defaults cannot differ. The upstream's and the audit log's
 * default texts describe an absence (no upstream key: resolv.conf; no
 * audit log), which the zeroed struct already is.
 */
void
gk_conf_defaults(struct gk_conf *c)
{
	int k, r;

	memset(c, 0, sizeof(*c));
	snprintf(c->config_path, sizeof(c->config_path), "%s",
	    GK_CONF_DEFAULT_PATH);
	for (k = 0; k < K__MAX; k++) {
		if (!gk_conf_keys[k].in_file || gk_conf_keys[k].deflt == NULL ||
		    k == K_UPSTREAM || k == K_AUDIT_LOG || k == K_UPSTREAM_CA ||
		    k == K_MAX_UPLOAD)
			continue;
		r = gk_conf_set(c, gk_conf_keys[k].name, gk_conf_keys[k].deflt, SRC_FILE,
		    NULL, 0);
		assert(r == 0);
		(void)r;
	}
	c->upstream_src = -1;
	c->uploads_src = -1;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static void
adderr(char *errs, size_t errslen, const char *fname, int line,
    const char *msg)
{
	size_t used = strnlen(errs, errslen);

	if (used + 1 < errslen)
		snprintf(errs + used, errslen - used, "%s:%d: %s\n", fname,
		    line, msg);
}

static int
parse_line(struct gk_conf *c, char *line, bool seen[K__MAX], char *err,
    size_t errlen)
{
	char *eq, *key, *val;
	int k;

	if ((eq = strchr(line, '=')) == NULL)
		return gk_seterr(err, errlen, "expected 'key = value'");
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	if (val[0] == '"' && strlen(val) >= 2 && val[strlen(val) - 1] == '"') {
		val[strlen(val) - 1] = '\0';
		val++;
	}
	k = gk_conf_find_key(key);
	if (k >= 0 && k != K_UPSTREAM && k != K_MAX_UPLOAD &&
	    gk_conf_keys[k].in_file) {
		if (seen[k])
			return gk_seterr(err, errlen, "duplicate key '%s'",
			    key);
		seen[k] = true;
	}
	return gk_conf_set(c, key, val, SRC_FILE, err, errlen);
}

int
gk_conf_parse_text(struct gk_conf *c, const char *fname, const char *text,
    size_t len, char *errs, size_t errslen)
{
	bool seen[K__MAX] = { false };
	char line[CONF_MAX_LINE], err[512], *s;
	size_t pos = 0, n;
	int lineno = 0, nerr = 0;
	const char *nl;

	while (pos < len) {
		lineno++;
		nl = memchr(text + pos, '\n', len - pos);
		n = (nl != NULL ? (size_t)(nl - text) : len) - pos;
		if (n >= sizeof(line) || memchr(text + pos, '\0', n) != NULL) {
			adderr(errs, errslen, fname, lineno, n >= sizeof(line) ?
			    "line too long" : "NUL byte in line");
			nerr++;
		} else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			if ((s = strchr(line, '#')) != NULL)
				*s = '\0';
			s = trim(line);
			if (*s != '\0' && parse_line(c, s, seen, err,
			    sizeof(err)) == -1) {
				adderr(errs, errslen, fname, lineno, err);
				nerr++;
			}
		}
		pos += n + (nl != NULL ? 1 : 0);
	}
	return nerr;
}

int
gk_conf_load_file(struct gk_conf *c, const char *path, bool must_exist,
    char *errs, size_t errslen)
{
	char *text = NULL;
	size_t len;
	FILE *f;
	int nerr;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(errs, errslen, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	if ((text = malloc(CONF_MAX_FILE + 1)) == NULL) {
		fclose(f);
		snprintf(errs, errslen, "%s: out of memory\n", path);
		return 1;
	}
	len = fread(text, 1, CONF_MAX_FILE + 1, f);
	if (ferror(f) || len > CONF_MAX_FILE) {
		snprintf(errs, errslen, "%s: %s\n", path, ferror(f) ?
		    "read error" : "larger than 1 MiB");
		nerr = 1;
	} else
		nerr = gk_conf_parse_text(c, path, text, len, errs, errslen);
	free(text);
	fclose(f);
	return nerr;
}

/* What SIGHUP applies, from the table's apply column. */
static void
usage_signals(FILE *f)
{
	size_t col = 0, len;
	int i;

	fprintf(f, "Signals: SIGTERM/SIGINT stop; SIGHUP rereads the config "
	    "file, keeping cages,\nand applies these keys at once:\n");
	for (i = 0; i < K__MAX; i++) {
		if (gk_conf_keys[i].apply != KEY_RELOAD)
			continue;
		len = strlen(gk_conf_keys[i].name);
		if (col > 0 && col + len + 2 > 72) {
			fputs(",\n", f);
			col = 0;
		} else if (col > 0) {
			fputs(", ", f);
			col += 2;
		}
		fprintf(f, "%s%s", col == 0 ? "  " : "", gk_conf_keys[i].name);
		col += (col == 0 ? 2 : 0) + len;
	}
	fprintf(f, ";\nthe others take effect only after a restart (a reload "
	    "warns naming them).\nSIGHUP also reopens the audit log.\n");
}

void
gk_conf_usage(FILE *f)
{
	char opt[64];
	int i;

	fprintf(f, "usage: gatekeeperd [OPTIONS]\n\n"
	    "The gatekeeper host service: per cage, an allowlisting DNS "
	    "resolver and\nSOCKS5, HTTP and transparent proxies that "
	    "filter by host name; the control\nsocket gk-run creates cages "
	    "through; Prometheus metrics. Every option\nexcept -c, -f, -n, "
	    "-v, --help and --version is also a config file key\n"
	    "(key = value).\n\n");
	for (i = 0; i < K__MAX; i++) {
		if (gk_conf_keys[i].shortopt != 0)
			snprintf(opt, sizeof(opt), "-%c, --%s%s%s",
			    gk_conf_keys[i].shortopt, gk_conf_keys[i].name,
			    gk_conf_keys[i].arg ? " " : "",
			    gk_conf_keys[i].arg ? gk_conf_keys[i].metavar : "");
		else
			snprintf(opt, sizeof(opt), "    --%s%s%s",
			    gk_conf_keys[i].name, gk_conf_keys[i].arg ? " " : "",
			    gk_conf_keys[i].arg ? gk_conf_keys[i].metavar : "");
		fprintf(f, "  %-36s %s", opt, gk_conf_keys[i].help);
		if (gk_conf_keys[i].deflt != NULL)
			fprintf(f, "\n  %-36s (default: %s)", "",
			    gk_conf_keys[i].deflt);
		fputc('\n', f);
	}
	fprintf(f, "\nExit status: 0 clean stop, 1 runtime failure, 2 usage "
	    "or configuration error.\n");
	usage_signals(f);
}

static void
build_longopts(struct option *lo, char *shortopts, size_t slen)
{
	size_t sp = 0;
	int i;

	for (i = 0; i < K__MAX; i++) {
		lo[i].name = gk_conf_keys[i].name;
		lo[i].has_arg = gk_conf_keys[i].arg ? required_argument : no_argument;
		lo[i].flag = NULL;
		/* a key without a short option: 256 + its index */
		lo[i].val = gk_conf_keys[i].shortopt != 0 ? gk_conf_keys[i].shortopt :
		    LONG_ONLY + i;
		if (gk_conf_keys[i].shortopt != 0 && sp + 3 < slen) {
			shortopts[sp++] = (char)gk_conf_keys[i].shortopt;
			if (gk_conf_keys[i].arg)
				shortopts[sp++] = ':';
		}
	}
	memset(&lo[K__MAX], 0, sizeof(lo[K__MAX]));
	shortopts[sp] = '\0';
}

static int
key_of_short(int ch)
{
	int i;

	if (ch >= LONG_ONLY && ch < LONG_ONLY + K__MAX)
		return ch - LONG_ONLY;
	for (i = 0; i < K__MAX; i++)
		if (gk_conf_keys[i].shortopt != 0 && gk_conf_keys[i].shortopt == ch)
			return i;
	return -1;
}

/* First pass: only -c, -h, -V, -n, -v, -f. */
static enum gk_conf_action
scan_args(struct gk_conf *c, int argc, char **argv, struct option *lo,
    const char *so, int *verbose, char *errs, size_t errslen)
{
	int ch, k;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (ch == '?' || ch == ':') {
			snprintf(errs, errslen, "%s: unknown option or missing "
			    "value (see --help)\n", argv[optind - 1]);
			return GK_CONF_ERROR;
		}
		switch ((k = key_of_short(ch))) {
		case K_HELP:
			return GK_CONF_HELP;
		case K_VERSION:
			return GK_CONF_VERSION;
		case K_CONFIG:
			if (gk_conf_set_string("config", c->config_path,
			    sizeof(c->config_path), optarg, errs,
			    errslen) == -1)
				return GK_CONF_ERROR;
			c->config_given = true;
			break;
		case K_CHECK:
			c->check_only = true;
			break;
		case K_VERBOSE:
			(*verbose)++;
			break;
		case K_FOREGROUND:
			c->foreground = true;
			break;
		default:
			break;
		}
	}
	if (optind < argc) {
		snprintf(errs, errslen, "unexpected argument '%s' (see "
		    "--help)\n", argv[optind]);
		return GK_CONF_ERROR;
	}
	return GK_CONF_RUN;
}

/* Every TCP listener on the listen address needs its own port. */
static int
check_ports(const struct gk_conf *c, char *errs, size_t errslen)
{
	const struct {
		const char	*key;
		uint16_t	 port;
	} p[] = {
		{ "dns-port", c->dns_port },
		{ "socks-port", c->socks_port },
		{ "http-port", c->http_port },
		{ "transparent-port", c->transparent_port },
	};
	size_t i, j, n = sizeof(p) / sizeof(p[0]);

	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (p[i].port == 0 || p[i].port != p[j].port)
				continue;
			snprintf(errs, errslen, "%s and %s are both %u: each "
			    "listener needs its own port\n", p[i].key, p[j].key,
			    p[i].port);
			return -1;
		}
	}
	return 0;
}

enum gk_conf_action
gk_conf_load(struct gk_conf *c, int argc, char **argv, char *errs,
    size_t errslen)
{
	struct option lo[K__MAX + 1];
	char so[2 * K__MAX + 2], err[512];
	enum gk_conf_action act;
	int ch, k, verbose = 0;

	errs[0] = '\0';
	gk_conf_defaults(c);
	build_longopts(lo, so, sizeof(so));
	act = scan_args(c, argc, argv, lo, so, &verbose, errs, errslen);
	if (act != GK_CONF_RUN)
		return act;
	if (gk_conf_load_file(c, c->config_path, c->config_given, errs,
	    errslen) > 0)
		return GK_CONF_ERROR;
	optind = 1;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		k = key_of_short(ch);
		if (k < 0 || !gk_conf_keys[k].arg || k == K_CONFIG)
			continue;
		if (gk_conf_set(c, gk_conf_keys[k].name, optarg, SRC_CLI, err,
		    sizeof(err)) == -1) {
			snprintf(errs, errslen, "--%s\n", err);
			return GK_CONF_ERROR;
		}
	}
	c->log_level += verbose;
	if (c->log_level > LOG_LVL_DEBUG)
		c->log_level = LOG_LVL_DEBUG;
	if (check_ports(c, errs, errslen) == -1)
		return GK_CONF_ERROR;
	return GK_CONF_RUN;
}

size_t
gk_conf_keep_running(struct gk_conf *nc, const struct gk_conf *run)
{
	char names[512] = "";
	size_t n = 0;
	int k;

	for (k = 0; k < K__MAX; k++) {
		if (gk_conf_keys[k].apply != KEY_RESTART ||
		    !gk_conf_keep_key((enum gk_conf_key)k, nc, run))
			continue;
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
		    "%s%s", n > 0 ? ", " : "", gk_conf_keys[k].name);
		n++;
	}
	if (n == 1)
		log_warnx("%s changed: it takes effect only after a restart; "
		    "the running value is kept", names);
	else if (n > 1)
		log_warnx("%s changed: they take effect only after a restart; "
		    "the running values are kept", names);
	return n;
}
