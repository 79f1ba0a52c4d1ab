/*
 * gk_ctlreq_table: the control protocol's ops (the fields each needs and
 * allows, its usage line) and the names of ops, statuses and decisions.
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"

const struct gk_ctl_op_spec gk_ctl_op_specs[GK_CTL_OP__MAX] = {
	[GK_CTL_OP_CAGE_CREATE] = { "cage.create", F_OP | F_ALLOW,
	    F_OP | F_SOURCE | F_NETNS | F_TRANSPARENT | F_ALLOW | F_LABEL |
	    F_EVENTS | F_LEARN | F_LIMITS | F_REATTACH | F_ASK | F_ASK_TIMEOUT |
	    F_MAX_UPLOAD | F_COMMAND | F_MOUNTS,
	    "{\"op\":\"cage.create\",\"source\":\"10.143.0.2\","
	    "\"allow\":[\"*.example.com\"],\"label\":\"demo\"} "
	    "or, with a network namespace fd sent along (SCM_RIGHTS), "
	    "{\"op\":\"cage.create\",\"netns\":true,"
	    "\"allow\":[\"*.example.com\"],\"transparent\":true} (label, "
	    "transparent, \"events\":true, this connection told of the "
	    "cage's denials, \"ask\":true with \"ask_timeout\":60, and "
	    "\"limits\":{\"memory\":268435456,\"pids\":64,\"cpus\":1.5}, "
	    "\"max_upload\":[\"10M\",\"1M@*.example.com\"], and for the audit "
	    "\"command\":[\"make\",\"test\"] and "
	    "\"mounts\":[\"rw:/home/u/src\"] are optional)" },
	[GK_CTL_OP_CAGE_UPDATE] = { "cage.update", F_OP | F_ID,
	    F_OP | F_ID | F_ALLOW | F_ADD | F_REMOVE,
	    "{\"op\":\"cage.update\",\"id\":\"ID\","
	    "\"allow\":[\"*.example.com\"]} to replace the allowlist, or "
	    "\"add\":[...] and/or \"remove\":[...] to change it" },
	[GK_CTL_OP_CAGE_DESTROY] = { "cage.destroy", F_OP | F_ID,
	    F_OP | F_ID | F_EXIT | F_SIGNAL | F_REASON,
	    "{\"op\":\"cage.destroy\",\"id\":\"ID\"} (its own connection "
	    "may say how its command ended: \"exit\":0 or "
	    "\"signal\":\"SIGKILL\", and \"reason\":\"walltime\" or "
	    "\"memory\")" },
	[GK_CTL_OP_CAGE_LIST] = { "cage.list", F_OP, F_OP,
	    "{\"op\":\"cage.list\"}" },
	[GK_CTL_OP_STATS] = { "stats", F_OP, F_OP, "{\"op\":\"stats\"}" },
	[GK_CTL_OP_CAGE_ATTACH] = { "cage.attach", F_OP | F_ID, F_OP | F_ID,
	    "{\"op\":\"cage.attach\",\"id\":\"ID\"} with a pidfd of the "
	    "process to put in the cage sent along (SCM_RIGHTS)" },
	[GK_CTL_OP_CAGE_DECIDE] = { "cage.decide",
	    F_OP | F_ID | F_ASK | F_DECISION, F_OP | F_ID | F_ASK |
	    F_DECISION | F_BY,
	    "{\"op\":\"cage.decide\",\"id\":\"ID\",\"ask\":\"17\","
	    "\"decision\":\"once\",\"by\":\"tty\"} (decision: once, run, "
	    "save or deny; by: tty, supervisor or operator, optional)" },
	[GK_CTL_OP_CAGE_SHOW] = { "cage.show", F_OP | F_ID, F_OP | F_ID,
	    "{\"op\":\"cage.show\",\"id\":\"ID\"}" },
	[GK_CTL_OP_DENIALS] = { "denials", F_OP, F_OP | F_ID | F_FOLLOW,
	    "{\"op\":\"denials\"} (\"id\":\"ID\", one cage's, and "
	    "\"follow\":true, new ones as they happen, are optional)" },
	[GK_CTL_OP_PENDING] = { "pending", F_OP, F_OP,
	    "{\"op\":\"pending\"}" },
	[GK_CTL_OP_RELOAD] = { "reload", F_OP, F_OP,
	    "{\"op\":\"reload\"}" },
	[GK_CTL_OP_CAGE_CREDENTIAL] = { "cage.credential",
	    F_OP | F_ID | F_NAME | F_PLACEHOLDER | F_VALUE | F_HOSTS,
	    F_OP | F_ID | F_NAME | F_PLACEHOLDER | F_VALUE | F_HOSTS,
	    "{\"op\":\"cage.credential\",\"id\":\"ID\","
	    "\"name\":\"GITHUB_TOKEN\",\"placeholder\":\"ghp_...\","
	    "\"value\":\"ghp_...\",\"hosts\":[\"github.com\"]} (placeholder "
	    "and value: 8 to 4096 printable ASCII bytes, the same length; "
	    "hosts: 1 to 32 patterns)" },
};

static const char *const status_str[] = {
	[GK_CTL_OK] = "ok",
	[GK_CTL_EMPTY] = "empty request",
	[GK_CTL_TOO_LONG] = "request too long",
	[GK_CTL_BAD_JSON] = "bad JSON",
	[GK_CTL_NOT_OBJECT] = "not an object",
	[GK_CTL_DUPLICATE_KEY] = "duplicate key",
	[GK_CTL_BAD_OP] = "bad op",
	[GK_CTL_UNKNOWN_FIELD] = "unknown field",
	[GK_CTL_MISSING_FIELD] = "missing field",
	[GK_CTL_BAD_TYPE] = "wrong type",
	[GK_CTL_BAD_VALUE] = "invalid value",
	[GK_CTL_NOMEM] = "out of memory",
};

const char *
gk_ctl_op_name(enum gk_ctl_op op)
{
	if (op <= GK_CTL_OP_NONE || op >= GK_CTL_OP__MAX)
		return "none";
	return gk_ctl_op_specs[op].name;
}

/* "cage.create, cage.update, ...": the op table's names, in its order. */
const char *
gk_ctlreq_known_ops(char *buf, size_t len)
{
	size_t o = 0;
	int op, n;

	buf[0] = '\0';
	for (op = GK_CTL_OP_NONE + 1; op < GK_CTL_OP__MAX; op++) {
		n = snprintf(buf + o, len - o, "%s%s", o > 0 ? ", " : "",
		    gk_ctl_op_specs[op].name);
		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
	return buf;
}

const char *
gk_ctl_strstatus(enum gk_ctl_status st)
{
	if ((size_t)st >= sizeof(status_str) / sizeof(status_str[0]))
		return "unknown status";
	return status_str[st];
}

const char *const gk_ctl_decision_names[GK_DECISION__MAX] = {
	[GK_DECISION_ONCE] = "once",
	[GK_DECISION_RUN] = "run",
	[GK_DECISION_SAVE] = "save",
	[GK_DECISION_DENY] = "deny",
	[GK_DECISION_TIMEOUT] = "timeout",
};

const char *
gk_decision_name(enum gk_decision d)
{
	return (size_t)d < GK_DECISION__MAX ? gk_ctl_decision_names[d] : "unknown";
}
