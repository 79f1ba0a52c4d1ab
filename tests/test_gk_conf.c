/*
 * Config file and command line: every key, every range, file:line errors.
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_file_errors_have_lines),
		cmocka_unit_test(test_file_nul_and_long_line),
		cmocka_unit_test(test_upstream_limit),
		cmocka_unit_test(test_load_order),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_usage_lists_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
