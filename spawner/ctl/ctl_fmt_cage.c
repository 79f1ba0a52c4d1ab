/*
 * Cages said to a person: cage.list as an aligned table, cage.show as
 * "key: value" lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "spawner/ctl/ctl_fmt_int.h"

enum list_col {
	COL_ID, COL_LABEL, COL_UID, COL_SOURCE, COL_AGE, COL_PATTERNS,
	COL_DENIALS, COL_QUESTIONS, COL__MAX
};

static const char *const list_header[COL__MAX] = {
	"ID", "LABEL", "UID", "SOURCE", "AGE", "PATTERNS", "DENIALS",
	"QUESTIONS",
};

/* The sum of a group of counters ("denied"), saturating. */
static uint64_t
counter_sum(struct ctl_rd *rd, struct json_object *o)
{
	struct json_object_iterator it, end;
	uint64_t sum = 0, v;

	if (o == NULL)
		return 0;
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		if (!ctl_json_u64(json_object_iter_peek_value(&it), &v)) {
			ctl_rd_fail(rd, "\"denied\".\"%s\" is not a whole "
			    "number >= 0", json_object_iter_peek_name(&it));
			return 0;
		}
		sum = sum > UINT64_MAX - v ? UINT64_MAX : sum + v;
	}
	return sum;
}

/* How long ago `created` was: "3m12s", or "?" if it is not a stamp. */
static void
age(const char *created, time_t now, char *buf, size_t len)
{
	int64_t t = ctl_fmt_parse_utc(created);

	if (t < 0) {
		snprintf(buf, len, "?");
		return;
	}
	ctl_fmt_duration(now > t ? (uint64_t)(now - t) : 0, buf, len);
}

/* The patterns of an "allow" array, each checked to be a string. */
static size_t
allow_count(struct ctl_rd *rd, struct json_object *allow)
{
	size_t i, n;

	n = allow != NULL ? json_object_array_length(allow) : 0;
	for (i = 0; i < n; i++)
		ctl_rd_at(rd, allow, i, json_type_string, "allow");
	return n;
}

static void
list_row(struct ctl_rd *rd, struct ctl_table *t, struct json_object *c,
    time_t now)
{
	char cols[COL__MAX][CTL_CELL_MAX];
	const char *label;
	uint64_t q;

	snprintf(cols[COL_ID], CTL_CELL_MAX, "%s", ctl_rd_str(rd, c, "id"));
	label = ctl_rd_str(rd, c, "label");
	snprintf(cols[COL_LABEL], CTL_CELL_MAX, "%s", label[0] != '\0' ?
	    label : "-");
	fmt_u64(ctl_rd_u64(rd, c, "uid"), cols[COL_UID], CTL_CELL_MAX);
	snprintf(cols[COL_SOURCE], CTL_CELL_MAX, "%s",
	    ctl_rd_str(rd, c, "source"));
	age(ctl_rd_str(rd, c, "created"), now, cols[COL_AGE], CTL_CELL_MAX);
	snprintf(cols[COL_PATTERNS], CTL_CELL_MAX, "%zu",
	    allow_count(rd, ctl_rd_arr(rd, c, "allow")));
	fmt_u64(counter_sum(rd, ctl_rd_obj(rd, c, "denied")),
	    cols[COL_DENIALS], CTL_CELL_MAX);
	if (ctl_rd_u64_opt(rd, c, "questions", &q))
		fmt_u64(q, cols[COL_QUESTIONS], CTL_CELL_MAX);
	else
		snprintf(cols[COL_QUESTIONS], CTL_CELL_MAX, "-");
	table_row(t, cols);
}

