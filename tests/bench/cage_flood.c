/*
 * cage_flood: a test tool that plays an attacking cage and a victim cage
 * against gatekeeperd on loopback in a test network namespace. A cage is a
 * source address: with --src every socket is bound to it (port 0) first.
 *
 *   cage_flood MODE [--src A] [--dst A (127.0.0.1)] [--port N] [--secs S (5)]
 *       [--count N] [--ready FILE] [--name N] [--suffix S] [--target H:P]
 *       [--sock PATH] [--name-mode unique|fixed] [--send-hello socks5]
 *       [--tcp] [--http] [--wait S] [--hold S]
 *
 * dns-flood      For --secs, A queries (RD, random id) from one UDP socket in
 *                sendmmsg batches of 64, as fast as it goes or --count a
 *                second, for <12 random [a-z0-9]>.SUFFIX (--name-mode fixed:
 *                --name); replies drained between batches. Ready after the
 *                first batch (the number sent).  Out: sent replies noerror
 *                nxdomain refused servfail other errors (failed sends)
 * hold           --count TCP connections, one after another (2 s each, stop
 *                at the first failure), silent or, with --send-hello socks5,
 *                sending the greeting 05 01 00 and no more; ready (the number
 *                open); held --secs, what comes is read and dropped.
 *                Out: opened closed_by_server closed_within_ms (the last
 *                close seen, counted from ready; 0 if none)
 * socks-tunnels  --count SOCKS5 CONNECTs to --target (ATYP 1 or 3; --http:
 *                HTTP CONNECT, a status but 200 is rep_1), 64 handshakes at a
 *                time, 2 s per step, stopping after 50 failures in a row;
 *                ready (the number established); held idle --secs as in
 *                hold.  Out: established failed rep_<REP>=N...
 *                rep_fail_other closed_by_server closed_within_ms
 * listen-hold    a TCP server on --dst:--port that accepts everything and
 *                sends nothing for --secs, reading and dropping what comes
 *                and closing a connection once its client ends it; ready
 *                (0) once listening.  Out: accepted
 * probe-dns      every 20 ms a query for --name, 1 s to answer (same id), on
 *                a fresh UDP socket or, with --tcp, connection (timed from
 *                connect); over UDP the query goes again every second
 *                while unanswered, as a stub resolver's does (a datagram
 *                may be dropped under a flood: lost is no answer at all).
 *                Out: n lost p50_ms p99_ms max_ms rcode_noerror rcode_other
 * probe-socks    every 50 ms a fresh connection, SOCKS5 CONNECT to --target
 *                (--http: HTTP CONNECT), 2 s in all, timed from connect to
 *                the whole reply; ok on REP 0 / status 200.
 *                Out: n ok lost failed p50_ms p99_ms max_ms
 * probe-ctl      every 200 ms (and 20 ms after the last closed) cage.create
 *                for --src on the control socket --sock, 2 s in all, timed
 *                from connect to the reply line; ok if it has "ok":true.
 *                Out: n ok lost failed p50_ms p99_ms max_ms
 *
 * Output: one line on stdout at the end, key=value pairs separated by
 * spaces, also after SIGTERM/SIGINT (exit 0). Probes: ready (0) at the
 * start; percentiles by nearest rank over the successful attempts, ms with 2
 * decimals, 9999.00 if none; lost = timed out, failed = any other failure.
 * A mode's first failure is told on stderr. Opening (hold, socks-tunnels)
 * and holding last --secs at most each, winding down about 1 s (a probe's
 * last attempt: 2 s). --ready FILE: the number and a newline go to FILE.tmp,
 * then renamed to FILE. --wait S: a step (a probe's attempt) waits S for
 * its reply instead of the 1 s / 2 s above (a session of socks-tunnels: 3
 * steps). --hold S: hold, socks-tunnels hold for S instead of --secs. Both
 * let a test on a slow host wait long enough that only what never comes
 * counts as lost. Exit 1 on a runtime failure, 2 on a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT	24
#endif

#define SEC		1000000LL	/* microseconds */
#define MSEC		1000LL
#define STEP		(2 * SEC)	/* to connect; a handshake step */
#define BATCH		64		/* dns-flood's sendmmsg */
#define PAR_MAX		64		/* sessions at once */

struct opts {
	struct sockaddr_in src, dst;	/* src.sin_family 0: no --src */
	int64_t		 dur;		/* --secs, us */
	int64_t		 wait, hold;	/* --wait (0: the mode's), --hold */
	unsigned long	 count;
	const char	*ready, *sock;
	int		 fixed, tcp, http, hello;
	char		 thost[256];	/* --target */
	unsigned	 tport;
	uint8_t		 req[262];	/* its SOCKS5 request */
	uint8_t		 nm[256], sfx[256];	/* wire form */
	size_t		 reqlen, nmlen, sfxlen;
};

/* What a session says: connect, then per step a request and its reply. */
enum kind { K_SILENT, K_HELLO, K_SOCKS, K_HTTP, K_DNS_TCP, K_DNS_UDP, K_CTL };
static const int nsteps[] = { 0, 1, 2, 1, 1, 1, 1 };

enum sess_state { SS_FREE, SS_CONNECT, SS_STEP };

