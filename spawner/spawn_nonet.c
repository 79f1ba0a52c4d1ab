/*
 * --net none: no network, and no long wait for one.
 *
 * Without a network a program's lookups used to go to the host's
 * resolvers, which the sandbox cannot reach, and nothing said why they
 * failed (npm retried them for a minute, then said EAI_AGAIN). So in a --net none run gk-run's child makes the
 * sandbox's network namespace itself (as for a gated run, loopback
 * only; bwrap then makes none) and binds a UDP socket to
 * 127.0.0.1:53 in it before it becomes bwrap; the sandbox's
 * /etc/resolv.conf names 127.0.0.1. gk-run answers every query on that
 * socket REFUSED at once, from a thread of its own, so a lookup fails in
 * milliseconds; at the first lookup of a host name it says, once, that
 * the run has no network and how to give it one. A connect that finds no
 * route (an address typed in, not looked up) is said the same way when
 * the unix socket gate sees it (spawn_sockgate.c), if nothing was said
 * before.
 *
 * The socket never leaves the sandbox's namespace: what it reaches is
 * loopback inside. A query is parsed by the DNS codec gatekeeperd uses
 * (dns_query_parse: bounded, fuzzed); a name is shown only when it is a
 * host name (letters, digits, '-', '_', '.'), so nothing the sandbox sends can
 * put control characters on gk-run's stderr.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/dns_msg.h"
#include "gatekeeper/base/gk_thread.h"
#include "spawner/spawn_int.h"

/* What is said, once per run, whichever comes first: the answerer's
 * first lookup, or a connect the unix socket gate saw fail for want of
 * a route (spawn_nonet_unreachable). */
static struct {
	const char	*cmdname;	/* NULL: not started, nothing said */
	atomic_bool	 said;		/* or quiet */
} nonet_say;

void
spawn_resolv_conf(const struct spawn_plan *p, char *buf, size_t len)
{
	struct stat st;

	if (p->net == SPAWN_NET_GATED && p->cage != NULL)
		snprintf(buf, len, "nameserver %s\n", p->cage->gateway);
	else if (p->net == SPAWN_NET_NONE && stat("/etc/resolv.conf",
	    &st) == 0)
		snprintf(buf, len, "nameserver " SPAWN_NONET_RESOLVER "\n");
	else if (len > 0)
		buf[0] = '\0';
}

/* A name worth telling: a host name, not a reverse lookup. */
static bool
told_name(const struct dns_query *q)
{
	static const char *const arpa[] = { ".in-addr.arpa", ".ip6.arpa" };
	size_t i, n;

	if (!q->name_host || q->name_len == 0)
		return false;
	for (i = 0; i < 2; i++) {
		n = strlen(arpa[i]);
		if (q->name_len >= n && strcmp(q->name + q->name_len - n,
		    arpa[i]) == 0)
			return false;
	}
	return true;
}

size_t
spawn_nonet_answer(const uint8_t *q, size_t qlen, uint8_t *out,
    size_t outlen, char *name, size_t namelen)
{
	struct dns_query query;
	enum dns_status st;
	uint8_t rcode = DNS_RC_REFUSED;

	if (namelen > 0)
		name[0] = '\0';
	st = dns_query_parse(q, qlen, &query);
	switch (st) {
	case DNS_DROP:
		return 0;
	case DNS_FORMERR:
		rcode = DNS_RC_FORMERR;
		break;
	case DNS_NOTIMP:
		rcode = DNS_RC_NOTIMP;
		break;
	case DNS_OK:
		if (told_name(&query) && query.name_len < namelen)
			memcpy(name, query.name, query.name_len + 1);
		break;
	}
	return dns_reply_empty(&query, rcode, out, outlen);
}

int
spawn_nonet_socket(char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons(53) };
	int fd;

	(void)inet_pton(AF_INET, SPAWN_NONET_RESOLVER, &sin.sin_addr);
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		gk_seterr(err, errlen, "cannot answer the sandbox's lookups "
		    "(--net none: a socket on " SPAWN_NONET_RESOLVER ":53 in "
		    "its network namespace: %s)", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

#define NO_NETWORK	"but this run has no network (--net none, the " \
			"default without --allow); give it one:"

static void
say_lookup(const char *name)
{
	if (nonet_say.cmdname == NULL || atomic_exchange(&nonet_say.said,
	    true))
		return;
	fprintf(stderr, "gk-run: %s looked up %s, " NO_NETWORK " --allow %s "
	    "(or --preset NAME, or --learn FILE to find what it needs)\n",
	    nonet_say.cmdname, name, name);
}

void
spawn_nonet_unreachable(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	char addr[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof(addr));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof(addr));
	else
		return;
	if (nonet_say.cmdname == NULL || atomic_exchange(&nonet_say.said,
	    true))
		return;
	fprintf(stderr, "gk-run: %s tried to reach %s%s%s:%u, " NO_NETWORK
	    " --allow with the names it needs (or --preset NAME, or --learn "
	    "FILE to find them)\n", nonet_say.cmdname,
	    sa->sa_family == AF_INET6 ? "[" : "", addr,
	    sa->sa_family == AF_INET6 ? "]" : "", (unsigned int)ntohs(
	    sa->sa_family == AF_INET6 ? s6->sin6_port : s4->sin_port));
}

static void *
serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct sockaddr_storage from;
	uint8_t q[DNS_MAX_MSG], a[DNS_UDP_MIN];
	char name[DNS_NAME_TEXT_MAX];
	socklen_t fromlen;
	ssize_t r;
	size_t alen;

	for (;;) {
		fromlen = sizeof(from);
		r = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from,
		    &fromlen);
		if (r == -1 && (errno == EINTR || errno == EAGAIN ||
		    errno == ENOMEM || errno == ENOBUFS))
			continue;
		if (r == -1)
			break;
		alen = spawn_nonet_answer(q, (size_t)r, a, sizeof(a), name,
		    sizeof(name));
		if (alen > 0)
			(void)sendto(fd, a, alen, MSG_DONTWAIT,
			    (struct sockaddr *)&from, fromlen);
		if (name[0] != '\0')
			say_lookup(name);
	}
	return NULL;
}

int
spawn_nonet_start(int chan, const char *cmdname, bool quiet, char *err,
    size_t errlen)
{
	pthread_t t;
	int fd, rc;

	if ((fd = spawn_start_nonet(chan, err, errlen)) == -1)
		return -1;
	atomic_store(&nonet_say.said, quiet);
	nonet_say.cmdname = cmdname;
	/* signals stay with the main thread's signalfd */
	if ((rc = gk_thread_start(&t, serve, (void *)(intptr_t)fd,
	    true)) != 0) {
		close(fd);
		return gk_seterr(err, errlen, "--net none: the sandbox's "
		    "resolver: %s", strerror(rc));
	}
	return 0;
}
