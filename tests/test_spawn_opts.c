/*
 * gk-run's command line, allow-files and environment filter: tables of
 * argv vectors with the status and a piece of the message expected, and
 * checks of every field a successful parse fills.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

#define MAXARGS	64

/* Parse a NULL-terminated list (argv[0] is added). */
static enum spawn_opt_status
parse(struct spawn_opts *o, const char *env_control, char *err,
    size_t errlen, ...)
{
	static char *argv[MAXARGS + 2];
	const char *a;
	va_list ap;
	int argc = 0;

	argv[argc++] = (char *)"gk-run";
	va_start(ap, errlen);
	while ((a = va_arg(ap, const char *)) != NULL && argc < MAXARGS)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return spawn_opts_parse(argc, argv, env_control, o, err, errlen);
}

struct ecase {
	const char	*args[8];
	const char	*want;		/* in the message */
};

static const struct ecase errors[] = {
	{ { NULL }, "no command given; usage: gk-run [OPTIONS] -- COMMAND" },
	{ { "--", NULL }, "no command given" },
	{ { "-v", NULL }, "no command given" },
	{ { "--bogus", "--", "true", NULL },
	    "unknown option '--bogus'; see gk-run --help" },
	{ { "-x", "true", NULL }, "unknown option '-x'" },
	{ { "-vx", "true", NULL }, "unknown option '-x'" },
	{ { "-v\033x", "true", NULL }, "unknown option character 0x1b" },
	{ { "--\033", "true", NULL }, "unknown option '--?'" },
	{ { "--bogus", "--help", NULL }, "unknown option '--bogus'" },
	{ { "--net", NULL }, "--net needs a value; see gk-run --help" },
	{ { "--timeout", NULL }, "--timeout needs a value" },
	{ { "-a", NULL }, "-a/--allow needs a PATTERN" },
	{ { "--allow", NULL }, "-a/--allow needs a PATTERN" },
	{ { "--preset", "../x", "--", "true", NULL },
	    "'../x' is not a preset name" },
	{ { "--preset", "", "--", "true", NULL }, "is not a preset name" },
	{ { "--preset", "Npm", "--", "true", NULL }, "is not a preset name" },
	{ { "--events-fd", "3x", "--", "true", NULL },
	    "is not a descriptor number (such as 3, open for writing)" },
	{ { "--decisions-fd", "", "--", "true", NULL },
	    "--decisions-fd: '' is not a descriptor number (such as 3, open "
	    "for reading)" },
	{ { "--ask-timeout", "0", "true", NULL },
	    "--ask-timeout: '0' is not a whole number of seconds from 1 to "
	    "3600" },
	{ { "--ask-timeout", "3601", "true", NULL },
	    "--ask-timeout: '3601' is not" },
	{ { "--ask-timeout", "1m", "true", NULL },
	    "--ask-timeout: '1m' is not" },
	{ { "--ask-timeout", "-5", "true", NULL }, "--ask-timeout: '-5' is" },
	{ { "--ask-save", "", "true", NULL }, "--ask-save: the file is empty" },
	{ { "--ask=yes", "true", NULL }, "--ask does not take a value" },
	{ { "--label", "", "true", NULL }, "--label: '' is not a label: 1 to "
	    "64 bytes of printable ASCII" },
	{ { "--label", "a\nb", "true", NULL }, "--label: 'a?b' is not" },
	{ { "--label", "x", "--label", "y", "true", NULL },
	    "--label given twice" },
	{ { "--ask", "--ask", "true", NULL }, "--ask given twice" },
	{ { "--ask-save", "a", "--ask-save", "b", "true", NULL },
	    "--ask-save given twice" },
	{ { "--memory", "lots", "--", "true", NULL }, "--memory: bad size "
	    "\"lots\"" },
	{ { "--memory", "1M", "--", "true", NULL }, "out of range" },
	{ { "--pids", "0", "--", "true", NULL }, "--pids: '0' is not a "
	    "number of processes from 1 to 4194304" },
	{ { "--cpus", "two", "--", "true", NULL }, "--cpus: bad CPU count" },
	{ { "--limits", "loose", "--", "true", NULL }, "--limits: 'loose' is "
	    "not valid" },
	{ { "--reattach-timeout", "-1", "--", "true", NULL },
	    "is not a whole number of seconds from 0 (never)" },
	{ { "--dry-run=yes", "true", NULL },
	    "--dry-run does not take a value" },
	{ { "--help=1", NULL }, "--help does not take a value" },
	{ { "--net", "open", "true", NULL },
	    "--net: 'open' is not valid; use gated, none or host" },
	{ { "--net", "", "true", NULL }, "--net: '' is not valid" },
	{ { "--fs", "ro", "true", NULL },
	    "--fs: 'ro' is not valid; use sandbox or host" },
	{ { "--cache", "user", "true", NULL },
	    "--cache: 'user' is not valid; use private, shared, tmp or host" },
	{ { "--cache", "tmp", "--cache", "host", "true", NULL },
	    "--cache given twice" },
	{ { "--socket", "", "true", NULL }, "--socket: the path is empty" },
	{ { "--seccomp", "strict", "true", NULL },
	    "--seccomp: 'strict' is not valid; use default, relaxed or off" },
	{ { "--transparent", "yes", "true", NULL },
	    "--transparent: 'yes' is not valid; use on or off" },
	{ { "--transparent", "on", "--transparent", "off", "true", NULL },
	    "--transparent given twice" },
	{ { "--platform", "windows", "true", NULL },
	    "--platform: 'windows' is not valid; use linux or macos" },
	{ { "--timeout", "0", "true", NULL },
	    "--timeout: '0' is not a whole number of seconds from 1 to "
	    "31536000" },
	{ { "--timeout", "-1", "true", NULL }, "--timeout: '-1' is not" },
	{ { "--timeout", "1.5", "true", NULL }, "--timeout: '1.5' is not" },
	{ { "--timeout", "", "true", NULL }, "--timeout: '' is not" },
	{ { "--timeout", "10s", "true", NULL }, "--timeout: '10s' is not" },
	{ { "--timeout", "31536001", "true", NULL }, "'31536001' is not" },
	{ { "--timeout", "99999999999999999999999", "true", NULL },
	    "is not a whole number" },
	{ { "--env", "FOO", "true", NULL },
	    "--env: 'FOO' is not KEY=VALUE with KEY made of letters" },
	{ { "--env", "=x", "true", NULL }, "--env: '=x' is not KEY=VALUE" },
	{ { "--env", "1A=b", "true", NULL }, "--env: '1A=b' is not" },
	{ { "--env", "A-B=c", "true", NULL }, "--env: 'A-B=c' is not" },
	{ { "--ro", "", "true", NULL }, "--ro: the path is empty" },
	{ { "--rw", "", "true", NULL }, "--rw: the path is empty" },
	{ { "--hide", "", "true", NULL }, "--hide: the path is empty" },
	{ { "--cwd", "", "true", NULL }, "--cwd: the path is empty" },
	{ { "--allow-file", "", "true", NULL },
	    "--allow-file: the path is empty" },
	{ { "--control", "", "true", NULL },
	    "--control: '' is not a usable socket path (1 to 107 bytes)" },
	{ { "--control", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock",
	    "true", NULL }, "is not a usable socket path" },
	{ { "--allow", "*.com", "true", NULL },
	    "invalid pattern '*.com': com is a public suffix" },
	{ { "-a", "foo bar", "true", NULL }, "invalid pattern 'foo bar'" },
	{ { "-a", "", "true", NULL }, "invalid pattern ''" },
	{ { "--net", "none", "--net", "host", "true", NULL },
	    "--net given twice; give it once" },
	{ { "--fs", "host", "--fs", "host", "true", NULL },
	    "--fs given twice" },
	{ { "--timeout", "5", "--timeout", "5", "true", NULL },
	    "--timeout given twice" },
	{ { "--cwd", "a", "--cwd", "b", "true", NULL }, "--cwd given twice" },
	{ { "--control", "/a", "--control", "/b", "true", NULL },
	    "--control given twice" },
	{ { "--seccomp", "off", "--seccomp", "off", "true", NULL },
	    "--seccomp given twice" },
	{ { "--platform", "linux", "--platform", "macos", "true", NULL },
	    "--platform given twice" },
	{ { "--credential", NULL }, "--credential needs a value" },
	{ { "--credential", "GITHUB_TOKEN", "true", NULL },
	    "--credential takes NAME@HOSTPATTERN[,HOSTPATTERN...], never a "
	    "value" },
	{ { "--credential", "T@*.com", "true", NULL },
	    "--credential T: invalid pattern '*.com'" },
	{ { "--credential", "T@a.example", "--credential", "T@b.example",
	    "true", NULL }, "--credential T given twice; give its hosts in "
	    "one: T@HOST,HOST" },
	{ { "--file-credentials", "no", "true", NULL },
	    "--file-credentials: 'no' is not valid; use on or off" },
	{ { "--file-credentials", "on", "--file-credentials=off", "true",
	    NULL }, "--file-credentials given twice" },
};

