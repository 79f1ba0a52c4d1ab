/*
 * gatekeeperctl --help, and `gatekeeperctl COMMAND --help`: what each
 * command does, its options, the exit statuses.
 */
#include "spawner/ctl/ctl_args.h"

#define OPTIONS_TEXT \
"Options (before or after the command):\n" \
"  -C, --control PATH   gatekeeperd's control socket (or $GK_CONTROL;\n" \
"                       default " GK_CONTROL_PATH_DEFAULT ")\n" \
"  -j, --json           print gatekeeperd's replies as they came, one JSON\n" \
"                       object a line (following denials: every event too)\n" \
"  -t, --timeout SECONDS  how long to wait for each reply (1 to 3600;\n" \
"                       default " GK_STR(CTL_TIMEOUT_DEFAULT) ")\n" \
"  -h, --help           this text; COMMAND --help: that command's\n" \
"  -V, --version        the version\n"

#define EXIT_TEXT \
"Exit status: 0 success; 1 gatekeeperd refused the request (its message\n" \
"on stderr); 2 usage error; 3 cannot talk to gatekeeperd (not running,\n" \
"no access to its socket, no reply in time, a reply that is not\n" \
"understood); 4 not permitted (that cage is not yours, or reload by a\n" \
"non-root user, or you are neither root nor in group " GK_CONTROL_GROUP \
").\n"

/* The end of each command's text. */
#define GLOBAL_TEXT \
"\n" \
"Options anywhere: -C, --control PATH; -j, --json; -t, --timeout SECONDS\n" \
"(gatekeeperctl --help says more, and what the exit statuses mean).\n"

static const char usage_text[] =
"usage: gatekeeperctl [OPTIONS] COMMAND [ARGS]\n"
"\n"
"Look at and steer gatekeeperd's cages over its control socket.\n"
"\n"
"Commands:\n"
"  list                 the cages: id, label, uid, source, age, patterns,\n"
"                       denials (and open questions of asking cages)\n"
"  show ID              one cage: its allowlist, pinned names, recent\n"
"                       denials and open questions\n"
"  denials [--follow] [--cage ID]\n"
"                       recent denials, one line each; --follow keeps\n"
"                       printing new ones until interrupted\n"
"  allow ID PATTERN...  add patterns to a running cage's allowlist\n"
"  revoke ID PATTERN... remove patterns from it\n"
"  destroy ID           end the cage (its processes are killed)\n"
"  stats                gatekeeperd's counters\n"
"  reload               reload the configuration and the host policy\n"
"                       (root only)\n"
"  pending              open questions of asking cages (gk-run --ask)\n"
"  approve QID [--once|--run]\n"
"                       answer a question: let it through once (default)\n"
"                       or allow its host:port for the rest of the run\n"
"  deny QID             refuse it\n"
"\n"
OPTIONS_TEXT
"\n"
"Root sees every cage; a member of group " GK_CONTROL_GROUP " sees and\n"
"changes only the cages it created (list, denials and pending say so on\n"
"stderr).\n"
"\n"
EXIT_TEXT
"\n"
"Examples:\n"
"  gatekeeperctl list\n"
"  gatekeeperctl denials --follow --cage k3j9x0qa\n"
"  gatekeeperctl allow k3j9x0qa '*.github.com' pypi.org:443\n"
"  gatekeeperctl pending && gatekeeperctl approve 17 --run\n";

static const char list_text[] =
"usage: gatekeeperctl list\n"
"\n"
"The cages, one line each: ID, LABEL, UID, SOURCE, AGE (since it was\n"
"created), PATTERNS (in its allowlist), DENIALS (all kinds), and\n"
"QUESTIONS (open ones) when any cage asks. \"no cages\" when there are\n"
"none. --json: the cage.list reply.\n"
GLOBAL_TEXT;

static const char show_text[] =
"usage: gatekeeperctl show ID\n"
"\n"
"One cage as \"key: value\" lines: its label, uid, source, creation time\n"
"(UTC) and counters, its allowlist one pattern a line, the names it has\n"
"pinned (name -> address, expires in), its recent denials (at most 32,\n"
"each distinct one with its count) and open questions. --json: the\n"
"cage.show reply.\n"
GLOBAL_TEXT;

