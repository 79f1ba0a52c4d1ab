/*
 * gk-run --ask at run time (spawn_ask.c), against a socketpair standing
 * for gatekeeperd's control connection, a pipe for the supervisor's
 * --decisions-fd, a pseudo-terminal for the person, and a file for
 * --ask-save: what goes out as cage.decide, what is saved, what is said
 * on the terminal and on stderr.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define CAGE	"k3j9x0qa"

struct fixture {
	int		 ctl[2];	/* [0] gk-run's end */
	int		 dec[2];	/* --decisions-fd: [0] read */
	int		 master;	/* the person's side of the terminal */
	char		 save[64];	/* --ask-save FILE */
	struct spawn_ask_conf conf;
	struct spawn_ask *a;
	int		 saved_err, err;
};

/* ---- helpers ------------------------------------------------------------ */

static struct spawn_event
event(const char *line)
{
	struct spawn_event ev;

	assert_int_not_equal(spawn_event_parse(line, strlen(line), &ev),
	    SPAWN_EVENT_NONE);
	return ev;
}

static void
ask(struct fixture *f, const char *id, const char *host, unsigned int port,
    unsigned int timeout)
{
	char line[512];
	struct spawn_event ev;

	snprintf(line, sizeof(line), "{\"event\":\"ask\",\"cage\":\"" CAGE
	    "\",\"time\":\"T\",\"id\":\"%s\",\"host\":\"%s\",\"port\":%u,"
	    "\"kind\":\"http\",\"timeout\":%u}", id, host, port, timeout);
	ev = event(line);
	spawn_ask_question(f->a, &ev);
}

static void
done(struct fixture *f, const char *id, const char *host, unsigned int port,
    const char *decision, const char *by)
{
	char line[512];
	struct spawn_event ev;

	snprintf(line, sizeof(line), "{\"event\":\"ask.done\",\"cage\":\""
	    CAGE "\",\"time\":\"T\",\"id\":\"%s\",\"host\":\"%s\",\"port\":"
	    "%u,\"decision\":\"%s\",\"by\":\"%s\"}", id, host, port, decision,
	    by);
	ev = event(line);
	spawn_ask_done(f->a, &ev);
}

static bool
reply(struct fixture *f, const char *line)
{
	struct spawn_event ev = event(line);

	return spawn_ask_reply(f->a, &ev);
}