struct sess {
	int		 fd, step;
	enum sess_state	 state;
	uint16_t	 id;		/* its DNS query's */
	int64_t		 t0, deadline;	/* t0: at connect */
	int64_t		 resend;	/* a UDP query's next copy */
	size_t		 qlen;		/* its length (in b until a reply) */
	size_t		 got;
	uint8_t		 b[8192];	/* request, then reply */
};

struct mode {
	const char	*name;
	int		(*run)(const struct opts *, const struct mode *);
	unsigned	 need;		/* NEED_* */
	enum kind	 kind;
	size_t		 par;		/* sessions at once */
	int64_t		 step, total;	/* us: a step, a session */
	int64_t		 period, gap;	/* start to start; after an end */
	unsigned long	 fails;		/* in a row: stop */
};

/* Sessions run by engine(), and what came of them. */
struct run {
	const struct opts *o;
	const struct mode *m;
	struct mode	 mc;		/* *m with --wait applied */
	enum kind	 kind;
	size_t		 active, nheld, nlat, cap;
	int64_t		 next;		/* no start before */
	unsigned long	 started, in_row, n, ok, lost, failed, noerror;
	unsigned long	 rep[256], closed;
	struct pollfd	*held;		/* hold, socks-tunnels */
	int64_t		*lat, last_close;	/* probes; from ready */
	int		 told;
	struct sess	 s[PAR_MAX];
};

static volatile sig_atomic_t stop;
static uint64_t rng_state;

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	fputs("cage_flood: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (code == 1)
		fprintf(stderr, ": %s", strerror(saved));
	fputs(code == 2 ? " (see --help)\n" : "\n", stderr);
	exit(code);
}

static int64_t
now_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		die(1, "clock_gettime");
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec / 1000;
}

/* Milliseconds until the deadline, rounded up, at most 1000. */
static int
ms_until(int64_t deadline)
{
	int64_t d = deadline - now_us();

	if (d <= 0)
		return 0;
	return d >= SEC ? 1000 : (int)((d + MSEC - 1) / MSEC);
}

static void
xpoll(struct pollfd *pfd, nfds_t n, int ms)
{
	if (poll(pfd, n, ms) == -1 && errno != EINTR)
		die(1, "poll");
}

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
setup(void)
{
	struct sigaction sa;
	struct rlimit rl;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll() returns */
	if (sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1)
		die(1, "sigaction");
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		die(1, "sigaction");
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		die(1, "getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fprintf(stderr, "cage_flood: setrlimit: %s\n", strerror(errno));
	if (getrandom(&rng_state, sizeof(rng_state), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(rng_state) || rng_state == 0)
		rng_state = (uint64_t)now_us() << 16 ^ (uint64_t)getpid() ^ 1;
}

static void
write_ready(const struct opts *o, unsigned long n)
{
	char tmp[PATH_MAX], line[32];
	int fd, len;

	if (o->ready == NULL)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->ready) >= (int)sizeof(tmp))
		die(2, "--ready: path too long");
	len = snprintf(line, sizeof(line), "%lu\n", n);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || write(fd, line, (size_t)len) != len ||
	    close(fd) == -1 || rename(tmp, o->ready) == -1)
		die(1, "--ready %s", o->ready);
}

/* A non-blocking socket connecting to the server: TCP or UDP to
 * --dst:--port from --src, or (is_unix) the stream socket --sock. */
