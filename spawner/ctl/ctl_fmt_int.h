/*
 * ctl_fmt_int: what the formatters share. fmt_do() checks the line, runs
 * a formatter's body, which writes its text into memory while it reads
 * the fields, and hands the text to the real output only if every read
 * succeeded (a malformed reply prints nothing). A table lays out cells
 * in aligned columns.
 */
#ifndef CTL_FMT_INT_H
#define CTL_FMT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "spawner/ctl/ctl_fmt.h"
#include "spawner/ctl/ctl_reply.h"

#define CTL_TABLE_COLS_MAX	10
#define CTL_CELL_MAX		(CTL_HOST_MAX + 16)	/* bytes of a cell */

/* One line being formatted. */
struct fmt_run {
	struct ctl_rd		 rd;
	struct json_object	*o;	/* the line's object */
	FILE			*mem;	/* the text, until it is checked */
	const struct ctl_fmt_ctx *ctx;	/* never NULL */
	void			*arg;	/* the body's own */
	enum ctl_reply_status	 st;	/* OK; a body may make it END, or
					   the verdict of a reply */
};

struct fmt_job {
	void		(*body)(struct fmt_run *r);
	bool		 event;		/* any object, not only a reply */
	void		*arg;
};

/* Run job over line (ctx may be NULL; out NULL: check only). */
enum ctl_reply_status fmt_do(const struct fmt_job *job, const char *line,
		    size_t len, const struct ctl_fmt_ctx *ctx, FILE *out,
		    char *msg, size_t msglen);

/* Define the formatter `name` as `body` run over a reply. */
#define FMT_DEFINE(name, body)						\
	CTL_FMT_FN(name)						\
	{								\
		static const struct fmt_job job_ = { body, false, NULL }; \
									\
		return fmt_do(&job_, line, len, ctx, out, msg, msglen);	\
	}

struct ctl_table {
	size_t		 ncols;
	size_t		 width[CTL_TABLE_COLS_MAX];
	char		**cells;	/* nrows * ncols, printable, owned */
	size_t		 nrows;
	bool		 nomem;
};

/* A table whose first row is the header (ncols names). */
void		 table_init(struct ctl_table *t, size_t ncols,
		    const char *const *header);
/* One row of ncols cells (shown printable, cut to CTL_CELL_MAX). */
void		 table_row(struct ctl_table *t, char cells[][CTL_CELL_MAX]);
/* Print it, aligned, two spaces between columns, the last one not
 * padded; then free it. */
void		 table_end(struct ctl_table *t, FILE *f);

/* "host:port" ("[v6]:port"; the host alone when port is 0). */
void		 fmt_target(const char *host, uint64_t port, char *buf,
		    size_t len);
/* A number as text. */
const char	*fmt_u64(uint64_t v, char *buf, size_t len);
/* The port member of o: 0..65535, else rd fails. */
uint64_t	 fmt_port(struct ctl_rd *rd, struct json_object *o);
/* " a 3, b 5": the non-zero members of a group of counters (" 0" if
 * every one is zero); a member that is not a whole number fails rd. */
void		 fmt_counters(struct ctl_rd *rd, FILE *f,
		    struct json_object *o);

/* In show (ctl_fmt_denials.c): the cage's recent denials ("(none)" when
 * a is NULL or empty) and open questions (nothing when a is NULL: not
 * an asking cage). */
void		 fmt_show_recent(struct fmt_run *r, struct json_object *a);
void		 fmt_show_pending(struct fmt_run *r, struct json_object *a);

#endif /* CTL_FMT_INT_H */
