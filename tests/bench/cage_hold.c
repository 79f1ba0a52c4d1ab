/*
 * cage_hold: a benchmark client that holds many live namespace cages on
 * gatekeeperd's control socket the way gk-run makes one, and times the
 * life of one more (cages_bench.sh drives it).
 *
 *   cage_hold SOCKET GATEWAY:PORT URL-HOST[:PORT] PATH ALLOW
 *
 * A cage: a child process unshares a user and a network namespace (as
 * gk-run's does) and passes the namespace's fd back; the request
 *   {"op":"cage.create","netns":true,"label":"cages-bench",
 *    "allow":[ALLOW]}
 * goes to SOCKET with that fd as SCM_RIGHTS on its first byte, as gk-run
 * sends it. A held cage's control socket is made inside its namespace, so
 * that the socket alone keeps the namespace alive: one descriptor per
 * held cage here, as in gatekeeperd.
 *
 * Commands on stdin, one a line; each answers one line on stdout:
 *   hold N     open or close held cages until N live.
 *              Out: held=N ms=<time taken> errors=<failed creates>
 *   sample K   K times, each with a fresh namespace (made untimed):
 *              cage.create (from connect to the reply), then an HTTP GET
 *              of PATH through the cage's HTTP proxy at GATEWAY:PORT from
 *              inside the namespace (URL http://URL-HOST/PATH, status 200
 *              required), then the connection closed and the time until
 *              the cage's host link (gk-<address in hex>) is gone.
 *              Out: create_us=<median> fetch_us=<median of create plus
 *              the fetch> teardown_us=<median> n=K errors=<failures>
 *              and a line "raw create=... fetch=... teardown=..." (us)
 *   quit
 * Every wait is bounded: a reply 10 s, a fetch 10 s, a link's removal
 * 20 s. The first failure of a command is told on stderr. Exit 0 at quit
 * or EOF, 1 on a runtime failure, 2 on a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS		10000
#define LINK_WAIT_MS	20000
#define SAMPLES_MAX	1000
#define HELD_MAX	200000

struct cfg {
	struct sockaddr_un	 ctl;
	struct sockaddr_in	 proxy;
	const char		*host;
	const char		*path;
	const char		*allow;
};

static struct cfg	 cfg;
static int		*held;
static size_t		 nheld;
static int		 self_ns = -1;

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

union fdbuf {
	struct cmsghdr	h;
	char		b[CMSG_SPACE(sizeof(int))];
};

/* m: one iovec of buf, len, with room for one fd (sent when fd != -1). */
static void
msg_init(struct msghdr *m, struct iovec *iov, union fdbuf *cb, void *buf,
    size_t len, int fd)
{
	struct cmsghdr *c;

	memset(m, 0, sizeof(*m));
	iov->iov_base = buf;
	iov->iov_len = len;
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_control = cb->b;
	m->msg_controllen = sizeof(cb->b);
	if (fd == -1)
		return;
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

/* A fresh user + network namespace: its fd, or -1. */
static int
make_netns(void)
{
	struct msghdr m;
	struct iovec iov;
	struct cmsghdr *c;
	union fdbuf cb;
	int sp[2], fd = -1, st;
	char x = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == -1 ||
		    (fd = open("/proc/self/ns/net", O_RDONLY)) == -1)
			_exit(1);
		msg_init(&m, &iov, &cb, &x, 1, fd);
		_exit(sendmsg(sp[1], &m, 0) == 1 ? 0 : 1);
	}
	close(sp[1]);
	msg_init(&m, &iov, &cb, &x, 1, -1);
	if (recvmsg(sp[0], &m, MSG_CMSG_CLOEXEC) == 1 &&
	    (c = CMSG_FIRSTHDR(&m)) != NULL && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	close(sp[0]);
	(void)waitpid(pid, &st, 0);
	return fd;
}

/* A socket of `domain` made inside namespace nsfd; -1 on failure. */
static int
socket_in(int nsfd, int domain)
{
	int s, e;

	if (setns(nsfd, CLONE_NEWNET) == -1)
		return -1;
	s = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
	e = errno;
	if (setns(self_ns, CLONE_NEWNET) == -1) {
		perror("cage_hold: setns back");
		exit(1);
	}
	errno = e;
	return s;
}

/* Wait for fd's readiness (POLLIN/POLLOUT) until deadline_us. */
static bool
wait_fd(int fd, short ev, uint64_t deadline_us)
{
	struct pollfd p = { fd, ev, 0 };
	uint64_t t;

	while ((t = now_us()) < deadline_us) {
		if (poll(&p, 1, (int)((deadline_us - t) / 1000) + 1) > 0)
			return true;
	}
	return false;
}

/* Read until a newline (control reply) or EOF (HTTP); bounded. Returns
 * the bytes read (buf NUL-terminated), -1 on error or timeout. */
