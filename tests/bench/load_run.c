/*
 * load_run.c: the client runs of socks_load (setup: a set-up rate with
 * latencies; bulk: one download; idle: many tunnels held open) and hold,
 * the idle tunnels' target.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

int
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

int
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
 * idle: budget_pid/budget_limit, when set (pid > 0), keep the proxy (that
 * pid) under its open files limit while tunnels are set up: a fresh tunnel
 * may hold up to 6 fds (two sockets, two pipes) until its pipes are
 * released.
 */
int
run_idle(int nconn, double secs, int budget_pid, int budget_limit)
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

int
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
