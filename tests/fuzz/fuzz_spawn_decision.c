/*
 * Fuzz gk-run's --ask parsers: a supervisor's --decisions-fd line, a
 * person's answer at the prompt, and gatekeeperd's ask and ask.done
 * lines. Invariants: an accepted decision line has a question id of 1 to
 * SPAWN_ASK_ID_MAX digits and one of the four decisions; an answer is
 * never "save" unless saving is on; a question's id is digits, its
 * strings printable and bounded, and its --events-fd JSON one printable
 * line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

static void
check_ask(const char *line, size_t len)
{
	struct spawn_event ev;
	enum spawn_event_type t;
	char *json;
	size_t i, n;

	t = spawn_event_parse(line, len, &ev);
	if (t != SPAWN_EVENT_ASK && t != SPAWN_EVENT_ASK_DONE)
		return;
	CHECK(spawn_ask_id_valid(ev.id, strlen(ev.id)));
	(void)fuzz_printable(ev.host, sizeof(ev.host));
	CHECK(ev.host[0] != '\0');
	(void)fuzz_printable(ev.kind, sizeof(ev.kind));
	(void)fuzz_printable(ev.decision, sizeof(ev.decision));
	(void)fuzz_printable(ev.by, sizeof(ev.by));
	(void)fuzz_printable(ev.time, sizeof(ev.time));
	if (t == SPAWN_EVENT_ASK)
		CHECK(ev.timeout >= 1 && ev.timeout <= SPAWN_ASK_TIMEOUT_MAX);
	if ((json = spawn_ask_json(t, &ev)) == NULL)
		return;
	n = strlen(json);
	CHECK(n > 1 && json[0] == '{' && json[n - 1] == '\n');
	for (i = 0; i + 1 < n; i++)
		CHECK(json[i] >= 0x20 && json[i] < 0x7f);
	free(json);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	char id[SPAWN_ASK_ID_MAX + 1];
	enum spawn_decision d;

	memset(id, 'X', sizeof(id));
	if (spawn_decision_parse(line, size, id, sizeof(id), &d) ==
	    SPAWN_DLINE_OK) {
		CHECK(spawn_ask_id_valid(id, strlen(id)));
		CHECK(d == SPAWN_DECISION_ONCE || d == SPAWN_DECISION_RUN ||
		    d == SPAWN_DECISION_SAVE || d == SPAWN_DECISION_DENY);
	}
	CHECK(spawn_answer_parse(line, size, false) != SPAWN_DECISION_SAVE);
	d = spawn_answer_parse(line, size, true);
	CHECK(d >= SPAWN_DECISION_NONE && d <= SPAWN_DECISION_DENY);
	check_ask(line, size);
	return 0;
}
