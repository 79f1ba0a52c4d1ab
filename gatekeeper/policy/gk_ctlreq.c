/*
 * gk_ctlreq: the control request parser: each op's fields, checked and
 * read into struct gk_ctlreq. The line's JSON comes from gk_ctlreq_scan.c
 * (json-c, and a raw scan of the same bytes for what json-c lets
 * through); the ops and names from gk_ctlreq_table.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"

#define QUOTE_MAX	48	/* bytes of peer text quoted in a message */

static const char *
type_name(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "unknown";
}

static enum gk_ctl_status
get_string(struct json_object *v, const char *field, const char **s,
    size_t *n, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_string)) {
		gk_seterr(err, errlen, "\"%s\" must be a string, not %s", field,
		    type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	*s = json_object_get_string(v);
	*n = (size_t)json_object_get_string_len(v);
	if (memchr(*s, '\0', *n) != NULL) {
		gk_seterr(err, errlen, "\"%s\" contains a NUL character", field);
		return GK_CTL_BAD_VALUE;
	}
	return GK_CTL_OK;
}

static enum gk_ctl_status
parse_op(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st;
	const char *s;
	char q[QUOTE_MAX * 4 + 8], ops[256];
	size_t n;
	int op;

	if (!json_object_object_get_ex(obj, "op", &v)) {
		gk_seterr(err, errlen, "missing \"op\": say what to do, e.g. "
		    "{\"op\":\"cage.list\"}; known ops: %s",
		    gk_ctlreq_known_ops(ops, sizeof(ops)));
		return GK_CTL_BAD_OP;
	}
	if ((st = get_string(v, "op", &s, &n, err, errlen)) != GK_CTL_OK)
		return st == GK_CTL_BAD_TYPE ? GK_CTL_BAD_OP : st;
	for (op = GK_CTL_OP_NONE + 1; op < GK_CTL_OP__MAX; op++) {
		if (strcmp(s, gk_ctl_op_specs[op].name) == 0) {
			out->op = (enum gk_ctl_op)op;
			return GK_CTL_OK;
		}
	}
	gk_seterr(err, errlen, "unknown op '%s'; known ops: %s",
	    gk_escape(s, n, QUOTE_MAX, q, sizeof(q)),
	    gk_ctlreq_known_ops(ops, sizeof(ops)));
	return GK_CTL_BAD_OP;
}

static unsigned
field_bit(const char *key)
{
	size_t f;

	for (f = 0; f < GK_CTL_NFIELDS; f++) {
		if (strcmp(key, gk_ctl_fields[f].name) == 0)
			return gk_ctl_fields[f].bit;
	}
	return 0;
}

/* Name every unknown field, then every missing one. */
static enum gk_ctl_status
check_fields(struct json_object *obj, const struct gk_ctl_op_spec *spec,
    char *err, size_t errlen)
{
	char q[QUOTE_MAX * 4 + 8], names[256] = "";
	unsigned bit, have = 0;
	size_t nbad = 0, f;

	json_object_object_foreach(obj, key, val) {
		(void)val;
		bit = field_bit(key);
		have |= bit;
		if ((bit & spec->allowed) != 0)
			continue;
		if (nbad++ < 4)
			snprintf(names + strlen(names), sizeof(names) -
			    strlen(names), "%s\"%s\"", nbad > 1 ? ", " : "",
			    gk_escape(key, strlen(key), QUOTE_MAX, q, sizeof(q)));
	}
	if (nbad > 0) {
		gk_seterr(err, errlen, "unknown field%s %s%s for %s; use %s",
		    nbad > 1 ? "s" : "", names, nbad > 4 ? ", ..." : "",
		    spec->name, spec->usage);
		return GK_CTL_UNKNOWN_FIELD;
	}
	for (f = 0; f < GK_CTL_NFIELDS; f++) {
		if ((spec->required & gk_ctl_fields[f].bit & ~have) != 0) {
			gk_seterr(err, errlen, "missing \"%s\" for %s; use %s",
			    gk_ctl_fields[f].name, spec->name, spec->usage);
			return GK_CTL_MISSING_FIELD;
		}
	}
	return GK_CTL_OK;
}

static enum gk_ctl_status
parse_source(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	enum gk_ctl_status st;
	char q[QUOTE_MAX * 4 + 8];
	const char *s;
	size_t n;

	if ((st = get_string(v, "source", &s, &n, err, errlen)) != GK_CTL_OK)
		return st;
	if (n > GK_CTL_SOURCE_MAX || gk_addr_parse(s, &out->source_addr)
	    == -1) {
		gk_seterr(err, errlen, "invalid source address '%s': give the "
		    "cage's IPv4 or IPv6 address, e.g. \"10.143.0.2\"",
		    gk_escape(s, n, QUOTE_MAX, q, sizeof(q)));
		return GK_CTL_BAD_VALUE;
	}
	memcpy(out->source, s, n + 1);
	return GK_CTL_OK;
}

static enum gk_ctl_status
parse_label(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	enum gk_ctl_status st;
	const char *s;
	size_t i, n;

	if ((st = get_string(v, "label", &s, &n, err, errlen)) != GK_CTL_OK)
		return st;
	if (n > GK_CAGE_LABEL_MAX) {
		gk_seterr(err, errlen, "\"label\" is %zu bytes; at most %d are "
		    "allowed", n, GK_CAGE_LABEL_MAX);
		return GK_CTL_BAD_VALUE;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < 0x20 || s[i] > 0x7e) {
			gk_seterr(err, errlen, "\"label\" has a non-printable or "
			    "non-ASCII byte at offset %zu; use printable "
			    "ASCII only", i);
			return GK_CTL_BAD_VALUE;
		}
	}
	memcpy(out->label, s, n + 1);
	return GK_CTL_OK;
}

