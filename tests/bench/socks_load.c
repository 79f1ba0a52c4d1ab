/*
 * socks_load: the load client of tests/bench/proxy_bench.sh. One file, no
 * dependencies, Linux (epoll):   cc -O2 -o socks_load socks_load.c
 *
 *   socks_load setup  -m MODE -t IP:PORT [-p IP:PORT] [-b SRC] [-c INFLIGHT]
 *                     [-d SECONDS] [-w WARMUP] [-u PATH]
 *       INFLIGHT connections at a time for WARMUP + SECONDS: connect (from
 *       SRC), set up the tunnel (MODE), send "GET PATH HTTP/1.0", read to
 *       EOF, close, start the next. Connections that end inside the
 *       SECONDS window after the warm-up are counted; the latency of one
 *       is from socket() to EOF. Checks every answer: tunnel reply, HTTP
 *       200, body length = Content-Length.
 *   socks_load bulk   -m MODE -t IP:PORT [-p IP:PORT] [-b SRC] [-u PATH] [-V]
 *       One connection, GET PATH, count the body; -V checks every byte
 *       against the mkfile pattern (costs CPU: not for timed runs).
 *   socks_load idle   -m socks5|http -t IP:PORT -p IP:PORT [-b SRC] -n N
 *                     [-d SECONDS]
 *       Open N tunnels (256 set-ups at a time), send "hello\n" on each,
 *       print one line when all are up, hold them until SIGTERM, EOF on
 *       stdin or SECONDS (default 600), then print how many survived.
 *       -P PID -L LIMIT: pace the set-ups so that the proxy PID stays
 *       under LIMIT open files (a fresh tunnel may hold 6 until its
 *       pipes are released).
 *   socks_load hold   -l IP:PORT
 *       A target that accepts everything, reads and discards, and keeps
 *       every connection open until the peer closes it. Runs until killed.
 *   socks_load floor  -l IP:PORT
 *       The floor: a minimal single-threaded epoll SOCKS5 relay (no-auth,
 *       IPv4 CONNECT, no policy, recv/send through 64 KiB buffers); the
 *       least any proxy in the path costs on this machine.
 *   socks_load mkfile PATH BYTES
 *       Write the deterministic pattern (64-bit words, splitmix64 of the
 *       word index, little-endian) that bulk -V checks.
 *
 * MODE: direct (no proxy), socks5 (no-auth greeting, then CONNECT to the
 * IPv4 target, one round trip each, like curl), http (CONNECT IP:PORT
 * HTTP/1.1). Results go to stdout as one line of key=value pairs; the
 * exit status is 0 when the run could be made (errors are counted in the
 * line), 1 when it could not, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define HDR_MAX		8192
#define BULK_BUF	(1024 * 1024)
#define CONN_TIMEOUT_NS	(10ULL * 1000000000ULL)

enum mode { M_DIRECT, M_SOCKS5, M_HTTP };

enum st {
	ST_FREE,
	ST_CONNECT,	/* waiting for the TCP connect */
	ST_GREET,	/* socks5: method reply, 2 bytes */
	ST_SREPLY,	/* socks5: CONNECT reply */
	ST_HREPLY,	/* http: CONNECT reply head */
	ST_RESP,	/* reading the HTTP response to EOF */
	ST_IDLE,	/* idle mode: tunnel up, held */
};

enum err { E_CONNECT, E_PROXY, E_HTTP, E_TIMEOUT, E__MAX };
static const char *err_name[E__MAX] = { "connect", "proxy", "http", "timeout" };

struct conn {
	int		 fd;
	enum st		 st;
	uint64_t	 t0;		/* ns, socket() */
	uint32_t	 need;		/* socks reply: bytes expected */
	uint32_t	 hlen;		/* bytes in hdr */
	bool		 head_done;
	int		 status;
	long long	 clen;		/* -1: none */
	uint64_t	 body;
	char		 hdr[HDR_MAX];
};

static struct {
	enum mode		 mode;
	struct sockaddr_in	 target, proxy, src;
	bool			 have_src, have_proxy;
	const char		*path;
	int			 epfd;
	bool			 verify;
	uint64_t		 verify_bad;	/* first bad offset + 1 */
	uint64_t		 errs[E__MAX];
	char			 first_err[256];
	uint8_t			*bigbuf;
	char			 req[512];
	size_t			 reqlen;
} g = { .path = "/small" };

