/*
 * Stay with bwrap (spawn_start.c started it): forward signals, enforce
 * the timeout, keep the control connection, and turn what happened into
 * gk-run's exit status.
 *
 * bwrap does not forward signals. With --unshare-pid and --new-session
 * its pid 1 (which ignores signals it has no handler for) leads a new
 * session whose process group holds the command and its children; its
 * outside pid is the "child-pid" bwrap writes on --json-status-fd. So a
 * signal is forwarded to that process group. Before the group exists a
 * terminating signal goes to bwrap itself, which dies, and
 * --die-with-parent takes the sandbox with it.
 *
 * --json-status-fd (read line by line, spawn_status.c) also tells
 * whether the command ran at all: bwrap writes {"exit-code": N} only
 * after a successful exec. Without it bwrap
 * failed during setup and printed why: gk-run exits 125.
 *
 * The control connection carries the cage's events and the replies to
 * gk-run's requests, in order. With --ask its questions go to
 * spawn_ask.c, which also reads the terminal or --decisions-fd and sends
 * the answers (cage.decide) on the same connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gatekeeper/base/gk_time.h"
#include "spawner/spawn_int.h"


static const int forwarded[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT,
	SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU, SIGPWR, SIGURG, SIGVTALRM,
	SIGPROF, SIGXCPU, SIGXFSZ,
};

#define SUMMARY_MAX	512	/* the exit line's list of targets */
#define SYNC_MS		500	/* at exit, for the last denials */
#define LEARN_MAX	4096	/* names and ports --learn keeps */
#define SUMMARY_HOSTS	8
#define EVENTS_QUEUE_MAX (1024 * 1024)	/* --events-fd lines not read yet */
#define EVENTS_EXIT_MS	5000	/* at exit, for a slow reader */

#define REATTACH_FIRST_MS	100	/* first try after the loss */
#define REATTACH_MAX_MS		1000	/* then every second at most */

struct run_state {
	const struct spawn_run *r;
	pid_t		 bwrap;
	pid_t		 group;		/* the sandbox's pid 1, 0: unknown */
	int		 sigfd;
	int		 status_fd;
	int		 ctl_fd;
	char		 sbuf[SPAWN_STATUS_LINE_MAX];
	size_t		 slen;
	int		 exit_code;	/* -1: the command never ran */
	int		 wstatus;
	bool		 exited;
	int		 timed_out;	/* 0, 1 TERM sent, 2 KILL sent */
	uint64_t	 deadline;	/* gk_clock_ms() */
	/* the control connection's lines (denials), and what they said */
	char		 cbuf[SPAWN_EVENT_LINE_MAX + 1];
	struct spawn_lines clines;	/* an overlong line is dropped */
	size_t		 ndenied;
	bool		 more;		/* gatekeeperd stopped telling */
	char		 summary[SUMMARY_MAX];	/* "a:443, b (DNS), ..." */
	size_t		 nlisted;
	bool		 syncing;	/* a request's reply ends the events */
	bool		 synced;
	struct spawn_strv learned;	/* --learn's (spawn_learn_push) */
	bool		 learn_more;
	/* the cage's own limits: what they did */
	uint64_t	 oom_kills, mem_limit;
	uint64_t	 forks_refused, pids_limit;
	/* gatekeeperd went away: registering the sandbox again */
	bool		 reattaching;
	bool		 ended;		/* gatekeeperd ended the cage */
	uint64_t	 reattach_at;		/* next try, gk_clock_ms() */
	uint64_t	 reattach_until;
	uint32_t	 reattach_wait;		/* ms, doubling up to 1 s */
	char		 kill[1024];		/* the cage's cgroup.kill */
	/* --events-fd: lines its reader has not taken yet (written when
	 * it can take them: a reader that does not read never stalls the
	 * command's end or the control connection) */
	char		*evq;
	size_t		 evq_off, evq_len;
	size_t		 ev_dropped;		/* lines it never got */
	bool		 ev_gone;		/* its reader closed it */
	struct spawn_ask *ask;			/* --ask; NULL: none */
	char		 cage_id[32];		/* "": none */
};