static void
test_errors(void **state)
{
	char err[SPAWN_ERRLEN];
	struct spawn_opts o;
	enum spawn_opt_status st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		const char *const *a = errors[i].args;

		st = parse(&o, NULL, err, sizeof(err), a[0], a[1], a[2], a[3],
		    a[4], a[5], a[6], a[7], NULL);
		if (st != SPAWN_OPT_USAGE || strstr(err, errors[i].want) ==
		    NULL)
			fail_msg("case %zu (%s ...): status %d, message '%s', "
			    "expected '%s'", i, a[0] ? a[0] : "", st, err,
			    errors[i].want);
		/* one line, no prefix (main adds "gk-run: ") */
		assert_null(strchr(err, '\n'));
		assert_true(strncmp(err, "gk-run", 6) != 0);
	}
}

static void
test_defaults(void **state)
{
	char err[SPAWN_ERRLEN];
	struct spawn_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--", "true",
	    NULL), SPAWN_OPT_RUN);
	assert_int_equal(o.net, SPAWN_NET_AUTO);
	assert_int_equal(o.fs, SPAWN_FS_SANDBOX);
	assert_int_equal(o.cache, SPAWN_CACHE_PRIVATE);
	assert_int_equal(o.seccomp, SPAWN_SECCOMP_DEFAULT);
	assert_int_equal(o.platform, SPAWN_PLATFORM_LINUX);
	assert_string_equal(o.control, SPAWN_CONTROL_DEFAULT);
	assert_int_equal(o.timeout, 0);
	assert_false(o.dry_run);
	assert_int_equal(o.verbose, 0);
	assert_int_equal(o.allow.n, 0);
	assert_int_equal(o.npaths, 0);
	assert_int_equal(o.nenv, 0);
	assert_null(o.cwd);
	assert_int_equal(o.ncmd, 1);
	assert_string_equal(o.cmd[0], "true");
	assert_null(o.cmd[1]);
	/* no --allow: loopback only */
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_NONE);
	spawn_opts_clear(&o);

	/* one set of caches for all projects only when asked */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--cache=shared",
	    "--", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(o.cache, SPAWN_CACHE_SHARED);
	assert_string_equal(spawn_cache_name(o.cache), "shared");
	assert_non_null(strstr(spawn_usage(), "shared: as private, one set "
	    "for all projects"));
	spawn_opts_clear(&o);

	/* any --allow: gated */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-a",
	    "*.github.com", "--", "git", "clone", "x", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	assert_int_equal(o.transparent, 1);	/* on unless said otherwise */
	assert_int_equal(o.file_creds, 1);	/* the same */
	assert_null(o.fcreds);			/* spawn_creds_load's */
	assert_int_equal(o.allow.n, 1);
	assert_string_equal(o.allow.v[0], "*.github.com");
	assert_int_equal(o.ncmd, 3);
	assert_null(o.label);
	spawn_opts_clear(&o);

	/* --label names the cage */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-a", "x.example",
	    "--label", "ci build #42", "--", "make", NULL), SPAWN_OPT_RUN);
	assert_string_equal(o.label, "ci build #42");
	spawn_opts_clear(&o);

	/* an allow-file alone asks for gated too */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--allow-file",
	    "f", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	spawn_opts_clear(&o);
}