static enum gk_ctl_status
parse_id(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	enum gk_ctl_status st;
	char q[QUOTE_MAX * 4 + 8];
	const char *s;
	size_t i, n;

	if ((st = get_string(v, "id", &s, &n, err, errlen)) != GK_CTL_OK)
		return st;
	for (i = 0; i < n; i++) {
		if ((s[i] < 'a' || s[i] > 'z') && (s[i] < '0' || s[i] > '9'))
			break;
	}
	if (n != GK_CAGE_ID_LEN || i != n) {
		gk_seterr(err, errlen, "invalid cage id '%s': an id is %d "
		    "characters a-z and 0-9, as gatekeeperctl list shows "
		    "it", gk_escape(s, n, QUOTE_MAX, q, sizeof(q)),
		    GK_CAGE_ID_LEN);
		return GK_CTL_BAD_VALUE;
	}
	memcpy(out->id, s, n + 1);
	return GK_CTL_OK;
}

/* "allow", "add" or "remove": an array of pattern strings, copied. */
static enum gk_ctl_status
parse_patterns(struct json_object *v, const char *field, char ***outp,
    size_t *np, char *err, size_t errlen)
{
	struct json_object *e;
	const char *s;
	size_t i, n, len;

	if (!json_object_is_type(v, json_type_array)) {
		gk_seterr(err, errlen, "\"%s\" must be an array of pattern "
		    "strings such as [\"*.example.com\"], not %s", field,
		    type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	if ((n = json_object_array_length(v)) > GK_ALLOWLIST_MAX) {
		gk_seterr(err, errlen, "\"%s\" has %zu patterns; at most %d "
		    "are allowed", field, n, GK_ALLOWLIST_MAX);
		return GK_CTL_BAD_VALUE;
	}
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string)) {
			gk_seterr(err, errlen, "%s[%zu] must be a pattern "
			    "string such as \"*.example.com\", not %s", field,
			    i, type_name(e));
			return GK_CTL_BAD_TYPE;
		}
		s = json_object_get_string(e);
		len = (size_t)json_object_get_string_len(e);
		if (memchr(s, '\0', len) != NULL) {
			gk_seterr(err, errlen, "%s[%zu] contains a NUL "
			    "character", field, i);
			return GK_CTL_BAD_VALUE;
		}
	}
	if ((*outp = calloc(n + 1, sizeof(**outp))) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (((*outp)[i] = strdup(json_object_get_string(e))) == NULL)
			goto nomem;
		(*np)++;
	}
	return GK_CTL_OK;
