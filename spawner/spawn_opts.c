/*
 * gk-run's command line: getopt_long over argv into a struct spawn_opts,
 * every value checked here so that main() only ever sees valid options.
 * Messages name the option and the value, and say what would be valid.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"

enum {
	OPT_ALLOW = 'a',
	OPT_HELP = 'h',
	OPT_VERBOSE = 'v',
	OPT_VERSION = 'V',
	OPT_ALLOW_FILE = 256,
	OPT_NET,
	OPT_FS,
	OPT_RO,
	OPT_RW,
	OPT_HIDE,
	OPT_CWD,
	OPT_ENV,
	OPT_SECCOMP,
	OPT_TIMEOUT,
	OPT_CONTROL,
	OPT_DRY_RUN,
	OPT_PLATFORM,
	OPT_TRANSPARENT,
};

static const struct option longopts[] = {
	{ "allow",	required_argument,	NULL, OPT_ALLOW },
	{ "allow-file",	required_argument,	NULL, OPT_ALLOW_FILE },
	{ "net",	required_argument,	NULL, OPT_NET },
	{ "fs",		required_argument,	NULL, OPT_FS },
	{ "ro",		required_argument,	NULL, OPT_RO },
	{ "rw",		required_argument,	NULL, OPT_RW },
	{ "hide",	required_argument,	NULL, OPT_HIDE },
	{ "cwd",	required_argument,	NULL, OPT_CWD },
	{ "env",	required_argument,	NULL, OPT_ENV },
	{ "seccomp",	required_argument,	NULL, OPT_SECCOMP },
	{ "timeout",	required_argument,	NULL, OPT_TIMEOUT },
	{ "control",	required_argument,	NULL, OPT_CONTROL },
	{ "dry-run",	no_argument,		NULL, OPT_DRY_RUN },
	{ "platform",	required_argument,	NULL, OPT_PLATFORM },
	{ "transparent", required_argument,	NULL, OPT_TRANSPARENT },
	{ "verbose",	no_argument,		NULL, OPT_VERBOSE },
	{ "help",	no_argument,		NULL, OPT_HELP },
	{ "version",	no_argument,		NULL, OPT_VERSION },
	{ NULL,		0,			NULL, 0 },
};

#define SUN_PATH_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)

/* Options given at most once: bit 1 << (val - OPT_ALLOW_FILE). */
#define ONCE(v)		(1u << ((v) - OPT_ALLOW_FILE))

struct enum_name {
	const char	*name;
	int		 value;
};

static const struct enum_name net_names[] = {
	{ "gated", SPAWN_NET_GATED }, { "none", SPAWN_NET_NONE },
	{ "host", SPAWN_NET_HOST }, { NULL, 0 },
};
static const struct enum_name fs_names[] = {
	{ "sandbox", SPAWN_FS_SANDBOX }, { "host", SPAWN_FS_HOST },
	{ NULL, 0 },
};
static const struct enum_name seccomp_names[] = {
	{ "default", SPAWN_SECCOMP_DEFAULT },
	{ "relaxed", SPAWN_SECCOMP_RELAXED }, { "off", SPAWN_SECCOMP_OFF },
	{ NULL, 0 },
};
static const struct enum_name onoff_names[] = {
	{ "on", 1 }, { "off", 0 }, { NULL, 0 },
};
static const struct enum_name platform_names[] = {
	{ "linux", SPAWN_PLATFORM_LINUX }, { "macos", SPAWN_PLATFORM_MACOS },
	{ NULL, 0 },
};

