/*
 * floor.c: the floor relays of socks_load, policy-free SOCKS5 servers.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "socks_load.h"

/* ---- floor: the least a SOCKS5 relay can do ---- */

/*
 * A minimal single-threaded epoll SOCKS5 server: no-auth, IPv4 CONNECT
 * only, no policy, plain recv/send through a 64 KiB buffer per direction.
 * What any proxy in the path costs at least on this machine.
 */
enum fst { F_GREET, F_REQ, F_DIAL, F_RELAY };

struct fdir {
	uint32_t	 off, len;
	bool		 eof, shut;
	uint8_t		 buf[65536];
};

struct fconn;
struct fend {
	struct fconn	*fc;
	int		 side;		/* 0 client, 1 server */
	uint32_t	 want;		/* registered interest */
	bool		 reg;		/* in the epoll set */
};

struct fconn {
	int		 fd[2];
	enum fst	 st;
	uint32_t	 hlen;
	uint8_t		 h[16];
	struct fend	 end[2];
	struct fdir	 dir[2];	/* dir i: read from fd i, write to fd !i */
};

static void
floor_set(struct fconn *fc, int side, uint32_t ev)
{
	struct fend *e = &fc->end[side];
	struct epoll_event ee = { .events = ev, .data.ptr = e };

	if (fc->fd[side] < 0 || (e->reg && e->want == ev))
		return;
	epoll_ctl(g.epfd, e->reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
	    fc->fd[side], &ee);
	e->reg = true;
	e->want = ev;
}

static void
floor_free(struct fconn *fc)
{
	if (fc->fd[0] >= 0)
		close(fc->fd[0]);
	if (fc->fd[1] >= 0)
		close(fc->fd[1]);
	free(fc);
}

/* Move what can be moved; recompute interest. Returns -1 when done. */
static int
floor_relay(struct fconn *fc)
{
	int i;
	ssize_t r;
	uint32_t ev[2] = { 0, 0 };

	for (i = 0; i < 2; i++) {
		struct fdir *d = &fc->dir[i];
		for (;;) {
			if (d->len > d->off) {
				r = send(fc->fd[!i], d->buf + d->off,
				    d->len - d->off, MSG_NOSIGNAL);
				if (r < 0 && errno == EAGAIN)
					break;
				if (r <= 0)
					return -1;
				d->off += (uint32_t)r;
				if (d->off < d->len)
					continue;
				d->off = d->len = 0;
			}
			if (d->eof)
				break;
			r = recv(fc->fd[i], d->buf, sizeof(d->buf), 0);
			if (r < 0 && errno == EAGAIN)
				break;
			if (r < 0)
				return -1;
			if (r == 0) {
				d->eof = true;
				break;
			}
			d->len = (uint32_t)r;
		}
		if (d->eof && d->len == d->off && !d->shut) {
			shutdown(fc->fd[!i], SHUT_WR);
			d->shut = true;
		}
		if (d->len > d->off)
			ev[!i] |= EPOLLOUT;
		else if (!d->eof)
			ev[i] |= EPOLLIN;
	}
	if (fc->dir[0].shut && fc->dir[1].shut)
		return -1;
	floor_set(fc, 0, ev[0]);
	floor_set(fc, 1, ev[1]);
	return 0;
}

static int
floor_event(struct fconn *fc, int side)
{
	static const uint8_t ok[10] = { 5, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	struct sockaddr_in to;
	ssize_t r;
	int soerr = 0, on = 1;
	socklen_t sl = sizeof(soerr);

	switch (fc->st) {
	case F_GREET:
	case F_REQ:
		r = recv(fc->fd[0], fc->h + fc->hlen, sizeof(fc->h) - fc->hlen, 0);
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0)
			return -1;
		fc->hlen += (uint32_t)r;
		if (fc->st == F_GREET) {
			if (fc->hlen < 2 || fc->hlen < 2u + fc->h[1])
				return 0;
			if (fc->h[0] != 5 || fc->hlen != 2u + fc->h[1])
				return -1;	/* no pipelining here */
			fc->hlen = 0;
			fc->st = F_REQ;
			return send(fc->fd[0], "\5\0", 2, MSG_NOSIGNAL) == 2 ? 0 : -1;
		}
		if (fc->hlen < 10)
			return 0;
		if (fc->h[0] != 5 || fc->h[1] != 1 || fc->h[3] != 1 || fc->hlen != 10)
			return -1;
		memset(&to, 0, sizeof(to));
		to.sin_family = AF_INET;
		memcpy(&to.sin_addr, fc->h + 4, 4);
		memcpy(&to.sin_port, fc->h + 8, 2);
		fc->fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (fc->fd[1] < 0)
			return -1;
		setsockopt(fc->fd[1], IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		if (connect(fc->fd[1], (struct sockaddr *)&to, sizeof(to)) < 0 &&
		    errno != EINPROGRESS)
			return -1;
		fc->st = F_DIAL;
		floor_set(fc, 0, 0);
		floor_set(fc, 1, EPOLLOUT);
		return 0;
	case F_DIAL:
		if (side != 1)
			return 0;
		getsockopt(fc->fd[1], SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr != 0)
			return -1;
		if (send(fc->fd[0], ok, sizeof(ok), MSG_NOSIGNAL) != sizeof(ok))
			return -1;
		fc->st = F_RELAY;
		return floor_relay(fc);
	case F_RELAY:
		return floor_relay(fc);
	}
	return -1;
}

int
run_floor(const struct sockaddr_in *at)
{
	int lfd, fd, on = 1, i, n;
	struct epoll_event e, evs[256];
	static struct fend lend;	/* the listener's marker */

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return perror("socket"), 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(lfd, (const struct sockaddr *)at, sizeof(*at)) < 0 ||
	    listen(lfd, 4096) < 0)
		return perror("floor: bind/listen"), 1;
	e.events = EPOLLIN;
	e.data.ptr = &lend;
	epoll_ctl(g.epfd, EPOLL_CTL_ADD, lfd, &e);
	while (!stop_flag) {
		n = epoll_wait(g.epfd, evs, 256, 500);
		for (i = 0; i < n; i++) {
			struct fend *fe = evs[i].data.ptr;
			if (fe == NULL)
				continue;
			if (fe == &lend) {
				while ((fd = accept4(lfd, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct fconn *fc = calloc(1, sizeof(*fc));
					if (fc == NULL) {
						close(fd);
						continue;
					}
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY,
					    &on, sizeof(on));
					fc->fd[0] = fd;
					fc->fd[1] = -1;
					fc->end[0].fc = fc->end[1].fc = fc;
					fc->end[1].side = 1;
					floor_set(fc, 0, EPOLLIN);
				}
				continue;
			}
			if (fe->fc->fd[fe->side] < 0)
				continue;
			if (floor_event(fe->fc, fe->side) < 0) {
				/* later events of this batch for the same
				 * tunnel: none, both fds leave epoll here, and
				 * one epoll_wait reports an fd once */
				struct fconn *fc = fe->fc;
				int j;
				for (j = i + 1; j < n; j++)
					if (evs[j].data.ptr == &fc->end[0] ||
					    evs[j].data.ptr == &fc->end[1])
						evs[j].data.ptr = NULL;
				floor_free(fc);
			}
		}
	}
	return 0;
}
