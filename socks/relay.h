/*
 * relay: the tunnel between a cage's connection (the client) and the
 * upstream (the server), once a proxy has set both up. Linux splice(2)
 * through a pipe per direction, or a bounded buffer per direction where
 * splice cannot be used. Backpressure both ways, half-close, an idle
 * timeout, and an optional peek that holds the client's first bytes until
 * the caller's check allows them (or lets some pass and looks again at
 * what follows: the requests of a plain HTTP connection one by one).
 */
#ifndef RELAY_H
#define RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct relay;

/* Room for a TLS ClientHello record and then some. */
#define RELAY_PEEK_MAX	(16384 + 512)

enum relay_peek {
	RELAY_PEEK_MORE,	/* keep holding the client's bytes */
	RELAY_PEEK_ALLOW,	/* forward what is held, then relay the rest
				   of the stream unexamined */
	RELAY_PEEK_DENY,	/* close both sides, forward nothing more */
	RELAY_PEEK_PASS,	/* forward the next *pass bytes, then hold
				   again and show what follows them */
	RELAY_PEEK_WATCH,	/* forward the next *pass bytes (held ones),
				   hold what follows them until the watch
				   callback has seen the server's first
				   bytes, then show the held bytes again */
	RELAY_PEEK_TAKE,	/* the first verdict only: nothing went
				   either way; the take callback gets both
				   sockets and the held bytes, and the relay
				   ends without its done callback (a DENY
				   when it cannot be taken) */
};

/* The server's first bytes a watch callback is shown, at most. */
#define RELAY_WATCH_MAX	128

/*
 * Called after each read while the client->server direction is held,
 * with the bytes held so far (at most RELAY_PEEK_MAX). eof: the client
 * will send nothing more; MORE is then taken as ALLOW (deciding whether a
 * truncated message is acceptable is the caller's job). MORE with a full
 * buffer ends the relay with reason "peek_too_long". DENY after earlier
 * passes closes the tunnel; what was passed is gone.
 *
 * PASS: *pass (>= 1; 0 is taken as MORE) bytes of the client's stream,
 * counted from buf[0], go to the server. When they are all held, the
 * callback is called again at once with the held bytes after them (or
 * with none, if the client has ended); when *pass exceeds len, the rest
 * are forwarded as they arrive (spliced, never shown), and the bytes
 * after the last of them are held and shown as the first were. The
 * callback must not call relay_free().
 */
typedef enum relay_peek (*relay_peek_cb)(void *arg, const uint8_t *buf,
    size_t len, bool eof, uint64_t *pass);

/*
 * Called exactly once when the relay ends by itself (never after
 * relay_free()). reason: "closed" (both directions finished), "idle",
 * "denied", "peek_too_long", "peek_timeout", "client_error", "server_error",
 * "upload_budget" or "nomem".
 * up/down: bytes written to the server/client, the to_server/to_client
 * prefixes included. Both fds are closed already; the relay is freed
 * after the callback returns, which must not call relay_free().
 */
/*
 * After a WATCH verdict: called with the first len bytes of the server's
 * stream (at most RELAY_WATCH_MAX, from its very first byte) each time
 * more came, or the server ended (eof), until it returns true: then the
 * held client bytes are shown to the peek callback again (with none held
 * too). It must decide by RELAY_WATCH_MAX bytes; until it does, the
 * client's bytes stay held. It must not call relay_free().
 */
typedef bool (*relay_watch_cb)(void *arg, const uint8_t *buf, size_t len,
    bool eof);

typedef void (*relay_done_cb)(void *arg, const char *reason, uint64_t up,
    uint64_t down);

/*
 * After a TAKE verdict, on the relay's next step: the client's and the
 * server's sockets are the callback's (the relay has let go of them), and
 * held[0, len) are the client's bytes so far, none of which went on (the
 * buffer is the relay's, valid during the call). The relay is freed after
 * the callback returns; it must not call relay_free().
 */
typedef void (*relay_take_cb)(void *arg, int client_fd, int server_fd,
    const uint8_t *held, size_t len);

struct relay_opts {
	uint64_t	 conn;		/* the connection's id, for logs */
	unsigned	 idle_sec;	/* 0: no idle timeout */
	relay_peek_cb	 peek;		/* NULL: no peek, relay at once */
	relay_watch_cb	 watch;		/* with peek: for its WATCH verdicts
					   (without: WATCH is a DENY) */
	relay_take_cb	 take;		/* with peek: for a TAKE verdict
					   (without: TAKE is a DENY) */
	/* With peek: the server's bytes wait (unread) until the first
	 * verdict too: a server that speaks first is not heard before the
	 * client's first bytes were judged. */
	bool		 hold_server;
	/* With peek: after a DENY, the bytes to send the client before both
	 * close (one non-blocking send, only when nothing of the server's
	 * waits to reach it); 0: none. */
	size_t		(*deny_reply)(void *arg, uint8_t *buf, size_t cap);
	/*
	 * With peek: the first verdict is due this long after the start,
	 * unless the server sends a byte first (a server-speaks-first
	 * protocol); else the relay ends, reason "peek_timeout". 0: none.
	 */
	unsigned	 peek_ms;
	bool		 no_splice;	/* force the buffered path */
	/*
	 * An upload quota (NULL: none): the client->server direction sends
	 * only bytes it granted. It is called (with arg) before the first
	 * byte and whenever the last grant is spent while more waits to go,
	 * and returns how many more may go; 0 ends the relay, reason
	 * "upload_budget" (what is held is not sent). Bytes read from the
	 * client but not sent wait in the pipe or buffer meanwhile.
	 */
	uint64_t	(*quota)(void *arg);
	/* Sent to the server first, even while the peek holds. */
	const uint8_t	*to_server;
	size_t		 to_server_len;
	/* Sent to the client before any server byte. */
	const uint8_t	*to_client;
	size_t		 to_client_len;
	/*
	 * Bytes the caller already read from the client past its handshake:
	 * the start of the client->server stream (peeked when peek is set,
	 * at most RELAY_PEEK_MAX then).
	 */
	const uint8_t	*from_client;
	size_t		 from_client_len;
	/*
	 * Forward at most up_limit bytes of the client's stream (from_client
	 * included); read and drop the rest (a forwarded HTTP request: its
	 * body, and not a pipelined request behind it). Not with peek.
	 */
	bool		 up_limited;
	uint64_t	 up_limit;
};

/*
 * Both fds: connected, non-blocking stream sockets (with TCP_NODELAY
 * where bytes should go on as they come: the relay sets nothing). On
 * success the relay
 * owns them and closes each exactly once; nothing happens before the next
 * loop turn (no callback runs inside this call). On failure: NULL with
 * errno set, and the fds are still the caller's. All buffers in o are
 * copied. The process must ignore SIGPIPE (splice(2) cannot be told
 * MSG_NOSIGNAL).
 */
struct relay	*relay_new(struct event_base *base, int client_fd,
		    int server_fd, const struct relay_opts *o,
		    relay_done_cb done, void *arg);
/* Stop now: close both fds, no done callback. Accepts NULL. */
void		 relay_free(struct relay *r);
/* Stop now, closing both fds, and end as the relay ends by itself: the
 * done callback, with reason and the bytes so far, before this returns
 * (reason NULL: none, as relay_free). */
void		 relay_end(struct relay *r, const char *reason);

#endif /* RELAY_H */
