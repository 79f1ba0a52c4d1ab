/*
 * gk-run: run one program in a sandbox whose only way out is gatekeeperd.
 *
 *   options -> allow-files -> mount plan -> [--dry-run: print, exit 0]
 *   -> command check (126/127) -> seccomp, data fds -> [gated: connect
 *   to gatekeeperd] -> fork: the child [gated: makes its user+net
 *   namespace, passes it up, gets its cage] execs bwrap | gk-run [gated:
 *   asks gatekeeperd for the cage] waits
 *
 * gk-run itself never leaves its user namespace: gatekeeperd refuses
 * control peers from any other (spawn_start.c).
 *
 * Every failure of gk-run itself is one line on stderr and exit 125.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "spawner/spawn_conf.h"
#include "spawner/spawn_int.h"

extern char **environ;

static char cmdshow[72];	/* the command's name, for messages */

static void die(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gk-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(SPAWN_EXIT_FAIL);
}

/* fds 0-2 must exist (or memfds would take their places); stderr by line. */
static void
std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) == -1 &&
		    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			exit(SPAWN_EXIT_FAIL);
	/* one write per line: whoever reads our stderr never sees half */
	setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
}

/* The files gk-run reads and writes for the user, opened at the start
 * without following links (spawn_hostfile.c); read-only inside. */
static struct spawn_hostfile *allow_hf;
static struct spawn_hostfile learn_hf = { .dirfd = -1, .fd = -1 };
static struct spawn_hostfile save_hf = { .dirfd = -1, .fd = -1 };

/* One allow-file: through its O_PATH fd, never a link. */
static uint8_t *
read_allow_file(struct spawn_hostfile *h, const char *path, size_t *len)
{
	char err[SPAWN_ERRLEN], show[256];
	uint8_t *buf;
	int fd;

	if (spawn_hostfile_open(h, "--allow-file", path, false, err,
	    sizeof(err)) == -1)
		die("%s", err);
	spawn_printable(path, show, sizeof(show));
	if ((fd = spawn_hostfile_reopen(h, O_RDONLY)) == -1)
		die("--allow-file %s: %s", show, strerror(errno));
	if ((buf = spawn_fd_slurp(fd, SPAWN_ALLOWFILE_MAX, len)) == NULL)
		die("--allow-file %s: %s", show, errno == EFBIG ? "larger "
		    "than 1 MiB; is it really an allow-file?" :
		    strerror(errno));
	close(fd);
	return buf;
}

static void
load_allow_files(struct spawn_opts *o)
{
	char err[SPAWN_ERRLEN];
	uint8_t *buf;
	size_t i, len;

	for (i = 0; i < o->npresets; i++)
		if (spawn_preset_load(o->presets[i], &o->allow, err,
		    sizeof(err)) == -1)
			die("%s", err);
	if (o->nallow_files > 0 && (allow_hf = calloc(o->nallow_files,
	    sizeof(*allow_hf))) == NULL)
		die("out of memory");
	for (i = 0; i < o->nallow_files; i++) {
		buf = read_allow_file(&allow_hf[i], o->allow_files[i], &len);
		if (spawn_allowfile_parse(buf, len, o->allow_files[i],
		    &o->allow, err, sizeof(err)) == -1)
			die("%s", err);
		free(buf);
	}
	if (spawn_opts_finish(o, err, sizeof(err)) == -1)
		die("%s", err);
}

/*
 * --learn's and --ask-save's file: checked now (a regular file, no
 * link), made empty when missing so that it can be bound read-only.
 * --dry-run makes nothing.
 */
static void
open_out_file(struct spawn_hostfile *h, const char *opt, const char *path,
    bool dry_run)
{
	char err[SPAWN_ERRLEN];
	struct stat st;

	if (path == NULL || (dry_run && lstat(path, &st) == -1 &&
	    errno == ENOENT))
		return;
	if (spawn_hostfile_open(h, opt, path, !dry_run, err,
	    sizeof(err)) == -1)
		die("%s", err);
}