static ssize_t
read_reply(int fd, char *buf, size_t len, bool line)
{
	uint64_t deadline = now_us() + (uint64_t)WAIT_MS * 1000;
	size_t o = 0;
	ssize_t n;

	while (o + 1 < len) {
		if (!wait_fd(fd, POLLIN, deadline))
			return -1;
		if ((n = read(fd, buf + o, len - 1 - o)) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			break;
		}
		o += (size_t)n;
		buf[o] = '\0';
		if (line && memchr(buf, '\n', o) != NULL)
			break;
	}
	buf[o] = '\0';
	return line && memchr(buf, '\n', o) == NULL ? -1 : (ssize_t)o;
}

/* cage.create on fd with nsfd; the cage's address in *addr. */
static int
create_cage(int fd, int nsfd, struct in_addr *addr, char *err, size_t errlen)
{
	char req[512], rep[8192], *p, *q;
	struct msghdr m;
	struct iovec iov;
	union fdbuf cb;
	int n;

	n = snprintf(req, sizeof(req), "{\"op\":\"cage.create\",\"netns\":"
	    "true,\"label\":\"cages-bench\",\"allow\":[\"%s\"]}\n", cfg.allow);
	msg_init(&m, &iov, &cb, req, (size_t)n, nsfd);
	if (sendmsg(fd, &m, MSG_NOSIGNAL) != n ||
	    read_reply(fd, rep, sizeof(rep), true) <= 0) {
		snprintf(err, errlen, "no reply to cage.create: %s",
		    strerror(errno));
		return -1;
	}
	if (strstr(rep, "\"ok\":true") == NULL ||
	    (p = strstr(rep, "\"source\":\"")) == NULL ||
	    (q = strchr(p + 10, '"')) == NULL) {
		snprintf(err, errlen, "cage.create refused: %.300s", rep);
		return -1;
	}
	*q = '\0';
	if (inet_pton(AF_INET, p + 10, addr) != 1) {
		snprintf(err, errlen, "cage.create: source %s", p + 10);
		return -1;
	}
	return 0;
}

static int
connect_ctl(int s)
{
	if (s == -1 || connect(s, (const struct sockaddr *)&cfg.ctl,
	    sizeof(cfg.ctl)) == -1) {
		if (s != -1)
			close(s);
		return -1;
	}
	return s;
}

/* One more held cage: its control socket, made inside its namespace. */
static int
hold_one(char *err, size_t errlen)
{
	struct in_addr a;
	int nsfd, s;

	if ((nsfd = make_netns()) == -1) {
		snprintf(err, errlen, "cannot make a namespace: %s",
		    strerror(errno));
		return -1;
	}
	if ((s = connect_ctl(socket_in(nsfd, AF_UNIX))) == -1) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		close(nsfd);
		return -1;
	}
	if (create_cage(s, nsfd, &a, err, errlen) == -1) {
		close(s);
		close(nsfd);
		return -1;
	}
	close(nsfd);	/* the socket holds the namespace now */
	held[nheld++] = s;
	return 0;
}

static void
cmd_hold(size_t want)
{
	uint64_t t0 = now_us();
	unsigned errors = 0;
	char err[512];

	if (want > HELD_MAX)
		want = HELD_MAX;
	while (nheld > want)
		close(held[--nheld]);
	while (nheld < want && errors < 20) {
		if (hold_one(err, sizeof(err)) == -1 && errors++ == 0)
			fprintf(stderr, "cage_hold: hold: %s\n", err);
	}
	printf("held=%zu ms=%llu errors=%u\n", nheld,
	    (unsigned long long)(now_us() - t0) / 1000, errors);
}

