/*
 * The formatters' shared machinery (a run into memory, aligned tables,
 * durations, UTC stamps) and the short replies: cage.update,
 * cage.destroy, reload, stats. The cage and denial formatters are in
 * ctl_fmt_cage.c and ctl_fmt_denials.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "spawner/ctl/ctl_fmt_int.h"

#define STATS_INDENT	2

static const struct ctl_fmt_ctx no_ctx;

/* Parse the line: r->o and OK, or the status it is. */
static void
fmt_parse(struct fmt_run *r, const struct fmt_job *job, const char *line,
    size_t len)
{
	if (!job->event)
		r->st = ctl_reply_check(line, len, &r->o, &r->rd);
	else if ((r->o = ctl_reply_object(line, len, &r->rd)) == NULL)
		r->st = CTL_REPLY_MALFORMED;
	else
		r->st = CTL_REPLY_OK;
}

enum ctl_reply_status
fmt_do(const struct fmt_job *job, const char *line, size_t len,
    const struct ctl_fmt_ctx *ctx, FILE *out, char *msg, size_t msglen)
{
	struct fmt_run r;
	char *buf = NULL;
	size_t size = 0;
	bool shown;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx != NULL ? ctx : &no_ctx;
	r.arg = job->arg;
	fmt_parse(&r, job, line, len);
	if (r.st == CTL_REPLY_OK &&
	    (r.mem = open_memstream(&buf, &size)) == NULL) {
		ctl_rd_fail(&r.rd, "out of memory");
		r.st = CTL_REPLY_MALFORMED;
	}
	if (r.st == CTL_REPLY_OK) {
		job->body(&r);
		if (fclose(r.mem) != 0)
			ctl_rd_fail(&r.rd, "out of memory");
	}
	shown = r.st == CTL_REPLY_OK || r.st == CTL_REPLY_END;
	if (shown && r.rd.bad)
		r.st = CTL_REPLY_MALFORMED;
	else if (shown && out != NULL && size > 0)
		fwrite(buf, 1, size, out);
	free(buf);
	json_object_put(r.o);
	if (r.st == CTL_REPLY_OK || r.st == CTL_REPLY_END) {
		if (msglen > 0)
			msg[0] = '\0';
	} else
		ctl_reply_message(r.st, &r.rd, msg, msglen);
	return r.st;
}

/* ---- tables ----------------------------------------------------------- */

void
table_init(struct ctl_table *t, size_t ncols, const char *const *header)
{
	char cells[CTL_TABLE_COLS_MAX][CTL_CELL_MAX];
	size_t i;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols < CTL_TABLE_COLS_MAX ? ncols : CTL_TABLE_COLS_MAX;
	for (i = 0; i < t->ncols; i++)
		snprintf(cells[i], sizeof(cells[i]), "%s", header[i]);
	table_row(t, cells);
}

void
table_row(struct ctl_table *t, char cells[][CTL_CELL_MAX])
{
	char **nc, buf[CTL_CELL_MAX];
	size_t i, n;

	if (t->nomem)
		return;
	nc = reallocarray(t->cells, (t->nrows + 1) * t->ncols, sizeof(*nc));
	if (nc == NULL) {
		t->nomem = true;
		return;
	}
	t->cells = nc;
	nc += t->nrows * t->ncols;
	for (i = 0; i < t->ncols; i++) {
		nc[i] = strdup(gk_printable(cells[i], buf, sizeof(buf)));
		if (nc[i] == NULL)
			t->nomem = true;
		else if ((n = strlen(buf)) > t->width[i])
			t->width[i] = n;
	}
	t->nrows++;
}