static volatile sig_atomic_t stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: socks_load setup -m direct|socks5|http -t IP:PORT [-p IP:PORT] [-b SRC]\n"
	    "                        [-c INFLIGHT] [-d SECONDS] [-w WARMUP] [-u PATH]\n"
	    "       socks_load bulk  -m MODE -t IP:PORT [-p IP:PORT] [-b SRC] [-u PATH] [-V]\n"
	    "       socks_load idle  -m socks5|http -t IP:PORT -p IP:PORT [-b SRC] -n N [-d SECONDS]\n"
	    "                        [-P PROXYPID -L ITS_NOFILE]\n"
	    "       socks_load hold  -l IP:PORT\n"
	    "       socks_load floor -l IP:PORT\n"
	    "       socks_load mkfile PATH BYTES\n");
	exit(2);
}

static int
parse_addr(const char *s, struct sockaddr_in *sa, bool need_port)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	long port = 0;
	char *end;

	if (n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	if (colon) {
		port = strtol(colon + 1, &end, 10);
		if (*end != '\0' || port < 0 || port > 65535)
			return -1;
	} else if (need_port)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* ---- the bulk file's pattern ---- */

static uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint8_t
pattern_byte(uint64_t off)
{
	return (uint8_t)(splitmix64(off >> 3) >> (8 * (off & 7)));
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Check n body bytes at body offset off; remember the first bad one. */
static void
verify_chunk(const uint8_t *p, size_t n, uint64_t off)
{
	uint8_t w[8];

	if (g.verify_bad)
		return;
	while (n > 0 && (off & 7)) {
		if (*p != pattern_byte(off))
			goto bad;
		p++, n--, off++;
	}
	while (n >= 8) {
		put_le64(w, splitmix64(off >> 3));
		if (memcmp(p, w, 8) != 0)
			goto bad;
		p += 8, n -= 8, off += 8;
	}
	while (n > 0) {
		if (*p != pattern_byte(off))
			goto bad;
		p++, n--, off++;
	}
	return;
bad:
	g.verify_bad = off + 1;
}

static int
mkfile(const char *path, const char *size_s)
{
	char *end;
	unsigned long long size = strtoull(size_s, &end, 10), off, k;
	uint8_t *buf;
	FILE *f;
	size_t chunk = BULK_BUF, n, i;

	if (*end != '\0' || size % 8 != 0) {
		fprintf(stderr, "socks_load mkfile: BYTES must be a multiple of 8\n");
		return 2;
	}
	if ((f = fopen(path, "wb")) == NULL || (buf = malloc(chunk)) == NULL) {
		perror(path);
		return 1;
	}
	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? (size_t)(size - off) : chunk;
		k = off >> 3;
		for (i = 0; i < n; i += 8)
			put_le64(buf + i, splitmix64(k++));
		if (fwrite(buf, 1, n, f) != n) {
			perror(path);
			return 1;
		}
	}
	if (fclose(f) != 0) {
		perror(path);
		return 1;
	}
	free(buf);
	return 0;
}

/* ---- one connection ---- */

static void
note_err(enum err e, const char *fmt, const char *detail)
{
	g.errs[e]++;
	if (g.first_err[0] == '\0')
		snprintf(g.first_err, sizeof(g.first_err), "%s: %s%s%.200s",
		    err_name[e], fmt, detail ? ": " : "", detail ? detail : "");
}

static void
conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);	/* also leaves the epoll set */
	c->fd = -1;
	c->st = ST_FREE;
}

static void
conn_want(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	epoll_ctl(g.epfd, EPOLL_CTL_MOD, c->fd, &e);
}

/* Start a connection; -1 (error counted) if it could not even start. */
static int
conn_start(struct conn *c)
{
	const struct sockaddr_in *to = g.mode == M_DIRECT ? &g.target : &g.proxy;
	struct epoll_event e = { .events = EPOLLOUT, .data.ptr = c };
	int on = 1;

	memset(c, 0, offsetof(struct conn, hdr));
	c->fd = -1;
	c->clen = -1;
	c->t0 = now_ns();
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		note_err(E_CONNECT, "socket", strerror(errno));
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (g.have_src) {
		setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on,
		    sizeof(on));
		if (bind(c->fd, (const struct sockaddr *)&g.src,
		    sizeof(g.src)) < 0) {
			note_err(E_CONNECT, "bind", strerror(errno));
			conn_close(c);
			return -1;
		}
	}
	if (connect(c->fd, (const struct sockaddr *)to, sizeof(*to)) < 0 &&
	    errno != EINPROGRESS) {
		note_err(E_CONNECT, "connect", strerror(errno));
		conn_close(c);
		return -1;
	}
	c->st = ST_CONNECT;
	epoll_ctl(g.epfd, EPOLL_CTL_ADD, c->fd, &e);
	return 0;
}

