/*
 * spawn: gk-run, the unprivileged spawner (DESIGN.md, "gk-run").
 *
 * gk-run parses its argv into typed options (spawn_opts_parse), reads
 * allow-files (spawn_allowfile_parse), resolves paths against the real
 * filesystem into a plan (struct spawn_plan), and hands the plan to a
 * pure builder: spawn_bwrap_build() for Linux, spawn_sbpl_build() for
 * macOS. Everything declared here except the functions under "I/O" is
 * pure: no I/O, no logging, bounded input, messages in caller buffers.
 */
#ifndef SPAWN_H
#define SPAWN_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/policy/gk_rlimits.h"

#define SPAWN_CONTROL_DEFAULT	GK_CONTROL_PATH_DEFAULT
#define SPAWN_ERRLEN		1024	/* any message fits */
#define SPAWN_REATTACH_DEFAULT	300	/* --reattach-timeout, seconds */
#define SPAWN_LABEL_MAX		GK_CAGE_LABEL_MAX
#define SPAWN_TIMEOUT_MAX	31536000u	/* one year, in seconds */
#define SPAWN_GRACE_SEC		5	/* SIGTERM .. SIGKILL on timeout */
#define SPAWN_REPLY_WAIT_MS	10000	/* bound on gatekeeperd's reply */
#define SPAWN_ALLOWFILE_MAX	(1024 * 1024)	/* bytes in one allow-file */
#define SPAWN_ENDPOINT_MAX	64	/* "[v6]:port" text */
#define SPAWN_TOKEN_MAX		GK_CAGE_TOKEN_LEN
#define SPAWN_PRESET_NAME_MAX	32
/* apt's configuration for root inside (APT_CONFIG), on the fresh /run */
#define SPAWN_APT_CONF		"/run/gk-run/apt.conf"

/* Exit statuses (DESIGN.md); otherwise the command's own status. */
#define SPAWN_EXIT_TIMEOUT	124
#define SPAWN_EXIT_FAIL		125
#define SPAWN_EXIT_NOEXEC	126
#define SPAWN_EXIT_NOTFOUND	127

enum spawn_net {
	SPAWN_NET_AUTO,		/* gated with any --allow, else none */
	SPAWN_NET_GATED,
	SPAWN_NET_NONE,
	SPAWN_NET_HOST,
};

enum spawn_fs {
	SPAWN_FS_SANDBOX,
	SPAWN_FS_HOST,
};

enum spawn_seccomp {
	SPAWN_SECCOMP_DEFAULT,
	SPAWN_SECCOMP_RELAXED,
	SPAWN_SECCOMP_OFF,
};

enum spawn_platform {
	SPAWN_PLATFORM_LINUX,
	SPAWN_PLATFORM_MACOS,
};

/* --cache: where the tool caches inside the sandbox live. */
enum spawn_cache {
	SPAWN_CACHE_PRIVATE,	/* gk-run's own directories, one set per
				   project (the working directory) */
	SPAWN_CACHE_SHARED,	/* gk-run's own, one set for all projects */
	SPAWN_CACHE_TMP,	/* a fresh tmpfs each run */
	SPAWN_CACHE_HOST,	/* the host's own caches, writable */
};

enum spawn_path_kind {
	SPAWN_PATH_RO,
	SPAWN_PATH_RW,
	SPAWN_PATH_HIDE,
	SPAWN_PATH_SOCKET,	/* --socket: one host socket, reachable */
};

/* A growable vector of owned strings, NULL-terminated when n > 0. */
struct spawn_strv {
	char		**v;
	size_t		  n;
	size_t		  cap;
	bool		  nomem;	/* sticky: a push failed */
};

/* A growable string, always NUL-terminated once anything was put. */
struct spawn_buf {
	char		*s;	/* owned; NULL until the first put */
	size_t		 n;
	size_t		 cap;
	bool		 nomem;	/* sticky: a put failed */
};

int		 spawn_strv_push(struct spawn_strv *sv, const char *s);
int		 spawn_strv_pushn(struct spawn_strv *sv, const char *s,
		    size_t len);