static int
open_socket(const struct opts *o, int type, int is_unix)
{
	const struct sockaddr *to = (const struct sockaddr *)&o->dst;
	socklen_t tolen = sizeof(o->dst);
	struct sockaddr_un sa;
	int fd, one = 1, saved;

	if (is_unix) {
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		memcpy(sa.sun_path, o->sock, strlen(o->sock)); /* fits */
		to = (const struct sockaddr *)&sa;
		tolen = sizeof(sa);
	}
	if ((fd = socket(to->sa_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if ((!is_unix && o->src.sin_family == AF_INET && ((type ==
	    SOCK_STREAM && setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT,
	    &one, sizeof(one)) == -1) || bind(fd, (const struct sockaddr *)
	    &o->src, sizeof(o->src)) == -1)) || (connect(fd, to, tolen) ==
	    -1 && errno != EINPROGRESS)) {
		saved = errno;		/* a unix backlog full: EAGAIN */
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* ---- bytes: DNS, and what sessions say ---- */

/* name in wire form into out[256]: its length, 0 if it is no name. */
static size_t
dns_wire(const char *name, uint8_t *out)
{
	size_t pos = 0, lab;

	while (*name != '\0') {
		lab = strcspn(name, ".");
		if (lab == 0 || lab > 63 || 255 - pos < lab + 2)
			return 0;
		out[pos++] = (uint8_t)lab;
		memcpy(out + pos, name, lab);
		pos += lab;
		name += lab + (name[lab] == '.');
	}
	if (pos == 0)
		return 0;
	out[pos++] = 0;
	return pos;
}

/* A query (A, IN, RD) for label (if any) + wire: 16 + 13 + 255 at most. */
static size_t
dns_query(uint8_t *b, uint16_t id, const char *label, const uint8_t *wire,
    size_t wlen)
{
	size_t n = 12, ll = label != NULL ? strlen(label) : 0;

	memset(b, 0, 12);
	b[0] = (uint8_t)(id >> 8);
	b[1] = (uint8_t)id;
	b[2] = 0x01;			/* RD */
	b[5] = 1;			/* QDCOUNT */
	if (ll > 0) {
		b[n++] = (uint8_t)ll;
		memcpy(b + n, label, ll);
		n += ll;
	}
	memcpy(b + n, wire, wlen);
	memcpy(b + n + wlen, "\0\1\0\1", 4);
	return n + wlen + 4;
}

/* A response's RCODE if it is one (to id, unless id < 0), else -1. */
static int
dns_rcode(const uint8_t *b, size_t n, int id)
{
	if (n < 12 || (b[2] & 0x80) == 0 || (id >= 0 && (b[0] != id >> 8 ||
	    b[1] != (id & 0xff))))
		return -1;
	return b[3] & 0x0f;
}

/* The request of s's step into s->b: its length. */
static size_t
say_req(const struct opts *o, enum kind k, struct sess *s)
{
	char src[INET_ADDRSTRLEN];
	size_t n, pre = k == K_DNS_TCP ? 2 : 0;

	switch (k) {
	case K_SILENT:
	case K_HELLO:
	case K_SOCKS:
		memcpy(s->b, s->step == 0 ? (const uint8_t *)"\5\1\0" : o->req,
		    s->step == 0 ? 3 : o->reqlen);
		return s->step == 0 ? 3 : o->reqlen;
	case K_HTTP:
		return (size_t)snprintf((char *)s->b, sizeof(s->b), "CONNECT "
		    "%s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", o->thost, o->tport,
		    o->thost, o->tport);
	case K_DNS_TCP:
	case K_DNS_UDP:
		s->id = (uint16_t)rng();
		n = dns_query(s->b + pre, s->id, NULL, o->nm, o->nmlen);
		if (pre > 0) {
			s->b[0] = (uint8_t)(n >> 8);
			s->b[1] = (uint8_t)n;
		}
		return n + pre;
	case K_CTL:
		if (inet_ntop(AF_INET, &o->src.sin_addr, src, sizeof(src)) ==
		    NULL)
			die(1, "inet_ntop");
		return (size_t)snprintf((char *)s->b, sizeof(s->b), "{\"op\":"
		    "\"cage.create\",\"source\":\"%s\",\"allow\":"
		    "[\"example.org\"],\"label\":\"probe\"}\n", src);
	}
	return 0;
}

/* Whether s->b holds the step's whole reply: 1 yes, 0 not yet, -1 bad. */
static int
say_done(enum kind k, const struct sess *s)
{
	const uint8_t *b = s->b;

	switch (k) {
	case K_SILENT:
	case K_HELLO:
		return 1;		/* read nothing */
	case K_SOCKS:
		if (s->step == 0)
			return s->got < 2 ? 0 : b[0] == 5 && b[1] == 0 ? 1 : -1;
		if (s->got < 5)
			return 0;
		if (b[0] != 5 || (b[3] != 1 && b[3] != 3 && b[3] != 4))
			return -1;
		return s->got >= (b[3] == 1 ? 10 : b[3] == 4 ? 22 :
		    7 + (size_t)b[4]);
	case K_HTTP:
		return memmem(b, s->got, "\r\n\r\n", 4) != NULL;
	case K_DNS_TCP:
		return s->got >= 2 && s->got >= 2 + ((size_t)b[0] << 8 | b[1]);
	case K_DNS_UDP:
		return s->got > 0;	/* a datagram */
	case K_CTL:
		return memchr(b, '\n', s->got) != NULL;
	}
	return -1;
}

/* The whole reply's verdict: 0 ok, else a code (REP, RCODE), -1 bad. */
static int
say_verdict(enum kind k, const struct sess *s)
{
	const char *t = (const char *)s->b;

	switch (k) {
	case K_SILENT:
	case K_HELLO:
		return 0;
	case K_SOCKS:
		return s->b[1];
	case K_HTTP:
		return strncmp(t, "HTTP/1.", 7) != 0 ||
		    strncmp(t + 8, " 200", 4) != 0 ||
		    (t[12] != ' ' && t[12] != '\r');
	case K_DNS_TCP:
		return dns_rcode(s->b + 2, s->got - 2, s->id);
	case K_DNS_UDP:
		return dns_rcode(s->b, s->got, s->id);
	case K_CTL:
		return strstr(t, "\"ok\":true") == NULL;
	}
	return -1;
}

/* ---- the session engine ---- */

/* Enters step k, sending its request: 1 if no step is left, -1 if the
 * request did not go out whole. */
static int
sess_step(struct run *r, struct sess *s, int k)
{
	int64_t now = now_us(), end = s->t0 + r->m->total;
	ssize_t w;
	size_t n;

	if (k == nsteps[r->kind])
		return 1;
	s->state = SS_STEP;
	s->step = k;
	s->deadline = now + r->m->step < end ? now + r->m->step : end;
	n = say_req(r->o, r->kind, s);
	s->got = 0;
	s->qlen = n;
	s->resend = now + SEC;
	if ((w = send(s->fd, s->b, n, MSG_NOSIGNAL | MSG_DONTWAIT)) ==
	    (ssize_t)n)
		return 0;
	if (w >= 0 || errno == EAGAIN)
		errno = EMSGSIZE;
	return -1;
}

/* Advances s as far as its bytes allow: 1 done, 0 waiting, -1 failed. */
static int
sess_drive(struct run *r, struct sess *s)
{
	socklen_t len = sizeof(int);
	int d, err = 0;
	ssize_t n;

	if (s->state == SS_CONNECT) {
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1 ||
		    (errno = err) != 0)
			return -1;
		if ((d = sess_step(r, s, 0)) != 0)
			return d;
	}
	for (;;) {
		if ((d = say_done(r->kind, s)) < 0)
			errno = EPROTO;
		else if (d > 0 && (d = sess_step(r, s, s->step + 1)) == 0)
			continue;
		if (d != 0)
			return d;
		if (s->got + 1 >= sizeof(s->b)) {
			errno = EMSGSIZE;
			return -1;
		}
		n = recv(s->fd, s->b + s->got, sizeof(s->b) - 1 - s->got,
		    MSG_DONTWAIT);
		if (n <= 0)
			break;
		s->got += (size_t)n;
		s->b[s->got] = '\0';
	}
	if (n == 0)
		errno = ECONNRESET;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 :
	    -1;
}

static void
run_tell(struct run *r, const struct sess *s, int res, int code, int err)
{
	const char *t = (const char *)s->b;
	size_t i;

	if (r->told || stop)
		return;
	r->told = 1;
	fprintf(stderr, "cage_flood: %s: first failure: ", r->m->name);
	if (res == 0) {
		fputs("timed out\n", stderr);
	} else if (res < 0 && err == EPROTO) {
		fprintf(stderr, "unexpected reply (%zu bytes):", s->got);
		for (i = 0; i < s->got && i < 16; i++)
			fprintf(stderr, " %02x", s->b[i]);
		fputc('\n', stderr);
	} else if (res < 0) {
		fprintf(stderr, "%s\n", strerror(err));
	} else if (r->kind == K_HTTP || r->kind == K_CTL) {
		fprintf(stderr, "reply %.*s\n", (int)strcspn(t, "\r\n"), t);
	} else {
		fprintf(stderr, "reply code %d\n", code);
	}
}

/* Ends s: res 1 done, 0 timed out, -1 failed. */
static void
run_end(struct run *r, struct sess *s, int res)
{
	int err = errno;
	int64_t now = now_us();
	int code = res > 0 ? say_verdict(r->kind, s) : -1;
	int dns = r->kind == K_DNS_TCP || r->kind == K_DNS_UDP;

	r->n++;
	if (res > 0 && (code == 0 || (dns && code > 0))) {
		r->in_row = 0;
		r->ok++;
		r->noerror += code == 0;
		if (r->held != NULL) {
			r->held[r->nheld].fd = s->fd;
			r->held[r->nheld++].events = POLLIN;
			s->fd = -1;
		} else if (r->nlat < r->cap) {
			r->lat[r->nlat++] = now - s->t0;
		}
	} else {
		run_tell(r, s, res, code, err);
		r->in_row++;
		if (res > 0 && code > 0 && r->held != NULL)
			r->rep[code]++;
		else if (res == 0)
			r->lost++;
		else
			r->failed++;
	}
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	s->state = SS_FREE;
	r->active--;
	if (r->next < now + r->m->gap)
		r->next = now + r->m->gap;
}

static void
run_start(struct run *r, struct sess *s)
{
	int64_t now = now_us();

	r->started++;
	r->active++;
	r->next = r->next + r->m->period > now ? r->next + r->m->period : now;
	s->t0 = now;
	s->deadline = now + (r->m->step < r->m->total ? r->m->step :
	    r->m->total);
	s->state = SS_CONNECT;
	s->got = 0;
	s->step = -1;
	s->fd = open_socket(r->o, r->kind == K_DNS_UDP ? SOCK_DGRAM :
	    SOCK_STREAM, r->kind == K_CTL);
	if (s->fd == -1)
		run_end(r, s, -1);
}

/* Whether another session may start (now or once r->next has come). */
static int
run_more(const struct run *r, int64_t end)
{
	return !stop && now_us() < end && (r->m->period > 0 ||
	    r->started < r->o->count) && r->in_row < r->m->fails;
}

/* A UDP DNS query sent and not answered yet. */
static int
udp_unanswered(const struct run *r, const struct sess *s)
{
	return r->kind == K_DNS_UDP && s->state == SS_STEP && s->got == 0;
}

/* One poll over the sessions under way; each is driven or expired. */
static void
run_poll(struct run *r)
{
	struct pollfd pfd[PAR_MAX];
	struct sess *s, *map[PAR_MAX];
	int64_t next = now_us() + SEC;
	nfds_t i, n = 0;
	int res;

	for (i = 0; i < r->m->par; i++) {
		if ((s = &r->s[i])->state == SS_FREE)
			continue;
		pfd[n].fd = s->fd;
		pfd[n].events = s->state == SS_CONNECT ? POLLOUT : POLLIN;
		pfd[n].revents = 0;
		map[n++] = s;
		next = s->deadline < next ? s->deadline : next;
		if (udp_unanswered(r, s) && s->resend < next)
			next = s->resend;
	}
	xpoll(pfd, n, ms_until(next));
	for (i = 0; i < n; i++) {
		if (pfd[i].revents != 0 && (res = sess_drive(r, map[i])) != 0)
			run_end(r, map[i], res);
		else if (now_us() >= map[i]->deadline)
			run_end(r, map[i], 0);
		else if (udp_unanswered(r, map[i]) &&
		    now_us() >= map[i]->resend) {
			/* the same query again (b holds it until a reply) */
			(void)send(map[i]->fd, map[i]->b, map[i]->qlen,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
			map[i]->resend += SEC;
		}
	}
}

/* Runs sessions, m->par at a time, until --count have started (probes:
 * one every m->period), m->fails failed in a row, or --secs passed. */
static void
engine(struct run *r)
{
	int64_t end = now_us() + r->o->dur;
	size_t i;

	r->next = now_us();
	for (;;) {
		for (i = 0; i < r->m->par && now_us() >= r->next; i++)
			if (r->s[i].state == SS_FREE && run_more(r, end))
				run_start(r, &r->s[i]);
		if (stop || (r->active == 0 && !run_more(r, end)))
			break;
		if (r->active > 0)
			run_poll(r);
		else
			xpoll(NULL, 0, ms_until(r->next < end ? r->next : end));
	}
	for (i = 0; i < r->m->par; i++)
		if (r->s[i].state != SS_FREE) {
			close(r->s[i].fd);	/* stopped by a signal */
			r->s[i].state = SS_FREE;
		}
}

static void
run_init(struct run *r, const struct opts *o, const struct mode *m)
{
	size_t i;

	r->o = o;
	r->mc = *m;
	if (o->wait > 0 && m->step > 0) {
		r->mc.total = m->total / m->step * o->wait;
		r->mc.step = o->wait;
	}
	r->m = &r->mc;
	r->kind = m->kind;
	if (m->kind == K_SILENT && o->hello)
		r->kind = K_HELLO;
	else if (m->kind == K_DNS_UDP && o->tcp)
		r->kind = K_DNS_TCP;
	else if (m->kind == K_SOCKS && o->http)
		r->kind = K_HTTP;
	for (i = 0; i < PAR_MAX; i++)
		r->s[i].fd = -1;
}

/* ---- hold, socks-tunnels: open, then watch for the server's closes ---- */

/* Whether the server closed it; what it sends is read and dropped. */
static int
held_gone(const struct pollfd *pfd)
{
	char buf[4096];
	ssize_t n;
	int i;

	if ((pfd->revents & POLLIN) == 0)
		return (pfd->revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
	for (i = 0; i < 4; i++)
		if ((n = recv(pfd->fd, buf, sizeof(buf), MSG_DONTWAIT)) <= 0)
			return n == 0 || (errno != EAGAIN &&
			    errno != EWOULDBLOCK && errno != EINTR);
	return 0;
}

static void
held_watch(struct run *r)
{
	int64_t t0 = now_us(), end = t0 + r->o->hold;
	struct pollfd *p;

	while (!stop && now_us() < end) {
		xpoll(r->held, (nfds_t)r->nheld, ms_until(end));
		for (p = r->held; p < r->held + r->nheld; p++) {
			if (p->fd == -1 || !held_gone(p))
				continue;
			close(p->fd);
			p->fd = -1;
			r->closed++;
			r->last_close = now_us() - t0;
		}
	}
	printf(" closed_by_server=%lu closed_within_ms=%lld\n", r->closed,
	    (long long)(r->last_close / MSEC));
	for (p = r->held; p < r->held + r->nheld; p++)
		if (p->fd != -1)
			close(p->fd);
	free(r->held);
}

static int
run_held(const struct opts *o, const struct mode *m)
{
	static struct run r;
	unsigned long other;
	int i;

	run_init(&r, o, m);
	if ((r.held = calloc(o->count, sizeof(*r.held))) == NULL)
		die(1, "calloc");
	engine(&r);
	write_ready(o, r.nheld);
	other = r.lost + r.failed;
	if (m->kind == K_SILENT)
		printf("opened=%zu", r.nheld);
	else
		printf("established=%zu failed=%lu", r.nheld, r.n - r.ok);
	for (i = 1; i < 256 && m->kind != K_SILENT; i++)
		if (r.rep[i] > 0)
			printf(" rep_%d=%lu", i, r.rep[i]);
	if (m->kind != K_SILENT)
		printf(" rep_fail_other=%lu", other);
	held_watch(&r);
	return 0;
}

/* ---- probes ---- */

static int
lat_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double
pct_ms(const struct run *r, size_t pct)
{
	if (r->nlat == 0)
		return 9999.0;
	return (double)r->lat[(pct * r->nlat + 99) / 100 - 1] / 1000.0;
}

static int
run_probe(const struct opts *o, const struct mode *m)
{
	static struct run r;
	int dns = m->kind == K_DNS_UDP;

	run_init(&r, o, m);
	r.cap = (size_t)(o->dur / m->period) + 4;
	if ((r.lat = calloc(r.cap, sizeof(*r.lat))) == NULL)
		die(1, "calloc");
	write_ready(o, 0);
	engine(&r);
	qsort(r.lat, r.nlat, sizeof(*r.lat), lat_cmp);
	if (dns)
		printf("n=%lu lost=%lu", r.n, r.lost + r.failed);
	else
		printf("n=%lu ok=%lu lost=%lu failed=%lu", r.n, r.ok, r.lost,
		    r.failed);
	printf(" p50_ms=%.2f p99_ms=%.2f max_ms=%.2f", pct_ms(&r, 50),
	    pct_ms(&r, 99), pct_ms(&r, 100));
	if (dns)
		printf(" rcode_noerror=%lu rcode_other=%lu", r.noerror,
		    r.ok - r.noerror);
	putchar('\n');
	free(r.lat);
	return 0;
}

/* ---- listen-hold ---- */

/* A client of listen-hold's sent bytes or left: drop the bytes, close on
 * its end. */
static void
listen_drain(int ep, int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
		epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
		close(fd);
	}
}

static int
run_listen(const struct opts *o, const struct mode *m)
{
	struct epoll_event ev, evs[256];
	unsigned long accepted = 0;
	int64_t end;
	int one = 1, i, n, lfd, ep, fd;

	(void)m;
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 || setsockopt(lfd, SOL_SOCKET,
	    SO_REUSEADDR, &one, sizeof(one)) == -1 || bind(lfd,
	    (const struct sockaddr *)&o->dst, sizeof(o->dst)) == -1 ||
	    listen(lfd, 4096) == -1 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die(1, "listen-hold: port %u", ntohs(o->dst.sin_port));
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1)
		die(1, "listen-hold: epoll");
	write_ready(o, 0);
	end = now_us() + o->dur;
	while (!stop && now_us() < end) {
		if ((n = epoll_wait(ep, evs, 256, ms_until(end))) == -1 &&
		    errno != EINTR)
			die(1, "listen-hold: epoll_wait");
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd != lfd) {
				listen_drain(ep, evs[i].data.fd);
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
			    SOCK_CLOEXEC)) != -1) {
				accepted++;
				ev.events = EPOLLIN | EPOLLRDHUP;
				ev.data.fd = fd;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1)
					close(fd);
			}
			if (errno == EMFILE || errno == ENFILE)
				xpoll(NULL, 0, 100);
		}
	}
	printf("accepted=%lu\n", accepted);
	close(ep);
	close(lfd);
	return 0;
}

