/*
 * gatekeeperctl's formatters: gatekeeperd's replies (as the protocol
 * says it sends them) and the exact text each one makes, then replies
 * that are wrong in every way a formatter must notice: fields missing or
 * of the wrong type, negative and huge numbers, bytes that are not
 * UTF-8 or not text, nesting, refusals with and without a code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/ctl/ctl_fmt.h"

/* 2026-11-25T10:00:00Z + 1h05m03s */
#define NOW	((time_t)1795600800 + 3903)

#define CAGE_A	"{\"id\":\"k3j9x0qa\",\"label\":\"demo\",\"source\":" \
    "\"10.143.0.2\",\"uid\":1000,\"allow\":[\"*.github.com\"," \
    "\"example.com:443\"],\"created\":\"2026-11-25T10:00:00Z\"," \
    "\"pins\":3,\"dns_queries\":12,\"connections\":4,\"denied\":" \
    "{\"dns\":1,\"socks5\":0,\"http\":2,\"transparent\":0}"
#define DENIAL	"{\"cage\":\"k3j9x0qa\",\"label\":\"demo\",\"time\":" \
    "\"2026-11-25T10:00:00.123Z\",\"kind\":\"http\",\"host\":" \
    "\"example.org\",\"port\":443,\"reason\":\"not_allowlisted\"," \
    "\"count\":3}"
#define QUESTION "{\"cage\":\"k3j9x0qa\",\"label\":\"demo\",\"id\":\"17\"," \
    "\"host\":\"example.org\",\"port\":443,\"kind\":\"http\",\"age\":3," \
    "\"expires_in\":57,\"connections\":1}"

#define REFUSED		"{\"ok\":false,\"error\":\"late\"}"
#define BAD_EVENT	"{\"event\":\"deny\",\"cage\":\"a\"}"

struct out {
	enum ctl_reply_status	 st;
	char			*text;		/* what was written */
	char			 msg[CTL_MSG_MAX + 512];
};

static const struct ctl_fmt_ctx ctx_now = { .now = NOW };

/* Run fn on `line`; the status, the text and the message. */
static struct out
fmt(ctl_fmt_fn fn, const struct ctl_fmt_ctx *ctx, const char *line)
{
	struct out o;
	size_t size;
	FILE *f;

	memset(&o, 0, sizeof(o));
	assert_non_null(f = open_memstream(&o.text, &size));
	o.st = fn(line, strlen(line), ctx, f, o.msg, sizeof(o.msg));
	fclose(f);
	return o;
}

static void
want(ctl_fmt_fn fn, const char *line, const char *text)
{
	struct out o = fmt(fn, &ctx_now, line);

	if (o.st != CTL_REPLY_OK || strcmp(o.text, text) != 0)
		fail_msg("status %d msg '%s'\ngot:\n%s\nwant:\n%s", o.st, o.msg,
		    o.text, text);
	assert_string_equal(o.msg, "");
	free(o.text);
}

/* A reply fn must refuse with status st, a message holding `part`, and
 * nothing written. */
static void
bad(ctl_fmt_fn fn, const char *line, enum ctl_reply_status st,
    const char *part)
{
	struct out o = fmt(fn, &ctx_now, line);

	if (o.st != st || strstr(o.msg, part) == NULL || o.text[0] != '\0')
		fail_msg("%s\n-> status %d (want %d), msg '%s' (want '%s'), "
		    "text '%s'", line, o.st, st, o.msg, part, o.text);
	free(o.text);
}

static void
test_list(void **state)
{
	(void)state;
	want(ctl_fmt_list, "{\"ok\":true,\"cages\":[" CAGE_A "}]}",
	    "ID        LABEL  UID   SOURCE      AGE    PATTERNS  DENIALS\n"
	    "k3j9x0qa  demo   1000  10.143.0.2  1h05m  2         3\n");
	want(ctl_fmt_list, "{\"ok\":true,\"cages\":[]}", "no cages\n");
	/* QUESTIONS when any cage asks; "-" for one that does not; no
	 * label; extra members ignored; a huge uid; a future created */
	want(ctl_fmt_list, "{\"ok\":true,\"extra\":[1],\"cages\":[" CAGE_A
	    "},{\"id\":\"00000000\",\"label\":\"\",\"source\":\"::1\","
	    "\"uid\":18446744073709551615,\"allow\":[],\"created\":"
	    "\"2030-01-01T00:00:00Z\",\"denied\":{},\"questions\":2,"
	    "\"new\":{\"x\":[]}}]}",
	    "ID        LABEL  UID                   SOURCE      AGE    "
	    "PATTERNS  DENIALS  QUESTIONS\n"
	    "k3j9x0qa  demo   1000                  10.143.0.2  1h05m  "
	    "2         3        -\n"
	    "00000000  -      18446744073709551615  ::1         0s     "
	    "0         0        2\n");
	/* an unparseable created is "?"; a label with escapes is shown
	 * printable; denials saturate */
	want(ctl_fmt_list, "{\"ok\":true,\"cages\":[{\"id\":\"a\",\"label\":"
	    "\"\\u001b[1mx\\u00e9\",\"source\":\"s\",\"uid\":0,\"allow\":[],"
	    "\"created\":\"yesterday\",\"denied\":{\"a\":"
	    "18446744073709551615,\"b\":5}}]}",
	    "ID  LABEL    UID  SOURCE  AGE  PATTERNS  DENIALS\n"
	    "a   ?[1mx??  0    s       ?    0         18446744073709551615\n");
}

