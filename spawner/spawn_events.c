/*
 * The cage's denials as gatekeeperd tells them on the control connection
 * (gk_events.h): parsed from one line, said to a person in one line with
 * the --allow that would let it through, and kept as JSON for
 * --events-fd. Pure functions over a bounded buffer.
 */
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum spawn_event_type
spawn_event_parse(const char *line, size_t len, struct spawn_event *ev)
{
	struct json_tokener *tok;
	struct json_object *o, *v;
	char event[16];
	int64_t port;

	memset(ev, 0, sizeof(*ev));
	if (len == 0 || len > SPAWN_EVENT_LINE_MAX ||
	    memchr(line, '\0', len) != NULL ||
	    (tok = json_tokener_new()) == NULL)
		return SPAWN_EVENT_NONE;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len)
		o = (json_object_put(o), NULL);
	json_tokener_free(tok);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return SPAWN_EVENT_NONE;
	}
	member(o, "event", event, sizeof(event));
	member(o, "time", ev->time, sizeof(ev->time));
	if (strcmp(event, "deny.more") == 0 ||
	    strcmp(event, "learn.more") == 0) {
		json_object_put(o);
		return event[0] == 'd' ? SPAWN_EVENT_MORE :
		    SPAWN_EVENT_LEARN_MORE;
	}
	if (strcmp(event, "limit") == 0) {
		member(o, "limit", ev->kind, sizeof(ev->kind));
		if (json_object_object_get_ex(o, "value", &v) &&
		    json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) > 0)
			ev->value = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(o, "count", &v) &&
		    json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) > 0)
			ev->count = (uint64_t)json_object_get_int64(v);
		json_object_put(o);
		return (strcmp(ev->kind, "memory") == 0 ||
		    strcmp(ev->kind, "pids") == 0) && ev->value > 0 &&
		    ev->count > 0 ? SPAWN_EVENT_LIMIT : SPAWN_EVENT_NONE;
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

char *
spawn_event_json(const struct spawn_event *ev)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	char *line = NULL;
	size_t n;

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
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s != NULL && (line = malloc((n = strlen(s)) + 2)) != NULL) {
		memcpy(line, s, n);
		memcpy(line + n, "\n", 2);
	}
	json_object_put(o);
	return line;
}