/* ---- dns-flood ---- */

struct flood {
	int		 fd;
	unsigned long	 sent, replies, errors, rc[16];
	uint8_t		 q[BATCH][300], a[BATCH][512];
	struct iovec	 qv[BATCH], av[BATCH];
	struct mmsghdr	 qm[BATCH], am[BATCH];
};

static void
flood_send(struct flood *f, const struct opts *o, unsigned n)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct pollfd pfd = { .fd = f->fd, .events = POLLOUT };
	char label[13] = { 0 };
	unsigned i, j;
	int r;

	for (i = 0; i < n; i++) {
		for (j = 0; j < 12 && !o->fixed; j++)
			label[j] = alnum[rng() % 36];
		f->qv[i].iov_len = dns_query(f->q[i], (uint16_t)rng(),
		    o->fixed ? NULL : label, o->fixed ? o->nm : o->sfx,
		    o->fixed ? o->nmlen : o->sfxlen);
	}
	if ((r = sendmmsg(f->fd, f->qm, n, 0)) > 0)
		f->sent += (unsigned)r;
	else if (r == -1 && errno != ECONNREFUSED && errno != EINTR) {
		/* (ECONNREFUSED: an earlier ICMP error, now told) */
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
			f->errors++;
		xpoll(&pfd, 1, 10);
	}
}