/* The files gk-run keeps read-only inside (spawn_mounts_protect). */
static void
protect_files(const struct spawn_opts *o, struct spawn_plan *p)
{
	const struct spawn_hostfile *h;
	char err[SPAWN_ERRLEN];
	size_t i;

	for (i = 0; i < o->nallow_files + 2; i++) {
		h = i < o->nallow_files ? &allow_hf[i] :
		    i == o->nallow_files ? &learn_hf : &save_hf;
		if (h->fd != -1 && spawn_mounts_protect(&p->mounts,
		    &p->nmounts, h->path, h->fd, err, sizeof(err)) == -1)
			die("%s", err);
	}
}

/* The placeholders' registry, locked shared (spawn_guard_lock). */
static int	guard_fd = -1;
/* --ask: who answers, opened before the command runs (ask_open). */
static struct spawn_ask_conf ask = { .tty_fd = -1, .decisions_fd = -1,
    .save_fd = -1 };

static void
build_plan(const struct spawn_opts *o, struct spawn_plan *p, char **cwd)
{
	struct spawn_env_notes notes;
	char err[SPAWN_ERRLEN];
	size_t i;

	memset(p, 0, sizeof(*p));
	if ((*cwd = spawn_resolve_cwd(o->cwd, err, sizeof(err))) == NULL)
		die("%s", err);
	if (o->fs == SPAWN_FS_SANDBOX && strcmp(*cwd, "/") == 0)
		die("the working directory is /, and it would be writable in "
		    "the sandbox; cd to a project directory or pass --cwd DIR");
	if (spawn_resolve_mounts(o, *cwd, &p->mounts, &p->nmounts, err,
	    sizeof(err)) == -1)
		die("%s", err);
	protect_files(o, p);
	p->net = o->net;
	p->fs = o->fs;
	p->seccomp = o->seccomp;
	p->cwd = *cwd;
	/* credentials stay outside; the user learns which, never a value */
	if ((p->envp = spawn_env_scrub(environ, o->pass_env, o->npass_env,
	    &notes)) == NULL)
		die("out of memory");
	if (notes.out[0] != '\0' && !o->quiet)
		fprintf(stderr, "gk-run: kept out of the sandbox's environment "
		    "(credentials; --pass-env NAME lets one in): %s\n",
		    notes.out);
	if (notes.urls[0] != '\0' && !o->quiet)
		fprintf(stderr, "gk-run: passwords in URLs replaced by "
		    "placeholders: %s\n", notes.urls);
	p->envset = o->env;
	p->nenvset = o->nenv;
	p->seccomp_fd = p->resolv_fd = p->status_fd = -1;
	p->cmd = o->cmd;
	p->ncmd = o->ncmd;
	for (i = 0; i < p->nmounts; i++)
		if (p->mounts[i].kind == SPAWN_MNT_DATA &&
		    strcmp(p->mounts[i].path, SPAWN_APT_CONF) == 0)
			p->apt_config = SPAWN_APT_CONF;
	if (spawn_creds_plan(o, p, err, sizeof(err)) == -1)
		die("%s", err);
}

static int
add_fd(struct spawn_fds *f, int fd, const uint8_t *data, size_t len, bool out)
{
	if (spawn_fds_add(f, fd, data, len, out) == -1)
		die("too many hidden paths (at most %d)",
		    SPAWN_DATA_FDS_MAX - 3);
	return fd;
}

static void
print_argv(const struct spawn_plan *p, const struct spawn_fds *f, FILE *out)
{
	struct spawn_strv argv = { 0 };
	char *line;

	if (spawn_bwrap_build(p, &argv) == -1 ||
	    (line = spawn_shell_render(&argv, f->src, f->n)) == NULL)
		die("out of memory");
	fprintf(out, "%s\n", line);
	free(line);
	spawn_strv_clear(&argv);
}

static void
dry_run_macos(const struct spawn_opts *o, struct spawn_plan *p)
{
	struct spawn_cage cage;
	char err[SPAWN_ERRLEN], *prof;

	spawn_cage_placeholder(&cage, SPAWN_PLATFORM_MACOS);
	p->cage = &cage;
	if ((prof = spawn_sbpl_build(p, err, sizeof(err))) == NULL)
		die("%s", err);
	fputs(prof, stdout);
	free(prof);
	if (o->net == SPAWN_NET_GATED)
		fprintf(stderr, "gk-run: --dry-run: the profile allows "
		    "gatekeeperd's default ports; the cage is named by "
		    "ALL_PROXY=socks5h://TOKEN@%s\n", cage.socks);
}