static const char denials_text[] =
"usage: gatekeeperctl denials [--follow] [--cage ID]\n"
"\n"
"Recent denials (DNS and proxies alike), oldest first, one line each:\n"
"  TIME CAGE (LABEL) KIND HOST[:PORT] REASON [xCOUNT]\n"
"\n"
"  -f, --follow         then print each new denial as it happens (with\n"
"                       what was wrong after \" - \"), until interrupted\n"
"                       or, with --cage, until that cage ends (exit 0)\n"
"  -c, --cage ID        only that cage's\n"
"--json: the denials reply, then (--follow) every event line.\n"
GLOBAL_TEXT;

static const char allow_text[] =
"usage: gatekeeperctl allow ID PATTERN...\n"
"\n"
"Add the patterns to the running cage's allowlist (those it has stay\n"
"once) and print the allowlist it has then. PATTERN as gk-run takes\n"
"them: example.com, *.example.com, example.com:443, 203.0.113.0/24.\n"
"gatekeeperd may refuse one its host policy does not allow (exit 1).\n"
GLOBAL_TEXT;

static const char revoke_text[] =
"usage: gatekeeperctl revoke ID PATTERN...\n"
"\n"
"Remove the patterns from the running cage's allowlist and print the\n"
"allowlist it has then. A pattern the cage does not have is an error\n"
"(exit 1) that names it. Names pinned under a removed pattern are\n"
"dropped at once.\n"
GLOBAL_TEXT;

static const char destroy_text[] =
"usage: gatekeeperctl destroy ID\n"
"\n"
"End the cage: its processes are killed and its owner's gk-run sees it\n"
"end.\n"
GLOBAL_TEXT;

static const char stats_text[] =
"usage: gatekeeperctl stats\n"
"\n"
"gatekeeperd's counters since it started: DNS queries and cache,\n"
"connections by proxy and verdict, denials by kind and reason (only the\n"
"non-zero ones), bytes, tunnels and cages. --json: the stats reply.\n"
GLOBAL_TEXT;

static const char reload_text[] =
"usage: gatekeeperctl reload\n"
"\n"
"Reload the configuration file and the host policy, as SIGHUP does\n"
"(root only), and print the policy's version and how many cages were\n"
"kept. A configuration with errors is not taken: the running one is\n"
"kept and the errors are printed (exit 1).\n"
GLOBAL_TEXT;

static const char pending_text[] =
"usage: gatekeeperctl pending\n"
"\n"
"The open questions of asking cages (gk-run --ask), one line each: QID,\n"
"CAGE, LABEL, KIND, TARGET (host:port), AGE, EXPIRES (seconds until it\n"
"is refused unanswered), CONNS (connections waiting on it). Answer with\n"
"approve or deny.\n"
GLOBAL_TEXT;

static const char approve_text[] =
"usage: gatekeeperctl approve QID [--once|--run]\n"
"\n"
"Answer question QID (gatekeeperctl pending lists them):\n"
"  -o, --once           let the connections waiting on it through\n"
"                       (the default)\n"
"  -r, --run            and allow its host:port for the rest of the run\n"
"\"no pending question QID\" (exit 1) if there is no such open question.\n"
GLOBAL_TEXT;

static const char deny_text[] =
"usage: gatekeeperctl deny QID\n"
"\n"
"Refuse question QID: its connections are refused, and so is its\n"
"host:port for the rest of the run.\n"
GLOBAL_TEXT;

const char *
ctl_usage(enum ctl_cmd c)
{
	switch (c) {
	case CTL_CMD_LIST:
		return list_text;
	case CTL_CMD_SHOW:
		return show_text;
	case CTL_CMD_DENIALS:
		return denials_text;
	case CTL_CMD_ALLOW:
		return allow_text;
	case CTL_CMD_REVOKE:
		return revoke_text;
	case CTL_CMD_DESTROY:
		return destroy_text;
	case CTL_CMD_STATS:
		return stats_text;
	case CTL_CMD_RELOAD:
		return reload_text;
	case CTL_CMD_PENDING:
		return pending_text;
	case CTL_CMD_APPROVE:
		return approve_text;
	case CTL_CMD_DENY:
		return deny_text;
	case CTL_CMD_NONE:
	case CTL_CMD__MAX:
		break;
	}
	return usage_text;
}
