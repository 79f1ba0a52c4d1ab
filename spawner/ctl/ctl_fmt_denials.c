/*
 * Denials and questions said to a person: the denials reply and the
 * events of denials --follow, one line each; pending as an aligned
 * table; the question approve and deny answer, and their result.
 *
 *   2026-11-25T10:00:00.123Z k3j9x0qa (demo) http example.org:443
 *   not_allowlisted x3
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "spawner/ctl/ctl_fmt_int.h"

#define WORD_MAX	64	/* a kind, a reason, a stamp, shown */

/* How a denial line is made. */
enum {
	DL_CAGE = 1,		/* with its cage and label */
	DL_COUNT = 2,		/* " xN" when "count" > 1 */
	DL_WHY = 4,		/* " - why" when there is one */
};

static void
put_word(FILE *f, const char *s)
{
	char w[WORD_MAX];

	fputs(gk_printable(s, w, sizeof(w)), f);
}

/* " CAGE (LABEL)", or " CAGE" when it has no label. */
static void
put_cage(struct ctl_rd *rd, FILE *f, struct json_object *o)
{
	const char *label;

	fputc(' ', f);
	put_word(f, ctl_rd_str(rd, o, "cage"));
	if ((label = ctl_rd_str_opt(rd, o, "label")) != NULL &&
	    label[0] != '\0') {
		fputs(" (", f);
		ctl_put(f, label);
		fputc(')', f);
	}
}

static void
denial_line(struct ctl_rd *rd, FILE *f, struct json_object *d, int how)
{
	char target[CTL_CELL_MAX];
	const char *kind, *host, *why;
	uint64_t port, count;

	put_word(f, ctl_rd_str(rd, d, "time"));
	if (how & DL_CAGE)
		put_cage(rd, f, d);
	kind = ctl_rd_str(rd, d, "kind");
	host = ctl_rd_str(rd, d, "host");
	port = fmt_port(rd, d);
	fmt_target(host, strcmp(kind, "dns") == 0 ? 0 : port, target,
	    sizeof(target));
	fputc(' ', f);
	put_word(f, kind);
	fprintf(f, " %s ", target);
	put_word(f, ctl_rd_str(rd, d, "reason"));
	if ((how & DL_COUNT) && ctl_rd_u64_opt(rd, d, "count", &count) &&
	    count > 1)
		fprintf(f, " x%" PRIu64, count);
	if ((how & DL_WHY) && (why = ctl_rd_str_opt(rd, d, "why")) != NULL &&
	    why[0] != '\0') {
		fputs(" - ", f);
		ctl_put(f, why);
	}
	fputc('\n', f);
}

/* Each DENIAL of array a, one line each, indented by `indent`. */
static size_t
denial_lines(struct fmt_run *r, struct json_object *a, const char *what,
    int how, const char *indent)
{
	struct json_object *d;
	size_t i, n;

	n = a != NULL ? json_object_array_length(a) : 0;
	for (i = 0; i < n && !r->rd.bad; i++) {
		if ((d = ctl_rd_at(&r->rd, a, i, json_type_object,
		    what)) == NULL)
			break;
		fputs(indent, r->mem);
		denial_line(&r->rd, r->mem, d, how);
	}
	return n;
}

static void
denials_body(struct fmt_run *r)
{
	if (denial_lines(r, ctl_rd_arr(&r->rd, r->o, "denials"), "denials",
	    DL_CAGE | DL_COUNT, "") == 0 && !r->ctx->follow)
		fputs("no recent denials\n", r->mem);
}

FMT_DEFINE(ctl_fmt_denials, denials_body)

void
fmt_show_recent(struct fmt_run *r, struct json_object *a)
{
	if (a == NULL || json_object_array_length(a) == 0) {
		fputs("recent denials: (none)\n", r->mem);
		return;
	}
	fputs("recent denials:\n", r->mem);
	denial_lines(r, a, "recent", DL_COUNT, "  ");
}

/* ---- denials --follow ------------------------------------------------- */

static bool
followed(const struct ctl_fmt_ctx *ctx, const char *cage)
{
	return ctx->cage != NULL && ctx->cage[0] != '\0' &&
	    strcmp(ctx->cage, cage) == 0;
}

