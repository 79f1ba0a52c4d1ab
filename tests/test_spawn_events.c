/*
 * Unit tests for gk-run's reading of gatekeeperd's deny events: the parse,
 * the line said to the user (with the --allow to add), the JSON for
 * --events-fd. --ask: questions and their ends, replies, a supervisor's
 * decision lines, a person's answers, the prompt; lines from a stream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"

static enum spawn_event_type
parse(const char *s, struct spawn_event *ev)
{
	return spawn_event_parse(s, strlen(s), ev);
}

static const char *
text(const char *s)
{
	static char buf[1024];
	struct spawn_event ev;

	assert_int_equal(parse(s, &ev), SPAWN_EVENT_DENY);
	spawn_event_text(&ev, buf, sizeof(buf));
	return buf;
}

static void
test_lines(void **state)
{
	(void)state;
	assert_string_equal(text("{\"event\":\"deny\",\"cage\":\"c\","
	    "\"time\":\"t\",\"kind\":\"http\",\"host\":\"registry.yarnpkg.com\","
	    "\"port\":443,\"reason\":\"not_allowlisted\"}"),
	    "gk-run: denied registry.yarnpkg.com:443 (not on the allowlist); "
	    "to allow it: --allow registry.yarnpkg.com");
	assert_string_equal(text("{\"event\":\"deny\",\"kind\":\"dns\","
	    "\"host\":\"evil.example\",\"port\":0,\"reason\":"
	    "\"not_allowlisted\"}"),
	    "gk-run: denied evil.example (a DNS lookup: not on the "
	    "allowlist); to allow it: --allow evil.example");
	assert_string_equal(text("{\"event\":\"deny\",\"kind\":\"transparent\","
	    "\"host\":\"169.254.169.254\",\"port\":80,\"reason\":"
	    "\"special_range\",\"why\":\"169.254.169.254: cloud metadata "
	    "address, never allowed\"}"),
	    "gk-run: denied 169.254.169.254:80 (169.254.169.254: cloud "
	    "metadata address, never allowed)");
	assert_string_equal(text("{\"event\":\"deny\",\"kind\":\"socks5\","
	    "\"host\":\"2001:db8::7\",\"port\":22,\"reason\":"
	    "\"not_allowlisted\"}"),
	    "gk-run: denied [2001:db8::7]:22 (not on the allowlist); to allow "
	    "it: --allow 2001:db8::7/128");
	assert_string_equal(text("{\"event\":\"deny\",\"kind\":\"transparent\","
	    "\"host\":\"203.0.113.5\",\"port\":443,\"reason\":"
	    "\"ip_not_pinned\"}"),
	    "gk-run: denied 203.0.113.5:443 (an address no allowed name "
	    "resolved to); to allow it: --allow 203.0.113.5/32, or allow the "
	    "name it belongs to");
	assert_string_equal(text("{\"event\":\"deny\",\"kind\":\"socks5\","
	    "\"host\":\"a.example\",\"port\":443,\"reason\":\"sni_mismatch\","
	    "\"why\":\"TLS server name b.example is not a.example\"}"),
	    "gk-run: denied a.example:443 (TLS server name b.example is not "
	    "a.example)");
}

/* An upstream failure: one line naming the host, what failed and why;
 * a line missing a part is not one. */
static void
test_unreachable(void **state)
{
	static const char *bad[] = {
		"{\"event\":\"unreachable\",\"host\":\"pypi.org\","
		    "\"port\":443}",
		"{\"event\":\"unreachable\",\"host\":\"pypi.org\","
		    "\"port\":0,\"failure\":\"refused\"}",
		"{\"event\":\"unreachable\",\"port\":443,"
		    "\"failure\":\"refused\"}",
	};
	struct spawn_event ev;
	char buf[1024];
	size_t i;

	(void)state;
	assert_int_equal(parse("{\"event\":\"unreachable\",\"cage\":\"c\","
	    "\"time\":\"t\",\"kind\":\"http\",\"host\":\"pypi.org\","
	    "\"port\":443,\"failure\":\"unreachable\",\"why\":\"it has no "
	    "address (the upstream DNS said NXDOMAIN)\"}", &ev),
	    SPAWN_EVENT_UNREACHABLE);
	assert_string_equal(ev.failure, "unreachable");
	spawn_event_text(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "gk-run: pypi.org:443 could not be reached: "
	    "it has no address (the upstream DNS said NXDOMAIN)");
	assert_int_equal(parse("{\"event\":\"unreachable\",\"kind\":"
	    "\"socks5\",\"host\":\"2001:db8::7\",\"port\":22,\"failure\":"
	    "\"refused\"}", &ev), SPAWN_EVENT_UNREACHABLE);
	spawn_event_text(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "gk-run: [2001:db8::7]:22 could not be "
	    "reached: refused");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &ev), SPAWN_EVENT_NONE);
}

