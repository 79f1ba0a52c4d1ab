/*
 * spawn_int: gk-run's I/O half (the kernel, the filesystem, gatekeeperd,
 * bwrap). Functions return 0 / a value, or -1 with a complete one-line
 * message for the user in `err` (main() prefixes "gk-run: ").
 */
#ifndef SPAWN_INT_H
#define SPAWN_INT_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <limits.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

/* spawn_seccomp.c: the profile as BPF in a memfd at offset 0, CLOEXEC. */
int		 spawn_seccomp_memfd(enum spawn_seccomp profile, char *err,
		    size_t errlen);

/* spawn_resolve.c */
/* A growing list of mounts (the plan before spawn_mounts_sort()). */
struct spawn_mlist {
	struct spawn_mount	*m;
	size_t			 n;
	size_t			 cap;
};
/* Append one; takes `path` and `src` (owned, freed on failure). */
int		 spawn_ml_add(struct spawn_mlist *l, enum spawn_mnt kind,
		    char *path, bool implicit);
int		 spawn_ml_add_src(struct spawn_mlist *l, enum spawn_mnt kind,
		    char *path, char *src, bool implicit);
/* Is there a mount for exactly `path`? */
bool		 spawn_ml_has(const struct spawn_mlist *l, const char *path);
/* The mount that decides what `path` is inside: the deepest one over
 * it, the latest of equals (NULL: none). */
const struct spawn_mount *spawn_ml_covering(const struct spawn_mlist *l,
		    const char *path);
/* $HOME (or the passwd entry's), canonical; malloc'd; NULL if none. */
char		*spawn_home(void);

/* spawn_project.c */
/*
 * What the project's tools write above the working directory: an npm,
 * pnpm or cargo workspace's root, a git worktree's git directories, the
 * git directory of a repository the cwd is inside of. 0 or -1 (ENOMEM).
 */
int		 spawn_project_mounts(struct spawn_mlist *l,
		    const struct spawn_opts *o, const char *cwd,
		    const char *home);

/* spawn_guard.c */
/*
 * Read-only guards for the files that make the host run code (git hooks
 * and config, .envrc, editor settings; shell start-up files in a
 * writable $HOME) in the working directory and every --rw directory,
 * with placeholders where they are missing. 0 or -1 (ENOMEM).
 */
int		 spawn_guard_mounts(struct spawn_mlist *l,
		    const struct spawn_opts *o, const char *cwd,
		    const char *home);
/*
 * Runs in the same directories share placeholders; each removes them
 * only when no other is in flight. The registry ~/.gk-run/placeholders,
 * held with a shared flock from before the plan is made until the end:
 * its fd, or -1 (no registry: this run removes its own).
 */
/*
 * Guard path, a git directory made writable, as the repository's own:
 * its hooks, info, config, config.worktree, commondir and gitdir (and its
 * submodules' and worktrees' git directories). 0 or -1 (out of memory).
 */
int		 spawn_guard_gitdir(struct spawn_mlist *l, const char *path,
		    const struct spawn_opts *o);
/* spawn_scrubview.c: home/rel shown as its copy with the secrets
 * replaced, for the settings files that hold secrets too (~/.npmrc, ...):
 * 1 when added, 0 when rel is none of them or cannot be read as one
 * (hide it whole), -1 out of memory. With fc (o->fcreds), the secrets
 * bound to their hosts get fc's placeholders (spawn_filecreds_bind). */
int		 spawn_scrub_view(struct spawn_mlist *l, const char *home,
		    const char *rel, struct spawn_filecreds *fc);
/* The same for the files shown in hidden directory home/dir (gh's
 * hosts.yml in ~/.config/gh, docker's config.json in ~/.docker), after
 * its hide: 0 or -1 (out of memory). */
int		 spawn_scrub_views_in(struct spawn_mlist *l, const char *home,
		    const char *dir, struct spawn_filecreds *fc);
/* spawn_hostio.c: host files a sandbox could have touched */
/*
 * openat() of rel beneath dirfd following no link, even with O_PATH
 * (where O_NOFOLLOW alone returns the link itself): openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS. Without openat2, O_NOFOLLOW for
 * a single name (the caller checks the type); for a longer rel, -1
 * (ENOSYS).
 */