/* GET through the cage's HTTP proxy from inside nsfd; 0 on a 200. */
static int
fetch(int nsfd, char *err, size_t errlen)
{
	char req[512], rep[4096];
	uint64_t deadline = now_us() + (uint64_t)WAIT_MS * 1000;
	int s, n, e = 0;
	socklen_t el = sizeof(e);

	if ((s = socket_in(nsfd, AF_INET)) == -1)
		return snprintf(err, errlen, "socket: %s", strerror(errno)), -1;
	fcntl(s, F_SETFL, O_NONBLOCK);
	if ((connect(s, (const struct sockaddr *)&cfg.proxy,
	    sizeof(cfg.proxy)) == -1 && errno != EINPROGRESS) ||
	    !wait_fd(s, POLLOUT, deadline) ||
	    getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) == -1 || e != 0) {
		snprintf(err, errlen, "connect to the proxy: %s",
		    strerror(e != 0 ? e : errno));
		close(s);
		return -1;
	}
	n = snprintf(req, sizeof(req), "GET http://%s%s HTTP/1.1\r\nHost: "
	    "%s\r\nConnection: close\r\n\r\n", cfg.host, cfg.path, cfg.host);
	if (write(s, req, (size_t)n) != n ||
	    read_reply(s, rep, sizeof(rep), false) <= 0 ||
	    strncmp(rep, "HTTP/1.1 200", 12) != 0) {
		snprintf(err, errlen, "GET %s through the proxy: %.200s",
		    cfg.path, rep);
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* Closed the cage's connection at t0: until its host link is gone. */
static int
wait_link_gone(struct in_addr a, char *err, size_t errlen)
{
	uint64_t deadline = now_us() + (uint64_t)LINK_WAIT_MS * 1000;
	char name[IF_NAMESIZE];
	struct timespec ts = { 0, 100000 };

	snprintf(name, sizeof(name), "gk-%08x", (unsigned)ntohl(a.s_addr));
	while (if_nametoindex(name) != 0) {
		if (now_us() >= deadline) {
			snprintf(err, errlen, "link %s still there after %d s",
			    name, LINK_WAIT_MS / 1000);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* One sample: the times in us, or -1 with err. */
static int
sample_one(uint64_t t[3], char *err, size_t errlen)
{
	struct in_addr a;
	uint64_t t0, t1;
	int nsfd, s, rc = -1;

	if ((nsfd = make_netns()) == -1)
		return snprintf(err, errlen, "namespace: %s", strerror(errno)),
		    -1;
	t0 = now_us();
	if ((s = connect_ctl(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
	    0))) == -1) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		close(nsfd);
		return -1;
	}
	if (create_cage(s, nsfd, &a, err, errlen) == -1)
		goto out;
	t[0] = (t1 = now_us()) - t0;
	if (fetch(nsfd, err, errlen) == -1)
		goto out;
	t[1] = now_us() - t0;
	t1 = now_us();
	close(s);
	s = -1;
	if (wait_link_gone(a, err, errlen) == -1)
		goto out;
	t[2] = now_us() - t1;
	rc = 0;
out:
	if (s != -1)
		close(s);
	close(nsfd);
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
median(uint64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
print_raw(const char *name, const uint64_t *v, size_t n)
{
	size_t i;

	printf(" %s=", name);
	for (i = 0; i < n; i++)
		printf("%s%llu", i > 0 ? "," : "", (unsigned long long)v[i]);
}

static void
cmd_sample(size_t k)
{
	static uint64_t v[3][SAMPLES_MAX];
	uint64_t t[3];
	unsigned errors = 0;
	size_t n = 0, i;
	char err[512];

	if (k > SAMPLES_MAX)
		k = SAMPLES_MAX;
	for (i = 0; i < k; i++) {
		if (sample_one(t, err, sizeof(err)) == -1) {
			if (errors++ == 0)
				fprintf(stderr, "cage_hold: sample: %s\n", err);
			continue;
		}
		v[0][n] = t[0];
		v[1][n] = t[1];
		v[2][n++] = t[2];
	}
	printf("raw");
	print_raw("create", v[0], n);
	print_raw("fetch", v[1], n);
	print_raw("teardown", v[2], n);
	printf("\ncreate_us=%llu fetch_us=%llu teardown_us=%llu n=%zu "
	    "errors=%u\n", (unsigned long long)median(v[0], n),
	    (unsigned long long)median(v[1], n),
	    (unsigned long long)median(v[2], n), n, errors);
}

static int
parse_args(int argc, char **argv)
{
	char *colon;

	if (argc != 6 || strlen(argv[1]) >= sizeof(cfg.ctl.sun_path) ||
	    (colon = strchr(argv[2], ':')) == NULL)
		return -1;
	cfg.ctl.sun_family = AF_UNIX;
	memcpy(cfg.ctl.sun_path, argv[1], strlen(argv[1]) + 1);
	*colon = '\0';
	cfg.proxy.sin_family = AF_INET;
	cfg.proxy.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, argv[2], &cfg.proxy.sin_addr) != 1 ||
	    cfg.proxy.sin_port == 0 || argv[4][0] != '/' ||
	    strlen(argv[3]) > 200 || strlen(argv[4]) > 200 ||
	    strlen(argv[5]) > 200 || strchr(argv[5], '"') != NULL)
		return -1;
	cfg.host = argv[3];
	cfg.path = argv[4];
	cfg.allow = argv[5];
	return 0;
}

int
main(int argc, char **argv)
{
	char line[128];
	unsigned long n;

	if (parse_args(argc, argv) == -1) {
		fprintf(stderr, "usage: cage_hold SOCKET GATEWAY:PORT "
		    "URL-HOST[:PORT] PATH ALLOW\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((held = calloc(HELD_MAX, sizeof(*held))) == NULL ||
	    (self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1) {
		perror("cage_hold");
		return 1;
	}
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "hold %lu", &n) == 1)
			cmd_hold(n);
		else if (sscanf(line, "sample %lu", &n) == 1)
			cmd_sample(n);
		else if (strncmp(line, "quit", 4) == 0)
			break;
		else
			printf("error=unknown-command\n");
	}
	while (nheld > 0)
		close(held[--nheld]);
	return 0;
}
