/*
 * Unit tests for gk-run's reading of gatekeeperd's deny events: the parse,
 * the line said to the user (with the --allow to add), the JSON for
 * --events-fd.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
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

static void
test_not_events(void **state)
{
	static const char *bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"ok\":true,\"cage\":{\"id\":\"x\"}}",
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_not_events),
		cmocka_unit_test(test_printable_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
