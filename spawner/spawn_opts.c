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
#include "gatekeeper/policy/gk_rlimits.h"
#include "gatekeeper/policy/gk_upload.h"
#include "spawner/spawn_cred.h"
#include "spawner/spawn_int.h"

/* The options, in one table: getopt_long's view and ours. */
#define GK_RUN_OPTIONS(X)						\
	X("allow",	 required_argument, 'a',  true,  opt_allow)	\
	X("allow-file",	 required_argument, 256,  true,  opt_allow_file) \
	X("preset",	 required_argument, 273,  true,  opt_preset)	\
	X("learn",	 required_argument, 274,  false, opt_learn)	\
	X("net",	 required_argument, 257,  false, opt_net)	\
	X("fs",		 required_argument, 258,  false, opt_fs)	\
	X("cache",	 required_argument, 270,  false, opt_cache)	\
	X("ro",		 required_argument, 259,  true,  opt_ro)	\
	X("rw",		 required_argument, 260,  true,  opt_rw)	\
	X("hide",	 required_argument, 261,  true,  opt_hide)	\
	X("socket",	 required_argument, 271,  true,  opt_socket)	\
	X("cwd",	 required_argument, 262,  false, opt_cwd)	\
	X("env",	 required_argument, 263,  true,  opt_env)	\
	X("pass-env",	 required_argument, 285,  true,  opt_pass_env)	\
	X("credential",	 required_argument, 286,  true,  opt_credential) \
	X("file-credentials", required_argument, 287, false, opt_file_creds) \
	X("seccomp",	 required_argument, 264,  false, opt_seccomp)	\
	X("timeout",	 required_argument, 265,  false, opt_timeout)	\
	X("control",	 required_argument, 266,  false, opt_control)	\
	X("dry-run",	 no_argument,	    267,  true,  opt_dry_run)	\
	X("cache-dir",	 no_argument,	    289,  false, opt_cache_dir)	\
	X("platform",	 required_argument, 268,  false, opt_platform)	\
	X("transparent", required_argument, 269,  false, opt_transparent) \
	X("memory",	 required_argument, 275,  false, opt_memory)	\
	X("pids",	 required_argument, 276,  false, opt_pids)	\
	X("cpus",	 required_argument, 277,  false, opt_cpus)	\
	X("limits",	 required_argument, 278,  false, opt_limits)	\
	X("max-upload",	 required_argument, 288,  true,  opt_max_upload) \
	X("reattach-timeout", required_argument, 279, false, opt_reattach) \
	X("quiet",	 no_argument,	    'q',  true,  opt_quiet)	\
	X("events-fd",	 required_argument, 272,  false, opt_events_fd) \
	X("ask",	 no_argument,	    280,  false, opt_ask)	\
	X("ask-timeout", required_argument, 281,  false, opt_ask_timeout) \
	X("ask-save",	 required_argument, 282,  false, opt_ask_save)	\
	X("decisions-fd", required_argument, 283, false, opt_decisions_fd) \
	X("label",	 required_argument, 284,  false, opt_label)	\
	X("verbose",	 no_argument,	    'v',  true,  opt_verbose)	\
	X("help",	 no_argument,	    'h',  true,  opt_help)	\
	X("version",	 no_argument,	    'V',  true,  opt_version)

/* What a handler says. */
enum opt_rc {
	RC_OK,
	RC_USAGE,	/* err says what is wrong */
	RC_NOMEM,
	RC_HELP,
	RC_PRESETS,	/* --preset list */
	RC_VERSION,
};

typedef enum opt_rc (*opt_fn)(struct spawn_opts *o, const char *name,
    const char *arg, char *err, size_t errlen);

struct optdef {
	const char	*name;
	int		 val;
	bool		 repeat;	/* may be given more than once */
	opt_fn		 apply;
};

#define OPT_PROTO(n, h, v, r, fn)					\
	static enum opt_rc fn(struct spawn_opts *, const char *,	\
	    const char *, char *, size_t);
GK_RUN_OPTIONS(OPT_PROTO)

#define OPT_LONG(n, h, v, r, fn)	{ n, h, NULL, v },
const struct option spawn_longopts[] = {
	GK_RUN_OPTIONS(OPT_LONG)
	{ NULL, 0, NULL, 0 },
};

