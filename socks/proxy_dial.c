/*
 * proxy_dial: resolve once, drop special addresses a name must not lead
 * to, and connect to each remaining address in turn within the connect
 * timeout. The socket handed over is connected to the address that was
 * checked: nothing is looked up twice.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "dns/dns.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"

#define DIAL_MAX_ADDRS	(2 * DNS_LOOKUP_MAX)

enum dial_state {
	DIAL_ST_RESOLVE_A,
	DIAL_ST_RESOLVE_AAAA,
	DIAL_ST_CONNECT,
	DIAL_ST_DONE,
};

struct proxy_dial {
	const struct proxy_ctx	*ctx;
	struct proxy_who	 who;
	struct gk_host	 t;
	enum dial_state		 state;
	struct dns_waiter	*lookup;
	struct gk_addr		 addrs[DIAL_MAX_ADDRS];
	size_t			 naddrs, next;
	bool			 special_seen;
	bool			 policy_seen;	/* an address it denies */
	char			 special_what[64];
	int			 fd;
	uint64_t		 connect_us;	/* connect(2) started */
	int			 last_err;
	struct event		*conn_ev;	/* EV_WRITE on fd */
	struct event		*deadline;	/* the whole dial */
	struct event		*kick;		/* deferred steps */
	struct proxy_outcome	 out;
	proxy_dial_cb		 cb;
	void			*arg;
};

static void	dial_drive(struct proxy_dial *d);

static const char *
dial_strstate(enum dial_state st)
{
	static const char *names[] = { "resolve_a", "resolve_aaaa",
	    "connect", "done" };

	return (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] :
	    "?";
}

/* The one place the state changes. */
static void
dial_enter_state(struct proxy_dial *d, enum dial_state st)
{
	log_debug("conn=%llu dial %s: %s -> %s",
	    (unsigned long long)d->who.conn, d->t.name,
	    dial_strstate(d->state), dial_strstate(st));
	d->state = st;
}

/* A lookup ended: AAAA when A gave nothing usable, else connect. */
static void
dial_looked_up(struct proxy_dial *d)
{
	dial_enter_state(d, d->state == DIAL_ST_RESOLVE_A && d->naddrs == 0 ?
	    DIAL_ST_RESOLVE_AAAA : DIAL_ST_CONNECT);
}

static void
dial_free(struct proxy_dial *d)
{
	if (d->lookup != NULL)
		dns_lookup_cancel(d->lookup);
	if (d->conn_ev != NULL)
		event_free(d->conn_ev);
	if (d->deadline != NULL)
		event_free(d->deadline);
	if (d->kick != NULL)
		event_free(d->kick);
	if (d->fd != -1)
		close(d->fd);
	free(d);
}

/* Report and free; the callback owns out.fd from here. */
static void
dial_finish(struct proxy_dial *d, enum proxy_result res)
{
	struct proxy_outcome o = d->out;

	o.res = res;
	o.fd = -1;
	if (res == PROXY_CONNECTED) {
		o.fd = d->fd;
		d->fd = -1;
	}
	dial_enter_state(d, DIAL_ST_DONE);
	d->cb(d->arg, &o);
	dial_free(d);
}

static void
add_addrs(struct proxy_dial *d, const struct dns_lookup_result *r)
{
	const struct gk_cage *c = proxy_cage(d->ctx, &d->who);
	enum gk_special sp;
	size_t i;

	for (i = 0; i < r->naddrs && d->naddrs < DIAL_MAX_ADDRS; i++) {
		/* an address the host policy denies is never dialled */
		if (c != NULL && gk_hostpolicy_denies_addr(gk_cage_policy(c),
		    &r->addrs[i], d->t.port)) {
			d->policy_seen = true;
			continue;
		}
		sp = gk_special_classify(&r->addrs[i], d->ctx->host);
		if (sp != GK_SPECIAL_NONE && (c == NULL ||
		    !gk_allow_addr_cidr(gk_cage_allow(c), &r->addrs[i]))) {
			d->special_seen = true;
			snprintf(d->special_what, sizeof(d->special_what),
			    "%s", gk_special_name(sp));
			continue;
		}
		d->addrs[d->naddrs++] = r->addrs[i];
	}
}

static void
lookup_cb(void *arg, const struct dns_lookup_result *r)
{
	struct proxy_dial *d = arg;

	d->lookup = NULL;
	add_addrs(d, r);
	dial_looked_up(d);
	dial_drive(d);
}

/* Start one lookup; false when it finished at once (r filled). */
static bool
dial_lookup(struct proxy_dial *d, int family)
{
	struct dns_lookup_result r;

	switch (dns_lookup(d->ctx->dns, d->t.name, family, lookup_cb, d, &r,
	    &d->lookup)) {
	case DNS_LOOKUP_PENDING:
		return true;
	case DNS_LOOKUP_DONE:
		add_addrs(d, &r);
		return false;
	case DNS_LOOKUP_FAILED:
		return false;
	}
	return false;
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_dial *d = arg;
	socklen_t len = sizeof(int);
	int err = 0;

	(void)what;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == 0) {
		gk_hist_observe(&gk_stats.upstream_connect,
		    gk_clock_us() - d->connect_us);
		dial_finish(d, PROXY_CONNECTED);
		return;
	}
	d->last_err = err;
	close(d->fd);
	d->fd = -1;
	dial_drive(d);
}

