/*
 * proxy: what the SOCKS5 and HTTP proxies share. The policy check at
 * connect time, the dial (resolve once, skip special addresses, try each
 * address in turn within the connect timeout, hand over the checked
 * socket) and the peek at the client's bytes (TLS SNI, the Host of every
 * plain HTTP request).
 */
#ifndef PROXY_H
#define PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/state/gk_stats.h"
#include "sni/sni.h"
#include "socks/parse/socks.h"
#include "socks/relay.h"

struct event_base;
struct dns_server;
struct gk_audit;
struct gk_cage;
struct gk_cage_table;
struct gk_hostaddrs;

#define PROXY_WHY_MAX	512

typedef struct ssl_ctx_st SSL_CTX;

struct proxy_ctx {
	struct event_base		*base;
	struct dns_server		*dns;
	struct gk_cage_table		*cages;
	struct gk_audit			*audit;
	const struct gk_hostaddrs	*host;
	unsigned			 connect_timeout_ms;
	unsigned			 handshake_timeout_ms;
	unsigned			 idle_sec;
	/* verifies the servers of brokered hosts (broker_upstream_ctx);
	 * NULL: no brokering (a bound host's TLS is refused) */
	SSL_CTX				*upstream_tls;
};

/*
 * One proxied connection: its id, the same from accept to close in every
 * log and audit line about it (handshake, dial, tunnel, relay), and the
 * cage it belongs to, found again after every async step.
 */
struct proxy_who {
	uint64_t	 conn;		/* from 1, across all listeners */
	uint64_t	 start_ms;	/* accepted (gk_clock_ms) */
	struct gk_addr	 source;
	char		 id[16];	/* the cage; "" while unknown */
	enum gk_deny_kind kind;
	enum gk_proto	 proto;
};

enum proxy_result {
	PROXY_CONNECTED,
	PROXY_DENIED,		/* reason/why say which rule */
	PROXY_UNREACHABLE,	/* no address, or network/host unreachable */
	PROXY_REFUSED,
	PROXY_TIMEOUT,
	PROXY_GONE,		/* the cage went away meanwhile */
	PROXY_ERROR,		/* out of resources */
};

struct proxy_outcome {
	enum proxy_result	 res;
	int			 fd;		/* PROXY_CONNECTED: yours */
	struct gk_addr		 addr;		/* what was dialled */
	enum gk_deny_reason	 reason;	/* PROXY_DENIED */
	char			 why[PROXY_WHY_MAX];
	char			 seen[GK_NAME_MAX + 1];	/* SNI or Host */
	const char		*credential;	/* CREDENTIAL_LEAK: whose */
};

typedef void (*proxy_dial_cb)(void *arg, const struct proxy_outcome *o);

struct gk_cage	*proxy_cage(const struct proxy_ctx *ctx,
		    const struct proxy_who *who);
/* An address target's name for logs, counters and the audit: the name
 * this cage's DNS pinned the address to (one allowed on the port first),
 * else the address itself. c may be NULL. */
void		 proxy_target_label(const struct gk_cage *c,
		    struct gk_host *t);
/* The policy for a target before anything is dialled. */
bool		 proxy_allowed(const struct proxy_ctx *ctx,
		    const struct gk_cage *c, const struct gk_host *t,
		    struct proxy_outcome *o);
/* What the peek knows of a tunnel's client stream between calls. */
/* Where a TLS handshake is, after its first ClientHello passed. */
enum proxy_tls_stage {
	PROXY_TLS_NONE,		/* no hello passed (yet) */
	PROXY_TLS_WATCH,	/* the server's answer to it not yet known */
	PROXY_TLS_RETRY,	/* a HelloRetryRequest: the second hello due */
	PROXY_TLS_BAD_SERVER,	/* an answer that cannot be read */
	PROXY_TLS_DONE,		/* no more plaintext hellos to look at */
};