/* Print what would run, with placeholder fds 3, 4, ...; exit 0. */
static void
dry_run(const struct spawn_opts *o, struct spawn_plan *p)
{
	char err[SPAWN_ERRLEN], resolv[SPAWN_ENDPOINT_MAX + 16];
	struct spawn_cage cage;
	struct spawn_fds f = { .n = 0 };
	uint8_t *bpf = NULL;
	size_t i, len = 0;
	int fd, next = 3;

	if (o->platform == SPAWN_PLATFORM_MACOS) {
		dry_run_macos(o, p);
		exit(0);
	}
	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == SPAWN_MNT_HIDE_FILE)
			p->mounts[i].fd = add_fd(&f, next++, NULL, 0, false);
		else if (p->mounts[i].kind == SPAWN_MNT_DATA)
			p->mounts[i].fd = add_fd(&f, next++,
			    (const uint8_t *)p->mounts[i].src,
			    strlen(p->mounts[i].src), false);
		else if (p->mounts[i].kind == SPAWN_MNT_RO &&
		    p->mounts[i].fd != -1) {
			p->mounts[i].fd = add_fd(&f, next++, NULL, 0, false);
			f.src[f.n - 1].path = p->mounts[i].path;
		}
	}
	if (p->net == SPAWN_NET_GATED) {
		spawn_cage_placeholder(&cage, SPAWN_PLATFORM_LINUX);
		p->cage = &cage;
	}
	spawn_resolv_conf(p, resolv, sizeof(resolv));
	if (resolv[0] != '\0')
		p->resolv_fd = add_fd(&f, next++, (const uint8_t *)resolv,
		    strlen(resolv), false);
	if (spawn_trust_dry_fds(p->trust, &f, &next) == -1)
		die("too many files for the sandbox");
	if (p->seccomp != SPAWN_SECCOMP_OFF) {
		if ((fd = spawn_seccomp_memfd(p->seccomp, err,
		    sizeof(err))) == -1)
			die("%s", err);
		if ((bpf = spawn_fd_slurp(fd, 1 << 20, &len)) == NULL)
			die("reading the seccomp filter: %s", strerror(errno));
		close(fd);
		p->seccomp_fd = add_fd(&f, next++, bpf, len, false);
	}
	p->status_fd = add_fd(&f, next++, NULL, 0, true);
	print_argv(p, &f, stdout);
	if (p->net == SPAWN_NET_GATED)
		fprintf(stderr, "gk-run: --dry-run: gated mode shows "
		    "gatekeeperd's default endpoints; a real run asks "
		    "gatekeeperd for the cage and runs this inside the cage's "
		    "network namespace\n");
	free(bpf);
	exit(0);
}

/* What a limit asked for became, said when it is less than asked. */
static void
limits_said(const struct spawn_opts *o, const struct spawn_cage *cage)
{
	const struct gk_rlimits *want = &o->limits, *got = &cage->limits;

	if (!gk_rlimits_any(want)) {
		if (o->verbose > 0)
			fprintf(stderr, "gk-run: %s\n", cage->contained ?
			    "the command's processes are in the cage's cgroup" :
			    "gatekeeperd does not contain cages' processes "
			    "(no cgroup; see its log)");
		return;
	}
	if ((want->memory != 0 && got->memory == 0) ||
	    (want->pids != 0 && got->pids == 0) ||
	    (want->cpus != 0 && got->cpus == 0))
		fprintf(stderr, "gk-run: warning: --limits best-effort: "
		    "gatekeeperd cannot enforce%s%s%s here; the command runs "
		    "without %s\n", want->memory != 0 && got->memory == 0 ?
		    " --memory" : "", want->pids != 0 && got->pids == 0 ?
		    " --pids" : "", want->cpus != 0 && got->cpus == 0 ?
		    " --cpus" : "", cage->contained ? "them" :
		    "any cgroup");
}

/* The cage.create request line; with `reattach` (a cgroup name, or "")
 * the one that registers the same sandbox again after a restart. */
