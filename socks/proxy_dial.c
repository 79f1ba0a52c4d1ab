/*
 * proxy_dial: a connection's dialing states (RESOLVE_A, RESOLVE_AAAA,
 * CONNECT): resolve once, drop special addresses a name must not lead
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
#include "dns/dns_msg.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"
#include "socks/proxy_int.h"

static void	dial_drive(struct proxy_conn *s);

/* A lookup ended: AAAA when A gave nothing usable, else connect. */
static void
dial_looked_up(struct proxy_conn *s)
{
	proxy_enter_state(s, s->state == PROXY_ST_RESOLVE_A &&
	    s->dial->naddrs == 0 ? PROXY_ST_RESOLVE_AAAA : PROXY_ST_CONNECT);
}

void
proxy_dial_stop(struct proxy_conn *s)
{
	struct proxy_dialing *d = s->dial;

	if (d == NULL)
		return;
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
	s->dial = NULL;
}

/* Stop and report; the callback owns out.fd from here (and moves s on:
 * to TUNNEL, REFUSING or its end). */
static void
dial_finish(struct proxy_conn *s, enum proxy_result res)
{
	struct proxy_dialing *d = s->dial;
	struct proxy_outcome o = d->out;
	proxy_dial_cb cb = d->cb;

	o.res = res;
	o.fd = -1;
	if (res == PROXY_CONNECTED) {
		o.fd = d->fd;
		d->fd = -1;
	}
	proxy_dial_stop(s);
	cb(s, &o);
}

static void
add_addrs(struct proxy_conn *s, const struct dns_lookup_result *r)
{
	const struct gk_cage *c = proxy_cage(s->ctx, &s->who);
	struct proxy_dialing *d = s->dial;
	enum gk_special sp;
	size_t i;

	if (r->rcode != DNS_RC_NOERROR)
		d->rcode = r->rcode;
	for (i = 0; i < r->naddrs && d->naddrs < PROXY_DIAL_ADDRS; i++) {
		/* an address the host policy denies is never dialled */
		if (c != NULL && gk_hostpolicy_denies_addr(gk_cage_policy(c),
		    &r->addrs[i], s->t.port)) {
			d->policy_seen = true;
			continue;
		}
		sp = gk_special_classify(&r->addrs[i], s->ctx->host);
		if (sp != GK_SPECIAL_NONE && (c == NULL ||
		    !gk_allow_addr_cidr(gk_cage_allow(c), &r->addrs[i]))) {
			if (!d->special_seen)	/* the first says what */
				proxy_special_why(&d->out, s->t.name,
				    &r->addrs[i], sp);
			d->special_seen = true;
			continue;
		}
		d->addrs[d->naddrs++] = r->addrs[i];
	}
}

static void
lookup_cb(void *arg, const struct dns_lookup_result *r)
{
	struct proxy_conn *s = arg;

	s->dial->lookup = NULL;
	add_addrs(s, r);
	dial_looked_up(s);
	dial_drive(s);
}

/* Start one lookup; false when it finished at once (r filled). */
static bool
dial_lookup(struct proxy_conn *s, int family)
{
	struct dns_lookup_result r;

	switch (dns_lookup(s->ctx->dns, s->t.name, family, lookup_cb, s, &r,
	    &s->dial->lookup)) {
	case DNS_LOOKUP_PENDING:
		return true;
	case DNS_LOOKUP_DONE:
		add_addrs(s, &r);
		return false;
	case DNS_LOOKUP_FAILED:
		return false;
	}
	return false;
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *s = arg;
	struct proxy_dialing *d = s->dial;
	socklen_t len = sizeof(int);
	int err = 0;

	(void)what;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == 0) {
		gk_hist_observe(&gk_stats.upstream_connect,
		    gk_clock_us() - d->connect_us);
		dial_finish(s, PROXY_CONNECTED);
		return;
	}
	d->last_err = err;
	close(d->fd);
	d->fd = -1;
	dial_drive(s);
}

/* Start connecting to the next address; false when none is left. */
static bool
dial_next(struct proxy_conn *s)
{
	struct proxy_dialing *d = s->dial;
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	while (d->next < d->naddrs) {
		d->out.addr = d->addrs[d->next++];
		sl = gk_addr_to_sockaddr(&d->out.addr, s->t.port, &ss);
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
			d->conn_ev = event_new(s->ctx->base, d->fd, EV_WRITE,
			    conn_cb, s);
			if (d->conn_ev != NULL && event_add(d->conn_ev, NULL) == 0)
				return true;
		}
		d->last_err = errno;
		close(d->fd);
		d->fd = -1;
	}
	return false;
}

/* An upstream DNS answer's rcode for people; NULL: none to tell. */
static const char *
rcode_name(uint8_t rc)
{
	switch (rc) {
	case DNS_RC_FORMERR:
		return "FORMERR";
	case DNS_RC_SERVFAIL:
		return "SERVFAIL";
	case DNS_RC_NXDOMAIN:
		return "NXDOMAIN";
	case DNS_RC_NOTIMP:
		return "NOTIMP";
	case DNS_RC_REFUSED:
		return "REFUSED";
	default:
		return NULL;
	}
}