static void
test_every_option(void **state)
{
	char err[SPAWN_ERRLEN];
	struct spawn_opts o;

	(void)state;
	assert_int_equal(parse(&o, "/env.sock", err, sizeof(err),
	    "--allow=a.example", "-a", "[2001:db8::/32]:443",
	    "--allow", "GET,HEAD a.example/acme/**", "--allow-file", "f1",
	    "--allow-file=f2", "--net", "gated",
	    "--fs", "host", "--ro", "r1", "--rw", "w1", "--hide", "h1",
	    "--ro=r2", "--socket", "/s.sock", "--cache", "tmp", "--cwd",
	    "/d", "--env", "K=V=W", "--env", "E=",
	    "--seccomp", "relaxed", "--timeout", "31536000", "--control",
	    "/x.sock", "--dry-run", "--platform", "macos", "-vv", "--verbose",
	    "--", "cmd", "-v", "--net", "none", NULL), SPAWN_OPT_RUN);
	assert_int_equal(o.allow.n, 3);
	assert_string_equal(o.allow.v[1], "[2001:db8::/32]:443");
	assert_string_equal(o.allow.v[2], "GET,HEAD a.example/acme/**");
	assert_int_equal(o.nallow_files, 2);
	assert_string_equal(o.allow_files[1], "f2");
	assert_int_equal(o.net, SPAWN_NET_GATED);
	assert_int_equal(o.fs, SPAWN_FS_HOST);
	assert_int_equal(o.npaths, 5);
	assert_int_equal(o.paths[0].kind, SPAWN_PATH_RO);
	assert_int_equal(o.paths[1].kind, SPAWN_PATH_RW);
	assert_int_equal(o.paths[2].kind, SPAWN_PATH_HIDE);
	assert_string_equal(o.paths[3].path, "r2");
	assert_int_equal(o.paths[4].kind, SPAWN_PATH_SOCKET);
	assert_string_equal(o.paths[4].path, "/s.sock");
	assert_int_equal(o.cache, SPAWN_CACHE_TMP);
	assert_string_equal(o.cwd, "/d");
	assert_int_equal(o.nenv, 2);
	assert_string_equal(o.env[0], "K=V=W");
	assert_string_equal(o.env[1], "E=");
	assert_int_equal(o.seccomp, SPAWN_SECCOMP_RELAXED);
	assert_int_equal(o.timeout, 31536000);
	assert_string_equal(o.control, "/x.sock");
	assert_true(o.dry_run);
	assert_int_equal(o.platform, SPAWN_PLATFORM_MACOS);
	assert_int_equal(o.verbose, 3);
	/* everything after "--" is the command's */
	assert_int_equal(o.ncmd, 4);
	assert_string_equal(o.cmd[0], "cmd");
	assert_string_equal(o.cmd[3], "none");
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	spawn_opts_clear(&o);
}

static void
test_command_and_control(void **state)
{
	char err[SPAWN_ERRLEN];
	struct spawn_opts o;

	(void)state;
	/* the first non-option starts the command, "--" or not */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "ls", "-l", "--net",
	    "x", NULL), SPAWN_OPT_RUN);
	assert_int_equal(o.ncmd, 4);
	assert_string_equal(o.cmd[1], "-l");
	spawn_opts_clear(&o);
	/* GK_CONTROL, unless --control */
	assert_int_equal(parse(&o, "/env.sock", err, sizeof(err), "true",
	    NULL), SPAWN_OPT_RUN);
	assert_string_equal(o.control, "/env.sock");
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, "", err, sizeof(err), "true", NULL),
	    SPAWN_OPT_RUN);
	assert_string_equal(o.control, SPAWN_CONTROL_DEFAULT);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, "/env.sock", err, sizeof(err), "--control",
	    "/opt.sock", "true", NULL), SPAWN_OPT_RUN);
	assert_string_equal(o.control, "/opt.sock");
	spawn_opts_clear(&o);
	/* help and version win wherever they are, before any error */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-h", NULL),
	    SPAWN_OPT_HELP);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--net", "none",
	    "--help", NULL), SPAWN_OPT_HELP);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--version", NULL),
	    SPAWN_OPT_VERSION);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-V", NULL),
	    SPAWN_OPT_VERSION);
	/* parsing twice in one process works (getopt state reset) */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-x", NULL),
	    SPAWN_OPT_USAGE);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-v", "true", NULL),
	    SPAWN_OPT_RUN);
	spawn_opts_clear(&o);
}

