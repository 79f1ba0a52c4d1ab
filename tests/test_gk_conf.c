/*
 * Config file and command line: every key, every range, file:line errors;
 * what a reload (SIGHUP) keeps and what it changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_conf.h"

struct set_case {
	const char	*key;
	const char	*value;
	bool		 ok;
	const char	*errpart;	/* substring of the message */
};

static const struct set_case set_cases[] = {
	{ "listen", "10.143.0.1", true, NULL },
	{ "listen", "::1", true, NULL },
	{ "listen", "10.143.0", false, "not an IP address" },
	{ "dns-port", "1", true, NULL },
	{ "dns-port", "65535", true, NULL },
	{ "dns-port", "0", false, "1-65535" },
	{ "dns-port", "65536", false, "1-65535" },
	{ "dns-port", "-1", false, "not a port" },
	{ "dns-port", "53x", false, "not a port" },
	{ "dns-port", "", false, "not a port" },
	{ "socks-port", "1080", true, NULL },
	{ "http-port", "99999", false, "not a port" },
	{ "cage-subnet", "10.143.0.0/16", true, NULL },
	{ "cage-subnet", "10.143.0.1/16", false, "host bits" },
	{ "cage-subnet", "10.143.0.0/31", false, "prefix of 8 to 30" },
	{ "cage-subnet", "10.143.0.0", false, "IPv4 CIDR" },
	{ "cage-subnet", "fd00::/64", false, "IPv4 CIDR" },
	{ "transparent-port", "15001", true, NULL },
	{ "transparent-port", "off", true, NULL },
	{ "transparent-port", "0", false, "not a port" },
	{ "transparent-port", "on", false, "not a port" },
	{ "plumbing", "auto", true, NULL },
	{ "plumbing", "on", true, NULL },
	{ "plumbing", "off", true, NULL },
	{ "plumbing", "yes", false, "not one of auto, on, off" },
	{ "plumbing", "", false, "not one of auto, on, off" },
	{ "upstream", "192.0.2.53", true, NULL },
	{ "upstream", "192.0.2.53:5353", true, NULL },
	{ "upstream", "[2001:db8::53]:53", true, NULL },
	{ "upstream", "2001:db8::53", true, NULL },
	{ "upstream", "resolver.example", false, "IP[:PORT]" },
	{ "upstream", "192.0.2.53:0", false, "IP[:PORT]" },
	{ "ttl-cap", "1", true, NULL },
	{ "ttl-cap", "86400", true, NULL },
	{ "ttl-cap", "0", false, "1 to 86400" },
	{ "ttl-cap", "86401", false, "1 to 86400" },
	{ "ttl-cap", "1e3", false, "1 to 86400" },
	{ "upstream-timeout", "0.1", true, NULL },
	{ "upstream-timeout", "30", true, NULL },
	{ "upstream-timeout", "0.05", false, "0.1 to 30" },
	{ "upstream-timeout", "nan", false, "0.1 to 30" },
	{ "upstream-timeout", "31", false, "0.1 to 30" },
	{ "cache-size", "0", true, NULL },
	{ "cache-size", "10000001", false, "0 to 10000000" },
	{ "metrics", "off", true, NULL },
	{ "metrics", "127.0.0.1:9477", true, NULL },
	{ "metrics", "[::1]:9477", true, NULL },
	{ "metrics", "127.0.0.1", false, "ADDR:PORT" },
	{ "log-level", "debug", true, NULL },
	{ "log-level", "loud", false, "error, warn, info, debug" },
	{ "audit-log", "-", true, NULL },
	{ "audit-log", "", false, "empty value" },
	{ "control", "/run/gk.sock", true, NULL },
	{ "handshake-timeout", "1", true, NULL },
	{ "pin-grace", "0", true, NULL },
	{ "pin-grace", "86401", false, "0 to 86400" },
	{ "handshake-timeout", "0", false, "1 to 120" },
	{ "handshake-timeout", "121", false, "1 to 120" },
	{ "cage-dns-rate", "0", true, NULL },
	{ "cage-dns-rate", "10000000", true, NULL },
	{ "cage-dns-rate", "10000001", false, "from 0 (no limit) to 10000000" },
	{ "cage-dns-rate", "-1", false, "from 0 (no limit)" },
	{ "cage-dns-upstream", "100001", false, "to 100000" },
	{ "cage-dns-upstream-rate", "5x", false, "from 0 (no limit)" },
	{ "cage-dns-tcp", "", false, "from 0 (no limit)" },
	{ "cage-handshakes", "1000000", true, NULL },
	{ "cage-tunnels", "1000001", false, "to 1000000" },
	{ "cage-audit-rate", "0", true, NULL },
	{ "audit-allowed", "0", true, NULL },
	{ "audit-allowed", "1000000", true, NULL },
	{ "audit-allowed", "1000001", false, "from 0 (none) to 1000000" },
	{ "audit-allowed", "0.5", false, "audit-allowed: '0.5' is not" },
	{ "control-connections", "auto", true, NULL },
	{ "control-connections", "1", true, NULL },
	{ "control-connections", "1048576", true, NULL },
	{ "control-connections", "0", false, "from 1 to 1048576, or auto" },
	{ "control-connections", "1048577", false, "from 1 to 1048576" },
	{ "control-connections", "-4", false, "'-4' is not a number" },
	{ "control-connections", "4k", false, "control-connections: '4k'" },
	{ "control-connections", "", false, "or auto" },
	{ "control-connections", "Auto", false, "or auto" },
	{ "control-connections", " 4", false, "or auto" },
	{ "nonsense", "1", false, "unknown key 'nonsense'" },
	{ "foreground", "1", false, "command-line option" },
};