static void
flood_drain(struct flood *f)
{
	int i, r, round, rc;

	for (round = 0; round < 16; round++) {
		if ((r = recvmmsg(f->fd, f->am, BATCH, MSG_DONTWAIT, NULL)) ==
		    -1 && errno == ECONNREFUSED)
			continue;
		for (i = 0; i < r; i++)
			if ((rc = dns_rcode(f->a[i], f->am[i].msg_len, -1)) >=
			    0) {
				f->replies++;
				f->rc[rc]++;
			}
		if (r < BATCH)
			return;		/* -1: EAGAIN, drained */
	}
}

/* The queries due now, at most a batch; 0 after waiting for the next. */
static unsigned
flood_pace(struct flood *f, const struct opts *o, int64_t t0, int64_t end)
{
	struct pollfd pfd = { .fd = f->fd, .events = POLLIN };
	uint64_t allowed;
	int64_t due;

	if (o->count == 0)
		return BATCH;
	allowed = (uint64_t)(now_us() - t0) * o->count / SEC + 1;
	if (allowed > f->sent)
		return allowed - f->sent > BATCH ? BATCH :
		    (unsigned)(allowed - f->sent);
	due = t0 + (int64_t)((f->sent * (uint64_t)SEC + o->count - 1) /
	    o->count);
	xpoll(&pfd, 1, ms_until(due < end ? due : end));
	flood_drain(f);
	return 0;
}