int		 spawn_openat_nofollow(int dirfd, const char *rel, int flags,
		    mode_t mode);
/* dir/name for reading: a regular file, no link followed, never blocking
 * (a FIFO); -1 otherwise (ELOOP: a link; EINVAL: another type). */
int		 spawn_open_regular(const char *dir, const char *name);
/* dirfd/rel, beneath dirfd following no link (spawn_openat_nofollow),
 * a regular file of at most max bytes, never blocking: its bytes,
 * NUL-terminated (malloc'd, *len without the NUL), or NULL with errno
 * (ELOOP: a link; EINVAL: not a regular file; EFBIG: larger). */
char		*spawn_read_beneath(int dirfd, const char *rel, size_t max,
		    size_t *len);
/* The first line of dir/name (spawn_open_regular), without its end;
 * false when there is none or it does not fit. */
bool		 spawn_first_line(const char *dir, const char *name,
		    char out[PATH_MAX]);
/* What a git file names (s), relative to base unless absolute, as a
 * real path (malloc'd), or NULL. */
char		*spawn_named_path(const char *base, const char *s);
/* spawn_gitlinks.c */
/*
 * Pin the .git of each gitlink of each writable repository's index (and
 * theirs, a few levels down) where the sandbox could touch it, noting
 * its identity (spawn_gitlinks.c says why). 0 or -1 (out of memory).
 */
int		 spawn_gitlinks_pin(struct spawn_mlist *l,
		    const struct spawn_opts *o, const char *cwd);
/*
 * After the run: move aside (and say so) the .git of each gitlink of
 * those indexes that the sandbox made or replaced.
 */
void		 spawn_gitlinks_check(const struct spawn_plan *p);
int		 spawn_guard_lock(void);
/* Note the placeholders bwrap will make for this plan. */
void		 spawn_guard_register(int lockfd, const struct spawn_plan *p);
/* After the sandbox: with the lock alone, remove every registered
 * placeholder that is still empty (all runs', killed ones' too). */
void		 spawn_guard_cleanup(int lockfd, const struct spawn_plan *p);

/* spawn_cache.c */
/* mkdir -p (relative to the current directory when not absolute), what
 * it creates with mode (less the umask); 0 or -1 (errno). */
int		 spawn_mkdirs(const char *path, mode_t mode);
/*
 * The tool caches for --cache (--fs sandbox on Linux), and the SYNTH
 * mounts their mount points need, appended to l after everything else
 * (what already has a mount is left alone). With --cache private they
 * are the project's own: `cwd` (canonical) names the project. 0, or -1
 * with err.
 */
/* Does the cache place rel (under home) get a mount point: its tool used
 * on this host (spawn_cachewant.c)? */
bool		 spawn_cache_wanted(const char *home, const char *rel);
int		 spawn_cache_mounts(struct spawn_mlist *l,
		    const struct spawn_opts *o, const char *cwd,
		    const char *home, char *err, size_t errlen);
/*
 * The name of a project's directory under the private caches' root:
 * "NAME-HASH", NAME from the last component of `project` (a canonical
 * path; bytes other than [A-Za-z0-9._-] as '_', at most
 * SPAWN_CACHE_NAME_MAX, never starting with '.'; "root" for /), HASH
 * the first 16 hex digits of the SHA-256 of the whole path. 0, or -1
 * (ENAMETOOLONG: out too small, EINVAL: not absolute).
 */
#define SPAWN_CACHE_NAME_MAX	40
int		 spawn_cache_key(const char *project, char *out,
		    size_t outlen);
/*
 * gk-run --cache-dir: print the host directory DIR holding the tool
 * caches these options give (a cache's ~/REL inside is DIR/REL; $HOME
 * itself with --cache host or --fs host). 0, or 1 (why none, said).
 */
int		 spawn_cache_dir_print(const struct spawn_opts *o);
/* --cwd DIR (or the current directory), canonical; malloc'd. */
char		*spawn_resolve_cwd(const char *opt_cwd, char *err,
		    size_t errlen);
/*
 * The mounts for --fs and --platform: the base (/, /dev, /proc, /tmp),
 * the working directory, --ro/--rw/--hide (realpath; they must exist on
 * Linux), the default hides that exist, the control sockets; sorted
 * with spawn_mounts_sort().
 */
