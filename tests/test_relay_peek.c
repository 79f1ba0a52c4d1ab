/*
 * relay: the peek that holds the client's bytes (allow, deny, wait, and
 * passing some bytes then looking again at what follows), over real TCP
 * connections (the harness is relay_testutil.c).
 */
#include <sys/resource.h>
#include <sys/time.h>

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/relay.h"
#include "tests/relay_testutil.h"

/* ---- peek: wait, allow, deny ------------------------------------------- */

static void
test_peek_deny(void **state)
{
	struct tctx	*t = *state;

	t->verdict = RELAY_PEEK_DENY;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "GET / HTTP/1.1\r\n", 16, 0, END_NONE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "denied", 0, 0);
	assert_int_equal(t->peek_calls, 1);
	assert_true(t->up.rx_eof);
	assert_int_equal(t->up.rx_len, 0);	/* not a single byte */
}

static void
test_peek_allow_two_segments(void **state)
{
	struct tctx	*t = *state;

	t->allow_at = 10;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "01234", 5, 0, END_NONE);
	assert_true(UNTIL(t, t->peek_calls > 0, DEADLINE_MS));
	assert_int_equal(t->peek_len, 5);
	RUN_FOR(t, 50);
	assert_int_equal(t->up.rx_len, 0);		/* still held */
	peer_send(&t->cage, "56789", 5, 0, END_NONE);
	assert_true(UNTIL(t, t->peek_calls > 1, DEADLINE_MS));
	assert_int_equal(t->peek_len, 10);
	assert_memory_equal(t->peek_seen, "0123456789", 10);
	peer_send(&t->cage, "abc", 3, 0, END_SHUT);
	peer_send(&t->up, "", 0, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 13);
	assert_memory_equal(t->up.rx_keep, "0123456789abc", 13);
	assert_int_equal(t->peek_calls, 2);
	check_done(t, "closed", 13, 0);
}

/* An SSH-style banner reaches the client while its direction is held. */
static void
test_peek_server_first(void **state)
{
	struct tctx	*t = *state;
	static const char banner[] = "SSH-2.0-OpenSSH_9.2\r\n";

	t->allow_at = 4;
	start(t, &(struct relay_opts){ .peek = peek_cb, .no_splice = true });
	peer_send(&t->up, banner, sizeof(banner) - 1, 0, END_NONE);
	RUN_FOR(t, 100);
	assert_int_equal(t->cage.rx_len, sizeof(banner) - 1);
	assert_memory_equal(t->cage.rx_keep, banner, sizeof(banner) - 1);
	assert_int_equal(t->peek_calls, 0);
	peer_send(&t->cage, "SSH-2.0-x\r\n", 11, 0, END_SHUT);
	assert_true(UNTIL(t, t->up.rx_eof, DEADLINE_MS));
	assert_memory_equal(t->up.rx_keep, "SSH-2.0-x\r\n", 11);
}

/*
 * The server answers and closes while the client's direction is held (a
 * server-first banner, or an HTTP/1.0 reply after a passed request): the
 * client gets the bytes and then the end, at once, not at the idle
 * timeout; then its own end closes the relay.
 */
static void
test_peek_server_ends_held(void **state)
{
	struct tctx	*t = *state;
	static const char reply[] = "HTTP/1.0 200 OK\r\n\r\nbye";

	t->verdict = RELAY_PEEK_MORE;
	start(t, &(struct relay_opts){ .peek = peek_cb,
	    .no_splice = t->prm.no_splice });
	peer_send(&t->cage, "GET", 3, 0, END_NONE);
	peer_send(&t->up, reply, sizeof(reply) - 1, 0, END_SHUT);
	assert_true(UNTIL(t, t->cage.rx_eof, 2000));
	assert_int_equal(t->cage.rx_len, sizeof(reply) - 1);
	assert_memory_equal(t->cage.rx_keep, reply, sizeof(reply) - 1);
	assert_int_equal(t->up.rx_len, 0);	/* still held */
	assert_int_equal(t->done_calls, 0);
	peer_send(&t->cage, NULL, 0, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "closed", 3, sizeof(reply) - 1);
}