static void
test_not_events(void **state)
{
	static const char *bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"ok\":1}",
		"{\"event\":\"x\",\"ok\":true}",
		"{\"event\":\"deny\"}",
		"{\"event\":\"deny\",\"kind\":\"dns\",\"host\":\"a\","
		    "\"reason\":\"r\"}",			/* no port */
		"{\"event\":\"deny\",\"kind\":\"dns\",\"host\":\"a\","
		    "\"port\":65536,\"reason\":\"r\"}",
		"{\"event\":\"deny\",\"kind\":\"dns\",\"host\":\"a\","
		    "\"port\":\"53\",\"reason\":\"r\"}",
		"{\"event\":\"deny\",\"kind\":\"dns\",\"host\":\"\","
		    "\"port\":1,\"reason\":\"r\"}",
		"{\"event\":\"deny\",\"kind\":\"dns\",\"host\":\"a\","
		    "\"port\":1,\"reason\":\"r\"} trailing",
	};
	struct spawn_event ev;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &ev), SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"deny.more\",\"cage\":\"c\"}", &ev),
	    SPAWN_EVENT_MORE);
	assert_int_equal(parse("{\"event\":\"learn.more\"}", &ev),
	    SPAWN_EVENT_LEARN_MORE);
	assert_int_equal(parse("{\"event\":\"learn\",\"host\":\"x.example\","
	    "\"port\":443}", &ev), SPAWN_EVENT_LEARN);
	assert_string_equal(ev.host, "x.example");
	assert_int_equal(ev.port, 443);
	assert_int_equal(parse("{\"event\":\"learn\",\"host\":\"\","
	    "\"port\":443}", &ev), SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"learn\",\"host\":\"a\","
	    "\"port\":-1}", &ev), SPAWN_EVENT_NONE);
	/* a learning cage's request to an inspected host */
	assert_int_equal(parse("{\"event\":\"learn.request\",\"host\":"
	    "\"github.com\",\"port\":443,\"method\":\"GET\",\"path\":"
	    "\"/acme/**\"}", &ev), SPAWN_EVENT_LEARN);
	assert_string_equal(ev.host, "github.com");
	assert_string_equal(ev.method, "GET");
	assert_string_equal(ev.path, "/acme/**");
	assert_int_equal(parse("{\"event\":\"learn.request\",\"host\":"
	    "\"a\",\"port\":443,\"method\":\"GET\",\"path\":\"x\"}",
	    &ev), SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"learn.request\",\"host\":"
	    "\"a\",\"port\":443,\"path\":\"/\"}", &ev),
	    SPAWN_EVENT_NONE);
	/* the cage's own limits */
	assert_int_equal(parse("{\"event\":\"limit\",\"limit\":\"memory\","
	    "\"value\":67108864,\"count\":2}", &ev), SPAWN_EVENT_LIMIT);
	assert_string_equal(ev.kind, "memory");
	assert_int_equal(ev.value, 67108864);
	assert_int_equal(ev.count, 2);
	assert_int_equal(parse("{\"event\":\"limit\",\"limit\":\"pids\","
	    "\"value\":32,\"count\":1}", &ev), SPAWN_EVENT_LIMIT);
	assert_int_equal(parse("{\"event\":\"limit\",\"limit\":\"disk\","
	    "\"value\":32,\"count\":1}", &ev), SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"limit\",\"limit\":\"pids\","
	    "\"value\":32,\"count\":0}", &ev), SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"limit\",\"limit\":\"pids\","
	    "\"value\":\"32\",\"count\":1}", &ev), SPAWN_EVENT_NONE);
	/* an operator ended the cage */
	assert_int_equal(parse("{\"event\":\"cage.end\",\"cage\":\"k3j9x0qa\","
	    "\"reason\":\"destroyed by uid 0\"}", &ev), SPAWN_EVENT_END);
	assert_string_equal(ev.why, "destroyed by uid 0");
	assert_int_equal(parse("{\"event\":\"cage.end\",\"reason\":7}", &ev),
	    SPAWN_EVENT_NONE);
	assert_int_equal(parse("{\"event\":\"cage.end\"}", &ev),
	    SPAWN_EVENT_NONE);
}