static void
event_body(struct fmt_run *r)
{
	const char *ev;
	uint64_t n;

	if (!json_object_object_get_ex(r->o, "event", NULL)) {
		/* a reply in the stream: only a refusal matters */
		r->st = ctl_reply_verdict(r->o, &r->rd);
		return;
	}
	ev = ctl_rd_str(&r->rd, r->o, "event");
	if (strcmp(ev, "deny") == 0)
		denial_line(&r->rd, r->mem, r->o, DL_CAGE | DL_WHY);
	else if (strcmp(ev, "deny.dropped") == 0) {
		n = ctl_rd_u64(&r->rd, r->o, "count");
		fprintf(r->mem, "-- %" PRIu64 " denial%s dropped "
		    "(gatekeeperctl read too slowly)\n", n, n == 1 ? "" : "s");
	} else if (strcmp(ev, "cage.end") == 0) {
		fputs("-- cage", r->mem);
		put_cage(&r->rd, r->mem, r->o);
		fputs(" ended\n", r->mem);
		if (followed(r->ctx, ctl_rd_str(&r->rd, r->o, "cage")))
			r->st = CTL_REPLY_END;
	}
}

CTL_FMT_FN(ctl_fmt_event)
{
	static const struct fmt_job job = { event_body, true, NULL };

	return fmt_do(&job, line, len, ctx, out, msg, msglen);
}

/* ---- questions -------------------------------------------------------- */

/* A question's "id": 1..CTL_QID_MAX digits; its value in *v. */
static const char *
question_id(struct ctl_rd *rd, struct json_object *q, uint64_t *v)
{
	const char *id = ctl_rd_str(rd, q, "id");
	uint64_t n = 0;
	size_t i;

	for (i = 0; id[i] != '\0'; i++) {
		if (i >= CTL_QID_MAX || id[i] < '0' || id[i] > '9' ||
		    n > (UINT64_MAX - (uint64_t)(id[i] - '0')) / 10)
			break;
		n = n * 10 + (uint64_t)(id[i] - '0');
	}
	if (!rd->bad && (i == 0 || id[i] != '\0'))
		ctl_rd_fail(rd, "a question's \"id\" is not a decimal number");
	*v = n;
	return id;
}

/* An optional count as text ("-" when absent). */
static void
opt_cell(struct ctl_rd *rd, struct json_object *q, const char *key,
    bool duration, char *buf, size_t len)
{
	uint64_t v;

	if (!ctl_rd_u64_opt(rd, q, key, &v))
		snprintf(buf, len, "-");
	else if (duration)
		ctl_fmt_duration(v, buf, len);
	else
		fmt_u64(v, buf, len);
}

enum q_col {
	Q_ID, Q_CAGE, Q_LABEL, Q_KIND, Q_TARGET, Q_AGE, Q_EXPIRES, Q_CONNS,
	Q__MAX
};

static const char *const pending_header[Q__MAX] = {
	"QID", "CAGE", "LABEL", "KIND", "TARGET", "AGE", "EXPIRES", "CONNS",
};

static void
pending_row(struct ctl_rd *rd, struct ctl_table *t, struct json_object *q)
{
	char cols[Q__MAX][CTL_CELL_MAX];
	const char *label;
	uint64_t id, port;

	snprintf(cols[Q_ID], CTL_CELL_MAX, "%s", question_id(rd, q, &id));
	snprintf(cols[Q_CAGE], CTL_CELL_MAX, "%s", ctl_rd_str(rd, q, "cage"));
	label = ctl_rd_str_opt(rd, q, "label");
	snprintf(cols[Q_LABEL], CTL_CELL_MAX, "%s", label != NULL &&
	    label[0] != '\0' ? label : "-");
	snprintf(cols[Q_KIND], CTL_CELL_MAX, "%s", ctl_rd_str(rd, q, "kind"));
	port = fmt_port(rd, q);
	fmt_target(ctl_rd_str(rd, q, "host"), port, cols[Q_TARGET],
	    CTL_CELL_MAX);
	opt_cell(rd, q, "age", true, cols[Q_AGE], CTL_CELL_MAX);
	opt_cell(rd, q, "expires_in", true, cols[Q_EXPIRES], CTL_CELL_MAX);
	opt_cell(rd, q, "connections", false, cols[Q_CONNS], CTL_CELL_MAX);
	table_row(t, cols);
}

static void
pending_body(struct fmt_run *r)
{
	struct json_object *qs, *q;
	struct ctl_table t;
	size_t i, n;

	qs = ctl_rd_arr(&r->rd, r->o, "questions");
	n = qs != NULL ? json_object_array_length(qs) : 0;
	if (n == 0) {
		fputs("no pending questions\n", r->mem);
		return;
	}
	table_init(&t, Q__MAX, pending_header);
	for (i = 0; i < n && !r->rd.bad; i++)
		if ((q = ctl_rd_at(&r->rd, qs, i, json_type_object,
		    "questions")) != NULL)
			pending_row(&r->rd, &t, q);
	table_end(&t, r->mem);
}

FMT_DEFINE(ctl_fmt_pending, pending_body)

