/*
 * ctl_reply: one line from gatekeeperd's control socket, read as JSON
 * and checked: a reply ({"ok":true,...} or {"ok":false,"error":...
 * [,"code":...]}) or an event line ({"event":...}). Field reads keep the
 * first problem (sticky), so a formatter reads everything it needs and
 * checks once. Pure: no I/O but the FILE * it is handed.
 */
#ifndef CTL_REPLY_H
#define CTL_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#define CTL_REPLY_DEPTH_MAX	8	/* nesting of objects and arrays */
#define CTL_MSG_MAX		4096	/* bytes of a message kept */

enum ctl_reply_status {
	CTL_REPLY_OK,
	CTL_REPLY_REFUSED,	/* "ok":false; the message is its "error" */
	CTL_REPLY_NOT_PERMITTED, /* the same, with "code":"not_permitted"
				   or an error starting "not permitted" */
	CTL_REPLY_MALFORMED,	/* the message says what is wrong */
	CTL_REPLY_END,		/* an event: the followed cage ended */
};

/* Reading one line: the first problem, then nothing more is read. */
struct ctl_rd {
	bool	 bad;
	char	 msg[CTL_MSG_MAX];
};

/*
 * The line (without its newline; a trailing "\r" and blanks are
 * ignored) as one JSON object: strict JSON, valid UTF-8, no NUL byte,
 * nothing after it, nested at most CTL_REPLY_DEPTH_MAX. NULL with
 * rd->bad otherwise. The caller puts the object.
 */
struct json_object *ctl_reply_object(const char *line, size_t len,
		    struct ctl_rd *rd);
/*
 * A reply: OK with *objp (the caller puts it), or REFUSED,
 * NOT_PERMITTED (rd->msg holds gatekeeperd's message) or MALFORMED
 * (rd->msg says why) with *objp NULL.
 */
enum ctl_reply_status ctl_reply_check(const char *line, size_t len,
		    struct json_object **objp, struct ctl_rd *rd);
/* The verdict of a reply already parsed (o): as ctl_reply_check(). */
enum ctl_reply_status ctl_reply_verdict(struct json_object *o,
		    struct ctl_rd *rd);
/* The message for the person of a status other than OK: gatekeeperd's
 * refusal as it said it, or what was wrong with its line. */
void		 ctl_reply_message(enum ctl_reply_status st,
		    const struct ctl_rd *rd, char *msg, size_t msglen);
/* The status of an rd after reads: MALFORMED if any failed, else OK. */
enum ctl_reply_status ctl_rd_status(const struct ctl_rd *rd);
/* Note a problem (the first one is kept). */
void		 ctl_rd_fail(struct ctl_rd *rd, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

/*
 * Members of o. A required one that is missing or of the wrong type
 * fails rd; the _opt forms fail only on the wrong type and return
 * NULL/false when the member is absent. Strings hold no NUL byte. On a
 * failure (or with rd->bad already) they return "" / 0 / NULL.
 */
const char	*ctl_rd_str(struct ctl_rd *rd, struct json_object *o,
		    const char *key);
const char	*ctl_rd_str_opt(struct ctl_rd *rd, struct json_object *o,
		    const char *key);
uint64_t	 ctl_rd_u64(struct ctl_rd *rd, struct json_object *o,
		    const char *key);
bool		 ctl_rd_u64_opt(struct ctl_rd *rd, struct json_object *o,
		    const char *key, uint64_t *v);
struct json_object *ctl_rd_obj(struct ctl_rd *rd, struct json_object *o,
		    const char *key);
struct json_object *ctl_rd_arr(struct ctl_rd *rd, struct json_object *o,
		    const char *key);
struct json_object *ctl_rd_arr_opt(struct ctl_rd *rd,
		    struct json_object *o, const char *key);
/* Element i of array a, which must be of type t (what names the array
 * in a message); NULL and rd failed otherwise. */
struct json_object *ctl_rd_at(struct ctl_rd *rd, struct json_object *a,
		    size_t i, enum json_type t, const char *what);
/* A JSON value as a whole number >= 0 (uint64); false if not one. */
bool		 ctl_json_u64(struct json_object *v, uint64_t *out);

/* s to f with every byte outside printable ASCII as '?' (gk_printable()
 * does the same into a buffer). */
void		 ctl_put(FILE *f, const char *s);

#endif /* CTL_REPLY_H */