static void
test_peek_too_long(void **state)
{
	struct tctx	*t = *state;

	t->verdict = RELAY_PEEK_MORE;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, NULL, 2 * RELAY_PEEK_MAX, 1, END_NONE);
	assert_true(UNTIL(t, t->done_calls > 0, DEADLINE_MS));
	assert_string_equal(t->reason, "peek_too_long");
	assert_int_equal(t->peek_len, RELAY_PEEK_MAX);
	assert_true(UNTIL(t, t->up.rx_eof, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 0);
}

/* EOF while held: peek_cb sees it; MORE is then taken as ALLOW. */
static void
test_peek_eof(void **state)
{
	struct tctx	*t = *state;
	size_t		 n = t->prm.flag ? 0 : 3;	/* flag: EOF at once */

	t->verdict = RELAY_PEEK_MORE;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "abc", n, 0, END_SHUT);
	assert_true(UNTIL(t, t->up.rx_eof, DEADLINE_MS));
	assert_true(t->peek_eof);
	assert_int_equal(t->peek_len, n);
	assert_int_equal(t->up.rx_len, n);
	assert_memory_equal(t->up.rx_keep, "abc", n);
	peer_send(&t->up, "ok", 2, 0, END_CLOSE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "closed", n, 2);
}

/* Bytes the caller read past its handshake are the first peeked. */
static void
test_peek_from_client(void **state)
{
	struct tctx	*t = *state;

	t->allow_at = 6;
	start(t, &(struct relay_opts){ .peek = peek_cb, .from_client_len = 3,
	    .from_client = (const uint8_t *)"\x16\x03\x01" });
	assert_true(UNTIL(t, t->peek_calls > 0, DEADLINE_MS));
	assert_int_equal(t->peek_len, 3);
	peer_send(&t->cage, "\x02\x00\x05", 3, 0, END_SHUT);
	assert_true(UNTIL(t, t->up.rx_eof, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 6);
	assert_memory_equal(t->up.rx_keep, "\x16\x03\x01\x02\x00\x05", 6);
}

/* ---- peek: passing some bytes and looking again ------------------------ */

/* PASS within the held bytes: the rest is shown at once, nothing lost. */
static void
test_pass_within(void **state)
{
	static const uint64_t passes[] = { 4 };
	struct tctx	*t = *state;

	t->passes = passes;
	t->npasses = 1;
	t->pass_at = 8;
	t->verdict = RELAY_PEEK_ALLOW;
	start(t, &(struct relay_opts){ .peek = peek_cb,
	    .no_splice = t->prm.no_splice });
	peer_send(&t->cage, "AAAABBBB", 8, 0, END_NONE);
	assert_true(UNTIL(t, t->peek_calls >= 2, DEADLINE_MS));
	assert_int_equal(t->lens[t->peek_calls - 2], 8);
	assert_int_equal(t->lens[t->peek_calls - 1], 4);
	assert_memory_equal(t->peek_seen, "BBBB", 4);
	peer_send(&t->cage, "cc", 2, 0, END_SHUT);
	peer_send(&t->up, "", 0, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 10);
	assert_memory_equal(t->up.rx_keep, "AAAABBBBcc", 10);
	check_done(t, "closed", 10, 0);
}

/*
 * A stream of pattern bytes cut into passes of every size: within the
 * held bytes, beyond them (spliced or buffered, the boundary inside a
 * read), then held again; each call must see the stream exactly where
 * the passes so far end. After the last pass, verdict.
 */
static void
run_passes(struct tctx *t, const uint64_t *passes, size_t n, size_t total)
{
	t->passes = passes;
	t->npasses = n;
	t->pass_at = 1;
	t->pseed = 5;
	t->up.rx_seed = 5;
	start(t, &(struct relay_opts){ .peek = peek_cb,
	    .no_splice = t->prm.no_splice });
	peer_send(&t->cage, NULL, total, 5, END_SHUT);
	peer_send(&t->up, "", 0, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_false(t->peek_bad);
	assert_false(t->up.rx_bad);
	assert_int_equal(t->npasses, 0);
}

static void
test_pass_stream(void **state)
{
	static const uint64_t passes[] = { 3, 10, 100000, 7, 2 * MIB + 1, 1,
	    5, 16384, 70000, 2 };
	struct tctx	*t = *state;
	size_t		 i, sum = 0, total;

	for (i = 0; i < sizeof(passes) / sizeof(*passes); i++)
		sum += passes[i];
	total = sum + 4 * MIB;		/* the rest: allowed, unexamined */
	t->verdict = RELAY_PEEK_ALLOW;
	run_passes(t, passes, sizeof(passes) / sizeof(*passes), total);
	assert_int_equal(t->up.rx_len, total);
	assert_true(t->up.rx_eof);
	check_done(t, "closed", total, 0);
	assert_int_equal(t->stream_off, sum);
}

/* A later verdict denies: exactly the passed bytes reached the server. */
static void
test_pass_deny(void **state)
{
	static const uint64_t passes[] = { 5000, 70000 };
	struct tctx	*t = *state;

	t->verdict = RELAY_PEEK_DENY;
	run_passes(t, passes, 2, 200000);
	assert_int_equal(t->up.rx_len, 75000);
	check_done(t, "denied", 75000, 0);
	assert_int_equal(t->stream_off, 75000);
	assert_true(t->peek_len > 0);	/* it saw what came next */
}

/* The client ends in the middle of a pass, or right at its end. */
static void
test_pass_eof(void **state)
{
	static const uint64_t middle[] = { 100 }, edge[] = { 30 };
	struct tctx	*t = *state;
	bool		 at_edge = t->prm.flag;

	t->verdict = RELAY_PEEK_ALLOW;
	run_passes(t, at_edge ? edge : middle, 1, 30);
	assert_int_equal(t->up.rx_len, 30);
	assert_true(t->up.rx_eof);
	check_done(t, "closed", 30, 0);
	/* at the edge the end is shown (nothing held), else never */
	assert_int_equal(t->peek_calls, at_edge ? 2 : 1);
	if (at_edge)
		assert_true(t->peek_eof && t->peek_len == 0);
}

/* ---- watch: a prefix goes, the rest waits for the server's answer ------ */

static int	watch_calls;
static size_t	watch_len;
static bool	watch_eof;
static uint8_t	watch_seen[RELAY_WATCH_MAX];

/* WATCH 5 once 5 bytes are held; later calls: t->verdict. */
static enum relay_peek
watch_peek_cb(void *arg, const uint8_t *buf, size_t len, bool eof,
    uint64_t *pass)
{
	struct tctx	*t = arg;
	size_t		 k = (size_t)t->peek_calls;

	(void)buf;
	if (k < sizeof(t->lens) / sizeof(t->lens[0]))
		t->lens[k] = len;
	t->peek_calls++;
	t->peek_len = len;
	t->peek_eof = eof;
	memcpy(t->peek_seen, buf, len);
	if (k > 0)
		return t->verdict;
	if (len < 5)
		return RELAY_PEEK_MORE;
	*pass = 5;
	return RELAY_PEEK_WATCH;
}

/* Done once 3 server bytes (or the server's end) were seen. */
static bool
watch_cb(void *arg, const uint8_t *buf, size_t len, bool eof)
{
	(void)arg;
	watch_calls++;
	watch_len = len;
	watch_eof = eof;
	memcpy(watch_seen, buf, len);
	return len >= 3 || eof;
}

static void
watch_start(struct tctx *t, enum relay_peek later)
{
	watch_calls = 0;
	watch_len = 0;
	watch_eof = false;
	t->verdict = later;
	start(t, &(struct relay_opts){ .peek = watch_peek_cb,
	    .watch = watch_cb, .no_splice = t->prm.no_splice });
	peer_send(&t->cage, "HELLOxyz", 8, 0, END_NONE);
	assert_true(UNTIL(t, t->up.rx_len >= 5, DEADLINE_MS));
	RUN_FOR(t, 50);
	/* the prefix went; what follows waits, unshown */
	assert_int_equal(t->up.rx_len, 5);
	assert_memory_equal(t->up.rx_keep, "HELLO", 5);
	assert_int_equal(t->peek_calls, 1);
}

/* The server answers in two writes: the watch sees both, from the
 * server's first byte; then the held bytes are shown and allowed. */
static void
test_watch_allow(void **state)
{
	struct tctx	*t = *state;

	watch_start(t, RELAY_PEEK_ALLOW);
	peer_send(&t->up, "ab", 2, 0, END_NONE);
	assert_true(UNTIL(t, t->cage.rx_len >= 2, DEADLINE_MS));
	RUN_FOR(t, 50);
	assert_int_equal(t->up.rx_len, 5);	/* still held */
	assert_int_equal(t->peek_calls, 1);
	peer_send(&t->up, "cdef", 4, 0, END_NONE);
	assert_true(UNTIL(t, t->up.rx_len >= 8, DEADLINE_MS));
	assert_memory_equal(t->up.rx_keep, "HELLOxyz", 8);
	assert_true(watch_calls >= 2);
	assert_true(watch_len >= 3);
	assert_memory_equal(watch_seen, "abc", 3);
	assert_int_equal(t->peek_calls, 2);
	assert_int_equal(t->lens[1], 3);
	assert_memory_equal(t->peek_seen, "xyz", 3);
	/* open now: both ways, unexamined */
	peer_send(&t->cage, "more", 4, 0, END_SHUT);
	peer_send(&t->up, "!", 1, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "closed", 12, 7);
	assert_int_equal(t->peek_calls, 2);
}

/* The second look denies: nothing after the prefix reached the server. */
static void
test_watch_deny(void **state)
{
	struct tctx	*t = *state;

	watch_start(t, RELAY_PEEK_DENY);
	peer_send(&t->up, "abc", 3, 0, END_NONE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	/* (the server's answer may or may not have left before the cut) */
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, "denied");
	assert_int_equal(t->done_up, 5);
	assert_int_equal(t->up.rx_len, 5);
	assert_true(t->up.rx_eof);
	assert_int_equal(t->peek_calls, 2);
}

/* The server ends without a word: the watch is told, then the peek. */
static void
test_watch_server_ends(void **state)
{
	struct tctx	*t = *state;

	watch_start(t, RELAY_PEEK_ALLOW);
	peer_send(&t->up, "", 0, 0, END_SHUT);
	assert_true(UNTIL(t, t->up.rx_len >= 8, DEADLINE_MS));
	assert_true(watch_eof);
	assert_int_equal(watch_len, 0);
	assert_int_equal(t->peek_calls, 2);
}

/* WATCH without a watch callback cuts the tunnel (nothing unchecked). */
static void
test_watch_no_cb(void **state)
{
	struct tctx	*t = *state;

	t->verdict = RELAY_PEEK_ALLOW;
	start(t, &(struct relay_opts){ .peek = watch_peek_cb });
	peer_send(&t->cage, "HELLOxyz", 8, 0, END_NONE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "denied", 0, 0);
	assert_int_equal(t->up.rx_len, 0);
}

/* ---- take: the sockets and the held bytes go to the caller ------------ */

struct taken {
	struct tctx	*t;
	int		 calls;
	int		 cfd, sfd;
	uint8_t		 held[64];
	size_t		 len;
};

static struct taken taken;

static void
take_cb(void *arg, int cfd, int sfd, const uint8_t *held, size_t len)
{
	struct tctx *t = arg;

	taken.calls++;
	taken.cfd = cfd;
	taken.sfd = sfd;
	taken.len = len < sizeof(taken.held) ? len : sizeof(taken.held);
	memcpy(taken.held, held, taken.len);
	t->r = NULL;		/* it frees itself */
}

/* TAKE after the proxy's own reply went: no done callback, the sockets
 * are the taker's (still open: they carry bytes), the hello is handed. */
static void
test_take(void **state)
{
	struct tctx	*t = *state;
	char		 buf[16];

	memset(&taken, 0, sizeof(taken));
	t->verdict = RELAY_PEEK_TAKE;
	start(t, &(struct relay_opts){ .peek = peek_cb, .take = take_cb,
	    .to_client = (const uint8_t *)"OK\r\n", .to_client_len = 4 });
	assert_true(UNTIL(t, t->cage.rx_len == 4, DEADLINE_MS));
	peer_send(&t->cage, "hello", 5, 0, END_NONE);
	assert_true(UNTIL(t, taken.calls > 0, DEADLINE_MS));
	RUN_FOR(t, 20);
	assert_int_equal(t->done_calls, 0);
	assert_int_equal(taken.len, 5);
	assert_memory_equal(taken.held, "hello", 5);
	assert_int_equal(t->up.rx_len, 0);	/* nothing went on */
	assert_int_equal(send(taken.sfd, "up", 2, 0), 2);
	assert_true(UNTIL(t, t->up.rx_len == 2, DEADLINE_MS));
	assert_int_equal(send(taken.cfd, "dn", 2, 0), 2);
	assert_true(UNTIL(t, t->cage.rx_len == 6, DEADLINE_MS));
	assert_int_equal(read(taken.cfd, buf, sizeof(buf)), -1);  /* empty */
	close(taken.cfd);
	close(taken.sfd);
	peer_send(&t->up, "", 0, 0, END_SHUT);
	peer_send(&t->cage, "", 0, 0, END_SHUT);
	assert_true(UNTIL(t, peer_closed(&t->cage) && peer_closed(&t->up),
	    DEADLINE_MS));
}

/* The server spoke first: its bytes went to the client, no TAKE. */
static void
test_take_too_late(void **state)
{
	struct tctx	*t = *state;

	memset(&taken, 0, sizeof(taken));
	t->verdict = RELAY_PEEK_TAKE;
	t->allow_at = 0;
	start(t, &(struct relay_opts){ .peek = peek_cb, .take = take_cb,
	    .no_splice = true });
	peer_send(&t->up, "SSH-2.0-x\r\n", 11, 0, END_NONE);
	assert_true(UNTIL(t, t->cage.rx_len == 11, DEADLINE_MS));
	peer_send(&t->cage, "hello", 5, 0, END_NONE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "denied", 0, 11);
	assert_int_equal(taken.calls, 0);
}

/* Without a take callback TAKE is a DENY. */
static void
test_take_no_cb(void **state)
{
	struct tctx	*t = *state;

	t->verdict = RELAY_PEEK_TAKE;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "hello", 5, 0, END_NONE);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "denied", 0, 0);
}