static char *
cage_request(const struct spawn_opts *o, const char *reattach)
{
	/* made once, before the credentials' values leave gk-run */
	static struct json_object *life;
	char err[SPAWN_ERRLEN], label[SPAWN_LABEL_MAX + 1], *req;

	if (life == NULL && (life = spawn_life_describe(o->cmd, o->ncmd,
	    o->paths, o->npaths, o->creds, o->ncreds)) == NULL)
		die("out of memory");
	if (o->label != NULL)
		snprintf(label, sizeof(label), "%s", o->label);
	else
		spawn_cage_label(o->cmd, o->ncmd, label);
	if ((req = spawn_cage_request(label, o->transparent == 1,
	    !o->quiet || o->events_fd != -1 || o->learn != NULL,
	    o->learn != NULL, o->ask ? o->ask_timeout : 0, &o->limits,
	    o->limits_best_effort == 1, reattach, &o->allow, &o->max_upload,
	    life, err, sizeof(err))) == NULL)
		die("%s", err);
	return req;
}

/*
 * Gated: the child's namespace, then the cage from gatekeeperd over
 * `sock`; the child gets the cage. Any failure ends gk-run (and so the
 * child, through its parent-death signal). The namespace fd is kept
 * (*nsfd; CLOEXEC) to register the sandbox again after a restart.
 */
static void
make_cage(const struct spawn_opts *o, int sock, int chan, pid_t child,
    struct spawn_cage *cage, int *nsfd)
{
	char err[SPAWN_ERRLEN], *req;

	req = cage_request(o, NULL);
	if ((*nsfd = spawn_start_netns(chan, err, sizeof(err))) == -1 ||
	    spawn_ctl_create(sock, *nsfd, req, o->control, cage, err,
	    sizeof(err)) == -1)
		die("%s", err);
	free(req);
	/* the values go to gatekeeperd, and from gk-run's memory */
	if (spawn_ctl_credentials(sock, cage, o->creds, o->ncreds, o->control,
	    err, sizeof(err)) == -1 || spawn_filecreds_send(sock, cage,
	    o->fcreds, o->control, err, sizeof(err)) == -1)
		die("%s", err);
	if (o->verbose > 0)
		fprintf(stderr, "gk-run: cage %s: gateway %s, socks %s, "
		    "http %s, transparent %s\n", cage->id, cage->gateway,
		    cage->socks, cage->http, cage->transparent == 1 ? "on" :
		    "off");
	if (o->ask && !cage->ask)
		die("gatekeeperd made the cage without asking (is it older "
		    "than gk-run?); drop --ask, or update gatekeeperd");
	if (o->transparent == 1 && cage->transparent == 0)
		fprintf(stderr, "gk-run: note: gatekeeperd runs with "
		    "--transparent-port off: programs that ignore the proxy "
		    "variables fail at once in this cage\n");
	/* into the cage's cgroup before anything of the command runs */
	if (cage->contained && spawn_ctl_attach(sock, cage->id, child,
	    o->control, err, sizeof(err)) == -1)
		die("%s", err);
	limits_said(o, cage);
	if (spawn_start_go(chan, cage, err, sizeof(err)) == -1)
		die("%s", err);
}

/* The fds bwrap reads that need no cage: hidden files, seccomp. */
static void
data_fds(struct spawn_plan *p, struct spawn_fds *f)
{
	char err[SPAWN_ERRLEN];
	size_t i;
	int fd;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == SPAWN_MNT_DATA) {
			fd = spawn_memfd_data("gk-run-file", p->mounts[i].src,
			    strlen(p->mounts[i].src));
			if (fd == -1)
				die("memfd: %s", strerror(errno));
			p->mounts[i].fd = add_fd(f, fd, NULL, 0, false);
			continue;
		}
		if (p->mounts[i].kind == SPAWN_MNT_RO &&
		    p->mounts[i].fd != -1) {
			/* bwrap's copy; the original stays open for the run */
			if ((fd = fcntl(p->mounts[i].fd, F_DUPFD_CLOEXEC,
			    3)) == -1)
				die("dup: %s", strerror(errno));
			p->mounts[i].fd = add_fd(f, fd, NULL, 0, false);
			continue;
		}
		if (p->mounts[i].kind != SPAWN_MNT_HIDE_FILE)
			continue;
		if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
			die("/dev/null: %s", strerror(errno));
		p->mounts[i].fd = add_fd(f, fd, NULL, 0, false);
	}
	if (p->seccomp != SPAWN_SECCOMP_OFF) {
		if ((fd = spawn_seccomp_memfd(p->seccomp, err,
		    sizeof(err))) == -1)
			die("%s", err);
		p->seccomp_fd = add_fd(f, fd, NULL, 0, false);
	}
}

