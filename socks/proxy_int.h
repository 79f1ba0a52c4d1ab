/*
 * proxy_int.h: the proxied connection, and what the SOCKS5, HTTP and
 * transparent proxies share.
 */
#ifndef PROXY_INT_H
#define PROXY_INT_H

#include <sys/queue.h>

#include "dns/dns.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/policy/gk_special.h"
#include "socks/proxy.h"
#include "socks/relay.h"

struct broker;
struct gk_ask_wait;
struct gk_listen;

#define PROXY_SESSIONS_MAX	4096	/* handshakes in progress */
#define PROXY_IN_MAX		(64 * 1024)	/* read ahead, by default */

/*
 * Where a connection is, from its accept to its end, for every kind; each
 * kind starts in its own first state and moves only through
 * proxy_enter_state(). A connection ends once, by proxy_conn_end(), from
 * any state.
 *
 *   SOCKS5:       GREETING -> [AUTH ->] REQUEST -> dialing
 *   HTTP:         REQUEST -> dialing
 *   transparent:  TARGET -> dialing
 *   an asking cage's unlisted name: REQUEST or TARGET -> ASKING (its
 *   name looked up, then held until its question ends) -> dialing
 *   dialing:      RESOLVE_A [-> RESOLVE_AAAA] -> CONNECT (an address
 *                 target starts at CONNECT) -> TUNNEL (the relay)
 *   any before TUNNEL -> REFUSING (a final reply flushing, then the end)
 */
enum proxy_state {
	PROXY_ST_GREETING,	/* SOCKS5 method negotiation */
	PROXY_ST_AUTH,		/* SOCKS5 username/password */
	PROXY_ST_REQUEST,	/* SOCKS5 request, HTTP request head */
	PROXY_ST_TARGET,	/* transparent: the original destination */
	PROXY_ST_ASKING,	/* held: the cage's owner is asked */
	PROXY_ST_RESOLVE_A,	/* dialing: the name's A records */
	PROXY_ST_RESOLVE_AAAA,	/* dialing: none usable; its AAAA */
	PROXY_ST_CONNECT,	/* dialing: connect(2) to each in turn */
	PROXY_ST_TUNNEL,	/* the relay carries it */
	PROXY_ST_REFUSING,	/* a final reply flushing */
};

#define PROXY_DIAL_ADDRS	(2 * DNS_LOOKUP_MAX)

/* The dialing part of a connection (proxy_dial.c's), made when it starts
 * dialing and gone when the dial ends: a tunnel does not carry it. */
struct proxy_dialing {
	struct dns_waiter	*lookup;
	struct gk_addr		 addrs[PROXY_DIAL_ADDRS];
	size_t			 naddrs, next;
	bool			 special_seen;	/* out.why says the first */
	bool			 policy_seen;	/* an address it denies */
	int			 fd;
	uint64_t		 connect_us;	/* connect(2) started */
	int			 last_err;
	uint8_t			 rcode;		/* an answer's, not NOERROR */
	struct event		*conn_ev;	/* EV_WRITE on fd */
	struct event		*deadline;	/* the whole dial */
	struct event		*kick;		/* deferred steps */
	struct proxy_outcome	 out;
	proxy_dial_cb		 cb;
};

/*
 * One proxied connection, from accept to its end: the handshake (the
 * protocol's code embeds this first), the dial, the question an asking
 * cage puts, and the tunnel (its relay).
 */
struct proxy_conn {
	TAILQ_ENTRY(proxy_conn) entry;
	struct proxy_listener	*l;
	const struct proxy_ctx	*ctx;
	enum proxy_state	 state;
	bool			 counted;	/* in the listener's handshakes */
	bool			 proto_freed;
	int			 fd;		/* the client; ours until TUNNEL */
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
	struct gk_host		 t;
	struct proxy_dialing	*dial;		/* RESOLVE_A .. CONNECT */
	struct gk_ask_wait	*ask;		/* ASKING */
	void			(*ask_cb)(struct proxy_conn *, bool,
				    const struct proxy_outcome *);
	uint32_t		 ask_timeout;	/* seconds */
	/* TUNNEL */
	struct relay		*relay;
	struct broker		*broker;	/* a bound host's, instead */
	struct proxy_peek_state	 ps;
	bool			 decided;	/* counted allowed or denied */
	uint64_t		 up, down;	/* relayed, at its end */
	/* upload budgets (proxy_budget.c): the ones it counts in, and
	 * the bytes it reserved */
	uint32_t		 budget_mask;
	uint64_t		 granted;
};

