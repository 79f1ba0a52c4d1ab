/*
 * dns_server: the resolver's sockets. UDP is read in batches with
 * recvmmsg() and answered with sendmmsg(); TCP (RFC 7766) is a bufferevent
 * per client with length-prefixed messages, pipelined.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "dns/dns_int.h"
#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_limit.h"

struct dns_tcp {
	TAILQ_ENTRY(dns_tcp)	 entry;
	struct gk_hold		 hold;		/* in its cage's budget */
	struct dns_server	*srv;
	struct bufferevent	*bev;		/* NULL once closed */
	struct gk_addr		 peer;
	int			 refs;		/* 1 (open) + waiting queries */
	bool			 eof;		/* client finished sending */
};

/* Per-batch buffers; one server per process, one thread. */
static uint8_t			udp_in[DNS_UDP_BATCH][DNS_UDP_INMAX];
static uint8_t			udp_out[DNS_UDP_BATCH][DNS_UDP_OUTMAX];
static struct sockaddr_storage	udp_peer[DNS_UDP_BATCH];
static struct iovec		udp_iov_in[DNS_UDP_BATCH];
static struct iovec		udp_iov_out[DNS_UDP_BATCH];
static struct mmsghdr		udp_msg_in[DNS_UDP_BATCH];
static struct mmsghdr		udp_msg_out[DNS_UDP_BATCH];

static void	tcp_close(struct dns_tcp *t);

/* ---- UDP ---- */

static void
udp_flush(int fd, unsigned n)
{
	unsigned done = 0;
	int r;

	while (done < n) {
		r = sendmmsg(fd, udp_msg_out + done, n - done, MSG_DONTWAIT);
		if (r > 0) {
			done += (unsigned)r;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		/* drop this one (ECONNREFUSED from an earlier ICMP, a full
		 * buffer); the client retries */
		done++;
	}
}

static unsigned
udp_batch(struct dns_server *s, time_t now, int *got)
{
	struct dns_client cl;
	unsigned i, nout = 0;
	size_t len, qlen;
	int n;

	for (i = 0; i < DNS_UDP_BATCH; i++) {
		udp_iov_in[i].iov_base = udp_in[i];
		udp_iov_in[i].iov_len = DNS_UDP_INMAX;
		memset(&udp_msg_in[i].msg_hdr, 0, sizeof(struct msghdr));
		udp_msg_in[i].msg_hdr.msg_name = &udp_peer[i];
		udp_msg_in[i].msg_hdr.msg_namelen = sizeof(udp_peer[i]);
		udp_msg_in[i].msg_hdr.msg_iov = &udp_iov_in[i];
		udp_msg_in[i].msg_hdr.msg_iovlen = 1;
	}
	n = recvmmsg(s->udp_fd, udp_msg_in, DNS_UDP_BATCH, MSG_DONTWAIT, NULL);
	*got = n;
	if (n <= 0)
		return 0;
	memset(&cl, 0, sizeof(cl));
	for (i = 0; i < (unsigned)n; i++) {
		qlen = udp_msg_in[i].msg_len;
		if (udp_msg_in[i].msg_hdr.msg_flags & MSG_TRUNC)
			qlen = DNS_HDR_LEN;	/* too big: FORMERR */
		if (gk_addr_from_sockaddr(&cl.addr,
		    (struct sockaddr *)&udp_peer[i]) == -1)
			continue;
		/* kept by a waiter if the answer comes later */
		memcpy(&cl.ss, &udp_peer[i], sizeof(cl.ss));
		cl.sslen = udp_msg_in[i].msg_hdr.msg_namelen;
		len = dns_handle_query(s, &cl, udp_in[i], qlen, now,
		    udp_out[nout], DNS_UDP_OUTMAX);
		if (len == 0) {
			/* an answer will come later: keep the peer */
			continue;
		}
		udp_iov_out[nout].iov_base = udp_out[nout];
		udp_iov_out[nout].iov_len = len;
		memset(&udp_msg_out[nout].msg_hdr, 0, sizeof(struct msghdr));
		udp_msg_out[nout].msg_hdr.msg_name = &udp_peer[i];
		udp_msg_out[nout].msg_hdr.msg_namelen =
		    udp_msg_in[i].msg_hdr.msg_namelen;
		udp_msg_out[nout].msg_hdr.msg_iov = &udp_iov_out[nout];
		udp_msg_out[nout].msg_hdr.msg_iovlen = 1;
		nout++;
	}
	return nout;
}

static void
udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_server *s = arg;
	time_t now = gk_now();
	unsigned round, nout;
	int got;

	(void)what;
	for (round = 0; round < DNS_UDP_ROUNDS; round++) {
		nout = udp_batch(s, now, &got);
		if (nout > 0)
			udp_flush(fd, nout);
		if (got < DNS_UDP_BATCH)
			break;
	}
}

/* ---- replies that come later (upstream answers) ---- */