nomem:
	gk_seterr(err, errlen, "out of memory");
	return GK_CTL_NOMEM;
}

/* update: "allow" (the whole list) or "add"/"remove" (a change). */
static enum gk_ctl_status
parse_update(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st = GK_CTL_OK;
	bool allow = json_object_object_get_ex(obj, "allow", &v);

	if (json_object_object_get_ex(obj, "add", &v))
		st = parse_patterns(v, "add", &out->add, &out->nadd, err,
		    errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "remove", &v))
		st = parse_patterns(v, "remove", &out->remove, &out->nremove,
		    err, errlen);
	if (st != GK_CTL_OK)
		return st;
	out->edit = out->add != NULL || out->remove != NULL;
	if (allow && out->edit) {
		gk_seterr(err, errlen, "cage.update takes either \"allow\" (the "
		    "whole new allowlist) or \"add\"/\"remove\" (a change to "
		    "it), not both");
		return GK_CTL_BAD_VALUE;
	}
	if (!allow && !out->edit) {
		gk_seterr(err, errlen, "missing \"allow\" for cage.update; use "
		    "%s", gk_ctl_op_specs[GK_CTL_OP_CAGE_UPDATE].usage);
		return GK_CTL_MISSING_FIELD;
	}
	if (out->edit && out->nadd + out->nremove == 0) {
		gk_seterr(err, errlen, "cage.update: \"add\" and \"remove\" "
		    "are both empty; name at least one pattern");
		return GK_CTL_BAD_VALUE;
	}
	return GK_CTL_OK;
}

