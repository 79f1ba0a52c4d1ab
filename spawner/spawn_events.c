/*
 * The cage's denials as gatekeeperd tells them on the control connection
 * (gk_events.h): parsed from one line, said to a person in one line with
 * the --allow that would let it through, and kept as JSON for
 * --events-fd. An asking cage's questions and their ends likewise, and
 * the answers to them: a supervisor's --decisions-fd line, a person's
 * line at the prompt. Pure functions over a bounded buffer.
 */
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_addr.h"
#include "spawner/spawn.h"

/* Copy a string member (printable ASCII only, bounded); "" if absent. */
static void
member(struct json_object *o, const char *key, char *dst, size_t len)
{
	struct json_object *v;

	dst[0] = '\0';
	if (json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string))
		spawn_printable(json_object_get_string(v), dst, len);
}

/* An integer member in min..max; -1 if absent or out of range. */
static int64_t
int_member(struct json_object *o, const char *key, int64_t min, int64_t max)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	return n >= min && n <= max ? n : -1;
}

/* One JSON object filling line[0..len) exactly; NULL if not. */
static struct json_object *
parse_object(const char *line, size_t len, size_t max)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (len == 0 || len > max || memchr(line, '\0', len) != NULL ||
	    (tok = json_tokener_new()) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len)
		o = (json_object_put(o), NULL);
	json_tokener_free(tok);
	if (o != NULL && !json_object_is_type(o, json_type_object))
		o = (json_object_put(o), NULL);
	return o;
}

bool
spawn_ask_id_valid(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > SPAWN_ASK_ID_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* "ask" and "ask.done": the question's id, host and port, and what each
 * adds (the kind and timeout; the decision and who made it). */
static enum spawn_event_type
ask_event(struct json_object *o, bool done, struct spawn_event *ev)
{
	struct json_object *v;
	int64_t port, timeout = 0;

	if (!json_object_object_get_ex(o, "id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    !spawn_ask_id_valid(json_object_get_string(v),
	    (size_t)json_object_get_string_len(v)))
		return SPAWN_EVENT_NONE;
	memcpy(ev->id, json_object_get_string(v),
	    (size_t)json_object_get_string_len(v) + 1);
	member(o, "host", ev->host, sizeof(ev->host));
	port = int_member(o, "port", 1, 65535);
	if (done) {
		member(o, "decision", ev->decision, sizeof(ev->decision));
		member(o, "by", ev->by, sizeof(ev->by));
	} else {
		member(o, "kind", ev->kind, sizeof(ev->kind));
		timeout = int_member(o, "timeout", 1, SPAWN_ASK_TIMEOUT_MAX);
	}
	if (ev->host[0] == '\0' || port == -1 || timeout == -1 ||
	    (done ? ev->decision[0] == '\0' : ev->kind[0] == '\0'))
		return SPAWN_EVENT_NONE;
	ev->port = (uint16_t)port;
	ev->timeout = (unsigned int)timeout;
	return done ? SPAWN_EVENT_ASK_DONE : SPAWN_EVENT_ASK;
}

/* A line without "event": a reply if it has a boolean "ok". */
static enum spawn_event_type
reply(struct json_object *o, struct spawn_event *ev)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, "event", &v) ||
	    !json_object_object_get_ex(o, "ok", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return SPAWN_EVENT_NONE;
	ev->ok = json_object_get_boolean(v);
	member(o, "error", ev->why, sizeof(ev->why));
	return SPAWN_EVENT_REPLY;
}

/* A positive integer member, or 0. */
static uint64_t
positive(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > 0)
		return (uint64_t)json_object_get_int64(v);
	return 0;
}

/* {"event":"limit","limit":"memory"|"pids","value":N,"count":N} */
static enum spawn_event_type
limit_event(struct json_object *o, struct spawn_event *ev)
{
	member(o, "limit", ev->kind, sizeof(ev->kind));
	ev->value = positive(o, "value");
	ev->count = positive(o, "count");
	return (strcmp(ev->kind, "memory") == 0 ||
	    strcmp(ev->kind, "pids") == 0) && ev->value > 0 &&
	    ev->count > 0 ? SPAWN_EVENT_LIMIT : SPAWN_EVENT_NONE;
}