int		 spawn_resolve_mounts(const struct spawn_opts *o,
		    const char *cwd, struct spawn_mount **out, size_t *n,
		    char *err, size_t errlen);
/* A CLOEXEC memfd holding the data, at offset 0; -1 (errno). */
int		 spawn_memfd_data(const char *name, const void *data,
		    size_t len);
/* A whole small fd from offset 0 (malloc'd); NULL (errno). */
uint8_t		*spawn_fd_slurp(int fd, size_t max, size_t *len);
/* Read a whole allow-file; NULL with err. */
/* spawn_preset.c: --preset NAME's patterns added to allow; --preset
 * list on out. 0, or -1 with err. */
int		 spawn_preset_load(const char *name, struct spawn_strv *allow,
		    char *err, size_t errlen);
int		 spawn_preset_list(FILE *out, char *err, size_t errlen);
uint8_t		*spawn_read_file(const char *path, size_t max, size_t *len,
		    char *err, size_t errlen);

/* spawn_exec.c */
/* bwrap in $PATH (malloc'd), or NULL with err. */
char		*spawn_find_bwrap(char *err, size_t errlen);
/*
 * Would execvp(cmd[0]) inside the sandbox succeed? Mirrors the PATH
 * search against the plan's visible paths, and checks what execve
 * checks: a regular file, execute permission, not on a noexec mount,
 * and a "#!" interpreter or ELF loader that exists. Returns 0, or the
 * exit status (126, 127) with the message in err.
 */
int		 spawn_check_command(const struct spawn_plan *p,
		    const char *path_env, char *resolved, size_t reslen,
		    char *err, size_t errlen);
/* The PATH the command will be looked up with inside: the last --env
 * PATH=..., else gk-run's. */
const char	*spawn_sandbox_path(const struct spawn_plan *p);

/* spawn_ctl.c */
int		 spawn_ctl_connect(const char *path, char *err, size_t errlen);
/* unshare(CLONE_NEWUSER | flags: CLONE_NEWNET, CLONE_NEWNS), identity
 * uid/gid maps, lo up (a new network namespace's); 0 or -1 with err. */
int		 spawn_netns_make(int flags, char *err, size_t errlen);
/* spawn_netns_make(CLONE_NEWNET | flags), then an fd for the new network
 * namespace (CLOEXEC). */
int		 spawn_ctl_netns(int flags, char *err, size_t errlen);
/* Send the request with nsfd (SCM_RIGHTS) and wait for the cage. */
int		 spawn_ctl_create(int sock, int nsfd, const char *request,
		    const char *path, struct spawn_cage *c, char *err,
		    size_t errlen);
/*
 * Put process pid (the sandbox's first, not yet running anything) in the
 * cage's cgroup: cage.attach with a pidfd of it. 0, or -1 with err.
 */
int		 spawn_ctl_attach(int sock, const char *id, pid_t pid,
		    const char *path, char *err, size_t errlen);

/*
 * Send each credential to gatekeeperd (cage.credential) for the cage
 * just made on sock, and check each reply: the last one's CA lands in
 * cage->ca. Every value is wiped and freed, sent or not. 0, or -1 with
 * err (a refusal names the credential).
 */
int		 spawn_ctl_credentials(int sock, struct spawn_cage *cage,
		    struct spawn_cred *creds, size_t n, const char *path,
		    char *err, size_t errlen);

/* spawn_credio.c: --credential */
/* Each credential's value from the environment (checked, copied, then
 * wiped there and unset) and its placeholder; before the plan is made
 * from the environment. A gated --fs sandbox run on Linux without
 * --file-credentials off binds the settings files' secrets too: o->fcreds
 * is set then. 0, or -1 with err. */
int		 spawn_creds_load(struct spawn_opts *o, char *err,
		    size_t errlen);
/* The plan's NAME=PLACEHOLDER settings and its trust (the host's bundles
 * read now; with --dry-run, words for them); says on stderr (unless -q)
 * which settings files' secrets are bound, by file and host. Without
 * --credential, a plan that cannot show the cage's CA leaves those
 * unbound (said) rather than failing. 0, or -1 with err. */
int		 spawn_creds_plan(const struct spawn_opts *o,
		    struct spawn_plan *p, char *err, size_t errlen);