void
table_end(struct ctl_table *t, FILE *f)
{
	const char *c;
	size_t r, i;

	for (r = 0; r < t->nrows && !t->nomem; r++) {
		for (i = 0; i < t->ncols; i++) {
			c = t->cells[r * t->ncols + i];
			if (i + 1 < t->ncols)
				fprintf(f, "%-*s  ", (int)t->width[i], c);
			else
				fprintf(f, "%s\n", c);
		}
	}
	if (t->nomem)
		fputs("(out of memory)\n", f);
	if (t->cells != NULL)
		for (i = 0; i < t->nrows * t->ncols; i++)
			free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* ---- small values ----------------------------------------------------- */

void
ctl_fmt_duration(uint64_t s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60,
		    s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
		    s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRIu64 "d%02" PRIu64 "h", s / 86400,
		    s % 86400 / 3600);
}

static bool
digits(const char *s, size_t n, int *out)
{
	size_t i;

	*out = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*out = *out * 10 + (s[i] - '0');
	}
	return true;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int64_t
ctl_fmt_parse_utc(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int y, mo, d, h, mi, sec, frac;
	size_t n = strlen(s);

	if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' || s[n - 1] != 'Z' ||
	    !digits(s, 4, &y) || !digits(s + 5, 2, &mo) ||
	    !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
	    !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
		return -1;
	if (n != 20 && (n < 22 || n > 30 || s[19] != '.' ||
	    !digits(s + 20, n - 21, &frac)))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
}

const char *
fmt_u64(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

void
fmt_target(const char *host, uint64_t port, char *buf, size_t len)
{
	char h[CTL_HOST_MAX];

	gk_printable(host, h, sizeof(h));
	if (port == 0)
		snprintf(buf, len, "%s", h);
	else if (strchr(h, ':') != NULL)
		snprintf(buf, len, "[%s]:%" PRIu64, h, port);
	else
		snprintf(buf, len, "%s:%" PRIu64, h, port);
}

uint64_t
fmt_port(struct ctl_rd *rd, struct json_object *o)
{
	uint64_t port = ctl_rd_u64(rd, o, "port");

	if (port > 65535) {
		ctl_rd_fail(rd, "\"port\" %" PRIu64 " is over 65535", port);
		return 0;
	}
	return port;
}

/* ---- cage.update, cage.destroy, reload -------------------------------- */

static void
update_body(struct fmt_run *r)
{
	struct json_object *cage, *allow, *p;
	const char *label;
	size_t i, n;

	cage = ctl_rd_obj(&r->rd, r->o, "cage");
	ctl_put(r->mem, ctl_rd_str(&r->rd, cage, "id"));
	if ((label = ctl_rd_str(&r->rd, cage, "label"))[0] != '\0') {
		fputs(" (", r->mem);
		ctl_put(r->mem, label);
		fputc(')', r->mem);
	}
	allow = ctl_rd_arr(&r->rd, cage, "allow");
	n = allow != NULL ? json_object_array_length(allow) : 0;
	fprintf(r->mem, " allowlist:%s\n", n == 0 ? " (none)" : "");
	for (i = 0; i < n; i++) {
		p = ctl_rd_at(&r->rd, allow, i, json_type_string, "allow");
		if (p == NULL)
			break;
		fputs("  ", r->mem);
		ctl_put(r->mem, json_object_get_string(p));
		fputc('\n', r->mem);
	}
}

FMT_DEFINE(ctl_fmt_update, update_body)

static void
destroy_body(struct fmt_run *r)
{
	fputs("destroyed ", r->mem);
	ctl_put(r->mem, ctl_rd_str(&r->rd, r->o, "destroyed"));
	fputc('\n', r->mem);
}

FMT_DEFINE(ctl_fmt_destroy, destroy_body)

static void
reload_body(struct fmt_run *r)
{
	struct json_object *rl;
	const char *policy;
	uint64_t cages;

	rl = ctl_rd_obj(&r->rd, r->o, "reload");
	policy = ctl_rd_str(&r->rd, rl, "policy");
	cages = ctl_rd_u64(&r->rd, rl, "cages");
	fputs("reloaded: ", r->mem);
	if (strcmp(policy, "none") == 0)
		fputs("no host policy", r->mem);
	else {
		fputs("host policy ", r->mem);
		ctl_put(r->mem, policy);
	}
	fprintf(r->mem, ", %" PRIu64 " cage%s kept\n", cages,
	    cages == 1 ? "" : "s");
}

FMT_DEFINE(ctl_fmt_reload, reload_body)

/* ---- stats ------------------------------------------------------------ */

/* Does every member of o hold a number? */
static bool
all_numbers(struct json_object *o)
{
	struct json_object_iterator it, end;

	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it))
		if (!json_object_is_type(json_object_iter_peek_value(&it),
		    json_type_int))
			return false;
	return true;
}

