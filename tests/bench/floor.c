/*
 * floor.c: the floor relays of socks_load. Each is a minimal
 * single-threaded epoll relay with no policy. They differ in how a
 * tunnel's bytes move:
 *   FLOOR_COPY    recv/send through a 64 KiB buffer per direction, read
 *                 only when the buffer is empty (socks_load floor...)
 *   FLOOR_SPLICE  splice(2) through a pipe per direction, sized to 256 KiB
 *                 with F_SETPIPE_SZ; a direction is not read while its
 *                 pipe is full (socks_load floor-splice...)
 * and in the protocol that names the target:
 *   FLOOR_SOCKS5  no-auth greeting, then CONNECT to an IPv4 address (one
 *                 round trip each; no pipelining)
 *   FLOOR_HTTP    a CONNECT request head ("CONNECT a.b.c.d:port ...", up
 *                 to the blank line; nothing after it), answered
 *                 "HTTP/1.1 200 Connection established" once connected
 *   FLOOR_BARE    none: every accepted connection is forwarded at once to
 *                 the one target given on the command line
 * The accept loop, the connect, the interest bookkeeping, the relay and
 * the half-close are one code path for all. What a policy-free relay of
 * each kind costs on this machine, and (bare against the others) what the
 * proxy protocols' round trips cost.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "socks_load.h"

#define FLOOR_BUF	65536			/* copy: per direction */
#define FLOOR_PIPE	(256 * 1024)		/* splice: per direction */
#define FLOOR_SPLICE_F	(SPLICE_F_MOVE | SPLICE_F_NONBLOCK)
#define FLOOR_HEAD	512			/* SOCKS5 messages, a CONNECT */

static const char http_ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

enum fst { F_GREET, F_REQ, F_HEAD, F_DIAL, F_RELAY };

struct fdir {
	bool		 eof, shut;
	/* copy */
	uint32_t	 off, len;	/* buf[off, len): not sent yet */
	uint8_t		*buf;		/* FLOOR_BUF bytes, in the fconn */
	/* splice */
	int		 pipe[2];	/* -1 until the relay starts */
	uint32_t	 piped, cap;	/* bytes in the pipe, its size */
	bool		 full;		/* no reading until a drain */
};

struct fconn;
struct fend {
	struct fconn	*fc;
	int		 side;		/* 0 client, 1 server */
	uint32_t	 want;		/* registered interest */
	bool		 reg;		/* in the epoll set */
};

struct fconn {
	enum floor_kind	 kind;
	enum floor_proto proto;
	int		 fd[2];
	enum fst	 st;
	uint32_t	 hlen;
	uint8_t		 h[FLOOR_HEAD];
	struct fend	 end[2];
	struct fdir	 dir[2];	/* dir i: read from fd i, write to fd !i */
	uint8_t		 bufs[];	/* copy: the two buffers */
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

static struct fconn *
floor_new(int fd, enum floor_kind kind, enum floor_proto proto)
{
	struct fconn *fc;
	int i;

	fc = calloc(1, sizeof(*fc) + (kind == FLOOR_COPY ? 2 * FLOOR_BUF : 0));
	if (fc == NULL)
		return NULL;
	fc->kind = kind;
	fc->proto = proto;
	fc->st = proto == FLOOR_HTTP ? F_HEAD : F_GREET;
	fc->fd[0] = fd;
	fc->fd[1] = -1;
	fc->end[0].fc = fc->end[1].fc = fc;
	fc->end[1].side = 1;
	for (i = 0; i < 2; i++) {
		fc->dir[i].pipe[0] = fc->dir[i].pipe[1] = -1;
		if (kind == FLOOR_COPY)
			fc->dir[i].buf = fc->bufs + i * FLOOR_BUF;
	}
	return fc;
}

static void
floor_free(struct fconn *fc)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (fc->fd[i] >= 0)
			close(fc->fd[i]);
		if (fc->dir[i].pipe[0] >= 0)
			close(fc->dir[i].pipe[0]);
		if (fc->dir[i].pipe[1] >= 0)
			close(fc->dir[i].pipe[1]);
	}
	free(fc);
}