static void
test_list_malformed(void **state)
{
	static const struct {
		const char	*line;
		const char	*part;
	} cases[] = {
		{ "", "an empty line" },
		{ "   \r", "an empty line" },
		{ "not json", "not JSON" },
		{ "{\"ok\":true,\"cages\":[]", "ends inside a value" },
		{ "{\"ok\":true,\"cages\":[]} x", "more after the JSON" },
		{ "{\"ok\":true,\"cages\":[]}{}", "more after the JSON" },
		{ "[1]", "not a JSON object" },
		{ "\"ok\"", "not a JSON object" },
		{ "{}", "no boolean \"ok\"" },
		{ "{\"ok\":\"true\",\"cages\":[]}", "no boolean \"ok\"" },
		{ "{\"ok\":1}", "no boolean \"ok\"" },
		{ "{\"ok\":true}", "\"cages\" is missing" },
		{ "{\"ok\":true,\"cages\":{}}",
		    "\"cages\" is not an array" },
		{ "{\"ok\":true,\"cages\":null}", "\"cages\" is null" },
		{ "{\"ok\":true,\"cages\":[1]}",
		    "\"cages\"[0] is not an object" },
		{ "{\"ok\":true,\"cages\":[{}]}", "\"id\" is missing" },
		{ "{\"ok\":true,\"cages\":[{\"id\":5}]}", "\"id\" is not a "
		    "string" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"uid\":-1}]}",
		    "\"uid\" is not a whole number >= 0" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"uid\":1.5}]}",
		    "\"uid\" is not a whole number" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"uid\":\"0\"}]}",
		    "\"uid\" is not a whole" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"allow\":[1]}]}",
		    "\"allow\"[0] is not a string" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"denied\":[]}]}",
		    "\"denied\" is not an object" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"denied\":{\"dns\":"
		    "-3}}]}", "\"denied\".\"dns\" is not a whole number" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"questions\":true}]}",
		    "\"questions\" is not a whole number" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"label\":\"a\\u0000b\""
		    "}]}", "\"label\" holds a NUL character" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"label\":\"\xff\"}]}",
		    "not JSON (invalid utf-8" },
		{ "{\"ok\":true,\"cages\":[" CAGE_A ",\"label\":\"\xc3\"}]}",
		    "not JSON" },
		{ "{\"ok\":true,\"x\":[[[[[[[[[]]]]]]]]]}", "not JSON" },
		{ "{\"ok\":true,\"cages\":['a']}", "not JSON" },
		{ "{\"ok\":true,\"cages\":[],}", "not JSON" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		bad(ctl_fmt_list, cases[i].line, CTL_REPLY_MALFORMED,
		    cases[i].part);
	/* the message says who is at fault, once */
	bad(ctl_fmt_list, "{}", CTL_REPLY_MALFORMED, "gatekeeperd sent a "
	    "reply gatekeeperctl does not understand: no boolean \"ok\" (are "
	    "gatekeeperctl and gatekeeperd from the same release?)");
	/* a NUL byte in the line itself */
	struct out o;
	FILE *f;
	size_t size;
	char *text = NULL;

	assert_non_null(f = open_memstream(&text, &size));
	o.st = ctl_fmt_list("{\"ok\":true,\0\"cages\":[]}", 23, &ctx_now, f,
	    o.msg, sizeof(o.msg));
	fclose(f);
	assert_int_equal(o.st, CTL_REPLY_MALFORMED);
	assert_non_null(strstr(o.msg, "not a line of text"));
	assert_string_equal(text, "");
	free(text);
}

static void
test_refusals(void **state)
{
	(void)state;
	bad(ctl_fmt_list, "{\"ok\":false,\"error\":\"no such thing\"}",
	    CTL_REPLY_REFUSED, "no such thing");
	bad(ctl_fmt_show, "{\"ok\":false,\"error\":\"no cage zzzzzzzz\","
	    "\"code\":\"no_such_cage\"}", CTL_REPLY_REFUSED,
	    "no cage zzzzzzzz");
	bad(ctl_fmt_show, "{\"ok\":false,\"error\":\"not yours\",\"code\":"
	    "\"not_permitted\"}", CTL_REPLY_NOT_PERMITTED, "not yours");
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":\"not permitted: uid 1001 "
	    "is not root and not in group 'gatekeeper'; ...\"}",
	    CTL_REPLY_NOT_PERMITTED, "not permitted: uid 1001");
	/* an unknown code, or one of the wrong type: a plain refusal */
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":\"e\",\"code\":\"x\"}",
	    CTL_REPLY_REFUSED, "e");
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":\"e\",\"code\":7}",
	    CTL_REPLY_REFUSED, "e");
	/* no error, or not a string, or empty */
	bad(ctl_fmt_stats, "{\"ok\":false}", CTL_REPLY_REFUSED,
	    "gatekeeperd refused the request and gave no reason");
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":[1]}", CTL_REPLY_REFUSED,
	    "gave no reason");
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":\"\",\"code\":"
	    "\"not_permitted\"}", CTL_REPLY_NOT_PERMITTED, "gave no reason");
	bad(ctl_fmt_stats, "{\"ok\":false,\"error\":\"\\n \\t\\n\"}",
	    CTL_REPLY_REFUSED, "gave no reason");
	/* as it came, but printable; its lines kept, the last newline not */
	struct out o = fmt(ctl_fmt_reload, &ctx_now, "{\"ok\":false,\"error\":"
	    "\"a:1: x\\nb:2: \\u001by\\u00e9\\n\"}");
	assert_int_equal(o.st, CTL_REPLY_REFUSED);
	assert_string_equal(o.msg, "a:1: x\nb:2: ?y??");
	free(o.text);
}