/* "host" (not empty) and "port" (min..65535) into ev; false if not. */
static bool
host_port(struct json_object *o, int64_t min, struct spawn_event *ev)
{
	int64_t port = int_member(o, "port", min, 65535);

	member(o, "host", ev->host, sizeof(ev->host));
	if (ev->host[0] == '\0' || port == -1)
		return false;
	ev->port = (uint16_t)port;
	return true;
}

/* {"event":"learn.request","host","port","method","path"}: a learning
 * cage's request to an inspected host, its path learnable (a '/' first). */
static enum spawn_event_type
learn_request(struct json_object *o, struct spawn_event *ev)
{
	member(o, "method", ev->method, sizeof(ev->method));
	member(o, "path", ev->path, sizeof(ev->path));
	return host_port(o, 0, ev) && ev->method[0] != '\0' &&
	    ev->path[0] == '/' ? SPAWN_EVENT_LEARN : SPAWN_EVENT_NONE;
}

/* {"event":"unreachable","kind","host","port","failure","why"}: a
 * connection the cage was allowed to make failed upstream. */
static enum spawn_event_type
unreachable_event(struct json_object *o, struct spawn_event *ev)
{
	member(o, "kind", ev->kind, sizeof(ev->kind));
	member(o, "failure", ev->failure, sizeof(ev->failure));
	member(o, "why", ev->why, sizeof(ev->why));
	return host_port(o, 1, ev) && ev->failure[0] != '\0' ?
	    SPAWN_EVENT_UNREACHABLE : SPAWN_EVENT_NONE;
}

enum spawn_event_type
spawn_event_parse(const char *line, size_t len, struct spawn_event *ev)
{
	enum spawn_event_type t;
	struct json_object *o, *v;
	char event[16];
	int64_t port;

	memset(ev, 0, sizeof(*ev));
	if ((o = parse_object(line, len, SPAWN_EVENT_LINE_MAX)) == NULL)
		return SPAWN_EVENT_NONE;
	member(o, "event", event, sizeof(event));
	member(o, "time", ev->time, sizeof(ev->time));
	if (strcmp(event, "ask") == 0 || strcmp(event, "ask.done") == 0 ||
	    event[0] == '\0') {
		t = event[0] == '\0' ? reply(o, ev) :
		    ask_event(o, event[3] != '\0', ev);
		json_object_put(o);
		return t;
	}
	if (strcmp(event, "deny.more") == 0 ||
	    strcmp(event, "learn.more") == 0) {
		json_object_put(o);
		return event[0] == 'd' ? SPAWN_EVENT_MORE :
		    SPAWN_EVENT_LEARN_MORE;
	}
	if (strcmp(event, "cage.end") == 0) {
		member(o, "reason", ev->why, sizeof(ev->why));
		json_object_put(o);
		return ev->why[0] != '\0' ? SPAWN_EVENT_END : SPAWN_EVENT_NONE;
	}
	if (strcmp(event, "limit") == 0 || strcmp(event, "unreachable") == 0 ||
	    strcmp(event, "learn.request") == 0) {
		t = event[0] == 'u' ? unreachable_event(o, ev) :
		    event[1] == 'i' ? limit_event(o, ev) : learn_request(o, ev);
		json_object_put(o);
		return t;
	}
	member(o, "kind", ev->kind, sizeof(ev->kind));
	member(o, "host", ev->host, sizeof(ev->host));
	member(o, "reason", ev->reason, sizeof(ev->reason));
	member(o, "why", ev->why, sizeof(ev->why));
	port = -1;
	if (json_object_object_get_ex(o, "port", &v) &&
	    json_object_is_type(v, json_type_int))
		port = json_object_get_int64(v);
	json_object_put(o);
	if (strcmp(event, "learn") == 0 && ev->host[0] != '\0' &&
	    port >= 0 && port <= 65535) {
		ev->port = (uint16_t)port;
		return SPAWN_EVENT_LEARN;
	}
	if (strcmp(event, "deny") != 0 || ev->kind[0] == '\0' ||
	    ev->host[0] == '\0' || ev->reason[0] == '\0' || port < 0 ||
	    port > 65535)
		return SPAWN_EVENT_NONE;
	ev->port = (uint16_t)port;
	return SPAWN_EVENT_DENY;
}

