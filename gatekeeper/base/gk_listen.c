/*
 * gk_listen: the daemon's listening sockets (gk_listen.h). One function,
 * listen_update(), turns accepting on or off from the state (the cap, the
 * pause); everything else only changes that state and calls it.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"

struct gk_listen {
	struct evconnlistener	*lev;
	struct event		*pause_ev;	/* ends a pause */
	void			(*cb)(int, struct sockaddr *, void *);
	void			*arg;
	char			 name[48];
	size_t			 cap;		/* 0: none */
	size_t			 nsessions;
	bool			 paused;	/* after EMFILE and friends */
	bool			 on;		/* lev enabled */
};

int
gk_listen_bind(const struct gk_addr *a, uint16_t port, int type, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t sl = gk_addr_to_sockaddr(a, port, &ss);
	int fd, on = 1, saved;

	fd = socket(a->family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (a->family == AF_INET)
		setsockopt(fd, SOL_IP, IP_FREEBIND, &on, sizeof(on));
	else
		setsockopt(fd, SOL_IPV6, IPV6_FREEBIND, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&ss, sl) == -1 ||
	    (type == SOCK_STREAM && listen(fd, backlog) == -1)) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static bool
listen_wanted(const struct gk_listen *l)
{
	return !l->paused && (l->cap == 0 || l->nsessions < l->cap);
}

static void
listen_update(struct gk_listen *l)
{
	bool want = listen_wanted(l);

	if (want == l->on)
		return;
	if (want)
		evconnlistener_enable(l->lev);
	else
		evconnlistener_disable(l->lev);
	l->on = want;
}

static void
listen_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct gk_listen *l = arg;

	(void)lev;
	(void)salen;
	l->nsessions++;
	/* before the callback: it may end the session at once */
	listen_update(l);
	l->cb(fd, sa, l->arg);
}

/*
 * Errors of one pending connection, which accept(2) passes on under Linux
 * (see its "Error handling"): the next connection may be fine, so they
 * cost no pause. Anything else (out of descriptors or memory, or an error
 * that would repeat at once) pauses the listener.
 */
static bool
accept_error_transient(int e)
{
	switch (e) {
	case ENETDOWN:
	case EPROTO:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
	case EPERM:		/* a firewall rule */
		return true;
	default:
		return false;
	}
}

static void
listen_error_cb(struct evconnlistener *lev, void *arg)
{
	struct gk_listen *l = arg;
	struct timeval tv = { GK_LISTEN_PAUSE_SEC, 0 };
	int e = EVUTIL_SOCKET_ERROR();

	(void)lev;
	errno = e;
	log_warn("%s accept", l->name);
	if (accept_error_transient(e))
		return;
	/* EMFILE, ENFILE, ENOBUFS, ENOMEM: stop accepting for a while */
	l->paused = true;
	evtimer_add(l->pause_ev, &tv);
	listen_update(l);
}

static void
listen_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_listen *l = arg;

	(void)fd;
	(void)what;
	l->paused = false;
	listen_update(l);
}

struct gk_listen *
gk_listen_new(struct event_base *base, int fd, size_t cap, const char *name,
    void (*cb)(int, struct sockaddr *, void *), void *arg)
{
	struct gk_listen *l;
	int saved;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		goto fail;
	l->cb = cb;
	l->arg = arg;
	l->cap = cap;
	snprintf(l->name, sizeof(l->name), "%s", name);
	if ((l->pause_ev = evtimer_new(base, listen_pause_cb, l)) == NULL)
		goto fail;
	/* backlog 0: fd listens already, with the backlog its binder chose */
	l->lev = evconnlistener_new(base, listen_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    0, fd);
	if (l->lev == NULL)
		goto fail;
	evconnlistener_set_error_cb(l->lev, listen_error_cb);
	l->on = true;
	return l;
fail:
	saved = errno;
	if (l != NULL && l->pause_ev != NULL)
		event_free(l->pause_ev);
	free(l);
	close(fd);
	errno = saved;
	return NULL;
}

void
gk_listen_free(struct gk_listen *l)
{
	if (l == NULL)
		return;
	evconnlistener_free(l->lev);
	event_free(l->pause_ev);
	free(l);
}

void
gk_listen_session_done(struct gk_listen *l)
{
	assert(l->nsessions > 0);
	l->nsessions--;
	if (l->paused) {
		/* a descriptor came back: try now rather than at the timer */
		event_del(l->pause_ev);
		l->paused = false;
	}
	listen_update(l);
}

size_t
gk_listen_sessions(const struct gk_listen *l)
{
	return l->nsessions;
}

bool
gk_listen_accepting(const struct gk_listen *l)
{
	return l->on;
}