/* Is s dialing (RESOLVE_A, RESOLVE_AAAA or CONNECT)? */
#define PROXY_DIALING(s)	((s)->state >= PROXY_ST_RESOLVE_A && \
				 (s)->state <= PROXY_ST_CONNECT)

struct proxy_proto {
	const char	*name;
	enum gk_proto	 proto;
	enum gk_deny_kind kind;
	enum proxy_state first;		/* the state a connection starts in */
	size_t		 size;		/* of the protocol's struct embedding it */
	/* run once accepted (NULL: wait for the client's first bytes) */
	void		(*start)(struct proxy_conn *s);
	void		(*read)(struct proxy_conn *s);
	void		(*free)(struct proxy_conn *s);
};

struct proxy_listener {
	const struct proxy_ctx		*ctx;
	const struct proxy_proto	*proto;
	struct gk_listen		*listen;	/* counts the handshakes */
	TAILQ_HEAD(, proxy_conn)	 conns;		/* all it accepted */
};

struct proxy_listener *proxy_listener_new(const struct proxy_ctx *ctx,
		    const struct proxy_proto *proto,
		    const struct gk_addr *addr, uint16_t port, char *err,
		    size_t errlen);
/* Move s to st (a debug line with the connection id). */
void		 proxy_enter_state(struct proxy_conn *s,
		    enum proxy_state st);
/* Dial the target (RESOLVE_A or CONNECT); cb gets the outcome. -1: out
 * of memory, -2: the cage has as many tunnels as it may (a limit
 * event). */
int		 proxy_conn_dial(struct proxy_conn *s, proxy_dial_cb cb);
/* The connection's one end, from any state: what it holds goes (its
 * dial, question, relay, sockets, budget), and one line says why. */
void		 proxy_conn_end(struct proxy_conn *s, const char *why);
/* Write a final reply, then close once it is flushed (or times out). */
void		 proxy_conn_refuse(struct proxy_conn *s,
		    const void *reply, size_t len);
/* The client socket and the dialled one go to the relay: s is a TUNNEL
 * from here (or ended, when the relay cannot be made). up_limit: client
 * bytes to forward at most (-1: all; see relay.h). */
void		 proxy_conn_to_tunnel(struct proxy_conn *s, int server_fd,
		    const uint8_t *to_client, size_t to_client_len,
		    const uint8_t *to_server, size_t to_server_len, bool peek,
		    int64_t up_limit);
/* Write a handshake reply (directly when nothing is queued). */
void		 proxy_conn_write(struct proxy_conn *s, const void *buf,
		    size_t len);
/* The client's bytes read and not consumed yet. */
const uint8_t	*proxy_conn_input(const struct proxy_conn *s,
		    size_t *len);
/* Drop the first n of them (a message the protocol has taken). */
void		 proxy_conn_consume(struct proxy_conn *s, size_t n);
/* Read no more than max bytes ahead (default PROXY_IN_MAX). */
void		 proxy_conn_read_max(struct proxy_conn *s, size_t max);
/*
 * The target was refused as not on the allowlist (o, from proxy_allowed).
 * In an asking cage, for a name that may be asked about, the connection is
 * held (ASKING) while its question is open and true is returned; cb then
 * learns the outcome: approved (go on as if allowed: dial), or refused
 * with o's reason and why. false: refuse now (o may have a better why).
 */
typedef void	(*proxy_ask_cb)(struct proxy_conn *s, bool approved,
		    const struct proxy_outcome *o);
bool		 proxy_conn_ask(struct proxy_conn *s,
		    struct proxy_outcome *o, proxy_ask_cb cb);
