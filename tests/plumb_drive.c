/*
 * plumb_drive: drive the nft module from a shell script (for
 * tests/integration/test_plumb.sh and test_plumb_transparent.sh). Runs on
 * a real kernel: use it only in a network namespace made for the test.
 *
 *   plumb_drive check NSPATH UID
 *	nft_netns_check on the opened NSPATH; prints "ok" (exit 0) or
 *	"refused: MESSAGE" (exit 1).
 *   plumb_drive serve [-g GATEWAY] [-s SUBNET/PREFIX] [-d DNSPORT]
 *	    [-S SOCKSPORT] [-H HTTPPORT] [-t TRANSPARENTPORT] [-v]
 *	nft_plumb_new, print "ready" (or "err MESSAGE", exit 1), then read
 *	commands on stdin, one per line, each answered by one line:
 *	  up NSPATH IFNAME [transparent|open]
 *			    allocate an address, nft_cage_up (with
 *			    transparent = true if a word is given, and open
 *			    with "open"): "ok ADDR USEC IFINDEX" (USEC: time
 *			    of nft_cage_up; IFINDEX the host link's)
 *	  pin IFINDEX ADDR SECONDS
 *			    nft_cage_pin: "ok USEC"
 *	  open IFNAME ADDR  nft_cage_open: "ok"
 *	  down IFNAME ADDR  nft_cage_down: "ok"
 *	  wait              until no teardown is pending (at most 60 s):
 *			    "ok USEC" (since the last down) or "err timeout"
 *	  alloc             the pool alone: "ok ADDR"
 *	  check NSPATH UID  nft_netns_check: "ok" or "err MESSAGE"
 *	  quit (or EOF)     nft_plumb_free, "ok USEC", exit 0
 *	Failures answer "err MESSAGE". With -t, the refused SYNs read from
 *	the log group are logged (stderr): "refused ifindex=N SRC ->
 *	DST:PORT".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "nft/nft.h"

#define WAIT_MAX_US	60000000	/* bounds a failure only */

struct drive {
	struct event_base	*base;
	struct nft_plumb	*p;
	struct event		*in_ev;
	struct event		*wait_ev;
	char			 line[1024];
	size_t			 len;
	long long		 last_down;	/* us */
	long long		 wait_start;
	bool			 waiting;
	struct nft_nflog	*log;
};

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
check_path(const char *path, const char *uidstr, char *err, size_t errlen)
{
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = nft_netns_check(fd, (uid_t)strtoul(uidstr, NULL, 10), err,
	    errlen);
	close(fd);
	return rc;
}

static void
cmd_up(struct drive *d, const char *path, const char *ifname,
    bool transparent, bool open_all)
{
	char err[512], a[INET_ADDRSTRLEN];
	struct in_addr addr;
	uint32_t ifindex = 0;
	long long t0, t1;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		printf("err %s: %s\n", path, strerror(errno));
		return;
	}
	if (nft_addr_alloc(d->p, &addr) == -1) {
		printf("err no free address\n");
		close(fd);
		return;
	}
	t0 = now_us();
	rc = nft_cage_up(d->p, fd, ifname, addr, transparent, open_all, &ifindex,
	    err, sizeof(err));
	t1 = now_us();
	close(fd);
	if (rc == -1)
		printf("err %s\n", err);
	else
		printf("ok %s %lld %u\n", inet_ntop(AF_INET, &addr, a,
		    sizeof(a)), t1 - t0, ifindex);
}

static void
cmd_pin(struct drive *d, const char *idx, const char *addr,
    const char *secs)
{
	char err[512];
	struct in_addr a;
	long long t0;

	if (inet_pton(AF_INET, addr, &a) != 1) {
		printf("err bad address\n");
		return;
	}
	t0 = now_us();
	if (nft_cage_pin(d->p, (uint32_t)strtoul(idx, NULL, 10), a,
	    (uint32_t)strtoul(secs, NULL, 10), err, sizeof(err)) == -1)
		printf("err %s\n", err);
	else
		printf("ok %lld\n", now_us() - t0);
}