/* Start connecting to the next address; false when none is left. */
static bool
dial_next(struct proxy_dial *d)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	while (d->next < d->naddrs) {
		d->out.addr = d->addrs[d->next++];
		sl = gk_addr_to_sockaddr(&d->out.addr, d->t.port, &ss);
		d->fd = socket(d->out.addr.family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (d->fd == -1) {
			d->last_err = errno;
			continue;
		}
		/* the relay forwards as it comes: no Nagle delay on top */
		(void)setsockopt(d->fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		d->connect_us = gk_clock_us();
		if (connect(d->fd, (struct sockaddr *)&ss, sl) == 0 ||
		    errno == EINPROGRESS) {
			if (d->conn_ev != NULL)
				event_free(d->conn_ev);
			d->conn_ev = event_new(d->ctx->base, d->fd, EV_WRITE,
			    conn_cb, d);
			if (d->conn_ev != NULL && event_add(d->conn_ev, NULL) == 0)
				return true;
		}
		d->last_err = errno;
		close(d->fd);
		d->fd = -1;
	}
	return false;
}

static enum proxy_result
dial_failure(struct proxy_dial *d)
{
	if (d->naddrs == 0 && d->policy_seen) {
		d->out.reason = GK_REASON_HOST_POLICY;
		snprintf(d->out.why, sizeof(d->out.why), "%s resolves only to "
		    "addresses the host policy denies", d->t.name);
		return PROXY_DENIED;
	}
	if (d->naddrs == 0 && d->special_seen) {
		d->out.reason = GK_REASON_SPECIAL_RANGE;
		snprintf(d->out.why, sizeof(d->out.why), "%s resolves only to "
		    "%s addresses (a rebinding attempt?); only a CIDR pattern "
		    "naming them allows that", d->t.name, d->special_what);
		return PROXY_DENIED;
	}
	if (d->naddrs == 0) {
		snprintf(d->out.why, sizeof(d->out.why), "%s has no address",
		    d->t.name);
		return PROXY_UNREACHABLE;
	}
	snprintf(d->out.why, sizeof(d->out.why), "%s: %s", d->t.name,
	    strerror(d->last_err));
	switch (d->last_err) {
	case ECONNREFUSED:
		return PROXY_REFUSED;
	case ETIMEDOUT:
		return PROXY_TIMEOUT;
	default:
		return PROXY_UNREACHABLE;
	}
}

static void
dial_drive(struct proxy_dial *d)
{
	if (d->state == DIAL_ST_RESOLVE_A) {
		if (dial_lookup(d, AF_INET))
			return;
		dial_looked_up(d);
	}
	if (d->state == DIAL_ST_RESOLVE_AAAA) {
		if (dial_lookup(d, AF_INET6))
			return;
		dial_looked_up(d);
	}
	if (proxy_cage(d->ctx, &d->who) == NULL) {
		dial_finish(d, PROXY_GONE);
		return;
	}
	if (!dial_next(d))
		dial_finish(d, dial_failure(d));
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_dial *d = arg;

	(void)fd;
	(void)what;
	snprintf(d->out.why, sizeof(d->out.why), "%s: no connection within "
	    "%u ms", d->t.name, d->ctx->connect_timeout_ms);
	dial_finish(d, PROXY_TIMEOUT);
}

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	dial_drive(arg);
}

struct proxy_dial *
proxy_dial_start(const struct proxy_ctx *ctx, const struct proxy_who *who,
    const struct gk_host *t, proxy_dial_cb cb, void *arg)
{
	struct timeval tv = { ctx->connect_timeout_ms / 1000,
	    (suseconds_t)(ctx->connect_timeout_ms % 1000) * 1000 };
	struct timeval now = { 0, 0 };
	struct dns_lookup_result r;
	struct proxy_dial *d;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->ctx = ctx;
	d->who = *who;
	d->t = *t;
	d->fd = -1;
	d->cb = cb;
	d->arg = arg;
	d->out.fd = -1;
	/* an address needs no lookup */
	d->state = DIAL_ST_RESOLVE_A;
	if (t->is_addr) {
		d->addrs[d->naddrs++] = t->addr;
		dial_enter_state(d, DIAL_ST_CONNECT);
	}
	d->deadline = evtimer_new(ctx->base, deadline_cb, d);
	if (d->deadline == NULL || evtimer_add(d->deadline, &tv) == -1) {
		dial_free(d);
		return NULL;
	}
	/*
	 * Start connecting now rather than a loop turn later when no lookup
	 * has to be waited for: an address, or a name whose A answer the
	 * cache holds. Only the connect is started here (its result comes
	 * through conn_cb, never inside this call); anything else, a lookup
	 * upstream, a cage gone, no usable address, a connect that failed
	 * at once, goes the deferred way below, which goes on from the
	 * state reached and reports it exactly as before.
	 */
	if (proxy_cage(ctx, who) != NULL) {
		if (d->state == DIAL_ST_RESOLVE_A &&
		    dns_lookup_cached(ctx->dns, t->name, AF_INET, &r)) {
			add_addrs(d, &r);
			dial_looked_up(d);
		}
		if (d->state == DIAL_ST_CONNECT && dial_next(d))
			return d;
	}
	d->kick = evtimer_new(ctx->base, kick_cb, d);
	if (d->kick == NULL || evtimer_add(d->kick, &now) == -1) {
		dial_free(d);
		return NULL;
	}
	return d;
}

void
proxy_dial_cancel(struct proxy_dial *d)
{
	if (d != NULL)
		dial_free(d);
}
