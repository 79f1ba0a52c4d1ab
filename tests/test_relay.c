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
#include <time.h>
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

/* A test's variant, passed to setup as cmocka's initial state. */
struct param {
	bool	 no_splice;
	bool	 flag;		/* what it means depends on the test */
	int	 bufsz;		/* SO_RCVBUF/SO_SNDBUF of all sockets */
};

struct tctx;

struct peer {
	struct tctx	*t;
	int		 fd;
	struct event	*ev;
	uint8_t		*txq;		/* explicit bytes, sent first */
	size_t		 txq_len, txq_off;
	size_t		 tx_total, tx_sent;	/* then pattern bytes */
	uint32_t	 tx_seed;
	enum peer_end	 tx_end;
	bool		 tx_ended, paused;
	uint32_t	 rx_seed;	/* 0: no pattern check */
	size_t		 rx_len;
	uint8_t		 rx_keep[KEEP_MAX];
	int		 rx_err;
	bool		 rx_eof, rx_bad;	/* rx_bad: broke the pattern */
};

struct tctx {
	struct event_base	*base;
	struct event		*timer;		/* UNTIL's deadline */
	struct relay		*r;
	struct peer		 cage, up;
	int			 rclient, rserver;	/* relay's ends */
	struct param		 prm;
	int			 nfds;
	bool			 started, timed_out;
	/* done_cb */
	int			 done_calls;
	char			 reason[32];
	uint64_t		 done_up, done_down;
	/* peek_cb */
	enum relay_peek		 verdict;	/* unless allow_at */
	size_t			 allow_at;	/* ALLOW at this length */
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
	int			 l, i, one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_true((*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	for (i = 0; bufsz > 0 && i < 4; i++)	/* accept() inherits l's */
		setsockopt(i < 2 ? l : *a, SOL_SOCKET, i % 2 ? SO_SNDBUF :
		    SO_RCVBUF, &bufsz, sizeof(bufsz));
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
	if (p->tx_end == END_SHUT)
		shutdown(p->fd, SHUT_WR);
	if (p->tx_end == END_RST)
		setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (p->tx_end == END_CLOSE || p->tx_end == END_RST) {
		event_free(p->ev);
		p->ev = NULL;
		close(p->fd);
		p->fd = -1;
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

/* Queue b[0, n), or n pattern bytes if b is NULL; then end the stream. */
static void
peer_send(struct peer *p, const void *b, size_t n, uint32_t seed,
    enum peer_end end)
{
	if (b == NULL) {
		p->tx_seed = seed;
		p->tx_total += n;
	} else if (n > 0) {
		assert_non_null(p->txq = realloc(p->txq, p->txq_len + n));
		memcpy(p->txq + p->txq_len, b, n);
		p->txq_len += n;
	}
	p->tx_end = end;
	p->tx_ended = false;
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
	if (t->allow_at > 0)
		return len >= t->allow_at ? RELAY_PEEK_ALLOW : RELAY_PEEK_MORE;
	return t->verdict;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	((struct tctx *)arg)->timed_out = true;
}

static void
arm(struct tctx *t, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	t->timed_out = false;
	evtimer_add(t->timer, &tv);
}

/* Run the loop until cond holds or ms pass; the value of cond. */
#define UNTIL(t, cond, ms)	({					\
	arm((t), (ms));							\
	while (!(cond) && !(t)->timed_out)				\
		event_base_loop((t)->base, EVLOOP_ONCE);		\
	evtimer_del((t)->timer);					\
	(cond);								\
})
#define RUN_FOR(t, ms)	((void)UNTIL((t), false, (ms)))

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
setup(void **state)
{
	static const struct param	 none;
	struct tctx			*t = calloc(1, sizeof(*t));
	int				 a, b;

	assert_non_null(t);
	t->prm = *state != NULL ? *(const struct param *)*state : none;
	t->nfds = count_fds();
	t->base = event_base_new();
	assert_non_null(t->base);
	t->timer = evtimer_new(t->base, timeout_cb, t);
	tcp_pair(&a, &t->rclient, t->prm.bufsz);
	tcp_pair(&t->rserver, &b, t->prm.bufsz);
	peer_init(t, &t->cage, a);
	peer_init(t, &t->up, b);
	*state = t;
	return 0;
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
	event_free(t->timer);
	for (i = 0; i < 4; i++)		/* the relay frees a turn later */
		event_base_loop(t->base, EVLOOP_NONBLOCK);
	event_base_free(t->base);
	assert_int_equal(count_fds(), t->nfds);
	free(t);
	return 0;
}

static void
check_done(struct tctx *t, const char *reason, uint64_t up, uint64_t down)
{
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, reason);
	assert_int_equal(t->done_up, up);
	assert_int_equal(t->done_down, down);
}

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

/* A direction's pipe goes back once it has been quiet for a while. */
static void
test_release(void **state)
{
	struct tctx	*t = *state;
	int		 base;

	start(t, NULL);
	base = count_fds();
	peer_send(&t->cage, "ping", 4, 0, END_NONE);
	peer_send(&t->up, "pong", 4, 0, END_NONE);
	assert_true(UNTIL(t, t->cage.rx_len == 4 && t->up.rx_len == 4, 1000));
	assert_int_equal(count_fds(), base + 4);	/* two pipes */
	assert_true(UNTIL(t, count_fds() == base, 6000));
	peer_send(&t->cage, "again", 5, 0, END_SHUT);	/* and a new one */
	assert_true(UNTIL(t, t->up.rx_len == 9, 1000));
	assert_memory_equal(t->up.rx_keep, "pingagain", 9);
}

/* ---- peek, prefixes ---------------------------------------------------- */

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

#define T(f, prm)	{ #f, f, setup, teardown, prm }
#define TP(name, f, prm) { name, f, setup, teardown, prm }

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
		T(test_peek_deny, NULL),
		T(test_peek_allow_two_segments, NULL),
		T(test_peek_server_first, NULL),
		T(test_peek_too_long, NULL),
		TP("peek_eof", test_peek_eof, NULL),
		TP("peek_eof_empty", test_peek_eof, &flag),
		T(test_peek_from_client, NULL),
		T(test_prefixes, NULL),
		TP("up_limit_splice", test_up_limit, &splice),
		TP("up_limit_buffered", test_up_limit, &buffered),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_relay", getenv("GK_DEBUG") != NULL ? LOG_LVL_DEBUG :
	    LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