static void
test_show(void **state)
{
	(void)state;
	want(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"questions\":1,"
	    "\"pinned\":[{\"name\":\"github.com\",\"addr\":\"140.82.112.3\","
	    "\"expires_in\":57},{\"name\":\"api.github.com\",\"addr\":"
	    "\"2001:db8::1\",\"expires_in\":3700}],\"recent\":[" DENIAL ","
	    "{\"cage\":\"k3j9x0qa\",\"time\":\"2026-11-25T10:00:01.000Z\","
	    "\"kind\":\"dns\",\"host\":\"evil.example\",\"port\":0,\"reason\":"
	    "\"not_allowlisted\",\"count\":1}],\"pending\":[" QUESTION "]}}",
	    "id: k3j9x0qa\n"
	    "label: demo\n"
	    "uid: 1000\n"
	    "source: 10.143.0.2\n"
	    "created: 2026-11-25T10:00:00Z (1h05m ago)\n"
	    "pins: 3\n"
	    "dns queries: 12\n"
	    "connections: 4\n"
	    "denied: dns 1, http 2\n"
	    "questions: 1\n"
	    "allow:\n"
	    "  *.github.com\n"
	    "  example.com:443\n"
	    "pinned:\n"
	    "  github.com -> 140.82.112.3 (expires in 57s)\n"
	    "  api.github.com -> 2001:db8::1 (expires in 1h01m)\n"
	    "recent denials:\n"
	    "  2026-11-25T10:00:00.123Z http example.org:443 not_allowlisted"
	    " x3\n"
	    "  2026-11-25T10:00:01.000Z dns evil.example not_allowlisted\n"
	    "pending questions:\n"
	    "  17 http example.org:443 (asked 3s ago, expires in 57s, 1 "
	    "connection)\n");
	/* the least a cage has; an empty pending list is said */
	want(ctl_fmt_show, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"\",\"source\":\"10.143.0.2\",\"uid\":0,\"allow\":[],"
	    "\"denied\":{\"dns\":0},\"pending\":[{\"cage\":\"k3j9x0qa\","
	    "\"id\":\"9\",\"host\":\"h\",\"port\":80,\"kind\":\"socks5\","
	    "\"connections\":2}]}}",
	    "id: k3j9x0qa\nlabel: -\nuid: 0\nsource: 10.143.0.2\n"
	    "denied: 0\nallow: (none)\npinned: (none)\n"
	    "recent denials: (none)\npending questions:\n"
	    "  9 socks5 h:80 (asked - ago, expires in -, 2 connections)\n");
	want(ctl_fmt_show, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"x\",\"source\":\"s\",\"uid\":1,\"allow\":[\"a.b\"],"
	    "\"pinned\":[],\"recent\":[],\"pending\":[]}}",
	    "id: k3j9x0qa\nlabel: x\nuid: 1\nsource: s\nallow:\n  a.b\n"
	    "pinned: (none)\nrecent denials: (none)\n"
	    "pending questions: (none)\n");
	/* a cage that ended lately: when and why, no pins */
	want(ctl_fmt_show, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"x\",\"source\":\"s\",\"uid\":1,\"allow\":[],"
	    "\"recent\":[],\"ended_at\":\"2026-11-25T11:04:00.000Z\","
	    "\"end_reason\":\"exited\",\"ended\":63}}",
	    "id: k3j9x0qa\nlabel: x\nuid: 1\nsource: s\n"
	    "state: ended 63 s ago (exited)\nallow: (none)\n"
	    "recent denials: (none)\n");
	/* what passed, per destination, in sizes a person reads */
	want(ctl_fmt_show, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"x\",\"source\":\"s\",\"uid\":1,\"allow\":[],"
	    "\"traffic\":{\"up\":1049100,\"down\":2560,\"connections\":3,"
	    "\"hosts\":[{\"host\":\"api.github.com\",\"port\":443,\"up\":"
	    "1048576,\"down\":2048,\"connections\":1},{\"host\":"
	    "\"2001:db8::1\",\"port\":80,\"up\":524,\"down\":512,"
	    "\"connections\":2}],\"other\":{\"up\":0,\"down\":0,"
	    "\"connections\":0}}}}",
	    "id: k3j9x0qa\nlabel: x\nuid: 1\nsource: s\nallow: (none)\n"
	    "traffic: up 1.0 MiB, down 2.5 KiB, 3 connections\n"
	    "  api.github.com:443 up 1.0 MiB, down 2.0 KiB, 1 connection\n"
	    "  [2001:db8::1]:80 up 524 B, down 512 B, 2 connections\n"
	    "  (other destinations) up 0 B, down 0 B, 0 connections\n"
	    "pinned: (none)\nrecent denials: (none)\n");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"traffic\":{"
	    "\"up\":1,\"down\":1,\"connections\":1,\"hosts\":[{\"host\":"
	    "\"h\",\"port\":1,\"up\":-1}]}}}", CTL_REPLY_MALFORMED, "\"up\"");
	bad(ctl_fmt_show, "{\"ok\":true}", CTL_REPLY_MALFORMED,
	    "\"cage\" is missing");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":[]}", CTL_REPLY_MALFORMED,
	    "\"cage\" is not an object");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"pinned\":[{"
	    "\"name\":\"a\",\"addr\":\"b\"}]}}", CTL_REPLY_MALFORMED,
	    "\"expires_in\" is missing");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"pinned\":{}}}",
	    CTL_REPLY_MALFORMED, "\"pinned\" is not an array");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"recent\":["
	    "\"x\"]}}", CTL_REPLY_MALFORMED, "\"recent\"[0] is not an object");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"recent\":[{"
	    "\"time\":\"t\",\"kind\":\"http\",\"host\":\"h\",\"port\":65536,"
	    "\"reason\":\"r\"}]}}", CTL_REPLY_MALFORMED,
	    "\"port\" 65536 is over 65535");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"pending\":[{"
	    "\"cage\":\"k3j9x0qa\",\"id\":\"17a\",\"host\":\"h\",\"port\":1,"
	    "\"kind\":\"http\"}]}}", CTL_REPLY_MALFORMED,
	    "a question's \"id\" is not a decimal number");
	bad(ctl_fmt_show, "{\"ok\":true,\"cage\":" CAGE_A ",\"created\":7}}",
	    CTL_REPLY_MALFORMED, "\"created\" is not a string");
}