/* What reached "gatekeeperd" so far ("" if nothing). */
static const char *
sent(struct fixture *f)
{
	static char buf[4096];
	ssize_t n;

	n = recv(f->ctl[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* What the terminal showed, up to `want` (or 2 s): CRs dropped. */
static const char *
shown(struct fixture *f, const char *want)
{
	static char buf[8192];
	struct pollfd pfd = { .fd = f->master, .events = POLLIN };
	size_t len = 0, i, j;
	ssize_t n;

	buf[0] = '\0';
	while ((want == NULL || strstr(buf, want) == NULL) &&
	    poll(&pfd, 1, want != NULL ? 2000 : 100) == 1 &&
	    (n = read(f->master, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
	}
	for (i = j = 0; buf[i] != '\0'; i++)
		if (buf[i] != '\r')
			buf[j++] = buf[i];
	buf[j] = '\0';
	return buf;
}

/* The person types a line; gk-run reads it when the terminal says so. */
static void
type(struct fixture *f, const char *s)
{
	struct pollfd pfd = { .fd = f->conf.tty_fd, .events = POLLIN };

	assert_int_equal(write(f->master, s, strlen(s)), (ssize_t)strlen(s));
	assert_int_equal(spawn_ask_fd(f->a), f->conf.tty_fd);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	spawn_ask_read(f->a, pfd.revents);
}

/* The supervisor writes; gk-run reads once, as after one poll. */
static void
decide(struct fixture *f, const char *s)
{
	assert_int_equal(write(f->dec[1], s, strlen(s)), (ssize_t)strlen(s));
	assert_int_equal(spawn_ask_fd(f->a), f->dec[0]);
	spawn_ask_read(f->a, POLLIN);
}

static void
stderr_catch(struct fixture *f)
{
	fflush(stderr);
	f->saved_err = dup(2);
	assert_true((f->err = memfd_create("stderr", 0)) >= 0);
	dup2(f->err, 2);
}

/* What went to stderr since stderr_catch() (or the last call). */
static const char *
said(struct fixture *f)
{
	static char buf[8192];
	ssize_t n;

	fflush(stderr);
	n = pread(f->err, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (ftruncate(f->err, 0) != 0 || lseek(f->err, 0, SEEK_SET) != 0)
		fail();
	return buf;
}

static size_t
count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

static char *
slurp(const char *path)
{
	static char buf[1024];
	ssize_t n;
	int fd;

	assert_true((fd = open(path, O_RDONLY)) >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* A supervisor (tty false) or a person (tty true); with_save: --ask-save.
 * stderr goes to a memfd until teardown() (which shows what is left of
 * it: a failed assertion's message). */
static struct fixture *
setup(bool tty, bool with_save)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fd;

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    f->ctl), 0);
	f->dec[0] = f->dec[1] = f->master = -1;
	f->conf = (struct spawn_ask_conf){ .cmdname = "curl", .tty_fd = -1,
	    .decisions_fd = -1, .save_fd = -1 };
	if (tty) {
		assert_true((f->master = posix_openpt(O_RDWR | O_NOCTTY)) >=
		    0);
		assert_int_equal(grantpt(f->master), 0);
		assert_int_equal(unlockpt(f->master), 0);
		f->conf.tty_fd = open(ptsname(f->master), O_RDWR | O_NOCTTY |
		    O_CLOEXEC | O_NONBLOCK);
		assert_true(f->conf.tty_fd >= 0);
	} else {
		assert_int_equal(pipe2(f->dec, O_CLOEXEC), 0);
		f->conf.decisions_fd = f->dec[0];
	}
	if (with_save) {
		snprintf(f->save, sizeof(f->save), "/tmp/gk-ask-save.XXXXXX");
		assert_true((fd = mkstemp(f->save)) >= 0);
		close(fd);
		f->conf.save_fd = open(f->save, O_WRONLY | O_APPEND |
		    O_CLOEXEC);
		f->conf.save_path = f->save;
	}
	assert_non_null(f->a = spawn_ask_new(&f->conf));
	spawn_ask_conn(f->a, f->ctl[0], CAGE);
	stderr_catch(f);
	return f;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char buf[4096];
	ssize_t n;

	fflush(stderr);
	dup2(f->saved_err, 2);
	close(f->saved_err);
	while ((n = read(f->err, buf, sizeof(buf))) > 0)
		(void)!write(2, buf, (size_t)n);
	close(f->err);
	spawn_ask_free(f->a);	/* closes the terminal and the file */
	close(f->ctl[0]);
	close(f->ctl[1]);
	if (f->dec[0] != -1)
		close(f->dec[0]);
	if (f->dec[1] != -1)
		close(f->dec[1]);
	if (f->master != -1)
		close(f->master);
	if (f->save[0] != '\0')
		unlink(f->save);
	free(f);
	return 0;
}

#define SETUP(fn, tty, with_save)					\
static int								\
fn(void **state)							\
{									\
	*state = setup(tty, with_save);					\
	return 0;							\
}
SETUP(setup_supervisor, false, true)
SETUP(setup_supervisor_nosave, false, false)
SETUP(setup_tty, true, false)
SETUP(setup_tty_save, true, true)

/* ---- a supervisor ------------------------------------------------------- */

static void
test_supervisor(void **state)
{
	struct fixture *f = *state;
	const char *s;

	ask(f, "17", "example.org", 443, 60);
	ask(f, "18", "evil.example", 443, 60);
	/* malformed, unknown, never asked: one warning each, nothing sent */
	decide(f, "not json\n{\"id\":\"17\",\"decision\":\"maybe\"}\n"
	    "{\"id\":\"99\",\"decision\":\"run\"}\n{\"id\":17,\"decision\":"
	    "\"run\"}\n");
	assert_string_equal(sent(f), "");
	s = said(f);
	assert_int_equal(count(s, "\n"), 4);
	assert_int_equal(count(s, "gk-run: --decisions-fd "), 4);
	assert_non_null(strstr(s, "a line ignored: not a JSON object\n"));
	assert_non_null(strstr(s, "a line ignored: \"decision\" is not once, "
	    "run, save or deny\n"));
	assert_non_null(strstr(s, "question 99 is not open (never asked, or "
	    "over); ignored\n"));
	/* a line in two writes; save: sent, and kept in the file */
	decide(f, "{\"id\":\"17\",");
	assert_string_equal(sent(f), "");
	decide(f, "\"decision\":\"save\"}\n");
	assert_string_equal(sent(f), "{\"op\":\"cage.decide\",\"id\":\"" CAGE
	    "\",\"ask\":\"17\",\"decision\":\"save\",\"by\":\"supervisor\"}\n");
	assert_string_equal(slurp(f->save), "example.org:443\n");
	/* answered already */
	decide(f, "{\"id\":\"17\",\"decision\":\"deny\"}\n");
	assert_string_equal(sent(f), "");
	assert_non_null(strstr(said(f), "question 17 was answered already"));
	/* gatekeeperd's replies: the decision's, then someone else's */
	assert_true(reply(f, "{\"ok\":true}"));
	assert_false(reply(f, "{\"ok\":true}"));
	assert_string_equal(said(f), "");
	/* a refused decision is said */
	decide(f, "{\"id\":\"18\",\"decision\":\"deny\"}\n");
	assert_non_null(strstr(sent(f), "\"ask\":\"18\",\"decision\":"
	    "\"deny\""));
	assert_true(reply(f, "{\"ok\":false,\"error\":\"question 18 is not "
	    "open\"}"));
	assert_string_equal(said(f), "gk-run: gatekeeperd: question 18 is not "
	    "open\n");
	/* over: its id is not open any more */
	done(f, "17", "example.org", 443, "save", "supervisor");
	done(f, "18", "evil.example", 443, "deny", "supervisor");
	decide(f, "{\"id\":\"17\",\"decision\":\"once\"}\n");
	assert_string_equal(sent(f), "");
	assert_non_null(strstr(said(f), "question 17 is not open"));
	spawn_ask_summary(f->a);
	assert_string_equal(said(f), "gk-run: 2 asked: example.org:443 "
	    "(saved), evil.example:443 (denied)\n");
}

static void
test_supervisor_limits(void **state)
{
	struct fixture *f = *state;
	char big[5000], want[128];

	ask(f, "5", "example.org", 443, 60);
	/* save without --ask-save: run, with a warning */
	decide(f, "{\"id\":\"5\",\"decision\":\"save\"}\n");
	assert_string_equal(sent(f), "{\"op\":\"cage.decide\",\"id\":\"" CAGE
	    "\",\"ask\":\"5\",\"decision\":\"run\",\"by\":\"supervisor\"}\n");
	assert_non_null(strstr(said(f), "\"save\" for example.org:443 without "
	    "--ask-save: sent as \"run\""));
	/* a line over 4 KiB, in two reads: one warning, then the next */
	ask(f, "6", "b.example", 80, 60);
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	assert_int_equal(write(f->dec[1], big, sizeof(big)),
	    (ssize_t)sizeof(big));
	spawn_ask_read(f->a, POLLIN);
	spawn_ask_read(f->a, POLLIN);
	snprintf(want, sizeof(want), "gk-run: --decisions-fd %d: a line "
	    "ignored: over 4096 bytes\n", f->dec[0]);
	assert_string_equal(said(f), want);
	decide(f, "{\"id\":\"6\",\"decision\":\"once\"}\n");
	assert_non_null(strstr(sent(f), "\"ask\":\"6\",\"decision\":\"once\""));
	/* EOF: not read any more */
	close(f->dec[1]);
	f->dec[1] = -1;
	spawn_ask_read(f->a, POLLIN | POLLHUP);
	assert_int_equal(spawn_ask_fd(f->a), -1);
	/* the connection went: its questions with it */
	ask(f, "7", "c.example", 80, 60);
	spawn_ask_conn(f->a, -1, NULL);
	ask(f, "8", "d.example", 80, 60);
	spawn_ask_summary(f->a);
	assert_string_equal(said(f), "gk-run: 4 asked\n");
}

/* ---- a person at the terminal ------------------------------------------ */

#define PROMPT(target, s)						\
	"gk-run: curl wants " target " - [y] once, [a] this run, [N] deny " \
	"(" s " s) "

static void
test_tty(void **state)
{
	struct fixture *f = *state;
	const char *s;

	assert_int_equal(spawn_ask_fd(f->a), -1);	/* nothing asked */
	ask(f, "17", "example.org", 443, 60);
	ask(f, "18", "evil.example", 443, 30);
	/* one question at a time */
	s = shown(f, "(60 s) ");
	assert_string_equal(s, PROMPT("example.org:443", "60"));
	assert_string_equal(shown(f, NULL), "");
	/* unclear: asked again */
	type(f, "maybe\n");
	assert_string_equal(sent(f), "");
	assert_string_equal(shown(f, "(60 s) "), "maybe\n"
	    PROMPT("example.org:443", "60"));
	/* this run; then the next question */
	type(f, "a\n");
	assert_string_equal(sent(f), "{\"op\":\"cage.decide\",\"id\":\"" CAGE
	    "\",\"ask\":\"17\",\"decision\":\"run\",\"by\":\"tty\"}\n");
	assert_string_equal(shown(f, "(30 s) "), "a\n"
	    PROMPT("evil.example:443", "30"));
	/* its time is up before anyone answered */
	done(f, "18", "evil.example", 443, "timeout", "gatekeeperd");
	assert_string_equal(shown(f, "denied\n"), "\ngk-run: "
	    "evil.example:443: no answer within 30 s, denied\n");
	assert_int_equal(spawn_ask_fd(f->a), -1);
	/* s is not offered without --ask-save: three unclear, denied */
	ask(f, "19", "files.example", 8443, 60);
	shown(f, "(60 s) ");
	type(f, "s\n");
	shown(f, "(60 s) ");
	type(f, "s\n");
	shown(f, "(60 s) ");
	assert_string_equal(sent(f), "");
	type(f, "y y\n");
	assert_non_null(strstr(shown(f, "denied\n"), "gk-run: "
	    "files.example:8443: no clear answer; denied\n"));
	assert_non_null(strstr(sent(f), "\"ask\":\"19\",\"decision\":"
	    "\"deny\",\"by\":\"tty\""));
	/* decided elsewhere while on the prompt; a denial line meanwhile */
	ask(f, "20", "g.example", 443, 60);
	shown(f, "(60 s) ");
	spawn_ask_aside(f->a, "gk-run: denied h.example:443 (...)");
	assert_string_equal(said(f), "gk-run: denied h.example:443 (...)\n");
	assert_string_equal(shown(f, "(60 s) "), "\n"
	    PROMPT("g.example:443", "60"));
	done(f, "20", "g.example", 443, "once", "supervisor");
	assert_string_equal(shown(f, "supervisor)\n"), "\ngk-run: "
	    "g.example:443: "
	    "answered elsewhere: once (by supervisor)\n");
	/* the command ends with a question on the prompt */
	ask(f, "21", "i.example", 443, 60);
	shown(f, "(60 s) ");
	spawn_ask_end(f->a);
	assert_string_equal(shown(f, "ended\n"), "\ngk-run: i.example:443: "
	    "not answered: curl ended\n");
	assert_int_equal(spawn_ask_fd(f->a), -1);
	ask(f, "22", "j.example", 443, 60);	/* no prompt any more */
	assert_string_equal(shown(f, NULL), "");
	spawn_ask_summary(f->a);
	assert_string_equal(said(f), "gk-run: 6 asked: evil.example:443 "
	    "(no answer: denied), g.example:443 (once), example.org:443 (still "
	    "open), files.example:8443 (still open), i.example:443 (still "
	    "open), ...\n");
}

static void
test_tty_save(void **state)
{
	struct fixture *f = *state;

	ask(f, "1", "example.org", 443, 60);
	assert_non_null(strstr(shown(f, "(60 s) "), "[a] this run, [s] save, "
	    "[N] deny (60 s) "));
	type(f, " S \n");
	assert_string_equal(sent(f), "{\"op\":\"cage.decide\",\"id\":\"" CAGE
	    "\",\"ask\":\"1\",\"decision\":\"save\",\"by\":\"tty\"}\n");
	assert_string_equal(slurp(f->save), "example.org:443\n");
	/* an answer typed after its question ended is nobody's */
	ask(f, "2", "b.example", 443, 60);
	shown(f, "(60 s) ");
	done(f, "2", "b.example", 443, "deny", "supervisor");
	assert_non_null(strstr(shown(f, "supervisor)\n"), "answered "
	    "elsewhere: denied (by supervisor)\n"));
	assert_int_equal(spawn_ask_fd(f->a), -1);
	/* an empty line denies; nothing saved */
	ask(f, "3", "c.example", 443, 60);
	shown(f, "(60 s) ");
	type(f, "\n");
	assert_non_null(strstr(sent(f), "\"ask\":\"3\",\"decision\":\"deny\""));
	assert_string_equal(slurp(f->save), "example.org:443\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_supervisor,
		    setup_supervisor, teardown),
		cmocka_unit_test_setup_teardown(test_supervisor_limits,
		    setup_supervisor_nosave, teardown),
		cmocka_unit_test_setup_teardown(test_tty, setup_tty, teardown),
		cmocka_unit_test_setup_teardown(test_tty_save, setup_tty_save,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