/* Why no address was dialled, after "it has no address". */
static void
no_address(struct proxy_dialing *d)
{
	const char *rc = rcode_name(d->rcode);

	if (rc != NULL)
		snprintf(d->out.why, sizeof(d->out.why), "it has no address "
		    "(the upstream DNS said %s)", rc);
	else
		snprintf(d->out.why, sizeof(d->out.why), "it has no address "
		    "(the upstream DNS has no A or AAAA record for it)");
}

/* Why the connects failed: the last address tried and its error. */
static void
connect_failed(struct proxy_dialing *d)
{
	char a[GK_ADDR_STRLEN], n[80] = "";

	gk_addr_ntop(&d->out.addr, a, sizeof(a));
	if (d->naddrs > 1)
		snprintf(n, sizeof(n), "none of its %zu addresses took it; "
		    "the last, ", d->naddrs);
	switch (d->last_err) {
	case ECONNREFUSED:
		snprintf(d->out.why, sizeof(d->out.why), "%s%s refused the "
		    "connection", n, a);
		break;
	case ETIMEDOUT:
		snprintf(d->out.why, sizeof(d->out.why), "%s%s did not "
		    "answer", n, a);
		break;
	case EHOSTUNREACH:
	case ENETUNREACH:
		snprintf(d->out.why, sizeof(d->out.why), "%sthere is no "
		    "route to %s", n, a);
		break;
	default:
		snprintf(d->out.why, sizeof(d->out.why), "%s%s: %s", n, a,
		    strerror(d->last_err));
		break;
	}
}

static enum proxy_result
dial_failure(struct proxy_conn *s)
{
	struct proxy_dialing *d = s->dial;

	if (d->naddrs == 0 && d->policy_seen) {
		d->out.reason = GK_REASON_HOST_POLICY;
		snprintf(d->out.why, sizeof(d->out.why), "%s resolves only to "
		    "addresses the host policy denies", s->t.name);
		return PROXY_DENIED;
	}
	if (d->naddrs == 0 && d->special_seen) {
		d->out.reason = GK_REASON_SPECIAL_RANGE;	/* why: said */
		return PROXY_DENIED;
	}
	if (d->naddrs == 0) {
		no_address(d);
		return PROXY_UNREACHABLE;
	}
	connect_failed(d);
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
dial_drive(struct proxy_conn *s)
{
	if (s->state == PROXY_ST_RESOLVE_A) {
		if (dial_lookup(s, AF_INET))
			return;
		dial_looked_up(s);
	}
	if (s->state == PROXY_ST_RESOLVE_AAAA) {
		if (dial_lookup(s, AF_INET6))
			return;
		dial_looked_up(s);
	}
	if (proxy_cage(s->ctx, &s->who) == NULL) {
		dial_finish(s, PROXY_GONE);
		return;
	}
	if (!dial_next(s))
		dial_finish(s, dial_failure(s));
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *s = arg;

	(void)fd;
	(void)what;
	snprintf(s->dial->out.why, sizeof(s->dial->out.why), "%s within "
	    "%u ms", s->state == PROXY_ST_CONNECT ? "no connection" :
	    "the upstream DNS did not answer", s->ctx->connect_timeout_ms);
	dial_finish(s, PROXY_TIMEOUT);
}

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	dial_drive(arg);
}

int
proxy_dial_begin(struct proxy_conn *s, proxy_dial_cb cb)
{
	const struct proxy_ctx *ctx = s->ctx;
	struct timeval tv = { ctx->connect_timeout_ms / 1000,
	    (suseconds_t)(ctx->connect_timeout_ms % 1000) * 1000 };
	struct timeval now = { 0, 0 };
	struct dns_lookup_result r;
	struct proxy_dialing *d;

	if ((d = s->dial = calloc(1, sizeof(*d))) == NULL)
		return -1;
	d->fd = -1;
	d->cb = cb;
	d->out.fd = -1;
	/* an address needs no lookup */
	if (s->t.is_addr) {
		d->addrs[d->naddrs++] = s->t.addr;
		proxy_enter_state(s, PROXY_ST_CONNECT);
	} else
		proxy_enter_state(s, PROXY_ST_RESOLVE_A);
	d->deadline = evtimer_new(ctx->base, deadline_cb, s);
	if (d->deadline == NULL || evtimer_add(d->deadline, &tv) == -1)
		return -1;
	/*
	 * Start connecting now rather than a loop turn later when no lookup
	 * has to be waited for: an address, or a name whose A answer the
	 * cache holds. Only the connect is started here (its result comes
	 * through conn_cb, never inside this call); anything else, a lookup
	 * upstream, a cage gone, no usable address, a connect that failed
	 * at once, goes the deferred way below, which goes on from the
	 * state reached and reports it exactly as before.
	 */
	if (proxy_cage(ctx, &s->who) != NULL) {
		if (s->state == PROXY_ST_RESOLVE_A &&
		    dns_lookup_cached(ctx->dns, s->t.name, AF_INET, &r)) {
			add_addrs(s, &r);
			dial_looked_up(s);
		}
		if (s->state == PROXY_ST_CONNECT && dial_next(s))
			return 0;
	}
	d->kick = evtimer_new(ctx->base, kick_cb, s);
	if (d->kick == NULL || evtimer_add(d->kick, &now) == -1)
		return -1;
	return 0;
}