static void
test_set_table(void **state)
{
	char err[512];
	struct gk_conf c;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(set_cases) / sizeof(set_cases[0]); i++) {
		const struct set_case *t = &set_cases[i];

		gk_conf_defaults(&c);
		err[0] = '\0';
		rc = gk_conf_set(&c, t->key, t->value, 0, err, sizeof(err));
		if ((rc == 0) != t->ok)
			fail_msg("%s = '%s': expected %s, got '%s'", t->key,
			    t->value, t->ok ? "ok" : "error", err);
		if (!t->ok && strstr(err, t->errpart) == NULL)
			fail_msg("%s = '%s': message '%s' lacks '%s'", t->key,
			    t->value, err, t->errpart);
	}
}

static void
test_defaults(void **state)
{
	char buf[GK_ADDR_STRLEN];
	struct gk_conf c;

	(void)state;
	gk_conf_defaults(&c);
	assert_string_equal(gk_addr_ntop(&c.listen, buf, sizeof(buf)),
	    "10.143.0.1");
	assert_int_equal(c.dns_port, 53);
	assert_int_equal(c.socks_port, 1080);
	assert_int_equal(c.http_port, 3128);
	assert_int_equal(c.ttl_cap, 60);
	assert_int_equal(c.upstream_timeout_ms, 2000);
	assert_int_equal(c.cage_prefix, 16);
	assert_int_equal(c.metrics_port, 9477);
	assert_int_equal(c.nupstreams, 0);
	assert_int_equal(c.handshake_timeout_ms, 5000);
	assert_int_equal(c.pin_grace, 600);
	assert_int_equal(c.limits.dns_rate, 5000);
	assert_int_equal(c.limits.dns_upstream, 64);
	assert_int_equal(c.limits.dns_upstream_rate, 200);
	assert_int_equal(c.limits.dns_tcp, 16);
	assert_int_equal(c.limits.handshakes, 256);
	assert_int_equal(c.limits.tunnels, 1024);
	assert_int_equal(c.limits.audit_rate, 50);
	assert_int_equal(c.control_conns, 0);		/* auto */
	assert_string_equal(c.control, "/run/gatekeeper/control.sock");
	assert_false(c.metrics_off);
}