/* What spawn_run() needs besides the descriptors: the options, and in
 * gated mode the cage (NULL otherwise) and its namespace. */
static void
run_params(const struct spawn_opts *o, const struct spawn_cage *cage,
    int nsfd, struct spawn_run *r)
{
	char cgname[256];

	r->timeout = o->timeout;
	r->verbose = o->verbose;
	r->quiet = o->quiet;
	r->events_fd = o->events_fd;
	r->learn = o->learn != NULL ? &learn_hf : NULL;
	r->cmd = o->cmd;
	r->ncmd = o->ncmd;
	r->argv = o->argv;
	r->argc = o->argc;
	r->cmdname = cmdshow;
	if (cage == NULL)
		return;
	r->cg_kill = cage->kill;
	r->limits = gk_rlimits_any(&cage->limits);
	spawn_cage_cgname(cage, cgname, sizeof(cgname));
	r->control = o->control;
	r->nsfd = nsfd;
	r->reattach_timeout = o->reattach_timeout;
	r->reattach_req = o->reattach_timeout > 0 ? cage_request(o, cgname) :
	    NULL;
	r->ask = o->ask ? &ask : NULL;
	r->cage_id = cage->id;
}

/* --net none's resolver, then the unix socket gate: from the child,
 * served from here; or, where Yama keeps the gate off, a warning. */
static void
start_gate(const struct spawn_opts *o, const struct spawn_plan *p, int chan,
    bool gate)
{
	char err[SPAWN_ERRLEN];
	int fd;

	if (p->net == SPAWN_NET_NONE && spawn_nonet_start(chan, cmdshow,
	    o->quiet, err, sizeof(err)) == -1)
		die("%s", err);
	if (p->fs == SPAWN_FS_SANDBOX && !gate)
		fprintf(stderr, "gk-run: warning: kernel.yama.ptrace_scope "
		    "keeps gk-run from taking a sandboxed program's sockets, "
		    "so host unix sockets outside /run are not gated in this "
		    "run (ptrace_scope 1 or lower allows it; 2 allows it to "
		    "root)\n");
	if (gate && ((fd = spawn_start_listener(chan, err, sizeof(err))) ==
	    -1 || spawn_sockgate_start(fd, p, o->quiet, err,
	    sizeof(err)) == NULL))
		die("%s", err);
}

/*
 * Exits from here (not from main): what is still allocated stays
 * reachable from this frame, so a sanitizer build reports no leaks.
 */