static bool
is_address(const char *host, bool *v6)
{
	struct gk_addr a;

	if (gk_addr_parse(host, &a) == -1)
		return false;
	*v6 = a.family == AF_INET6;
	return true;
}

/* "host:port", "[v6]:port", or the host alone for a lookup. */
void
spawn_event_target(const struct spawn_event *ev, char *buf, size_t len)
{
	bool v6;

	if (ev->port == 0)
		snprintf(buf, len, "%s", ev->host);
	else if (is_address(ev->host, &v6) && v6)
		snprintf(buf, len, "[%s]:%u", ev->host, ev->port);
	else
		snprintf(buf, len, "%s:%u", ev->host, ev->port);
}

void
spawn_event_text(const struct spawn_event *ev, char *buf, size_t len)
{
	char target[SPAWN_EVENT_HOST_MAX + 16], allow[SPAWN_EVENT_HOST_MAX + 8];
	const char *what, *dns = strcmp(ev->kind, "dns") == 0 ?
	    "a DNS lookup: " : "";
	bool v6, addr = is_address(ev->host, &v6);

	spawn_event_target(ev, target, sizeof(target));
	if (ev->failure[0] != '\0') {
		snprintf(buf, len, "gk-run: %s could not be reached: %s",
		    target, ev->why[0] != '\0' ? ev->why : ev->failure);
		return;
	}
	if (addr)
		snprintf(allow, sizeof(allow), "%s/%d", ev->host, v6 ? 128 :
		    32);
	else
		snprintf(allow, sizeof(allow), "%s", ev->host);
	if (strcmp(ev->reason, "not_allowlisted") == 0) {
		snprintf(buf, len, "gk-run: denied %s (%snot on the "
		    "allowlist); to allow it: --allow %s", target, dns, allow);
		return;
	}
	if (strcmp(ev->reason, "ip_not_pinned") == 0) {
		snprintf(buf, len, "gk-run: denied %s (an address no allowed "
		    "name resolved to); to allow it: --allow %s, or allow the "
		    "name it belongs to", target, allow);
		return;
	}
	if (strcmp(ev->reason, "special_range") == 0)
		what = ev->why[0] != '\0' ? ev->why : "a special address "
		    "range, never allowed";
	else
		what = ev->why[0] != '\0' ? ev->why : ev->reason;
	snprintf(buf, len, "gk-run: denied %s (%s%s)", target, dns, what);
}

/* o as one line with its newline, malloc'd (NULL: out of memory); puts
 * o. */
static char *
json_line(struct json_object *o)
{
	const char *s;
	char *line = NULL;
	size_t n;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s != NULL && (line = malloc((n = strlen(s)) + 2)) != NULL) {
		memcpy(line, s, n);
		memcpy(line + n, "\n", 2);
	}
	json_object_put(o);
	return line;
}

char *
spawn_event_json(const struct spawn_event *ev)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "host", json_object_new_string(ev->host));
	json_object_object_add(o, "port", json_object_new_int(ev->port));
	json_object_object_add(o, "reason",
	    json_object_new_string(ev->reason));
	json_object_object_add(o, "kind", json_object_new_string(ev->kind));
	json_object_object_add(o, "time", json_object_new_string(ev->time));
	if (ev->why[0] != '\0')
		json_object_object_add(o, "why",
		    json_object_new_string(ev->why));
	return json_line(o);
}