/* cage.create names its cage by exactly one of "source" and "netns". */
static enum gk_ctl_status
parse_netns(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	bool has_source;

	has_source = json_object_object_get_ex(obj, "source", NULL);
	if (!json_object_object_get_ex(obj, "netns", &v)) {
		if (has_source && json_object_object_get_ex(obj, "transparent",
		    NULL)) {
			gk_seterr(err, errlen, "\"transparent\" applies to cages "
			    "made from a network namespace (\"netns\":true), "
			    "not to a \"source\" cage");
			return GK_CTL_BAD_VALUE;
		}
		if (has_source)
			return GK_CTL_OK;
		gk_seterr(err, errlen, "missing \"source\" or \"netns\" for "
		    "cage.create; use %s",
		    gk_ctl_op_specs[GK_CTL_OP_CAGE_CREATE].usage);
		return GK_CTL_MISSING_FIELD;
	}
	if (!json_object_is_type(v, json_type_boolean) ||
	    !json_object_get_boolean(v)) {
		gk_seterr(err, errlen, "\"netns\" must be true (and the "
		    "namespace fd sent with the request line), not %s",
		    json_object_is_type(v, json_type_boolean) ? "false" :
		    type_name(v));
		return json_object_is_type(v, json_type_boolean) ?
		    GK_CTL_BAD_VALUE : GK_CTL_BAD_TYPE;
	}
	if (has_source) {
		gk_seterr(err, errlen, "give either \"source\" or \"netns\" "
		    "for cage.create, not both: a namespace cage gets its "
		    "address from gatekeeperd");
		return GK_CTL_BAD_VALUE;
	}
	out->netns = true;
	out->transparent = true;
	if (!json_object_object_get_ex(obj, "transparent", &v))
		return GK_CTL_OK;
	if (!json_object_is_type(v, json_type_boolean)) {
		gk_seterr(err, errlen, "\"transparent\" must be true or false, "
		    "not %s", type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	out->transparent = json_object_get_boolean(v);
	return GK_CTL_OK;
}

static enum gk_ctl_status parse_flag(struct json_object *, const char *,
    bool *, char *, size_t);

/* A whole number member of "limits" within [min, max]; absent: 0. */
static enum gk_ctl_status
limit_int(struct json_object *obj, const char *key, uint64_t min,
    uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(obj, key, &v))
		return GK_CTL_OK;
	if (!json_object_is_type(v, json_type_int)) {
		gk_seterr(err, errlen, "\"limits\".\"%s\" must be a whole "
		    "number, not %s", key, type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n < min || (uint64_t)n > max) {
		gk_seterr(err, errlen, "\"limits\".\"%s\" is %lld; it must be "
		    "%llu to %llu", key, (long long)n, (unsigned long long)min,
		    (unsigned long long)max);
		return GK_CTL_BAD_VALUE;
	}
	*out = (uint64_t)n;
	return GK_CTL_OK;
}

/* "cpus": a number of CPUs, 0.01 to 1024, into *out (millis). */
static enum gk_ctl_status
limit_cpus(struct json_object *v, uint32_t *out, char *err, size_t errlen)
{
	struct json_object *c;
	double d;

	if (!json_object_object_get_ex(v, "cpus", &c))
		return GK_CTL_OK;
	if (!json_object_is_type(c, json_type_int) &&
	    !json_object_is_type(c, json_type_double)) {
		gk_seterr(err, errlen, "\"limits\".\"cpus\" must be a number, "
		    "not %s", type_name(c));
		return GK_CTL_BAD_TYPE;
	}
	d = json_object_get_double(c) * 1000.0;
	if (!(d >= GK_RLIM_CPUS_MIN - 0.5 && d <= GK_RLIM_CPUS_MAX + 0.5)) {
		gk_seterr(err, errlen, "\"limits\".\"cpus\" must be 0.01 to "
		    "1024");
		return GK_CTL_BAD_VALUE;
	}
	*out = (uint32_t)(d + 0.5);
	return GK_CTL_OK;
}

static enum gk_ctl_status
parse_limits(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	static const char *const known[] = { "memory", "pids", "cpus",
	    "best_effort" };
	enum gk_ctl_status st;
	uint64_t n = 0;
	size_t i;

	if (!json_object_is_type(v, json_type_object)) {
		gk_seterr(err, errlen, "\"limits\" must be an object such as "
		    "{\"memory\":268435456,\"pids\":64,\"cpus\":1.5}, not %s",
		    type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	json_object_object_foreach(v, key, val) {
		(void)val;
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			gk_seterr(err, errlen, "unknown member of \"limits\": "
			    "\"%.48s\" (known: memory, pids, cpus, "
			    "best_effort)", key);
			return GK_CTL_UNKNOWN_FIELD;
		}
	}
	if (!out->netns) {
		gk_seterr(err, errlen, "\"limits\" apply to a namespace cage "
		    "(\"netns\":true) only: its processes are what they "
		    "limit");
		return GK_CTL_BAD_VALUE;
	}
	if ((st = limit_int(v, "memory", GK_RLIM_MEMORY_MIN,
	    GK_RLIM_MEMORY_MAX, &out->limits.memory, err, errlen)) !=
	    GK_CTL_OK ||
	    (st = limit_int(v, "pids", 1, GK_RLIM_PIDS_MAX, &n, err,
	    errlen)) != GK_CTL_OK)
		return st;
	out->limits.pids = (uint32_t)n;
	if ((st = limit_cpus(v, &out->limits.cpus, err, errlen)) != GK_CTL_OK)
		return st;
	return parse_flag(v, "best_effort", &out->limits_best_effort, err,
	    errlen);
}

/* "reattach": the cgroup name the first create's reply gave, or "". */
static enum gk_ctl_status
parse_reattach(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	enum gk_ctl_status st;
	const char *s;
	size_t i, n;

	if ((st = get_string(v, "reattach", &s, &n, err, errlen)) !=
	    GK_CTL_OK)
		return st;
	if (!out->netns) {
		gk_seterr(err, errlen, "\"reattach\" is for a namespace cage "
		    "(\"netns\":true)");
		return GK_CTL_BAD_VALUE;
	}
	if (n > GK_CTL_CGNAME_MAX || (n > 0 && strncmp(s, "cage-", 5) != 0)) {
		gk_seterr(err, errlen, "\"reattach\" must be \"\" or the "
		    "cage-... cgroup name an earlier cage.create gave");
		return GK_CTL_BAD_VALUE;
	}
	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-' || (s[i] == '.' && i > 0 &&
		    s[i - 1] != '.'))) {
			gk_seterr(err, errlen, "\"reattach\" has a byte that "
			    "is not a-z, 0-9, '-' or a single '.' at offset %zu",
			    i);
			return GK_CTL_BAD_VALUE;
		}
	}
	memcpy(out->reattach_cg, s, n);
	out->reattach_cg[n] = '\0';
	out->reattach = true;
	return GK_CTL_OK;
}

