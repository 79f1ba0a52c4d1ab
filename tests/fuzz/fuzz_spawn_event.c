/*
 * Fuzz gk-run's parser for gatekeeperd's deny events. Invariants: a deny
 * event has a kind, a host and a reason (an upstream failure a host, a
 * port and its failure), every string printable and
 * NUL-terminated within its field; the line said to the user and the
 * JSON for --events-fd are printable, one line each, and the JSON parses
 * back to the same event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

static void
check_text(const char *s, size_t max, bool empty_ok)
{
	CHECK(fuzz_printable(s, max) > 0 || empty_ok);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spawn_event ev, back;
	enum spawn_event_type t;
	char line[1024];
	char *json;
	size_t n;

	t = spawn_event_parse((const char *)data, size, &ev);
	if (t == SPAWN_EVENT_UNREACHABLE) {
		check_text(ev.host, sizeof(ev.host), false);
		check_text(ev.failure, sizeof(ev.failure), false);
		check_text(ev.why, sizeof(ev.why), true);
		CHECK(ev.port > 0);
		spawn_event_text(&ev, line, sizeof(line));
		check_text(line, sizeof(line), false);
		CHECK(strncmp(line, "gk-run: ", 8) == 0 &&
		    strstr(line, " could not be reached: ") != NULL);
		return 0;
	}
	if (t != SPAWN_EVENT_DENY)
		return 0;
	check_text(ev.kind, sizeof(ev.kind), false);
	check_text(ev.host, sizeof(ev.host), false);
	check_text(ev.reason, sizeof(ev.reason), false);
	check_text(ev.why, sizeof(ev.why), true);
	check_text(ev.time, sizeof(ev.time), true);
	spawn_event_text(&ev, line, sizeof(line));
	check_text(line, sizeof(line), false);
	CHECK(strncmp(line, "gk-run: denied ", 15) == 0);
	if ((json = spawn_event_json(&ev)) == NULL)
		return 0;
	n = strlen(json);
	CHECK(n > 1 && json[n - 1] == '\n');
	for (size_t i = 0; i + 1 < n; i++)
		CHECK(json[i] >= 0x20 && json[i] < 0x7f);
	/* the same event again: as gatekeeperd's line it needs "event" */
	CHECK(json[0] == '{');
	{
		char *again = malloc(n + 32);

		CHECK(again != NULL);
		snprintf(again, n + 32, "{\"event\":\"deny\",%s", json + 1);
		CHECK(spawn_event_parse(again, strlen(again) - 1, &back) ==
		    SPAWN_EVENT_DENY);
		CHECK(strcmp(back.host, ev.host) == 0);
		CHECK(strcmp(back.reason, ev.reason) == 0);
		CHECK(back.port == ev.port);
		free(again);
	}
	free(json);
	return 0;
}