static void
test_denials(void **state)
{
	static const struct ctl_fmt_ctx follow = { .now = NOW,
	    .follow = true };
	struct out o;

	(void)state;
	want(ctl_fmt_denials, "{\"ok\":true,\"denials\":[" DENIAL ","
	    "{\"cage\":\"b2c3d4e5\",\"time\":\"2026-11-25T10:00:02.000Z\","
	    "\"kind\":\"dns\",\"host\":\"x.example\",\"port\":53,\"reason\":"
	    "\"special_name\",\"count\":2},{\"cage\":\"b2c3d4e5\",\"label\":"
	    "\"\",\"time\":\"2026-11-25T10:00:03.000Z\",\"kind\":"
	    "\"transparent\",\"host\":\"2001:db8::1\",\"port\":22,\"reason\":"
	    "\"not_allowlisted\"}]}",
	    "2026-11-25T10:00:00.123Z k3j9x0qa (demo) http example.org:443 "
	    "not_allowlisted x3\n"
	    "2026-11-25T10:00:02.000Z b2c3d4e5 dns x.example special_name "
	    "x2\n"
	    "2026-11-25T10:00:03.000Z b2c3d4e5 transparent [2001:db8::1]:22 "
	    "not_allowlisted\n");
	want(ctl_fmt_denials, "{\"ok\":true,\"denials\":[]}",
	    "no recent denials\n");
	o = fmt(ctl_fmt_denials, &follow, "{\"ok\":true,\"denials\":[]}");
	assert_int_equal(o.st, CTL_REPLY_OK);
	assert_string_equal(o.text, "");
	free(o.text);
	bad(ctl_fmt_denials, "{\"ok\":true,\"denials\":[{\"cage\":\"a\"}]}",
	    CTL_REPLY_MALFORMED, "\"time\" is missing");
	bad(ctl_fmt_denials, "{\"ok\":true,\"denials\":[" DENIAL ",{\"time\":"
	    "\"t\",\"kind\":\"http\",\"host\":\"h\",\"port\":1,\"reason\":"
	    "\"r\"}]}", CTL_REPLY_MALFORMED, "\"cage\" is missing");
	bad(ctl_fmt_denials, "{\"ok\":true,\"denials\":[{\"cage\":\"a\","
	    "\"time\":\"t\",\"kind\":\"http\",\"host\":\"h\",\"port\":-1,"
	    "\"reason\":\"r\"}]}", CTL_REPLY_MALFORMED, "\"port\" is not a whole number");
	bad(ctl_fmt_denials, "{\"ok\":true,\"denials\":[{\"cage\":\"a\","
	    "\"time\":\"t\",\"kind\":\"http\",\"host\":\"h\",\"port\":1,"
	    "\"reason\":\"r\",\"count\":\"2\"}]}", CTL_REPLY_MALFORMED,
	    "\"count\" is not a whole number");
	bad(ctl_fmt_denials, "{\"ok\":true}", CTL_REPLY_MALFORMED,
	    "\"denials\" is missing");
}

