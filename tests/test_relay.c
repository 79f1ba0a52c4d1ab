/*
 * relay: bulk transfers, backpressure, half-close, errors, the idle timeout,
 * freeing, prefixes and the forwarded-request limit, over real TCP
 * connections (the harness is relay_testutil.c; the peek's tests are in
 * test_relay_peek.c).
 */
#include <sys/resource.h>
#include <sys/time.h>

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

/* ---- bulk, backpressure ----------------------------------------------- */

static void
test_bulk(void **state)
{
	struct tctx		*t = *state;
	size_t			 n = 8 * MIB;
	struct relay_opts	 o = { .no_splice = t->prm.no_splice };
	uint64_t		 su = gk_stats.bytes[GK_DIR_UPSTREAM];
	uint64_t		 sd = gk_stats.bytes[GK_DIR_DOWNSTREAM];

	start(t, &o);
	t->up.rx_seed = 1;
	t->cage.rx_seed = 2;
	peer_send(&t->cage, NULL, n, 1, END_SHUT);
	peer_send(&t->up, NULL, n, 2, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "closed", n, n);
	assert_int_equal(t->up.rx_len, n);
	assert_int_equal(t->cage.rx_len, n);
	assert_false(t->up.rx_bad || t->cage.rx_bad);
	assert_true(t->up.rx_eof && t->cage.rx_eof);
	assert_int_equal(gk_stats.bytes[GK_DIR_UPSTREAM] - su, n);
	assert_int_equal(gk_stats.bytes[GK_DIR_DOWNSTREAM] - sd, n);
}