/* What an asking session holds (its question, its name's lookup) goes. */
void		 proxy_ask_stop(struct proxy_conn *s);
/* An asking cage's placeholder address as a target is its name again
 * (gk_ask.h); anything else is left as it is. c may be NULL. */
void		 proxy_unplaceholder(const struct gk_cage *c,
		    struct gk_host *t);
/* Record a dial that failed (not a denial): counter and log line. */
void		 proxy_conn_failed(struct proxy_conn *s,
		    const struct proxy_outcome *o);
/* Record a denial by this connection (counters, audit). */
void		 proxy_conn_deny(struct proxy_conn *s,
		    const struct proxy_outcome *o);
/* Find the connection's cage by its token; fills who. */
struct gk_cage	*proxy_conn_cage_by_token(struct proxy_conn *s,
		    const char *token);

/* o->why for a name that led to special addresses only: a, the first,
 * and what it is (gk_special_what). */
void		 proxy_special_why(struct proxy_outcome *o, const char *name,
		    const struct gk_addr *a, enum gk_special sp);
/* Fill a denial (res, reason, why); returns false. */
bool		 proxy_outcome_deny(struct proxy_outcome *o,
		    enum gk_deny_reason r, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

/* proxy_cred.c: a credential's placeholder (its mark) in buf is a leak:
 * o filled as its denial (the credential named, nothing of its bytes). */
bool		 proxy_leak(const struct gk_cage *c, const uint8_t *buf,
		    size_t len, const char *where, struct proxy_outcome *o);
/* The same for a plain-HTTP request head, its Basic values decoded. */
bool		 proxy_leak_head(const struct gk_cage *c, const uint8_t *head,
		    size_t len, const char *where, struct proxy_outcome *o);
/* An inspected host's request head (request rules): true when a rule
 * allows its method and path, or the host has none; else o filled as a
 * request_rule denial. t: the connection's target (its name, or the
 * Host's for an address). */
bool		 proxy_rules_ok(const struct gk_cage *c, const struct gk_host *t,
		    const uint8_t *head, size_t len,
		    const struct http_follow_out *fo, struct proxy_outcome *o);
/* The relay gave s's sockets and the held ClientHello over (a TAKE: the
 * checked name, ps.tls_name, is bound to a credential): a broker carries
 * the connection from here, or it ends. */
void		 proxy_broker_take(struct proxy_conn *s, int cfd, int sfd,
		    const uint8_t *held, size_t len);

/* proxy_budget.c: may a connection to t start, with c's upload
 * budgets? false: o filled (upload_budget). */
bool		 proxy_budget_ok(const struct gk_cage *c,
		    const struct gk_host *t, struct proxy_outcome *o);
/* Does a budget of s's cage count its bytes (its tunnel needs a quota)? */
bool		 proxy_budget_applies(const struct proxy_conn *s);
/* The relay's and the broker's quota (arg: s): bytes s may send more;
 * 0: a budget is spent, the denial recorded. */
uint64_t	 proxy_budget_quota(void *arg);
/* s's tunnel ended (s->up set): what it reserved and did not send goes
 * back. */
void		 proxy_budget_end(struct proxy_conn *s);

/* proxy_dial.c: start dialing s->t (RESOLVE_A or CONNECT); cb(s, o)
 * when it ends, and the socket is then the callback's. -1: no memory. */
int		 proxy_dial_begin(struct proxy_conn *s, proxy_dial_cb cb);
/* Stop what a dial has under way (nothing: a no-op). */
void		 proxy_dial_stop(struct proxy_conn *s);
/* proxy_tunnel.c: relay s's client and server_fd (the relay's from here,
 * whatever happens); 0, or -1 when s ended. */
int		 proxy_tunnel_begin(struct proxy_conn *s, int server_fd,
		    struct relay_opts *o, bool peek);
/* The tunnel's part of the end (its relay ended): its line. */
void		 proxy_tunnel_end(struct proxy_conn *s, const char *why);

#endif /* PROXY_INT_H */
