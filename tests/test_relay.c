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
	return p->rx_eof || p->rx_err != 0;
}