static void
now_plus(uint64_t *deadline, unsigned int sec)
{
	*deadline = gk_clock_ms() + (uint64_t)sec * 1000;
}

/* Each complete line bwrap wrote so far: "child-pid", "exit-code". */
static void
parse_status(struct run_state *st)
{
	struct spawn_status s;
	char *nl;
	size_t n;

	while ((nl = memchr(st->sbuf, '\n', st->slen)) != NULL) {
		n = (size_t)(nl - st->sbuf) + 1;
		if (spawn_status_parse(st->sbuf, n, &s) == SPAWN_STATUS_OK) {
			if (st->group == 0 && s.child_pid > 0) {
				st->group = s.child_pid;
				spawn_tmpwatch_attach(st->group);
			}
			if (s.exit_code >= 0)
				st->exit_code = s.exit_code;
		}
		memmove(st->sbuf, st->sbuf + n, st->slen - n);
		st->slen -= n;
	}
	if (st->slen == sizeof(st->sbuf))
		st->slen = 0;	/* a line over the limit: not bwrap's */
}

static void
read_status(struct run_state *st)
{
	ssize_t n;

	for (;;) {
		n = read(st->status_fd, st->sbuf + st->slen,
		    sizeof(st->sbuf) - st->slen);
		if (n > 0) {
			st->slen += (size_t)n;
			parse_status(st);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN) {
			close(st->status_fd);
			st->status_fd = -1;
		}
		break;
	}
}

/* Deliver sig to the sandbox; true if it went somewhere. */
static bool
deliver(struct run_state *st, int sig)
{
	if (st->group > 0 && kill(-st->group, sig) == 0)
		return true;
	switch (sig) {
	case SIGWINCH:
	case SIGCONT:
	case SIGURG:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return false;	/* nothing to stop or wake yet */
	default:
		return kill(st->bwrap, sig) == 0;
	}
}

static void
forward(struct run_state *st, int sig)
{
	if (st->r->verbose > 0)
		fprintf(stderr, "gk-run: forwarding %s\n", strsignal(sig));
	if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		/* the sandbox has no terminal: stop it, then ourselves */
		deliver(st, SIGSTOP);
		raise(SIGSTOP);
		return;
	}
	deliver(st, sig);
}

static void
on_timeout(struct run_state *st)
{
	if (st->timed_out == 0) {
		fprintf(stderr, "gk-run: %s timed out after %u s; sending "
		    "SIGTERM (SIGKILL in %d s)\n", st->r->cmdname,
		    st->r->timeout, SPAWN_GRACE_SEC);
		deliver(st, SIGTERM);
		st->timed_out = 1;
		now_plus(&st->deadline, SPAWN_GRACE_SEC);
		return;
	}
	if (st->group > 0)
		kill(-st->group, SIGKILL);
	kill(st->bwrap, SIGKILL);
	st->timed_out = 2;
	now_plus(&st->deadline, 3600);
}

static void
read_signals(struct run_state *st)
{
	struct signalfd_siginfo si;
	pid_t w;

	while (read(st->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			forward(st, (int)si.ssi_signo);
			continue;
		}
		w = waitpid(st->bwrap, &st->wstatus, WNOHANG);
		if (w == st->bwrap)
			st->exited = true;
	}
}

/* The queued --events-fd lines, counted as not delivered. */
static void
events_drop(struct run_state *st)
{
	size_t i;

	for (i = st->evq_off; i < st->evq_len; i++)
		st->ev_dropped += st->evq[i] == '\n';
	st->evq_off = st->evq_len = 0;
}

/*
 * Write queued --events-fd lines while the descriptor takes them without
 * blocking: one whole line per write (a line is far below PIPE_BUF, so a
 * pipe with room takes it whole, and a reader never sees half a line).
 */
