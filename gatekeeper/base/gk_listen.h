/*
 * gk_listen: a listening stream socket with the accept policy every
 * listener of the daemon shares (STYLE.md §5), over libevent's
 * evconnlistener:
 *
 *  - at most `cap` sessions at once: at the cap the listener stops
 *    accepting (new clients wait in the kernel's backlog) and resumes when
 *    the owner reports that a session ended;
 *  - when accept(2) runs out of descriptors or memory (EMFILE, ENFILE,
 *    ENOBUFS, ENOMEM), a pause of GK_LISTEN_PAUSE_SEC, ended by a timer or
 *    earlier by a session ending (which gave a descriptor back).
 *
 * Each accepted connection counts as a session from just before the
 * callback runs until the owner calls gk_listen_session_done(), exactly
 * once, including for a connection the callback refuses at once.
 */
#ifndef GK_LISTEN_H
#define GK_LISTEN_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"

#define GK_LISTEN_PAUSE_SEC	1	/* after EMFILE and friends */

struct event_base;
struct gk_listen;

/*
 * A non-blocking, close-on-exec socket of `type` bound to a:port with
 * SO_REUSEADDR and IP_FREEBIND (the gateway address may not exist on any
 * link yet), listening with `backlog` when it is SOCK_STREAM. -1 with
 * errno set.
 */
int		 gk_listen_bind(const struct gk_addr *a, uint16_t port,
		    int type, int backlog);

/*
 * Accept on `fd`, a bound, listening stream socket (from gk_listen_bind(),
 * or a unix socket the caller bound). The listener owns fd from here on,
 * also when this fails (it is closed). `cap` 0 means no cap: the owner
 * refuses what it must itself. `name` prefixes the accept warnings ("dns
 * tcp" logs "dns tcp accept: ..."). `cb` gets each new connection's fd
 * (non-blocking, close-on-exec, the callee's) and the peer's address; it
 * must not free the listener. NULL with errno set on failure.
 */
struct gk_listen *gk_listen_new(struct event_base *base, int fd, size_t cap,
		    const char *name,
		    void (*cb)(int fd, struct sockaddr *sa, void *arg),
		    void *arg);
/* Stop listening and close the socket. Accepts NULL. */
void		 gk_listen_free(struct gk_listen *l);

/* A session accepted by `l` ended: below the cap again, pause over. */
void		 gk_listen_session_done(struct gk_listen *l);

size_t		 gk_listen_sessions(const struct gk_listen *l);
/* Whether it accepts now (false at the cap and during a pause). */
bool		 gk_listen_accepting(const struct gk_listen *l);

#endif /* GK_LISTEN_H */