static void __attribute__((noreturn))
run(const struct spawn_opts *o, struct spawn_plan *p)
{
	char err[SPAWN_ERRLEN], resolved[PATH_MAX], *bwrap, **benv;
	struct spawn_child child;
	struct spawn_cage cage;
	struct spawn_run r;
	struct spawn_fds f = { .n = 0 };
	sigset_t old;
	size_t i;
	int rc, pipefd[2], sock = -1, chan, nsfd = -1;
	bool gate;

	if ((bwrap = spawn_find_bwrap(err, sizeof(err))) == NULL)
		die("%s", err);
	if ((rc = spawn_check_command(p, spawn_sandbox_path(p), resolved,
	    sizeof(resolved), err, sizeof(err))) != 0) {
		fprintf(stderr, "gk-run: %s\n", err);
		exit(rc);
	}
	if (o->verbose > 0)
		fprintf(stderr, "gk-run: %s is %s\n", o->cmd[0], resolved);
	data_fds(p, &f);
	spawn_guard_register(guard_fd, p);
	if (pipe2(pipefd, O_CLOEXEC) == -1)
		die("pipe: %s", strerror(errno));
	p->status_fd = add_fd(&f, pipefd[1], NULL, 0, true);
	if (p->net == SPAWN_NET_GATED &&
	    (sock = spawn_ctl_connect(o->control, err, sizeof(err))) == -1)
		die("%s", err);
	memset(&r, 0, sizeof(r));
	if ((r.sigfd = spawn_signals_block(&old)) == -1)
		die("signals: %s", strerror(errno));
	/* decided once, here: the child installs the gate as told */
	gate = spawn_sockgate_wanted(p);
	if ((benv = spawn_env_bwrap(p->envp, p->fs == SPAWN_FS_SANDBOX)) ==
	    NULL)
		die("out of memory");
	child = (struct spawn_child){ .mask = &old, .plan = p, .fds = &f,
	    .ctl_fd = sock, .guard_fd = guard_fd, .bwrap = bwrap,
	    .envp = benv, .verbose = o->verbose, .sockgate = gate };
	if ((r.pid = spawn_start_fork(&child, &chan, err, sizeof(err))) == -1)
		die("%s", err);
	for (i = 0; i < f.n; i++)
		close(f.fd[i]);
	if (p->net == SPAWN_NET_GATED)
		make_cage(o, sock, chan, r.pid, &cage, &nsfd);
	start_gate(o, p, chan, gate);
	if (spawn_start_exec(chan, err, sizeof(err)) == -1)
		die("%s", err);
	close(chan);
	r.status_rfd = pipefd[0];
	r.ctl_fd = sock;
	run_params(o, p->net == SPAWN_NET_GATED ? &cage : NULL, nsfd, &r);
	rc = spawn_run(&r);
	spawn_gitlinks_check(p);
	spawn_guard_cleanup(guard_fd, p);
	exit(rc);
}

/* --decisions-fd: open for reading; never inherited by the sandbox (a
 * program inside must not answer its own questions). */
static void
decisions_fd_check(const struct spawn_opts *o)
{
	int fl;

	if ((fl = fcntl(o->decisions_fd, F_GETFL)) == -1 ||
	    (fl & O_ACCMODE) == O_WRONLY)
		die("--decisions-fd %d: not a descriptor open for reading "
		    "(open it in the shell: gk-run --decisions-fd 4 ... "
		    "4<decisions.fifo)", o->decisions_fd);
	if (o->decisions_fd <= 2)
		die("--decisions-fd %d: 0, 1 and 2 are the command's; use 3 "
		    "or above", o->decisions_fd);
	if (fcntl(o->decisions_fd, F_SETFD, FD_CLOEXEC) == -1)
		die("--decisions-fd %d: %s", o->decisions_fd, strerror(errno));
}

/*
 * --ask needs someone to answer: a supervisor (--decisions-fd) or a
 * person at the terminal. --ask-save's file is opened now, so that a
 * "save" never fails after the command started.
 */
static void
ask_open(const struct spawn_opts *o)
{
	if (!o->ask || o->dry_run)
		return;
	ask.cmdname = cmdshow;
	if (o->decisions_fd != -1) {
		decisions_fd_check(o);
		ask.decisions_fd = o->decisions_fd;
	} else if ((ask.tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY |
	    O_CLOEXEC | O_NONBLOCK)) == -1)
		die("--ask needs someone to answer: a terminal (/dev/tty: %s), "
		    "or --decisions-fd N with --events-fd", strerror(errno));
	if (o->ask_save == NULL)
		return;
	/* opened (made) by open_out_file(), never through a link */
	if ((ask.save_fd = spawn_hostfile_reopen(&save_hf, O_WRONLY |
	    O_APPEND)) == -1)
		die("--ask-save %s: %s (it must be a file gk-run can append "
		    "to)", o->ask_save, strerror(errno));
	ask.save_path = o->ask_save;
}

/* --events-fd: open for writing; never inherited by the sandbox (a
 * program inside must not write the supervisor's events). */