static bool
send_all(struct conn *c, const void *p, size_t n)
{
	ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

	/* A fresh socket's send buffer takes these few bytes at once. */
	if (w != (ssize_t)n) {
		note_err(c->st == ST_RESP ? E_HTTP : E_PROXY, "short send",
		    w < 0 ? strerror(errno) : NULL);
		return false;
	}
	return true;
}

/* The tunnel is up: send the request (setup, bulk) or the idle hello. */
static bool
tunnel_up(struct conn *c, bool idle)
{
	if (idle) {
		c->st = ST_IDLE;
		if (!send_all(c, "hello\n", 6))
			return false;
		conn_want(c, EPOLLIN | EPOLLRDHUP);
		return true;
	}
	c->st = ST_RESP;
	if (!send_all(c, g.req, g.reqlen))
		return false;
	conn_want(c, EPOLLIN);
	return true;
}

/* Parse the response head once complete; body bytes after it are counted. */
static void
resp_head(struct conn *c, size_t head_len)
{
	char *p, *e;

	c->head_done = true;
	c->hdr[head_len - 1] = '\0';
	if (strncmp(c->hdr, "HTTP/1.", 7) == 0 && strlen(c->hdr) > 12)
		c->status = atoi(c->hdr + 9);
	for (p = c->hdr; (p = strstr(p, "\r\n")) != NULL; p = e) {
		p += 2;
		e = p;
		if (strncasecmp(p, "content-length:", 15) == 0) {
			c->clen = strtoll(p + 15, NULL, 10);
			break;
		}
	}
}

static void
resp_data(struct conn *c, const uint8_t *p, size_t n)
{
	size_t room, take;
	char *end;

	if (!c->head_done) {
		room = HDR_MAX - 1 - c->hlen;
		take = n < room ? n : room;
		memcpy(c->hdr + c->hlen, p, take);
		c->hlen += (uint32_t)take;
		c->hdr[c->hlen] = '\0';
		end = strstr(c->hdr, "\r\n\r\n");
		if (end == NULL) {
			if (c->hlen >= HDR_MAX - 1)
				c->head_done = true;	/* status stays 0 */
			return;
		}
		size_t head_len = (size_t)(end - c->hdr) + 4;
		size_t body_in = c->hlen - head_len;
		/* the body bytes are at the end of p */
		p += take - body_in;
		n -= take - body_in;
		resp_head(c, head_len);
	}
	if (g.verify)
		verify_chunk(p, n, c->body);
	c->body += n;
}

/* Returns 1 when the connection finished well, -1 when it failed (error
 * counted, closed), 0 while going on. */