static void
test_printable_and_json(void **state)
{
	struct spawn_event ev;
	char *json;

	(void)state;
	assert_int_equal(parse("{\"event\":\"deny\",\"kind\":\"http\","
	    "\"host\":\"a\\u001b[31mb\",\"port\":80,\"reason\":"
	    "\"not_allowlisted\",\"time\":\"T\"}", &ev), SPAWN_EVENT_DENY);
	assert_null(strchr(ev.host, 0x1b));
	assert_non_null(json = spawn_event_json(&ev));
	assert_non_null(strstr(json, "\"port\":80"));
	assert_non_null(strstr(json, "\"reason\":\"not_allowlisted\""));
	assert_non_null(strstr(json, "\"kind\":\"http\""));
	assert_non_null(strstr(json, "\"time\":\"T\""));
	assert_null(strstr(json, "\"why\""));
	assert_int_equal(json[strlen(json) - 1], '\n');
	free(json);
}

/* ---- --ask -------------------------------------------------------------- */

#define ASK_LINE "{\"event\":\"ask\",\"cage\":\"k3j9x0qa\"," \
	"\"time\":\"2026-11-25T10:00:00.123Z\",\"id\":\"17\"," \
	"\"host\":\"example.org\",\"port\":443,\"kind\":\"http\"," \
	"\"timeout\":60}"
#define DONE_LINE "{\"event\":\"ask.done\",\"cage\":\"k3j9x0qa\"," \
	"\"time\":\"T2\",\"id\":\"17\",\"host\":\"example.org\"," \
	"\"port\":443,\"decision\":\"timeout\",\"by\":\"gatekeeperd\"}"

static void
test_ask_events(void **state)
{
	struct spawn_event ev;
	char *json;

	(void)state;
	assert_int_equal(parse(ASK_LINE, &ev), SPAWN_EVENT_ASK);
	assert_string_equal(ev.id, "17");
	assert_string_equal(ev.host, "example.org");
	assert_int_equal(ev.port, 443);
	assert_string_equal(ev.kind, "http");
	assert_int_equal(ev.timeout, 60);
	assert_string_equal(ev.time, "2026-11-25T10:00:00.123Z");
	assert_non_null(json = spawn_ask_json(SPAWN_EVENT_ASK, &ev));
	assert_string_equal(json, "{\"event\":\"ask\",\"id\":\"17\","
	    "\"host\":\"example.org\",\"port\":443,\"kind\":\"http\","
	    "\"timeout\":60,\"time\":\"2026-11-25T10:00:00.123Z\"}\n");
	free(json);
	assert_null(spawn_ask_json(SPAWN_EVENT_DENY, &ev));

	assert_int_equal(parse(DONE_LINE, &ev), SPAWN_EVENT_ASK_DONE);
	assert_string_equal(ev.id, "17");
	assert_string_equal(ev.decision, "timeout");
	assert_string_equal(ev.by, "gatekeeperd");
	assert_int_equal(ev.port, 443);
	assert_non_null(json = spawn_ask_json(SPAWN_EVENT_ASK_DONE, &ev));
	assert_string_equal(json, "{\"event\":\"ask.done\",\"id\":\"17\","
	    "\"host\":\"example.org\",\"port\":443,\"decision\":"
	    "\"timeout\",\"by\":\"gatekeeperd\",\"time\":\"T2\"}\n");
	free(json);
	/* the longest id, and one digit more */
	assert_int_equal(parse("{\"event\":\"ask\",\"id\":"
	    "\"12345678901234567890\",\"host\":\"a\",\"port\":1,"
	    "\"kind\":\"socks5\",\"timeout\":3600}", &ev), SPAWN_EVENT_ASK);
	assert_string_equal(ev.id, "12345678901234567890");
	assert_int_equal(ev.timeout, 3600);
}