static const char usage_text[] =
"usage: gk-run [OPTIONS] -- COMMAND [ARG...]\n"
"\n"
"Run COMMAND in a sandbox whose only way out to the network is\n"
"gatekeeperd, which lets it reach the host names allowed for this run\n"
"(its \"cage\").\n"
"\n"
"Network:\n"
"  -a, --allow PATTERN    allow a destination (repeatable): example.com,\n"
"                         *.example.com (the name and every name below\n"
"                         it), example.com:443, 203.0.113.0/24,\n"
"                         [2001:db8::/32]:443\n"
"      --allow-file FILE  patterns from FILE, one per line, '#' comments\n"
"      --net MODE         gated: through gatekeeperd (default with --allow)\n"
"                         none:  loopback only (default without --allow)\n"
"                         host:  no network isolation at all\n"
"      --transparent on|off  gated: carry TCP of programs that ignore the\n"
"                         proxy variables through gatekeeperd's checks\n"
"                         (default on); off: such connections fail at once\n"
"      --control PATH     gatekeeperd's control socket (or $GK_CONTROL;\n"
"                         default " SPAWN_CONTROL_DEFAULT ")\n"
"Filesystem:\n"
"      --fs MODE          sandbox (default): the host read-only, the\n"
"                         working directory writable, a fresh /tmp, /proc\n"
"                         and /dev, secret stores hidden; host: the\n"
"                         filesystem as it is (network isolation only)\n"
"      --ro PATH          PATH read-only (under /tmp: visible, read-only)\n"
"      --rw PATH          PATH writable\n"
"      --hide PATH        PATH replaced by an empty read-only dir or file\n"
"      --cwd DIR          run in DIR (writable), not the current directory\n"
"                         The most specific path wins, whatever the order:\n"
"                         --rw ~/p --ro ~/p/.git\n"
"Process:\n"
"      --env KEY=VAL      set a variable (also lets a dropped one through)\n"
"      --seccomp PROFILE  default; relaxed (allows ptrace, keyrings, mount,\n"
"                         bpf, perf...); off. Both profiles stop the\n"
"                         command from creating namespaces.\n"
"      --timeout SECONDS  SIGTERM after SECONDS, SIGKILL 5 s later; exit 124\n"
"Other:\n"
"      --dry-run          print the bwrap command line (for bash; gated\n"
"                         mode shows gatekeeperd's default endpoints) or,\n"
"                         with --platform macos, the SBPL profile; exit 0\n"
"      --platform OS      linux (default) or macos\n"
"  -v, --verbose          say what gk-run does, on stderr\n"
"  -h, --help             this text\n"
"  -V, --version          the version\n"
"\n"
"Hidden by default with --fs sandbox, where they exist: ~/.ssh ~/.gnupg\n"
"~/.aws ~/.config/gcloud ~/.kube ~/.docker ~/.netrc, $XDG_RUNTIME_DIR (the\n"
"session bus and agents could start programs outside the sandbox) and,\n"
"in every mode, the directory of gatekeeperd's control socket. /proc/sys\n"
"is read-only.\n"
"Dropped from the environment unless given with --env (they load code\n"
"or reach agents outside the sandbox): LD_*, BASH_ENV, ENV, BASH_FUNC_*,\n"
"PROMPT_COMMAND, ZDOTDIR, PYTHONSTARTUP, PYTHONPATH, PYTHONHOME,\n"
"PYTHONUSERBASE, PYTHONBREAKPOINT, NODE_OPTIONS, NODE_PATH, PERL5OPT,\n"
"PERL5LIB, PERLLIB, PERL5DB, RUBYOPT, RUBYLIB, LUA_INIT*, LUA_PATH,\n"
"LUA_CPATH, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, JDK_JAVA_OPTIONS,\n"
"GIT_CONFIG, GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_CONFIG_KEY_*,\n"
"GIT_CONFIG_VALUE_*, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_SSH,\n"
"GIT_SSH_COMMAND, GIT_PROXY_COMMAND, GIT_ASKPASS, GIT_EXEC_PATH,\n"
"GIT_EXTERNAL_DIFF, GIT_TEMPLATE_DIR, SSH_ASKPASS, SSH_AUTH_SOCK,\n"
"GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS, glibc's list for setuid\n"
"programs (GCONV_PATH, GETCONF_DIR, HOSTALIASES, LOCALDOMAIN, LOCPATH,\n"
"MALLOC_TRACE, NIS_PATH, NLSPATH, RESOLV_HOST_CONF, RES_OPTIONS, TZDIR)\n"
"and, with --fs sandbox, TMPDIR. Gated mode sets http_proxy,\n"
"https_proxy, HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, all_proxy, NO_PROXY\n"
"and no_proxy.\n"
"\n"
"Exit status: the command's; 124 timed out; 125 gk-run failed (one line\n"
"says what to do); 126 not executable; 127 not found; 128+N killed by\n"
"signal N.\n"
"\n"
"Examples:\n"
"  gk-run --allow '*.github.com' -- git clone https://github.com/acme/x.git\n"
"  gk-run -- make test                 # no network; only . is writable\n"
"  gk-run -a pypi.org -a files.pythonhosted.org -- pip download requests\n"
"  gk-run --allow-file deps.allow --timeout 600 -- ./build.sh\n"
"  gk-run --fs host --allow api.example.com:443 -- ./client\n"
"  gk-run --rw ~/.cache/pip --hide ~/.config -- pip install -r req.txt\n"
"  gk-run --dry-run -- sh              # show the sandbox, run nothing\n"
"  gk-run --dry-run --platform macos --allow example.com -- curl ...\n";