static int
conn_event(struct conn *c, uint32_t ev, bool idle)
{
	uint8_t b[512];
	ssize_t r;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	static const uint8_t greet[3] = { 5, 1, 0 };
	uint8_t req[10];

	switch (c->st) {
	case ST_CONNECT:
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr != 0 || (ev & (EPOLLERR | EPOLLHUP))) {
			note_err(E_CONNECT, "connect", strerror(soerr));
			goto fail;
		}
		if (g.mode == M_DIRECT)
			return tunnel_up(c, idle) ? 0 : (conn_close(c), -1);
		if (g.mode == M_SOCKS5) {
			c->st = ST_GREET;
			if (!send_all(c, greet, sizeof(greet)))
				goto fail;
		} else {
			char h[128];
			char ip[INET_ADDRSTRLEN];
			int n;

			inet_ntop(AF_INET, &g.target.sin_addr, ip, sizeof(ip));
			n = snprintf(h, sizeof(h), "CONNECT %s:%u HTTP/1.1\r\n"
			    "Host: %s:%u\r\n\r\n", ip, ntohs(g.target.sin_port),
			    ip, ntohs(g.target.sin_port));
			c->st = ST_HREPLY;
			if (!send_all(c, h, (size_t)n))
				goto fail;
		}
		c->need = 2;
		conn_want(c, EPOLLIN);
		return 0;
	case ST_GREET:
	case ST_SREPLY:
		/* read exactly what the reply has: nothing of the tunnel */
		r = recv(c->fd, c->hdr + c->hlen, c->need - c->hlen, 0);
		if (r <= 0) {
			if (r < 0 && errno == EAGAIN)
				return 0;
			note_err(E_PROXY, r == 0 ? "closed during the handshake"
			    : "recv", r == 0 ? NULL : strerror(errno));
			goto fail;
		}
		c->hlen += (uint32_t)r;
		if (c->st == ST_SREPLY && c->hlen == 5 && c->need == 5) {
			uint8_t at = (uint8_t)c->hdr[3];
			c->need = at == 1 ? 10 : at == 4 ? 22 :
			    at == 3 ? 7 + (uint8_t)c->hdr[4] : 0;
			if (c->need == 0) {
				note_err(E_PROXY, "bad address type in the reply", NULL);
				goto fail;
			}
		}
		if (c->hlen < c->need)
			return 0;
		if (c->st == ST_GREET) {
			if (c->hdr[0] != 5 || c->hdr[1] != 0) {
				note_err(E_PROXY, "method refused", NULL);
				goto fail;
			}
			req[0] = 5, req[1] = 1, req[2] = 0, req[3] = 1;
			memcpy(req + 4, &g.target.sin_addr, 4);
			memcpy(req + 8, &g.target.sin_port, 2);
			c->st = ST_SREPLY;
			c->hlen = 0;
			c->need = 5;
			return send_all(c, req, sizeof(req)) ? 0 :
			    (conn_close(c), -1);
		}
		if (c->hdr[0] != 5 || c->hdr[1] != 0) {
			char d[32];
			snprintf(d, sizeof(d), "REP %u", (uint8_t)c->hdr[1]);
			note_err(E_PROXY, "CONNECT refused", d);
			goto fail;
		}
		c->hlen = 0;
		return tunnel_up(c, idle) ? 0 : (conn_close(c), -1);
	case ST_HREPLY: {
		char *end;
		size_t head_len, extra;

		r = recv(c->fd, c->hdr + c->hlen, HDR_MAX - 1 - c->hlen, 0);
		if (r <= 0) {
			if (r < 0 && errno == EAGAIN)
				return 0;
			note_err(E_PROXY, r == 0 ? "closed during CONNECT" :
			    "recv", r == 0 ? NULL : strerror(errno));
			goto fail;
		}
		c->hlen += (uint32_t)r;
		c->hdr[c->hlen] = '\0';
		if ((end = strstr(c->hdr, "\r\n\r\n")) == NULL) {
			if (c->hlen >= HDR_MAX - 1) {
				note_err(E_PROXY, "CONNECT reply too long", NULL);
				goto fail;
			}
			return 0;
		}
		if (strncmp(c->hdr, "HTTP/1.", 7) != 0 ||
		    atoi(c->hdr + 9) != 200) {
			*end = '\0';
			note_err(E_PROXY, "CONNECT refused", c->hdr);
			goto fail;
		}
		head_len = (size_t)(end - c->hdr) + 4;
		extra = c->hlen - head_len;	/* the server spoke first? */
		c->hlen = 0;
		if (!tunnel_up(c, idle)) {
			conn_close(c);
			return -1;
		}
		if (extra > 0 && !idle) {
			memmove(b, end + 4, extra < sizeof(b) ? extra : sizeof(b));
			resp_data(c, b, extra < sizeof(b) ? extra : sizeof(b));
		}
		return 0;
	}
	case ST_RESP:
		for (;;) {
			r = recv(c->fd, g.bigbuf, BULK_BUF, 0);
			if (r > 0) {
				resp_data(c, g.bigbuf, (size_t)r);
				if ((size_t)r < BULK_BUF)
					return 0;
				continue;
			}
			if (r < 0 && errno == EAGAIN)
				return 0;
			if (r < 0) {
				note_err(E_HTTP, "recv", strerror(errno));
				goto fail;
			}
			break;	/* EOF */
		}
		if (c->status != 200) {
			char d[64];
			snprintf(d, sizeof(d), "status %d", c->status);
			note_err(E_HTTP, "bad response", d);
			goto fail;
		}
		if (c->clen >= 0 && (uint64_t)c->clen != c->body) {
			char d[96];
			snprintf(d, sizeof(d), "%llu body bytes, Content-Length "
			    "%lld", (unsigned long long)c->body, c->clen);
			note_err(E_HTTP, "short or long body", d);
			goto fail;
		}
		return 1;
	case ST_IDLE:
		r = recv(c->fd, b, sizeof(b), 0);
		if (r > 0 || (r < 0 && errno == EAGAIN))
			return 0;
		goto fail;	/* the tunnel went away: counted by the caller */
	case ST_FREE:
		return 0;
	}
	return 0;