void
dns_send_reply(struct dns_server *s, const struct dns_client *cl,
    const uint8_t *msg, size_t len)
{
	struct dns_tcp *t = cl->tcp;
	uint8_t pfx[2];

	if (t == NULL) {
		(void)sendto(s->udp_fd, msg, len, MSG_DONTWAIT,
		    (const struct sockaddr *)&cl->ss, cl->sslen);
		return;
	}
	if (t->bev == NULL)
		return;
	pfx[0] = (uint8_t)(len >> 8);
	pfx[1] = (uint8_t)len;
	bufferevent_write(t->bev, pfx, 2);
	bufferevent_write(t->bev, msg, len);
	bufferevent_enable(t->bev, EV_WRITE);
}

/* ---- TCP ---- */

void
dns_tcp_ref(struct dns_tcp *t)
{
	t->refs++;
}

static bool
tcp_done(const struct dns_tcp *t)
{
	/* a half-closed client is done once every answer went out */
	return t->eof && t->refs == 1 && t->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(t->bev)) == 0;
}

void
dns_tcp_unref(struct dns_tcp *t)
{
	if (--t->refs > 0) {
		if (tcp_done(t))
			tcp_close(t);
		return;
	}
	free(t);
}

static void
tcp_close(struct dns_tcp *t)
{
	struct dns_server *s = t->srv;

	if (t->bev == NULL)
		return;
	bufferevent_free(t->bev);
	t->bev = NULL;
	gk_hold_drop(&t->hold);
	TAILQ_REMOVE(&s->tcp_conns, t, entry);
	gk_listen_session_done(s->tcp_listen);
	dns_tcp_unref(t);
}

static void
tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct dns_tcp *t = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[2], msg[DNS_MAX_MSG], out[DNS_MAX_MSG];
	struct dns_client cl;
	size_t mlen, len;
	time_t now = gk_now();

	memset(&cl, 0, sizeof(cl));
	cl.addr = t->peer;
	cl.tcp = t;
	while (evbuffer_get_length(in) >= 2 && t->bev != NULL) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    DNS_TCP_OUT_HIGH) {
			bufferevent_disable(bev, EV_READ);
			break;
		}
		evbuffer_copyout(in, hdr, 2);
		mlen = ((size_t)hdr[0] << 8) | hdr[1];
		if (mlen < DNS_HDR_LEN) {
			tcp_close(t);	/* nothing sane to answer */
			return;
		}
		if (evbuffer_get_length(in) < 2 + mlen)
			break;
		evbuffer_drain(in, 2);
		evbuffer_remove(in, msg, mlen);
		/* 0: answered later (a waiter holds a ref), or dropped */
		len = dns_handle_query(t->srv, &cl, msg, mlen, now, out,
		    sizeof(out));
		if (len > 0)
			dns_send_reply(t->srv, &cl, out, len);
	}
}

static void
tcp_write_cb(struct bufferevent *bev, void *arg)
{
	struct dns_tcp *t = arg;

	if (tcp_done(t))
		tcp_close(t);
	else if (!t->eof)
		bufferevent_enable(bev, EV_READ);
}

static void
tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct dns_tcp *t = arg;

	(void)bev;
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    (t->refs > 1 ||
	    evbuffer_get_length(bufferevent_get_output(bev)) > 0)) {
		t->eof = true;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	tcp_close(t);
}

/* Its cage ended. */
static void
tcp_hold_end(struct gk_hold *h)
{
	tcp_close((struct dns_tcp *)((char *)h - offsetof(struct dns_tcp,
	    hold)));
}

static void
tcp_accept_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct dns_server *s = arg;
	struct timeval idle = { DNS_TCP_IDLE_SEC, 0 };
	struct dns_tcp *t;

	/* over its cage's budget (or the daemon's): closed at once */
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    gk_addr_from_sockaddr(&t->peer, sa) == -1 ||
	    gk_hold_take(&t->hold, gk_cage_by_source(s->cages, &t->peer),
	    GK_HOLD_DNS_TCP, 1, tcp_hold_end) != GK_LIM__MAX) {
		free(t);
		close(fd);
		gk_listen_session_done(s->tcp_listen);
		return;
	}
	if ((t->bev = bufferevent_socket_new(s->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		gk_hold_drop(&t->hold);
		free(t);
		close(fd);
		gk_listen_session_done(s->tcp_listen);
		return;
	}
	t->srv = s;
	t->refs = 1;
	TAILQ_INSERT_TAIL(&s->tcp_conns, t, entry);
	bufferevent_setcb(t->bev, tcp_read_cb, tcp_write_cb, tcp_event_cb, t);
	bufferevent_set_timeouts(t->bev, &idle, &idle);
	bufferevent_setwatermark(t->bev, EV_READ, 0, 2 * (DNS_MAX_MSG + 2));
	bufferevent_enable(t->bev, EV_READ);
}

/* ---- set-up ---- */

static int
bind_socket(const struct gk_addr *a, uint16_t port, int type, char *err,
    size_t errlen)
{
	char addr[GK_ADDR_STRLEN];
	int fd, rcv = 4 * 1024 * 1024;

	if ((fd = gk_listen_bind(a, port, type, 128)) == -1) {
		snprintf(err, errlen, "dns %s %s port %u: %s%s",
		    type == SOCK_DGRAM ? "udp" : "tcp",
		    gk_addr_ntop(a, addr, sizeof(addr)), port, strerror(errno),
		    errno == EADDRINUSE ? " (another DNS server holds the "
		    "port; stop it or choose --dns-port)" : "");
		return -1;
	}
	/* Room for a few milliseconds of a flood the daemon is dropping
	 * (a cage over its rate), so that another cage's query is not lost
	 * while the daemon waits for the CPU: FORCE passes net.core.rmem_max
	 * (212992 by default) with CAP_NET_ADMIN. */
	if (type == SOCK_DGRAM &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) == -1)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	return fd;
}

