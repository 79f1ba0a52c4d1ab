/*
 * socks_load: the load client of tests/bench/proxy_bench.sh (and
 * transparent_bench.sh). No dependencies, Linux (epoll); the parts are
 * listed in socks_load.h:
 *   cc -O2 -o socks_load socks_load.c load_conn.c load_run.c floor.c
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
 *       The copy floor: a minimal single-threaded epoll SOCKS5 relay
 *       (no-auth, IPv4 CONNECT, no policy) that moves bytes with
 *       recv/send through a 64 KiB buffer per direction: the least a
 *       copying relay costs on this machine.
 *   socks_load floor-splice  -l IP:PORT
 *       The splice floor: the same relay (same accept loop, handshake and
 *       connect; floor.c) moving bytes with splice(2) through a pipe per
 *       direction sized to 256 KiB: the least a splicing relay, such as
 *       gatekeeperd's, costs on this machine.
 *   socks_load floor[-splice]-http  -l IP:PORT
 *       The same relays speaking HTTP CONNECT instead of SOCKS5: the
 *       request head is read up to its blank line, "CONNECT
 *       a.b.c.d:port" is dialled, "HTTP/1.1 200 Connection established"
 *       goes back once connected (one round trip, as gatekeeperd's).
 *   socks_load floor[-splice]-bare  -l IP:PORT -t IP:PORT
 *       The same relays without a protocol: every accepted connection is
 *       forwarded at once to the -t target (what a relay costs apart
 *       from its protocol's round trips).
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
#include <sys/epoll.h>
#include <sys/socket.h>

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "socks_load.h"

struct socks_load g = { .path = "/small" };
volatile sig_atomic_t stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

uint64_t
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
	    "       socks_load floor[-splice] -l IP:PORT\n"
	    "       socks_load floor[-splice]-http -l IP:PORT\n"
	    "       socks_load floor[-splice]-bare -l IP:PORT -t IP:PORT\n"
	    "       socks_load mkfile PATH BYTES\n");
	exit(2);
}

int
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

/* floor, floor-splice, each with -http or -bare or neither. */
static int
floor_cmd(const char *cmd, enum floor_kind *kind, enum floor_proto *proto)
{
	if (strncmp(cmd, "floor", 5) != 0)
		return -1;
	cmd += 5;
	*kind = FLOOR_COPY;
	if (strncmp(cmd, "-splice", 7) == 0) {
		*kind = FLOOR_SPLICE;
		cmd += 7;
	}
	if (*cmd == '\0')
		*proto = FLOOR_SOCKS5;
	else if (strcmp(cmd, "-http") == 0)
		*proto = FLOOR_HTTP;
	else if (strcmp(cmd, "-bare") == 0)
		*proto = FLOOR_BARE;
	else
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	const char *cmd;
	int opt, inflight = 1, nconn = 0;
	double secs = -1, warm = 1;
	int budget_pid = 0, budget_limit = 0;
	bool have_target = false, have_listen = false;
	struct sockaddr_in listen_at;
	struct sigaction sa;
	enum floor_kind fkind;
	enum floor_proto fproto;

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

	if (strcmp(cmd, "hold") == 0) {
		if (!have_listen)
			usage();
		return run_hold(&listen_at);
	}
	if (floor_cmd(cmd, &fkind, &fproto) == 0) {
		if (!have_listen || have_target != (fproto == FLOOR_BARE))
			usage();
		return run_floor(&listen_at, fkind, fproto, &g.target);
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
		return run_idle(nconn, secs < 0 ? 600 : secs, budget_pid,
		    budget_limit);
	}
	usage();
	return 2;
}