fail:
	conn_close(c);
	return -1;
}

/* ---- modes ---- */

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t
pct(const uint32_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void
print_errs(void)
{
	uint64_t tot = 0;
	int i;

	for (i = 0; i < E__MAX; i++)
		tot += g.errs[i];
	printf(" errors=%llu", (unsigned long long)tot);
	for (i = 0; i < E__MAX; i++)
		printf(" err_%s=%llu", err_name[i], (unsigned long long)g.errs[i]);
	printf("\n");
	if (g.first_err[0])
		fprintf(stderr, "socks_load: first error: %s\n", g.first_err);
}

static int
run_setup(int inflight, double secs, double warm)
{
	struct conn *cs = calloc((size_t)inflight, sizeof(*cs));
	struct epoll_event evs[256];
	uint64_t t_start = now_ns(), w0, w1, now;
	uint32_t *lat = NULL;
	size_t nlat = 0, cap = 0;
	uint64_t last_scan = 0;
	int i, n, r;

	if (cs == NULL)
		return 1;
	for (i = 0; i < inflight; i++)
		cs[i].fd = -1;
	w0 = t_start + (uint64_t)(warm * 1e9);
	w1 = w0 + (uint64_t)(secs * 1e9);
	for (;;) {
		now = now_ns();
		bool any = false;
		/* start where a slot is free; scan for timeouts every 100 ms */
		bool scan = now - last_scan > 100000000ULL;
		if (scan)
			last_scan = now;
		for (i = 0; i < inflight; i++) {
			struct conn *c = &cs[i];
			if (c->st != ST_FREE) {
				any = true;
				if (scan && now - c->t0 > CONN_TIMEOUT_NS) {
					note_err(E_TIMEOUT, "no answer in 10 s", NULL);
					conn_close(c);
				}
			}
			if (c->st == ST_FREE && now < w1 && !stop_flag) {
				conn_start(c);
				any = true;
			}
		}
		if (!any)
			break;
		n = epoll_wait(g.epfd, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c->st == ST_FREE)
				continue;
			r = conn_event(c, evs[i].events, false);
			if (r != 1)
				continue;
			now = now_ns();
			if (now >= w0 && now < w1) {
				if (nlat == cap) {
					cap = cap ? cap * 2 : 65536;
					lat = realloc(lat, cap * sizeof(*lat));
					if (lat == NULL)
						return 1;
				}
				lat[nlat++] = (uint32_t)((now - c->t0) / 1000);
			}
			conn_close(c);
		}
	}
	if (nlat > 0)
		qsort(lat, nlat, sizeof(*lat), cmp_u32);
	printf("inflight=%d secs=%.2f conns=%zu rate=%.1f p50_us=%u p90_us=%u "
	    "p99_us=%u max_us=%u", inflight, secs, nlat, (double)nlat / secs,
	    pct(lat, nlat, 0.50), pct(lat, nlat, 0.90), pct(lat, nlat, 0.99),
	    nlat ? lat[nlat - 1] : 0);
	print_errs();
	free(lat);
	free(cs);
	return 0;
}