static void
test_finish_conflicts(void **state)
{
	static const char *const modes[] = { "none", "host" };
	char err[SPAWN_ERRLEN], want[128];
	struct spawn_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		assert_int_equal(parse(&o, NULL, err, sizeof(err), "--net",
		    modes[i], "-a", "x.example", "true", NULL), SPAWN_OPT_RUN);
		assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
		snprintf(want, sizeof(want), "--net %s ignores the allowlist; "
		    "drop --net %s to run gated, or drop the --allow patterns",
		    modes[i], modes[i]);
		assert_string_equal(err, want);
		spawn_opts_clear(&o);
	}
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--net", "none",
	    "--allow-file", "f", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
	spawn_opts_clear(&o);
	/* gated with an empty allowlist is allowed: everything denied */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--net", "gated",
	    "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	spawn_opts_clear(&o);
	/* --transparent: off or on when gated, an error otherwise */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--transparent",
	    "off", "-a", "x.example", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.transparent, 0);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--transparent",
	    "on", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
	assert_string_equal(err, "--transparent applies to gated runs (with "
	    "--allow); --net none has no proxy to redirect to");
	spawn_opts_clear(&o);
	/* limits: gated only; parsed exactly */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--memory", "1.5G",
	    "--pids", "64", "--cpus", "0.5", "--limits", "best-effort",
	    "--reattach-timeout", "0", "-a", "x.example", "true", NULL),
	    SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.limits.memory, 3ULL << 29);
	assert_int_equal(o.limits.pids, 64);
	assert_int_equal(o.limits.cpus, 500);
	assert_int_equal(o.limits_best_effort, 1);
	assert_int_equal(o.reattach_timeout, 0);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-a", "x.example",
	    "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.limits_best_effort, 0);
	assert_int_equal(o.reattach_timeout, SPAWN_REATTACH_DEFAULT);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--pids", "5",
	    "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "apply to gated runs"));
	spawn_opts_clear(&o);
	/* host without --allow */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--net", "host",
	    "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_HOST);
	spawn_opts_clear(&o);
}

/* --ask and what goes with it; each alone is an error, and so is --ask
 * where no gatekeeperd holds the connection. */
static void
test_ask(void **state)
{
	static const struct ecase finish_errors[] = {
		{ { "--ask-timeout", "30", "-a", "x.example", "true", NULL },
		    "--ask-timeout goes with --ask (ask before denying); add "
		    "--ask" },
		{ { "--ask-save", "f", "-a", "x.example", "true", NULL },
		    "--ask-save goes with --ask" },
		{ { "--decisions-fd", "4", "--events-fd", "3", "-a",
		    "x.example", "true", NULL }, "--decisions-fd goes with "
		    "--ask" },
		{ { "--ask", "--decisions-fd", "4", "-a", "x.example", "true",
		    NULL }, "--decisions-fd needs --events-fd: the supervisor "
		    "reads the questions there" },
		{ { "--ask", "true", NULL }, "--ask applies to gated runs "
		    "(with --allow or --net gated): gatekeeperd holds the "
		    "connection while gk-run asks; --net none has no "
		    "gatekeeperd" },
		{ { "--ask", "--net", "host", "true", NULL },
		    "--net host has no gatekeeperd" },
		{ { "--ask", "--learn", "f", "true", NULL },
		    "--ask and --learn exclude each other" },
	};
	char err[SPAWN_ERRLEN];
	struct spawn_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(finish_errors) / sizeof(finish_errors[0]);
	    i++) {
		const char *const *a = finish_errors[i].args;

		assert_int_equal(parse(&o, NULL, err, sizeof(err), a[0], a[1],
		    a[2], a[3], a[4], a[5], a[6], a[7], NULL), SPAWN_OPT_RUN);
		if (spawn_opts_finish(&o, err, sizeof(err)) != -1 ||
		    strstr(err, finish_errors[i].want) == NULL)
			fail_msg("case %zu: message '%s', expected '%s'", i,
			    err, finish_errors[i].want);
		spawn_opts_clear(&o);
	}
	/* the defaults: no asking; with --ask, 60 s */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "-a", "x.example",
	    "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_false(o.ask);
	assert_int_equal(o.ask_timeout, 0);
	assert_null(o.ask_save);
	assert_int_equal(o.decisions_fd, -1);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--ask", "-a",
	    "x.example", "true", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_true(o.ask);
	assert_int_equal(o.ask_timeout, SPAWN_ASK_TIMEOUT_DEFAULT);
	assert_int_equal(o.ask_timeout, 60);
	spawn_opts_clear(&o);
	/* everything, gated with an empty allowlist: ask about all */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--ask",
	    "--ask-timeout", "3600", "--ask-save", "saved.allow",
	    "--events-fd", "3", "--decisions-fd=4", "--net", "gated", "--",
	    "npm", "ci", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_true(o.ask);
	assert_int_equal(o.ask_timeout, 3600);
	assert_string_equal(o.ask_save, "saved.allow");
	assert_int_equal(o.events_fd, 3);
	assert_int_equal(o.decisions_fd, 4);
	assert_int_equal(o.ncmd, 2);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--ask",
	    "--ask-timeout", "1", "-a", "x.example", "true", NULL),
	    SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.ask_timeout, 1);
	spawn_opts_clear(&o);
	/* --help teaches them */
	assert_non_null(strstr(spawn_usage(), "--ask "));
	assert_non_null(strstr(spawn_usage(), "--ask-timeout SECONDS"));
	assert_non_null(strstr(spawn_usage(), "--ask-save FILE"));
	assert_non_null(strstr(spawn_usage(), "--decisions-fd N"));
}

