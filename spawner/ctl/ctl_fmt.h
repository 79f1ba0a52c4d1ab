/*
 * ctl_fmt: gatekeeperd's replies said to a person. Each formatter takes
 * one reply line (bytes and length, without its newline), checks its
 * shape, and on CTL_REPLY_OK writes the text to `out`; on any other
 * status it writes nothing and `msg` holds gatekeeperd's refusal or what
 * was wrong with the line. Pure: any input is safe, nothing but `out` is
 * written, every string shown is printable ASCII (other bytes as '?').
 */
#ifndef CTL_FMT_H
#define CTL_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "spawner/ctl/ctl_args.h"
#include "spawner/ctl/ctl_reply.h"

#define CTL_HOST_MAX		256	/* a host name or address shown */

struct ctl_fmt_ctx {
	time_t		 now;	/* wall clock (UTC seconds), for ages */
	bool		 follow; /* denials --follow: events come next */
	const char	*cage;	/* denials --follow --cage ID; "" or NULL:
				   every visible cage */
};

/* A formatter: one reply line to text (CTL_FMT_FN(name) declares one). */
#define CTL_FMT_FN(name)						\
	enum ctl_reply_status name(const char *line, size_t len,	\
	    const struct ctl_fmt_ctx *ctx, FILE *out, char *msg,	\
	    size_t msglen)

typedef CTL_FMT_FN((*ctl_fmt_fn));

/* The formatter of the reply to cmd's (first) request. */
ctl_fmt_fn	 ctl_fmt_for(enum ctl_cmd cmd);

/* cage.list: a table, a header line first; "no cages" if none. */
CTL_FMT_FN(ctl_fmt_list);
/* cage.show: "key: value" lines; lists one item a line below their key. */
CTL_FMT_FN(ctl_fmt_show);
/* denials: one line each; "no recent denials" if none (nothing with
 * ctx->follow: the events come next). */
CTL_FMT_FN(ctl_fmt_denials);
/*
 * One event line of denials --follow: "deny" a denial line, "deny.dropped"
 * how many were dropped, "cage.end" that a cage ended; CTL_REPLY_END
 * (after its line) when that cage is ctx->cage. Other events print
 * nothing (OK); a reply line is checked like any reply. With out NULL
 * the line is only checked (--json prints it as it came).
 */
CTL_FMT_FN(ctl_fmt_event);
/* cage.update (allow, revoke): the cage's allowlist as it is now. */
CTL_FMT_FN(ctl_fmt_update);
/* cage.destroy: "destroyed ID". */
CTL_FMT_FN(ctl_fmt_destroy);
/* stats: each counter, nested groups one line each, zeros left out. */
CTL_FMT_FN(ctl_fmt_stats);
/* reload: the policy version and the cages kept. */
CTL_FMT_FN(ctl_fmt_reload);
/* pending: a table; "no pending questions" if none. */
CTL_FMT_FN(ctl_fmt_pending);

/* A question, as approve and deny need it from the pending reply. */
struct ctl_question {
	char		 id[CTL_QID_MAX + 1];	/* as gatekeeperd spells it */
	char		 cage[GK_CAGE_ID_LEN + 1];
	char		 label[GK_CAGE_LABEL_MAX + 1];	/* printable */
	char		 target[CTL_HOST_MAX + 16];	/* host:port */
	char		 kind[16];
};

/*
 * Find question qid (its "id" read as a decimal number) in a pending
 * reply. OK with *found and q filled; *found false if no question has
 * that id; other statuses as for the formatters.
 */
enum ctl_reply_status ctl_fmt_find_question(const char *line, size_t len,
		    uint64_t qid, struct ctl_question *q, bool *found,
		    char *msg, size_t msglen);
/* cage.decide's reply, then "approved question 17 (once): ..." or
 * "denied question 17: ...". */
enum ctl_reply_status ctl_fmt_decided(const char *line, size_t len,
		    const struct ctl_question *q, enum ctl_decision d,
		    FILE *out, char *msg, size_t msglen);

/* "5s", "3m12s", "2h05m", "3d04h". */
void		 ctl_fmt_duration(uint64_t seconds, char *buf, size_t len);
/* "2026-11-25T10:00:00Z" or with ".123" before the Z: seconds since the
 * epoch; -1 if s is not such a UTC stamp. */
int64_t		 ctl_fmt_parse_utc(const char *s);

#endif /* CTL_FMT_H */