static int
run_bulk(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev;
	uint64_t t_end = 0, deadline;
	int r = 0, n;

	if (c == NULL)
		return 1;
	if (conn_start(c) < 0)
		goto out;
	deadline = now_ns() + 300ULL * 1000000000ULL;
	while (c->st != ST_FREE) {
		n = epoll_wait(g.epfd, &ev, 1, 1000);
		if (n == 1)
			r = conn_event(c, ev.events, false);
		if (r == 1) {
			t_end = now_ns();
			conn_close(c);
			break;
		}
		if (now_ns() > deadline || stop_flag) {
			note_err(E_TIMEOUT, "bulk transfer over 300 s", NULL);
			conn_close(c);
			break;
		}
	}
out:
	if (t_end) {
		double s = (double)(t_end - c->t0) / 1e9;
		printf("bytes=%llu secs=%.3f mbps=%.1f status=%d ok=1",
		    (unsigned long long)c->body, s, (double)c->body / s / 1e6,
		    c->status);
	} else
		printf("bytes=%llu secs=0 mbps=0 status=%d ok=0",
		    (unsigned long long)c->body, c->status);
	if (g.verify)
		printf(" verified=%s", !t_end ? "no" : g.verify_bad ? "FAIL" :
		    "yes");
	if (g.verify_bad)
		printf(" first_bad_offset=%llu",
		    (unsigned long long)(g.verify_bad - 1));
	print_errs();
	free(c);
	return 0;
}

/* Open fds of a process, -1 if unknown. */
static int
count_fds(int pid)
{
	char path[64];
	int fd, n = 0;
	long r, pos;
	char buf[32768];

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	/* getdents64: count entries other than . and .. */
	while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (pos = 0; pos < r;) {
			unsigned short reclen;
			const char *name = buf + pos + 19;
			memcpy(&reclen, buf + pos + 16, 2);
			if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
				n++;
			pos += reclen;
		}
	}
	close(fd);
	return n;
}

/*
 * idle: budget_pid/budget_limit, when set, keep the proxy (that pid) under
 * its open files limit while tunnels are set up: a fresh tunnel may hold
 * up to 6 fds (two sockets, two pipes) until its pipes are released.
 */
static int budget_pid, budget_limit;

static int
run_idle(int nconn, double secs)
{
	struct conn *cs = calloc((size_t)nconn, sizeof(*cs));
	struct epoll_event evs[256];
	int i, n, started = 0, pending = 0, up = 0, failed = 0, lost = 0;
	uint64_t deadline;

	if (cs == NULL)
		return 1;
	int fds_meas = 0, up_since = 0, paused = 0;
	uint64_t meas_at = 0, now;

	deadline = now_ns() + 180ULL * 1000000000ULL;	/* to set them all up */
	while ((up + failed < nconn) && !stop_flag && (now = now_ns()) < deadline) {
		if (budget_pid > 0 && now - meas_at > 100000000ULL) {
			fds_meas = count_fds(budget_pid);
			meas_at = now;
			up_since = 0;
		}
		while (pending < 256 && started < nconn) {
			/* what the count may not show yet: every set-up in
			 * progress and every tunnel up since, 6 fds each */
			if (budget_pid > 0 && fds_meas + 6 * (pending +
			    up_since + 1) + 128 > budget_limit) {
				paused++;
				break;
			}
			if (conn_start(&cs[started++]) < 0)
				failed++;
			else
				pending++;
		}
		n = epoll_wait(g.epfd, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			enum st before = c->st;
			if (before == ST_FREE)
				continue;
			int r = conn_event(c, evs[i].events, true);
			if (r < 0) {
				if (before == ST_IDLE) {
					lost++;
				} else {
					failed++;
					pending--;
				}
			} else if (before != ST_IDLE && c->st == ST_IDLE) {
				up++;
				up_since++;
				pending--;
			}
		}
	}
	printf("held=%d failed=%d ramp_pauses=%d\n", up - lost,
	    failed + (nconn - up - failed), paused);
	fflush(stdout);
	/* hold: until a signal, EOF on stdin, or the time is up */
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	bool have_stdin = epoll_ctl(g.epfd, EPOLL_CTL_ADD, 0, &e) == 0;
	deadline = now_ns() + (uint64_t)(secs * 1e9);
	while (!stop_flag && now_ns() < deadline) {
		n = epoll_wait(g.epfd, evs, 256, 200);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c == NULL) {
				char b[64];
				if (read(0, b, sizeof(b)) <= 0) {
					stop_flag = 1;
					if (have_stdin)
						epoll_ctl(g.epfd, EPOLL_CTL_DEL, 0, NULL);
				}
				continue;
			}
			if (c->st == ST_IDLE && conn_event(c, evs[i].events, true) < 0)
				lost++;
		}
	}
	printf("alive=%d lost=%d", up - lost, lost);
	print_errs();
	for (i = 0; i < nconn; i++)
		if (cs[i].st != ST_FREE)
			conn_close(&cs[i]);
	free(cs);
	return 0;
}