static void
test_events(void **state)
{
	static const struct ctl_fmt_ctx all = { .now = NOW, .follow = true };
	static const struct ctl_fmt_ctx one = { .now = NOW, .follow = true,
	    .cage = "k3j9x0qa" };
	static const char ev[] = "{\"event\":\"deny\",\"cage\":\"k3j9x0qa\","
	    "\"label\":\"demo\",\"time\":\"2026-11-25T10:00:00.123Z\","
	    "\"kind\":\"socks5\",\"host\":\"example.org\",\"port\":443,"
	    "\"reason\":\"not_allowlisted\",\"why\":\"not on the allowlist\"}";
	static const char end[] = "{\"event\":\"cage.end\",\"cage\":"
	    "\"k3j9x0qa\",\"label\":\"demo\"}";
	struct out o;
	size_t size;
	FILE *f;
	char *text;

	(void)state;
	want(ctl_fmt_event, ev, "2026-11-25T10:00:00.123Z k3j9x0qa (demo) "
	    "socks5 example.org:443 not_allowlisted - not on the allowlist\n");
	want(ctl_fmt_event, "{\"event\":\"deny\",\"cage\":\"k3j9x0qa\","
	    "\"time\":\"t\",\"kind\":\"dns\",\"host\":\"a.b\",\"port\":0,"
	    "\"reason\":\"r\",\"count\":9}", "t k3j9x0qa dns a.b r\n");
	want(ctl_fmt_event, "{\"event\":\"deny.dropped\",\"count\":1}",
	    "-- 1 denial dropped (gatekeeperctl read too slowly)\n");
	want(ctl_fmt_event, "{\"event\":\"deny.dropped\",\"count\":40}",
	    "-- 40 denials dropped (gatekeeperctl read too slowly)\n");
	/* a cage's end: the end of a follow of that cage only */
	o = fmt(ctl_fmt_event, &all, end);
	assert_int_equal(o.st, CTL_REPLY_OK);
	assert_string_equal(o.text, "-- cage k3j9x0qa (demo) ended\n");
	free(o.text);
	o = fmt(ctl_fmt_event, &one, end);
	assert_int_equal(o.st, CTL_REPLY_END);
	assert_string_equal(o.text, "-- cage k3j9x0qa (demo) ended\n");
	assert_string_equal(o.msg, "");
	free(o.text);
	o = fmt(ctl_fmt_event, &one, "{\"event\":\"cage.end\",\"cage\":"
	    "\"b2c3d4e5\"}");
	assert_int_equal(o.st, CTL_REPLY_OK);
	assert_string_equal(o.text, "-- cage b2c3d4e5 ended\n");
	free(o.text);
	/* with no output: checked only, the same status */
	o.st = ctl_fmt_event(end, strlen(end), &one, NULL, o.msg,
	    sizeof(o.msg));
	assert_int_equal(o.st, CTL_REPLY_END);
	/* events it does not know, and replies in the stream */
	want(ctl_fmt_event, "{\"event\":\"learn\",\"host\":\"x\"}", "");
	want(ctl_fmt_event, "{\"ok\":true}", "");
	bad(ctl_fmt_event, "{\"ok\":false,\"error\":\"shutting down\"}",
	    CTL_REPLY_REFUSED, "shutting down");
	bad(ctl_fmt_event, "{\"event\":3}", CTL_REPLY_MALFORMED,
	    "\"event\" is not a string");
	bad(ctl_fmt_event, "{\"x\":1}", CTL_REPLY_MALFORMED,
	    "no boolean \"ok\"");
	bad(ctl_fmt_event, "{\"event\":\"deny\"}", CTL_REPLY_MALFORMED,
	    "\"time\" is missing");
	bad(ctl_fmt_event, "{\"event\":\"deny.dropped\"}", CTL_REPLY_MALFORMED,
	    "\"count\" is missing");
	bad(ctl_fmt_event, "{\"event\":\"cage.end\"}", CTL_REPLY_MALFORMED,
	    "\"cage\" is missing");
	bad(ctl_fmt_event, "[]", CTL_REPLY_MALFORMED, "not a JSON object");
	/* a malformed event writes nothing, even to a real output */
	assert_non_null(f = open_memstream(&text, &size));
	o.st = ctl_fmt_event(BAD_EVENT, strlen(BAD_EVENT), &all, f, o.msg,
	    sizeof(o.msg));
	fclose(f);
	assert_int_equal(o.st, CTL_REPLY_MALFORMED);
	assert_string_equal(text, "");
	free(text);
}

