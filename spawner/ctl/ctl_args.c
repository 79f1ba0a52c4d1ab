/*
 * gatekeeperctl's command line: one pass over argv with a table of
 * commands and one of options (no getopt: this is pure and may run any
 * number of times). Global options go anywhere; a command's own options
 * only after it. Every value is checked here, with a message that names
 * it and says what would be valid.
 */
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_policy.h"
#include "spawner/ctl/ctl_args.h"

#define SUN_PATH_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)
#define SHOW_MAX	68	/* bytes of an argument shown in a message */

#define CMD_BIT(c)	(1u << (c))

struct cmddef {
	const char	*name;
	enum ctl_cmd	 cmd;
	int		 minpos;	/* positional arguments */
	int		 maxpos;	/* -1: any number */
	const char	*posname;	/* the first one, for messages */
};

static const struct cmddef cmds[] = {
	{ "list",	CTL_CMD_LIST,	 0, 0,	NULL },
	{ "show",	CTL_CMD_SHOW,	 1, 1,	"the cage ID" },
	{ "denials",	CTL_CMD_DENIALS, 0, 0,	NULL },
	{ "allow",	CTL_CMD_ALLOW,	 2, -1,	"the cage ID" },
	{ "revoke",	CTL_CMD_REVOKE,	 2, -1,	"the cage ID" },
	{ "destroy",	CTL_CMD_DESTROY, 1, 1,	"the cage ID" },
	{ "stats",	CTL_CMD_STATS,	 0, 0,	NULL },
	{ "reload",	CTL_CMD_RELOAD,	 0, 0,	NULL },
	{ "pending",	CTL_CMD_PENDING, 0, 0,	NULL },
	{ "approve",	CTL_CMD_APPROVE, 1, 1,	"the question's QID" },
	{ "deny",	CTL_CMD_DENY,	 1, 1,	"the question's QID" },
};
#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

enum opt_id {
	OPT_CONTROL,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_HELP,
	OPT_VERSION,
	OPT_FOLLOW,
	OPT_CAGE,
	OPT_ONCE,
	OPT_RUN,
};

#define ANY_CMD		0u	/* a global option */

struct optdef {
	const char	*name;		/* long form */
	char		 short_name;
	bool		 has_arg;
	unsigned int	 cmds;		/* CMD_BIT()s, or ANY_CMD */
	enum opt_id	 id;
};

static const struct optdef opts[] = {
	{ "control",	'C', true,  ANY_CMD,			OPT_CONTROL },
	{ "json",	'j', false, ANY_CMD,			OPT_JSON },
	{ "timeout",	't', true,  ANY_CMD,			OPT_TIMEOUT },
	{ "help",	'h', false, ANY_CMD,			OPT_HELP },
	{ "version",	'V', false, ANY_CMD,			OPT_VERSION },
	{ "follow",	'f', false, CMD_BIT(CTL_CMD_DENIALS),	OPT_FOLLOW },
	{ "cage",	'c', true,  CMD_BIT(CTL_CMD_DENIALS),	OPT_CAGE },
	{ "once",	'o', false, CMD_BIT(CTL_CMD_APPROVE),	OPT_ONCE },
	{ "run",	'r', false, CMD_BIT(CTL_CMD_APPROVE),	OPT_RUN },
};
#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

/* The parse in progress. */
struct parse {
	struct ctl_args	*a;
	char *const	*argv;
	int		 argc;
	int		 i;		/* the next argv element */
	bool		 dashdash;	/* after "--": no more options */
	bool		 help;
	bool		 version;
	bool		 once;
	bool		 run;
	const char	*control;	/* --control */
	const char	*timeout;	/* --timeout */
	const char	*cage_opt;	/* --cage */
	const char	**pos;		/* positional arguments */
	size_t		 npos;
	char		*err;
	size_t		 errlen;
};

const char *
ctl_cmd_name(enum ctl_cmd c)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].cmd == c)
			return cmds[i].name;
	return "";
}

const char *
ctl_decision_name(enum ctl_decision d)
{
	switch (d) {
	case CTL_DECIDE_ONCE:
		return "once";
	case CTL_DECIDE_RUN:
		return "run";
	case CTL_DECIDE_DENY:
		return "deny";
	}
	return "?";
}