const char *
spawn_usage(void)
{
	return usage_text;
}

const char *
spawn_net_name(enum spawn_net n)
{
	switch (n) {
	case SPAWN_NET_AUTO:
		return "auto";
	case SPAWN_NET_GATED:
		return "gated";
	case SPAWN_NET_NONE:
		return "none";
	case SPAWN_NET_HOST:
		return "host";
	}
	return "?";
}

static const char *
optname(int val)
{
	size_t i;

	for (i = 0; longopts[i].name != NULL; i++)
		if (longopts[i].val == val)
			return longopts[i].name;
	return "?";
}

/* "'a', 'b' or 'c'" for messages. */
static void
enum_list(const struct enum_name *e, char *buf, size_t len)
{
	size_t i, n;

	buf[0] = '\0';
	for (i = 0; e[i].name != NULL; i++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", i == 0 ? "" :
		    e[i + 1].name == NULL ? " or " : ", ", e[i].name);
	}
}

static int
parse_enum(const struct enum_name *e, int opt, const char *arg, int *out,
    char *err, size_t errlen)
{
	char list[128], show[68];
	size_t i;

	for (i = 0; e[i].name != NULL; i++) {
		if (strcmp(e[i].name, arg) == 0) {
			*out = e[i].value;
			return 0;
		}
	}
	enum_list(e, list, sizeof(list));
	spawn_seterr(err, errlen, "--%s: '%s' is not valid; use %s",
	    optname(opt), spawn_printable(arg, show, sizeof(show)), list);
	return -1;
}