static int
run_dns_flood(const struct opts *o, const struct mode *m)
{
	static struct flood f;
	struct pollfd pfd = { .events = POLLIN };
	int64_t t0, end;
	unsigned i, n;

	(void)m;
	for (i = 0; i < BATCH; i++) {
		f.qv[i].iov_base = f.q[i];
		f.qm[i].msg_hdr.msg_iov = &f.qv[i];
		f.qm[i].msg_hdr.msg_iovlen = 1;
		f.av[i].iov_base = f.a[i];
		f.av[i].iov_len = sizeof(f.a[i]);
		f.am[i].msg_hdr.msg_iov = &f.av[i];
		f.am[i].msg_hdr.msg_iovlen = 1;
	}
	if ((pfd.fd = f.fd = open_socket(o, SOCK_DGRAM, 0)) == -1)
		die(1, "dns-flood: socket");
	end = (t0 = now_us()) + o->dur;
	for (i = 0; !stop && now_us() < end; ) {
		if ((n = flood_pace(&f, o, t0, end)) == 0)
			continue;
		flood_send(&f, o, n);
		if (i++ == 0)
			write_ready(o, f.sent);
		flood_drain(&f);
	}
	end = now_us() + SEC;		/* the replies on their way */
	for (pfd.revents = POLLIN; !stop && pfd.revents != 0 &&
	    now_us() < end; ) {
		pfd.revents = 0;
		xpoll(&pfd, 1, 200);
		flood_drain(&f);
	}
	printf("sent=%lu replies=%lu noerror=%lu nxdomain=%lu refused=%lu "
	    "servfail=%lu other=%lu errors=%lu\n", f.sent, f.replies, f.rc[0],
	    f.rc[3], f.rc[5], f.rc[2], f.replies - f.rc[0] - f.rc[3] -
	    f.rc[5] - f.rc[2], f.errors);
	close(f.fd);
	return 0;
}