static void
test_file_errors_have_lines(void **state)
{
	const char *text =
	    "# comment\n"
	    "ttl-cap = 30\n"
	    "\n"
	    "dns-port = 0\n"
	    "just words\n"
	    "ttl-cap = 40\n"
	    "upstream = 192.0.2.1\n"
	    "upstream = 192.0.2.2:5353   # trailing comment\n"
	    "log-level = \"debug\"\n"
	    "bogus = 1\n";
	char errs[GK_CONF_ERRLEN] = "";
	struct gk_conf c;
	int n;

	(void)state;
	gk_conf_defaults(&c);
	n = gk_conf_parse_text(&c, "t.conf", text, strlen(text), errs,
	    sizeof(errs));
	assert_int_equal(n, 4);
	assert_non_null(strstr(errs, "t.conf:4: dns-port"));
	assert_non_null(strstr(errs, "t.conf:5: expected 'key = value'"));
	assert_non_null(strstr(errs, "t.conf:6: duplicate key 'ttl-cap'"));
	assert_non_null(strstr(errs, "t.conf:10: unknown key 'bogus'"));
	assert_int_equal(c.ttl_cap, 30);
	assert_int_equal(c.nupstreams, 2);
	assert_int_equal(c.upstreams[1].port, 5353);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);
}

static void
test_file_nul_and_long_line(void **state)
{
	char text[5000], errs[GK_CONF_ERRLEN] = "";
	struct gk_conf c;

	(void)state;
	memset(text, 'a', sizeof(text));
	memcpy(text, "ttl-cap = 5\0x\n", 14);
	text[sizeof(text) - 1] = '\n';
	gk_conf_defaults(&c);
	assert_int_equal(gk_conf_parse_text(&c, "f", text, sizeof(text), errs,
	    sizeof(errs)), 2);
	assert_non_null(strstr(errs, "f:1: NUL byte"));
	assert_non_null(strstr(errs, "f:2: line too long"));
}

