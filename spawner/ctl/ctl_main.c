/*
 * gatekeeperctl: the operator's client of gatekeeperd's control socket.
 *
 *   argv -> struct ctl_args (ctl_args.c) -> connect (ctl_conn.c) -> the
 *   request (ctl_req.c) -> its reply, checked and said to a person
 *   (ctl_fmt*.c) or printed as it came (--json)
 *
 * approve and deny ask "pending" first, for the question's cage, then
 * send cage.decide on the same connection; denials --follow then reads
 * event lines until interrupted or the followed cage ends.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "spawner/ctl/ctl_args.h"
#include "spawner/ctl/ctl_conn.h"
#include "spawner/ctl/ctl_fmt.h"
#include "spawner/ctl/ctl_reply.h"
#include "spawner/ctl/ctl_req.h"

static void die(int, const char *, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void
die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gatekeeperctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void __attribute__((noreturn))
usage_error(const struct ctl_args *a, const char *err)
{
	if (a->cmd != CTL_CMD_NONE)
		die(CTL_EXIT_USAGE, "%s\nsee: gatekeeperctl %s --help", err,
		    ctl_cmd_name(a->cmd));
	die(CTL_EXIT_USAGE, "%s\nsee: gatekeeperctl --help", err);
}

/* The end of a reply that was not OK: its message, and the status. */
static int
not_ok(enum ctl_reply_status st, const char *msg)
{
	switch (st) {
	case CTL_REPLY_OK:
	case CTL_REPLY_END:
		return CTL_EXIT_OK;
	case CTL_REPLY_REFUSED:
		die(CTL_EXIT_REFUSED, "%s", msg);
	case CTL_REPLY_NOT_PERMITTED:
		die(CTL_EXIT_DENIED, "%s", msg);
	case CTL_REPLY_MALFORMED:
		break;
	}
	die(CTL_EXIT_CONN, "%s", msg);
}

/* --json: the reply printed as it came, once it is known to be one. */
static enum ctl_reply_status
print_json(const char *line, size_t len, char *msg, size_t msglen)
{
	struct json_object *o;
	struct ctl_rd rd;
	enum ctl_reply_status st;

	memset(&rd, 0, sizeof(rd));
	st = ctl_reply_check(line, len, &o, &rd);
	json_object_put(o);
	if (st != CTL_REPLY_MALFORMED)
		printf("%.*s\n", (int)len, line);
	ctl_reply_message(st, &rd, msg, msglen);
	return st;
}

/*
 * Send req and read its reply. A refused peer gets one line and a
 * close: when the send fails, that line may still be waiting.
 */
static void
exchange(struct ctl_conn *c, const char *req, int ms, const char **line,
    size_t *len)
{
	char err[CTL_ERRLEN], rerr[CTL_ERRLEN];

	if (ctl_conn_send(c, req, err, sizeof(err)) == -1) {
		if (ctl_conn_read(c, ms, line, len, rerr, sizeof(rerr)) == -1)
			die(CTL_EXIT_CONN, "%s", err);
		return;
	}
	if (ctl_conn_read(c, ms, line, len, err, sizeof(err)) == -1)
		die(CTL_EXIT_CONN, "%s", err);
}

/* list, denials and pending show a member of the group its own only. */
static void
scope_note(enum ctl_cmd cmd)
{
	if (getuid() == 0 || (cmd != CTL_CMD_LIST &&
	    cmd != CTL_CMD_DENIALS && cmd != CTL_CMD_PENDING))
		return;
	fflush(stdout);
	fprintf(stderr, "gatekeeperctl: only your own cages (uid %u) are "
	    "shown; root sees every cage\n", (unsigned int)getuid());
}

static int
finish_output(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die(CTL_EXIT_REFUSED, "cannot write the output");
	return CTL_EXIT_OK;
}

