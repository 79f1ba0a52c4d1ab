/*
 * The harness of the relay tests (test_relay.c, test_relay_peek.c): real
 * TCP connections over 127.0.0.1. The "cage" peer talks to the relay's
 * client fd, the "up" peer stands for the upstream behind its server fd;
 * both peers are driven by the same event loop as the relay, run until a
 * condition holds or a deadline passes.
 */
#ifndef RELAY_TESTUTIL_H
#define RELAY_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "socks/relay.h"

#define MIB		(1024 * 1024)
#define KEEP_MAX	(64 * 1024)	/* received bytes kept for memcmp */
#define CHUNK		(64 * 1024)
#define DEADLINE_MS	20000

enum peer_end { END_NONE, END_SHUT, END_CLOSE, END_RST };

/* A test's variant, passed to setup as cmocka's initial state. */
struct param {
	bool	 no_splice;
	bool	 flag;		/* what it means depends on the test */
	int	 bufsz;		/* SO_RCVBUF/SO_SNDBUF of all sockets */
};

struct tctx;

struct peer {
	struct tctx	*t;
	int		 fd;
	struct event	*ev;
	uint8_t		*txq;		/* explicit bytes, sent first */
	size_t		 txq_len, txq_off;
	size_t		 tx_total, tx_sent;	/* then pattern bytes */
	uint32_t	 tx_seed;
	enum peer_end	 tx_end;
	bool		 tx_ended, paused;
	uint32_t	 rx_seed;	/* 0: no pattern check */
	size_t		 rx_len;
	uint8_t		 rx_keep[KEEP_MAX];
	int		 rx_err;
	bool		 rx_eof, rx_bad;	/* rx_bad: broke the pattern */
};

struct tctx {
	struct event_base	*base;
	struct event		*timer;		/* UNTIL's deadline */
	struct relay		*r;
	struct peer		 cage, up;
	int			 rclient, rserver;	/* relay's ends */
	struct param		 prm;
	int			 nfds;
	bool			 started, timed_out;
	/* done_cb */
	int			 done_calls;
	char			 reason[32];
	uint64_t		 done_up, done_down;
	/* peek_cb */
	enum relay_peek		 verdict;	/* unless allow_at */
	size_t			 allow_at;	/* ALLOW at this length */
	int			 peek_calls;
	size_t			 peek_len;
	bool			 peek_eof;
	uint8_t			 peek_seen[RELAY_PEEK_MAX];
	/* PASS scripts: passes[] one per call (after MORE while fewer
	 * than pass_at bytes are held), then verdict; with pseed the held
	 * bytes must be the pattern at the stream offset passed so far */
	const uint64_t		*passes;
	size_t			 npasses, pass_at;
	uint32_t		 pseed;
	uint64_t		 stream_off;
	bool			 peek_bad;
	size_t			 lens[64];	/* held at each call */
};



uint8_t		 pat(uint32_t seed, size_t i);	/* pattern byte i */
int		 count_fds(void);
/* Queue b[0, n), or n pattern bytes if b is NULL; then end the stream. */
void		 peer_send(struct peer *p, const void *b, size_t n,
		    uint32_t seed, enum peer_end end);
bool		 peer_closed(const struct peer *p);
void		 done_cb(void *arg, const char *reason, uint64_t up,
		    uint64_t down);
enum relay_peek	 peek_cb(void *arg, const uint8_t *buf, size_t len,
		    bool eof, uint64_t *pass);
void		 arm(struct tctx *t, int ms);
bool		 all_done(struct tctx *t);
void		 start(struct tctx *t, const struct relay_opts *o);
/* cmocka fixtures: *state is a struct param (or NULL), then the tctx */
int		 setup(void **state);
int		 teardown(void **state);
void		 check_done(struct tctx *t, const char *reason, uint64_t up,
		    uint64_t down);

/* Run the loop until cond holds or ms pass; the value of cond. */
#define UNTIL(t, cond, ms)	({					\
	arm((t), (ms));							\
	while (!(cond) && !(t)->timed_out)				\
		event_base_loop((t)->base, EVLOOP_ONCE);		\
	evtimer_del((t)->timer);					\
	(cond);								\
})
#define RUN_FOR(t, ms)	((void)UNTIL((t), false, (ms)))

#define T(f, prm)	{ #f, f, setup, teardown, prm }
#define TP(name, f, prm) { name, f, setup, teardown, prm }

#endif /* RELAY_TESTUTIL_H */
