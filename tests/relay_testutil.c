/*
 * relay_testutil: the harness of the relay tests (peers, the loop, the
 * relay's callbacks).
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

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/relay.h"
#include "tests/relay_testutil.h"

uint8_t
pat(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed;

	x ^= x >> 15;
	x *= 2246822519u;
	return (uint8_t)(x ^ (x >> 13));
}

int
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
void
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

bool
peer_closed(const struct peer *p)
{
	return p->fd == -1 || p->rx_eof || p->rx_err != 0;
}

/* ---- relay glue and the loop ------------------------------------------ */

void
done_cb(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct tctx	*t = arg;

	t->done_calls++;
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
	t->done_up = up;
	t->done_down = down;
	t->r = NULL;
}

enum relay_peek
peek_cb(void *arg, const uint8_t *buf, size_t len, bool eof, uint64_t *pass)
{
	struct tctx	*t = arg;

	size_t		 i, k = (size_t)t->peek_calls;

	if (k < sizeof(t->lens) / sizeof(t->lens[0]))
		t->lens[k] = len;
	t->peek_calls++;
	t->peek_len = len;
	t->peek_eof = eof;
	memcpy(t->peek_seen, buf, len);
	for (i = 0; t->pseed != 0 && i < len; i++)
		if (buf[i] != pat(t->pseed, t->stream_off + i))
			t->peek_bad = true;
	if (t->allow_at > 0)
		return len >= t->allow_at ? RELAY_PEEK_ALLOW : RELAY_PEEK_MORE;
	if (t->npasses > 0) {
		if (len < t->pass_at && !eof)
			return RELAY_PEEK_MORE;
		*pass = t->passes[0];
		t->stream_off += *pass;
		t->passes++;
		t->npasses--;
		return RELAY_PEEK_PASS;
	}
	return t->verdict;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	((struct tctx *)arg)->timed_out = true;
}

void
arm(struct tctx *t, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	t->timed_out = false;
	evtimer_add(t->timer, &tv);
}


bool
all_done(struct tctx *t)
{
	return t->done_calls > 0 && peer_closed(&t->cage) &&
	    peer_closed(&t->up);
}

void
start(struct tctx *t, const struct relay_opts *o)
{
	t->r = relay_new(t->base, t->rclient, t->rserver, o, done_cb, t);
	assert_non_null(t->r);
	t->started = true;
}

int
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

int
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

void
check_done(struct tctx *t, const char *reason, uint64_t up, uint64_t down)
{
	assert_int_equal(t->done_calls, 1);
	assert_string_equal(t->reason, reason);
	assert_int_equal(t->done_up, up);
	assert_int_equal(t->done_down, down);
}