static int
run_hold(const struct sockaddr_in *at)
{
	int lfd, fd, on = 1, i, n, nconn = 0;
	struct epoll_event e, evs[256];
	char b[4096];

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return perror("socket"), 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(lfd, (const struct sockaddr *)at, sizeof(*at)) < 0 ||
	    listen(lfd, 65535) < 0)
		return perror("hold: bind/listen"), 1;
	e.events = EPOLLIN;
	e.data.fd = lfd;
	epoll_ctl(g.epfd, EPOLL_CTL_ADD, lfd, &e);
	while (!stop_flag) {
		n = epoll_wait(g.epfd, evs, 256, 500);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == lfd) {
				while ((fd = accept4(lfd, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					e.events = EPOLLIN;
					e.data.fd = fd;
					epoll_ctl(g.epfd, EPOLL_CTL_ADD, fd, &e);
					nconn++;
				}
				if (errno == EMFILE || errno == ENFILE) {
					fprintf(stderr, "hold: accept: %s after %d\n",
					    strerror(errno), nconn);
					usleep(100000);
				}
				continue;
			}
			ssize_t r = recv(evs[i].data.fd, b, sizeof(b), 0);
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				close(evs[i].data.fd);
				nconn--;
			}
		}
	}
	return 0;
}

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

static int
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

int
main(int argc, char **argv)
{
	const char *cmd;
	int opt, inflight = 1, nconn = 0;
	double secs = -1, warm = 1;
	bool have_target = false, have_listen = false;
	struct sockaddr_in listen_at;
	struct sigaction sa;

	if (argc < 2)
		usage();
	cmd = argv[1];
	if (strcmp(cmd, "mkfile") == 0) {
		if (argc != 4)
			usage();
		return mkfile(argv[2], argv[3]);
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "m:t:p:b:c:d:w:u:n:l:VP:L:")) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "direct") == 0)
				g.mode = M_DIRECT;
			else if (strcmp(optarg, "socks5") == 0)
				g.mode = M_SOCKS5;
			else if (strcmp(optarg, "http") == 0)
				g.mode = M_HTTP;
			else
				usage();
			break;
		case 't':
			if (parse_addr(optarg, &g.target, true) < 0)
				usage();
			have_target = true;
			break;
		case 'p':
			if (parse_addr(optarg, &g.proxy, true) < 0)
				usage();
			g.have_proxy = true;
			break;
		case 'b':
			if (parse_addr(optarg, &g.src, false) < 0)
				usage();
			g.have_src = true;
			break;
		case 'l':
			if (parse_addr(optarg, &listen_at, true) < 0)
				usage();
			have_listen = true;
			break;
		case 'c':
			inflight = atoi(optarg);
			break;
		case 'n':
			nconn = atoi(optarg);
			break;
		case 'd':
			secs = atof(optarg);
			break;
		case 'w':
			warm = atof(optarg);
			break;
		case 'u':
			g.path = optarg;
			break;
		case 'V':
			g.verify = true;
			break;
		case 'P':
			budget_pid = atoi(optarg);
			break;
		case 'L':
			budget_limit = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: epoll_wait returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((g.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return perror("epoll_create1"), 1;
	if ((g.bigbuf = malloc(BULK_BUF)) == NULL)
		return 1;

	if (strcmp(cmd, "hold") == 0 || strcmp(cmd, "floor") == 0) {
		if (!have_listen)
			usage();
		return cmd[0] == 'h' ? run_hold(&listen_at) : run_floor(&listen_at);
	}
	if (!have_target || (g.mode != M_DIRECT && !g.have_proxy))
		usage();
	g.reqlen = (size_t)snprintf(g.req, sizeof(g.req),
	    "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", g.path);
	if (strcmp(cmd, "setup") == 0) {
		if (inflight < 1 || inflight > 100000)
			usage();
		return run_setup(inflight, secs < 0 ? 10 : secs, warm);
	}
	if (strcmp(cmd, "bulk") == 0)
		return run_bulk();
	if (strcmp(cmd, "idle") == 0) {
		if (nconn < 1 || g.mode == M_DIRECT)
			usage();
		return run_idle(nconn, secs < 0 ? 600 : secs);
	}
	usage();
	return 2;
}