/* The settings files' credentials (o->fcreds; NULL: none) to
 * gatekeeperd after --credential's, as spawn_ctl_credentials sends
 * them; a refusal says how to leave them unbound. 0, or -1 with err. */
int		 spawn_filecreds_send(int sock, struct spawn_cage *cage,
		    struct spawn_filecreds *fc, const char *path, char *err,
		    size_t errlen);

/* spawn_userns.c */
/* The settings spawn_userns_diagnose() reads, from /proc. */
void		 spawn_userns_host_read(struct spawn_userns_host *h);
/* spawn_userns_diagnose() with this host's settings. */
void		 spawn_userns_explain(enum spawn_userns_step step, int err,
		    char *msg, size_t len);
/* Identity uid and gid maps (setgroups denied) for the calling process,
 * just after unshare(CLONE_NEWUSER); 0 or -1 (errno). */
int		 spawn_userns_map(uid_t uid, gid_t gid);
/*
 * After bwrap failed: can gk-run make a user namespace, map itself and
 * make one inside it (in a child)? 0: yes, or it cannot tell; -1 with
 * the reason in msg (spawn_userns_explain()).
 */
int		 spawn_userns_probe(char *msg, size_t len);

/* Data fds bwrap reads (hidden files, resolv.conf, seccomp, status). */
#define SPAWN_DATA_FDS_MAX	256

struct spawn_fds {
	int			 fd[SPAWN_DATA_FDS_MAX];
	struct spawn_fdsrc	 src[SPAWN_DATA_FDS_MAX];
	size_t			 n;
};

/* spawn_start.c */
/* Append a data fd; returns fd, or -1 when the table is full. */
int		 spawn_fds_add(struct spawn_fds *f, int fd,
		    const uint8_t *data, size_t len, bool out);
/* spawn_credio.c: the trust files' data fds, each a bundle ending in the
 * cage's CA (in the sandbox's first process, once it has the cage); or,
 * for --dry-run, numbered from *next. 0, or -1 (with err). */
int		 spawn_trust_fds(struct spawn_trust *t, const char *ca,
		    struct spawn_fds *f, char *err, size_t errlen);
int		 spawn_trust_dry_fds(struct spawn_trust *t, struct spawn_fds *f,
		    int *next);

/* What the sandbox's first process needs (spawn_start.c's header). */
struct spawn_child {
	int		 chan;		/* set by spawn_start_fork() */
	pid_t		 parent;	/* set by spawn_start_fork() */
	const sigset_t	*mask;		/* the mask to exec bwrap with */
	struct spawn_plan *plan;	/* gated: the child adds the cage */
	struct spawn_fds *fds;		/* made inheritable before exec */
	int		 ctl_fd;	/* the parent's; closed at once */
	int		 guard_fd;	/* the placeholders' registry, or -1:
					   kept by the keeper */
	const char	*bwrap;
	char *const	*envp;
	int		 verbose;	/* print bwrap's command line */
	bool		 sockgate;	/* install the unix socket gate (gk-run
					   decided: spawn_sockgate_wanted) */
};

/*
 * Fork the sandbox's first process: in gated mode it makes the cage's
 * user and network namespaces and waits for spawn_start_go(); then it
 * execs bwrap. Returns its pid and, in *chan, the parent's end of the
 * start channel; -1 with err.
 */
pid_t		 spawn_start_fork(const struct spawn_child *c, int *chan,
		    char *err, size_t errlen);
/*
 * In the sandbox's first process, once it has the cage: fork the
 * process that execs bwrap and stay as its keeper (spawn_keeper.c).
 * Returns 0 in the new process; the keeper never returns (it exits as
 * bwrap did, or ends it all when gk-run dies, then checks the plan's
 * gitlinks and removes its placeholders through guard_fd, the registry,
 * or -1). -1 with err: nothing forked.
 */
pid_t		 spawn_keeper_fork(pid_t parent,
		    const struct spawn_plan *plan, int guard_fd, char *err,
		    size_t errlen);
/* The child's body (never returns); spawn_start_fork() runs it. */
void		 spawn_child_run(const struct spawn_child *c)
		    __attribute__((noreturn));
