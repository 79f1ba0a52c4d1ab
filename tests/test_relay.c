/*
 * relay: real TCP connections over 127.0.0.1. The "cage" peer talks to the
 * relay's client fd, the "up" peer stands for the upstream behind its
 * server fd; both peers are driven by the same event loop as the relay,
 * run until a condition holds or a deadline passes.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <arpa/inet.h>
#include <dirent.h>
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
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gk_log.h"
#include "gk_stats.h"
#include "relay.h"

#define MIB		(1024 * 1024)
#define KEEP_MAX	(64 * 1024)	/* received bytes kept for memcmp */
#define CHUNK		(64 * 1024)
#define DEADLINE_MS	20000

enum peer_end { END_NONE, END_SHUT, END_CLOSE, END_RST };

struct tctx;

struct peer {
	struct tctx	*t;
	int		 fd;
	struct event	*ev;
	uint8_t		*txq;		/* explicit bytes, sent first */
	size_t		 txq_len, txq_off;
	size_t		 tx_total;	/* then this many pattern bytes */
	size_t		 tx_sent;
	uint32_t	 tx_seed;
	enum peer_end	 tx_end;
	bool		 tx_ended;
	bool		 paused;
	uint32_t	 rx_seed;	/* 0: no pattern check */
	size_t		 rx_len;
	uint8_t		 rx_keep[KEEP_MAX];
	bool		 rx_eof;
	int		 rx_err;
	bool		 rx_bad;	/* a byte broke the pattern */
};

struct tctx {
	struct event_base	*base;
	struct relay		*r;
	struct peer		 cage, up;
	int			 rclient, rserver;	/* relay's ends */
	int			 nfds;
	bool			 started;
	bool			 timed_out;
	/* done_cb */
	int			 done_calls;
	char			 reason[32];
	uint64_t		 done_up, done_down;
	/* peek_cb */
	enum relay_peek		(*verdict)(struct tctx *, size_t, bool);
	size_t			 allow_at;
	int			 peek_calls;
	size_t			 peek_len;
	bool			 peek_eof;
	uint8_t			 peek_seen[RELAY_PEEK_MAX];
};

static uint8_t
pat(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed;

	x ^= x >> 15;
	x *= 2246822519u;
	return (uint8_t)(x ^ (x >> 13));
}