static void
list_body(struct fmt_run *r)
{
	struct json_object *cages, *c;
	struct ctl_table t;
	bool asking = false;
	size_t i, n;

	cages = ctl_rd_arr(&r->rd, r->o, "cages");
	n = cages != NULL ? json_object_array_length(cages) : 0;
	for (i = 0; i < n; i++)
		if ((c = ctl_rd_at(&r->rd, cages, i, json_type_object,
		    "cages")) != NULL &&
		    json_object_object_get_ex(c, "questions", NULL))
			asking = true;
	if (n == 0) {
		fputs("no cages\n", r->mem);
		return;
	}
	table_init(&t, asking ? COL__MAX : COL__MAX - 1, list_header);
	for (i = 0; i < n && !r->rd.bad; i++)
		list_row(&r->rd, &t, json_object_array_get_idx(cages, i),
		    r->ctx->now);
	table_end(&t, r->mem);
}

FMT_DEFINE(ctl_fmt_list, list_body)

/* ---- cage.show -------------------------------------------------------- */

static void
show_str(struct fmt_run *r, struct json_object *c, const char *key,
    const char *name)
{
	const char *s = ctl_rd_str(&r->rd, c, key);

	fprintf(r->mem, "%s: ", name);
	ctl_put(r->mem, s[0] != '\0' ? s : "-");
	fputc('\n', r->mem);
}

static void
show_u64(struct fmt_run *r, struct json_object *c, const char *key,
    const char *name)
{
	uint64_t v;

	if (ctl_rd_u64_opt(&r->rd, c, key, &v))
		fprintf(r->mem, "%s: %" PRIu64 "\n", name, v);
}

static void
show_created(struct fmt_run *r, struct json_object *c, time_t now)
{
	const char *s = ctl_rd_str_opt(&r->rd, c, "created");
	char ago[32];

	if (s == NULL)
		return;
	fputs("created: ", r->mem);
	ctl_put(r->mem, s);
	age(s, now, ago, sizeof(ago));
	if (strcmp(ago, "?") != 0)
		fprintf(r->mem, " (%s ago)", ago);
	fputc('\n', r->mem);
}

/* "state: ended 42 s ago (exited)" of a cage that ended lately; false
 * for a live one. */
static bool
show_ended(struct fmt_run *r, struct json_object *c)
{
	const char *why;
	uint64_t ago;

	if (!ctl_rd_u64_opt(&r->rd, c, "ended", &ago))
		return false;
	fprintf(r->mem, "state: ended %" PRIu64 " s ago", ago);
	why = ctl_rd_str_opt(&r->rd, c, "end_reason");
	if (why != NULL && why[0] != '\0') {
		fputs(" (", r->mem);
		ctl_put(r->mem, why);
		fputc(')', r->mem);
	}
	fputc('\n', r->mem);
	return true;
}

/* "denied: dns 1, http 2" (the non-zero kinds), "denied: 0". */
static void
show_denied(struct fmt_run *r, struct json_object *c)
{
	struct json_object *d;

	if (!json_object_object_get_ex(c, "denied", &d))
		return;
	if ((d = ctl_rd_obj(&r->rd, c, "denied")) == NULL)
		return;
	fputs("denied:", r->mem);
	fmt_counters(&r->rd, r->mem, d);
	fputc('\n', r->mem);
}

static void
show_allow(struct fmt_run *r, struct json_object *c)
{
	struct json_object *a = ctl_rd_arr(&r->rd, c, "allow"), *p;
	size_t i, n = allow_count(&r->rd, a);

	fprintf(r->mem, "allow:%s\n", n == 0 ? " (none)" : "");
	for (i = 0; i < n && !r->rd.bad; i++) {
		p = json_object_array_get_idx(a, i);
		fputs("  ", r->mem);
		ctl_put(r->mem, json_object_get_string(p));
		fputc('\n', r->mem);
	}
}

