/*
 * proxy_int.h: pieces shared by the SOCKS5, HTTP and transparent sessions.
 */
#ifndef PROXY_INT_H
#define PROXY_INT_H

#include <sys/queue.h>

#include "gatekeeper/cage/gk_limit.h"
#include "socks/proxy.h"
#include "socks/relay.h"

struct gk_ask_wait;
struct gk_listen;

#define PROXY_SESSIONS_MAX	4096	/* handshakes in progress */
#define PROXY_IN_MAX		(64 * 1024)	/* read ahead, by default */

/*
 * Where a session is, for every kind; each kind starts in its own first
 * state and moves only through proxy_enter_state(). A session ends by
 * being closed (from any state) or handed to a tunnel (from DIALING).
 *
 *   SOCKS5:       GREETING -> [AUTH ->] REQUEST -> DIALING
 *   HTTP:         REQUEST -> DIALING
 *   transparent:  TARGET -> DIALING
 *   an asking cage's unlisted name: REQUEST or TARGET -> ASKING (held
 *   until its question ends) -> DIALING
 *   any but REFUSING -> REFUSING (a final reply flushing, then closed)
 */
enum proxy_state {
	PROXY_ST_GREETING,	/* SOCKS5 method negotiation */
	PROXY_ST_AUTH,		/* SOCKS5 username/password */
	PROXY_ST_REQUEST,	/* SOCKS5 request, HTTP request head */
	PROXY_ST_TARGET,	/* transparent: the original destination */
	PROXY_ST_DIALING,	/* client bytes wait for the tunnel */
	PROXY_ST_REFUSING,
	PROXY_ST_ASKING,	/* held: the cage's owner is asked */
};

/* A session in its handshake; the protocol code embeds this first. */
struct proxy_session {
	TAILQ_ENTRY(proxy_session) entry;
	struct proxy_listener	*l;
	const struct proxy_ctx	*ctx;
	enum proxy_state	 state;
	int			 fd;		/* the client; ours */
	/*
	 * The client is read straight into `in` (no more than in_max bytes
	 * ahead) while the protocol reads it; what a reply's send(2) did
	 * not take waits in `out` for EV_WRITE.
	 */
	struct event		*rd;		/* EV_READ, while reading */
	struct event		*wr;		/* EV_WRITE, made when needed */
	uint8_t			*in;
	size_t			 in_len, in_cap, in_max;
	uint8_t			*out;
	size_t			 out_off, out_len;
	bool			 broken;	/* a send failed: no more */
	struct event		*timer;		/* handshake deadline */
	struct proxy_who	 who;
	struct gk_hold		 hold;		/* in its cage's budget */
	bool			 have_cage;
	struct gk_host	 t;
	struct proxy_dial	*dial;		/* DIALING */
	struct gk_ask_wait	*ask;		/* ASKING */
	void			(*ask_cb)(struct proxy_session *, bool,
				    const struct proxy_outcome *);
	uint32_t		 ask_timeout;	/* seconds */
};

struct proxy_proto {
	const char	*name;
	enum gk_proto	 proto;
	enum gk_deny_kind kind;
	enum proxy_state first;		/* the state a session starts in */
	size_t		 size;		/* of the embedding session struct */
	/* run once accepted (NULL: wait for the client's first bytes) */
	void		(*start)(struct proxy_session *s);
	void		(*read)(struct proxy_session *s);
	void		(*free)(struct proxy_session *s);
};

struct proxy_listener {
	const struct proxy_ctx		*ctx;
	const struct proxy_proto	*proto;
	struct gk_listen		*listen;	/* counts the sessions */
	TAILQ_HEAD(, proxy_session)	 sessions;
};

struct proxy_listener *proxy_listener_new(const struct proxy_ctx *ctx,
		    const struct proxy_proto *proto,
		    const struct gk_addr *addr, uint16_t port, char *err,
		    size_t errlen);
/* Move s to st (a debug line with the connection id). */
void		 proxy_enter_state(struct proxy_session *s,
		    enum proxy_state st);
/* Dial the target (DIALING); cb gets the outcome. -1: out of memory, -2:
 * the cage has as many tunnels as it may (a limit event). */
int		 proxy_session_dial(struct proxy_session *s, proxy_dial_cb cb);
/* Close the session now (no flush). */
void		 proxy_session_close(struct proxy_session *s,
		    const char *why);
/* Write a final reply, then close once it is flushed (or times out). */
void		 proxy_session_refuse(struct proxy_session *s,
		    const void *reply, size_t len);
/* Hand the client socket and the dialled socket to a tunnel; s is freed. */
/* up_limit: client bytes to forward at most (-1: all; see relay.h). */
void		 proxy_session_to_tunnel(struct proxy_session *s, int server_fd,
		    const uint8_t *to_client, size_t to_client_len,
		    const uint8_t *to_server, size_t to_server_len, bool peek,
		    int64_t up_limit);
/* Write a handshake reply (directly when nothing is queued). */
void		 proxy_session_write(struct proxy_session *s, const void *buf,
		    size_t len);
/* The client's bytes read and not consumed yet. */
const uint8_t	*proxy_session_input(const struct proxy_session *s,
		    size_t *len);
/* Drop the first n of them (a message the protocol has taken). */
void		 proxy_session_consume(struct proxy_session *s, size_t n);
/* Read no more than max bytes ahead (default PROXY_IN_MAX). */
void		 proxy_session_read_max(struct proxy_session *s, size_t max);
/*
 * The target was refused as not on the allowlist (o, from proxy_allowed).
 * In an asking cage, for a name that may be asked about, the session is
 * held (ASKING) while its question is open and true is returned; cb then
 * learns the outcome: approved (go on as if allowed: dial), or refused
 * with o's reason and why. false: refuse now (o may have a better why).
 */
typedef void	(*proxy_ask_cb)(struct proxy_session *s, bool approved,
		    const struct proxy_outcome *o);
bool		 proxy_session_ask(struct proxy_session *s,
		    struct proxy_outcome *o, proxy_ask_cb cb);
/* An asking cage's placeholder address as a target is its name again
 * (gk_ask.h); anything else is left as it is. c may be NULL. */
void		 proxy_unplaceholder(const struct gk_cage *c,
		    struct gk_host *t);
/* Record a dial that failed (not a denial): counter and log line. */
void		 proxy_session_failed(struct proxy_session *s,
		    const struct proxy_outcome *o);
/* Record a denial by this session (counters, audit). */
void		 proxy_session_deny(struct proxy_session *s,
		    const struct proxy_outcome *o);
/* Find the session's cage by source; fills who. */
struct gk_cage	*proxy_session_cage_by_token(struct proxy_session *s,
		    const char *token);

/* Fill a denial (res, reason, why); returns false. */
bool		 proxy_outcome_deny(struct proxy_outcome *o,
		    enum gk_deny_reason r, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

/* The tunnel takes over the session's holding (`from`). */
int		 proxy_tunnel_start(const struct proxy_ctx *ctx,
		    const struct proxy_who *who, const struct gk_host *t,
		    int client_fd, int server_fd, struct relay_opts *o,
		    bool peek, struct gk_hold *from);

#endif /* PROXY_INT_H */