int		 spawn_strv_pushf(struct spawn_strv *sv, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 spawn_strv_clear(struct spawn_strv *sv);
void		 spawn_buf_putn(struct spawn_buf *b, const char *s, size_t n);
void		 spawn_buf_puts(struct spawn_buf *b, const char *s);
/*
 * Lines from a stream, at most `cap` bytes each, in the caller's buffer
 * of cap + 1 bytes. spawn_lines_feed() hands each complete line (without
 * its newline, NUL-terminated) to cb; a longer one comes as toolong with
 * len 0 once its newline came. cb returns false to drop the rest of p
 * and what is buffered.
 */
struct spawn_lines {
	char		*buf;
	size_t		 cap;
	size_t		 len;
	bool		 skip;		/* in a line over cap */
};

typedef bool	(*spawn_line_cb)(void *arg, const char *line, size_t len,
		    bool toolong);

void		 spawn_lines_feed(struct spawn_lines *l, const char *p,
		    size_t n, spawn_line_cb cb, void *arg);
void		 spawn_lines_reset(struct spawn_lines *l);
/*
 * `s` for a one-line message: bytes outside printable ASCII become '?',
 * cut to len - 1 bytes (with "..." when cut). Returns buf.
 */
const char	*spawn_printable(const char *s, char *buf, size_t len);

/*
 * The cage's denials, one JSON line each from gatekeeperd (gk_events.h).
 * spawn_event_parse() reads one line (without its newline): DENY fills
 * ev (strings printable and bounded), MORE is the "deny.more" line (later
 * distinct denials are not told), ASK and ASK_DONE a question of an
 * asking cage and its end, REPLY a reply to a request ({"ok":...}),
 * UNREACHABLE an allowed connection that failed upstream, NONE anything
 * else (ignored).
 */
#define SPAWN_EVENT_LINE_MAX	4096
#define SPAWN_EVENT_HOST_MAX	256
#define SPAWN_EVENT_PATH_MAX	256	/* a learned path (gk_reqlearn.h) */
#define SPAWN_ASK_ID_MAX	20	/* digits in a question's id */

enum spawn_event_type {
	SPAWN_EVENT_NONE,
	SPAWN_EVENT_DENY,
	SPAWN_EVENT_MORE,
	SPAWN_EVENT_LEARN,	/* a learning cage used host (port 0: lookup),
				   or with a path, made a request to it */
	SPAWN_EVENT_LEARN_MORE,
	SPAWN_EVENT_LIMIT,	/* its limit `kind` acted `count` times */
	SPAWN_EVENT_ASK,	/* question `id` about host:port (`kind`) */
	SPAWN_EVENT_ASK_DONE,	/* question `id` ended: `decision`, `by` */
	SPAWN_EVENT_REPLY,	/* a reply: `ok`; `why` holds its error */
	SPAWN_EVENT_END,	/* someone else ended the cage: `why` */
	SPAWN_EVENT_UNREACHABLE, /* host:port (`kind`) failed upstream:
				   `failure`, `why` */
};

struct spawn_event {
	char		 kind[16];	/* dns, socks5, http, transparent */
	char		 host[SPAWN_EVENT_HOST_MAX];
	uint16_t	 port;		/* 0: a DNS lookup */
	char		 reason[32];	/* not_allowlisted, ... */
	char		 failure[16];	/* unreachable: refused, timeout... */
	char		 why[256];
	char		 time[40];
	uint64_t	 value;		/* limit: its value */
	uint64_t	 count;		/* limit: how many more times */
	char		 id[SPAWN_ASK_ID_MAX + 1];	/* ask: its digits */
	char		 decision[16];	/* ask.done: once ... timeout */
	char		 by[16];	/* ask.done: tty, supervisor, ... */
	unsigned int	 timeout;	/* ask: seconds it waits, 1..3600 */
	char		 method[16];	/* learn.request: GET, ... */
	char		 path[SPAWN_EVENT_PATH_MAX];	/* learn.request */
	bool		 ok;		/* reply: its "ok" */
};

enum spawn_event_type spawn_event_parse(const char *line, size_t len,
		    struct spawn_event *ev);
/* "gk-run: denied HOST:PORT (why); to allow it: --allow HOST"; for
 * UNREACHABLE "gk-run: HOST:PORT could not be reached: why" */
void		 spawn_event_text(const struct spawn_event *ev, char *buf,
		    size_t len);
/* "HOST:PORT" ("[V6]:PORT"; the host alone for a lookup). */
void		 spawn_event_target(const struct spawn_event *ev, char *buf,
		    size_t len);
/* {"host","port","reason","kind","time"[,"why"]} and a newline; malloc'd
 * (NULL: out of memory). */
char		*spawn_event_json(const struct spawn_event *ev);
/* For --events-fd, with a newline; malloc'd (NULL: out of memory):
 * ASK {"event":"ask","id","host","port","kind","timeout","time"},
 * ASK_DONE {"event":"ask.done","id","host","port","decision","by","time"}. */
char		*spawn_ask_json(enum spawn_event_type t,
		    const struct spawn_event *ev);

/*
 * --ask: the answers to a question. A supervisor's line on --decisions-fd
 * is {"id":"17","decision":"once|run|save|deny"}; a person answers the
 * terminal's prompt with y (once), a (this run), s (save) or n (deny).
 */
#define SPAWN_ASK_TIMEOUT_DEFAULT GK_ASK_TIMEOUT_DEFAULT	/* seconds */
#define SPAWN_ASK_TIMEOUT_MAX	GK_ASK_TIMEOUT_MAX
#define SPAWN_DECISION_LINE_MAX	4096	/* bytes in a --decisions-fd line */

enum spawn_decision {
	SPAWN_DECISION_NONE,	/* not an answer */
	SPAWN_DECISION_ONCE,	/* let the waiting connections through */
	SPAWN_DECISION_RUN,	/* allow host:port for the rest of the run */
	SPAWN_DECISION_SAVE,	/* the same, and keep it (--ask-save) */
	SPAWN_DECISION_DENY,
};

enum spawn_dline_status {
	SPAWN_DLINE_OK,
	SPAWN_DLINE_INVALID,	/* not one JSON object */
	SPAWN_DLINE_BAD_ID,	/* "id" not a string of 1..20 digits */
	SPAWN_DLINE_BAD_DECISION, /* not once, run, save or deny */
	SPAWN_DLINE_TOO_LONG,	/* over SPAWN_DECISION_LINE_MAX */
};

/* "once", "run", "save", "deny" ("" for NONE). */
const char	*spawn_decision_name(enum spawn_decision d);
/* Is s[0..n) a question's id (1..SPAWN_ASK_ID_MAX decimal digits)? */
bool		 spawn_ask_id_valid(const char *s, size_t n);
/* One --decisions-fd line (without its newline): the question's id into
 * id (idlen > SPAWN_ASK_ID_MAX) and the decision, on OK. */
enum spawn_dline_status spawn_decision_parse(const char *line, size_t len,
		    char *id, size_t idlen, enum spawn_decision *d);
/* What a status means, for a warning. */
const char	*spawn_dline_strstatus(enum spawn_dline_status st);
/* A line typed at the prompt (without its newline; white space around it
 * and case do not matter): y/yes ONCE, a RUN, s SAVE (only with save_ok),
 * n/no/empty DENY; anything else NONE (ask again). */
enum spawn_decision spawn_answer_parse(const char *line, size_t len,
		    bool save_ok);
/* "gk-run: CMD wants TARGET - [y] once, [a] this run, [s] save, [N] deny
 * (60 s) " (no newline; without "[s] save, " unless save). */
void		 spawn_ask_prompt(const char *cmd, const char *target,
		    bool save, unsigned int seconds, char *buf, size_t len);

/* ---- credentials (--credential): spawn_cred.h ------------------------- */

#define SPAWN_CA_MAX		8192	/* bytes of the cage's CA (PEM) */

struct spawn_cred;
struct spawn_filecreds;
struct spawn_trust;

/* ---- options ---------------------------------------------------------- */

struct spawn_optpath {
	enum spawn_path_kind	 kind;
	const char		*path;		/* points into argv */
};

struct spawn_opts {
	struct spawn_strv	 allow;		/* --allow, then allow-files */
	const char		**allow_files;	/* point into argv */
	size_t			 nallow_files;
	const char		**presets;	/* --preset names, into argv */
	size_t			 npresets;
	const char		*learn;		/* --learn FILE */
	struct spawn_optpath	*paths;		/* --ro/--rw/--hide in order */
	size_t			 npaths;
	const char		**env;		/* --env KEY=VAL, into argv */
	size_t			 nenv;
	const char		**pass_env;	/* --pass-env NAME, into argv */
	size_t			 npass_env;
	struct spawn_cred	*creds;		/* --credential, in order */
	size_t			 ncreds;
	int			 file_creds;	/* --file-credentials: 1 on
						   (default), 0 off */
	struct spawn_filecreds	*fcreds;	/* the settings files' secrets
						   bound to their hosts
						   (spawn_cred.h); NULL: this
						   run binds none */
	const char		*cwd;		/* NULL: the current one */
	const char		*control;	/* --control, $GK_CONTROL */
	enum spawn_net		 net;
	enum spawn_fs		 fs;
	enum spawn_cache	 cache;
	enum spawn_seccomp	 seccomp;
	enum spawn_platform	 platform;
	int			 transparent;	/* -1 unset; 0 off; 1 on */
	struct gk_rlimits	 limits;	/* --memory, --pids, --cpus */
	struct spawn_strv	 max_upload;	/* --max-upload, canonical */
	int			 limits_best_effort; /* -1 unset; 0; 1 */
	unsigned int		 reattach_timeout;	/* seconds; 0: never */
	unsigned int		 timeout;	/* seconds; 0: none */
	bool			 dry_run;
	bool			 cache_dir;	/* --cache-dir: print it */
	int			 verbose;
	bool			 quiet;		/* no denial lines on stderr */
	int			 events_fd;	/* denials as JSON lines; -1 */
	bool			 ask;		/* --ask: ask before denying */
	unsigned int		 ask_timeout;	/* seconds; 0: not given */
	const char		*ask_save;	/* --ask-save FILE, or NULL */
	int			 decisions_fd;	/* a supervisor's; -1 */
	const char		*label;		/* --label, or NULL */
	char *const		*cmd;		/* into argv, NULL-terminated */
	int			 ncmd;
	char *const		*argv;		/* the command line as typed, */
	int			 argc;		/* set by main() (--learn) */
};

enum spawn_opt_status {
	SPAWN_OPT_RUN,
	SPAWN_OPT_HELP,
	SPAWN_OPT_VERSION,
	SPAWN_OPT_PRESETS,	/* --preset list */
	SPAWN_OPT_CACHE_DIR,	/* --cache-dir (and no command) */
	SPAWN_OPT_USAGE,	/* err says what is wrong */
	SPAWN_OPT_NOMEM,
};

/*
 * Parse gk-run's argv. env_control is $GK_CONTROL (or NULL). Patterns
 * given with --allow are checked with gk_pattern_parse() here. On
 * SPAWN_OPT_RUN and SPAWN_OPT_CACHE_DIR `o` must be released with
 * spawn_opts_clear(); on any other status it holds nothing. Uses getopt_long(), so it is not
 * thread-safe; no output, no other I/O (except the PSL load of the
 * pattern parser).
 */
enum spawn_opt_status spawn_opts_parse(int argc, char *const argv[],
		    const char *env_control, struct spawn_opts *o, char *err,
		    size_t errlen);
/*
 * After the allow-files were read: settle --net auto and reject
 * contradictions (--net none with --allow; --ask options without a gated
 * --ask). 0, or -1 with err.
 */
int		 spawn_opts_finish(struct spawn_opts *o, char *err,
		    size_t errlen);
void		 spawn_opts_clear(struct spawn_opts *o);
/* The --help text. */
const char	*spawn_usage(void);
const char	*spawn_net_name(enum spawn_net n);
const char	*spawn_cache_name(enum spawn_cache c);

/*
 * Parse an allow-file: one pattern per line, '#' starts a comment,
 * blank lines and surrounding white space are ignored. Each pattern is
 * checked with gk_pattern_parse() and appended to `allow`. On error
 * returns -1 with "NAME:LINE: message" in err; `allow` may then hold
 * some of the file's patterns.
 */
int		 spawn_allowfile_parse(const uint8_t *buf, size_t len,
		    const char *name, struct spawn_strv *allow, char *err,
		    size_t errlen);

/* ---- environment ------------------------------------------------------ */

/*
 * True if the variable named name[0..len) is dropped from the sandbox
 * unless given with --env: variables that make a program load code or
 * configuration from outside its argv (LD_*, BASH_ENV, NODE_OPTIONS,
 * GIT_CONFIG_PARAMETERS, ...), point at host agents (SSH_AUTH_SOCK, ...), or,
 * with fs_sandbox, TMPDIR (the sandbox has a fresh /tmp). The list is
 * in spawn_env.c and in --help.
 */
bool		 spawn_env_dropped(const char *name, size_t len,
		    bool fs_sandbox);
/* "KEY=VAL" with KEY a portable name ([A-Za-z_][A-Za-z0-9_]*). */
bool		 spawn_env_valid(const char *kv);
/* Is name[0..len) credential-shaped (spawn_env.c: a suffix such as
 * _TOKEN or _KEY, or a well-known name)? */
bool		 spawn_env_secret(const char *name, size_t len);
/* What spawn_env_scrub did, by name (never a value), space-separated;
 * " ..." ends a list that does not fit. */
struct spawn_env_notes {
	char	 out[512];	/* kept out */
	char	 urls[512];	/* their URLs' passwords replaced */
};
/*
 * envp without its credential-shaped variables, but those named in
 * pass[] (--pass-env), and with the passwords of URLs in the others'
 * values replaced by placeholders (spawn_scrub.h): a new array (free it;
 * the strings are envp's but for those changed), or NULL when out of
 * memory.
 */
char		**spawn_env_scrub(char *const *envp, const char *const *pass,
		    size_t npass, struct spawn_env_notes *notes);
/* bwrap's own environment: envp without the dropped variables (a new
 * array of envp's strings; NULL: out of memory). */
char		**spawn_env_bwrap(char *const *envp, bool fs_sandbox);

/* ---- the cage (control protocol, see spawn_cage.c) --------------------- */

struct spawn_cage {
	char		 id[32];
	char		 token[SPAWN_TOKEN_MAX + 1];	/* "" if none */
	char		 gateway[SPAWN_ENDPOINT_MAX];	/* IP literal */
	char		 dns[SPAWN_ENDPOINT_MAX];	/* "ip:port", "" */
	char		 socks[SPAWN_ENDPOINT_MAX];	/* "ip:port" */
	char		 http[SPAWN_ENDPOINT_MAX];	/* "ip:port" */
	int		 transparent;	/* -1 not said; 0 refused; 1 carried */
	bool		 contained;	/* it has a cgroup: cage.attach */
	char		 kill[1024];	/* its cgroup.kill, "" if
						   not ours to write */
	struct gk_rlimits limits;	/* enforced */
	bool		 ask;		/* it holds and asks (--ask) */
	unsigned int	 ask_timeout;	/* seconds, as gatekeeperd took it */
	char		 ca[SPAWN_CA_MAX + 1];	/* with credentials: its CA,
						   PEM (the last reply's);
						   "" without */
};

struct json_object;
/*
 * A reply line whose "ok" is true: its object (json_object_put() it).
 * NULL with err: not understood, or refused ("gatekeeperd refused WHAT:
 * its error").
 */
struct json_object *spawn_reply_accept(const char *line, size_t len,
		    const char *what, char *err, size_t errlen);
/* "gatekeeperd sent a reply gk-run does not understand (WHY); ..." into
 * err; returns -1. */
int		 spawn_reply_not_understood(char *err, size_t errlen,
		    const char *why);
/* A reply that is only {"ok":true,...} or a refusal: 0, or -1 with err
 * ("gatekeeperd refused the cage: ..."). */
int		 spawn_cage_ack(const char *line, size_t len, char *err,
		    size_t errlen);
/* gatekeeperd's defaults, used by --dry-run instead of a real cage. */
void		 spawn_cage_placeholder(struct spawn_cage *c,
		    enum spawn_platform pf);
/*
 * The cage label: "gk-run: git clone ... github.com [3f2a9c]" (printable
 * ASCII, at most 64 bytes): the program's name and its leading plain
 * words, up to the first argument that could hold a secret; when words
 * were left out, the host of the last URL among them and a hash of the
 * whole command (the same command, the same label).
 */
void		 spawn_cage_label(char *const cmd[], int ncmd,
		    char out[SPAWN_LABEL_MAX + 1]);
/* The request line, with its "\n"; NULL on error (err says why). With
 * `events`, gatekeeperd tells this connection the cage's denials; with
 * `learn`, the cage reaches any public name and tells each one; with
 * ask_timeout > 0 it holds what it would deny and asks this connection
 * (events too), that many seconds at most. `life` (NULL: none) has
 * members the request gets too (spawn_life_describe). */
char		*spawn_cage_request(const char *label, bool transparent,
		    bool events, bool learn, unsigned int ask_timeout,
		    const struct gk_rlimits *limits, bool best_effort,
		    const char *reattach, const struct spawn_strv *allow,
		    const struct spawn_strv *max_upload,
		    struct json_object *life, char *err, size_t errlen);
/*
 * spawn_life.c. What runs in the cage, for gatekeeperd's audit log:
 * {"command":[...],"mounts":["ro:PATH",...]} for `life` above, the
 * command bounded and what could be a secret in it taken out (a
 * credential's value, a URL's password). And the request that ends the
 * cage saying how its command ended: `status` as gk-run would exit
 * (128+N: killed by signal N), and what ended it, its walltime or (a
 * SIGKILL with processes killed for memory) its memory limit; NULL when
 * out of memory.
 */
struct spawn_cred;
struct json_object *spawn_life_describe(char *const cmd[], int ncmd,
		    const struct spawn_optpath *paths, size_t npaths,
		    const struct spawn_cred *creds, size_t ncreds);
char		*spawn_life_end_request(const char *id, int status,
		    bool walltime, bool oom);
/* The cgroup name in a cage's "cgroup"."kill" path ("" if none). */
void		 spawn_cage_cgname(const struct spawn_cage *c, char *buf,
		    size_t len);
/*
 * Parse gatekeeperd's reply line. 0: ok, `c` filled. -1: refused or
 * not understood; err holds the whole message for the user.
 */
int		 spawn_cage_reply(const char *line, size_t len,
		    struct spawn_cage *c, char *err, size_t errlen);

/* ---- the plan and the builders ---------------------------------------- */

enum spawn_mnt {
	SPAWN_MNT_RO,		/* --ro-bind P P */
	SPAWN_MNT_RW,		/* --bind P P */
	SPAWN_MNT_HIDE_DIR,	/* empty read-only tmpfs */
	SPAWN_MNT_HIDE_FILE,	/* empty read-only file (data fd) */
	SPAWN_MNT_TMPFS,	/* a fresh, writable tmpfs (/tmp) */
	SPAWN_MNT_DEV,		/* a fresh /dev */
	SPAWN_MNT_DEV_BIND,	/* the host's /dev (--fs host) */
	SPAWN_MNT_PROC,		/* a fresh /proc */
	SPAWN_MNT_BIND,		/* --bind SRC P: writable, from elsewhere */
	SPAWN_MNT_SYNTH,	/* a writable tmpfs standing for a host
				   directory, its entries bound on it
				   read-only one by one (mount points for
				   paths the host lacks; new files vanish) */
	SPAWN_MNT_SYMLINK,	/* --symlink SRC P (an entry of a SYNTH) */
	SPAWN_MNT_DATA,		/* a read-only file holding SRC's text
				   (data fd), e.g. nsswitch.conf */
};

struct spawn_mount {
	enum spawn_mnt	 kind;
	char		*path;		/* absolute, canonical, owned */
	char		*src;		/* BIND: the source; SYMLINK: the
					   link's text; DATA: the file's
					   text; else NULL; owned */
	int		 fd;		/* HIDE_FILE (empty), DATA: data
					   fd; RO: -1 (bound by path), or
					   an O_PATH fd of the file to
					   bind (--ro-bind-fd: no link
					   followed) */
	bool		 implicit;	/* not from --ro/--rw/--hide */
	bool		 forced;	/* implicit, and nothing may undo it
					   (the control socket's directory) */
	bool		 placeholder;	/* bwrap makes the mount point on the
					   host; gk-run removes it afterwards
					   (spawn_guard_cleanup) */
	bool		 place;		/* RW: a writable place of the project
					   (a workspace root; the cwd and
					   --rw are places too) */
	bool		 gitdir;	/* RW: a git directory (a worktree's
					   own and its common one, or a
					   repository's above the cwd) */
	bool		 gitlink;	/* RW, RO: a gitlink's .git (or the
					   git directory its file names),
					   pinned at the start; dev, ino:
					   that entry's (spawn_gitlinks.c) */
	dev_t		 dev;
	ino_t		 ino;
};

/* What a data fd holds, for --dry-run's shell redirections. */
struct spawn_fdsrc {
	int		 fd;
	const uint8_t	*data;		/* NULL: /dev/null or path */
	size_t		 len;
	bool		 out;		/* written by bwrap: >/dev/null */
	const char	*path;		/* a file bwrap binds: <PATH */
};

struct spawn_plan {
	enum spawn_net		 net;		/* never AUTO */
	enum spawn_fs		 fs;
	enum spawn_seccomp	 seccomp;
	const char		*cwd;		/* absolute */
	struct spawn_mount	*mounts;	/* in mount order */
	size_t			 nmounts;
	char *const		*envp;		/* the environment to filter */
	const char *const	*envset;	/* --env KEY=VAL */
	size_t			 nenvset;
	const struct spawn_cage	*cage;		/* gated only */
	int			 seccomp_fd;	/* -1: none */
	int			 resolv_fd;	/* resolv.conf data, or -1 */
	bool			 own_netns;	/* none: gk-run's child made the
						   network namespace, not
						   bwrap */
	bool			 view;		/* gk-run's child made the view
						   (spawn_view.c): bwrap binds
						   it whole, then only /dev,
						   /proc and the cage's files */
	int			 status_fd;	/* --json-status-fd; -1: none */
	int			 block_fd;	/* --block-fd (spawn_tmpwatch.c);
						   0: none */
	const char		*apt_config;	/* APT_CONFIG to set, or NULL */
	char *const		*credenv;	/* "NAME=PLACEHOLDER" per
						   --credential */
	size_t			 ncredenv;
	struct spawn_trust	*trust;		/* credentials: the cage's CA
						   in bundles; NULL: none */
	char *const		*cmd;
	int			 ncmd;
};

/*
 * Sort resolved mounts into mount order: parents before the paths under
 * them (stable), so the most specific path wins whatever the order on
 * the command line. For one path a forced hide beats everything, an
 * explicit entry beats other implicit ones (the base /, /dev, /proc,
 * /tmp; cwd; default hides) and the cwd beats a default hide; an
 * explicit entry for a forced hide's path, two different explicit kinds,
 * or an explicit entry for /dev, /proc or under /proc, are errors. Duplicates are dropped
 * (their paths freed). 0 or -1 (err).
 */
int		 spawn_mounts_sort(struct spawn_mount *m, size_t *n, char *err,
		    size_t errlen);
/*
 * A file gk-run reads or writes for the user (an allow-file, --learn's,
 * --ask-save's; canonical `path`, O_PATH `fd`) stays read-only inside
 * when the sandbox could write it: a read-only bind of it (by the fd)
 * over itself when a writable mount (--rw, the working directory,
 * --fs host's /) is the one that shows it. Sorted mounts in, sorted
 * mounts out. 1 added, 0 not needed, -1 (err): --rw names the file
 * itself, or out of memory.
 */
int		 spawn_mounts_protect(struct spawn_mount **m, size_t *n,
		    const char *path, int fd, char *err, size_t errlen);
/* Free the paths of n mounts and the array. */
void		 spawn_mounts_free(struct spawn_mount *m, size_t n);
/* How many components an absolute, canonical path has ("/" has 0). */
size_t		 spawn_path_depth(const char *p);
/* Is `path` equal to `dir` or below it? Both absolute and canonical. */
bool		 spawn_path_under(const char *path, const char *dir);
/*
 * `p` made absolute against `cwd` (absolute) and lexically normalized:
 * no "//", "." or ".." left, no trailing '/'. NULL on ENOMEM.
 */
char		*spawn_path_normalize(const char *cwd, const char *p);
/*
 * Is `path` (absolute, canonical) visible in the sandbox with these
 * mounts? False when a fresh tmpfs (/tmp, /dev, a hidden dir) or a
 * hidden file covers it.
 */
bool		 spawn_path_visible(const struct spawn_plan *p,
		    const char *path);

/*
 * Where the host keeps what the sandbox sees at `path` (absolute,
 * canonical): under a BIND mount, the same place in its source; else
 * path itself. malloc'd; NULL on ENOMEM.
 */
char		*spawn_path_host(const struct spawn_plan *p, const char *path);

/* --net none: the sandbox's resolver, gk-run's answerer (spawn_nonet.c) */
#define SPAWN_NONET_RESOLVER	"127.0.0.1"
/*
 * --net none's answer to one query in q: REFUSED (FORMERR or NOTIMP
 * when the query deserves it) into out; its length, 0 when there is no
 * answer to give (not a query). The host name it looked up into name,
 * "" when it is no host name (a reverse lookup, the root, a bad name).
 * Pure.
 */
size_t		 spawn_nonet_answer(const uint8_t *q, size_t qlen,
		    uint8_t *out, size_t outlen, char *name, size_t namelen);

/* The bwrap argv (argv[0] "bwrap", then options, "--", the command). */
int		 spawn_bwrap_build(const struct spawn_plan *p,
		    struct spawn_strv *argv);
/*
 * One shell command line for `argv`: each word quoted for sh, then
 * redirections that recreate the data fds (bash process substitution).
 * NULL on ENOMEM.
 */
char		*spawn_shell_render(const struct spawn_strv *argv,
		    const struct spawn_fdsrc *fds, size_t nfds);
/* Append `s` quoted for sh to `out`. */
int		 spawn_shell_quote(const char *s, struct spawn_strv *out);

/*
 * The SBPL profile for sandbox-exec. Paths that SBPL cannot express
 * safely (control characters) are refused: NULL with err.
 */
char		*spawn_sbpl_build(const struct spawn_plan *p, char *err,
		    size_t errlen);
/* `s` as an SBPL string literal, with its quotes; NULL on bad input. */
char		*spawn_sbpl_string(const char *s);

/* ---- bwrap's status ---------------------------------------------------- */

#define SPAWN_STATUS_LINE_MAX	4096	/* bytes in one status line */

enum spawn_status_st {
	SPAWN_STATUS_OK,	/* a JSON object; its fields below */
	SPAWN_STATUS_INVALID,	/* not one, or a field out of range */
};

struct spawn_status {
	int	 child_pid;	/* the sandbox's pid 1 outside; 0 if absent */
	int	 exit_code;	/* the command's status 0..255; -1 if absent */
};

/*
 * One line that bwrap wrote on --json-status-fd (with or without its
 * newline): {"child-pid": N, ...} or {"exit-code": N}; other members are
 * ignored.
 */
enum spawn_status_st spawn_status_parse(const char *line, size_t len,
		    struct spawn_status *out);

/* ---- a git index's gitlinks (spawn_gitindex.c) ------------------------ */

#define SPAWN_GITINDEX_PATH_MAX	16384	/* a longer path: INVALID */

enum spawn_gitindex_st {
	SPAWN_GITINDEX_OK,		/* every entry read */
	SPAWN_GITINDEX_INVALID,		/* not an index, or cut short */
	SPAWN_GITINDEX_UNSUPPORTED,	/* a version other than 2, 3, 4 */
};

/* One gitlink's path (NUL-terminated, len bytes), relative to the work
 * tree. */
typedef void (*spawn_gitlink_fn)(void *arg, const char *path, size_t len);

/* A split index's link to its shared part (sharedindex.<hex of shared>). */
struct spawn_gitindex_link {
	bool		split;
	uint8_t		shared[32];	/* the object id's length of it */
};

/*
 * Call fn for the path of each gitlink (mode 160000) among the entries
 * of the git index file in buf[0..len), in the index's order; oidlen is
 * the repository's object id length (20: SHA-1, 32: SHA-256). Entries
 * read before an INVALID one were reported already. With link, an OK
 * index's "link" extension lands there (split false: none).
 */
enum spawn_gitindex_st spawn_gitindex_gitlinks(const uint8_t *buf,
		    size_t len, size_t oidlen, spawn_gitlink_fn fn, void *arg,
		    struct spawn_gitindex_link *link);

/* ---- seccomp ---------------------------------------------------------- */

/*
 * Build the profile as a libseccomp filter (the caller releases it
 * with seccomp_release()), NULL for SPAWN_SECCOMP_OFF or on error.
 */
void		*spawn_seccomp_build(enum spawn_seccomp profile, char *err,
		    size_t errlen);
const char	*spawn_seccomp_name(enum spawn_seccomp profile);

/* ---- user namespaces (spawn_userns.c) ------------------------------- */

/* The step that failed making the sandbox's user namespace. */
enum spawn_userns_step {
	SPAWN_USERNS_CREATE,	/* unshare(CLONE_NEWUSER [| CLONE_NEWNET]) */
	SPAWN_USERNS_MAP,	/* uid_map, setgroups, gid_map */
	SPAWN_USERNS_NESTED,	/* one inside it (bwrap's, in the cage's) */
};

/* What the host says about user namespaces (-1: absent, unreadable). */
struct spawn_userns_host {
	long		 max_user;	/* user.max_user_namespaces */
	long		 max_net;	/* user.max_net_namespaces */
	long		 aa_restrict;	/* kernel.apparmor_restrict_
					 * unprivileged_userns */
	long		 clone;		/* kernel.unprivileged_userns_clone */
	bool		 aa_confined;	/* AppArmor names a profile for us */
	const char	*profile;	/* gatekeeper's AppArmor profile */
};

/*
 * One line (no "gk-run: ") saying why `step` failed with errno `err` on
 * this host and how to allow it: the setting that forbids user
 * namespaces and the command that changes it, or the AppArmor profile.
 */
void		 spawn_userns_diagnose(enum spawn_userns_step step, int err,
		    const struct spawn_userns_host *h, char *msg, size_t len);

#endif /* SPAWN_H */