#define OPT_DEF(n, h, v, r, fn)		{ n, v, r, fn },
static const struct optdef optdefs[] = {
	GK_RUN_OPTIONS(OPT_DEF)
};
#define NOPTS	(sizeof(optdefs) / sizeof(optdefs[0]))

#define SUN_PATH_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)

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
static const struct enum_name cache_names[] = {
	{ "private", SPAWN_CACHE_PRIVATE }, { "shared", SPAWN_CACHE_SHARED },
	{ "tmp", SPAWN_CACHE_TMP }, { "host", SPAWN_CACHE_HOST }, { NULL, 0 },
};
static const struct enum_name seccomp_names[] = {
	{ "default", SPAWN_SECCOMP_DEFAULT },
	{ "relaxed", SPAWN_SECCOMP_RELAXED }, { "off", SPAWN_SECCOMP_OFF },
	{ NULL, 0 },
};
static const struct enum_name onoff_names[] = {
	{ "on", 1 }, { "off", 0 }, { NULL, 0 },
};
static const struct enum_name limits_names[] = {
	{ "strict", 0 }, { "best-effort", 1 }, { NULL, 0 },
};
static const struct enum_name platform_names[] = {
	{ "linux", SPAWN_PLATFORM_LINUX }, { "macos", SPAWN_PLATFORM_MACOS },
	{ NULL, 0 },
};

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

const char *
spawn_cache_name(enum spawn_cache c)
{
	switch (c) {
	case SPAWN_CACHE_PRIVATE:
		return "private";
	case SPAWN_CACHE_SHARED:
		return "shared";
	case SPAWN_CACHE_TMP:
		return "tmp";
	case SPAWN_CACHE_HOST:
		return "host";
	}
	return "?";
}

static const struct optdef *
optdef_of(int val)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (optdefs[i].val == val)
			return &optdefs[i];
	return NULL;
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

static enum opt_rc
parse_enum(const struct enum_name *e, const char *name, const char *arg,
    int *out, char *err, size_t errlen)
{
	char list[128], show[68];
	size_t i;

	for (i = 0; e[i].name != NULL; i++) {
		if (strcmp(e[i].name, arg) == 0) {
			*out = e[i].value;
			return RC_OK;
		}
	}
	enum_list(e, list, sizeof(list));
	gk_seterr(err, errlen, "--%s: '%s' is not valid; use %s", name,
	    spawn_printable(arg, show, sizeof(show)), list);
	return RC_USAGE;
}

static enum opt_rc
nonempty(const char *name, const char *arg, const char *what, char *err,
    size_t errlen)
{
	if (arg[0] != '\0')
		return RC_OK;
	gk_seterr(err, errlen, "--%s: the %s is empty", name, what);
	return RC_USAGE;
}

static enum opt_rc
push_ptr(const char ***v, size_t *n, const char *s)
{
	const char **nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(**v))) == NULL)
		return RC_NOMEM;
	nv[(*n)++] = s;
	*v = nv;
	return RC_OK;
}

static enum opt_rc
push_path(struct spawn_opts *o, enum spawn_path_kind kind, const char *name,
    const char *arg, char *err, size_t errlen)
{
	struct spawn_optpath *np;

	if (nonempty(name, arg, "path", err, errlen) != RC_OK)
		return RC_USAGE;
	np = reallocarray(o->paths, o->npaths + 1, sizeof(*np));
	if (np == NULL)
		return RC_NOMEM;
	np[o->npaths].kind = kind;
	np[o->npaths].path = arg;
	o->paths = np;
	o->npaths++;
	return RC_OK;
}

/* ---- the handlers, one per option ------------------------------------- */

static enum opt_rc
opt_allow(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	struct gk_pattern p;
	enum gk_pat_status st;
	size_t n = strlen(arg);

	(void)name;
	st = gk_pattern_parse((const uint8_t *)arg, n, &p);
	if (st != GK_PAT_OK) {
		gk_pattern_error((const uint8_t *)arg, n, st, err, errlen);
		return RC_USAGE;
	}
	return spawn_strv_push(&o->allow, arg) == -1 ? RC_NOMEM : RC_OK;
}

static enum opt_rc
opt_allow_file(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	if (nonempty(name, arg, "path", err, errlen) != RC_OK)
		return RC_USAGE;
	return push_ptr(&o->allow_files, &o->nallow_files, arg);
}

/* A preset's name: what its file is called, nothing that leaves the
 * presets directory. "list": print them (with no command needed). */