/* Gated: the cage's network namespace fd (bounded wait); -1 with err. */
int		 spawn_start_netns(int chan, char *err, size_t errlen);
/* Gated: hand the child its cage. */
int		 spawn_start_go(int chan, const struct spawn_cage *cage,
		    char *err, size_t errlen);
/* --net none: the answerer's socket (spawn_nonet.c); -1 with err. */
int		 spawn_start_nonet(int chan, char *err, size_t errlen);
/* The unix socket gate's listener (spawn_sockgate.c); -1 with err. */
int		 spawn_start_listener(int chan, char *err, size_t errlen);
/* Wait until bwrap runs (the channel closes on exec); -1 with err. */
int		 spawn_start_exec(int chan, char *err, size_t errlen);

/* spawn_nonet.c: --net none's resolver, which refuses every query */
/*
 * The sandbox's /etc/resolv.conf into buf: its cage's gateway (gated),
 * or SPAWN_NONET_RESOLVER (none); "" when none is to be mounted: --net
 * host, or --net none on a host without the file (glibc then asks
 * 127.0.0.1 by itself).
 */
void		 spawn_resolv_conf(const struct spawn_plan *p, char *buf,
		    size_t len);
/*
 * In the sandbox's first process, in its new network namespace: a UDP
 * socket bound to SPAWN_NONET_RESOLVER port 53 (CLOEXEC); -1 with err.
 */
int		 spawn_nonet_socket(char *err, size_t errlen);
/*
 * gk-run: take that socket from the sandbox's first process (over the
 * start channel), then answer every query on it REFUSED, at once, from a
 * thread of its own; at the first lookup of a host name say (unless
 * quiet) that `cmdname` runs without a network and how to give it one.
 * 0, or -1 with err.
 */
int		 spawn_nonet_start(int chan, const char *cmdname, bool quiet,
		    char *err, size_t errlen);
/* A connect the unix socket gate saw fail with ENETUNREACH in a --net
 * none run: said like the first lookup, unless something was said. */
void		 spawn_nonet_unreachable(const struct sockaddr *sa);

/* spawn_sockgate.c: which unix sockets the sandbox may connect to */
struct spawn_sockid {
	dev_t		 dev;
	ino_t		 ino;
};
/* A connect's pathname, as the sandbox resolved it. */
struct spawn_sock_class {
	bool		 is_socket;
	bool		 readonly;	/* on a mount the sandbox cannot write */
	dev_t		 dev;
	ino_t		 ino;
	bool		 linked;	/* more than one name (a hard link) */
};
enum spawn_sock_verdict {
	SPAWN_SOCK_ALLOW,	/* given with --socket, or the sandbox's */
	SPAWN_SOCK_REFUSE,	/* a host socket it was not given */
	SPAWN_SOCK_NOTSOCK,	/* not a socket (ECONNREFUSED, as inside) */
};
struct spawn_sockgate;

/* Pure: the verdict for `c`, given the --socket inodes. */
enum spawn_sock_verdict spawn_sockgate_decide(const struct spawn_sock_class *c,
		    const struct spawn_sockid *allowed, size_t nallowed);
/* Whether the plan's sandbox gets the gate (not with --fs host). */
bool		 spawn_sockgate_wanted(const struct spawn_plan *p);
/* false where Yama's ptrace_scope keeps gk-run from taking a sandboxed
 * program's socket (2 without root, 3) */
bool		 spawn_sockgate_possible(void);
/* A /proc/sys integer (spawn_userns.c); -1 when absent or unreadable. */
long		 spawn_sysctl_long(const char *path);
/* The child: load the filter; its listener fd, or -1 with err. */
int		 spawn_sockgate_install(char *err, size_t errlen);
/* gk-run: answer the listener `fd` in a thread; NULL with err. */
struct spawn_sockgate *spawn_sockgate_start(int fd,
		    const struct spawn_plan *p, bool quiet, char *err,
		    size_t errlen);

/* spawn_ask.c: --ask while the command runs */
struct spawn_ask_conf {
	const char	*cmdname;	/* for the prompt */
	int		 tty_fd;	/* /dev/tty, non-blocking; -1: none */
	int		 decisions_fd;	/* --decisions-fd; -1: the terminal */
	int		 save_fd;	/* --ask-save FILE, O_APPEND; -1 */
	const char	*save_path;
};
struct spawn_ask;