/* "  17 http example.org:443 (asked 3s ago, expires in 57s, 1
 * connection)" */
void
fmt_show_pending(struct fmt_run *r, struct json_object *a)
{
	struct json_object *q;
	char target[CTL_CELL_MAX], d[32];
	uint64_t id, v;
	size_t i, n;

	if (a == NULL)		/* not an asking cage */
		return;
	n = json_object_array_length(a);
	fprintf(r->mem, "pending questions:%s\n", n == 0 ? " (none)" : "");
	for (i = 0; i < n && !r->rd.bad; i++) {
		if ((q = ctl_rd_at(&r->rd, a, i, json_type_object,
		    "pending")) == NULL)
			break;
		fputs("  ", r->mem);
		put_word(r->mem, question_id(&r->rd, q, &id));
		fputc(' ', r->mem);
		put_word(r->mem, ctl_rd_str(&r->rd, q, "kind"));
		v = fmt_port(&r->rd, q);
		fmt_target(ctl_rd_str(&r->rd, q, "host"), v, target,
		    sizeof(target));
		fprintf(r->mem, " %s (", target);
		opt_cell(&r->rd, q, "age", true, d, sizeof(d));
		fprintf(r->mem, "asked %s ago", d);
		opt_cell(&r->rd, q, "expires_in", true, d, sizeof(d));
		fprintf(r->mem, ", expires in %s", d);
		if (ctl_rd_u64_opt(&r->rd, q, "connections", &v))
			fprintf(r->mem, ", %" PRIu64 " connection%s", v,
			    v == 1 ? "" : "s");
		fputs(")\n", r->mem);
	}
}

/* q filled from the QUESTION object o. */
static void
question_fill(struct ctl_rd *rd, struct json_object *o,
    struct ctl_question *q)
{
	const char *label;
	uint64_t id;

	gk_printable(question_id(rd, o, &id), q->id, sizeof(q->id));
	gk_printable(ctl_rd_str(rd, o, "cage"), q->cage, sizeof(q->cage));
	label = ctl_rd_str_opt(rd, o, "label");
	gk_printable(label != NULL ? label : "", q->label, sizeof(q->label));
	gk_printable(ctl_rd_str(rd, o, "kind"), q->kind, sizeof(q->kind));
	id = fmt_port(rd, o);
	fmt_target(ctl_rd_str(rd, o, "host"), id, q->target,
	    sizeof(q->target));
}

/* What approve and deny hand their bodies. */
struct find {
	uint64_t		 qid;
	struct ctl_question	*q;
	bool			*found;
};

struct decided {
	const struct ctl_question *q;
	enum ctl_decision	 d;
};

static void
find_body(struct fmt_run *r)
{
	struct find *f = r->arg;
	struct json_object *qs, *o;
	uint64_t id;
	size_t i, n;

	qs = ctl_rd_arr(&r->rd, r->o, "questions");
	n = qs != NULL ? json_object_array_length(qs) : 0;
	for (i = 0; i < n && !r->rd.bad && !*f->found; i++) {
		o = ctl_rd_at(&r->rd, qs, i, json_type_object, "questions");
		question_id(&r->rd, o, &id);
		if (!r->rd.bad && id == f->qid) {
			question_fill(&r->rd, o, f->q);
			*f->found = !r->rd.bad;
		}
	}
}

enum ctl_reply_status
ctl_fmt_find_question(const char *line, size_t len, uint64_t qid,
    struct ctl_question *q, bool *found, char *msg, size_t msglen)
{
	struct find f = { qid, q, found };
	const struct fmt_job job = { find_body, false, &f };

	memset(q, 0, sizeof(*q));
	*found = false;
	return fmt_do(&job, line, len, NULL, NULL, msg, msglen);
}

static void
decided_body(struct fmt_run *r)
{
	const struct decided *d = r->arg;

	if (d->d == CTL_DECIDE_DENY)
		fprintf(r->mem, "denied question %s:", d->q->id);
	else
		fprintf(r->mem, "approved question %s (%s):", d->q->id,
		    ctl_decision_name(d->d));
	fprintf(r->mem, " %s %s of cage %s", d->q->kind, d->q->target,
	    d->q->cage);
	if (d->q->label[0] != '\0')
		fprintf(r->mem, " (%s)", d->q->label);
	fputc('\n', r->mem);
}

enum ctl_reply_status
ctl_fmt_decided(const char *line, size_t len, const struct ctl_question *q,
    enum ctl_decision d, FILE *out, char *msg, size_t msglen)
{
	struct decided dd = { q, d };
	const struct fmt_job job = { decided_body, false, &dd };

	return fmt_do(&job, line, len, NULL, out, msg, msglen);
}