/* splice: a pipe per direction, grown to FLOOR_PIPE (or what it can be). */
static int
floor_pipes(struct fconn *fc)
{
	static bool warned;
	struct fdir *d;
	int i, sz;

	for (i = 0; i < 2; i++) {
		d = &fc->dir[i];
		if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			d->pipe[0] = d->pipe[1] = -1;
			return -1;
		}
		if ((sz = fcntl(d->pipe[1], F_SETPIPE_SZ, FLOOR_PIPE)) < 0) {
			sz = fcntl(d->pipe[1], F_GETPIPE_SZ);
			if (!warned)
				fprintf(stderr, "socks_load floor-splice: "
				    "F_SETPIPE_SZ %d: %s; pipes of %d bytes\n",
				    FLOOR_PIPE, strerror(errno), sz);
			warned = true;
			if (sz <= 0)
				return -1;
		}
		d->cap = (uint32_t)sz;
	}
	return 0;
}

/* copy: send what the buffer holds, refill it once it is empty. */
static int
floor_copy(struct fconn *fc, int i)
{
	struct fdir *d = &fc->dir[i];
	ssize_t r;

	for (;;) {
		if (d->len > d->off) {
			r = send(fc->fd[!i], d->buf + d->off, d->len - d->off,
			    MSG_NOSIGNAL);
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
		r = recv(fc->fd[i], d->buf, FLOOR_BUF, 0);
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
	return 0;
}

/*
 * splice: drain the pipe into fd !i, fill it from fd i while it has room,
 * until neither moves. A fill that would block with bytes in the pipe
 * means the pipe is out of room (or slots) or the socket is empty: either
 * way the direction waits for a drain, which EPOLLOUT on fd !i brings.
 */
static int
floor_splice(struct fconn *fc, int i)
{
	struct fdir *d = &fc->dir[i];
	ssize_t r;
	bool moved;

	do {
		moved = false;
		if (d->piped > 0) {
			r = splice(d->pipe[0], NULL, fc->fd[!i], NULL, d->piped,
			    FLOOR_SPLICE_F);
			if (r == 0 || (r < 0 && errno != EAGAIN))
				return -1;
			if (r > 0) {
				d->piped -= (uint32_t)r;
				d->full = false;
				moved = true;
			}
		}
		if (d->eof || d->full)
			continue;
		r = splice(fc->fd[i], NULL, d->pipe[1], NULL,
		    d->cap - d->piped, FLOOR_SPLICE_F);
		if (r > 0) {
			d->piped += (uint32_t)r;
			d->full = d->piped == d->cap;
			moved = true;
		} else if (r == 0)
			d->eof = true;
		else if (errno != EAGAIN)
			return -1;
		else
			d->full = d->piped > 0;
	} while (moved);
	return 0;
}

/* Bytes of direction d not yet written out. */
static uint32_t
floor_pending(const struct fconn *fc, const struct fdir *d)
{
	return fc->kind == FLOOR_COPY ? d->len - d->off : d->piped;
}

/* Whether direction d takes more bytes now. */
static bool
floor_room(const struct fconn *fc, const struct fdir *d)
{
	return !d->eof && (fc->kind == FLOOR_COPY ? d->len == d->off :
	    !d->full);
}

/* Move what can be moved; recompute interest. Returns -1 when done. */
static int
floor_relay(struct fconn *fc)
{
	int i;
	uint32_t ev[2] = { 0, 0 };

	for (i = 0; i < 2; i++) {
		struct fdir *d = &fc->dir[i];
		if ((fc->kind == FLOOR_COPY ? floor_copy(fc, i) :
		    floor_splice(fc, i)) < 0)
			return -1;
		if (d->eof && floor_pending(fc, d) == 0 && !d->shut) {
			shutdown(fc->fd[!i], SHUT_WR);
			d->shut = true;
		}
		if (floor_pending(fc, d) > 0)
			ev[!i] |= EPOLLOUT;
		if (floor_room(fc, d))
			ev[i] |= EPOLLIN;
	}
	if (fc->dir[0].shut && fc->dir[1].shut)
		return -1;
	floor_set(fc, 0, ev[0]);
	floor_set(fc, 1, ev[1]);
	return 0;
}

/* Connect to the target; the client is not read until the relay starts. */
static int
floor_dial(struct fconn *fc, const struct sockaddr_in *to)
{
	int on = 1;

	fc->fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fc->fd[1] < 0)
		return -1;
	setsockopt(fc->fd[1], IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (connect(fc->fd[1], (const struct sockaddr *)to, sizeof(*to)) < 0 &&
	    errno != EINPROGRESS)
		return -1;
	fc->st = F_DIAL;
	floor_set(fc, 0, 0);
	floor_set(fc, 1, EPOLLOUT);
	return 0;
}

/*
 * SOCKS5: the greeting, then the CONNECT request (IPv4). Returns -1 to
 * drop the tunnel, 0 to wait for more, 1 with *to set to dial.
 */
static int
floor_socks5(struct fconn *fc, struct sockaddr_in *to)
{
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
	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	memcpy(&to->sin_addr, fc->h + 4, 4);
	memcpy(&to->sin_port, fc->h + 8, 2);
	return 1;
}

/*
 * HTTP CONNECT: the request head up to the blank line ("CONNECT
 * a.b.c.d:port HTTP/1.x", headers ignored; nothing may follow it).
 * Returns as floor_socks5 does.
 */
static int
floor_http(struct fconn *fc, struct sockaddr_in *to)
{
	char *h = (char *)fc->h, *end, *sp, hp[64];
	size_t n;

	h[fc->hlen] = '\0';
	if ((end = strstr(h, "\r\n\r\n")) == NULL)
		return fc->hlen < FLOOR_HEAD - 1 ? 0 : -1;
	if (end + 4 != h + fc->hlen || strncmp(h, "CONNECT ", 8) != 0)
		return -1;
	if ((sp = strchr(h + 8, ' ')) == NULL ||
	    strncmp(sp, " HTTP/1.", 8) != 0)
		return -1;
	n = (size_t)(sp - (h + 8));
	if (n >= sizeof(hp))
		return -1;
	memcpy(hp, h + 8, n);
	hp[n] = '\0';
	return parse_addr(hp, to, true) < 0 ? -1 : 1;
}

/* Tell the client its tunnel is up, as its protocol does. */
static int
floor_reply(struct fconn *fc)
{
	static const uint8_t ok[10] = { 5, 0, 0, 1, 0, 0, 0, 0, 0, 0 };

	switch (fc->proto) {
	case FLOOR_SOCKS5:
		return send(fc->fd[0], ok, sizeof(ok), MSG_NOSIGNAL) ==
		    sizeof(ok) ? 0 : -1;
	case FLOOR_HTTP:
		return send(fc->fd[0], http_ok, sizeof(http_ok) - 1,
		    MSG_NOSIGNAL) == sizeof(http_ok) - 1 ? 0 : -1;
	case FLOOR_BARE:
		break;
	}
	return 0;
}

static int
floor_event(struct fconn *fc, int side)
{
	struct sockaddr_in to;
	ssize_t r;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	switch (fc->st) {
	case F_GREET:
	case F_REQ:
	case F_HEAD:
		r = recv(fc->fd[0], fc->h + fc->hlen,
		    sizeof(fc->h) - 1 - fc->hlen, 0);
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0)
			return -1;
		fc->hlen += (uint32_t)r;
		r = fc->st == F_HEAD ? floor_http(fc, &to) :
		    floor_socks5(fc, &to);
		if (r <= 0)
			return (int)r;
		return floor_dial(fc, &to);
	case F_DIAL:
		if (side != 1)
			return 0;
		getsockopt(fc->fd[1], SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr != 0)
			return -1;
		if (fc->kind == FLOOR_SPLICE && floor_pipes(fc) < 0)
			return -1;
		if (floor_reply(fc) < 0)
			return -1;
		fc->st = F_RELAY;
		return floor_relay(fc);
	case F_RELAY:
		return floor_relay(fc);
	}
	return -1;
}

/* A new client: read its request, or (bare) dial the target at once. */
static void
floor_accept(int fd, enum floor_kind kind, enum floor_proto proto,
    const struct sockaddr_in *target)
{
	struct fconn *fc = floor_new(fd, kind, proto);
	int on = 1;

	if (fc == NULL) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (proto != FLOOR_BARE)
		floor_set(fc, 0, EPOLLIN);
	else if (floor_dial(fc, target) < 0)
		floor_free(fc);
}

int
run_floor(const struct sockaddr_in *at, enum floor_kind kind,
    enum floor_proto proto, const struct sockaddr_in *target)
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
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
					floor_accept(fd, kind, proto, target);
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
