/*
 * gk_ctlreq_life: what a cage's life in the audit log needs of a request:
 * cage.create's "command" and "mounts" (what runs in the cage, as its
 * gk-run says), cage.destroy's "exit", "signal" and "reason" (how its
 * command ended), and the canonical spec of a create with its SHA-256.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_sha256.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"

static const char *const mount_modes[] = { "ro", "rw", "hide", "socket" };
static const char *const end_reasons[] = { "walltime", "memory" };

/* Is s "MODE:PATH", a known mode and a path? */
static bool
mount_ok(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t i, n;

	if (colon == NULL || colon[1] == '\0')
		return false;
	n = (size_t)(colon - s);
	for (i = 0; i < sizeof(mount_modes) / sizeof(mount_modes[0]); i++)
		if (strlen(mount_modes[i]) == n &&
		    strncmp(s, mount_modes[i], n) == 0)
			return true;
	return false;
}

/*
 * "command" or "mounts": an array of at most maxn strings of at most
 * maxlen bytes each (mounts: each "MODE:PATH"), copied into *outp.
 */
static enum gk_ctl_status
strings(struct json_object *v, const char *field, size_t maxn, size_t maxlen,
    char ***outp, size_t *np, char *err, size_t errlen)
{
	struct json_object *e;
	size_t i, n, len;
	const char *s;

	if (!json_object_is_type(v, json_type_array))
		return gk_seterr(err, errlen, "\"%s\" must be an array of "
		    "strings, not %s", field, json_type_to_name(
		    json_object_get_type(v))), GK_CTL_BAD_TYPE;
	if ((n = json_object_array_length(v)) > maxn)
		return gk_seterr(err, errlen, "\"%s\" has %zu strings; at most "
		    "%zu are allowed", field, n, maxn), GK_CTL_BAD_VALUE;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return gk_seterr(err, errlen, "%s[%zu] must be a "
			    "string", field, i), GK_CTL_BAD_TYPE;
		s = json_object_get_string(e);
		len = (size_t)json_object_get_string_len(e);
		if (len > maxlen || memchr(s, '\0', len) != NULL)
			return gk_seterr(err, errlen, "%s[%zu] must be at most "
			    "%zu bytes, without NUL", field, i, maxlen),
			    GK_CTL_BAD_VALUE;
		if (strcmp(field, "mounts") == 0 && !mount_ok(s))
			return gk_seterr(err, errlen, "mounts[%zu] must be "
			    "MODE:PATH with MODE ro, rw, hide or socket, e.g. "
			    "\"rw:/home/u/src\"", i), GK_CTL_BAD_VALUE;
	}
	if ((*outp = calloc(n + 1, sizeof(**outp))) == NULL)
		return gk_seterr(err, errlen, "out of memory"), GK_CTL_NOMEM;
	for (*np = 0; *np < n; (*np)++)
		if (((*outp)[*np] = strdup(json_object_get_string(
		    json_object_array_get_idx(v, *np)))) == NULL)
			return gk_seterr(err, errlen, "out of memory"),
			    GK_CTL_NOMEM;
	return GK_CTL_OK;
}

/* "SIGKILL", "SIGRTMIN+3": SIG and 1 to 12 of A-Z, 0-9 and '+'. */
static bool
signal_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 4 || n > GK_CTL_SIGNAL_MAX || strncmp(s, "SIG", 3) != 0)
		return false;
	for (i = 3; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '+'))
			return false;
	return true;
}

/* destroy's "signal" (a signal's name) or "reason" (one of end_reasons),
 * if given, into out. */
static enum gk_ctl_status
end_word(struct json_object *obj, const char *key, char *out, size_t outlen,
    char *err, size_t errlen)
{
	struct json_object *v;
	const char *s;
	size_t i, n;

	if (!json_object_object_get_ex(obj, key, &v))
		return GK_CTL_OK;
	if (!json_object_is_type(v, json_type_string))
		return gk_seterr(err, errlen, "\"%s\" must be a string",
		    key), GK_CTL_BAD_TYPE;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (strcmp(key, "signal") == 0 && signal_ok(s, n)) {
		memcpy(out, s, n + 1);
		return GK_CTL_OK;
	}
	for (i = 0; strcmp(key, "reason") == 0 &&
	    i < sizeof(end_reasons) / sizeof(end_reasons[0]); i++)
		if (strcmp(s, end_reasons[i]) == 0 && n < outlen) {
			memcpy(out, s, n + 1);
			return GK_CTL_OK;
		}
	return gk_seterr(err, errlen, "%s", strcmp(key, "signal") == 0 ?
	    "\"signal\" must be a signal's name, e.g. \"SIGKILL\"" :
	    "\"reason\" must be \"walltime\" or \"memory\""),
	    GK_CTL_BAD_VALUE;
}