static void
expire_one(struct gk_cage *c, void *arg)
{
	gk_cage_expire(c, *(const time_t *)arg);
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_server *s = arg;
	time_t now = gk_now();

	(void)fd;
	(void)what;
	gk_cage_foreach(s->cages, expire_one, &now);
}

static int
server_apply(struct dns_server *s, const struct dns_server_conf *sc,
    char *err, size_t errlen)
{
	struct dns_upstream *up;

	up = dns_upstream_new(s->base, sc->upstreams, sc->nupstreams,
	    sc->timeout_ms, err, errlen);
	if (up == NULL)
		return -1;
	if (s->up != NULL)
		dns_upstream_free(s->up);
	s->up = up;
	s->ttl_cap = sc->ttl_cap;
	s->pin_grace = sc->pin_grace;
	s->timeout_ms = sc->timeout_ms;
	if (s->cache == NULL || sc->cache_size != s->cache_size) {
		dns_cache_free(s->cache);
		s->cache = NULL;
		s->cache_size = sc->cache_size;
		if (sc->cache_size > 0 &&
		    (s->cache = dns_cache_new(sc->cache_size)) == NULL) {
			snprintf(err, errlen, "dns cache: out of memory");
			return -1;
		}
	}
	return 0;
}

struct dns_server *
dns_server_new(struct event_base *base, const struct dns_server_conf *sc,
    struct gk_cage_table *cages, struct gk_audit *audit, char *err,
    size_t errlen)
{
	struct timeval tv = { 5, 0 };
	struct dns_server *s;
	int tfd;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->base = base;
	s->cages = cages;
	s->audit = audit;
	s->udp_fd = -1;
	TAILQ_INIT(&s->tcp_conns);
	if (server_apply(s, sc, err, errlen) == -1)
		goto fail;
	if ((s->udp_fd = bind_socket(&sc->listen, sc->port, SOCK_DGRAM, err,
	    errlen)) == -1)
		goto fail;
	if ((tfd = bind_socket(&sc->listen, sc->port, SOCK_STREAM, err,
	    errlen)) == -1)
		goto fail;
	/* at the cap, or out of descriptors, clients wait in the backlog */
	s->tcp_listen = gk_listen_new(base, tfd, DNS_TCP_MAX, "dns tcp",
	    tcp_accept_cb, s);
	if (s->tcp_listen == NULL) {
		snprintf(err, errlen, "dns tcp listener: out of memory");
		goto fail;
	}
	s->udp_ev = event_new(base, s->udp_fd, EV_READ | EV_PERSIST,
	    udp_read_cb, s);
	s->expire_ev = event_new(base, -1, EV_PERSIST, expire_cb, s);
	if (s->udp_ev == NULL || s->expire_ev == NULL ||
	    event_add(s->udp_ev, NULL) == -1 ||
	    event_add(s->expire_ev, &tv) == -1) {
		snprintf(err, errlen, "dns: cannot add events");
		goto fail;
	}
	return s;
fail:
	dns_server_free(s);
	return NULL;
}

int
dns_server_reload(struct dns_server *s, const struct dns_server_conf *sc,
    char *err, size_t errlen)
{
	return server_apply(s, sc, err, errlen);
}

void
dns_server_free(struct dns_server *s)
{
	struct dns_tcp *t;

	if (s == NULL)
		return;
	s->stopping = true;
	dns_pending_free_all(s);
	dns_upstream_free(s->up);	/* frees the remaining pendings */
	while ((t = TAILQ_FIRST(&s->tcp_conns)) != NULL)
		tcp_close(t);
	gk_listen_free(s->tcp_listen);
	if (s->udp_ev != NULL)
		event_free(s->udp_ev);
	if (s->expire_ev != NULL)
		event_free(s->expire_ev);
	if (s->udp_fd != -1)
		close(s->udp_fd);
	dns_cache_free(s->cache);
	free(s);
}

const char *
dns_server_upstreams(const struct dns_server *s)
{
	return dns_upstream_describe(s->up);
}