/* NULL: out of memory. It owns tty_fd and save_fd from then on. */
struct spawn_ask *spawn_ask_new(const struct spawn_ask_conf *c);
void		 spawn_ask_free(struct spawn_ask *a);
/* The control connection and its cage (at start and after a reattach),
 * or -1 when it closed: the open questions went with it. */
void		 spawn_ask_conn(struct spawn_ask *a, int ctl_fd,
		    const char *cage);
/* gatekeeperd's "ask" and "ask.done" lines (spawn_event_parse()). */
void		 spawn_ask_question(struct spawn_ask *a,
		    const struct spawn_event *ev);
void		 spawn_ask_done(struct spawn_ask *a,
		    const struct spawn_event *ev);
/* A reply on the control connection: true if it answered a
 * cage.decide (a refusal is said on stderr), false if it is another's. */
bool		 spawn_ask_reply(struct spawn_ask *a,
		    const struct spawn_event *ev);
/* The descriptor to poll for reading now (-1: none), and its turn. */
int		 spawn_ask_fd(const struct spawn_ask *a);
void		 spawn_ask_read(struct spawn_ask *a, short revents);
/* A line for stderr (a denial): with a question on the terminal (a
 * NULL: none) the prompt is shown again below it. */
void		 spawn_ask_aside(struct spawn_ask *a, const char *line);
/* The same for an event's line (spawn_event_text). */
void		 spawn_ask_event(struct spawn_ask *a,
		    const struct spawn_event *ev);
/* The command ended: no more prompts. */
void		 spawn_ask_end(struct spawn_ask *a);
/* "gk-run: 2 asked: a.example:443 (this run), ..." on stderr. */
void		 spawn_ask_summary(const struct spawn_ask *a);

/* spawn_hostfile.c */
/*
 * A file gk-run reads or writes on the host for the user (--allow-file,
 * --ask-save, --learn), reached without following links: its directory
 * opened by the path given, the file by its last component beneath it.
 */
struct spawn_hostfile {
	const char	*opt;		/* "--learn", for messages */
	const char	*arg;		/* the path as given */
	const char	*base;		/* its last component, in arg */
	char		*path;		/* canonical: directory + base */
	int		 dirfd;		/* O_PATH of the directory */
	int		 fd;		/* O_PATH of the file (regular) */
};

/*
 * Open `arg`'s directory and then the file in it, never through a link
 * (with `create`, an empty 0644 file is made first when there is none).
 * 0, or -1 with err set: a link, not a regular file, or missing.
 */
int		 spawn_hostfile_open(struct spawn_hostfile *h,
		    const char *opt, const char *arg, bool create, char *err,
		    size_t errlen);
/* The same file opened again with `flags` (O_RDONLY, O_WRONLY|O_APPEND). */
int		 spawn_hostfile_reopen(const struct spawn_hostfile *h,
		    int flags);
void		 spawn_hostfile_close(struct spawn_hostfile *h);
/* A new temporary file beside it (O_EXCL, a random name put in tmp). */
FILE		*spawn_hostfile_tmp(const struct spawn_hostfile *h,
		    char *tmp, size_t tmplen);
/* Flush, fsync and close f, then rename tmp over the file; 0 or -1. */
int		 spawn_hostfile_commit(const struct spawn_hostfile *h,
		    FILE *f, const char *tmp);

/* spawn_opts.c: getopt_long's view of the options, to read a command
 * line again (spawn_learn_next) */
extern const struct option spawn_longopts[];
#define SPAWN_SHORTOPTS		"+:a:qvhV"

/* spawn_learn.c */
/* A learn event kept for --learn: "host\tport" (port 0 for a lookup), or
 * for a request to an inspected host "host\tport\tMETHOD\tpath". */
void		 spawn_learn_push(struct spawn_strv *learned,
		    const struct spawn_event *ev);
/*
 * The command to run after --learn FILE: gk-run's command line as given
 * (argv, argc: main's), with each --learn FILE replaced by --allow-file
 * FILE, quoted for sh; NULL when out of memory.
 */
char		*spawn_learn_next(int argc, char *const argv[],
		    const char *file);
