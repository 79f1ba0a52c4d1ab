/*
 * --ask while the command runs. gatekeeperd holds a connection to a name
 * outside the allowlist and asks the cage's owner ("ask" lines on the
 * control connection). gk-run puts each question to a person on the
 * terminal, one at a time in arrival order, or leaves it to a supervisor
 * (the questions on --events-fd, the answers on --decisions-fd), and
 * sends the answer as cage.decide. "ask.done" ends a question, whoever
 * decided it (a timeout too). On "save" gk-run appends host:port to the
 * --ask-save file as it sends the decision.
 *
 * Nothing here blocks gk-run: the terminal and the supervisor's
 * descriptor are read once per poll(2) wake-up into bounded line buffers,
 * and the terminal only while a question is on it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn_int.h"

#define ASK_OPEN_MAX	1024	/* open questions gk-run keeps */
#define TTY_WAIT_MAX	256	/* unanswered ones behind the prompt */
#define TTY_LINE_MAX	256	/* a typed answer */
#define TTY_TRIES	3	/* prompts before an unclear answer denies */
#define SEND_WAIT_MS	1000	/* a decision gatekeeperd does not take */
#define SUMMARY_MAX	512
#define SUMMARY_HOSTS	8
#define TARGET_MAX	(SPAWN_EVENT_HOST_MAX + 16)

struct ask_q {
	char		 id[SPAWN_ASK_ID_MAX + 1];
	char		 target[TARGET_MAX];	/* host:port, [v6]:port */
	unsigned int	 timeout;
	uint64_t	 until;		/* gk_clock_ms(): gatekeeperd denies */
	bool		 answered;	/* gk-run sent its decision */
};

struct spawn_ask {
	struct spawn_ask_conf c;
	int		 ctl_fd;
	char		 cage[32];
	struct ask_q	*q;		/* open questions, in arrival order */
	size_t		 nq, capq;
	size_t		 replies;	/* cage.decide replies to come */
	bool		 ending;	/* the command ended: no prompts */
	bool		 full_said;
	/* the terminal: the question `shown` is on the prompt */
	bool		 prompting;
	char		 shown[SPAWN_ASK_ID_MAX + 1];
	int		 tries;
	char		 tbuf[TTY_LINE_MAX + 1];
	struct spawn_lines tty;
	/* --decisions-fd */
	char		 dbuf[SPAWN_DECISION_LINE_MAX + 1];
	struct spawn_lines dec;
	bool		 dec_eof;
	/* what was asked, for the end */
	size_t		 nasked, nlisted;
	char		 summary[SUMMARY_MAX];
};

struct spawn_ask *
spawn_ask_new(const struct spawn_ask_conf *c)
{
	struct spawn_ask *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->c = *c;
	a->ctl_fd = -1;
	a->tty = (struct spawn_lines){ .buf = a->tbuf, .cap = TTY_LINE_MAX };
	a->dec = (struct spawn_lines){ .buf = a->dbuf,
	    .cap = SPAWN_DECISION_LINE_MAX };
	return a;
}

void
spawn_ask_free(struct spawn_ask *a)
{
	if (a == NULL)
		return;
	if (a->c.tty_fd != -1)
		close(a->c.tty_fd);
	if (a->c.save_fd != -1)
		close(a->c.save_fd);
	free(a->q);
	free(a);
}

static struct ask_q *
find(struct spawn_ask *a, const char *id)
{
	size_t i;

	for (i = 0; i < a->nq; i++)
		if (strcmp(a->q[i].id, id) == 0)
			return &a->q[i];
	return NULL;
}

static void
drop(struct spawn_ask *a, struct ask_q *q)
{
	size_t i = (size_t)(q - a->q);

	memmove(q, q + 1, (a->nq - i - 1) * sizeof(*q));
	a->nq--;
}

/* ---- the terminal ------------------------------------------------------- */