/* ---- options ---- */

enum { NEED_PORT = 1, NEED_COUNT = 2, NEED_TARGET = 4, NEED_NAME = 8,
    NEED_SOCK = 16, NEED_SRC = 32 };

static const struct mode modes[] = {
	{ "dns-flood", run_dns_flood, NEED_PORT, K_SILENT, 0, 0, 0, 0, 0, 0 },
	{ "hold", run_held, NEED_PORT | NEED_COUNT, K_SILENT, 1, STEP, STEP,
	    0, 0, 1 },
	{ "socks-tunnels", run_held, NEED_PORT | NEED_COUNT | NEED_TARGET,
	    K_SOCKS, PAR_MAX, STEP, 3 * STEP, 0, 0, 50 },
	{ "listen-hold", run_listen, NEED_PORT, K_SILENT, 0, 0, 0, 0, 0, 0 },
	{ "probe-dns", run_probe, NEED_PORT | NEED_NAME, K_DNS_UDP, 1, SEC,
	    SEC, 20 * MSEC, 0, ULONG_MAX },
	{ "probe-socks", run_probe, NEED_PORT | NEED_TARGET, K_SOCKS, 1, STEP,
	    STEP, 50 * MSEC, 0, ULONG_MAX },
	{ "probe-ctl", run_probe, NEED_SOCK | NEED_SRC, K_CTL, 1, STEP, STEP,
	    200 * MSEC, 20 * MSEC, ULONG_MAX },
};