static const struct cmddef *
cmd_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

static const struct cmddef *
cmd_def(enum ctl_cmd c)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].cmd == c)
			return &cmds[i];
	return NULL;
}

/* Is `s` 1..max decimal digits whose value fits *out (uint64)? */
static bool
decimal(const char *s, size_t max, uint64_t lim, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= max || s[i] < '0' || s[i] > '9')
			return false;
		if (v > (lim - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return false;
	*out = v;
	return true;
}

static bool
cage_id_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= GK_CAGE_ID_LEN || !((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9')))
			return false;
	return i == GK_CAGE_ID_LEN;
}

static int
set_cage(struct parse *p, const char *what, const char *s)
{
	char sh[SHOW_MAX];

	if (!cage_id_valid(s))
		return gk_seterr(p->err, p->errlen, "%s: '%s' is not a cage id "
		    "(%d lower-case letters and digits, as gatekeeperctl "
		    "list shows)", what, gk_printable(s, sh, sizeof(sh)),
		    GK_CAGE_ID_LEN);
	memcpy(p->a->cage, s, GK_CAGE_ID_LEN + 1);
	return 0;
}

/* A valued option given a second time is an error. */
static int
once_only(struct parse *p, const char **slot, const char *name,
    const char *value)
{
	if (*slot != NULL)
		return gk_seterr(p->err, p->errlen, "--%s is given twice",
		    name);
	*slot = value;
	return 0;
}

static int
apply_opt(struct parse *p, const struct optdef *o, const char *value)
{
	switch (o->id) {
	case OPT_CONTROL:
		return once_only(p, &p->control, o->name, value);
	case OPT_TIMEOUT:
		return once_only(p, &p->timeout, o->name, value);
	case OPT_CAGE:
		return once_only(p, &p->cage_opt, o->name, value);
	case OPT_JSON:
		p->a->json = true;
		return 0;
	case OPT_HELP:
		p->help = true;
		return 0;
	case OPT_VERSION:
		p->version = true;
		return 0;
	case OPT_FOLLOW:
		p->a->follow = true;
		return 0;
	case OPT_ONCE:
		p->once = true;
		return 0;
	case OPT_RUN:
		p->run = true;
		return 0;
	}
	return 0;
}

static const struct optdef *
opt_lookup(const char *arg, size_t *namelen)
{
	const char *eq;
	size_t i, n;

	if (arg[1] != '-') {		/* -x or -xVALUE */
		*namelen = 2;
		for (i = 0; i < NOPTS; i++)
			if (opts[i].short_name == arg[1])
				return &opts[i];
		return NULL;
	}
	eq = strchr(arg + 2, '=');
	n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	*namelen = n;
	for (i = 0; i < NOPTS; i++)
		if (strlen(opts[i].name) == n - 2 &&
		    strncmp(opts[i].name, arg + 2, n - 2) == 0)
			return &opts[i];
	return NULL;
}

/* The option at argv[p->i] (and its value); p->i moves past them. */
static int
parse_opt(struct parse *p)
{
	const char *arg = p->argv[p->i++], *value = NULL;
	const struct optdef *o;
	char sh[SHOW_MAX];
	size_t n;

	if ((o = opt_lookup(arg, &n)) == NULL)
		return gk_seterr(p->err, p->errlen, "unknown option '%s'",
		    gk_printable(arg, sh, sizeof(sh)));
	if (o->cmds != ANY_CMD && (o->cmds & CMD_BIT(p->a->cmd)) == 0)
		return gk_seterr(p->err, p->errlen, "--%s is not an option "
		    "%s%s", o->name, p->a->cmd == CTL_CMD_NONE ? "before the "
		    "command" : "of ", ctl_cmd_name(p->a->cmd));
	if (!o->has_arg) {
		if (arg[n] != '\0' && arg[1] != '-')
			return gk_seterr(p->err, p->errlen, "unknown option "
			    "'%s'", gk_printable(arg, sh, sizeof(sh)));
		if (arg[n] != '\0')
			return gk_seterr(p->err, p->errlen, "--%s takes no "
			    "value", o->name);
		return apply_opt(p, o, NULL);
	}
	if (arg[n] != '\0')
		value = arg + n + (arg[1] == '-');	/* past '=' */
	else if (p->i < p->argc)
		value = p->argv[p->i++];
	else
		return gk_seterr(p->err, p->errlen, "--%s needs a value",
		    o->name);
	return apply_opt(p, o, value);
}

static int
parse_word(struct parse *p)
{
	const char *arg = p->argv[p->i++];
	const struct cmddef *c;
	char sh[SHOW_MAX];

	if (p->a->cmd != CTL_CMD_NONE) {
		p->pos[p->npos++] = arg;
		return 0;
	}
	if ((c = cmd_lookup(arg)) == NULL)
		return gk_seterr(p->err, p->errlen, "unknown command '%s'",
		    gk_printable(arg, sh, sizeof(sh)));
	p->a->cmd = c->cmd;
	return 0;
}

static int
check_control(struct parse *p, const char *env_control)
{
	const char *from = "--control";
	char sh[SHOW_MAX];

	if (p->control == NULL && env_control != NULL &&
	    env_control[0] != '\0') {
		p->control = env_control;
		from = "GK_CONTROL";
	}
	if (p->control == NULL) {
		p->a->control = GK_CONTROL_PATH_DEFAULT;
		return 0;
	}
	if (p->control[0] == '\0' || strlen(p->control) >= SUN_PATH_MAX)
		return gk_seterr(p->err, p->errlen, "%s: '%s' is not a usable "
		    "socket path (1 to %zu bytes)", from,
		    gk_printable(p->control, sh, sizeof(sh)), SUN_PATH_MAX - 1);
	p->a->control = p->control;
	return 0;
}

static int
check_timeout(struct parse *p)
{
	char sh[SHOW_MAX];
	uint64_t v;

	p->a->timeout = CTL_TIMEOUT_DEFAULT;
	if (p->timeout == NULL)
		return 0;
	if (!decimal(p->timeout, 5, UINT64_MAX, &v) || v < 1 ||
	    v > CTL_TIMEOUT_MAX)
		return gk_seterr(p->err, p->errlen, "--timeout: '%s' is not a "
		    "number of seconds from 1 to %d",
		    gk_printable(p->timeout, sh, sizeof(sh)), CTL_TIMEOUT_MAX);
	p->a->timeout = (unsigned int)v;
	return 0;
}

static int
check_pattern(struct parse *p, const char *s)
{
	struct gk_pattern pat;
	enum gk_pat_status st;
	size_t n = strlen(s);
	char msg[512];

	st = gk_pattern_parse((const uint8_t *)s, n, &pat);
	if (st == GK_PAT_OK)
		return 0;
	gk_pattern_error((const uint8_t *)s, n, st, msg, sizeof(msg));
	return gk_seterr(p->err, p->errlen, "%s: %s", ctl_cmd_name(p->a->cmd),
	    msg);
}

static int
check_qid(struct parse *p, const char *s)
{
	char sh[SHOW_MAX];

	if (!decimal(s, CTL_QID_MAX, UINT64_MAX, &p->a->qid))
		return gk_seterr(p->err, p->errlen, "%s: '%s' is not a "
		    "question id (a decimal number, as gatekeeperctl pending "
		    "shows)", ctl_cmd_name(p->a->cmd), gk_printable(s, sh,
		    sizeof(sh)));
	return 0;
}

/* The positional arguments, counted and checked for the command. */
static int
check_pos(struct parse *p)
{
	const struct cmddef *c = cmd_def(p->a->cmd);
	const char *name = c->name;
	char sh[SHOW_MAX];
	size_t i;

	if (p->npos < (size_t)c->minpos)
		return gk_seterr(p->err, p->errlen, "%s: missing %s", name,
		    p->npos == 0 ? c->posname : "the PATTERN (one at least)");
	if (c->maxpos >= 0 && p->npos > (size_t)c->maxpos)
		return gk_seterr(p->err, p->errlen, "%s: unexpected argument "
		    "'%s'", name, gk_printable(p->pos[c->maxpos], sh,
		    sizeof(sh)));
	switch (p->a->cmd) {
	case CTL_CMD_SHOW:
	case CTL_CMD_DESTROY:
	case CTL_CMD_ALLOW:
	case CTL_CMD_REVOKE:
		if (set_cage(p, name, p->pos[0]) == -1)
			return -1;
		for (i = 1; i < p->npos; i++)
			if (check_pattern(p, p->pos[i]) == -1)
				return -1;
		if ((p->a->npatterns = p->npos - 1) == 0)
			return 0;
		/* copied: p->pos is freed after the parse; NULL is NOMEM */
		if ((p->a->patterns = calloc(p->a->npatterns,
		    sizeof(*p->a->patterns))) != NULL)
			memcpy(p->a->patterns, p->pos + 1,
			    p->a->npatterns * sizeof(*p->a->patterns));
		return 0;
	case CTL_CMD_APPROVE:
	case CTL_CMD_DENY:
		return check_qid(p, p->pos[0]);
	case CTL_CMD_NONE:
	case CTL_CMD_LIST:
	case CTL_CMD_DENIALS:
	case CTL_CMD_STATS:
	case CTL_CMD_RELOAD:
	case CTL_CMD_PENDING:
	case CTL_CMD__MAX:
		break;
	}
	return 0;
}

/* After the words: the command's values checked and settled. */
static int
finish(struct parse *p, const char *env_control)
{
	if (p->a->cmd == CTL_CMD_NONE)
		return gk_seterr(p->err, p->errlen, "no command given");
	if (check_control(p, env_control) == -1 || check_timeout(p) == -1 ||
	    check_pos(p) == -1)
		return -1;
	if (p->cage_opt != NULL && set_cage(p, "--cage", p->cage_opt) == -1)
		return -1;
	if (p->once && p->run)
		return gk_seterr(p->err, p->errlen, "approve: --once and --run "
		    "exclude each other");
	if (p->a->cmd == CTL_CMD_DENY)
		p->a->decision = CTL_DECIDE_DENY;
	else
		p->a->decision = p->run ? CTL_DECIDE_RUN : CTL_DECIDE_ONCE;
	return 0;
}

/* Is -h or --help among the options (before any "--")? */
static bool
help_asked(int argc, char *const argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

static int
parse_words(struct parse *p)
{
	const char *arg;

	while (p->i < p->argc) {
		arg = p->argv[p->i];
		if (!p->dashdash && strcmp(arg, "--") == 0) {
			p->dashdash = true;
			p->i++;
		} else if (!p->dashdash && arg[0] == '-' && arg[1] != '\0') {
			if (parse_opt(p) == -1)
				return -1;
		} else if (parse_word(p) == -1)
			return -1;
	}
	return 0;
}

enum ctl_args_status
ctl_args_parse(int argc, char *const argv[], const char *env_control,
    struct ctl_args *a, char *err, size_t errlen)
{
	struct parse p;
	int r;

	memset(a, 0, sizeof(*a));
	memset(&p, 0, sizeof(p));
	p.a = a;
	p.argv = argv;
	p.argc = argc;
	p.i = 1;
	p.err = err;
	p.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	if ((p.pos = calloc((size_t)(argc > 0 ? argc : 1),
	    sizeof(*p.pos))) == NULL)
		return CTL_ARGS_NOMEM;
	r = parse_words(&p);
	if (r == 0 && !p.help && !p.version)
		r = finish(&p, env_control);
	free(p.pos);
	if (p.help || help_asked(argc, argv) || p.version || r == -1) {
		ctl_args_clear(a);
		if (p.help || help_asked(argc, argv))
			return CTL_ARGS_HELP;
		return p.version ? CTL_ARGS_VERSION : CTL_ARGS_USAGE;
	}
	if (a->npatterns > 0 && a->patterns == NULL)
		return CTL_ARGS_NOMEM;
	return CTL_ARGS_RUN;
}

void
ctl_args_clear(struct ctl_args *a)
{
	free(a->patterns);
	a->patterns = NULL;
	a->npatterns = 0;
}
