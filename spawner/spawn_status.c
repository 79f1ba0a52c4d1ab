/*
 * bwrap's --json-status-fd, one line at a time: a JSON object per line,
 * {"child-pid": N, ...} once the sandbox's pid 1 exists and
 * {"exit-code": N} after the command exited (bwrap 0.8 also reports
 * namespace ids; anything else is ignored). Pure: a line in, what it
 * says out.
 */
#include <limits.h>
#include <string.h>

#include <json-c/json.h>

#include "spawner/spawn.h"

/* An integer member `key` of o within [min, max]: 1 found, 0 absent, -1
 * present but not such an integer. */
static int
int_member(struct json_object *o, const char *key, int64_t min, int64_t max,
    int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	return *out >= min && *out <= max ? 1 : -1;
}

enum spawn_status_st
spawn_status_parse(const char *line, size_t len, struct spawn_status *out)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum spawn_status_st st = SPAWN_STATUS_INVALID;
	int64_t v;
	int r;

	out->child_pid = 0;
	out->exit_code = -1;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len == 0 || len > SPAWN_STATUS_LINE_MAX ||
	    memchr(line, '\0', len) != NULL ||
	    (tok = json_tokener_new()) == NULL)
		return SPAWN_STATUS_INVALID;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (o != NULL && json_tokener_get_parse_end(tok) == len &&
	    json_object_is_type(o, json_type_object)) {
		st = SPAWN_STATUS_OK;
		if ((r = int_member(o, "child-pid", 2, INT_MAX, &v)) == 1)
			out->child_pid = (int)v;
		else if (r == -1)
			st = SPAWN_STATUS_INVALID;
		if ((r = int_member(o, "exit-code", 0, 255, &v)) == 1)
			out->exit_code = (int)v;
		else if (r == -1)
			st = SPAWN_STATUS_INVALID;
	}
	json_object_put(o);
	json_tokener_free(tok);
	if (st != SPAWN_STATUS_OK) {
		out->child_pid = 0;
		out->exit_code = -1;
	}
	return st;
}