/* approve, deny: req (freed here) asks for the pending questions. */
static int
run_decide(const struct ctl_args *a, struct ctl_conn *c, char *req, int ms)
{
	char msg[CTL_MSG_MAX + 256], err[CTL_ERRLEN], *dreq;
	struct ctl_question q;
	enum ctl_reply_status st;
	const char *line;
	size_t len;
	bool found;

	exchange(c, req, ms, &line, &len);
	free(req);
	st = ctl_fmt_find_question(line, len, a->qid, &q, &found, msg,
	    sizeof(msg));
	not_ok(st, msg);
	if (!found)
		die(CTL_EXIT_REFUSED, "no pending question %llu (gatekeeperctl "
		    "pending lists them)", (unsigned long long)a->qid);
	if ((dreq = ctl_req_decide(q.cage, q.id, a->decision, err,
	    sizeof(err))) == NULL)
		die(CTL_EXIT_REFUSED, "%s", err);
	exchange(c, dreq, ms, &line, &len);
	free(dreq);
	if (a->json)
		st = print_json(line, len, msg, sizeof(msg));
	else
		st = ctl_fmt_decided(line, len, &q, a->decision, stdout, msg,
		    sizeof(msg));
	not_ok(st, msg);
	return finish_output();
}

static int
run_follow(const struct ctl_args *a, struct ctl_conn *c,
    struct ctl_fmt_ctx *ctx)
{
	char msg[CTL_MSG_MAX + 256], err[CTL_ERRLEN];
	enum ctl_reply_status st;
	const char *line;
	size_t len;

	for (;;) {
		if (ctl_conn_read(c, -1, &line, &len, err, sizeof(err)) == -1)
			die(CTL_EXIT_CONN, "%s", err);
		st = ctl_fmt_event(line, len, ctx, a->json ? NULL : stdout,
		    msg, sizeof(msg));
		if (a->json && st != CTL_REPLY_MALFORMED)
			printf("%.*s\n", (int)len, line);
		finish_output();
		not_ok(st, msg);
		if (st == CTL_REPLY_END)
			return CTL_EXIT_OK;
	}
}

static int
run(const struct ctl_args *a)
{
	char err[CTL_ERRLEN], msg[CTL_MSG_MAX + 256], *req;
	struct ctl_fmt_ctx ctx = { .now = time(NULL), .follow = a->follow,
	    .cage = a->cage };
	enum ctl_reply_status st;
	struct ctl_conn *c;
	const char *line;
	size_t len;
	int ms = (int)a->timeout * 1000, status;

	if ((req = ctl_req_build(a, err, sizeof(err))) == NULL)
		usage_error(a, err);
	if ((c = ctl_conn_open(a->control, ms, err, sizeof(err))) == NULL)
		die(CTL_EXIT_CONN, "%s", err);
	if (a->cmd == CTL_CMD_APPROVE || a->cmd == CTL_CMD_DENY) {
		status = run_decide(a, c, req, ms);
		ctl_conn_close(c);
		return status;
	}
	exchange(c, req, ms, &line, &len);
	free(req);
	if (a->json)
		st = print_json(line, len, msg, sizeof(msg));
	else
		st = ctl_fmt_for(a->cmd)(line, len, &ctx, stdout, msg,
		    sizeof(msg));
	finish_output();
	not_ok(st, msg);
	scope_note(a->cmd);
	status = a->follow ? run_follow(a, c, &ctx) : CTL_EXIT_OK;
	ctl_conn_close(c);
	return status;
}

int
main(int argc, char **argv)
{
	struct ctl_args a;
	char err[CTL_ERRLEN];
	int status;

	switch (ctl_args_parse(argc, argv, getenv("GK_CONTROL"), &a, err,
	    sizeof(err))) {
	case CTL_ARGS_HELP:
		fputs(ctl_usage(a.cmd), stdout);
		return finish_output();
	case CTL_ARGS_VERSION:
		printf("gatekeeperctl (%s)\n", PACKAGE_STRING);
		return finish_output();
	case CTL_ARGS_USAGE:
		usage_error(&a, err);
	case CTL_ARGS_NOMEM:
		die(CTL_EXIT_REFUSED, "out of memory");
	case CTL_ARGS_RUN:
		break;
	}
	status = run(&a);
	ctl_args_clear(&a);
	return status;
}