static int
parse_timeout(const char *arg, unsigned int *out, char *err, size_t errlen)
{
	unsigned long v = 0;
	const char *p;
	char show[68];

	for (p = arg; *p >= '0' && *p <= '9' && v <= SPAWN_TIMEOUT_MAX; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (p == arg || *p != '\0' || v < 1 || v > SPAWN_TIMEOUT_MAX) {
		spawn_seterr(err, errlen, "--timeout: '%s' is not a whole "
		    "number of seconds from 1 to %u", spawn_printable(arg, show,
		    sizeof(show)), SPAWN_TIMEOUT_MAX);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

static int
check_allow(const char *arg, char *err, size_t errlen)
{
	struct gk_pattern p;
	enum gk_pat_status st;
	size_t n = strlen(arg);

	st = gk_pattern_parse((const uint8_t *)arg, n, &p);
	if (st == GK_PAT_OK)
		return 0;
	gk_pattern_error((const uint8_t *)arg, n, st, err, errlen);
	return -1;
}

static int
push_ptr(const char ***v, size_t *n, const char *s)
{
	const char **nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(**v))) == NULL)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

static int
push_path(struct spawn_opts *o, enum spawn_path_kind kind, int opt,
    const char *arg, char *err, size_t errlen)
{
	struct spawn_optpath *np;

	if (arg[0] == '\0') {
		spawn_seterr(err, errlen, "--%s: the path is empty",
		    optname(opt));
		return -1;
	}
	np = reallocarray(o->paths, o->npaths + 1, sizeof(*np));
	if (np == NULL)
		return -2;
	np[o->npaths].kind = kind;
	np[o->npaths].path = arg;
	o->paths = np;
	o->npaths++;
	return 0;
}

static bool
repeatable(int opt)
{
	switch (opt) {
	case OPT_ALLOW:
	case OPT_ALLOW_FILE:
	case OPT_RO:
	case OPT_RW:
	case OPT_HIDE:
	case OPT_ENV:
	case OPT_VERBOSE:
	case OPT_DRY_RUN:
		return true;
	default:
		return opt < OPT_ALLOW_FILE;
	}
}

static int
set_once(unsigned int *seen, int opt, char *err, size_t errlen)
{
	if (*seen & ONCE(opt)) {
		spawn_seterr(err, errlen, "--%s given twice; give it once",
		    optname(opt));
		return -1;
	}
	*seen |= ONCE(opt);
	return 0;
}

/*
 * One option with its argument. 0, -1 (usage error in err) or -2
 * (ENOMEM).
 */
static int
apply_opt(struct spawn_opts *o, int opt, const char *arg, unsigned int *seen,
    char *err, size_t errlen)
{
	int v;

	if (!repeatable(opt) && set_once(seen, opt, err, errlen) == -1)
		return -1;
	switch (opt) {
	case OPT_ALLOW:
		if (check_allow(arg, err, errlen) == -1)
			return -1;
		return spawn_strv_push(&o->allow, arg) == -1 ? -2 : 0;
	case OPT_ALLOW_FILE:
		if (arg[0] == '\0') {
			spawn_seterr(err, errlen, "--allow-file: the path is "
			    "empty");
			return -1;
		}
		return push_ptr(&o->allow_files, &o->nallow_files, arg) == -1 ?
		    -2 : 0;
	case OPT_NET:
		if (parse_enum(net_names, opt, arg, &v, err, errlen) == -1)
			return -1;
		o->net = (enum spawn_net)v;
		return 0;
	case OPT_FS:
		if (parse_enum(fs_names, opt, arg, &v, err, errlen) == -1)
			return -1;
		o->fs = (enum spawn_fs)v;
		return 0;
	case OPT_SECCOMP:
		if (parse_enum(seccomp_names, opt, arg, &v, err, errlen) == -1)
			return -1;
		o->seccomp = (enum spawn_seccomp)v;
		return 0;
	case OPT_PLATFORM:
		if (parse_enum(platform_names, opt, arg, &v, err, errlen) == -1)
			return -1;
		o->platform = (enum spawn_platform)v;
		return 0;
	case OPT_TRANSPARENT:
		if (parse_enum(onoff_names, opt, arg, &v, err, errlen) == -1)
			return -1;
		o->transparent = v;
		return 0;
	case OPT_RO:
		return push_path(o, SPAWN_PATH_RO, opt, arg, err, errlen);
	case OPT_RW:
		return push_path(o, SPAWN_PATH_RW, opt, arg, err, errlen);
	case OPT_HIDE:
		return push_path(o, SPAWN_PATH_HIDE, opt, arg, err, errlen);
	default:
		break;
	}
	return -3;	/* not one of these: the caller's second table */
}

static int
apply_opt2(struct spawn_opts *o, int opt, const char *arg, char *err,
    size_t errlen)
{
	char show[68];

	switch (opt) {
	case OPT_CWD:
		if (arg[0] == '\0') {
			spawn_seterr(err, errlen, "--cwd: the path is empty");
			return -1;
		}
		o->cwd = arg;
		return 0;
	case OPT_ENV:
		if (!spawn_env_valid(arg)) {
			spawn_seterr(err, errlen, "--env: '%s' is not "
			    "KEY=VALUE with KEY made of letters, digits and "
			    "'_' (not starting with a digit)",
			    spawn_printable(arg, show, sizeof(show)));
			return -1;
		}
		return push_ptr(&o->env, &o->nenv, arg) == -1 ? -2 : 0;
	case OPT_TIMEOUT:
		return parse_timeout(arg, &o->timeout, err, errlen);
	case OPT_CONTROL:
		if (arg[0] == '\0' || strlen(arg) >= SUN_PATH_MAX) {
			spawn_seterr(err, errlen, "--control: '%s' is not a "
			    "usable socket path (1 to %zu bytes)",
			    spawn_printable(arg, show, sizeof(show)),
			    SUN_PATH_MAX - 1);
			return -1;
		}
		o->control = arg;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_VERBOSE:
		o->verbose++;
		return 0;
	default:
		spawn_seterr(err, errlen, "internal error: option %d", opt);
		return -1;
	}
}

static void
unknown_opt(char *const argv[], int ind, char *err, size_t errlen)
{
	const char *a = ind > 0 ? argv[ind - 1] : "?";
	char show[68];

	if (optopt != 0 && strncmp(a, "--", 2) == 0)
		spawn_seterr(err, errlen, "--%s does not take a value",
		    optname(optopt));
	else if (optopt > 0x20 && optopt < 0x7f)
		spawn_seterr(err, errlen, "unknown option '-%c'; see gk-run "
		    "--help", optopt);
	else if (optopt != 0)
		spawn_seterr(err, errlen, "unknown option character 0x%02x; "
		    "see gk-run --help", (unsigned int)optopt & 0xff);
	else
		spawn_seterr(err, errlen, "unknown option '%s'; see gk-run "
		    "--help", spawn_printable(a, show, sizeof(show)));
}

static void
missing_arg(int opt, char *err, size_t errlen)
{
	if (opt == OPT_ALLOW)
		spawn_seterr(err, errlen, "-a/--allow needs a PATTERN");
	else
		spawn_seterr(err, errlen, "--%s needs a value; see gk-run "
		    "--help", optname(opt));
}

/* Returns a status, or -1 to go on with the next option. */
static int
one_opt(struct spawn_opts *o, int c, char *const argv[], unsigned int *seen,
    char *err, size_t errlen)
{
	int r;

	switch (c) {
	case OPT_HELP:
		return SPAWN_OPT_HELP;
	case OPT_VERSION:
		return SPAWN_OPT_VERSION;
	case '?':
		unknown_opt(argv, optind, err, errlen);
		return SPAWN_OPT_USAGE;
	case ':':
		missing_arg(optopt, err, errlen);
		return SPAWN_OPT_USAGE;
	default:
		break;
	}
	r = apply_opt(o, c, optarg, seen, err, errlen);
	if (r == -3)
		r = apply_opt2(o, c, optarg, err, errlen);
	if (r == -2) {
		spawn_seterr(err, errlen, "out of memory");
		return SPAWN_OPT_NOMEM;
	}
	return r == -1 ? SPAWN_OPT_USAGE : -1;
}

enum spawn_opt_status
spawn_opts_parse(int argc, char *const argv[], const char *env_control,
    struct spawn_opts *o, char *err, size_t errlen)
{
	unsigned int seen = 0;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->transparent = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	optind = 0;	/* glibc: full reinitialization */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:a:vhV", longopts,
	    NULL)) != -1) {
		if ((r = one_opt(o, c, argv, &seen, err, errlen)) != -1) {
			spawn_opts_clear(o);
			return (enum spawn_opt_status)r;
		}
	}
	if (o->control == NULL)
		o->control = env_control != NULL && env_control[0] != '\0' &&
		    strlen(env_control) < SUN_PATH_MAX ? env_control :
		    SPAWN_CONTROL_DEFAULT;
	if (optind >= argc) {
		spawn_seterr(err, errlen, "no command given; usage: gk-run "
		    "[OPTIONS] -- COMMAND [ARG...] (see gk-run --help)");
		spawn_opts_clear(o);
		return SPAWN_OPT_USAGE;
	}
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	return SPAWN_OPT_RUN;
}