static void
test_update_destroy_reload(void **state)
{
	(void)state;
	want(ctl_fmt_update, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"demo\",\"source\":\"10.143.0.2\",\"uid\":1000,"
	    "\"allow\":[\"*.github.com\",\"pypi.org:443\"]}}",
	    "k3j9x0qa (demo) allowlist:\n  *.github.com\n  pypi.org:443\n");
	want(ctl_fmt_update, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"\",\"allow\":[]}}", "k3j9x0qa allowlist: (none)\n");
	bad(ctl_fmt_update, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"\",\"allow\":[\"a\",null]}}", CTL_REPLY_MALFORMED,
	    "\"allow\"[1] is null, not a string");
	bad(ctl_fmt_update, "{\"ok\":true,\"cage\":{\"id\":\"k3j9x0qa\","
	    "\"label\":\"\"}}", CTL_REPLY_MALFORMED, "\"allow\" is missing");
	bad(ctl_fmt_update, "{\"ok\":false,\"error\":\"cage k3j9x0qa has no "
	    "pattern 'x'; it has: a\"}", CTL_REPLY_REFUSED,
	    "has no pattern 'x'");
	want(ctl_fmt_destroy, "{\"ok\":true,\"destroyed\":\"k3j9x0qa\"}",
	    "destroyed k3j9x0qa\n");
	bad(ctl_fmt_destroy, "{\"ok\":true}", CTL_REPLY_MALFORMED,
	    "\"destroyed\" is missing");
	want(ctl_fmt_reload, "{\"ok\":true,\"reload\":{\"policy\":\"v7\","
	    "\"cages\":0}}", "reloaded: host policy v7, 0 cages kept\n");
	want(ctl_fmt_reload, "{\"ok\":true,\"reload\":{\"policy\":\"none\","
	    "\"cages\":1}}", "reloaded: no host policy, 1 cage kept\n");
	bad(ctl_fmt_reload, "{\"ok\":true,\"reload\":{\"policy\":null,"
	    "\"cages\":1}}", CTL_REPLY_MALFORMED, "\"policy\" is null");
	bad(ctl_fmt_reload, "{\"ok\":true,\"reload\":{\"policy\":\"v\"}}",
	    CTL_REPLY_MALFORMED, "\"cages\" is missing");
}

static void
test_stats(void **state)
{
	(void)state;
	want(ctl_fmt_stats, "{\"ok\":true,\"stats\":{\"dns_queries\":{"
	    "\"allowed\":10,\"denied\":2,\"servfail\":0},\"dns_cache_hits\":5,"
	    "\"connections\":{\"socks5\":{\"allowed\":3,\"denied\":1},"
	    "\"http\":{\"allowed\":0,\"denied\":0},\"transparent\":{}},"
	    "\"denied\":{\"dns\":{\"not_allowlisted\":4,\"special\":0}},"
	    "\"bytes\":{\"up\":1,\"down\":18446744073709551615},"
	    "\"mixed\":{\"a\":1,\"b\":{\"c\":2}},\"cages\":0}}",
	    "dns_queries: allowed 10, denied 2\n"
	    "dns_cache_hits: 5\n"
	    "connections:\n"
	    "  socks5: allowed 3, denied 1\n"
	    "  http: 0\n"
	    "  transparent: 0\n"
	    "denied:\n"
	    "  dns: not_allowlisted 4\n"
	    "bytes: up 1, down 18446744073709551615\n"
	    "mixed:\n"
	    "  a: 1\n"
	    "  b: c 2\n"
	    "cages: 0\n");
	want(ctl_fmt_stats, "{\"ok\":true,\"stats\":{}}", "");
	bad(ctl_fmt_stats, "{\"ok\":true,\"stats\":{\"a\":\"1\"}}",
	    CTL_REPLY_MALFORMED, "stats: \"a\" is not a whole number >= 0 "
	    "nor a group of them");
	bad(ctl_fmt_stats, "{\"ok\":true,\"stats\":{\"a\":{\"b\":-1}}}",
	    CTL_REPLY_MALFORMED, "\"b\" is not a whole number");
	bad(ctl_fmt_stats, "{\"ok\":true,\"stats\":{\"a\":{\"b\":[1]}}}",
	    CTL_REPLY_MALFORMED, "\"b\" is not a whole number");
	/* a member's name in the message is shown printable */
	bad(ctl_fmt_stats, "{\"ok\":true,\"stats\":{\"a\\u001b\\u00e9\":\"x\"}}",
	    CTL_REPLY_MALFORMED, "stats: \"a???\" is not");
	bad(ctl_fmt_stats, "{\"ok\":true,\"stats\":[]}", CTL_REPLY_MALFORMED,
	    "\"stats\" is not an object");
}