static void
refused_cb(void *arg, const struct nft_refusal *r)
{
	char s[INET_ADDRSTRLEN], t[INET_ADDRSTRLEN];

	(void)arg;
	log_info("refused ifindex=%u %s -> %s:%u", r->ifindex,
	    inet_ntop(AF_INET, &r->src, s, sizeof(s)),
	    inet_ntop(AF_INET, &r->dst, t, sizeof(t)), r->dport);
}

static void
wait_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drive *d = arg;
	long long t = now_us();

	(void)fd;
	(void)what;
	if (nft_plumb_pending(d->p) == 0)
		printf("ok %lld\n", t - d->last_down);
	else if (t - d->wait_start > WAIT_MAX_US)
		printf("err timeout (%zu pending)\n", nft_plumb_pending(d->p));
	else
		return;
	d->waiting = false;
	event_del(d->wait_ev);
	event_add(d->in_ev, NULL);
}

static void
cmd_wait(struct drive *d)
{
	struct timeval ms = { 0, 1000 };

	d->waiting = true;
	d->wait_start = now_us();
	event_del(d->in_ev);		/* one command at a time */
	event_add(d->wait_ev, &ms);
}

#define MAXWORDS	4

/* Split line into at most MAXWORDS words; returns the count. */
static int
words(char *line, char *w[MAXWORDS])
{
	int n = 0;
	char *s;

	while (n < MAXWORDS && (s = strsep(&line, " \t")) != NULL)
		if (*s != '\0')
			w[n++] = s;
	return n;
}

static void
command(struct drive *d, char *line)
{
	char *w[MAXWORDS] = { NULL }, err[512], a[INET_ADDRSTRLEN];
	struct in_addr addr;
	int n = words(line, w);

	if (n == 3 && strcmp(w[0], "up") == 0)
		cmd_up(d, w[1], w[2], false, false);
	else if (n == 4 && strcmp(w[0], "up") == 0 &&
	    (strcmp(w[3], "transparent") == 0 || strcmp(w[3], "open") == 0))
		cmd_up(d, w[1], w[2], true, strcmp(w[3], "open") == 0);
	else if (n == 4 && strcmp(w[0], "pin") == 0)
		cmd_pin(d, w[1], w[2], w[3]);
	else if (n == 3 && strcmp(w[0], "open") == 0 &&
	    inet_pton(AF_INET, w[2], &addr) == 1) {
		if (nft_cage_open(d->p, w[1], addr, err, sizeof(err)) == 0)
			printf("ok\n");
		else
			printf("err %s\n", err);
	}
	else if (n == 3 && strcmp(w[0], "down") == 0 &&
	    inet_pton(AF_INET, w[2], &addr) == 1) {
		d->last_down = now_us();
		nft_cage_down(d->p, w[1], addr);
		printf("ok\n");
	} else if (n == 1 && strcmp(w[0], "wait") == 0)
		cmd_wait(d);
	else if (n == 1 && strcmp(w[0], "alloc") == 0) {
		if (nft_addr_alloc(d->p, &addr) == 0)
			printf("ok %s\n", inet_ntop(AF_INET, &addr, a,
			    sizeof(a)));
		else
			printf("err no free address\n");
	} else if (n == 3 && strcmp(w[0], "check") == 0) {
		if (check_path(w[1], w[2], err, sizeof(err)) == 0)
			printf("ok\n");
		else
			printf("err %s\n", err);
	} else if (n == 1 && strcmp(w[0], "quit") == 0)
		event_base_loopbreak(d->base);
	else
		printf("err bad command\n");
}

