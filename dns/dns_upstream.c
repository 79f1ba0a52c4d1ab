/*
 * dns_upstream: c-ares on the daemon's libevent loop. We send our own
 * wire-format queries with ares_send() and get raw answers back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ares.h>
#include <event2/event.h>

#include "dns/dns_upstream.h"
#include "gatekeeper/base/gk_log.h"

#define UP_MAX_SOCKS	64

struct up_sock {
	ares_socket_t	 fd;
	struct event	*ev;
	short		 what;
};

struct dns_upstream {
	struct event_base	*base;
	ares_channel		 channel;
	struct event		*timer;
	struct up_sock		 socks[UP_MAX_SOCKS];
	size_t			 nsocks;
	char			 desc[256];
};

struct up_req {
	dns_upstream_cb		 cb;
	void			*arg;
	struct dns_upstream	*u;
};

static void	up_reschedule(struct dns_upstream *u);

static void
up_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_upstream *u = arg;

	ares_process_fd(u->channel,
	    (what & EV_READ) ? (ares_socket_t)fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? (ares_socket_t)fd : ARES_SOCKET_BAD);
	up_reschedule(u);
}

static void
up_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_upstream *u = arg;

	(void)fd;
	(void)what;
	ares_process_fd(u->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	up_reschedule(u);
}

static void
up_reschedule(struct dns_upstream *u)
{
	struct timeval tv, *tvp;

	tvp = ares_timeout(u->channel, NULL, &tv);
	if (tvp == NULL)
		evtimer_del(u->timer);
	else
		evtimer_add(u->timer, tvp);
}

/* c-ares tells us which sockets it wants watched. */
static void
up_sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct dns_upstream *u = data;
	struct up_sock *s = NULL;
	short what;
	size_t i;

	for (i = 0; i < u->nsocks; i++)
		if (u->socks[i].fd == fd)
			s = &u->socks[i];
	what = (short)((readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
	if (s != NULL) {
		event_free(s->ev);
		if (what == 0) {
			*s = u->socks[--u->nsocks];
			return;
		}
	} else {
		if (what == 0)
			return;
		if (u->nsocks == UP_MAX_SOCKS) {
			log_warnx("too many upstream sockets");
			return;
		}
		s = &u->socks[u->nsocks++];
		s->fd = fd;
	}
	s->what = what;
	s->ev = event_new(u->base, fd, what | EV_PERSIST, up_sock_cb, u);
	if (s->ev == NULL || event_add(s->ev, NULL) == -1)
		log_warnx("cannot watch upstream socket %d", (int)fd);
}

static int
up_set_servers(struct dns_upstream *u, const struct gk_upstream *ups,
    size_t n, char *err, size_t errlen)
{
	struct ares_addr_port_node nodes[GK_CONF_MAX_UPSTREAMS];
	size_t i;
	int rc;

	if (n > GK_CONF_MAX_UPSTREAMS)
		n = GK_CONF_MAX_UPSTREAMS;
	memset(nodes, 0, sizeof(nodes));
	for (i = 0; i < n; i++) {
		nodes[i].next = i + 1 < n ? &nodes[i + 1] : NULL;
		nodes[i].family = ups[i].addr.family;
		memcpy(&nodes[i].addr, ups[i].addr.bytes,
		    gk_addr_len(&ups[i].addr));
		nodes[i].udp_port = ups[i].port;
		nodes[i].tcp_port = ups[i].port;
	}
	if ((rc = ares_set_servers_ports(u->channel, nodes)) != ARES_SUCCESS) {
		snprintf(err, errlen, "upstream servers: %s",
		    ares_strerror(rc));
		return -1;
	}
	return 0;
}

static void
up_describe(struct dns_upstream *u)
{
	struct ares_addr_port_node *servers = NULL, *s;
	char addr[GK_ADDR_STRLEN];
	size_t used = 0;

	u->desc[0] = '\0';
	if (ares_get_servers_ports(u->channel, &servers) != ARES_SUCCESS)
		return;
	for (s = servers; s != NULL && used + 1 < sizeof(u->desc);
	    s = s->next) {
		inet_ntop(s->family, &s->addr, addr, sizeof(addr));
		used += (size_t)snprintf(u->desc + used, sizeof(u->desc) - used,
		    "%s%s%s%s:%d", used ? "," : "",
		    s->family == AF_INET6 ? "[" : "", addr,
		    s->family == AF_INET6 ? "]" : "",
		    s->udp_port ? s->udp_port : 53);
	}
	ares_free_data(servers);
}

struct dns_upstream *
dns_upstream_new(struct event_base *base, const struct gk_upstream *ups,
    size_t n, uint32_t timeout_ms, char *err, size_t errlen)
{
	struct ares_options opts;
	struct dns_upstream *u;
	int rc, mask;

	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->base = base;
	if ((u->timer = evtimer_new(base, up_timer_cb, u)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(u);
		return NULL;
	}
	memset(&opts, 0, sizeof(opts));
	opts.sock_state_cb = up_sock_state_cb;
	opts.sock_state_cb_data = u;
	/* Our own deadline answers SERVFAIL at timeout_ms; c-ares gets
	 * two tries inside it (it doubles the timeout per round). */
	opts.timeout = (int)(timeout_ms / 3 > 0 ? timeout_ms / 3 : 1);
	opts.tries = 2;
	opts.flags = ARES_FLAG_NOCHECKRESP;
	mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_FLAGS;
	if ((rc = ares_init_options(&u->channel, &opts, mask)) != ARES_SUCCESS) {
		snprintf(err, errlen, "c-ares: %s", ares_strerror(rc));
		event_free(u->timer);
		free(u);
		return NULL;
	}
	if (n > 0 && up_set_servers(u, ups, n, err, errlen) == -1) {
		dns_upstream_free(u);
		return NULL;
	}
	up_describe(u);
	if (u->desc[0] == '\0') {
		snprintf(err, errlen, "no upstream resolver: give --upstream "
		    "or a nameserver line in /etc/resolv.conf");
		dns_upstream_free(u);
		return NULL;
	}
	return u;
}

void
dns_upstream_free(struct dns_upstream *u)
{
	size_t i;

	if (u == NULL)
		return;
	if (u->channel != NULL)
		ares_destroy(u->channel);	/* runs callbacks */
	for (i = 0; i < u->nsocks; i++)
		event_free(u->socks[i].ev);
	if (u->timer != NULL)
		event_free(u->timer);
	free(u);
}

static void
up_answer_cb(void *arg, int status, int timeouts, unsigned char *abuf,
    int alen)
{
	struct up_req *r = arg;

	(void)timeouts;
	if (status == ARES_SUCCESS && abuf != NULL && alen > 0)
		r->cb(r->arg, true, abuf, (size_t)alen);
	else {
		log_debug("upstream query failed: %s", ares_strerror(status));
		r->cb(r->arg, false, NULL, 0);
	}
	free(r);
}

int
dns_upstream_send(struct dns_upstream *u, const uint8_t *q, size_t qlen,
    dns_upstream_cb cb, void *arg)
{
	struct up_req *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return -1;
	r->cb = cb;
	r->arg = arg;
	r->u = u;
	ares_send(u->channel, q, (int)qlen, up_answer_cb, r);
	up_reschedule(u);
	return 0;
}

const char *
dns_upstream_describe(const struct dns_upstream *u)
{
	return u->desc;
}