static void
test_ask_not_events(void **state)
{
	static const char *bad[] = {
		/* ask: the id, host, port, kind and timeout are needed */
		"{\"event\":\"ask\",\"host\":\"a\",\"port\":1,"
		    "\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":17,\"host\":\"a\",\"port\":1,"
		    "\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"\",\"host\":\"a\","
		    "\"port\":1,\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1a\",\"host\":\"a\","
		    "\"port\":1,\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"123456789012345678901\","
		    "\"host\":\"a\",\"port\":1,\"kind\":\"http\","
		    "\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"\","
		    "\"port\":1,\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":0,\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":65536,\"kind\":\"http\",\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"timeout\":60}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"kind\":\"http\"}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"kind\":\"http\",\"timeout\":0}",
		"{\"event\":\"ask\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"kind\":\"http\",\"timeout\":3601}",
		/* ask.done: the decision too */
		"{\"event\":\"ask.done\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"by\":\"tty\"}",
		"{\"event\":\"ask.done\",\"id\":\"x\",\"host\":\"a\","
		    "\"port\":1,\"decision\":\"run\"}",
		"{\"event\":\"ask.more\",\"id\":\"1\",\"host\":\"a\","
		    "\"port\":1,\"decision\":\"run\"}",
	};
	struct spawn_event ev;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &ev) != SPAWN_EVENT_NONE)
			fail_msg("case %zu: %s", i, bad[i]);
}

static void
test_replies(void **state)
{
	struct spawn_event ev;

	(void)state;
	assert_int_equal(parse("{\"ok\":true}", &ev), SPAWN_EVENT_REPLY);
	assert_true(ev.ok);
	assert_string_equal(ev.why, "");
	assert_int_equal(parse("{\"ok\":true,\"cage\":{\"id\":\"x\"}}",
	    &ev), SPAWN_EVENT_REPLY);
	assert_true(ev.ok);
	assert_int_equal(parse("{\"ok\":false,\"error\":\"question 17 is "
	    "not open\\u0007\"}", &ev), SPAWN_EVENT_REPLY);
	assert_false(ev.ok);
	assert_string_equal(ev.why, "question 17 is not open?");
}

struct dcase {
	const char		*line;
	enum spawn_dline_status	 st;
	const char		*id;
	enum spawn_decision	 d;
};

static const struct dcase dcases[] = {
	{ "{\"id\":\"17\",\"decision\":\"once\"}", SPAWN_DLINE_OK, "17",
	    SPAWN_DECISION_ONCE },
	{ "{\"decision\":\"run\",\"id\":\"4\"}", SPAWN_DLINE_OK, "4",
	    SPAWN_DECISION_RUN },
	{ " {\"id\":\"4\",\"decision\":\"save\"} \r", SPAWN_DLINE_OK,
	    "4", SPAWN_DECISION_SAVE },
	{ "{\"id\":\"12345678901234567890\",\"decision\":\"deny\","
	    "\"note\":1}", SPAWN_DLINE_OK, "12345678901234567890",
	    SPAWN_DECISION_DENY },
	{ "", SPAWN_DLINE_INVALID, "", SPAWN_DECISION_NONE },
	{ "once", SPAWN_DLINE_INVALID, "", SPAWN_DECISION_NONE },
	{ "[\"17\",\"once\"]", SPAWN_DLINE_INVALID, "", SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\",\"decision\":\"once\"", SPAWN_DLINE_INVALID, "",
	    SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\",\"decision\":\"once\"}{}", SPAWN_DLINE_INVALID,
	    "", SPAWN_DECISION_NONE },
	{ "{\"id\":17,\"decision\":\"once\"}", SPAWN_DLINE_BAD_ID, "",
	    SPAWN_DECISION_NONE },
	{ "{\"decision\":\"once\"}", SPAWN_DLINE_BAD_ID, "",
	    SPAWN_DECISION_NONE },
	{ "{\"id\":\"-1\",\"decision\":\"once\"}", SPAWN_DLINE_BAD_ID, "",
	    SPAWN_DECISION_NONE },
	{ "{\"id\":\"123456789012345678901\",\"decision\":\"once\"}",
	    SPAWN_DLINE_BAD_ID, "", SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\",\"decision\":\"timeout\"}",
	    SPAWN_DLINE_BAD_DECISION, "", SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\",\"decision\":\"ONCE\"}",
	    SPAWN_DLINE_BAD_DECISION, "", SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\",\"decision\":\"\"}", SPAWN_DLINE_BAD_DECISION,
	    "", SPAWN_DECISION_NONE },
	{ "{\"id\":\"17\"}", SPAWN_DLINE_BAD_DECISION, "",
	    SPAWN_DECISION_NONE },
};

