/*
 * One line from gatekeeperd, as JSON: strictly parsed and bounded (no
 * NUL byte, valid UTF-8, nesting bounded, nothing after the object),
 * then read member by member with a sticky first problem.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "spawner/ctl/ctl_reply.h"

#define CODE_NOT_PERMITTED	"not_permitted"
#define PEER_REFUSED		"not permitted"	/* a refused peer's error */

void
ctl_rd_fail(struct ctl_rd *rd, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (rd->bad)
		return;
	rd->bad = true;
	va_start(ap, fmt);
	vsnprintf(rd->msg, sizeof(rd->msg), fmt, ap);
	va_end(ap);
	/* member names come from the line: printable only */
	for (p = rd->msg; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
}

enum ctl_reply_status
ctl_rd_status(const struct ctl_rd *rd)
{
	return rd->bad ? CTL_REPLY_MALFORMED : CTL_REPLY_OK;
}

void
ctl_reply_message(enum ctl_reply_status st, const struct ctl_rd *rd,
    char *msg, size_t msglen)
{
	if (msglen == 0)
		return;
	if (st == CTL_REPLY_MALFORMED)
		snprintf(msg, msglen, "gatekeeperd sent a reply gatekeeperctl "
		    "does not understand: %s (are gatekeeperctl and "
		    "gatekeeperd from the same release?)", rd->msg);
	else
		snprintf(msg, msglen, "%s", rd->msg);
}

void
ctl_put(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		fputc((*s >= 0x20 && *s < 0x7f) ? *s : '?', f);
}

/* "a string", "an object", "an array": what a member should be. */
static const char *
want_name(enum json_type t)
{
	return t == json_type_string ? "a string" : t == json_type_object ?
	    "an object" : "an array";
}

struct json_object *
ctl_reply_object(const char *line, size_t len, struct ctl_rd *rd)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error je;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t' || line[len - 1] == '\n'))
		len--;
	if (len == 0) {
		ctl_rd_fail(rd, "an empty line");
		return NULL;
	}
	if (len > (size_t)INT32_MAX || memchr(line, '\0', len) != NULL) {
		ctl_rd_fail(rd, "not a line of text");
		return NULL;
	}
	if ((tok = json_tokener_new_ex(CTL_REPLY_DEPTH_MAX)) == NULL) {
		ctl_rd_fail(rd, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_ALLOW_TRAILING_CHARS | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	je = json_tokener_get_error(tok);
	if (o == NULL && je == json_tokener_continue)
		ctl_rd_fail(rd, "not JSON (the line ends inside a value)");
	else if (o == NULL || je != json_tokener_success)
		ctl_rd_fail(rd, "not JSON (%s at byte %zu)",
		    json_tokener_error_desc(je),
		    json_tokener_get_parse_end(tok));
	else if (json_tokener_get_parse_end(tok) < len)
		ctl_rd_fail(rd, "more after the JSON object (byte %zu)",
		    json_tokener_get_parse_end(tok));
	else if (!json_object_is_type(o, json_type_object))
		ctl_rd_fail(rd, "not a JSON object");
	json_tokener_free(tok);
	if (rd->bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Copy gatekeeperd's message: printable, newlines and tabs kept. */
static void
refusal(struct ctl_rd *rd, const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < sizeof(rd->msg); i++)
		rd->msg[i] = (s[i] >= 0x20 && s[i] < 0x7f) ||
		    s[i] == '\n' || s[i] == '\t' ? s[i] : '?';
	rd->msg[i] = '\0';
	if (s[i] != '\0')
		memcpy(rd->msg + sizeof(rd->msg) - 4, "...", 4);
	while (i > 0 && rd->msg[i - 1] == '\n')
		rd->msg[--i] = '\0';
}

enum ctl_reply_status
ctl_reply_verdict(struct json_object *o, struct ctl_rd *rd)
{
	struct json_object *ok, *v;
	const char *err = NULL, *code = NULL;

	if (!json_object_object_get_ex(o, "ok", &ok) ||
	    !json_object_is_type(ok, json_type_boolean)) {
		ctl_rd_fail(rd, "no boolean \"ok\"");
		return CTL_REPLY_MALFORMED;
	}
	if (json_object_get_boolean(ok))
		return CTL_REPLY_OK;
	if (json_object_object_get_ex(o, "error", &v) &&
	    json_object_is_type(v, json_type_string))
		err = json_object_get_string(v);
	if (json_object_object_get_ex(o, "code", &v) &&
	    json_object_is_type(v, json_type_string))
		code = json_object_get_string(v);
	refusal(rd, err != NULL && err[strspn(err, " \t\r\n")] != '\0' ?
	    err : "gatekeeperd refused the request and gave no reason (see "
	    "journalctl -u gatekeeperd)");
	rd->bad = true;
	if ((code != NULL && strcmp(code, CODE_NOT_PERMITTED) == 0) ||
	    (err != NULL && strncmp(err, PEER_REFUSED,
	    strlen(PEER_REFUSED)) == 0))
		return CTL_REPLY_NOT_PERMITTED;
	return CTL_REPLY_REFUSED;
}

enum ctl_reply_status
ctl_reply_check(const char *line, size_t len, struct json_object **objp,
    struct ctl_rd *rd)
{
	enum ctl_reply_status st;

	if ((*objp = ctl_reply_object(line, len, rd)) == NULL)
		return CTL_REPLY_MALFORMED;
	if ((st = ctl_reply_verdict(*objp, rd)) != CTL_REPLY_OK) {
		json_object_put(*objp);
		*objp = NULL;
	}
	return st;
}

/* Member key of o; NULL if absent (failing rd if required), if null
 * (failing rd: never a value here), or if rd failed already. */
static struct json_object *
lookup(struct ctl_rd *rd, struct json_object *o, const char *key,
    bool required)
{
	struct json_object *v;

	if (rd->bad || o == NULL)
		return NULL;
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			ctl_rd_fail(rd, "\"%s\" is missing", key);
		return NULL;
	}
	if (v == NULL)
		ctl_rd_fail(rd, "\"%s\" is null", key);
	return v;
}

/* Member key of o of type t; NULL if absent (fails rd if required) or
 * of another type (fails rd). */
static struct json_object *
member(struct ctl_rd *rd, struct json_object *o, const char *key,
    enum json_type t, bool required)
{
	struct json_object *v;

	if ((v = lookup(rd, o, key, required)) == NULL)
		return NULL;
	if (!json_object_is_type(v, t)) {
		ctl_rd_fail(rd, "\"%s\" is not %s", key, want_name(t));
		return NULL;
	}
	return v;
}

static const char *
str_member(struct ctl_rd *rd, struct json_object *o, const char *key,
    bool required)
{
	struct json_object *v;
	const char *s;

	if ((v = member(rd, o, key, json_type_string, required)) == NULL)
		return required ? "" : NULL;
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v)) {
		ctl_rd_fail(rd, "\"%s\" holds a NUL character", key);
		return required ? "" : NULL;
	}
	return s;
}