/*
 * --learn FILE: `learned` as an allow-file under a header saying when and
 * for what command (`more`: gatekeeperd did not tell everything): the
 * names and ports, sorted, then the request rules learned from the
 * requests (gk_reqlearn_merge). Says on stderr what it wrote and the
 * command to run next (spawn_learn_next of argv), or why nothing was
 * written.
 */
void		 spawn_learn_write(const struct spawn_hostfile *h,
		    const struct spawn_strv *learned, bool more,
		    char *const cmd[], int ncmd, char *const argv[], int argc);

/* spawn_run.c */
struct spawn_run {
	pid_t		 pid;		/* the child: bwrap once it runs */
	int		 sigfd;		/* from spawn_signals_block() */
	int		 status_rfd;	/* read end of --json-status-fd */
	int		 ctl_fd;	/* -1: no cage */
	unsigned int	 timeout;
	int		 verbose;
	bool		 quiet;		/* no denial lines on stderr */
	int		 events_fd;	/* -1: none */
	const struct spawn_hostfile *learn; /* --learn FILE, or NULL */
	char *const	*cmd;		/* for --learn's header */
	int		 ncmd;
	char *const	*argv;		/* gk-run's own, as given: for */
	int		 argc;		/* --learn's next command */
	const char	*cmdname;	/* for messages */
	const char	*cg_kill;	/* the cage's cgroup.kill, or "" */
	bool		 limits;	/* the cage has limits: hear them */
	/* gatekeeperd restarted: register the sandbox again */
	const char	*control;	/* its socket */
	int		 nsfd;		/* the sandbox's network namespace */
	const char	*reattach_req;	/* NULL: never */
	unsigned int	 reattach_timeout;	/* seconds */
	/* --ask: who answers (NULL: the cage does not ask) */
	const struct spawn_ask_conf *ask;
	const char	*cage_id;
};

/*
 * The sandbox's view made by gk-run's child (spawn_view.c), in its own
 * mount namespace. spawn_view_wanted: the plan allows it (else bwrap
 * makes the view). spawn_view_build: the tree's fd; -2: the kernel
 * cannot (nothing done: bwrap makes it); -1 with err. spawn_view_enter:
 * the calling process's root becomes the tree (root is closed).
 */
bool		 spawn_view_wanted(const struct spawn_plan *p);
int		 spawn_view_build(const struct spawn_plan *p, char *err,
		    size_t errlen);
int		 spawn_view_enter(int root, char *err, size_t errlen);
/* A read-only file of fd's text (mode) at path in the view, once built
 * (what needs the cage: resolv.conf, trust bundles); 0 or -1 with err. */
int		 spawn_view_file(int root, const char *path, int fd,
		    mode_t mode, char *err, size_t errlen);
/* The keeper, before its work on the host at gk-run's death: the view
 * (the child's) detached and let go, so that its mount points (the
 * placeholders) can be removed (spawn_start.c). */
void		 spawn_view_drop(void);
/* The view's fd in this process (spawn_start.c), or -1. */
int		 spawn_view_fd(void);

/* spawn_tmpwatch.c: what the command left in the sandbox's own /tmp
 * when the working directory is under /tmp (it vanishes with the
 * sandbox). */
/* Before the fork: a pipe bwrap's pid 1 waits on (--block-fd) before it
 * runs the command, into p->block_fd and f; nothing when the working
 * directory is not under /tmp or the sandbox's /tmp is not a tmpfs. */
void		 spawn_tmpwatch_prepare(struct spawn_plan *p,
		    struct spawn_fds *f);
/* bwrap's pid 1 is pid1: keep a descriptor of its /tmp once it is made
 * (bounded), then let the command run. */
void		 spawn_tmpwatch_attach(pid_t pid1);
/* The sandbox is gone: on stderr, what cmdname left in its /tmp outside
 * the mounts, and how to keep such files. */
void		 spawn_tmpwatch_report(const char *cmdname);

/*
 * Block the signals gk-run forwards (and SIGCHLD); *old gets the mask
 * to restore in the child. Returns a signalfd for them, or -1 (errno).
 */
int		 spawn_signals_block(sigset_t *old);
/*
 * Forward signals to the sandbox, enforce the timeout, keep the control
 * connection, wait for bwrap. Returns gk-run's exit status; on a failure
 * of its own writes one line to stderr first.
 */
int		 spawn_run(const struct spawn_run *r);

#endif /* SPAWN_INT_H */
