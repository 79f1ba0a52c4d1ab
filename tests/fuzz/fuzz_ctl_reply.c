/*
 * Fuzz gatekeeperctl's formatters: the bytes are one reply line, fed to
 * every formatter (and to the question lookup, the decide reply and the
 * follow events). Invariants: a formatter that says OK (or END) wrote
 * only printable ASCII and newlines, ending in a newline if anything;
 * any other status wrote nothing and left a message of printable ASCII
 * (a refusal's may hold newlines and tabs).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/ctl/ctl_fmt.h"
#include "tests/fuzz/fuzz_check.h"

static void
check_text(const char *s, size_t n, bool tabs)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK((s[i] >= 0x20 && s[i] < 0x7f) || s[i] == '\n' ||
		    (tabs && s[i] == '\t'));
}

static void
check_result(enum ctl_reply_status st, const char *text, size_t size,
    const char *msg)
{
	if (st == CTL_REPLY_OK || st == CTL_REPLY_END) {
		check_text(text, size, false);
		CHECK(size == 0 || text[size - 1] == '\n');
		CHECK(msg[0] == '\0');
		return;
	}
	CHECK(size == 0);
	CHECK(msg[0] != '\0');
	check_text(msg, strlen(msg), st == CTL_REPLY_REFUSED ||
	    st == CTL_REPLY_NOT_PERMITTED);
}

static void
one(ctl_fmt_fn fn, const char *line, size_t len,
    const struct ctl_fmt_ctx *ctx)
{
	char msg[CTL_MSG_MAX + 512], *text = NULL;
	enum ctl_reply_status st;
	size_t size = 0;
	FILE *f;

	if ((f = open_memstream(&text, &size)) == NULL)
		return;
	msg[0] = 'x';
	msg[1] = '\0';
	st = fn(line, len, ctx, f, msg, sizeof(msg));
	fclose(f);
	CHECK(st != CTL_REPLY_END || fn == ctl_fmt_event);
	check_result(st, text, size, msg);
	free(text);
}

static void
questions(const char *line, size_t len)
{
	char msg[CTL_MSG_MAX + 512], *text = NULL;
	struct ctl_question q;
	enum ctl_reply_status st;
	size_t size = 0;
	bool found;
	FILE *f;

	st = ctl_fmt_find_question(line, len, 17, &q, &found, msg,
	    sizeof(msg));
	CHECK(st != CTL_REPLY_END);
	CHECK(!found || st == CTL_REPLY_OK);
	if (!found)
		q = (struct ctl_question){ .id = "17", .cage = "c",
		    .target = "h:1", .kind = "http" };
	check_text(q.id, strlen(q.id), false);
	check_text(q.cage, strlen(q.cage), false);
	check_text(q.label, strlen(q.label), false);
	check_text(q.target, strlen(q.target), false);
	if ((f = open_memstream(&text, &size)) == NULL)
		return;
	st = ctl_fmt_decided(line, len, &q, CTL_DECIDE_RUN, f, msg,
	    sizeof(msg));
	fclose(f);
	check_result(st, text, size, msg);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const ctl_fmt_fn fns[] = {
		ctl_fmt_list, ctl_fmt_show, ctl_fmt_denials, ctl_fmt_event,
		ctl_fmt_update, ctl_fmt_destroy, ctl_fmt_stats,
		ctl_fmt_reload, ctl_fmt_pending,
	};
	const struct ctl_fmt_ctx ctx = { .now = 1795600800, .follow = false };
	const struct ctl_fmt_ctx follow = { .now = 0, .follow = true,
	    .cage = "k3j9x0qa" };
	const char *line = (const char *)data;
	char msg[64];
	size_t i;

	if (data == NULL)
		line = "";
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		one(fns[i], line, size, &ctx);
	one(ctl_fmt_event, line, size, &follow);
	one(ctl_fmt_denials, line, size, &follow);
	(void)ctl_fmt_event(line, size, &follow, NULL, msg, sizeof(msg));
	questions(line, size);
	return 0;
}