/* "  github.com -> 140.82.112.3 (expires in 57s)" */
static void
show_pinned(struct fmt_run *r, struct json_object *a)
{
	struct json_object *p;
	char in[32];
	size_t i, n;

	n = a != NULL ? json_object_array_length(a) : 0;
	fprintf(r->mem, "pinned:%s\n", n == 0 ? " (none)" : "");
	for (i = 0; i < n && !r->rd.bad; i++) {
		p = ctl_rd_at(&r->rd, a, i, json_type_object, "pinned");
		fputs("  ", r->mem);
		ctl_put(r->mem, ctl_rd_str(&r->rd, p, "name"));
		fputs(" -> ", r->mem);
		ctl_put(r->mem, ctl_rd_str(&r->rd, p, "addr"));
		ctl_fmt_duration(ctl_rd_u64(&r->rd, p, "expires_in"), in,
		    sizeof(in));
		fprintf(r->mem, " (expires in %s)\n", in);
	}
}

/* Bytes for a person: "512 B", "1.5 KiB", "20.0 MiB". */
static void
fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	uint64_t unit = 1024;
	size_t i;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return;
	}
	for (i = 0; i < 5 && v / unit >= 1024; i++)
		unit *= 1024;
	snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", v / unit,
	    v % unit * 10 / unit, units[i]);
}

/* "up 1.0 MiB, down 2.3 KiB, 2 connections" of a traffic row. */
static void
traffic_row(struct fmt_run *r, struct json_object *row)
{
	char up[32], down[32];
	uint64_t n;

	fmt_bytes(ctl_rd_u64(&r->rd, row, "up"), up, sizeof(up));
	fmt_bytes(ctl_rd_u64(&r->rd, row, "down"), down, sizeof(down));
	n = ctl_rd_u64(&r->rd, row, "connections");
	fprintf(r->mem, "up %s, down %s, %" PRIu64 " connection%s\n", up,
	    down, n, n == 1 ? "" : "s");
}

/* "traffic: up ..., down ..., N connections", then one line per
 * destination (and "other", the ones past gatekeeperd's rows). */
static void
show_traffic(struct fmt_run *r, struct json_object *c)
{
	struct json_object *t, *a, *h;
	char target[CTL_CELL_MAX];
	size_t i, n;

	if (!json_object_object_get_ex(c, "traffic", NULL) ||
	    (t = ctl_rd_obj(&r->rd, c, "traffic")) == NULL)
		return;
	fputs("traffic: ", r->mem);
	traffic_row(r, t);
	a = ctl_rd_arr_opt(&r->rd, t, "hosts");
	n = a != NULL ? json_object_array_length(a) : 0;
	for (i = 0; i < n && !r->rd.bad; i++) {
		h = ctl_rd_at(&r->rd, a, i, json_type_object, "hosts");
		fmt_target(ctl_rd_str(&r->rd, h, "host"), fmt_port(&r->rd, h),
		    target, sizeof(target));
		fprintf(r->mem, "  %s ", target);
		traffic_row(r, h);
	}
	if (json_object_object_get_ex(t, "other", NULL) &&
	    (h = ctl_rd_obj(&r->rd, t, "other")) != NULL) {
		fputs("  (other destinations) ", r->mem);
		traffic_row(r, h);
	}
}

static void
show_body(struct fmt_run *r)
{
	struct json_object *c;
	bool ended;

	c = ctl_rd_obj(&r->rd, r->o, "cage");
	show_str(r, c, "id", "id");
	show_str(r, c, "label", "label");
	fprintf(r->mem, "uid: %" PRIu64 "\n", ctl_rd_u64(&r->rd, c, "uid"));
	show_str(r, c, "source", "source");
	show_created(r, c, r->ctx->now);
	ended = show_ended(r, c);
	show_u64(r, c, "pins", "pins");
	show_u64(r, c, "dns_queries", "dns queries");
	show_u64(r, c, "connections", "connections");
	show_denied(r, c);
	show_u64(r, c, "questions", "questions");
	show_allow(r, c);
	show_traffic(r, c);
	if (!ended)	/* its pins ended with it */
		show_pinned(r, ctl_rd_arr_opt(&r->rd, c, "pinned"));
	fmt_show_recent(r, ctl_rd_arr_opt(&r->rd, c, "recent"));
	fmt_show_pending(r, ctl_rd_arr_opt(&r->rd, c, "pending"));
}

FMT_DEFINE(ctl_fmt_show, show_body)