/* An optional boolean member. */
static enum gk_ctl_status
parse_flag(struct json_object *obj, const char *key, bool *out, char *err,
    size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return GK_CTL_OK;
	if (!json_object_is_type(v, json_type_boolean)) {
		gk_seterr(err, errlen, "\"%s\" must be true or false, not %s",
		    key, type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	*out = json_object_get_boolean(v);
	return GK_CTL_OK;
}

/* create: "ask": true, "ask_timeout": seconds (only with it). */
static enum gk_ctl_status
parse_ask(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st;
	int64_t t;

	if ((st = parse_flag(obj, "ask", &out->ask, err, errlen)) !=
	    GK_CTL_OK)
		return st;
	if (out->ask && out->learn) {
		gk_seterr(err, errlen, "\"ask\" and \"learn\" exclude each "
		    "other: a learning cage reaches every name without asking");
		return GK_CTL_BAD_VALUE;
	}
	out->ask_timeout = GK_ASK_TIMEOUT_DEFAULT;
	if (!json_object_object_get_ex(obj, "ask_timeout", &v))
		return GK_CTL_OK;
	if (!out->ask) {
		gk_seterr(err, errlen, "\"ask_timeout\" is for a cage that "
		    "asks (\"ask\":true)");
		return GK_CTL_BAD_VALUE;
	}
	if (!json_object_is_type(v, json_type_int)) {
		gk_seterr(err, errlen, "\"ask_timeout\" must be a whole number "
		    "of seconds, not %s", type_name(v));
		return GK_CTL_BAD_TYPE;
	}
	t = json_object_get_int64(v);
	if (t < 1 || t > GK_ASK_TIMEOUT_MAX) {
		gk_seterr(err, errlen, "\"ask_timeout\" is %lld; it must be 1 "
		    "to %d seconds", (long long)t, GK_ASK_TIMEOUT_MAX);
		return GK_CTL_BAD_VALUE;
	}
	out->ask_timeout = (uint32_t)t;
	return GK_CTL_OK;
}

/* decide: "ask" (a question id), "decision", "by". */
static enum gk_ctl_status
parse_decide(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st;
	char q[QUOTE_MAX * 4 + 8];
	const char *s;
	size_t i, n;
	int d;

	/* both are required: check_fields saw them */
	if (!json_object_object_get_ex(obj, "ask", &v) ||
	    (st = get_string(v, "ask", &s, &n, err, errlen)) != GK_CTL_OK)
		return GK_CTL_BAD_TYPE;
	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (n == 0 || n > 19 || i != n || s[0] == '0') {
		gk_seterr(err, errlen, "invalid question id '%s': it is the "
		    "\"id\" of an \"ask\" event, decimal digits",
		    gk_escape(s, n, QUOTE_MAX, q, sizeof(q)));
		return GK_CTL_BAD_VALUE;
	}
	out->question = strtoull(s, NULL, 10);
	if (!json_object_object_get_ex(obj, "decision", &v) ||
	    (st = get_string(v, "decision", &s, &n, err, errlen)) !=
	    GK_CTL_OK)
		return GK_CTL_BAD_TYPE;
	for (d = 0; d < GK_DECISION_TIMEOUT; d++)
		if (strcmp(s, gk_ctl_decision_names[d]) == 0)
			break;
	if (d == GK_DECISION_TIMEOUT) {
		gk_seterr(err, errlen, "invalid decision '%s': once, run, "
		    "save or deny", gk_escape(s, n, QUOTE_MAX, q, sizeof(q)));
		return GK_CTL_BAD_VALUE;
	}
	out->decision = (enum gk_decision)d;
	snprintf(out->by, sizeof(out->by), "supervisor");
	if (!json_object_object_get_ex(obj, "by", &v))
		return GK_CTL_OK;
	if ((st = get_string(v, "by", &s, &n, err, errlen)) != GK_CTL_OK)
		return st;
	if (strcmp(s, "tty") != 0 && strcmp(s, "supervisor") != 0 &&
	    strcmp(s, "operator") != 0) {
		gk_seterr(err, errlen, "invalid \"by\" '%s': tty, supervisor "
		    "or operator", gk_escape(s, n, QUOTE_MAX, q, sizeof(q)));
		return GK_CTL_BAD_VALUE;
	}
	snprintf(out->by, sizeof(out->by), "%s", s);
	return GK_CTL_OK;
}

/* credential: "name", "placeholder", "value" (gk_ctlreq_cred.c checks
 * them) and "hosts"; all are required: check_fields saw them. */
static enum gk_ctl_status
parse_credential(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	static const char *const keys[] = { "name", "placeholder", "value" };
	struct json_object *v;
	enum gk_ctl_status st;
	const char *s[3];
	size_t n[3], i;

	for (i = 0; i < 3; i++) {
		if (!json_object_object_get_ex(obj, keys[i], &v))
			return GK_CTL_MISSING_FIELD;
		if ((st = get_string(v, keys[i], &s[i], &n[i], err, errlen)) !=
		    GK_CTL_OK)
			return st;
	}
	if ((st = gk_ctlreq_cred_name(s[0], n[0], out, err, errlen)) !=
	    GK_CTL_OK ||
	    (st = gk_ctlreq_cred_pair(s[1], n[1], s[2], n[2], out, err,
	    errlen)) != GK_CTL_OK)
		return st;
	if (!json_object_object_get_ex(obj, "hosts", &v))
		return GK_CTL_MISSING_FIELD;
	if ((st = parse_patterns(v, "hosts", &out->hosts, &out->nhosts, err,
	    errlen)) != GK_CTL_OK)
		return st;
	return gk_ctlreq_cred_hosts(out, err, errlen);
}

static enum gk_ctl_status
parse_fields(struct json_object *obj, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *v;
	enum gk_ctl_status st = GK_CTL_OK;

	if (out->op == GK_CTL_OP_CAGE_CREATE)
		st = parse_netns(obj, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "source", &v))
		st = parse_source(v, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "id", &v))
		st = parse_id(v, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "label", &v))
		st = parse_label(v, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "allow", &v))
		st = parse_patterns(v, "allow", &out->allow, &out->nallow, err,
		    errlen);
	if (st == GK_CTL_OK && out->op == GK_CTL_OP_CAGE_UPDATE)
		st = parse_update(obj, out, err, errlen);
	if (st == GK_CTL_OK)
		st = parse_flag(obj, "follow", &out->follow, err, errlen);
	if (st == GK_CTL_OK)
		st = parse_flag(obj, "events", &out->events, err, errlen);
	if (st == GK_CTL_OK)
		st = parse_flag(obj, "learn", &out->learn, err, errlen);
	if (st == GK_CTL_OK && out->op == GK_CTL_OP_CAGE_DECIDE)
		st = parse_decide(obj, out, err, errlen);
	else if (st == GK_CTL_OK)
		st = parse_ask(obj, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "limits", &v))
		st = parse_limits(v, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "max_upload", &v))
		st = gk_ctlreq_uploads(v, out, err, errlen);
	if (st == GK_CTL_OK && json_object_object_get_ex(obj, "reattach", &v))
		st = parse_reattach(v, out, err, errlen);
	if (st == GK_CTL_OK && out->op == GK_CTL_OP_CAGE_CREDENTIAL)
		st = parse_credential(obj, out, err, errlen);
	if (st == GK_CTL_OK)
		st = gk_ctlreq_life(obj, out, err, errlen);
	return st;
}