static void
test_decision_lines(void **state)
{
	char id[SPAWN_ASK_ID_MAX + 1], *big;
	enum spawn_decision d;
	enum spawn_dline_status st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
		st = spawn_decision_parse(dcases[i].line,
		    strlen(dcases[i].line), id, sizeof(id), &d);
		if (st != dcases[i].st || d != dcases[i].d ||
		    strcmp(id, dcases[i].id) != 0)
			fail_msg("case %zu (%s): status %d, id '%s', decision "
			    "%d", i, dcases[i].line, st, id, d);
		assert_non_null(spawn_dline_strstatus(st));
	}
	/* an id that does not fit the caller's buffer */
#define RUN_1234 "{\"id\":\"1234\",\"decision\":\"run\"}"
	assert_int_equal(spawn_decision_parse(RUN_1234, strlen(RUN_1234), id,
	    4, &d), SPAWN_DLINE_BAD_ID);
	assert_int_equal(spawn_decision_parse(RUN_1234, strlen(RUN_1234), id,
	    5, &d), SPAWN_DLINE_OK);
	assert_string_equal(id, "1234");
	/* a NUL in the line */
	assert_int_equal(spawn_decision_parse(RUN_1234 "\0",
	    strlen(RUN_1234) + 1, id, sizeof(id), &d), SPAWN_DLINE_INVALID);
	/* at the limit, and one byte over */
	assert_non_null(big = malloc(SPAWN_DECISION_LINE_MAX + 2));
	memset(big, ' ', SPAWN_DECISION_LINE_MAX + 1);
	memcpy(big, "{\"id\":\"9\",\"decision\":\"deny\"}",
	    strlen("{\"id\":\"9\",\"decision\":\"deny\"}"));
	assert_int_equal(spawn_decision_parse(big, SPAWN_DECISION_LINE_MAX,
	    id, sizeof(id), &d), SPAWN_DLINE_OK);
	assert_string_equal(id, "9");
	assert_int_equal(d, SPAWN_DECISION_DENY);
	assert_int_equal(spawn_decision_parse(big, SPAWN_DECISION_LINE_MAX + 1,
	    id, sizeof(id), &d), SPAWN_DLINE_TOO_LONG);
	free(big);
	assert_string_equal(spawn_decision_name(SPAWN_DECISION_ONCE), "once");
	assert_string_equal(spawn_decision_name(SPAWN_DECISION_RUN), "run");
	assert_string_equal(spawn_decision_name(SPAWN_DECISION_SAVE), "save");
	assert_string_equal(spawn_decision_name(SPAWN_DECISION_DENY), "deny");
	assert_string_equal(spawn_decision_name(SPAWN_DECISION_NONE), "");
}