/* No pipe can be created (EMFILE): each direction falls back by itself. */
static void
test_bulk_emfile(void **state)
{
	struct rlimit	 old, lim;
	int		 fill[1024], nfill = 0, fd, maxfd = 0;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			maxfd = fd;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = maxfd + 1;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	while (nfill < 1024 && (fd = open("/dev/null", O_RDONLY)) != -1)
		fill[nfill++] = fd;
	assert_int_equal(errno, EMFILE);
	test_bulk(state);
	while (nfill > 0)
		close(fill[--nfill]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/*
 * The reader (dst) pauses: the writer (src) must stall once the socket
 * buffers and one pipe or buffer are full, and the loop must sleep.
 */
static void
test_backpressure(void **state)
{
	struct tctx		*t = *state;
	bool			 down = t->prm.flag;
	struct relay_opts	 o = { .no_splice = t->prm.no_splice };
	struct peer		*src = down ? &t->up : &t->cage;
	struct peer		*dst = down ? &t->cage : &t->up;
	size_t			 stalled, total = 32 * MIB;
	clock_t			 cpu;

	start(t, &o);
	dst->rx_seed = 7;
	dst->paused = true;
	peer_send(src, NULL, total, 7, END_SHUT);
	RUN_FOR(t, 500);
	stalled = src->tx_sent;
	cpu = clock();
	RUN_FOR(t, 300);
	assert_true(clock() - cpu < CLOCKS_PER_SEC / 10);	/* asleep */
	assert_int_equal(src->tx_sent, stalled);
	assert_true(stalled < MIB);	/* socket buffers + one pipe */
	assert_true(dst->rx_len == 0);
	dst->paused = false;
	peer_send(dst, "", 0, 0, END_SHUT);	/* and resume */
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(dst->rx_len, total);
	assert_false(dst->rx_bad);
	assert_string_equal(t->reason, "closed");
}

/* ---- half-close, errors, idle, free ----------------------------------- */

/* One side sends and shuts down; the other keeps sending afterwards. */
static void
test_half_close(void **state)
{
	struct tctx	*t = *state;
	bool		 client_first = t->prm.flag;
	struct peer	*first = client_first ? &t->cage : &t->up;
	struct peer	*second = client_first ? &t->up : &t->cage;

	start(t, &(struct relay_opts){ .no_splice = t->prm.no_splice });
	second->rx_seed = 3;
	first->rx_seed = 4;
	peer_send(first, NULL, 100000, 3, END_SHUT);
	assert_true(UNTIL(t, second->rx_eof, DEADLINE_MS));
	assert_int_equal(second->rx_len, 100000);
	assert_int_equal(t->done_calls, 0);
	peer_send(second, NULL, 200000, 4, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(first->rx_len, 200000);
	assert_false(t->up.rx_bad || t->cage.rx_bad);
	if (client_first)
		check_done(t, "closed", 100000, 200000);
	else
		check_done(t, "closed", 200000, 100000);
}

/* The server closes outright; the client then closes too. */
static void
test_server_close(void **state)
{
	struct tctx	*t = *state;

	start(t, NULL);
	peer_send(&t->up, "bye", 3, 0, END_CLOSE);
	assert_true(UNTIL(t, t->cage.rx_eof, DEADLINE_MS));
	assert_memory_equal(t->cage.rx_keep, "bye", 3);
	peer_send(&t->cage, "", 0, 0, END_CLOSE);
	assert_true(UNTIL(t, t->done_calls > 0, DEADLINE_MS));
	check_done(t, "closed", 0, 3);
}

static void
test_reset(void **state)
{
	struct tctx	*t = *state;
	bool		 server = t->prm.flag;
	struct peer	*rst = server ? &t->up : &t->cage;
	struct peer	*other = server ? &t->cage : &t->up;

	start(t, NULL);
	peer_send(other, NULL, 4 * MIB, 9, END_NONE);
	RUN_FOR(t, 20);
	peer_send(rst, "", 0, 0, END_RST);
	assert_true(UNTIL(t, t->done_calls > 0, DEADLINE_MS));
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, server ? "server_error" :
	    "client_error");
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
}

static void
test_idle(void **state)
{
	struct tctx	*t = *state;
	struct timeval	 t0, t1;
	long		 ms;

	start(t, &(struct relay_opts){ .idle_sec = 1 });
	peer_send(&t->cage, "ping", 4, 0, END_NONE);
	RUN_FOR(t, 300);
	assert_int_equal(t->up.rx_len, 4);
	gettimeofday(&t0, NULL);
	assert_true(UNTIL(t, all_done(t), 5000));
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	check_done(t, "idle", 4, 0);
	assert_true(ms >= 600 && ms < 2000);
}

static void
test_free_mid_transfer(void **state)
{
	struct tctx	*t = *state;

	start(t, NULL);
	peer_send(&t->cage, NULL, 64 * MIB, 1, END_SHUT);
	peer_send(&t->up, NULL, 64 * MIB, 2, END_SHUT);
	assert_true(UNTIL(t, t->up.rx_len > MIB && t->cage.rx_len > MIB,
	    DEADLINE_MS));
	relay_free(t->r);
	t->r = NULL;
	assert_true(UNTIL(t, peer_closed(&t->cage) && peer_closed(&t->up),
	    DEADLINE_MS));
	assert_int_equal(t->done_calls, 0);
	assert_true(t->up.rx_len < 64 * MIB);
}

/*
 * A short exchange is copied: no pipe at all. Past RELAY_SPLICE_AFTER
 * bytes a direction splices, through a pipe that goes back once the
 * direction has been quiet for a while.
 */
static void
test_release(void **state)
{
	static uint8_t big[160 * 1024];
	struct tctx	*t = *state;
	int		 base;

	start(t, NULL);
	base = count_fds();
	peer_send(&t->cage, "ping", 4, 0, END_NONE);
	peer_send(&t->up, "pong", 4, 0, END_NONE);
	assert_true(UNTIL(t, t->cage.rx_len == 4 && t->up.rx_len == 4, 1000));
	assert_int_equal(count_fds(), base);		/* copied */
	memset(big, 'x', sizeof(big));
	peer_send(&t->cage, big, sizeof(big), 0, END_NONE);
	peer_send(&t->up, big, sizeof(big), 0, END_NONE);
	assert_true(UNTIL(t, t->cage.rx_len == 4 + sizeof(big) &&
	    t->up.rx_len == 4 + sizeof(big), 3000));
	if (!t->prm.no_splice)
		assert_int_equal(count_fds(), base + 4);	/* two pipes */
	assert_true(UNTIL(t, count_fds() == base, 6000));
	peer_send(&t->cage, "again", 5, 0, END_SHUT);	/* and a new one */
	assert_true(UNTIL(t, t->up.rx_len == 9 + sizeof(big), 1000));
	assert_memory_equal(t->up.rx_keep, "ping", 4);
}

static void
test_prefixes(void **state)
{
	struct tctx		*t = *state;
	struct relay_opts	 o = {
		.to_server = (const uint8_t *)"HEAD\r\n", .to_server_len = 6,
		.to_client = (const uint8_t *)"200 OK\r\n", .to_client_len = 8,
		.from_client = (const uint8_t *)"xy", .from_client_len = 2,
	};

	/* The client and the server both send at once. */
	peer_send(&t->cage, "body", 4, 0, END_SHUT);
	peer_send(&t->up, "srv", 3, 0, END_SHUT);
	RUN_FOR(t, 50);
	start(t, &o);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 12);
	assert_memory_equal(t->up.rx_keep, "HEAD\r\nxybody", 12);
	assert_int_equal(t->cage.rx_len, 11);
	assert_memory_equal(t->cage.rx_keep, "200 OK\r\nsrv", 11);
	check_done(t, "closed", 12, 11);
}

/* A forwarded HTTP request: its body goes, a pipelined request does not. */
static void
test_up_limit(void **state)
{
	struct tctx		*t = *state;
	struct relay_opts	 o = {
		.to_server = (const uint8_t *)"HEAD\r\n", .to_server_len = 6,
		.from_client = (const uint8_t *)"ab", .from_client_len = 2,
		.up_limited = true, .up_limit = 5,
		.no_splice = t->prm.no_splice,
	};

	start(t, &o);
	peer_send(&t->cage, "cdeGET /evil", 12, 0, END_SHUT);
	peer_send(&t->up, "srv", 3, 0, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 11);
	assert_memory_equal(t->up.rx_keep, "HEAD\r\nabcde", 11);
	assert_int_equal(t->cage.rx_len, 3);
	check_done(t, "closed", 11, 3);
}

/* ---- upload quota ----------------------------------------------------- */

static uint64_t quota_total, quota_given, quota_calls;

/* Grants 100000 bytes a call, until quota_total is given; then 0. */
static uint64_t
quota_cb(void *arg)
{
	uint64_t g = quota_total - quota_given;

	(void)arg;
	quota_calls++;
	if (g > 100000)
		g = 100000;
	quota_given += g;
	return g;
}

/* Exactly what was granted goes up, the stream intact up to there;
 * then the relay ends, "upload_budget". */
static void
test_quota(void **state)
{
	struct tctx		*t = *state;
	struct relay_opts	 o = {
		.no_splice = t->prm.no_splice, .quota = quota_cb,
	};

	quota_total = 300000;
	quota_given = quota_calls = 0;
	start(t, &o);
	peer_send(&t->cage, NULL, 4 * MIB, 1, END_SHUT);
	t->up.rx_seed = 1;
	assert_true(UNTIL(t, t->done_calls == 1, DEADLINE_MS));
	assert_string_equal(t->reason, "upload_budget");
	assert_int_equal(t->done_up, 300000);
	assert_int_equal(quota_calls, 4);	/* three grants, a refusal */
	assert_true(UNTIL(t, peer_closed(&t->up), DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 300000);
	assert_false(t->up.rx_bad);
}

static void
test_quota_plenty(void **state)
{
	struct tctx		*t = *state;
	struct relay_opts	 o = { .no_splice = t->prm.no_splice,
	    .quota = quota_cb };

	quota_total = UINT64_MAX;
	quota_given = quota_calls = 0;
	start(t, &o);
	t->up.rx_seed = 1;
	peer_send(&t->cage, NULL, 2 * MIB, 1, END_SHUT);
	peer_send(&t->up, NULL, 10, 2, END_SHUT);
	assert_true(UNTIL(t, all_done(t), DEADLINE_MS));
	check_done(t, "closed", 2 * MIB, 10);
	assert_false(t->up.rx_bad);
	assert_true(quota_calls >= 2 * MIB / 100000);
}

int
main(void)
{
	static struct param splice, buffered = { .no_splice = true },
	    bp_down = { .flag = true, .bufsz = 32 * 1024 },
	    bp_up = { .no_splice = true, .bufsz = 32 * 1024 },
	    flag = { .flag = true }, server = { .no_splice = true },
	    rst_server = { .flag = true };
	const struct CMUnitTest tests[] = {
		TP("bulk_splice", test_bulk, &splice),
		TP("bulk_buffered", test_bulk, &buffered),
		T(test_bulk_emfile, NULL),
		TP("backpressure_down", test_backpressure, &bp_down),
		TP("backpressure_up_buffered", test_backpressure, &bp_up),
		TP("half_close_client_first", test_half_close, &flag),
		TP("half_close_server_first", test_half_close, &server),
		T(test_server_close, NULL),
		TP("reset_server", test_reset, &rst_server),
		TP("reset_client", test_reset, NULL),
		T(test_idle, NULL),
		T(test_free_mid_transfer, NULL),
		T(test_release, NULL),
		T(test_prefixes, NULL),
		TP("up_limit_splice", test_up_limit, &splice),
		TP("up_limit_buffered", test_up_limit, &buffered),
		TP("quota_splice", test_quota, &splice),
		TP("quota_buffered", test_quota, &buffered),
		TP("quota_plenty_splice", test_quota_plenty, &splice),
		TP("quota_plenty_buffered", test_quota_plenty, &buffered),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_relay", getenv("GK_DEBUG") != NULL ? LOG_LVL_DEBUG :
	    LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