/* ---- allow-files -------------------------------------------------------- */

struct afcase {
	const char	*text;
	size_t		 len;		/* 0: strlen */
	int		 rc;
	const char	*want;		/* message, or the patterns '|' */
};

static const struct afcase afcases[] = {
	{ "", 0, 0, "" },
	{ "\n\n  \n# only comments\n\t# indented\n", 0, 0, "" },
	{ "a.example\n", 0, 0, "a.example" },
	{ "a.example", 0, 0, "a.example" },
	{ "a.example\r\n*.b.example  # the b zone\r\n\n\t c.example:443\t\n",
	    0, 0, "a.example|*.b.example|c.example:443" },
	{ "192.0.2.0/24\n[2001:db8::/32]:443\n**.c.example\n", 0, 0,
	    "192.0.2.0/24|[2001:db8::/32]:443|**.c.example" },
	{ "a.example#comment\n", 0, 0, "a.example" },
	{ "a.example b.example\n", 0, -1,
	    "f.allow:1: white space inside the pattern; put one pattern on "
	    "each line" },
	{ "GET,HEAD a.example/acme/**  # rule\nPOST a.example:443/x/*/y\n"
	    "a.example/**\n", 0, 0, "GET,HEAD a.example/acme/**|"
	    "POST a.example:443/x/*/y|a.example/**" },
	{ "GET  a.example/x\n", 0, -1,
	    "f.allow:1: white space inside the pattern; put one pattern on "
	    "each line" },
	{ "GET\ta.example/x\n", 0, -1,
	    "f.allow:1: white space inside the pattern; put one pattern on "
	    "each line" },
	{ "get a.example/x\n", 0, -1, "f.allow:1: invalid pattern 'get "
	    "a.example/x': 'get' is not a method" },
	{ "GET a.example\n", 0, -1, "methods need a path after the host" },
	{ "ok.example\n\n*.com\n", 0, -1,
	    "f.allow:3: invalid pattern '*.com': com is a public suffix" },
	{ "ok.example\nb\0d.example\n", 24, -1,
	    "f.allow:2: a NUL byte in the line" },
	{ "# x\0 in a comment is fine\nok.example\n", 37, 0, "ok.example" },
	{ "*\n", 0, -1, "f.allow:1: invalid pattern '*'" },
	{ "a.example:99999\n", 0, -1, "f.allow:1: invalid pattern" },
	{ "\xff.example\n", 0, -1, "f.allow:1: invalid pattern '\\xff" },
};

/* --preset: names kept for main to load; "list" needs no command; a
 * preset alone makes the run gated; every shipped preset parses. */
static void
test_presets(void **state)
{
	char err[SPAWN_ERRLEN], path[512], name[1024];
	struct spawn_strv sv = { 0 };
	const char *src = getenv("GK_SRCDIR");
	struct spawn_opts o;
	struct dirent *de;
	size_t len, n = 0;
	uint8_t buf[65536];
	FILE *f;
	DIR *d;

	(void)state;
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--preset", "npm",
	    "--preset", "docker-hub", "-q", "--", "npm", "ci", NULL),
	    SPAWN_OPT_RUN);
	assert_int_equal(o.npresets, 2);
	assert_string_equal(o.presets[1], "docker-hub");
	assert_true(o.quiet);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--preset", "list",
	    NULL), SPAWN_OPT_PRESETS);

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/spawner/presets", src);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 6, ".allow") != 0)
			continue;
		snprintf(name, sizeof(name), "%s/%s", path, de->d_name);
		assert_non_null(f = fopen(name, "r"));
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (spawn_allowfile_parse(buf, len, name, &sv, err,
		    sizeof(err)) != 0)
			fail_msg("%s: %s", name, err);
		assert_true(sv.n > 0);
		spawn_strv_clear(&sv);
		n++;
	}
	closedir(d);
	assert_true(n >= 9);
}

static void
test_allowfile(void **state)
{
	struct spawn_strv sv = { 0 };
	char err[SPAWN_ERRLEN], got[1024];
	size_t i, j;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(afcases) / sizeof(afcases[0]); i++) {
		const struct afcase *c = &afcases[i];

		err[0] = '\0';
		rc = spawn_allowfile_parse((const uint8_t *)c->text, c->len ?
		    c->len : strlen(c->text), "f.allow", &sv, err,
		    sizeof(err));
		got[0] = '\0';
		for (j = 0; j < sv.n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
			    "%s%s", j ? "|" : "", sv.v[j]);
		if (rc != c->rc || (rc == 0 && strcmp(got, c->want) != 0) ||
		    (rc == -1 && strstr(err, c->want) == NULL))
			fail_msg("case %zu: rc %d, patterns '%s', message "
			    "'%s', expected '%s'", i, rc, got, err, c->want);
		assert_null(strchr(err, '\n'));
		spawn_strv_clear(&sv);
	}
}