/* destroy: "exit" 0..255 or "signal"; "reason" only with one of them. */
static enum gk_ctl_status
parse_end(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st;
	int64_t n;

	if (json_object_object_get_ex(obj, "exit", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    (n = json_object_get_int64(v)) < 0 || n > 255)
			return gk_seterr(err, errlen, "\"exit\" must be the "
			    "command's exit status, 0 to 255"),
			    json_object_is_type(v, json_type_int) ?
			    GK_CTL_BAD_VALUE : GK_CTL_BAD_TYPE;
		out->exited = true;
		out->exit_status = (uint8_t)n;
	}
	if ((st = end_word(obj, "signal", out->signal, sizeof(out->signal),
	    err, errlen)) != GK_CTL_OK ||
	    (st = end_word(obj, "reason", out->end_reason,
	    sizeof(out->end_reason), err, errlen)) != GK_CTL_OK)
		return st;
	if (out->exited && out->signal[0] != '\0')
		return gk_seterr(err, errlen, "give either \"exit\" or "
		    "\"signal\", not both: a command exits or is killed"),
		    GK_CTL_BAD_VALUE;
	if (out->end_reason[0] != '\0' && !out->exited &&
	    out->signal[0] == '\0')
		return gk_seterr(err, errlen, "\"reason\" says what ended the "
		    "command: give it with \"exit\" or \"signal\""),
		    GK_CTL_BAD_VALUE;
	return GK_CTL_OK;
}

enum gk_ctl_status
gk_ctlreq_life(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st = GK_CTL_OK;

	if (out->op == GK_CTL_OP_CAGE_DESTROY)
		return parse_end(obj, out, err, errlen);
	if (json_object_object_get_ex(obj, "command", &v))
		st = strings(v, "command", GK_CTL_CMD_MAX, GK_CTL_ARG_MAX,
		    &out->command, &out->ncommand, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "mounts", &v))
		st = strings(v, "mounts", GK_CTL_MOUNTS_MAX, GK_CTL_MOUNT_MAX,
		    &out->mounts, &out->nmounts, err, errlen);
	return st;
}

static void
strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

void
gk_ctlreq_life_clear(struct gk_ctlreq *req)
{
	strv_free(req->command, req->ncommand);
	strv_free(req->mounts, req->nmounts);
	req->command = req->mounts = NULL;
	req->ncommand = req->nmounts = 0;
}

/* ---- the canonical spec ------------------------------------------------ */

static struct json_object *
strv_json(char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* {"best_effort","cpus","memory","pids"}, the ones asked for. */
static struct json_object *
limits_json(const struct gk_ctlreq *req)
{
	struct json_object *l = json_object_new_object();
	char cpus[GK_RLIM_TEXT];

	if (req->limits_best_effort)
		json_object_object_add(l, "best_effort",
		    json_object_new_boolean(1));
	if (req->limits.cpus != 0) {
		gk_cpus_format(req->limits.cpus, cpus, sizeof(cpus));
		json_object_object_add(l, "cpus", json_object_new_double_s(
		    req->limits.cpus / 1000.0, cpus));
	}
	if (req->limits.memory != 0)
		json_object_object_add(l, "memory",
		    json_object_new_int64((int64_t)req->limits.memory));
	if (req->limits.pids != 0)
		json_object_object_add(l, "pids",
		    json_object_new_int64(req->limits.pids));
	return l;
}

/* The upload budgets, in their canonical texts. */
static struct json_object *
uploads_json(const struct gk_ctlreq *req)
{
	struct json_object *a = json_object_new_array();
	char text[GK_UPLOAD_TEXT];
	size_t i;

	for (i = 0; i < req->nuploads; i++) {
		gk_upload_format(&req->uploads[i], text, sizeof(text));
		json_object_array_add(a, json_object_new_string(text));
	}
	return a;
}

#define ADD(o, k, v)	json_object_object_add((o), (k), (v))
#define BOOL(b)		json_object_new_boolean((b) ? 1 : 0)

struct json_object *
gk_ctlreq_spec(const struct gk_ctlreq *req)
{
	struct json_object *o = json_object_new_object();

	ADD(o, "allow", strv_json(req->allow, req->nallow));
	ADD(o, "ask", BOOL(req->ask));
	if (req->ask)
		ADD(o, "ask_timeout", json_object_new_int64(req->ask_timeout));
	if (req->ncommand > 0)
		ADD(o, "command", strv_json(req->command, req->ncommand));
	ADD(o, "events", BOOL(req->events));
	ADD(o, "label", json_object_new_string(req->label));
	ADD(o, "learn", BOOL(req->learn));
	if (gk_rlimits_any(&req->limits) || req->limits_best_effort)
		ADD(o, "limits", limits_json(req));
	if (req->nuploads > 0)
		ADD(o, "max_upload", uploads_json(req));
	if (req->nmounts > 0)
		ADD(o, "mounts", strv_json(req->mounts, req->nmounts));
	ADD(o, "netns", BOOL(req->netns));
	if (!req->netns)
		ADD(o, "source", json_object_new_string(req->source));
	ADD(o, "transparent", BOOL(req->transparent));
	return o;
}

int
gk_ctlreq_spec_sha256(const struct gk_ctlreq *req, char hex[65])
{
	struct json_object *o = gk_ctlreq_spec(req);
	uint8_t md[GK_SHA256_LEN];
	const char *s;
	unsigned int i;
	int r = -1;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s != NULL) {
		gk_sha256(s, strlen(s), md);
		for (i = 0; i < GK_SHA256_LEN; i++)
			snprintf(hex + i * 2, 3, "%02x", md[i]);
		r = 0;
	}
	json_object_put(o);
	return r;
}