static void
events_flush(struct run_state *st)
{
	struct pollfd pfd;
	const char *nl;
	size_t n;
	ssize_t w;

	while (st->evq_off < st->evq_len) {
		pfd = (struct pollfd){ .fd = st->r->events_fd,
		    .events = POLLOUT };
		if (poll(&pfd, 1, 0) == 1 &&
		    (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
			/* no reader any more (and a write would raise
			 * SIGPIPE): what waits is lost, later lines too */
			events_drop(st);
			st->ev_gone = true;
			break;
		}
		if ((pfd.revents & POLLOUT) == 0)
			break;
		nl = memchr(st->evq + st->evq_off, '\n',
		    st->evq_len - st->evq_off);
		n = nl != NULL ? (size_t)(nl - (st->evq + st->evq_off)) + 1 :
		    st->evq_len - st->evq_off;
		do
			w = write(st->r->events_fd, st->evq + st->evq_off, n);
		while (w == -1 && errno == EINTR);
		if (w <= 0)
			break;
		st->evq_off += (size_t)w;
	}
	if (st->evq_off == st->evq_len)
		st->evq_off = st->evq_len = 0;
}

/* Queue one line for --events-fd (dropped, and counted, past the cap). */
static void
events_put(struct run_state *st, const char *line, size_t n)
{
	char *nq;

	if (st->evq_off > 0 && st->evq_len + n > EVENTS_QUEUE_MAX) {
		memmove(st->evq, st->evq + st->evq_off,
		    st->evq_len - st->evq_off);
		st->evq_len -= st->evq_off;
		st->evq_off = 0;
	}
	if (st->ev_gone || st->evq_len + n > EVENTS_QUEUE_MAX ||
	    (nq = realloc(st->evq, st->evq_len + n)) == NULL) {
		st->ev_dropped++;
		return;
	}
	st->evq = nq;
	memcpy(st->evq + st->evq_len, line, n);
	st->evq_len += n;
	events_flush(st);
}

/* At exit: what is still queued, for at most EVENTS_EXIT_MS; then say
 * what the reader did not get. */
static void
events_end(struct run_state *st)
{
	uint64_t deadline = gk_clock_ms() + EVENTS_EXIT_MS;
	struct pollfd pfd;
	int ms;

	while (st->evq_off < st->evq_len &&
	    (ms = gk_ms_left(deadline, EVENTS_EXIT_MS)) > 0) {
		pfd = (struct pollfd){ .fd = st->r->events_fd,
		    .events = POLLOUT };
		if (poll(&pfd, 1, ms) == -1 && errno != EINTR)
			break;
		events_flush(st);
	}
	events_drop(st);
	if (st->ev_dropped > 0)
		fprintf(stderr, "gk-run: --events-fd %d: %zu event line(s) not "
		    "delivered (its reader did not read them in time)\n",
		    st->r->events_fd, st->ev_dropped);
	free(st->evq);
	st->evq = NULL;
}

/* One denial: its line on stderr, its JSON for --events-fd, the summary. */
static void
on_deny(struct run_state *st, const struct spawn_event *ev)
{
	char target[SPAWN_EVENT_HOST_MAX + 16], *json;
	size_t n;

	st->ndenied++;
	if (!st->r->quiet)
		spawn_ask_event(st->ask, ev);
	if (st->r->events_fd != -1 && (json = spawn_event_json(ev)) != NULL) {
		events_put(st, json, strlen(json));
		free(json);
	}
	if (st->nlisted >= SUMMARY_HOSTS)
		return;
	spawn_event_target(ev, target, sizeof(target));
	n = strlen(st->summary);
	snprintf(st->summary + n, sizeof(st->summary) - n, "%s%s%s",
	    n > 0 ? ", " : "", target, ev->port == 0 ? " (DNS)" : "");
	st->nlisted++;
}

/* The cage's memory or pids limit acted: counted for the end, and told
 * to --events-fd at once. */
static void
on_limit(struct run_state *st, const struct spawn_event *ev)
{
	char line[256];
	int n;

	if (strcmp(ev->kind, "memory") == 0) {
		st->oom_kills += ev->count;
		st->mem_limit = ev->value;
	} else {
		st->forks_refused += ev->count;
		st->pids_limit = ev->value;
	}
	if (st->r->events_fd == -1)
		return;
	n = snprintf(line, sizeof(line), "{\"limit\":\"%s\",\"value\":%llu,"
	    "\"count\":%llu,\"time\":\"%s\"}\n", ev->kind,
	    (unsigned long long)ev->value, (unsigned long long)ev->count,
	    ev->time);
	if (n > 0 && (size_t)n < sizeof(line))
		events_put(st, line, (size_t)n);
}

/* At exit: what the cage's limits did, in a line each. */
static void
limits_summary(const struct run_state *st, int rc)
{
	char v[GK_RLIM_TEXT];

	if (st->oom_kills > 0) {
		gk_size_format(st->mem_limit, v, sizeof(v));
		if (rc == 128 + SIGKILL)
			fprintf(stderr, "gk-run: killed: out of memory (limit "
			    "%s)\n", v);
		else
			fprintf(stderr, "gk-run: out of memory (limit %s): "
			    "%llu process%s killed\n", v,
			    (unsigned long long)st->oom_kills,
			    st->oom_kills == 1 ? "" : "es");
	}
	if (st->forks_refused > 0)
		fprintf(stderr, "gk-run: process limit reached (--pids %llu): "
		    "%llu fork%s refused\n", (unsigned long long)st->pids_limit,
		    (unsigned long long)st->forks_refused,
		    st->forks_refused == 1 ? "" : "s");
}

/* The command is over: whatever of the cage still runs (a daemon it
 * started) ends now. gatekeeperd does it when gk-run's connection
 * closes; without gatekeeperd, gk-run does it itself. */
static void
end_cage(const struct run_state *st)
{
	int fd;

	if (st->ctl_fd != -1 || st->kill[0] == '\0' ||
	    (fd = open(st->kill, O_WRONLY | O_CLOEXEC)) == -1)
		return;
	(void)!write(fd, "1", 1);
	close(fd);
}

/* A question of the cage and its end: to --events-fd, and to whoever
 * answers. */
static void
on_ask(struct run_state *st, enum spawn_event_type t,
    const struct spawn_event *ev)
{
	char *json;

	if (st->ask == NULL)
		return;
	if (st->r->events_fd != -1 && (json = spawn_ask_json(t, ev)) != NULL) {
		events_put(st, json, strlen(json));
		free(json);
	}
	if (t == SPAWN_EVENT_ASK)
		spawn_ask_question(st->ask, ev);
	else
		spawn_ask_done(st->ask, ev);
}

static bool
ctl_line(void *arg, const char *line, size_t len, bool toolong)
{
	struct run_state *st = arg;
	enum spawn_event_type t;
	struct spawn_event ev;
	char why[sizeof(ev.why)];

	if (toolong)
		return true;
	switch ((t = spawn_event_parse(line, len, &ev))) {
	case SPAWN_EVENT_DENY:
		on_deny(st, &ev);
		break;
	case SPAWN_EVENT_MORE:
		st->more = true;
		if (!st->r->quiet)
			spawn_ask_aside(st->ask, "gk-run: more denials than "
			    "gatekeeperd tells one cage; the rest are in its "
			    "audit log");
		break;
	case SPAWN_EVENT_LEARN:
		if (st->learned.n < LEARN_MAX)
			spawn_learn_push(&st->learned, &ev);
		break;
	case SPAWN_EVENT_LEARN_MORE:
		st->learn_more = true;
		break;
	case SPAWN_EVENT_LIMIT:
		on_limit(st, &ev);
		break;
	case SPAWN_EVENT_UNREACHABLE:	/* told once per host and port */
		if (!st->r->quiet)
			spawn_ask_event(st->ask, &ev);
		break;
	case SPAWN_EVENT_ASK:
	case SPAWN_EVENT_ASK_DONE:
		on_ask(st, t, &ev);
		break;
	case SPAWN_EVENT_END:
		/* its processes are being killed: say why before they die */
		fprintf(stderr, "gk-run: gatekeeperd ended the cage (%s); %s "
		    "is killed\n", spawn_printable(ev.why, why, sizeof(why)),
		    st->r->cmdname);
		st->ended = true;	/* not registered again */
		break;
	case SPAWN_EVENT_REPLY:
		/* replies come in order: cage.decide's, then the sync's */
		if (st->ask != NULL && spawn_ask_reply(st->ask, &ev))
			break;
		if (st->syncing)
			st->synced = true;
		break;
	case SPAWN_EVENT_NONE:
		break;
	}
	return true;
}

/* Read what gatekeeperd sent (drain: the socket is non-blocking). */
static void
read_ctl(struct run_state *st)
{
	char buf[4096];
	ssize_t n;
	int i;

	for (i = 0; i < 64; i++) {
		n = recv(st->ctl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			spawn_lines_feed(&st->clines, buf, (size_t)n, ctl_line,
			    st);
			continue;
		}
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			return;
		break;
	}
	if (i == 64)
		return;
	close(st->ctl_fd);
	st->ctl_fd = -1;
	spawn_lines_reset(&st->clines);
	if (st->ask != NULL)
		spawn_ask_conn(st->ask, -1, NULL);
	if (st->ended)		/* said already; its processes are dying */
		return;
	if (st->r->reattach_req == NULL || st->r->nsfd == -1) {
		fprintf(stderr, "gk-run: gatekeeperd closed the control "
		    "connection; the cage is gone and %s has no network any "
		    "more\n", st->r->cmdname);
		return;
	}
	fprintf(stderr, "gk-run: gatekeeperd closed the control connection; "
	    "%s runs on without network, and gk-run registers it again "
	    "when gatekeeperd is back (waiting up to %u s)\n",
	    st->r->cmdname, st->r->reattach_timeout);
	st->reattaching = true;
	st->reattach_wait = REATTACH_FIRST_MS;
	st->reattach_at = gk_clock_ms() + REATTACH_FIRST_MS;
	st->reattach_until = gk_clock_ms() +
	    (uint64_t)st->r->reattach_timeout * 1000;
}

/*
 * One try: connect, and the same cage.create with the namespace again
 * ("reattach": its cgroup). gatekeeperd not there yet: try later, waiting
 * twice as long (at most REATTACH_MAX_MS); past the timeout, or refused:
 * give up, said once.
 */
static void
try_reattach(struct run_state *st)
{
	char err[SPAWN_ERRLEN];
	struct spawn_cage cage;
	uint64_t now = gk_clock_ms();
	int sock;

	if ((sock = spawn_ctl_connect(st->r->control, err, sizeof(err))) ==
	    -1) {
		if (now >= st->reattach_until) {
			fprintf(stderr, "gk-run: gatekeeperd is not back after "
			    "%u s; %s has no network any more\n",
			    st->r->reattach_timeout, st->r->cmdname);
			st->reattaching = false;
			return;
		}
		st->reattach_wait = st->reattach_wait * 2 > REATTACH_MAX_MS ?
		    REATTACH_MAX_MS : st->reattach_wait * 2;
		st->reattach_at = now + st->reattach_wait;
		return;
	}
	st->reattaching = false;
	if (spawn_ctl_create(sock, st->r->nsfd, st->r->reattach_req,
	    st->r->control, &cage, err, sizeof(err)) == -1) {
		fprintf(stderr, "gk-run: %s; %s has no network any more\n",
		    err, st->r->cmdname);
		close(sock);
		return;
	}
	st->ctl_fd = sock;
	snprintf(st->cage_id, sizeof(st->cage_id), "%s", cage.id);
	if (st->ask != NULL)
		spawn_ask_conn(st->ask, sock, cage.id);
	if (cage.kill[0] != '\0')
		snprintf(st->kill, sizeof(st->kill), "%s", cage.kill);
	fprintf(stderr, "gk-run: gatekeeperd is back: %s has its network "
	    "again (cage %s)\n", st->r->cmdname, cage.id);
}

/*
 * The command ended: every denial it met was told before its refusal
 * was sent, but may still be on its way. gatekeeperd answers requests in
 * order after what it queued, so a request's reply (to req, "stats" or
 * the cage's end) ends the events. Bounded by SYNC_MS.
 */
static void
ctl_sync(struct run_state *st, const char *req)
{
	struct pollfd pfd;
	uint64_t deadline = gk_clock_ms() + SYNC_MS;
	int ms;

	if (send(st->ctl_fd, req, strlen(req), MSG_NOSIGNAL) !=
	    (ssize_t)strlen(req))
		return;
	st->syncing = true;
	st->synced = false;
	while (!st->synced && st->ctl_fd != -1 &&
	    (ms = gk_ms_left(deadline, SYNC_MS)) > 0) {
		pfd = (struct pollfd){ .fd = st->ctl_fd, .events = POLLIN };
		if (poll(&pfd, 1, ms) == -1 && errno != EINTR)
			return;
		if (pfd.revents != 0)
			read_ctl(st);
	}
}

/* At exit: what was denied, in one line. */
static void
denied_summary(struct run_state *st)
{
	if (st->ctl_fd != -1 && (!st->r->quiet || st->r->events_fd != -1 ||
	    st->r->learn != NULL || st->r->limits))
		ctl_sync(st, "{\"op\":\"stats\"}\n");	/* the last denials */
	if (st->r->quiet)
		return;
	if (st->ndenied > 0)
		fprintf(stderr, "gk-run: %zu denied%s: %s%s\n", st->ndenied,
		    st->more ? " (at least)" : "", st->summary,
		    st->ndenied > st->nlisted ? ", ..." : "");
	if (st->ask != NULL)
		spawn_ask_summary(st->ask);
}

static void
loop(struct run_state *st)
{
	struct pollfd pfd[5];
	int n, timeout, left;

	while (!st->exited) {
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = st->sigfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = st->status_fd,
		    .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = st->ctl_fd,
		    .events = POLLIN };
		/* -1 (ignored by poll) while nothing waits for the reader */
		pfd[n++] = (struct pollfd){ .fd = st->evq_off < st->evq_len ?
		    st->r->events_fd : -1, .events = POLLOUT };
		pfd[n++] = (struct pollfd){ .fd = st->ask != NULL ?
		    spawn_ask_fd(st->ask) : -1, .events = POLLIN };
		timeout = st->r->timeout > 0 ? gk_ms_left(st->deadline, 3600000) : -1;
		if (timeout == 0) {
			on_timeout(st);
			continue;
		}
		if (st->reattaching) {
			if ((left = gk_ms_left(st->reattach_at, 3600000)) == 0) {
				try_reattach(st);
				continue;
			}
			if (timeout == -1 || left < timeout)
				timeout = left;
		}
		if (poll(pfd, (nfds_t)n, timeout) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents != 0 && st->status_fd != -1)
			read_status(st);
		if (pfd[2].revents != 0 && st->ctl_fd != -1)
			read_ctl(st);
		if (pfd[0].revents != 0)
			read_signals(st);
		if (pfd[3].revents != 0)
			events_flush(st);
		if (pfd[4].revents != 0 && pfd[4].fd != -1 &&
		    pfd[4].fd == spawn_ask_fd(st->ask))
			spawn_ask_read(st->ask, pfd[4].revents);
	}
}

