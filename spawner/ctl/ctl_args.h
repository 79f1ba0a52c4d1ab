/*
 * ctl_args: gatekeeperctl's command line, parsed into one struct
 * ctl_args, every value checked (cage ids, question ids, patterns,
 * --timeout), so that main only ever sees a valid command. Pure: no
 * I/O, no globals (not getopt); messages in the caller's buffer.
 *
 *   gatekeeperctl [--control PATH] [--json] [--timeout SECONDS]
 *       COMMAND [ARGS]
 *
 * The global options may also follow the command; `--` ends the
 * options.
 */
#ifndef CTL_ARGS_H
#define CTL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_proto.h"

#define CTL_ERRLEN		1024	/* any message fits */
#define CTL_TIMEOUT_DEFAULT	10	/* seconds, each wait for a reply */
#define CTL_TIMEOUT_MAX		3600
#define CTL_QID_MAX		20	/* digits in a question's id */

/* Exit statuses (gatekeeperctl --help, gatekeeperctl(8)). */
#define CTL_EXIT_OK		0
#define CTL_EXIT_REFUSED	1	/* gatekeeperd said no */
#define CTL_EXIT_USAGE		2
#define CTL_EXIT_CONN		3	/* cannot talk to gatekeeperd */
#define CTL_EXIT_DENIED		4	/* not permitted */

enum ctl_cmd {
	CTL_CMD_NONE,		/* not given (or --help/--version alone) */
	CTL_CMD_LIST,
	CTL_CMD_SHOW,
	CTL_CMD_DENIALS,
	CTL_CMD_ALLOW,
	CTL_CMD_REVOKE,
	CTL_CMD_DESTROY,
	CTL_CMD_STATS,
	CTL_CMD_RELOAD,
	CTL_CMD_PENDING,
	CTL_CMD_APPROVE,
	CTL_CMD_DENY,
	CTL_CMD__MAX
};

/* An answer to a question, as cage.decide spells it. */
enum ctl_decision {
	CTL_DECIDE_ONCE,
	CTL_DECIDE_RUN,
	CTL_DECIDE_DENY,
};

enum ctl_args_status {
	CTL_ARGS_RUN,
	CTL_ARGS_HELP,		/* --help: cmd's text, or the general one */
	CTL_ARGS_VERSION,
	CTL_ARGS_USAGE,		/* err says what; cmd if it was known */
	CTL_ARGS_NOMEM,
};

struct ctl_args {
	enum ctl_cmd		 cmd;
	const char		*control;	/* --control, $GK_CONTROL or
						   the default */
	bool			 json;		/* --json */
	unsigned int		 timeout;	/* seconds, 1..3600 */
	bool			 follow;	/* denials --follow */
	char			 cage[GK_CAGE_ID_LEN + 1];	/* "" if none */
	const char		**patterns;	/* allow, revoke: an owned
						   array, into argv */
	size_t			 npatterns;
	uint64_t		 qid;		/* approve, deny */
	enum ctl_decision	 decision;	/* approve: once or run; deny */
};

/*
 * Parse argv (argv[0] is the program). env_control is $GK_CONTROL (or
 * NULL). On CTL_ARGS_RUN `a` must be released with ctl_args_clear();
 * on any other status it holds nothing to release (a->cmd still names
 * the command when it was recognised, for HELP and USAGE).
 */
enum ctl_args_status ctl_args_parse(int argc, char *const argv[],
		    const char *env_control, struct ctl_args *a, char *err,
		    size_t errlen);
void		 ctl_args_clear(struct ctl_args *a);

/* "list", "show", ...; "" for CTL_CMD_NONE. */
const char	*ctl_cmd_name(enum ctl_cmd c);
/* "once", "run", "deny". */
const char	*ctl_decision_name(enum ctl_decision d);

/* The --help text: the general one for CTL_CMD_NONE, else the
 * command's own (ctl_usage.c). */
const char	*ctl_usage(enum ctl_cmd c);

#endif /* CTL_ARGS_H */