const char *
ctl_rd_str(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	return str_member(rd, o, key, true);
}

const char *
ctl_rd_str_opt(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	return str_member(rd, o, key, false);
}

bool
ctl_json_u64(struct json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

static bool
u64_member(struct ctl_rd *rd, struct json_object *o, const char *key,
    bool required, uint64_t *out)
{
	struct json_object *v;

	*out = 0;
	if ((v = lookup(rd, o, key, required)) == NULL)
		return false;
	if (!ctl_json_u64(v, out)) {
		ctl_rd_fail(rd, "\"%s\" is not a whole number >= 0", key);
		return false;
	}
	return true;
}

uint64_t
ctl_rd_u64(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	uint64_t v;

	u64_member(rd, o, key, true, &v);
	return v;
}

bool
ctl_rd_u64_opt(struct ctl_rd *rd, struct json_object *o, const char *key,
    uint64_t *v)
{
	return u64_member(rd, o, key, false, v);
}

struct json_object *
ctl_rd_obj(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	return member(rd, o, key, json_type_object, true);
}

struct json_object *
ctl_rd_arr(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	return member(rd, o, key, json_type_array, true);
}

struct json_object *
ctl_rd_arr_opt(struct ctl_rd *rd, struct json_object *o, const char *key)
{
	return member(rd, o, key, json_type_array, false);
}

struct json_object *
ctl_rd_at(struct ctl_rd *rd, struct json_object *a, size_t i,
    enum json_type t, const char *what)
{
	struct json_object *v;

	if (rd->bad || a == NULL)
		return NULL;
	v = json_object_array_get_idx(a, i);
	if (v == NULL || !json_object_is_type(v, t)) {
		ctl_rd_fail(rd, "\"%s\"[%zu] is %s %s", what, i,
		    v == NULL ? "null, not" : "not", want_name(t));
		return NULL;
	}
	if (t == json_type_string && strlen(json_object_get_string(v)) !=
	    (size_t)json_object_get_string_len(v)) {
		ctl_rd_fail(rd, "\"%s\"[%zu] holds a NUL character", what, i);
		return NULL;
	}
	return v;
}