/* json-c's copy of a "value" (a secret), wiped before it is freed. */
static void
wipe_value(struct json_object *obj)
{
	struct json_object *v;

	if (json_object_is_type(obj, json_type_object) &&
	    json_object_object_get_ex(obj, "value", &v) &&
	    json_object_is_type(v, json_type_string))
		explicit_bzero((char *)json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
}

static enum gk_ctl_status
parse_object(const uint8_t *buf, size_t len, struct gk_ctlreq *out,
    char *err, size_t errlen)
{
	struct json_object *obj;
	enum gk_ctl_status st;
	size_t end;

	if (!gk_ctlreq_tokenize(buf, len, &obj, &end, err, errlen))
		return GK_CTL_BAD_JSON;
	while (end < len && gk_ctlreq_is_space(buf[end]))
		end++;
	if (end < len) {
		gk_seterr(err, errlen, "bad JSON: unexpected data at offset %zu "
		    "after the request; send one object per line", end);
		st = GK_CTL_BAD_JSON;
	} else if (!json_object_is_type(obj, json_type_object)) {
		gk_seterr(err, errlen, "a request must be a JSON object such as "
		    "{\"op\":\"stats\"}, not %s", type_name(obj));
		st = GK_CTL_NOT_OBJECT;
	} else if ((st = gk_ctlreq_check_dups(buf, len, obj, err, errlen)) ==
	    GK_CTL_OK && (st = parse_op(obj, out, err, errlen)) == GK_CTL_OK &&
	    (st = check_fields(obj, &gk_ctl_op_specs[out->op], err, errlen)) ==
	    GK_CTL_OK)
		st = parse_fields(obj, out, err, errlen);
	wipe_value(obj);
	json_object_put(obj);
	return st;
}

enum gk_ctl_status
gk_ctlreq_parse(const uint8_t *buf, size_t len, struct gk_ctlreq *out,
    char *err, size_t errlen)
{
	enum gk_ctl_status st;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (errlen > 0)
		err[0] = '\0';
	if (len > GK_CTL_LINE_MAX) {
		gk_seterr(err, errlen, "request line is %zu bytes; at most %d "
		    "are allowed", len, GK_CTL_LINE_MAX);
		return GK_CTL_TOO_LONG;
	}
	for (i = 0; i < len && gk_ctlreq_is_space(buf[i]); i++)
		;
	if (i == len) {
		gk_seterr(err, errlen, "empty request: send one JSON object per "
		    "line, e.g. {\"op\":\"stats\"}");
		return GK_CTL_EMPTY;
	}
	if ((st = gk_ctlreq_prescan(buf, len, err, errlen)) == GK_CTL_OK)
		st = parse_object(buf, len, out, err, errlen);
	if (st != GK_CTL_OK) {
		gk_ctlreq_clear(out);
		if (errlen > 0 && err[0] == '\0')
			gk_seterr(err, errlen, "%s", gk_ctl_strstatus(st));
	}
	return st;
}

void
gk_ctlreq_clear(struct gk_ctlreq *req)
{
	size_t i;

	if (req == NULL)
		return;
	for (i = 0; i < req->nallow; i++)
		free(req->allow[i]);
	free(req->allow);
	for (i = 0; i < req->nadd; i++)
		free(req->add[i]);
	free(req->add);
	for (i = 0; i < req->nremove; i++)
		free(req->remove[i]);
	free(req->remove);
	gk_ctlreq_cred_clear(req);
	free(req->uploads);
	gk_ctlreq_life_clear(req);
	memset(req, 0, sizeof(*req));
}
