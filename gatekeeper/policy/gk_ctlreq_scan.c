/*
 * gk_ctlreq_scan: a request line's JSON, before its fields are read:
 * json-c's tokenizer (strict, UTF-8 checked, depth limited), and a raw
 * scan of the same bytes for what json-c lets through (NUL bytes, single
 * quotes, duplicate keys). The table of field names is here, the scan's
 * reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"

const struct gk_ctl_field gk_ctl_fields[GK_CTL_NFIELDS] = {
	{ "op", F_OP },
	{ "source", F_SOURCE },
	{ "allow", F_ALLOW },
	{ "label", F_LABEL },
	{ "id", F_ID },
	{ "netns", F_NETNS },
	{ "transparent", F_TRANSPARENT },
	{ "events", F_EVENTS },
	{ "learn", F_LEARN },
	{ "limits", F_LIMITS },
	{ "reattach", F_REATTACH },
	{ "ask", F_ASK },
	{ "ask_timeout", F_ASK_TIMEOUT },
	{ "decision", F_DECISION },
	{ "by", F_BY },
	{ "add", F_ADD },
	{ "remove", F_REMOVE },
	{ "follow", F_FOLLOW },
	{ "name", F_NAME },
	{ "placeholder", F_PLACEHOLDER },
	{ "value", F_VALUE },
	{ "hosts", F_HOSTS },
	{ "max_upload", F_MAX_UPLOAD },
	{ "command", F_COMMAND },
	{ "mounts", F_MOUNTS },
	{ "exit", F_EXIT },
	{ "signal", F_SIGNAL },
	{ "reason", F_REASON },
};

bool
gk_ctlreq_is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Before json-c: reject NUL bytes (json-c would stop at them) and single
 * quotes outside strings (json-c accepts them even in strict mode).
 */
enum gk_ctl_status
gk_ctlreq_prescan(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	bool in_str = false, esc = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] == '\0') {
			gk_seterr(err, errlen, "bad JSON: NUL byte at offset %zu; "
			    "write it as \\u0000 inside a string, if at all",
			    i);
			return GK_CTL_BAD_JSON;
		}
		if (esc)
			esc = false;
		else if (in_str && buf[i] == '\\')
			esc = true;
		else if (buf[i] == '"')
			in_str = !in_str;
		else if (!in_str && buf[i] == '\'') {
			gk_seterr(err, errlen, "bad JSON at offset %zu: single "
			    "quotes are not JSON; quote strings with \"", i);
			return GK_CTL_BAD_JSON;
		}
	}
	return GK_CTL_OK;
}

struct keyscan {
	size_t	 keys;		/* members of the outer object */
	size_t	 seen[GK_CTL_NFIELDS];	/* raw counts of known names */
};

static void
keyscan_key(struct keyscan *ks, const uint8_t *k, size_t n)
{
	size_t f;

	ks->keys++;
	for (f = 0; f < GK_CTL_NFIELDS; f++) {
		if (strlen(gk_ctl_fields[f].name) == n &&
		    memcmp(gk_ctl_fields[f].name, k, n) == 0)
			ks->seen[f]++;
	}
}

/* Count the top-level keys of valid JSON text (json-c merges dups). */
static void
keyscan(const uint8_t *buf, size_t len, struct keyscan *ks)
{
	bool in_str = false, esc = false, want_key = false;
	size_t i, depth = 0, kstart = 0;

	memset(ks, 0, sizeof(*ks));
	for (i = 0; i < len; i++) {
		if (in_str) {
			if (esc)
				esc = false;
			else if (buf[i] == '\\')
				esc = true;
			else if (buf[i] == '"') {
				in_str = false;
				if (want_key)
					keyscan_key(ks, buf + kstart,
					    i - kstart);
				want_key = false;
			}
			continue;
		}
		switch (buf[i]) {
		case '"':
			in_str = true;
			kstart = i + 1;
			break;
		case '{':
		case '[':
			want_key = ++depth == 1 && buf[i] == '{';
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			want_key = depth == 1;
			break;
		default:
			break;
		}
	}
}

enum gk_ctl_status
gk_ctlreq_check_dups(const uint8_t *buf, size_t len, struct json_object *obj,
    char *err, size_t errlen)
{
	struct keyscan ks;
	size_t f;

	keyscan(buf, len, &ks);
	if (ks.keys == (size_t)json_object_object_length(obj))
		return GK_CTL_OK;
	for (f = 0; f < GK_CTL_NFIELDS; f++) {
		if (ks.seen[f] > 1) {
			gk_seterr(err, errlen, "duplicate key \"%s\": each field "
			    "may appear once", gk_ctl_fields[f].name);
			return GK_CTL_DUPLICATE_KEY;
		}
	}
	gk_seterr(err, errlen, "duplicate key in the request object: each field "
	    "may appear once");
	return GK_CTL_DUPLICATE_KEY;
}

/*
 * Feed the line to json-c; a bare number needs one more byte to end.
 * Returns false on a syntax error; JSON null is true with *objp NULL.
 */
bool
gk_ctlreq_tokenize(const uint8_t *buf, size_t len, struct json_object **objp,
    size_t *end, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error je;

	*objp = NULL;
	if ((tok = json_tokener_new_ex(GK_CTL_DEPTH_MAX)) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return false;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_ALLOW_TRAILING_CHARS | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	je = json_tokener_get_error(tok);
	*end = json_tokener_get_parse_end(tok);
	if (obj == NULL && je == json_tokener_continue) {
		obj = json_tokener_parse_ex(tok, " ", 1);
		je = json_tokener_get_error(tok);
		if (je == json_tokener_continue)
			gk_seterr(err, errlen, "bad JSON: the line ends inside a "
			    "value (after %zu bytes); send each request as "
			    "one complete JSON object on one line", len);
	}
	if (obj == NULL && je == json_tokener_error_depth)
		gk_seterr(err, errlen, "bad JSON at offset %zu: nesting too "
		    "deep (a request is an object of strings and arrays of "
		    "strings)", *end);
	else if (obj == NULL && je != json_tokener_continue)
		gk_seterr(err, errlen, "bad JSON at offset %zu: %s", *end,
		    json_tokener_error_desc(je));
	json_tokener_free(tok);
	*objp = obj;
	return je == json_tokener_success;
}