static int
count_fds(void)
{
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*de;
	int		 n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* A connected TCP pair over 127.0.0.1, both ends non-blocking. */
static void
tcp_pair(int *a, int *b, int bufsz)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	socklen_t		 len = sizeof(sin);
	int			 l, one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_true((*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	if (bufsz > 0) {
		setsockopt(l, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
		setsockopt(l, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
		setsockopt(*a, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
		setsockopt(*a, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	}
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(connect(*a, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_true((*b = accept4(l, NULL, NULL, SOCK_CLOEXEC)) >= 0);
	close(l);
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	assert_int_equal(fcntl(*a, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(*b, F_SETFL, O_NONBLOCK), 0);
}

/* ---- peers ----------------------------------------------------------- */

static void	peer_update(struct peer *);

static void
peer_keep(struct peer *p, const uint8_t *b, size_t n)
{
	size_t	 i;

	if (p->rx_len < KEEP_MAX)
		memcpy(p->rx_keep + p->rx_len, b,
		    n < KEEP_MAX - p->rx_len ? n : KEEP_MAX - p->rx_len);
	for (i = 0; p->rx_seed != 0 && i < n; i++)
		if (b[i] != pat(p->rx_seed, p->rx_len + i))
			p->rx_bad = true;
	p->rx_len += n;
}

static void
peer_read(struct peer *p)
{
	static uint8_t	 b[CHUNK];
	ssize_t		 n;
	int		 i;

	for (i = 0; i < 64 && !p->paused; i++) {
		if ((n = read(p->fd, b, sizeof(b))) > 0)
			peer_keep(p, b, n);
		else if (n == 0)
			p->rx_eof = true;
		else if (errno != EAGAIN)
			p->rx_err = errno;
		if (n <= 0)
			break;
	}
}

static void
peer_end(struct peer *p)
{
	struct linger	 lg = { 1, 0 };

	p->tx_ended = true;
	switch (p->tx_end) {
	case END_NONE:
		break;
	case END_SHUT:
		shutdown(p->fd, SHUT_WR);
		break;
	case END_RST:
		setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		/* FALLTHROUGH */
	case END_CLOSE:
		event_free(p->ev);
		p->ev = NULL;
		close(p->fd);
		p->fd = -1;
		break;
	}
}

static void
peer_write(struct peer *p)
{
	static uint8_t	 b[CHUNK];
	size_t		 i, n;
	ssize_t		 w;

	while (p->txq_off < p->txq_len) {
		w = send(p->fd, p->txq + p->txq_off, p->txq_len - p->txq_off,
		    MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p->txq_off += w;
	}
	while (p->tx_sent < p->tx_total) {
		n = p->tx_total - p->tx_sent < CHUNK ?
		    p->tx_total - p->tx_sent : CHUNK;
		for (i = 0; i < n; i++)
			b[i] = pat(p->tx_seed, p->tx_sent + i);
		if ((w = send(p->fd, b, n, MSG_NOSIGNAL)) <= 0)
			return;
		p->tx_sent += w;
	}
	if (!p->tx_ended)
		peer_end(p);
}

static void
peer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer	*p = arg;

	(void)fd;
	if (what & EV_READ)
		peer_read(p);
	if ((what & EV_WRITE) && p->fd != -1)
		peer_write(p);
	if (p->fd != -1)
		peer_update(p);
}

static void
peer_update(struct peer *p)
{
	short	 want = 0;

	if (!p->paused && !p->rx_eof && p->rx_err == 0)
		want |= EV_READ;
	if (!p->tx_ended && (p->tx_end != END_NONE ||
	    p->txq_off < p->txq_len || p->tx_sent < p->tx_total))
		want |= EV_WRITE;
	event_del(p->ev);
	event_assign(p->ev, p->t->base, p->fd, want | EV_PERSIST, peer_cb, p);
	if (want)
		event_add(p->ev, NULL);
}

static void
peer_init(struct tctx *t, struct peer *p, int fd)
{
	p->t = t;
	p->fd = fd;
	p->ev = event_new(t->base, fd, 0, peer_cb, p);
	assert_non_null(p->ev);
	peer_update(p);
}

/* Queue explicit bytes; tx_end applies once everything queued is sent. */
static void
peer_send(struct peer *p, const void *b, size_t n, enum peer_end end)
{
	p->txq = realloc(p->txq, p->txq_len + n);
	assert_non_null(p->txq);
	memcpy(p->txq + p->txq_len, b, n);
	p->txq_len += n;
	p->tx_end = end;
	p->tx_ended = false;
	peer_update(p);
}

static void
peer_send_pat(struct peer *p, size_t n, uint32_t seed, enum peer_end end)
{
	p->tx_seed = seed;
	p->tx_total += n;
	p->tx_end = end;
	p->tx_ended = false;
	peer_update(p);
}

static void
peer_pause(struct peer *p, bool paused)
{
	p->paused = paused;
	peer_update(p);
}

static void
peer_clear(struct peer *p)
{
	if (p->ev != NULL)
		event_free(p->ev);
	if (p->fd != -1)
		close(p->fd);
	free(p->txq);
}

static bool
peer_closed(const struct peer *p)
{
	return p->fd == -1 || p->rx_eof || p->rx_err != 0;
}

/* ---- relay glue and the loop ------------------------------------------ */

static void
done_cb(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct tctx	*t = arg;

	t->done_calls++;
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
	t->done_up = up;
	t->done_down = down;
	t->r = NULL;
}

static enum relay_peek
peek_cb(void *arg, const uint8_t *buf, size_t len, bool eof)
{
	struct tctx	*t = arg;

	t->peek_calls++;
	t->peek_len = len;
	t->peek_eof = eof;
	memcpy(t->peek_seen, buf, len);
	return t->verdict(t, len, eof);
}

static enum relay_peek
v_allow_at(struct tctx *t, size_t len, bool eof)
{
	(void)eof;
	return len >= t->allow_at ? RELAY_PEEK_ALLOW : RELAY_PEEK_MORE;
}

static enum relay_peek
v_deny(struct tctx *t, size_t len, bool eof)
{
	(void)t, (void)len, (void)eof;
	return RELAY_PEEK_DENY;
}

static enum relay_peek
v_more(struct tctx *t, size_t len, bool eof)
{
	(void)t, (void)len, (void)eof;
	return RELAY_PEEK_MORE;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	((struct tctx *)arg)->timed_out = true;
}

/* Run the loop until pred(t) holds or ms pass; returns pred(t). */
static bool
run_until(struct tctx *t, bool (*pred)(struct tctx *), int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*ev = evtimer_new(t->base, timeout_cb, t);

	t->timed_out = false;
	evtimer_add(ev, &tv);
	while (!(pred != NULL && pred(t)) && !t->timed_out)
		event_base_loop(t->base, EVLOOP_ONCE);
	event_free(ev);
	return pred != NULL && pred(t);
}

static bool
is_done(struct tctx *t)
{
	return t->done_calls > 0;
}

static bool
all_done(struct tctx *t)
{
	return t->done_calls > 0 && peer_closed(&t->cage) &&
	    peer_closed(&t->up);
}

static void
start(struct tctx *t, const struct relay_opts *o)
{
	t->r = relay_new(t->base, t->rclient, t->rserver, o, done_cb, t);
	assert_non_null(t->r);
	t->started = true;
}

static int
setup_buf(void **state, int bufsz)
{
	struct tctx	*t = calloc(1, sizeof(*t));
	int		 a, b;

	assert_non_null(t);
	t->nfds = count_fds();
	t->base = event_base_new();
	assert_non_null(t->base);
	tcp_pair(&a, &t->rclient, bufsz);
	tcp_pair(&t->rserver, &b, bufsz);
	peer_init(t, &t->cage, a);
	peer_init(t, &t->up, b);
	t->verdict = v_allow_at;
	*state = t;
	return 0;
}

static int
setup(void **state)
{
	return setup_buf(state, 0);
}

static int
setup_small(void **state)
{
	return setup_buf(state, 32 * 1024);
}

static int
teardown(void **state)
{
	struct tctx	*t = *state;
	int		 i;

	relay_free(t->r);
	if (!t->started) {
		close(t->rclient);
		close(t->rserver);
	}
	peer_clear(&t->cage);
	peer_clear(&t->up);
	for (i = 0; i < 4; i++)		/* the relay frees a turn later */
		event_base_loop(t->base, EVLOOP_NONBLOCK);
	event_base_free(t->base);
	assert_int_equal(count_fds(), t->nfds);
	free(t);
	return 0;
}

/* ---- bulk, backpressure ----------------------------------------------- */

static void
bulk(struct tctx *t, bool no_splice, size_t n)
{
	struct relay_opts	 o = { .no_splice = no_splice };
	uint64_t		 su = gk_stats.bytes[GK_DIR_UPSTREAM];
	uint64_t		 sd = gk_stats.bytes[GK_DIR_DOWNSTREAM];

	start(t, &o);
	t->up.rx_seed = 1;
	t->cage.rx_seed = 2;
	peer_send_pat(&t->cage, n, 1, END_SHUT);
	peer_send_pat(&t->up, n, 2, END_SHUT);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->up.rx_len, n);
	assert_int_equal(t->cage.rx_len, n);
	assert_false(t->up.rx_bad);
	assert_false(t->cage.rx_bad);
	assert_true(t->up.rx_eof && t->cage.rx_eof);
	assert_int_equal(t->done_up, n);
	assert_int_equal(t->done_down, n);
	assert_int_equal(gk_stats.bytes[GK_DIR_UPSTREAM] - su, n);
	assert_int_equal(gk_stats.bytes[GK_DIR_DOWNSTREAM] - sd, n);
}

static void
test_bulk_splice(void **state)
{
	bulk(*state, false, 8 * MIB);
}

static void
test_bulk_buffered(void **state)
{
	bulk(*state, true, 8 * MIB);
}

/* No pipe can be created (EMFILE): each direction falls back by itself. */
static void
test_bulk_emfile(void **state)
{
	struct tctx	*t = *state;
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
	bulk(t, false, 1 * MIB);
	while (nfill > 0)
		close(fill[--nfill]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static bool
never(struct tctx *t)
{
	(void)t;
	return false;
}

static long
cpu_ms(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/*
 * The reader (dst) pauses: the writer (src) must stall once the socket
 * buffers and one pipe or buffer are full, and the loop must sleep.
 */
static void
backpressure(struct tctx *t, bool no_splice, struct peer *src,
    struct peer *dst)
{
	struct relay_opts	 o = { .no_splice = no_splice };
	size_t			 stalled, total = 32 * MIB;
	long			 cpu;

	start(t, &o);
	dst->rx_seed = 7;
	peer_pause(dst, true);
	peer_send_pat(src, total, 7, END_SHUT);
	run_until(t, never, 500);
	stalled = src->tx_sent;
	cpu = cpu_ms();
	run_until(t, never, 300);
	assert_true(cpu_ms() - cpu < 100);	/* no busy loop */
	assert_int_equal(src->tx_sent, stalled);
	assert_true(stalled < 4 * MIB);
	assert_true(dst->rx_len == 0);
	peer_pause(dst, false);
	peer_send(dst, "", 0, END_SHUT);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(dst->rx_len, total);
	assert_false(dst->rx_bad);
	assert_string_equal(t->reason, "closed");
}

static void
test_backpressure_down_splice(void **state)
{
	struct tctx	*t = *state;

	backpressure(t, false, &t->up, &t->cage);
}

static void
test_backpressure_up_buffered(void **state)
{
	struct tctx	*t = *state;

	backpressure(t, true, &t->cage, &t->up);
}

/* ---- half-close, errors, idle, free ----------------------------------- */

static bool
up_got_eof(struct tctx *t)
{
	return t->up.rx_eof;
}

static bool
cage_got_eof(struct tctx *t)
{
	return t->cage.rx_eof;
}

static void
test_half_close_client_first(void **state)
{
	struct tctx	*t = *state;

	start(t, NULL);
	t->up.rx_seed = 3;
	t->cage.rx_seed = 4;
	peer_send_pat(&t->cage, 100000, 3, END_SHUT);
	assert_true(run_until(t, up_got_eof, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 100000);
	assert_int_equal(t->done_calls, 0);
	peer_send_pat(&t->up, 200000, 4, END_SHUT);	/* keeps sending */
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->cage.rx_len, 200000);
	assert_false(t->up.rx_bad || t->cage.rx_bad);
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->done_up, 100000);
	assert_int_equal(t->done_down, 200000);
}

static void
test_half_close_server_first(void **state)
{
	struct tctx	*t = *state;

	start(t, &(struct relay_opts){ .no_splice = true });
	t->up.rx_seed = 5;
	t->cage.rx_seed = 6;
	peer_send_pat(&t->up, 50000, 6, END_SHUT);
	assert_true(run_until(t, cage_got_eof, DEADLINE_MS));
	assert_int_equal(t->cage.rx_len, 50000);
	peer_send_pat(&t->cage, 30000, 5, END_SHUT);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 30000);
	assert_false(t->up.rx_bad || t->cage.rx_bad);
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->done_up, 30000);
	assert_int_equal(t->done_down, 50000);
}

/* The server closes outright; the client then closes too. */
static void
test_server_close(void **state)
{
	struct tctx	*t = *state;

	start(t, NULL);
	peer_send(&t->up, "bye", 3, END_CLOSE);
	assert_true(run_until(t, cage_got_eof, DEADLINE_MS));
	assert_memory_equal(t->cage.rx_keep, "bye", 3);
	peer_send(&t->cage, "", 0, END_CLOSE);
	assert_true(run_until(t, is_done, DEADLINE_MS));
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->done_down, 3);
}

static void
reset(struct tctx *t, struct peer *rst, struct peer *other,
    const char *reason)
{
	start(t, NULL);
	peer_send_pat(other, 4 * MIB, 9, END_NONE);
	run_until(t, never, 20);
	peer_send(rst, "", 0, END_RST);
	assert_true(run_until(t, is_done, DEADLINE_MS));
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, reason);
	assert_true(run_until(t, all_done, DEADLINE_MS));
}

static void
test_reset_server(void **state)
{
	struct tctx	*t = *state;

	reset(t, &t->up, &t->cage, "server_error");
}

static void
test_reset_client(void **state)
{
	struct tctx	*t = *state;

	reset(t, &t->cage, &t->up, "client_error");
}

static void
test_idle(void **state)
{
	struct tctx	*t = *state;
	struct timeval	 t0, t1;
	long		 ms;

	start(t, &(struct relay_opts){ .idle_sec = 1 });
	peer_send(&t->cage, "ping", 4, END_NONE);
	run_until(t, never, 300);
	assert_int_equal(t->up.rx_len, 4);
	gettimeofday(&t0, NULL);
	assert_true(run_until(t, all_done, 5000));
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	assert_string_equal(t->reason, "idle");
	assert_true(ms >= 600 && ms < 2000);
	assert_int_equal(t->done_up, 4);
}

static bool
moving(struct tctx *t)
{
	return t->up.rx_len > MIB && t->cage.rx_len > MIB;
}

static bool
peers_closed(struct tctx *t)
{
	return peer_closed(&t->cage) && peer_closed(&t->up);
}

static void
test_free_mid_transfer(void **state)
{
	struct tctx	*t = *state;

	start(t, NULL);
	peer_send_pat(&t->cage, 64 * MIB, 1, END_SHUT);
	peer_send_pat(&t->up, 64 * MIB, 2, END_SHUT);
	assert_true(run_until(t, moving, DEADLINE_MS));
	relay_free(t->r);
	t->r = NULL;
	assert_true(run_until(t, peers_closed, DEADLINE_MS));
	assert_int_equal(t->done_calls, 0);
	assert_true(t->up.rx_len < 64 * MIB);
}

/* ---- peek, prefixes ---------------------------------------------------- */

static bool
peeked(struct tctx *t)
{
	return t->peek_calls > 0;
}

static bool
peeked2(struct tctx *t)
{
	return t->peek_calls > 1;
}

static void
test_peek_deny(void **state)
{
	struct tctx	*t = *state;

	t->verdict = v_deny;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "GET / HTTP/1.1\r\n", 16, END_NONE);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, "denied");
	assert_int_equal(t->peek_calls, 1);
	assert_true(t->up.rx_eof);
	assert_int_equal(t->up.rx_len, 0);	/* not a single byte */
	assert_int_equal(t->done_up, 0);
}

static void
test_peek_allow_two_segments(void **state)
{
	struct tctx	*t = *state;

	t->allow_at = 10;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "01234", 5, END_NONE);
	assert_true(run_until(t, peeked, DEADLINE_MS));
	assert_int_equal(t->peek_len, 5);
	run_until(t, never, 50);
	assert_int_equal(t->up.rx_len, 0);		/* still held */
	peer_send(&t->cage, "56789", 5, END_NONE);
	assert_true(run_until(t, peeked2, DEADLINE_MS));
	assert_int_equal(t->peek_len, 10);
	assert_memory_equal(t->peek_seen, "0123456789", 10);
	peer_send(&t->cage, "abc", 3, END_SHUT);
	peer_send(&t->up, "", 0, END_SHUT);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 13);
	assert_memory_equal(t->up.rx_keep, "0123456789abc", 13);
	assert_int_equal(t->peek_calls, 2);
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->done_up, 13);
}

/* An SSH-style banner reaches the client while its direction is held. */
static void
test_peek_server_first(void **state)
{
	struct tctx	*t = *state;
	static const char banner[] = "SSH-2.0-OpenSSH_9.2\r\n";

	t->allow_at = 4;
	start(t, &(struct relay_opts){ .peek = peek_cb, .no_splice = true });
	peer_send(&t->up, banner, sizeof(banner) - 1, END_NONE);
	run_until(t, never, 100);
	assert_int_equal(t->cage.rx_len, sizeof(banner) - 1);
	assert_memory_equal(t->cage.rx_keep, banner, sizeof(banner) - 1);
	assert_int_equal(t->peek_calls, 0);
	peer_send(&t->cage, "SSH-2.0-x\r\n", 11, END_SHUT);
	assert_true(run_until(t, up_got_eof, DEADLINE_MS));
	assert_memory_equal(t->up.rx_keep, "SSH-2.0-x\r\n", 11);
}

static void
test_peek_too_long(void **state)
{
	struct tctx	*t = *state;

	t->verdict = v_more;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send_pat(&t->cage, 2 * RELAY_PEEK_MAX, 1, END_NONE);
	assert_true(run_until(t, is_done, DEADLINE_MS));
	assert_string_equal(t->reason, "peek_too_long");
	assert_int_equal(t->peek_len, RELAY_PEEK_MAX);
	assert_true(run_until(t, up_got_eof, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 0);
}

/* EOF while held: peek_cb sees it; MORE is then taken as ALLOW. */
static void
test_peek_eof(void **state)
{
	struct tctx	*t = *state;

	t->verdict = v_more;
	start(t, &(struct relay_opts){ .peek = peek_cb });
	peer_send(&t->cage, "abc", 3, END_SHUT);
	assert_true(run_until(t, up_got_eof, DEADLINE_MS));
	assert_true(t->peek_eof);
	assert_int_equal(t->peek_len, 3);
	assert_int_equal(t->up.rx_len, 3);
	assert_memory_equal(t->up.rx_keep, "abc", 3);
	peer_send(&t->up, "ok", 2, END_CLOSE);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_string_equal(t->reason, "closed");
	assert_int_equal(t->done_up, 3);
	assert_int_equal(t->done_down, 2);
}

/* Bytes the caller read past its handshake are the first peeked. */
static void
test_peek_from_client(void **state)
{
	struct tctx	*t = *state;

	t->allow_at = 6;
	start(t, &(struct relay_opts){ .peek = peek_cb,
	    .from_client = (const uint8_t *)"\x16\x03\x01", .from_client_len = 3 });
	assert_true(run_until(t, peeked, DEADLINE_MS));
	assert_int_equal(t->peek_len, 3);
	peer_send(&t->cage, "\x02\x00\x05", 3, END_SHUT);
	assert_true(run_until(t, up_got_eof, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 6);
	assert_memory_equal(t->up.rx_keep, "\x16\x03\x01\x02\x00\x05", 6);
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
	peer_send(&t->cage, "body", 4, END_SHUT);
	peer_send(&t->up, "srv", 3, END_SHUT);
	run_until(t, never, 50);
	start(t, &o);
	assert_true(run_until(t, all_done, DEADLINE_MS));
	assert_int_equal(t->up.rx_len, 12);
	assert_memory_equal(t->up.rx_keep, "HEAD\r\nxybody", 12);
	assert_int_equal(t->cage.rx_len, 11);
	assert_memory_equal(t->cage.rx_keep, "200 OK\r\nsrv", 11);
	assert_int_equal(t->done_up, 12);
	assert_int_equal(t->done_down, 11);
	assert_string_equal(t->reason, "closed");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bulk_splice, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bulk_buffered, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bulk_emfile, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_backpressure_down_splice,
		    setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_backpressure_up_buffered,
		    setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_half_close_client_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close_server_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_close, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reset_server, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reset_client, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_mid_transfer, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_deny, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_allow_two_segments,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_peek_server_first, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_too_long, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_eof, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_from_client, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_prefixes, setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_relay", getenv("GK_DEBUG") != NULL ? LOG_LVL_DEBUG :
	    LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