static void
test_allowfile_limits(void **state)
{
	struct spawn_strv sv = { 0 };
	char err[SPAWN_ERRLEN];
	size_t n = 4097 * 12, i, pos = 0;
	char *buf;

	(void)state;
	buf = malloc(SPAWN_ALLOWFILE_MAX + 2);
	assert_non_null(buf);
	for (i = 0; i < 4097; i++)
		pos += (size_t)sprintf(buf + pos, "h%05zu.test\n", i);
	assert_true(pos <= n);
	assert_int_equal(spawn_allowfile_parse((uint8_t *)buf, pos, "big",
	    &sv, err, sizeof(err)), -1);
	assert_string_equal(err, "big:4097: more than 4096 patterns");
	spawn_strv_clear(&sv);
	memset(buf, '\n', SPAWN_ALLOWFILE_MAX + 1);
	assert_int_equal(spawn_allowfile_parse((uint8_t *)buf,
	    SPAWN_ALLOWFILE_MAX + 1, "huge", &sv, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "huge: larger than 1048576 bytes"));
	assert_int_equal(spawn_allowfile_parse((uint8_t *)buf,
	    SPAWN_ALLOWFILE_MAX, "blank", &sv, err, sizeof(err)), 0);
	assert_int_equal(sv.n, 0);
	/* a hostile file name is shown printable */
	assert_int_equal(spawn_allowfile_parse((const uint8_t *)"*.com\n", 6,
	    "a\nb\033c", &sv, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "a?b?c:1: invalid pattern"));
	free(buf);
	spawn_strv_clear(&sv);
}

/* ---- environment -------------------------------------------------------- */

static bool
dropped(const char *name, bool sandbox)
{
	return spawn_env_dropped(name, strlen(name), sandbox);
}

static void
test_env(void **state)
{
	static const char *const drop[] = {
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_", "BASH_ENV",
		"ENV", "BASH_FUNC_ls%%", "PYTHONSTARTUP", "PYTHONPATH",
		"NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "RUBYOPT",
		"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
		"GIT_CONFIG_VALUE_0", "GIT_CONFIG_GLOBAL", "GIT_CONFIG",
		"GIT_SSH_COMMAND", "SSH_AUTH_SOCK", "GCONV_PATH",
		"LUA_INIT_5_4",
		"DBUS_SESSION_BUS_ADDRESS", "JAVA_TOOL_OPTIONS", NULL,
	};
	static const char *const keep[] = {
		"PATH", "HOME", "LANG", "TERM", "USER", "GIT_DIR",
		"GIT_AUTHOR_NAME", "GIT_CONFIG_NOSYSTEM", "GIT_SSL_CAINFO",
		"CURL_CA_BUNDLE", "SSL_CERT_FILE", "http_proxy", "LDFLAGS",
		"XLD_PRELOAD",
		"ENVX", "PYTHONDONTWRITEBYTECODE", "EDITOR", "GK_CONTROL", NULL,
	};
	size_t i;

	(void)state;
	for (i = 0; drop[i] != NULL; i++)
		if (!dropped(drop[i], false))
			fail_msg("%s should be dropped", drop[i]);
	for (i = 0; keep[i] != NULL; i++)
		if (dropped(keep[i], true))
			fail_msg("%s should pass", keep[i]);
	/* a prefix of a name is not the name */
	assert_false(spawn_env_dropped("ENV", 2, true));
	assert_true(spawn_env_dropped("LD_PRELOADX", 10, true));
	/* TMPDIR only with the fresh /tmp */
	assert_true(dropped("TMPDIR", true));
	assert_false(dropped("TMPDIR", false));
	assert_true(spawn_env_valid("A=b"));
	assert_true(spawn_env_valid("_x1="));
	assert_true(spawn_env_valid("K=a=b"));
	assert_false(spawn_env_valid("A"));
	assert_false(spawn_env_valid("=b"));
	assert_false(spawn_env_valid("9A=b"));
	assert_false(spawn_env_valid("A.B=c"));
	assert_false(spawn_env_valid(""));
}

/* Every name --help lists as dropped is dropped. */
static void
test_env_help(void **state)
{
	const char *help = spawn_usage(), *s, *e;
	char name[64];
	size_t n, count = 0;

	(void)state;
	s = strstr(help, "Dropped from the environment");
	e = strstr(help, "In every mode credentials stay out");
	assert_non_null(s);
	assert_non_null(e);
	s = strstr(s, "sandbox):");
	assert_non_null(s);
	for (; s < e; s += n > 0 ? n : 1) {
		n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789*");
		if (n < 3 || n >= sizeof(name) - 8)
			continue;
		memcpy(name, s, n);
		name[n] = '\0';
		if (name[n - 1] == '*')
			strcpy(name + n - 1, "SOMETHING");
		if (!dropped(name, true))
			fail_msg("--help lists %s, which is not dropped",
			    name);
		count++;
	}
	assert_true(count >= 45);
	/* every credential name or suffix it lists is kept out */
	s = strstr(e, "names them:");
	e = strstr(help, "and a few more;");
	assert_non_null(s);
	assert_non_null(e);
	for (count = 0; s < e; s += n > 0 ? n : 1) {
		n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
		if (n < 3 || n >= sizeof(name) - 8)
			continue;
		snprintf(name, sizeof(name), "%s%.*s", s[0] == '_' ? "X" : "",
		    (int)n, s);
		if (!spawn_env_secret(name, strlen(name)))
			fail_msg("--help lists %s as a credential; it is not "
			    "kept out", name);
		count++;
	}
	assert_true(count >= 15);
	/* and the proxies gated mode sets are named */
	assert_non_null(strstr(help, "no_proxy"));
}