static void
test_upstream_limit(void **state)
{
	char err[256];
	struct gk_conf c;
	int i;

	(void)state;
	gk_conf_defaults(&c);
	for (i = 0; i < GK_CONF_MAX_UPSTREAMS; i++)
		assert_int_equal(gk_conf_set(&c, "upstream", "192.0.2.1", 0,
		    err, sizeof(err)), 0);
	assert_int_equal(gk_conf_set(&c, "upstream", "192.0.2.1", 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 8"));
	/* the command line replaces the file's list */
	assert_int_equal(gk_conf_set(&c, "upstream", "192.0.2.9", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(c.nupstreams, 1);
}

/* max-upload: repeatable in the file, replaced by the command line,
 * "off" empties it, a bad one is named. */
static void
test_max_upload(void **state)
{
	const char *text = "max-upload = 10M\n"
	    "max-upload = 1M@*.example.com\n"
	    "max-upload = 1M@10.0.0.0/8\n";
	char errs[GK_CONF_ERRLEN] = "", err[256];
	struct gk_conf c;

	(void)state;
	gk_conf_defaults(&c);
	assert_int_equal(c.nuploads, 0);
	assert_int_equal(gk_conf_parse_text(&c, "t.conf", text, strlen(text),
	    errs, sizeof(errs)), 1);
	assert_non_null(strstr(errs, "t.conf:3: max-upload: upload budget "
	    "'1M@10.0.0.0/8'"));
	assert_int_equal(c.nuploads, 2);
	assert_true(c.uploads[0].all);
	assert_int_equal(c.uploads[0].bytes, 10 << 20);
	assert_string_equal(c.uploads[1].pattern, "*.example.com");
	assert_int_equal(gk_conf_set(&c, "max-upload", "5K", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(c.nuploads, 1);
	assert_int_equal(gk_conf_set(&c, "max-upload", "off", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(c.nuploads, 0);
}

static char *
write_tmp(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/gkconf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void
test_load_order(void **state)
{
	char errs[GK_CONF_ERRLEN];
	char *path = write_tmp("ttl-cap = 30\nupstream = 192.0.2.1\n"
	    "dns-port = 5353\n");
	char *argv[] = { "gatekeeperd", "-c", path, "--ttl-cap", "10",
	    "-v", NULL };
	struct gk_conf c;

	(void)state;
	assert_int_equal(gk_conf_load(&c, 6, argv, errs, sizeof(errs)),
	    GK_CONF_RUN);
	assert_int_equal(c.ttl_cap, 10);	/* command line wins */
	assert_int_equal(c.dns_port, 5353);	/* from the file */
	assert_int_equal(c.nupstreams, 1);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);
	unlink(path);
}

static void
test_load_errors(void **state)
{
	char errs[GK_CONF_ERRLEN];
	char *a1[] = { "gatekeeperd", "--ttl-cap", "0", NULL };
	char *a2[] = { "gatekeeperd", "--no-such", NULL };
	char *a3[] = { "gatekeeperd", "-c", "/nonexistent/gk.conf", NULL };
	char *a4[] = { "gatekeeperd", "extra", NULL };
	char *a5[] = { "gatekeeperd", "--help", NULL };
	char *a6[] = { "gatekeeperd", "-c", "/nonexistent/x", "--version",
	    NULL };
	char *a7[] = { "gatekeeperd", "-c", "/dev/null", "--http-port", "53",
	    NULL };
	char *a8[] = { "gatekeeperd", "-c", "/dev/null", "--socks-port",
	    "15001", "--transparent-port", "off", NULL };
	struct gk_conf c;

	(void)state;
	assert_int_equal(gk_conf_load(&c, 3, a1, errs, sizeof(errs)),
	    GK_CONF_ERROR);
	assert_non_null(strstr(errs, "--ttl-cap: '0'"));
	assert_int_equal(gk_conf_load(&c, 2, a2, errs, sizeof(errs)),
	    GK_CONF_ERROR);
	assert_non_null(strstr(errs, "--no-such"));
	assert_int_equal(gk_conf_load(&c, 3, a3, errs, sizeof(errs)),
	    GK_CONF_ERROR);
	assert_non_null(strstr(errs, "/nonexistent/gk.conf"));
	assert_int_equal(gk_conf_load(&c, 2, a4, errs, sizeof(errs)),
	    GK_CONF_ERROR);
	assert_non_null(strstr(errs, "'extra'"));
	/* two listeners on one port */
	assert_int_equal(gk_conf_load(&c, 5, a7, errs, sizeof(errs)),
	    GK_CONF_ERROR);
	assert_string_equal(errs, "dns-port and http-port are both 53: each "
	    "listener needs its own port\n");
	/* a port that is off clashes with nothing */
	assert_int_equal(gk_conf_load(&c, 7, a8, errs, sizeof(errs)),
	    GK_CONF_RUN);
	assert_int_equal(gk_conf_load(&c, 2, a5, errs, sizeof(errs)),
	    GK_CONF_HELP);
	assert_int_equal(gk_conf_load(&c, 4, a6, errs, sizeof(errs)),
	    GK_CONF_VERSION);
}

static void
test_usage_lists_every_option(void **state)
{
	static const char *opts[] = { "--config", "--control", "--listen",
	    "--dns-port", "--socks-port", "--http-port", "--cage-subnet",
	    "--plumbing", "--transparent-port",
	    "--upstream", "--ttl-cap", "--upstream-timeout", "--cache-size",
	    "--metrics", "--audit-log", "--log-level", "--foreground",
	    "--check", "--help", "--version", "default: 60",
	    "default: 127.0.0.1:9477" };
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	gk_conf_usage(f);
	fclose(f);
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strstr(buf, opts[i]) == NULL)
			fail_msg("--help lacks %s", opts[i]);
	free(buf);
}

/*
 * The log goes to stderr: catch what one call writes. Returns the text
 * (static) and the number of lines in *nlines.
 */
static int	 cap_saved = -1;
static FILE	*cap_file;

static void
capture_start(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	assert_non_null(cap_file);
	cap_saved = dup(STDERR_FILENO);
	assert_true(cap_saved >= 0);
	assert_true(dup2(fileno(cap_file), STDERR_FILENO) >= 0);
}

static const char *
capture_end(int *nlines)
{
	static char text[4096];
	size_t n, i;

	fflush(stderr);
	assert_true(dup2(cap_saved, STDERR_FILENO) >= 0);
	close(cap_saved);
	rewind(cap_file);
	n = fread(text, 1, sizeof(text) - 1, cap_file);
	text[n] = '\0';
	fclose(cap_file);
	for (*nlines = 0, i = 0; i < n; i++)
		if (text[i] == '\n')
			(*nlines)++;
	return text;
}

static void
set_config(struct gk_conf *c)
{
	snprintf(c->config_path, sizeof(c->config_path), "/etc/other.conf");
	c->config_given = true;
}

static void
set_foreground(struct gk_conf *c)
{
	c->foreground = true;
}

static void
set_check(struct gk_conf *c)
{
	c->check_only = true;
}

/* Each key changed from its default; the command-line ones by hand. */
struct keep_case {
	const char	*key;
	const char	*value;
	void		(*set)(struct gk_conf *);	/* no value */
	bool		 restart;	/* else SIGHUP applies it */
};

static const struct keep_case keep_cases[] = {
	{ "config", NULL, set_config, true },
	{ "control", "/run/other.sock", NULL, true },
	{ "listen", "10.143.0.9", NULL, true },
	{ "listen", "::1", NULL, true },
	{ "dns-port", "5353", NULL, true },
	{ "socks-port", "1081", NULL, true },
	{ "http-port", "8080", NULL, true },
	{ "transparent-port", "off", NULL, true },
	{ "transparent-port", "15002", NULL, true },
	{ "cage-subnet", "10.99.0.0/16", NULL, true },
	{ "cage-subnet", "10.143.0.0/20", NULL, true },
	{ "plumbing", "off", NULL, true },
	{ "metrics", "off", NULL, true },
	{ "metrics", "127.0.0.1:9478", NULL, true },
	{ "metrics", "[::1]:9477", NULL, true },
	{ "audit-log", "/var/log/gk.json", NULL, true },
	{ "foreground", NULL, set_foreground, true },
	{ "check", NULL, set_check, true },
	{ "upstream", "192.0.2.53", NULL, false },
	{ "ttl-cap", "5", NULL, false },
	{ "upstream-timeout", "0.5", NULL, false },
	{ "cache-size", "0", NULL, false },
	{ "connect-timeout", "3", NULL, false },
	{ "idle-timeout", "0", NULL, false },
	{ "log-level", "debug", NULL, false },
	{ "handshake-timeout", "9", NULL, false },
	{ "pin-grace", "0", NULL, false },
	{ "cage-dns-rate", "0", NULL, false },
	{ "cage-dns-upstream", "7", NULL, false },
	{ "cage-dns-upstream-rate", "7", NULL, false },
	{ "cage-dns-tcp", "7", NULL, false },
	{ "cage-handshakes", "7", NULL, false },
	{ "cage-tunnels", "7", NULL, false },
	{ "cage-audit-rate", "7", NULL, false },
	{ "audit-allowed", "10", NULL, false },
	{ "control-connections", "4", NULL, false },
};

static void
keep_one(const struct keep_case *t)
{
	struct gk_conf run, nc, loaded;
	char err[512], want[256];
	const char *log;
	size_t n;
	int lines;

	gk_conf_defaults(&run);
	gk_conf_defaults(&nc);
	if (t->set != NULL)
		t->set(&nc);
	else if (gk_conf_set(&nc, t->key, t->value, 0, err, sizeof(err)))
		fail_msg("%s = '%s': %s", t->key, t->value, err);
	memcpy(&loaded, &nc, sizeof(nc));
	if (memcmp(&nc, &run, sizeof(nc)) == 0)
		fail_msg("%s = '%s' is the default", t->key, t->value);
	capture_start();
	n = gk_conf_keep_running(&nc, &run);
	log = capture_end(&lines);
	snprintf(want, sizeof(want), ": %s changed: it takes effect only "
	    "after a restart; the running value is kept\n", t->key);
	if (t->restart && (n != 1 || lines != 1 || !strstr(log, want)))
		fail_msg("%s: %zu changed, log '%s'", t->key, n, log);
	if (t->restart && memcmp(&nc, &run, sizeof(nc)) != 0)
		fail_msg("%s: the running value was not kept", t->key);
	if (!t->restart && (n != 0 || lines != 0))
		fail_msg("%s: %zu changed, log '%s'", t->key, n, log);
	if (!t->restart && memcmp(&nc, &loaded, sizeof(nc)) != 0)
		fail_msg("%s: the new value was not taken", t->key);
}

static void
test_keep_each_key(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(keep_cases) / sizeof(keep_cases[0]); i++)
		keep_one(&keep_cases[i]);
}

/* A new key cannot be forgotten: --help lists every key. */
static void
test_keep_cases_cover_every_key(void **state)
{
	char *buf = NULL, *line, *save = NULL, name[64];
	size_t len = 0, i;
	bool found;
	FILE *f;

	(void)state;
	assert_non_null(f = open_memstream(&buf, &len));
	gk_conf_usage(f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "  -%*c, --%63[a-z-]", name) != 1 ||
		    strcmp(name, "verbose") == 0 || strcmp(name, "help") == 0 ||
		    strcmp(name, "version") == 0)
			continue;
		for (found = false, i = 0; !found &&
		    i < sizeof(keep_cases) / sizeof(keep_cases[0]); i++)
			found = strcmp(keep_cases[i].key, name) == 0;
		if (!found)
			fail_msg("--%s has no reload case", name);
	}
	free(buf);
}

/* One warning for several keys; reloadable keys still change. */
static void
test_keep_names_each_key(void **state)
{
	const char *text = "listen = 10.143.0.9\nttl-cap = 5\n"
	    "metrics = 127.0.0.1:9478\nupstream = 192.0.2.53\n"
	    "audit-log = -\n";
	char errs[GK_CONF_ERRLEN] = "";
	struct gk_conf run, nc;
	const char *log;
	int lines;

	(void)state;
	gk_conf_defaults(&run);
	gk_conf_defaults(&nc);
	assert_int_equal(gk_conf_parse_text(&nc, "t", text, strlen(text), errs,
	    sizeof(errs)), 0);
	capture_start();
	assert_int_equal(gk_conf_keep_running(&nc, &run), 3);
	log = capture_end(&lines);
	assert_int_equal(lines, 1);
	assert_non_null(strstr(log, ": listen, metrics, audit-log changed: "
	    "they take effect only after a restart; the running values are "
	    "kept\n"));
	assert_true(gk_addr_eq(&nc.listen, &run.listen));
	assert_int_equal(nc.metrics_port, 9477);
	assert_string_equal(nc.audit_log, "");
	assert_int_equal(nc.ttl_cap, 5);
	assert_int_equal(nc.nupstreams, 1);
}

/* metrics off is one value, whatever address came before it. */
static void
test_keep_metrics_off(void **state)
{
	struct gk_conf run, nc;
	char err[256];

	(void)state;
	gk_conf_defaults(&run);
	gk_conf_defaults(&nc);
	assert_int_equal(gk_conf_set(&run, "metrics", "off", 0, err,
	    sizeof(err)), 0);
	assert_int_equal(gk_conf_set(&nc, "metrics", "192.0.2.1:80", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(gk_conf_set(&nc, "metrics", "off", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(gk_conf_keep_running(&nc, &run), 0);
}

static void
rewrite(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	fclose(f);
}

/*
 * hup_cb's sequence: load, keep, replace the running config. A second
 * SIGHUP with the same file warns again; going back warns about nothing.
 */
static void
test_keep_two_reloads(void **state)
{
	char errs[GK_CONF_ERRLEN];
	char *path = write_tmp("metrics = 127.0.0.1:9477\nttl-cap = 30\n");
	char *argv[] = { "gatekeeperd", "-c", path, NULL };
	struct gk_conf run, nc;
	const char *log;
	int i, lines;

	(void)state;
	assert_int_equal(gk_conf_load(&run, 3, argv, errs, sizeof(errs)),
	    GK_CONF_RUN);
	rewrite(path, "metrics = 127.0.0.1:9478\nttl-cap = 5\n"
	    "audit-log = /tmp/gk-audit.json\n");
	for (i = 0; i < 2; i++) {
		assert_int_equal(gk_conf_load(&nc, 3, argv, errs,
		    sizeof(errs)), GK_CONF_RUN);
		capture_start();
		assert_int_equal(gk_conf_keep_running(&nc, &run), 2);
		log = capture_end(&lines);
		assert_int_equal(lines, 1);
		assert_non_null(strstr(log, ": metrics, audit-log changed: "));
		assert_int_equal(nc.metrics_port, 9477);
		assert_string_equal(nc.audit_log, "");
		assert_int_equal(nc.ttl_cap, 5);
		run = nc;
	}
	rewrite(path, "metrics = 127.0.0.1:9477\nttl-cap = 30\n");
	assert_int_equal(gk_conf_load(&nc, 3, argv, errs, sizeof(errs)),
	    GK_CONF_RUN);
	capture_start();
	assert_int_equal(gk_conf_keep_running(&nc, &run), 0);
	log = capture_end(&lines);
	assert_int_equal(lines, 0);
	assert_int_equal(nc.ttl_cap, 30);
	unlink(path);
}

/* control-connections in a file: a count, auto, every bad value and a
 * duplicate named by file:line. */
static void
test_control_conns_file(void **state)
{
	static const char *const bad[] = { "0", "none", "-1", "99999999",
	    "12 000", "0x10" };
	char errs[GK_CONF_ERRLEN] = "", text[128];
	const char *t;
	struct gk_conf c;
	size_t i;

	(void)state;
	gk_conf_defaults(&c);
	t = "control-connections = 12000\n";
	assert_int_equal(gk_conf_parse_text(&c, "gk.conf", t, strlen(t), errs,
	    sizeof(errs)), 0);
	assert_int_equal(c.control_conns, 12000);
	t = "control-connections = auto # the default\n";
	assert_int_equal(gk_conf_parse_text(&c, "gk.conf", t, strlen(t), errs,
	    sizeof(errs)), 0);
	assert_int_equal(c.control_conns, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gk_conf_defaults(&c);
		errs[0] = '\0';
		snprintf(text, sizeof(text), "\ncontrol-connections = %s\n",
		    bad[i]);
		assert_int_equal(gk_conf_parse_text(&c, "gk.conf", text,
		    strlen(text), errs, sizeof(errs)), 1);
		if (strstr(errs, "gk.conf:2: control-connections: '") == NULL ||
		    strstr(errs, "from 1 to 1048576, or auto") == NULL)
			fail_msg("'%s': %s", bad[i], errs);
		assert_int_equal(c.control_conns, 0);
	}
	errs[0] = '\0';
	t = "control-connections = 4\ncontrol-connections = 5\n";
	assert_int_equal(gk_conf_parse_text(&c, "gk.conf", t, strlen(t), errs,
	    sizeof(errs)), 1);
	assert_non_null(strstr(errs, "gk.conf:2: duplicate key "
	    "'control-connections'\n"));
	assert_int_equal(c.control_conns, 4);
}

/* --help's SIGHUP paragraph comes from the same table. */
static void
test_usage_reload_keys(void **state)
{
	char *buf = NULL, *sig;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(f = open_memstream(&buf, &len));
	gk_conf_usage(f);
	fclose(f);
	assert_non_null(sig = strstr(buf, "\nSignals:"));
	assert_non_null(strstr(sig, "upstream, ttl-cap, upstream-timeout, "
	    "cache-size, connect-timeout,\n  idle-timeout, log-level, "
	    "handshake-timeout, pin-grace, cage-dns-rate,\n"));
	assert_non_null(strstr(sig, "cage-handshakes, cage-tunnels, "
	    "cage-audit-rate, audit-allowed, policy,\n  max-upload, "
	    "control-connections;\n"));
	assert_null(strstr(sig, "metrics"));
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_file_errors_have_lines),
		cmocka_unit_test(test_file_nul_and_long_line),
		cmocka_unit_test(test_upstream_limit),
		cmocka_unit_test(test_max_upload),
		cmocka_unit_test(test_load_order),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_usage_lists_every_option),
		cmocka_unit_test(test_keep_each_key),
		cmocka_unit_test(test_keep_cases_cover_every_key),
		cmocka_unit_test(test_keep_names_each_key),
		cmocka_unit_test(test_keep_metrics_off),
		cmocka_unit_test(test_keep_two_reloads),
		cmocka_unit_test(test_usage_reload_keys),
		cmocka_unit_test(test_control_conns_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