static const struct option longopts[] = {
	{ "src", required_argument, NULL, 's' },
	{ "dst", required_argument, NULL, 'd' },
	{ "port", required_argument, NULL, 'p' },
	{ "secs", required_argument, NULL, 't' },
	{ "count", required_argument, NULL, 'c' },
	{ "ready", required_argument, NULL, 'r' },
	{ "name", required_argument, NULL, 'n' },
	{ "suffix", required_argument, NULL, 'x' },
	{ "target", required_argument, NULL, 'T' },
	{ "sock", required_argument, NULL, 'u' },
	{ "name-mode", required_argument, NULL, 'm' },
	{ "send-hello", required_argument, NULL, 'e' },
	{ "tcp", no_argument, NULL, 'C' },
	{ "http", no_argument, NULL, 'H' },
	{ "wait", required_argument, NULL, 'w' },
	{ "hold", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static unsigned long
parse_num(const char *opt, const char *s, unsigned long min,
    unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		die(2, "--%s: not a number in %lu..%lu: %s", opt, min, max, s);
	return v;
}

/* --target HOST:PORT and its SOCKS5 request (ATYP 1 or 3). */
static void
parse_target(struct opts *o, const char *s)
{
	const char *colon = strrchr(s, ':');
	size_t hl = colon != NULL ? (size_t)(colon - s) : 0;
	uint8_t *q = o->req;

	if (hl == 0 || hl > 255)
		die(2, "--target: not HOST:PORT: %s", s);
	memcpy(o->thost, s, hl);
	o->thost[hl] = '\0';
	o->tport = (unsigned)parse_num("target", colon + 1, 1, 65535);
	memcpy(q, "\5\1\0\1", 4);
	if (inet_pton(AF_INET, o->thost, q + 4) == 1) {
		o->reqlen = 8;
	} else {
		q[3] = 3;
		q[4] = (uint8_t)hl;
		memcpy(q + 5, o->thost, hl);
		o->reqlen = 5 + hl;
	}
	q[o->reqlen++] = (uint8_t)(o->tport >> 8);
	q[o->reqlen++] = (uint8_t)o->tport;
}

/* A duration in seconds, (0, 86400], in us. */
static int64_t
parse_secs(const char *opt, const char *s)
{
	double secs;
	char *end;

	errno = 0;
	secs = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(secs) ||
	    secs <= 0 || secs > 86400)
		die(2, "--%s: not a duration in (0, 86400]: %s", opt, s);
	return (int64_t)(secs * SEC);
}

static void
parse_opt(struct opts *o, int c, const char *arg)
{
	struct sockaddr_un sa;

	switch (c) {
	case 's':
	case 'd':
		if (inet_pton(AF_INET, arg, c == 's' ? &o->src.sin_addr :
		    &o->dst.sin_addr) != 1)
			die(2, "not an IPv4 address: %s", arg);
		if (c == 's')
			o->src.sin_family = AF_INET;
		break;
	case 'p':
		o->dst.sin_port = htons((uint16_t)parse_num("port", arg, 1,
		    65535));
		break;
	case 't':
		o->dur = parse_secs("secs", arg);
		break;
	case 'w':
		o->wait = parse_secs("wait", arg);
		break;
	case 'o':
		o->hold = parse_secs("hold", arg);
		break;
	case 'c':
		o->count = parse_num("count", arg, 0, 10000000);
		break;
	case 'n':
		if ((o->nmlen = dns_wire(arg, o->nm)) == 0)
			die(2, "--name: not a DNS name: %s", arg);
		break;
	case 'x':
		if ((o->sfxlen = dns_wire(arg, o->sfx)) == 0 || o->sfxlen > 242)
			die(2, "--suffix: not a DNS name (<= 240): %s", arg);
		break;
	case 'T':
		parse_target(o, arg);
		break;
	case 'u':
		if (strlen(arg) >= sizeof(sa.sun_path))
			die(2, "--sock: path too long: %s", arg);
		o->sock = arg;
		break;
	case 'm':
		if (strcmp(arg, "unique") != 0 && strcmp(arg, "fixed") != 0)
			die(2, "--name-mode: unique or fixed: %s", arg);
		o->fixed = strcmp(arg, "fixed") == 0;
		break;
	case 'e':
		if (strcmp(arg, "socks5") != 0)
			die(2, "--send-hello: socks5 only: %s", arg);
		o->hello = 1;
		break;
	case 'r':
		o->ready = arg;
		break;
	case 'C':
		o->tcp = 1;
		break;
	case 'H':
		o->http = 1;
		break;
	case 'h':
		printf("usage: cage_flood MODE [options]: see the comment atop "
		    "tests/bench/cage_flood.c\nmodes: dns-flood hold "
		    "socks-tunnels listen-hold probe-dns probe-socks "
		    "probe-ctl\n");
		exit(0);
	default:
		exit(2);		/* getopt_long said why */
	}
}

static void
check_needs(const struct mode *m, const struct opts *o)
{
	static const char *names[] = { "port", "count", "target", "name",
	    "sock", "src" };
	unsigned have, i;

	have = (o->dst.sin_port != 0 ? NEED_PORT : 0) |
	    (o->count > 0 ? NEED_COUNT : 0) |
	    (o->thost[0] != '\0' ? NEED_TARGET : 0) |
	    (o->nmlen > 0 ? NEED_NAME : 0) | (o->sock ? NEED_SOCK : 0) |
	    (o->src.sin_family == AF_INET ? NEED_SRC : 0);
	for (i = 0; i < 6; i++)
		if (m->need & ~have & (1U << i))
			die(2, "%s needs --%s", m->name, names[i]);
	if (m->run == run_dns_flood && (o->fixed ? o->nmlen : o->sfxlen) == 0)
		die(2, "dns-flood needs --%s", o->fixed ? "name" : "suffix");
}

int
main(int argc, char **argv)
{
	static struct opts o;
	const struct mode *m = NULL;
	size_t i;
	int c;

	o.dst.sin_family = AF_INET;
	o.dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o.dur = 5 * SEC;
	while ((c = getopt_long(argc, argv, "s:d:p:t:c:r:n:x:T:u:m:e:w:o:CHh",
	    longopts, NULL)) != -1)
		parse_opt(&o, c, optarg);
	if (optind != argc - 1)
		die(2, "%s", optind >= argc ? "no mode" : "more than one mode");
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[optind], modes[i].name) == 0)
			m = &modes[i];
	if (m == NULL)
		die(2, "unknown mode: %s", argv[optind]);
	if (o.hold == 0)
		o.hold = o.dur;
	check_needs(m, &o);
	setup();
	c = m->run(&o, m);
	if (fflush(stdout) == EOF)
		die(1, "stdout");
	return c;
}