/* Credential-shaped variables stay out, but those --pass-env names; the
 * note names them, never a value. */
static void
test_env_secrets(void **state)
{
	static const char *const secret[] = { "GITHUB_TOKEN", "NPM_TOKEN",
	    "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "VAULT_TOKEN",
	    "ANTHROPIC_API_KEY", "PGPASSWORD", "github_token", "DB_PASSWORD",
	    "MYSQL_PWD", "GOOGLE_APPLICATION_CREDENTIALS", "X_APIKEY", NULL };
	static const char *const plain[] = { "PATH", "HOME", "OLDPWD", "PWD",
	    "AWS_REGION", "AWS_CA_BUNDLE", "KEYMAP", "TOKEN", "SSL_CERT_FILE",
	    "GPG_TTY", NULL };
	char *const envp[] = { "PATH=/bin", "GITHUB_TOKEN=ghp_secretvalue",
	    "HOME=/h", "NPM_TOKEN=npm_x", "PGPASSWORD=pw",
	    "DATABASE_URL=postgres://app:hunter22@db.example/x",
	    "PIP_INDEX_URL=https://pypi.example/simple", NULL };
	const char *pass[] = { "NPM_TOKEN" };
	struct spawn_env_notes notes;
	char *many[64], names[64][40];
	char **out;
	size_t i;

	(void)state;
	for (i = 0; secret[i] != NULL; i++)
		if (!spawn_env_secret(secret[i], strlen(secret[i])))
			fail_msg("%s should be kept out", secret[i]);
	for (i = 0; plain[i] != NULL; i++)
		if (spawn_env_secret(plain[i], strlen(plain[i])))
			fail_msg("%s should pass", plain[i]);
	assert_non_null(out = spawn_env_scrub(envp, pass, 1, &notes));
	assert_string_equal(out[0], "PATH=/bin");
	assert_string_equal(out[1], "HOME=/h");
	assert_string_equal(out[2], "NPM_TOKEN=npm_x");
	/* a URL's password replaced, the rest of it kept */
	assert_string_equal(out[3],
	    "DATABASE_URL=postgres://app:gkplaceh@db.example/x");
	assert_ptr_equal(out[4], envp[6]);	/* no password: as it was */
	assert_null(out[5]);
	assert_string_equal(notes.out, "GITHUB_TOKEN PGPASSWORD");
	assert_string_equal(notes.urls, "DATABASE_URL");
	free(out[3]);
	free(out);
	/* more names than the note holds: cut, and said so */
	for (i = 0; i < 63; i++) {
		snprintf(names[i], sizeof(names[i]),
		    "SOME_LONG_VARIABLE_%02zu_TOKEN=x", i);
		many[i] = names[i];
	}
	many[63] = NULL;
	assert_non_null(out = spawn_env_scrub(many, NULL, 0, &notes));
	assert_null(out[0]);
	assert_true(strlen(notes.out) < sizeof(notes.out));
	assert_non_null(strstr(notes.out, " ..."));
	assert_int_equal(strcmp(notes.out + strlen(notes.out) - 4, " ..."), 0);
	free(out);
	/* --pass-env takes a name, not KEY=VALUE */
	{
		struct spawn_opts o;
		char err[256];

		assert_int_equal(parse(&o, NULL, err, sizeof(err), "--pass-env",
		    "NPM_TOKEN", "--pass-env", "GH_TOKEN", "--", "true", NULL),
		    SPAWN_OPT_RUN);
		assert_int_equal(o.npass_env, 2);
		assert_string_equal(o.pass_env[1], "GH_TOKEN");
		spawn_opts_clear(&o);
		assert_int_equal(parse(&o, NULL, err, sizeof(err), "--pass-env",
		    "A=B", "--", "true", NULL), SPAWN_OPT_USAGE);
		assert_non_null(strstr(err, "not a variable name"));
		assert_int_equal(parse(&o, NULL, err, sizeof(err), "--pass-env",
		    "9X", "--", "true", NULL), SPAWN_OPT_USAGE);
	}
}