void
fmt_counters(struct ctl_rd *rd, FILE *f, struct json_object *o)
{
	struct json_object_iterator it, end;
	uint64_t v;
	bool any = false;

	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		if (!ctl_json_u64(json_object_iter_peek_value(&it), &v)) {
			ctl_rd_fail(rd, "\"%s\" is not a whole number >= 0",
			    json_object_iter_peek_name(&it));
			return;
		}
		if (v == 0)
			continue;
		fprintf(f, "%s", any ? ", " : " ");
		ctl_put(f, json_object_iter_peek_name(&it));
		fprintf(f, " %" PRIu64, v);
		any = true;
	}
	if (!any)
		fputs(" 0", f);
}

/* One counter or group, as "key: ..." at indent; nested groups below. */
static void
stats_member(struct ctl_rd *rd, FILE *f, const char *key,
    struct json_object *v, int indent)
{
	struct json_object_iterator it, end;
	uint64_t n = 0;

	fprintf(f, "%*s", indent, "");
	ctl_put(f, key);
	fputc(':', f);
	if (json_object_is_type(v, json_type_object) && all_numbers(v)) {
		fmt_counters(rd, f, v);
		fputc('\n', f);
		return;
	}
	if (!json_object_is_type(v, json_type_object)) {
		if (!ctl_json_u64(v, &n))
			ctl_rd_fail(rd, "stats: \"%s\" is not a whole number "
			    ">= 0 nor a group of them", key);
		fprintf(f, " %" PRIu64 "\n", n);
		return;
	}
	fputc('\n', f);
	it = json_object_iter_begin(v);
	end = json_object_iter_end(v);
	for (; !json_object_iter_equal(&it, &end) && !rd->bad;
	    json_object_iter_next(&it))
		stats_member(rd, f, json_object_iter_peek_name(&it),
		    json_object_iter_peek_value(&it), indent + STATS_INDENT);
}

static void
stats_body(struct fmt_run *r)
{
	struct json_object_iterator it, end;
	struct json_object *s;

	if ((s = ctl_rd_obj(&r->rd, r->o, "stats")) == NULL)
		return;
	it = json_object_iter_begin(s);
	end = json_object_iter_end(s);
	for (; !json_object_iter_equal(&it, &end) && !r->rd.bad;
	    json_object_iter_next(&it))
		stats_member(&r->rd, r->mem, json_object_iter_peek_name(&it),
		    json_object_iter_peek_value(&it), 0);
}

FMT_DEFINE(ctl_fmt_stats, stats_body)

ctl_fmt_fn
ctl_fmt_for(enum ctl_cmd cmd)
{
	switch (cmd) {
	case CTL_CMD_LIST:
		return ctl_fmt_list;
	case CTL_CMD_SHOW:
		return ctl_fmt_show;
	case CTL_CMD_DENIALS:
		return ctl_fmt_denials;
	case CTL_CMD_ALLOW:
	case CTL_CMD_REVOKE:
		return ctl_fmt_update;
	case CTL_CMD_DESTROY:
		return ctl_fmt_destroy;
	case CTL_CMD_STATS:
		return ctl_fmt_stats;
	case CTL_CMD_RELOAD:
		return ctl_fmt_reload;
	case CTL_CMD_PENDING:
	case CTL_CMD_APPROVE:
	case CTL_CMD_DENY:
		return ctl_fmt_pending;
	case CTL_CMD_NONE:
	case CTL_CMD__MAX:
		break;
	}
	return NULL;
}