struct proxy_peek_state {
	bool			 following;	/* plain HTTP: every request */
	struct http_follow	 f;
	enum proxy_tls_stage	 tls;
	char			 tls_name[SNI_MAX_NAME + 1]; /* of the first
						   hello ("": none) */
};

void		 proxy_peek_init(struct proxy_peek_state *ps);
/*
 * A relay_watch_cb for the peek's WATCH (a TLS ClientHello passed): the
 * server's first bytes; true once they tell whether it asked for a
 * HelloRetryRequest (then the next peek wants a second ClientHello with
 * the first one's server name).
 */
bool		 proxy_peek_watch(struct proxy_peek_state *ps,
		    const uint8_t *buf, size_t len, bool eof);
/*
 * The peek (a relay_peek_cb's decision): MORE, ALLOW (the rest of the
 * stream unexamined: a line protocol, websocket frames, TLS once no
 * second ClientHello can come), WATCH *pass bytes (a ClientHello that
 * passed: proxy_peek_watch() then sees the server's answer), DENY
 * (reason/why filled) or PASS *pass bytes (checked requests and what
 * their framing says follows them, possibly more than len), then show
 * what comes next; ps keeps where the stream is.
 */
enum relay_peek	 proxy_peek(const struct proxy_ctx *ctx,
		    const struct proxy_who *who, const struct gk_host *t,
		    struct proxy_peek_state *ps, const uint8_t *buf,
		    size_t len, bool eof, uint64_t *pass,
		    struct proxy_outcome *o);

/* A denied connection: its verdict, then proxy_deny_count(). */
void		 proxy_deny_record(const struct proxy_ctx *ctx,
		    const struct proxy_who *who, const struct gk_host *t,
		    const struct proxy_outcome *o);
/* A denial: counters (global and the cage's), a log line and one audit
 * line (also for a later request of a connection counted allowed). */
void		 proxy_deny_count(const struct proxy_ctx *ctx,
		    const struct proxy_who *who, const struct gk_host *t,
		    const struct proxy_outcome *o);
/* A tunnel ended (why: its relay's reason), having moved up and down
 * bytes: a "conn.allow" audit line when the log samples it
 * (gk_audit_allowed_take) and its cage's audit budget has room; not for
 * one a request rule cut short ("denied": its proxy.deny line says). */
void		 proxy_allow_sample(const struct proxy_ctx *ctx,
		    const struct proxy_who *who, const struct gk_host *t,
		    const char *why, uint64_t up, uint64_t down);
const char	*proxy_strresult(enum proxy_result r);
/* A deny reason for people ("is not on the allowlist"), after HOST:PORT. */
const char	*proxy_reason_phrase(enum gk_deny_reason r);

/* The listeners (on the gateway address, IP_FREEBIND). */
struct proxy_listener;
struct proxy_listener *socks_listener_new(const struct proxy_ctx *ctx,
		    const struct gk_addr *addr, uint16_t port, char *err,
		    size_t errlen);
struct proxy_listener *http_listener_new(const struct proxy_ctx *ctx,
		    const struct gk_addr *addr, uint16_t port, char *err,
		    size_t errlen);
/*
 * A transparent cage's SYN to dst:port that the kernel refused (its
 * address was never pinned to the cage, or is a special one): counted,
 * logged, audited and told to the owner as the transparent listener's
 * own denial would be ("conn" 0).
 */
void		 proxy_transparent_refused(const struct proxy_ctx *ctx,
		    struct gk_cage *c, const struct gk_addr *dst,
		    uint16_t port);
/* Connections redirected by nftables (SO_ORIGINAL_DST is the target). */
struct proxy_listener *transparent_listener_new(const struct proxy_ctx *ctx,
		    const struct gk_addr *addr, uint16_t port, char *err,
		    size_t errlen);
/* Closes the listener and ends every connection it accepted that is
 * still open, tunnels too (both sockets closed). */
void		 proxy_listener_free(struct proxy_listener *l);

#endif /* PROXY_H */