static void
events_fd_check(const struct spawn_opts *o)
{
	int fl;

	if (o->events_fd == -1 || o->dry_run)
		return;
	if ((fl = fcntl(o->events_fd, F_GETFL)) == -1 ||
	    (fl & O_ACCMODE) == O_RDONLY)
		die("--events-fd %d: not a descriptor open for writing (open "
		    "it in the shell: gk-run --events-fd 3 ... 3>events.json)",
		    o->events_fd);
	if (o->events_fd <= 2)
		die("--events-fd %d: 0, 1 and 2 are the command's; use 3 or "
		    "above", o->events_fd);
	if (fcntl(o->events_fd, F_SETFD, FD_CLOEXEC) == -1)
		die("--events-fd %d: %s", o->events_fd, strerror(errno));
}

/* The arguments the options point into, for the process's life. */
static char	**conf_argv __attribute__((used));

/* The configuration files' defaults, then the command line. */
static char **
conf_args(int argc, char **argv, int *nargs)
{
	char err[SPAWN_ERRLEN], *home = spawn_home();

	conf_argv = spawn_conf_argv(argc, argv, home, nargs, err,
	    sizeof(err));
	free(home);	/* the arguments hold their own copies */
	if (conf_argv == NULL)
		die("%s", err);
	return conf_argv;
}

/* What weakens the sandbox, said before it runs. */
static void
warn_loudly(const struct spawn_opts *o)
{
	if (o->learn != NULL && !o->dry_run)
		fprintf(stderr, "gk-run: WARNING: --learn: %s may reach ANY "
		    "public host (special address ranges stay refused); every "
		    "name it uses outside the allowlist is written to %s at "
		    "exit\n", cmdshow, o->learn);
	if (o->net == SPAWN_NET_HOST)
		fprintf(stderr, "gk-run: WARNING: --net host: %s gets the "
		    "host's network with NO isolation and NO allowlist\n",
		    cmdshow);
	if (o->cache == SPAWN_CACHE_HOST && o->fs == SPAWN_FS_SANDBOX)
		fprintf(stderr, "gk-run: WARNING: --cache host: %s can write "
		    "the host's own tool caches (~/.npm, ~/.cache, ~/.cargo, "
		    "~/.local/lib, ~/.local/bin, ...); what it plants there "
		    "runs when the host's tools use them\n", cmdshow);
}

int
main(int argc, char **argv)
{
	char err[SPAWN_ERRLEN], *cwd, **args;
	struct spawn_opts o;
	struct spawn_plan p;
	int nargs;

	std_fds();
	args = conf_args(argc, argv, &nargs);
	switch (spawn_opts_parse(nargs, args, getenv("GK_CONTROL"), &o, err,
	    sizeof(err))) {
	case SPAWN_OPT_HELP:
		fputs(spawn_usage(), stdout);
		return 0;
	case SPAWN_OPT_VERSION:
		printf("gk-run (%s)\n", PACKAGE_STRING);
		return 0;
	case SPAWN_OPT_CACHE_DIR:
		return spawn_cache_dir_print(&o);
	case SPAWN_OPT_PRESETS:
		if (spawn_preset_list(stdout, err, sizeof(err)) == -1)
			die("%s", err);
		return 0;
	case SPAWN_OPT_USAGE:
	case SPAWN_OPT_NOMEM:
		die("%s", err);
	case SPAWN_OPT_RUN:
		break;
	}
	o.argv = argv;	/* as typed: --learn's next command */
	o.argc = argc;
	spawn_printable(o.cmd[0], cmdshow, sizeof(cmdshow));
	events_fd_check(&o);
	load_allow_files(&o);
	if (spawn_creds_load(&o, err, sizeof(err)) == -1)
		die("%s", err);
	if (o.platform == SPAWN_PLATFORM_MACOS && !o.dry_run)
		die("--platform macos: this gk-run runs on Linux and can only "
		    "print the macOS profile; add --dry-run");
	open_out_file(&learn_hf, "--learn", o.learn, o.dry_run);
	open_out_file(&save_hf, "--ask-save", o.ask_save, o.dry_run);
	ask_open(&o);
	warn_loudly(&o);
	/* before the plan: placeholders seen now stay until the end */
	if (!o.dry_run)
		guard_fd = spawn_guard_lock();
	build_plan(&o, &p, &cwd);
	if (o.dry_run)
		dry_run(&o, &p);
	run(&o, &p);
}