/* The cage ends saying how its command ended (status: as gk-run
 * exits), for gatekeeperd's audit line; else it would end when gk-run's
 * connection closes, as "connection closed". */
static void
say_end(struct run_state *st, int status)
{
	char *req;

	if (st->ctl_fd == -1 || st->ended || st->cage_id[0] == '\0')
		return;
	if (st->exit_code >= 0)		/* under a timeout: its own status */
		status = st->exit_code;
	else if (WIFSIGNALED(st->wstatus))
		status = 128 + WTERMSIG(st->wstatus);
	if ((req = spawn_life_end_request(st->cage_id, status,
	    st->timed_out > 0, st->oom_kills > 0)) == NULL)
		return;
	ctl_sync(st, req);
	free(req);
}

/* gk-run's exit status from what happened. */
static int
outcome(struct run_state *st)
{
	char why[SPAWN_ERRLEN];

	if (st->status_fd != -1)
		read_status(st);
	if (st->timed_out > 0)
		return SPAWN_EXIT_TIMEOUT;
	if (st->exit_code >= 0)
		return st->exit_code;
	if (WIFSIGNALED(st->wstatus))
		return 128 + WTERMSIG(st->wstatus);
	/* bwrap said why in its words; say what to change, if it is
	 * the host's user namespaces */
	if (spawn_userns_probe(why, sizeof(why)) == -1)
		fprintf(stderr, "gk-run: %s\n", why);
	else
		fprintf(stderr, "gk-run: the sandbox could not start %s "
		    "(bwrap's message above says why)\n", st->r->cmdname);
	return SPAWN_EXIT_FAIL;
}