static void
test_answers(void **state)
{
	static const struct {
		const char		*typed;
		bool			 save_ok;
		enum spawn_decision	 d;
	} cases[] = {
		{ "y", false, SPAWN_DECISION_ONCE },
		{ "Y", false, SPAWN_DECISION_ONCE },
		{ "yes", false, SPAWN_DECISION_ONCE },
		{ " YES \r", false, SPAWN_DECISION_ONCE },
		{ "a", false, SPAWN_DECISION_RUN },
		{ "A", true, SPAWN_DECISION_RUN },
		{ "s", true, SPAWN_DECISION_SAVE },
		{ "S", true, SPAWN_DECISION_SAVE },
		{ "s", false, SPAWN_DECISION_NONE },	/* not offered */
		{ "n", false, SPAWN_DECISION_DENY },
		{ "No", true, SPAWN_DECISION_DENY },
		{ "", false, SPAWN_DECISION_DENY },
		{ "  \t", false, SPAWN_DECISION_DENY },
		{ "ye", false, SPAWN_DECISION_NONE },
		{ "yess", false, SPAWN_DECISION_NONE },
		{ "y y", false, SPAWN_DECISION_NONE },
		{ "always", true, SPAWN_DECISION_NONE },
		{ "once", false, SPAWN_DECISION_NONE },
		{ "\033[A", false, SPAWN_DECISION_NONE },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (spawn_answer_parse(cases[i].typed, strlen(cases[i].typed),
		    cases[i].save_ok) != cases[i].d)
			fail_msg("case %zu ('%s')", i, cases[i].typed);
	/* only len bytes count */
	assert_int_equal(spawn_answer_parse("yes", 1, false),
	    SPAWN_DECISION_ONCE);
	assert_int_equal(spawn_answer_parse("no", 0, false),
	    SPAWN_DECISION_DENY);
}

static void
test_prompt(void **state)
{
	char buf[256];

	(void)state;
	spawn_ask_prompt("curl", "example.org:443", false, 60, buf,
	    sizeof(buf));
	assert_string_equal(buf, "gk-run: curl wants example.org:443 - [y] "
	    "once, [a] this run, [N] deny (60 s) ");
	spawn_ask_prompt("npm", "[2001:db8::7]:22", true, 5, buf, sizeof(buf));
	assert_string_equal(buf, "gk-run: npm wants [2001:db8::7]:22 - [y] "
	    "once, [a] this run, [s] save, [N] deny (5 s) ");
	spawn_ask_prompt("npm", "a:1", true, 5, buf, 10);
	assert_string_equal(buf, "gk-run: n");
}

/* ---- lines from a stream ------------------------------------------------ */

struct got {
	char	 lines[8][16];
	bool	 toolong[8];
	size_t	 n;
	size_t	 stop_after;	/* 0: never stop */
};

static bool
got_line(void *arg, const char *line, size_t len, bool toolong)
{
	struct got *g = arg;

	assert_int_equal(strlen(line), len);
	assert_true(g->n < 8);
	snprintf(g->lines[g->n], sizeof(g->lines[0]), "%s", line);
	g->toolong[g->n++] = toolong;
	return g->stop_after == 0 || g->n < g->stop_after;
}

static void
test_lines_feed(void **state)
{
	char buf[5 + 1];
	struct spawn_lines l = { .buf = buf, .cap = 5 };
	struct got g = { .n = 0 };

	(void)state;
	/* split anywhere; exactly cap bytes fit */
	spawn_lines_feed(&l, "ab", 2, got_line, &g);
	assert_int_equal(g.n, 0);
	spawn_lines_feed(&l, "cde\n\nxy", 8, got_line, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.lines[0], "abcde");
	assert_false(g.toolong[0]);
	assert_string_equal(g.lines[1], "");
	/* longer: told once its newline came, then the next line */
	spawn_lines_feed(&l, "zabcd", 5, got_line, &g);
	assert_int_equal(g.n, 2);
	spawn_lines_feed(&l, "ef\nok\n", 6, got_line, &g);
	assert_int_equal(g.n, 4);
	assert_true(g.toolong[2]);
	assert_string_equal(g.lines[2], "");
	assert_string_equal(g.lines[3], "ok");
	assert_false(g.toolong[3]);
	/* cap + 1 bytes */
	spawn_lines_feed(&l, "123456\n", 7, got_line, &g);
	assert_int_equal(g.n, 5);
	assert_true(g.toolong[4]);
	/* the callback stops: the rest is dropped, the buffer too */
	g = (struct got){ .stop_after = 1 };
	spawn_lines_feed(&l, "1\n2\n3", 5, got_line, &g);
	assert_int_equal(g.n, 1);
	spawn_lines_feed(&l, "4\n", 2, got_line, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.lines[1], "4");
	/* reset forgets a partial line */
	g = (struct got){ .n = 0 };
	spawn_lines_feed(&l, "part", 4, got_line, &g);
	spawn_lines_reset(&l);
	spawn_lines_feed(&l, "new\n", 4, got_line, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.lines[0], "new");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_not_events),
		cmocka_unit_test(test_printable_and_json),
		cmocka_unit_test(test_ask_events),
		cmocka_unit_test(test_ask_not_events),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_decision_lines),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_prompt),
		cmocka_unit_test(test_lines_feed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