static void
test_pending(void **state)
{
	(void)state;
	want(ctl_fmt_pending, "{\"ok\":true,\"questions\":[" QUESTION ","
	    "{\"cage\":\"b2c3d4e5\",\"id\":\"1234\",\"host\":\"2001:db8::1\","
	    "\"port\":8443,\"kind\":\"transparent\",\"age\":125}]}",
	    "QID   CAGE      LABEL  KIND         TARGET              AGE    "
	    "EXPIRES  CONNS\n"
	    "17    k3j9x0qa  demo   http         example.org:443     3s     "
	    "57s      1\n"
	    "1234  b2c3d4e5  -      transparent  [2001:db8::1]:8443  2m05s  "
	    "-        -\n");
	want(ctl_fmt_pending, "{\"ok\":true,\"questions\":[]}",
	    "no pending questions\n");
	bad(ctl_fmt_pending, "{\"ok\":true,\"questions\":[{\"cage\":\"a\","
	    "\"id\":17,\"host\":\"h\",\"port\":1,\"kind\":\"http\"}]}",
	    CTL_REPLY_MALFORMED, "\"id\" is not a string");
	bad(ctl_fmt_pending, "{\"ok\":true,\"questions\":[{\"cage\":\"a\","
	    "\"id\":\"\",\"host\":\"h\",\"port\":1,\"kind\":\"http\"}]}",
	    CTL_REPLY_MALFORMED, "not a decimal number");
	bad(ctl_fmt_pending, "{\"ok\":true,\"questions\":[{\"cage\":\"a\","
	    "\"id\":\"123456789012345678901\",\"host\":\"h\",\"port\":1,"
	    "\"kind\":\"http\"}]}", CTL_REPLY_MALFORMED, "not a decimal");
	bad(ctl_fmt_pending, "{\"ok\":true,\"questions\":[{\"cage\":\"a\","
	    "\"id\":\"1\",\"host\":\"h\",\"port\":1,\"kind\":\"http\","
	    "\"age\":-2}]}", CTL_REPLY_MALFORMED, "\"age\" is not a whole number");
}

