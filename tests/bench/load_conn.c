/*
 * load_conn.c: one client connection of socks_load: connect (from the
 * source address), set up the tunnel (direct, SOCKS5, HTTP CONNECT), send
 * the request, read and check the response to EOF; and the bulk file's
 * pattern, which mkfile writes and bulk -V checks.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "socks_load.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

static const char *err_name[E__MAX] = { "connect", "proxy", "http", "timeout" };

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

int
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

void
note_err(enum err e, const char *fmt, const char *detail)
{
	g.errs[e]++;
	if (g.first_err[0] == '\0')
		snprintf(g.first_err, sizeof(g.first_err), "%s: %s%s%.200s",
		    err_name[e], fmt, detail ? ": " : "", detail ? detail : "");
}

void
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
int
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
int
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

void
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