char *
spawn_ask_json(enum spawn_event_type t, const struct spawn_event *ev)
{
	struct json_object *o;

	if ((t != SPAWN_EVENT_ASK && t != SPAWN_EVENT_ASK_DONE) ||
	    (o = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(o, "event", json_object_new_string(
	    t == SPAWN_EVENT_ASK ? "ask" : "ask.done"));
	json_object_object_add(o, "id", json_object_new_string(ev->id));
	json_object_object_add(o, "host", json_object_new_string(ev->host));
	json_object_object_add(o, "port", json_object_new_int(ev->port));
	if (t == SPAWN_EVENT_ASK) {
		json_object_object_add(o, "kind",
		    json_object_new_string(ev->kind));
		json_object_object_add(o, "timeout",
		    json_object_new_int64(ev->timeout));
	} else {
		json_object_object_add(o, "decision",
		    json_object_new_string(ev->decision));
		json_object_object_add(o, "by",
		    json_object_new_string(ev->by));
	}
	json_object_object_add(o, "time", json_object_new_string(ev->time));
	return json_line(o);
}

/* ---- answers ------------------------------------------------------------ */

static const char *const decision_names[] = {
	[SPAWN_DECISION_NONE] = "", [SPAWN_DECISION_ONCE] = "once",
	[SPAWN_DECISION_RUN] = "run", [SPAWN_DECISION_SAVE] = "save",
	[SPAWN_DECISION_DENY] = "deny",
};

const char *
spawn_decision_name(enum spawn_decision d)
{
	if ((size_t)d >= sizeof(decision_names) / sizeof(decision_names[0]))
		return "";
	return decision_names[d];
}

enum spawn_dline_status
spawn_decision_parse(const char *line, size_t len, char *id, size_t idlen,
    enum spawn_decision *d)
{
	struct json_object *o, *v;
	const char *s;
	size_t i, n;

	*d = SPAWN_DECISION_NONE;
	if (idlen > 0)
		id[0] = '\0';
	if (len > SPAWN_DECISION_LINE_MAX)
		return SPAWN_DLINE_TOO_LONG;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
	    line[len - 1] == '\r'))
		len--;
	if ((o = parse_object(line, len, SPAWN_DECISION_LINE_MAX)) == NULL)
		return SPAWN_DLINE_INVALID;
	if (!json_object_object_get_ex(o, "id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    !spawn_ask_id_valid(s = json_object_get_string(v),
	    n = (size_t)json_object_get_string_len(v)) || n >= idlen) {
		json_object_put(o);
		return SPAWN_DLINE_BAD_ID;
	}
	memcpy(id, s, n + 1);
	if (json_object_object_get_ex(o, "decision", &v) &&
	    json_object_is_type(v, json_type_string))
		for (i = SPAWN_DECISION_ONCE; i <= SPAWN_DECISION_DENY; i++)
			if (strcmp(json_object_get_string(v),
			    decision_names[i]) == 0)
				*d = (enum spawn_decision)i;
	json_object_put(o);
	if (*d == SPAWN_DECISION_NONE) {
		id[0] = '\0';
		return SPAWN_DLINE_BAD_DECISION;
	}
	return SPAWN_DLINE_OK;
}

const char *
spawn_dline_strstatus(enum spawn_dline_status st)
{
	switch (st) {
	case SPAWN_DLINE_OK:
		return "ok";
	case SPAWN_DLINE_INVALID:
		return "not a JSON object";
	case SPAWN_DLINE_BAD_ID:
		return "\"id\" is not the id of a question (a string of "
		    "digits)";
	case SPAWN_DLINE_BAD_DECISION:
		return "\"decision\" is not once, run, save or deny";
	case SPAWN_DLINE_TOO_LONG:
		return "over 4096 bytes";
	}
	return "?";
}

enum spawn_decision
spawn_answer_parse(const char *line, size_t len, bool save_ok)
{
	static const struct {
		const char		*word;
		enum spawn_decision	 d;
	} words[] = {
		{ "", SPAWN_DECISION_DENY }, { "n", SPAWN_DECISION_DENY },
		{ "no", SPAWN_DECISION_DENY }, { "y", SPAWN_DECISION_ONCE },
		{ "yes", SPAWN_DECISION_ONCE }, { "a", SPAWN_DECISION_RUN },
		{ "s", SPAWN_DECISION_SAVE },
	};
	size_t i, n;

	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
	    line[len - 1] == '\r'))
		len--;
	while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
		line++;
		len--;
	}
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i].word);
		if (n == len && strncasecmp(line, words[i].word, n) == 0)
			return words[i].d == SPAWN_DECISION_SAVE && !save_ok ?
			    SPAWN_DECISION_NONE : words[i].d;
	}
	return SPAWN_DECISION_NONE;
}

void
spawn_ask_prompt(const char *cmd, const char *target, bool save,
    unsigned int seconds, char *buf, size_t len)
{
	snprintf(buf, len, "gk-run: %s wants %s - [y] once, [a] this run, "
	    "%s[N] deny (%u s) ", cmd, target, save ? "[s] save, " : "",
	    seconds);
}