int
main(void)
{
	static struct param splice, buffered = { .no_splice = true },
	    flag = { .flag = true };
	const struct CMUnitTest tests[] = {
		T(test_peek_deny, NULL),
		T(test_peek_allow_two_segments, NULL),
		TP("peek_server_ends_held_splice", test_peek_server_ends_held,
		    &splice),
		TP("peek_server_ends_held_buffered",
		    test_peek_server_ends_held, &buffered),
		T(test_peek_server_first, NULL),
		T(test_peek_too_long, NULL),
		TP("peek_eof", test_peek_eof, NULL),
		TP("peek_eof_empty", test_peek_eof, &flag),
		T(test_peek_from_client, NULL),
		TP("pass_within_splice", test_pass_within, &splice),
		TP("pass_within_buffered", test_pass_within, &buffered),
		TP("pass_stream_splice", test_pass_stream, &splice),
		TP("pass_stream_buffered", test_pass_stream, &buffered),
		TP("pass_deny_splice", test_pass_deny, &splice),
		TP("pass_deny_buffered", test_pass_deny, &buffered),
		TP("pass_eof_middle", test_pass_eof, NULL),
		TP("pass_eof_edge", test_pass_eof, &flag),
		TP("watch_allow_splice", test_watch_allow, &splice),
		TP("watch_allow_buffered", test_watch_allow, &buffered),
		T(test_watch_deny, NULL),
		T(test_watch_server_ends, NULL),
		T(test_watch_no_cb, NULL),
		T(test_take, NULL),
		T(test_take_too_late, NULL),
		T(test_take_no_cb, NULL),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_relay_peek", getenv("GK_DEBUG") != NULL ? LOG_LVL_DEBUG :
	    LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