static enum opt_rc
opt_preset(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	const char *p;
	char show[68];

	if (strcmp(arg, "list") == 0)
		return RC_PRESETS;
	for (p = arg; (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
	    *p == '-'; p++)
		;
	if (p == arg || *p != '\0' || p - arg > SPAWN_PRESET_NAME_MAX) {
		gk_seterr(err, errlen, "--%s: '%s' is not a preset name "
		    "(gk-run --preset list shows them)", name,
		    spawn_printable(arg, show, sizeof(show)));
		return RC_USAGE;
	}
	return push_ptr(&o->presets, &o->npresets, arg);
}

#define ENUM_HANDLER(fn, names, field, type)				\
static enum opt_rc							\
fn(struct spawn_opts *o, const char *name, const char *arg, char *err,	\
    size_t errlen)							\
{									\
	int v;								\
									\
	if (parse_enum(names, name, arg, &v, err, errlen) != RC_OK)	\
		return RC_USAGE;					\
	o->field = (type)v;						\
	return RC_OK;							\
}
ENUM_HANDLER(opt_net, net_names, net, enum spawn_net)
ENUM_HANDLER(opt_fs, fs_names, fs, enum spawn_fs)
ENUM_HANDLER(opt_cache, cache_names, cache, enum spawn_cache)
ENUM_HANDLER(opt_seccomp, seccomp_names, seccomp, enum spawn_seccomp)
ENUM_HANDLER(opt_platform, platform_names, platform, enum spawn_platform)
ENUM_HANDLER(opt_transparent, onoff_names, transparent, int)
ENUM_HANDLER(opt_limits, limits_names, limits_best_effort, int)
ENUM_HANDLER(opt_file_creds, onoff_names, file_creds, int)

/* An option without a value that sets a flag. */
#define FLAG_HANDLER(fn, field)						\
static enum opt_rc							\
fn(struct spawn_opts *o, const char *name, const char *arg, char *err,	\
    size_t errlen)							\
{									\
	(void)name;							\
	(void)arg;							\
	(void)err;							\
	(void)errlen;							\
	o->field = true;						\
	return RC_OK;							\
}
FLAG_HANDLER(opt_dry_run, dry_run)
FLAG_HANDLER(opt_quiet, quiet)
FLAG_HANDLER(opt_ask, ask)
FLAG_HANDLER(opt_cache_dir, cache_dir)

/* An option whose value, not empty, is kept as it is (into argv). */
#define STRING_HANDLER(fn, field, what)					\
static enum opt_rc							\
fn(struct spawn_opts *o, const char *name, const char *arg, char *err,	\
    size_t errlen)							\
{									\
	if (nonempty(name, arg, what, err, errlen) != RC_OK)		\
		return RC_USAGE;					\
	o->field = arg;							\
	return RC_OK;							\
}
STRING_HANDLER(opt_learn, learn, "file")
STRING_HANDLER(opt_cwd, cwd, "path")
STRING_HANDLER(opt_ask_save, ask_save, "file")

static bool	whole_number(const char *, unsigned long, unsigned long *);

static enum opt_rc
opt_memory(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	char e[256];

	if (gk_size_parse(arg, strlen(arg), &o->limits.memory, e,
	    sizeof(e)) == -1) {
		gk_seterr(err, errlen, "--%s: %s", name, e);
		return RC_USAGE;
	}
	return RC_OK;
}

/* --max-upload SIZE[@HOSTPATTERN], kept in its canonical text. */
static enum opt_rc
opt_max_upload(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	struct gk_upload u;
	char e[256], text[GK_UPLOAD_TEXT];

	if (!gk_upload_parse((const uint8_t *)arg, strlen(arg), &u, e,
	    sizeof(e))) {
		gk_seterr(err, errlen, "--%s: %s", name, e);
		return RC_USAGE;
	}
	if (o->max_upload.n == GK_UPLOADS_MAX) {
		gk_seterr(err, errlen, "--%s: at most %d budgets", name,
		    GK_UPLOADS_MAX);
		return RC_USAGE;
	}
	gk_upload_format(&u, text, sizeof(text));
	return spawn_strv_push(&o->max_upload, text) == -1 ? RC_NOMEM : RC_OK;
}

static enum opt_rc
opt_pids(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	unsigned long v;
	char show[68];

	if (!whole_number(arg, GK_RLIM_PIDS_MAX, &v) || v < 1) {
		gk_seterr(err, errlen, "--%s: '%s' is not a number of processes "
		    "from 1 to %d", name, spawn_printable(arg, show,
		    sizeof(show)), GK_RLIM_PIDS_MAX);
		return RC_USAGE;
	}
	o->limits.pids = (uint32_t)v;
	return RC_OK;
}

static enum opt_rc
opt_reattach(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	unsigned long v;
	char show[68];

	if (!whole_number(arg, SPAWN_TIMEOUT_MAX, &v)) {
		gk_seterr(err, errlen, "--%s: '%s' is not a whole number of "
		    "seconds from 0 (never) to %u", name, spawn_printable(arg,
		    show, sizeof(show)), SPAWN_TIMEOUT_MAX);
		return RC_USAGE;
	}
	o->reattach_timeout = (unsigned int)v;
	return RC_OK;
}

static enum opt_rc
opt_cpus(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	char e[256];

	if (gk_cpus_parse(arg, strlen(arg), &o->limits.cpus, e,
	    sizeof(e)) == -1) {
		gk_seterr(err, errlen, "--%s: %s", name, e);
		return RC_USAGE;
	}
	return RC_OK;
}

static enum opt_rc
opt_ro(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	return push_path(o, SPAWN_PATH_RO, name, arg, err, errlen);
}

static enum opt_rc
opt_rw(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	return push_path(o, SPAWN_PATH_RW, name, arg, err, errlen);
}

static enum opt_rc
opt_hide(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	return push_path(o, SPAWN_PATH_HIDE, name, arg, err, errlen);
}

static enum opt_rc
opt_socket(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	return push_path(o, SPAWN_PATH_SOCKET, name, arg, err, errlen);
}

static enum opt_rc
opt_env(struct spawn_opts *o, const char *name, const char *arg, char *err,
    size_t errlen)
{
	char show[68];

	if (!spawn_env_valid(arg)) {
		gk_seterr(err, errlen, "--%s: '%s' is not KEY=VALUE with KEY "
		    "made of letters, digits and '_' (not starting with a "
		    "digit)", name, spawn_printable(arg, show, sizeof(show)));
		return RC_USAGE;
	}
	return push_ptr(&o->env, &o->nenv, arg);
}

static enum opt_rc
opt_pass_env(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	char show[68], kv[256];

	/* a name alone: valid as "NAME=" is */
	if (snprintf(kv, sizeof(kv), "%s=", arg) >= (int)sizeof(kv) ||
	    strchr(arg, '=') != NULL || !spawn_env_valid(kv)) {
		gk_seterr(err, errlen, "--%s: '%s' is not a variable name "
		    "(letters, digits and '_', not starting with a digit; "
		    "the value comes from gk-run's environment)", name,
		    spawn_printable(arg, show, sizeof(show)));
		return RC_USAGE;
	}
	return push_ptr(&o->pass_env, &o->npass_env, arg);
}

/* --credential NAME@HOSTPATTERN[,...]: its hosts are allowed too. */
static enum opt_rc
opt_credential(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	struct spawn_cred c, *nc;
	size_t i, j;

	if (o->ncreds == SPAWN_CRED_MAX) {
		gk_seterr(err, errlen, "--%s: at most %d credentials", name,
		    SPAWN_CRED_MAX);
		return RC_USAGE;
	}
	if (spawn_cred_parse(arg, &c, err, errlen) == -1)
		return RC_USAGE;	/* out of memory too: err says */
	for (i = 0; i < o->ncreds; i++)
		if (strcmp(o->creds[i].name, c.name) == 0) {
			gk_seterr(err, errlen, "--%s %s given twice; give its "
			    "hosts in one: %s@HOST,HOST", name, c.name, c.name);
			spawn_cred_clear(&c);
			return RC_USAGE;
		}
	nc = reallocarray(o->creds, o->ncreds + 1, sizeof(*nc));
	if (nc == NULL) {
		spawn_cred_clear(&c);
		return RC_NOMEM;
	}
	o->creds = nc;
	o->creds[o->ncreds++] = c;
	for (i = 0; i < c.hosts.n; i++) {
		for (j = 0; j < o->allow.n && strcmp(o->allow.v[j],
		    c.hosts.v[i]) != 0; j++)
			;
		if (j == o->allow.n && spawn_strv_push(&o->allow,
		    c.hosts.v[i]) == -1)
			return RC_NOMEM;
	}
	return RC_OK;
}

/* arg is decimal digits only, their value at most max, in *v. */
static bool
whole_number(const char *arg, unsigned long max, unsigned long *v)
{
	const char *p;

	*v = 0;
	for (p = arg; *p >= '0' && *p <= '9' && *v <= max; p++)
		*v = *v * 10 + (unsigned long)(*p - '0');
	return p != arg && *p == '\0' && *v <= max;
}

static enum opt_rc
opt_timeout(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	unsigned long v;
	char show[68];

	if (!whole_number(arg, SPAWN_TIMEOUT_MAX, &v) || v < 1) {
		gk_seterr(err, errlen, "--%s: '%s' is not a whole number of "
		    "seconds from 1 to %u", name, spawn_printable(arg, show,
		    sizeof(show)), SPAWN_TIMEOUT_MAX);
		return RC_USAGE;
	}
	o->timeout = (unsigned int)v;
	return RC_OK;
}

static enum opt_rc
opt_control(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	char show[68];

	if (arg[0] == '\0' || strlen(arg) >= SUN_PATH_MAX) {
		gk_seterr(err, errlen, "--%s: '%s' is not a usable socket "
		    "path (1 to %zu bytes)", name, spawn_printable(arg, show,
		    sizeof(show)), SUN_PATH_MAX - 1);
		return RC_USAGE;
	}
	o->control = arg;
	return RC_OK;
}

/* A descriptor number; `mode` says what it must be open for. */
static enum opt_rc
fd_number(const char *name, const char *arg, const char *mode, int *fd,
    char *err, size_t errlen)
{
	unsigned long v;
	char show[68];

	if (!whole_number(arg, 1048576, &v)) {
		gk_seterr(err, errlen, "--%s: '%s' is not a descriptor number "
		    "(such as 3, open for %s)", name,
		    spawn_printable(arg, show, sizeof(show)), mode);
		return RC_USAGE;
	}
	*fd = (int)v;
	return RC_OK;
}

static enum opt_rc
opt_events_fd(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	return fd_number(name, arg, "writing", &o->events_fd, err, errlen);
}

static enum opt_rc
opt_decisions_fd(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	return fd_number(name, arg, "reading", &o->decisions_fd, err, errlen);
}

/* --label: what gatekeeperd shows for the cage (gk_proto.h's rule). */
static enum opt_rc
opt_label(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	char show[68];
	size_t i, n = strlen(arg);

	for (i = 0; i < n && arg[i] >= 0x20 && arg[i] < 0x7f; i++)
		;
	if (n == 0 || n > SPAWN_LABEL_MAX || i < n) {
		gk_seterr(err, errlen, "--%s: '%s' is not a label: 1 to %d "
		    "bytes of printable ASCII", name, spawn_printable(arg, show,
		    sizeof(show)), SPAWN_LABEL_MAX);
		return RC_USAGE;
	}
	o->label = arg;
	return RC_OK;
}

static enum opt_rc
opt_ask_timeout(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	unsigned long v;
	char show[68];

	if (!whole_number(arg, SPAWN_ASK_TIMEOUT_MAX, &v) || v < 1) {
		gk_seterr(err, errlen, "--%s: '%s' is not a whole number of "
		    "seconds from 1 to %d", name, spawn_printable(arg, show,
		    sizeof(show)), SPAWN_ASK_TIMEOUT_MAX);
		return RC_USAGE;
	}
	o->ask_timeout = (unsigned int)v;
	return RC_OK;
}

static enum opt_rc
opt_verbose(struct spawn_opts *o, const char *name, const char *arg,
    char *err, size_t errlen)
{
	(void)name;
	(void)arg;
	(void)err;
	(void)errlen;
	o->verbose++;
	return RC_OK;
}

/* An option that ends the parse: what to do instead of a run. */
#define END_HANDLER(fn, rc)						\
static enum opt_rc							\
fn(struct spawn_opts *o, const char *name, const char *arg, char *err,	\
    size_t errlen)							\
{									\
	(void)o;							\
	(void)name;							\
	(void)arg;							\
	(void)err;							\
	(void)errlen;							\
	return rc;							\
}
END_HANDLER(opt_help, RC_HELP)
END_HANDLER(opt_version, RC_VERSION)

/* ---- the parse ---------------------------------------------------------- */

static void
unknown_opt(char *const argv[], int ind, char *err, size_t errlen)
{
	const struct optdef *d = optdef_of(optopt);
	const char *a = ind > 0 ? argv[ind - 1] : "?";
	char show[68];

	if (d != NULL && strncmp(a, "--", 2) == 0)
		gk_seterr(err, errlen, "--%s does not take a value",
		    d->name);
	else if (optopt > 0x20 && optopt < 0x7f)
		gk_seterr(err, errlen, "unknown option '-%c'; see gk-run "
		    "--help", optopt);
	else if (optopt != 0)
		gk_seterr(err, errlen, "unknown option character 0x%02x; "
		    "see gk-run --help", (unsigned int)optopt & 0xff);
	else
		gk_seterr(err, errlen, "unknown option '%s'; see gk-run "
		    "--help", spawn_printable(a, show, sizeof(show)));
}

static void
missing_arg(int opt, char *err, size_t errlen)
{
	const struct optdef *d = optdef_of(opt);

	if (opt == 'a')
		gk_seterr(err, errlen, "-a/--allow needs a PATTERN");
	else
		gk_seterr(err, errlen, "--%s needs a value; see gk-run "
		    "--help", d != NULL ? d->name : "?");
}

/* One option from getopt_long (c) through its handler. */
static enum opt_rc
one_opt(struct spawn_opts *o, int c, char *const argv[], uint64_t *seen,
    char *err, size_t errlen)
{
	const struct optdef *d;
	size_t i;

	if (c == '?') {
		unknown_opt(argv, optind, err, errlen);
		return RC_USAGE;
	}
	if (c == ':') {
		missing_arg(optopt, err, errlen);
		return RC_USAGE;
	}
	if ((d = optdef_of(c)) == NULL) {
		gk_seterr(err, errlen, "internal error: option %d", c);
		return RC_USAGE;
	}
	i = (size_t)(d - optdefs);
	if (!d->repeat && (*seen & ((uint64_t)1 << i))) {
		gk_seterr(err, errlen, "--%s given twice; give it once",
		    d->name);
		return RC_USAGE;
	}
	*seen |= (uint64_t)1 << i;
	return d->apply(o, d->name, optarg != NULL ? optarg : "", err, errlen);
}

enum spawn_opt_status
spawn_opts_parse(int argc, char *const argv[], const char *env_control,
    struct spawn_opts *o, char *err, size_t errlen)
{
	static const enum spawn_opt_status status[] = {
		[RC_USAGE] = SPAWN_OPT_USAGE, [RC_NOMEM] = SPAWN_OPT_NOMEM,
		[RC_HELP] = SPAWN_OPT_HELP, [RC_VERSION] = SPAWN_OPT_VERSION,
		[RC_PRESETS] = SPAWN_OPT_PRESETS,
	};
	uint64_t seen = 0;
	enum opt_rc rc;
	int c;

	memset(o, 0, sizeof(*o));
	o->transparent = -1;
	o->limits_best_effort = -1;
	o->file_creds = 1;
	o->reattach_timeout = SPAWN_REATTACH_DEFAULT;
	o->events_fd = -1;
	o->decisions_fd = -1;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	optind = 0;	/* glibc: full reinitialization */
	opterr = 0;
	while ((c = getopt_long(argc, argv, SPAWN_SHORTOPTS, spawn_longopts,
	    NULL)) != -1) {
		if ((rc = one_opt(o, c, argv, &seen, err, errlen)) == RC_OK)
			continue;
		if (rc == RC_NOMEM)
			gk_seterr(err, errlen, "out of memory");
		spawn_opts_clear(o);
		return status[rc];
	}
	if (o->control == NULL)
		o->control = env_control != NULL && env_control[0] != '\0' &&
		    strlen(env_control) < SUN_PATH_MAX ? env_control :
		    SPAWN_CONTROL_DEFAULT;
	if (o->cache_dir && optind >= argc)
		return SPAWN_OPT_CACHE_DIR;	/* no command: none to run */
	if (optind >= argc) {
		gk_seterr(err, errlen, "no command given; usage: gk-run "
		    "[OPTIONS] -- COMMAND [ARG...] (see gk-run --help)");
		spawn_opts_clear(o);
		return SPAWN_OPT_USAGE;
	}
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	return SPAWN_OPT_RUN;
}