/* --credential: its hosts join the allowlist; what it cannot go with. */
static void
test_credential(void **state)
{
	static const char *const bad[][4] = {
		{ "--net", "none", "--net none has no gatekeeperd" },
		{ "--fs", "host", "--credential needs --fs sandbox" },
		{ "--platform", "macos", "is not supported on macOS" },
		{ "--pass-env", "GH_TOKEN", "--credential GH_TOKEN and "
		    "--pass-env GH_TOKEN: GH_TOKEN stays outside" },
		{ "--env", "GH_TOKEN=x", "and --env GH_TOKEN" },
	};
	char err[SPAWN_ERRLEN], *argv[2 * SPAWN_CRED_MAX + 8];
	char args[SPAWN_CRED_MAX + 1][32];
	struct spawn_opts o;
	size_t i;
	int argc;

	(void)state;
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--allow",
	    "github.com", "--credential", "GH_TOKEN@github.com,api.github.com",
	    "--credential=NPM_TOKEN@registry.npmjs.org", "--", "gh", NULL),
	    SPAWN_OPT_RUN);
	assert_int_equal(o.ncreds, 2);
	assert_string_equal(o.creds[0].name, "GH_TOKEN");
	assert_int_equal(o.creds[0].hosts.n, 2);
	assert_string_equal(o.creds[1].hosts.v[0], "registry.npmjs.org");
	/* each pattern allowed once */
	assert_int_equal(o.allow.n, 3);
	assert_string_equal(o.allow.v[0], "github.com");
	assert_string_equal(o.allow.v[1], "api.github.com");
	assert_string_equal(o.allow.v[2], "registry.npmjs.org");
	/* a credential alone makes the run gated */
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	spawn_opts_clear(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&o, NULL, err, sizeof(err),
		    "--credential", "GH_TOKEN@github.com", bad[i][0], bad[i][1],
		    "true", NULL), SPAWN_OPT_RUN);
		assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
		if (strstr(err, bad[i][2]) == NULL)
			fail_msg("%s %s: '%s'", bad[i][0], bad[i][1], err);
		spawn_opts_clear(&o);
	}
	/* at most 32 */
	argv[0] = (char *)"gk-run";
	for (argc = 1, i = 0; i <= SPAWN_CRED_MAX; i++) {
		snprintf(args[i], sizeof(args[i]), "T%zu@h%zu.example", i, i);
		argv[argc++] = (char *)"--credential";
		argv[argc++] = args[i];
	}
	argv[argc++] = (char *)"true";
	argv[argc] = NULL;
	assert_int_equal(spawn_opts_parse(argc, argv, NULL, &o, err,
	    sizeof(err)), SPAWN_OPT_USAGE);
	assert_string_equal(err, "--credential: at most 32 credentials");
	assert_int_equal(spawn_opts_parse(argc - 3, argv, NULL, &o, err,
	    sizeof(err)), SPAWN_OPT_USAGE);	/* no command: 32 parsed */
	assert_string_equal(err, "no command given; usage: gk-run [OPTIONS] "
	    "-- COMMAND [ARG...] (see gk-run --help)");
	/* --file-credentials off: nothing bound; no other effect */
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--allow",
	    "registry.npmjs.org", "--file-credentials", "off", "--", "npm",
	    NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.file_creds, 0);
	assert_int_equal(o.net, SPAWN_NET_GATED);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err),
	    "--file-credentials=on", "--", "npm", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), 0);
	assert_int_equal(o.file_creds, 1);
	assert_int_equal(o.net, SPAWN_NET_NONE);	/* not gated by it */
	spawn_opts_clear(&o);
	/* --help teaches them */
	assert_non_null(strstr(spawn_usage(), "--file-credentials on|off"));
	assert_non_null(strstr(spawn_usage(), "--credential NAME@HOSTPATTERN"
	    "[,HOSTPATTERN...]"));
	assert_non_null(strstr(spawn_usage(), "GITHUB_TOKEN=... gk-run "
	    "--allow github.com \\\n      --credential GITHUB_TOKEN@"
	    "github.com,api.github.com -- gh repo list\n"));
	for (i = 0; spawn_trust_vars[i] != NULL; i++)
		assert_non_null(strstr(spawn_usage(), spawn_trust_vars[i]));
	assert_non_null(strstr(spawn_usage(), SPAWN_TRUST_DIR "/bundle.pem"));
}

/* --cache-dir: no command; with one, a usage error at the finish. */
static void
test_cache_dir(void **state)
{
	char err[256];
	struct spawn_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--cache-dir",
	    NULL), SPAWN_OPT_CACHE_DIR);
	assert_true(o.cache_dir);
	assert_int_equal(o.cache, SPAWN_CACHE_PRIVATE);
	assert_null(o.cmd);
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--cache-dir",
	    "--cache", "shared", "--cwd", "/tmp", NULL), SPAWN_OPT_CACHE_DIR);
	assert_int_equal(o.cache, SPAWN_CACHE_SHARED);
	assert_string_equal(o.cwd, "/tmp");
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--cache-dir",
	    "--", "npm", "ci", NULL), SPAWN_OPT_RUN);
	assert_int_equal(spawn_opts_finish(&o, err, sizeof(err)), -1);
	assert_string_equal(err, "--cache-dir prints where the tool caches "
	    "are and runs nothing: drop the command");
	spawn_opts_clear(&o);
	assert_int_equal(parse(&o, NULL, err, sizeof(err), "--cache-dir",
	    "--cache-dir", NULL), SPAWN_OPT_USAGE);
	assert_non_null(strstr(spawn_usage(), "--cache-dir "));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_command_and_control),
		cmocka_unit_test(test_finish_conflicts),
		cmocka_unit_test(test_ask),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_allowfile),
		cmocka_unit_test(test_allowfile_limits),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_help),
		cmocka_unit_test(test_env_secrets),
		cmocka_unit_test(test_credential),
		cmocka_unit_test(test_cache_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
