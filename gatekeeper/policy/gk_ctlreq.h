/*
 * gk_ctlreq: the control socket's request parser (DESIGN.md, "Control
 * socket"). One request is one line of JSON, an object with "op":
 *
 *   {"op":"cage.create","source":"10.143.0.2","allow":["*.github.com"],
 *    "label":"demo"}
 *   {"op":"cage.update","id":"k3j9x0qa","allow":["example.com"]}
 *   {"op":"cage.update","id":"k3j9x0qa","add":["a.example"],
 *    "remove":["example.com"]}
 *   {"op":"cage.show","id":"k3j9x0qa"}
 *   {"op":"cage.destroy","id":"k3j9x0qa"}
 *   {"op":"cage.attach","id":"k3j9x0qa"}   (a pidfd sent along)
 *   {"op":"cage.decide","id":"k3j9x0qa","ask":"17","decision":"run",
 *    "by":"tty"}
 *   {"op":"cage.credential","id":"k3j9x0qa","name":"GITHUB_TOKEN",
 *    "placeholder":"ghp_...","value":"ghp_...","hosts":["github.com"]}
 *   {"op":"cage.list"}
 *   {"op":"denials","id":"k3j9x0qa","follow":true}  (both optional)
 *   {"op":"pending"}
 *   {"op":"stats"}
 *   {"op":"reload"}
 *
 * The parser checks the JSON, the shape of the request (known op, known
 * fields, their types, required fields, no duplicate keys) and the
 * syntax of the values it can check alone (source is an IP literal, the
 * id looks like an id, the label is printable). Allowlist patterns are
 * only copied: gk_allowlist_new() checks them. Pure: no I/O, no logging.
 * A credential's placeholder and value are never quoted in a message.
 */
#ifndef GK_CTLREQ_H
#define GK_CTLREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_rlimits.h"
#include "gatekeeper/policy/gk_upload.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_proto.h"

#define GK_CTL_DEPTH_MAX	3	/* object > array > string */
#define GK_CTL_SOURCE_MAX	63	/* source address text */
#define GK_CTL_ERRLEN		512	/* any parser message fits */
#define GK_CTL_CGNAME_MAX	72	/* a cage's cgroup (or scope) name */
/* cage.credential: an environment variable's name, [A-Za-z_][A-Za-z0-9_]*;
 * a placeholder and its value, the same length of 0x21..0x7e, different;
 * the host patterns (each at most GK_PATTERN_MAX bytes) it is bound to */
#define GK_CTL_CRED_NAME_MAX	128
#define GK_CTL_CRED_MIN		8
#define GK_CTL_CRED_MAX		4096
#define GK_CTL_CRED_HOSTS_MAX	32
/* cage.create, for its audit line: the command's arguments (each a string
 * of at most GK_CTL_ARG_MAX bytes) and the sandbox's mounts ("ro:PATH",
 * "rw:PATH", "hide:PATH", "socket:PATH"); cage.destroy: a signal's name */
#define GK_CTL_CMD_MAX		64
#define GK_CTL_ARG_MAX		256
#define GK_CTL_MOUNTS_MAX	64
#define GK_CTL_MOUNT_MAX	1024
#define GK_CTL_SIGNAL_MAX	15	/* "SIGRTMIN+30" */
#define GK_CTL_ALLOW_SHOWN	64	/* patterns a cage.create line names */

enum gk_ctl_op {
	GK_CTL_OP_NONE,		/* only on error */
	/* in this order in messages naming the known ops */
	GK_CTL_OP_CAGE_CREATE,
	GK_CTL_OP_CAGE_UPDATE,
	GK_CTL_OP_CAGE_DESTROY,
	GK_CTL_OP_CAGE_LIST,
	GK_CTL_OP_CAGE_SHOW,
	GK_CTL_OP_CAGE_ATTACH,
	GK_CTL_OP_CAGE_DECIDE,
	GK_CTL_OP_DENIALS,
	GK_CTL_OP_PENDING,
	GK_CTL_OP_STATS,
	GK_CTL_OP_RELOAD,
	GK_CTL_OP_CAGE_CREDENTIAL,
	GK_CTL_OP__MAX
};

enum gk_ctl_status {
	GK_CTL_OK,
	GK_CTL_EMPTY,		/* blank line */
	GK_CTL_TOO_LONG,	/* over GK_CTL_LINE_MAX */
	GK_CTL_BAD_JSON,	/* syntax, depth, NUL byte, trailing data */
	GK_CTL_NOT_OBJECT,
	GK_CTL_DUPLICATE_KEY,
	GK_CTL_BAD_OP,		/* missing, not a string, or unknown */
	GK_CTL_UNKNOWN_FIELD,
	GK_CTL_MISSING_FIELD,
	GK_CTL_BAD_TYPE,	/* a field of the wrong JSON type */
	GK_CTL_BAD_VALUE,	/* right type, invalid value */
	GK_CTL_NOMEM,
};