int
spawn_opts_finish(struct spawn_opts *o, char *err, size_t errlen)
{
	bool gated;

	if (o->allow.nomem) {
		spawn_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (o->allow.n > GK_ALLOWLIST_MAX) {
		spawn_seterr(err, errlen, "%zu patterns; at most %d are "
		    "allowed", o->allow.n, GK_ALLOWLIST_MAX);
		return -1;
	}
	gated = o->allow.n > 0 || o->nallow_files > 0;
	if (o->net == SPAWN_NET_AUTO)
		o->net = gated ? SPAWN_NET_GATED : SPAWN_NET_NONE;
	else if (gated && o->net != SPAWN_NET_GATED) {
		spawn_seterr(err, errlen, "--net %s ignores the allowlist; "
		    "drop --net %s to run gated, or drop the --allow patterns",
		    spawn_net_name(o->net), spawn_net_name(o->net));
		return -1;
	}
	if (o->transparent != -1 && o->net != SPAWN_NET_GATED) {
		spawn_seterr(err, errlen, "--transparent applies to gated runs "
		    "(with --allow); --net %s has no proxy to redirect to",
		    spawn_net_name(o->net));
		return -1;
	}
	if (o->transparent == -1)
		o->transparent = 1;
	return 0;
}

void
spawn_opts_clear(struct spawn_opts *o)
{
	if (o == NULL)
		return;
	spawn_strv_clear(&o->allow);
	free(o->allow_files);
	free(o->paths);
	free(o->env);
	memset(o, 0, sizeof(*o));
}