static void
stdin_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drive *d = arg;
	ssize_t n;
	char *nl;

	(void)what;
	n = read(fd, d->line + d->len, sizeof(d->line) - 1 - d->len);
	if (n <= 0) {
		event_base_loopbreak(d->base);
		return;
	}
	d->len += (size_t)n;
	d->line[d->len] = '\0';
	while (!d->waiting && (nl = strchr(d->line, '\n')) != NULL) {
		*nl = '\0';
		command(d, d->line);
		d->len -= (size_t)(nl + 1 - d->line);
		memmove(d->line, nl + 1, d->len + 1);
	}
	if (d->len == sizeof(d->line) - 1)
		d->len = 0;		/* overlong line: drop it */
}

static int
parse_conf(int argc, char **argv, struct nft_conf *c, int *level)
{
	char *slash;
	int ch;

	memset(c, 0, sizeof(*c));
	inet_pton(AF_INET, "10.143.0.1", &c->gateway);
	inet_pton(AF_INET, "10.143.0.0", &c->subnet);
	c->prefix = 16;
	c->dns_port = 53;
	c->socks_port = 1080;
	c->http_port = 3128;
	while ((ch = getopt(argc, argv, "g:s:d:S:H:t:v")) != -1) {
		switch (ch) {
		case 'g':
			if (inet_pton(AF_INET, optarg, &c->gateway) != 1)
				return -1;
			break;
		case 's':
			if ((slash = strchr(optarg, '/')) == NULL)
				return -1;
			*slash = '\0';
			if (inet_pton(AF_INET, optarg, &c->subnet) != 1)
				return -1;
			c->prefix = (uint8_t)atoi(slash + 1);
			break;
		case 'd':
			c->dns_port = (uint16_t)atoi(optarg);
			break;
		case 'S':
			c->socks_port = (uint16_t)atoi(optarg);
			break;
		case 'H':
			c->http_port = (uint16_t)atoi(optarg);
			break;
		case 't':
			c->transparent_port = (uint16_t)atoi(optarg);
			break;
		case 'v':
			*level = LOG_LVL_DEBUG;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

static int
serve(int argc, char **argv)
{
	struct drive d;
	struct nft_conf c;
	char err[512];
	int level = LOG_LVL_INFO;
	long long t0;

	if (parse_conf(argc, argv, &c, &level) == -1) {
		fprintf(stderr, "plumb_drive serve: bad options\n");
		return 2;
	}
	log_init("plumb_drive", level);
	memset(&d, 0, sizeof(d));
	d.base = event_base_new();
	if ((d.p = nft_plumb_new(d.base, &c, err, sizeof(err))) == NULL) {
		printf("err %s\n", err);
		event_base_free(d.base);
		return 1;
	}
	if (c.transparent_port != 0 && (d.log = nft_nflog_open(d.base,
	    refused_cb, &d, err, sizeof(err))) == NULL)
		log_warnx("%s", err);
	d.in_ev = event_new(d.base, STDIN_FILENO, EV_READ | EV_PERSIST,
	    stdin_cb, &d);
	d.wait_ev = event_new(d.base, -1, EV_PERSIST, wait_cb, &d);
	event_add(d.in_ev, NULL);
	printf("ready\n");
	event_base_dispatch(d.base);
	nft_nflog_close(d.log);
	t0 = now_us();
	nft_plumb_free(d.p);
	printf("ok %lld\n", now_us() - t0);
	event_free(d.in_ev);
	event_free(d.wait_ev);
	event_base_free(d.base);
	return 0;
}

int
main(int argc, char **argv)
{
	char err[512];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "check") == 0) {
		log_init("plumb_drive", LOG_LVL_INFO);
		if (check_path(argv[2], argv[3], err, sizeof(err)) == 0) {
			printf("ok\n");
			return 0;
		}
		printf("refused: %s\n", err);
		return 1;
	}
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return serve(argc - 1, argv + 1);
	fprintf(stderr, "usage: plumb_drive check NSPATH UID\n"
	    "       plumb_drive serve [-g GW] [-s NET/PREFIX] [-d PORT] "
	    "[-S PORT] [-H PORT] [-t PORT] [-v]\n");
	return 2;
}