struct gk_ctlreq {
	enum gk_ctl_op	 op;
	/* update, destroy, attach, show, decide; denials (optional) */
	char		 id[GK_CAGE_ID_LEN + 1];
	/* create: either source, or netns (the namespace fd came along);
	 * label "" if none */
	bool		 netns;
	bool		 transparent;	/* netns: redirect its other TCP */
	char		 source[GK_CTL_SOURCE_MAX + 1];
	struct gk_addr	 source_addr;
	char		 label[GK_CAGE_LABEL_MAX + 1];
	bool		 events;	/* create: tell this connection the
					   cage's denials (gk_events.h) */
	bool		 learn;		/* create: any public name, each one
					   used told (gk_events.h) */
	bool		 ask;		/* create: hold, ask the owner */
	uint32_t	 ask_timeout;	/* create: seconds (with ask) */
	/* decide: the question, the answer and who gave it */
	uint64_t	 question;
	enum gk_decision decision;
	char		 by[16];
	/* create, netns: "limits":{"memory":BYTES,"pids":N,"cpus":X,
	 * "best_effort":true}; all optional, zero when absent */
	struct gk_rlimits limits;
	bool		 limits_best_effort;	/* run uncontained if they
						   cannot be enforced */
	/* create, netns: "reattach":"cage-..." (or ""): the same sandbox
	 * again, after gatekeeperd restarted; its cgroup (named as the
	 * earlier create's reply said) is taken over, not made */
	bool		 reattach;
	char		 reattach_cg[GK_CTL_CGNAME_MAX + 1];
	/* create: "max_upload", its upload budgets (gk_upload.h) */
	struct gk_upload *uploads;
	size_t		 nuploads;
	/* create, update: nallow strings (and a NULL after them) */
	char		**allow;
	size_t		 nallow;
	/* update: a change instead of a whole list (edit): patterns to add
	 * and to remove, each NULL-terminated, either may be NULL */
	bool		 edit;
	char		**add;
	size_t		 nadd;
	char		**remove;
	size_t		 nremove;
	/* denials: stay and be told each new one */
	bool		 follow;
	/* credential: the environment variable's name; its placeholder and
	 * value (cred_len bytes each and a NUL; the value is wiped when
	 * cleared); nhosts patterns it is bound to (and a NULL) */
	char		 cred_name[GK_CTL_CRED_NAME_MAX + 1];
	char		*cred_placeholder;
	char		*cred_value;
	size_t		 cred_len;
	char		**hosts;
	size_t		 nhosts;
	/* create: what runs in the cage, for the audit only (gk-run's
	 * command and mounts; ncommand, nmounts strings and a NULL after) */
	char		**command;
	size_t		 ncommand;
	char		**mounts;
	size_t		 nmounts;
	/* destroy, by the cage's own connection: how its command ended,
	 * "exit" (with exited) or "signal" ("SIGKILL"), and "reason": what
	 * ended it ("walltime", "memory"; "" when not said) */
	bool		 exited;
	uint8_t		 exit_status;
	char		 signal[GK_CTL_SIGNAL_MAX + 1];
	char		 end_reason[16];
};

/*
 * Parse one request line (without its newline; a trailing "\r" and
 * surrounding white space are ignored). On GK_CTL_OK `out` holds the
 * request and must be released with gk_ctlreq_clear(); on any other
 * status `out` holds nothing to release and `err` (if errlen > 0) holds a
 * message a person can act on. `out` need not be initialized.
 */
enum gk_ctl_status gk_ctlreq_parse(const uint8_t *buf, size_t len,
		    struct gk_ctlreq *out, char *err, size_t errlen);
void		 gk_ctlreq_clear(struct gk_ctlreq *req);

const char	*gk_ctl_op_name(enum gk_ctl_op op);
/* "once", "run", "save", "deny", "timeout" (gk_proto.h). */
const char	*gk_decision_name(enum gk_decision d);
const char	*gk_ctl_strstatus(enum gk_ctl_status st);

/*
 * A cage.create request's canonical spec (gk_ctlreq_life.c): a new object
 * of what the cage was asked to be, its members in name order, defaults
 * filled in, "reattach" left out (the same sandbox again has the same
 * spec): allow, ask, ask_timeout (with ask), command, events, label,
 * learn, limits, mounts, netns, source, transparent. A create holds no
 * secret. gk_ctlreq_spec_sha256 puts the SHA-256 of its plain JSON text
 * into hex (64 hex digits and a NUL); -1 when out of memory.
 */
struct json_object;
struct json_object *gk_ctlreq_spec(const struct gk_ctlreq *req);
int		 gk_ctlreq_spec_sha256(const struct gk_ctlreq *req,
		    char hex[65]);

/*
 * Reply encoders, pure too: new JSON values the caller owns (puts).
 * A cage is {"id","label","source","uid","allow"}; with `full` (cage.list)
 * also "created" (UTC, ISO 8601), "pins", "dns_queries", "connections"
 * and "denied" per kind. Stats are the gk_stats counters, nested by
 * label ({"dns_queries":{"allowed":N,...},...}), plus "cages".
 */
#endif /* GK_CTLREQ_H */