/* Best effort: output held (^S) or gone loses the text, never blocks. */
static void
tty_say(struct spawn_ask *a, const char *s)
{
	size_t n = strlen(s), off = 0;
	ssize_t w;

	while (a->c.tty_fd != -1 && off < n) {
		w = write(a->c.tty_fd, s + off, n - off);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

static void
show_prompt(struct spawn_ask *a, const struct ask_q *q)
{
	char line[TARGET_MAX + 256];
	uint64_t now = gk_clock_ms();
	unsigned int left = 1;

	if (q->until > now + 1000)
		left = (unsigned int)((q->until - now + 999) / 1000);
	spawn_ask_prompt(a->c.cmdname, q->target, a->c.save_fd != -1, left,
	    line, sizeof(line));
	tty_say(a, line);
}

/* The first question nobody answered yet (and whose time is not up: its
 * end is on its way) goes on the terminal. What was typed before it was
 * shown is not its answer: dropped. */
static void
next_prompt(struct spawn_ask *a)
{
	uint64_t now = gk_clock_ms();
	size_t i;

	if (a->c.tty_fd == -1 || a->prompting || a->ending)
		return;
	for (i = 0; i < a->nq && (a->q[i].answered || a->q[i].until <= now);
	    i++)
		;
	if (i == a->nq)
		return;
	a->prompting = true;
	a->tries = 0;
	memcpy(a->shown, a->q[i].id, sizeof(a->shown));
	(void)tcflush(a->c.tty_fd, TCIFLUSH);
	spawn_lines_reset(&a->tty);
	show_prompt(a, &a->q[i]);
}

/* The question on the prompt ended without an answer typed: its line
 * ends with why. */
static void
prompt_end(struct spawn_ask *a, const char *target, const char *why)
{
	char line[TARGET_MAX + 256];

	snprintf(line, sizeof(line), "\ngk-run: %s: %s\n", target, why);
	tty_say(a, line);
	a->prompting = false;
	if (a->c.tty_fd != -1)
		(void)tcflush(a->c.tty_fd, TCIFLUSH);
}

/* The terminal cannot be read (hung up, or gk-run in the background). */
static void
tty_gone(struct spawn_ask *a, const char *why)
{
	fprintf(stderr, "gk-run: --ask: the terminal cannot be read (%s); "
	    "questions are left to time out (denied)\n", why);
	close(a->c.tty_fd);
	a->c.tty_fd = -1;
	a->prompting = false;
}

/* ---- decisions ---------------------------------------------------------- */

/* All of line to gatekeeperd: at once, or within SEND_WAIT_MS. */
static int
send_line(int fd, const char *line, size_t n)
{
	uint64_t deadline = gk_clock_ms() + SEND_WAIT_MS;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	size_t off = 0;
	ssize_t w;
	int ms;

	while (off < n) {
		w = send(fd, line + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w == -1 && errno != EINTR && errno != EAGAIN)
			return -1;
		if ((ms = gk_ms_left(deadline, SEND_WAIT_MS)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		(void)poll(&pfd, 1, ms);
	}
	return 0;
}

/* "save": host:port, one line, to --ask-save FILE (as an allow-file
 * takes it). */
static void
save(struct spawn_ask *a, const char *target)
{
	struct gk_pattern p;
	char line[TARGET_MAX + 1];
	int n;

	if (gk_pattern_parse((const uint8_t *)target, strlen(target), &p) !=
	    GK_PAT_OK) {
		fprintf(stderr, "gk-run: --ask-save %s: %s is not a pattern "
		    "an allow-file takes; not saved\n", a->c.save_path, target);
		return;
	}
	n = snprintf(line, sizeof(line), "%s\n", target);
	if (write(a->c.save_fd, line, (size_t)n) != n)
		fprintf(stderr, "gk-run: --ask-save %s: %s; %s not saved\n",
		    a->c.save_path, strerror(errno), target);
}

/* cage.decide for q; its reply comes through spawn_ask_reply(). */
static void
decide(struct spawn_ask *a, struct ask_q *q, enum spawn_decision d,
    const char *by)
{
	char line[256];
	int n;

	q->answered = true;
	n = snprintf(line, sizeof(line), "{\"op\":\"cage.decide\",\"id\":"
	    "\"%s\",\"ask\":\"%s\",\"decision\":\"%s\",\"by\":\"%s\"}\n",
	    a->cage, q->id, spawn_decision_name(d), by);
	if (a->ctl_fd == -1 || send_line(a->ctl_fd, line, (size_t)n) == -1) {
		fprintf(stderr, "gk-run: %s: the answer did not reach "
		    "gatekeeperd (%s); it denies when the question times "
		    "out\n", q->target, a->ctl_fd == -1 ? "not connected" :
		    strerror(errno));
		return;
	}
	a->replies++;
	if (d == SPAWN_DECISION_SAVE)
		save(a, q->target);
}

/* One typed line for the question on the prompt. */
static bool
tty_line(void *arg, const char *line, size_t len, bool toolong)
{
	struct spawn_ask *a = arg;
	enum spawn_decision d;
	struct ask_q *q;
	char msg[TARGET_MAX + 64];

	if ((q = find(a, a->shown)) == NULL) {
		a->prompting = false;
		next_prompt(a);
		return false;
	}
	d = toolong ? SPAWN_DECISION_NONE : spawn_answer_parse(line, len,
	    a->c.save_fd != -1);
	if (d == SPAWN_DECISION_NONE && ++a->tries < TTY_TRIES) {
		show_prompt(a, q);
		return false;
	}
	a->prompting = false;
	if (d == SPAWN_DECISION_NONE) {
		snprintf(msg, sizeof(msg), "gk-run: %s: no clear answer; "
		    "denied\n", q->target);
		tty_say(a, msg);
		d = SPAWN_DECISION_DENY;
	}
	decide(a, q, d, "tty");
	next_prompt(a);
	return false;	/* typed ahead: not the next question's answer */
}

static void
tty_read(struct spawn_ask *a, short revents)
{
	char buf[TTY_LINE_MAX];
	ssize_t n;

	n = read(a->c.tty_fd, buf, sizeof(buf));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n == 0 && (revents & (POLLHUP | POLLERR)) == 0) {
		tty_line(a, "", 0, false);	/* ^D: as an empty line */
		return;
	}
	if (n <= 0) {
		tty_gone(a, n == 0 ? "it hung up" : strerror(errno));
		return;
	}
	spawn_lines_feed(&a->tty, buf, (size_t)n, tty_line, a);
}

/* One supervisor's line: {"id":"17","decision":"run"}. */
static bool
dec_line(void *arg, const char *line, size_t len, bool toolong)
{
	struct spawn_ask *a = arg;
	char id[SPAWN_ASK_ID_MAX + 1];
	enum spawn_dline_status st;
	enum spawn_decision d = SPAWN_DECISION_NONE;
	struct ask_q *q;

	st = toolong ? SPAWN_DLINE_TOO_LONG : spawn_decision_parse(line, len,
	    id, sizeof(id), &d);
	if (st != SPAWN_DLINE_OK) {
		fprintf(stderr, "gk-run: --decisions-fd %d: a line ignored: "
		    "%s\n", a->c.decisions_fd, spawn_dline_strstatus(st));
		return true;
	}
	if ((q = find(a, id)) == NULL || q->answered) {
		fprintf(stderr, "gk-run: --decisions-fd %d: question %s %s; "
		    "ignored\n", a->c.decisions_fd, id, q == NULL ?
		    "is not open (never asked, or over)" : "was answered "
		    "already");
		return true;
	}
	if (d == SPAWN_DECISION_SAVE && a->c.save_fd == -1) {
		fprintf(stderr, "gk-run: --decisions-fd %d: \"save\" for %s "
		    "without --ask-save: sent as \"run\" (nothing is kept)\n",
		    a->c.decisions_fd, q->target);
		d = SPAWN_DECISION_RUN;
	}
	decide(a, q, d, "supervisor");
	return true;
}

static void
dec_read(struct spawn_ask *a)
{
	char buf[4096];
	ssize_t n;

	n = read(a->c.decisions_fd, buf, sizeof(buf));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (n == -1)
			fprintf(stderr, "gk-run: --decisions-fd %d: %s; no "
			    "more decisions are read\n", a->c.decisions_fd,
			    strerror(errno));
		a->dec_eof = true;	/* questions wait for their timeout */
		return;
	}
	spawn_lines_feed(&a->dec, buf, (size_t)n, dec_line, a);
}

/* ---- the interface ------------------------------------------------------ */

int
spawn_ask_fd(const struct spawn_ask *a)
{
	if (a->c.decisions_fd != -1)
		return a->dec_eof ? -1 : a->c.decisions_fd;
	return a->prompting ? a->c.tty_fd : -1;
}

void
spawn_ask_read(struct spawn_ask *a, short revents)
{
	if (a->c.decisions_fd != -1)
		dec_read(a);
	else if (a->prompting && a->c.tty_fd != -1)
		tty_read(a, revents);
}

void
spawn_ask_conn(struct spawn_ask *a, int ctl_fd, const char *cage)
{
	struct ask_q *q;

	if (a->prompting && (q = find(a, a->shown)) != NULL)
		prompt_end(a, q->target, "gatekeeperd went away with the "
		    "question");
	a->prompting = false;
	a->nq = 0;
	a->replies = 0;
	a->ctl_fd = ctl_fd;
	snprintf(a->cage, sizeof(a->cage), "%s", cage != NULL ? cage : "");
}

void
spawn_ask_question(struct spawn_ask *a, const struct spawn_event *ev)
{
	struct ask_q *q;
	size_t i, waiting = 0, cap;

	if (find(a, ev->id) != NULL)
		return;
	a->nasked++;
	if (a->ending || a->ctl_fd == -1)
		return;
	for (i = 0; i < a->nq; i++)
		waiting += !a->q[i].answered;
	if (a->nq >= ASK_OPEN_MAX || (a->c.tty_fd != -1 &&
	    waiting > TTY_WAIT_MAX)) {
		if (!a->full_said)
			fprintf(stderr, "gk-run: --ask: %zu questions wait "
			    "already; later ones are left to time out "
			    "(denied)\n", waiting);
		a->full_said = true;
		return;
	}
	if (a->nq == a->capq) {
		cap = a->capq == 0 ? 16 : a->capq * 2;
		if ((q = reallocarray(a->q, cap, sizeof(*q))) == NULL)
			return;
		a->q = q;
		a->capq = cap;
	}
	q = &a->q[a->nq++];
	memset(q, 0, sizeof(*q));
	memcpy(q->id, ev->id, sizeof(q->id));
	spawn_event_target(ev, q->target, sizeof(q->target));
	q->timeout = ev->timeout;
	q->until = gk_clock_ms() + (uint64_t)ev->timeout * 1000;
	next_prompt(a);
}

/* What a question's end says in the summary. */
static const char *
outcome(const char *decision)
{
	static const char *const words[][2] = {
		{ "once", "once" }, { "run", "this run" }, { "save", "saved" },
		{ "deny", "denied" }, { "timeout", "no answer: denied" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(decision, words[i][0]) == 0)
			return words[i][1];
	return decision;
}

void
spawn_ask_done(struct spawn_ask *a, const struct spawn_event *ev)
{
	char target[TARGET_MAX], why[128];
	struct ask_q *q;
	size_t n;

	spawn_event_target(ev, target, sizeof(target));
	if (a->nlisted < SUMMARY_HOSTS) {
		n = strlen(a->summary);
		snprintf(a->summary + n, sizeof(a->summary) - n, "%s%s (%s)",
		    n > 0 ? ", " : "", target, outcome(ev->decision));
		a->nlisted++;
	}
	if ((q = find(a, ev->id)) == NULL)
		return;
	if (a->prompting && strcmp(a->shown, q->id) == 0) {
		if (strcmp(ev->decision, "timeout") == 0)
			snprintf(why, sizeof(why), "no answer within %u s, "
			    "denied", q->timeout);
		else
			snprintf(why, sizeof(why), "answered elsewhere: %s "
			    "(by %s)", outcome(ev->decision), ev->by[0] !=
			    '\0' ? ev->by : "?");
		prompt_end(a, q->target, why);
	}
	drop(a, q);
	next_prompt(a);
}

bool
spawn_ask_reply(struct spawn_ask *a, const struct spawn_event *ev)
{
	if (a->replies == 0)
		return false;
	a->replies--;
	if (!ev->ok)
		fprintf(stderr, "gk-run: gatekeeperd: %s\n", ev->why[0] !=
		    '\0' ? ev->why : "an answer was refused (no reason given)");
	return true;
}

void
spawn_ask_aside(struct spawn_ask *a, const char *line)
{
	struct ask_q *q;

	if (a == NULL || !a->prompting || (q = find(a, a->shown)) == NULL) {
		fprintf(stderr, "%s\n", line);
		return;
	}
	tty_say(a, "\n");
	fprintf(stderr, "%s\n", line);
	show_prompt(a, q);
}

void
spawn_ask_event(struct spawn_ask *a, const struct spawn_event *ev)
{
	char line[1024];

	spawn_event_text(ev, line, sizeof(line));
	spawn_ask_aside(a, line);
}

void
spawn_ask_end(struct spawn_ask *a)
{
	struct ask_q *q;
	char why[128];

	if (a->prompting && (q = find(a, a->shown)) != NULL) {
		snprintf(why, sizeof(why), "not answered: %s ended",
		    a->c.cmdname);
		prompt_end(a, q->target, why);
	}
	a->prompting = false;
	a->ending = true;
}

void
spawn_ask_summary(const struct spawn_ask *a)
{
	char list[SUMMARY_MAX];
	size_t i, n, listed = a->nlisted;

	if (a->nasked == 0)
		return;
	/* the ended questions, then those still open at the end */
	snprintf(list, sizeof(list), "%s", a->summary);
	for (i = 0; i < a->nq && listed < SUMMARY_HOSTS; i++, listed++) {
		n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%s (still open)",
		    n > 0 ? ", " : "", a->q[i].target);
	}
	if (list[0] == '\0')
		fprintf(stderr, "gk-run: %zu asked\n", a->nasked);
	else
		fprintf(stderr, "gk-run: %zu asked: %s%s\n", a->nasked, list,
		    a->nasked > listed ? ", ..." : "");
}