int
spawn_signals_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, old) == -1)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int
spawn_run(const struct spawn_run *r)
{
	struct run_state st;
	int rc;

	memset(&st, 0, sizeof(st));
	st.r = r;
	st.exit_code = -1;
	st.bwrap = r->pid;
	st.sigfd = r->sigfd;
	st.status_fd = r->status_rfd;
	st.ctl_fd = r->ctl_fd;
	snprintf(st.cage_id, sizeof(st.cage_id), "%s",
	    r->cage_id != NULL ? r->cage_id : "");
	st.clines = (struct spawn_lines){ .buf = st.cbuf,
	    .cap = SPAWN_EVENT_LINE_MAX };
	if (r->cg_kill != NULL)
		snprintf(st.kill, sizeof(st.kill), "%s", r->cg_kill);
	if (fcntl(st.status_fd, F_SETFL, O_NONBLOCK) == -1) {
		fprintf(stderr, "gk-run: bwrap's status pipe: %s\n",
		    strerror(errno));
		return SPAWN_EXIT_FAIL;
	}
	if (r->ask != NULL) {
		if ((st.ask = spawn_ask_new(r->ask)) == NULL) {
			fprintf(stderr, "gk-run: out of memory\n");
			return SPAWN_EXIT_FAIL;
		}
		spawn_ask_conn(st.ask, st.ctl_fd, r->cage_id);
	}
	if (r->timeout > 0)
		now_plus(&st.deadline, r->timeout);
	loop(&st);
	close(st.sigfd);
	spawn_tmpwatch_report(r->cmdname);
	if (st.ask != NULL)
		spawn_ask_end(st.ask);
	denied_summary(&st);
	if (r->events_fd != -1)
		events_end(&st);
	end_cage(&st);
	if (r->learn != NULL)
		spawn_learn_write(r->learn, &st.learned, st.learn_more,
		    r->cmd, r->ncmd, r->argv, r->argc);
	spawn_strv_clear(&st.learned);
	rc = outcome(&st);
	limits_summary(&st, rc);
	say_end(&st, rc);	/* a decision's reply may come before its own */
	spawn_ask_free(st.ask);
	return rc;
}