static void
test_questions(void **state)
{
	static const char pend[] = "{\"ok\":true,\"questions\":[" QUESTION ","
	    "{\"cage\":\"b2c3d4e5\",\"id\":\"0018\",\"host\":\"h.example\","
	    "\"port\":80,\"kind\":\"socks5\"}]}";
	struct ctl_question q;
	char msg[CTL_MSG_MAX + 512], *text;
	enum ctl_reply_status st;
	size_t size;
	bool found;
	FILE *f;

	(void)state;
	st = ctl_fmt_find_question(pend, strlen(pend), 17, &q, &found, msg,
	    sizeof(msg));
	assert_int_equal(st, CTL_REPLY_OK);
	assert_true(found);
	assert_string_equal(q.id, "17");
	assert_string_equal(q.cage, "k3j9x0qa");
	assert_string_equal(q.label, "demo");
	assert_string_equal(q.target, "example.org:443");
	assert_string_equal(q.kind, "http");
	/* by value: gatekeeperd's spelling is kept for cage.decide */
	st = ctl_fmt_find_question(pend, strlen(pend), 18, &q, &found, msg,
	    sizeof(msg));
	assert_true(found);
	assert_string_equal(q.id, "0018");
	assert_string_equal(q.cage, "b2c3d4e5");
	assert_string_equal(q.label, "");
	st = ctl_fmt_find_question(pend, strlen(pend), 19, &q, &found, msg,
	    sizeof(msg));
	assert_int_equal(st, CTL_REPLY_OK);
	assert_false(found);
	st = ctl_fmt_find_question(REFUSED, strlen(REFUSED), 17, &q, &found,
	    msg, sizeof(msg));
	assert_int_equal(st, CTL_REPLY_REFUSED);
	assert_false(found);
	st = ctl_fmt_find_question("{\"ok\":true}", 11, 17, &q, &found, msg,
	    sizeof(msg));
	assert_int_equal(st, CTL_REPLY_MALFORMED);
	assert_non_null(strstr(msg, "\"questions\" is missing"));

	st = ctl_fmt_find_question(pend, strlen(pend), 17, &q, &found, msg,
	    sizeof(msg));
	assert_non_null(f = open_memstream(&text, &size));
	assert_int_equal(ctl_fmt_decided("{\"ok\":true}", 11, &q,
	    CTL_DECIDE_ONCE, f, msg, sizeof(msg)), CTL_REPLY_OK);
	assert_int_equal(ctl_fmt_decided("{\"ok\":true}", 11, &q,
	    CTL_DECIDE_RUN, f, msg, sizeof(msg)), CTL_REPLY_OK);
	assert_int_equal(ctl_fmt_decided("{\"ok\":true}", 11, &q,
	    CTL_DECIDE_DENY, f, msg, sizeof(msg)), CTL_REPLY_OK);
	assert_int_equal(ctl_fmt_decided(REFUSED, strlen(REFUSED), &q,
	    CTL_DECIDE_DENY, f, msg, sizeof(msg)), CTL_REPLY_REFUSED);
	assert_string_equal(msg, "late");
	fclose(f);
	assert_string_equal(text,
	    "approved question 17 (once): http example.org:443 of cage "
	    "k3j9x0qa (demo)\n"
	    "approved question 17 (run): http example.org:443 of cage "
	    "k3j9x0qa (demo)\n"
	    "denied question 17: http example.org:443 of cage k3j9x0qa "
	    "(demo)\n");
	free(text);
}

static void
test_duration_utc(void **state)
{
	static const struct {
		uint64_t	 s;
		const char	*text;
	} d[] = {
		{ 0, "0s" }, { 5, "5s" }, { 59, "59s" }, { 60, "1m00s" },
		{ 192, "3m12s" }, { 3599, "59m59s" }, { 3600, "1h00m" },
		{ 7500, "2h05m" }, { 86399, "23h59m" }, { 86400, "1d00h" },
		{ 273600, "3d04h" },
		{ UINT64_MAX, "213503982334601d07h" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		ctl_fmt_duration(d[i].s, buf, sizeof(buf));
		assert_string_equal(buf, d[i].text);
	}
	ctl_fmt_duration(UINT64_MAX, buf, 4);
	assert_int_equal(strlen(buf), 3);

	assert_int_equal(ctl_fmt_parse_utc("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00Z"),
	    1795600800);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00.123Z"),
	    1795600800);
	assert_int_equal(ctl_fmt_parse_utc("2024-02-29T23:59:59Z"),
	    1709251199);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00.1Z"),
	    1795600800);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25 10:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-13-25T10:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-00-25T10:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-31T10:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T24:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:60:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00.Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00.12aZ"), -1);
	assert_int_equal(ctl_fmt_parse_utc("2026-11-25T10:00:00.1234567890Z"),
	    -1);
	assert_int_equal(ctl_fmt_parse_utc("+026-11-25T10:00:00Z"), -1);
	assert_int_equal(ctl_fmt_parse_utc(""), -1);
	assert_int_equal(ctl_fmt_parse_utc("Z"), -1);
}

static void
test_small_buffers(void **state)
{
	char msg[8], *text;
	size_t size;
	FILE *f;

	(void)state;
	assert_non_null(f = open_memstream(&text, &size));
	assert_int_equal(ctl_fmt_list("{}", 2, &ctx_now, f, msg, sizeof(msg)),
	    CTL_REPLY_MALFORMED);
	assert_int_equal(strlen(msg), 7);
	assert_int_equal(ctl_fmt_list("{}", 2, &ctx_now, f, NULL, 0),
	    CTL_REPLY_MALFORMED);
	assert_int_equal(ctl_fmt_list("{\"ok\":true,\"cages\":[]}", 22,
	    &ctx_now, f, NULL, 0), CTL_REPLY_OK);
	fclose(f);
	assert_string_equal(text, "no cages\n");
	free(text);
	/* every formatter for a command, and none for no command */
	for (int c = CTL_CMD_LIST; c < CTL_CMD__MAX; c++)
		assert_non_null(ctl_fmt_for(c));
	assert_null(ctl_fmt_for(CTL_CMD_NONE));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_malformed),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_denials),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_update_destroy_reload),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_pending),
		cmocka_unit_test(test_questions),
		cmocka_unit_test(test_duration_utc),
		cmocka_unit_test(test_small_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
