/*
 * relay_int.h: what relay.c (moving bytes, the driver, the lifetime) and
 * relay_peek.c (holding the client's bytes for the peek) share.
 */
#ifndef RELAY_INT_H
#define RELAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "socks/relay.h"

struct event;

#define RELAY_SPLICE_F		(SPLICE_F_NONBLOCK | SPLICE_F_MOVE)

/* fd and direction indexes line up: direction i reads fd i. */
enum { RELAY_CLIENT, RELAY_SERVER };
enum { RELAY_UP, RELAY_DOWN };

enum relay_state {
	RELAY_ST_HELD,		/* client->server held for the peek */
	RELAY_ST_PASSING,	/* client->server: `left` bytes unexamined,
				   then held again */
	RELAY_ST_OPEN,		/* relaying both ways */
	RELAY_ST_DONE,		/* closed, waiting for the last unref */
};

struct relay_dir {
	uint8_t		*pre;		/* delivered before anything else */
	uint8_t		*buf;		/* buffered path, lazy */
	uint64_t	 bytes;		/* written to the destination */
	uint32_t	 pre_off, pre_len;
	uint32_t	 buf_off, buf_len;
	uint32_t	 piped;		/* bytes in the pipe */
	uint32_t	 pipe_cap;
	int		 pipe[2];	/* lazy; -1 */
	unsigned	 no_splice:1;
	unsigned	 eof:1;		/* the source sent FIN */
	unsigned	 shut:1;	/* destination shut down: finished */
	unsigned	 full:1;	/* the pipe refused more */
	unsigned	 grown:1;	/* tried to grow the pipe */
	unsigned	 moved:1;	/* bytes moved since the last tick */
	unsigned	 limited:1;	/* read only `left` more bytes */
	uint64_t	 left;
};

struct relay {
	struct event_base	*base;
	uint64_t		 conn;		/* relay_opts.conn */
	int			 fd[2];
	struct event		*rd[2];		/* EV_READ on fd[i] */
	struct event		*wr[2];		/* EV_WRITE on fd[i] */
	struct event		*tick;
	short			 want[2];	/* interest registered */
	short			 ready[2];	/* EV_READ/EV_WRITE seen */
	enum relay_state	 state;
	int			 refs;
	struct relay_dir	 dir[2];
	uint8_t			*peek;		/* held client bytes: */
	uint32_t		 peek_off;	/* [peek_off, peek_len) */
	uint32_t		 peek_len;
	bool			 peek_new;	/* not yet shown to peek_cb */
	bool			 watching;	/* WATCH: held until watch_cb */
	bool			 sv_new;	/* sv[] grew, or the server's
						   EOF: not yet shown */
	uint32_t		 sv_len;	/* server bytes in sv[] */
	uint8_t			 sv[RELAY_WATCH_MAX]; /* its first ones */
	bool			 active;	/* bytes moved in this drive */
	bool			 releasing;	/* tick due within RELEASE_MS */
	const char		*why;		/* set by a failing step */
	uint32_t		 idle_ms;
	uint64_t		 last_act;	/* gk_clock_ms() */
	/* the first verdict is due by then, unless the server spoke
	 * first (0: none, or decided) */
	uint64_t		 peek_deadline;
	uint64_t		 down_pre;	/* to_client bytes */
	relay_peek_cb		 peek_cb;
	relay_watch_cb		 watch_cb;
	relay_done_cb		 done_cb;
	relay_take_cb		 take_cb;
	bool			 taken;		/* TAKE: the end hands over */
	bool			 hold_server;	/* until verdict_seen */
	bool			 verdict_seen;	/* any but MORE */
	size_t			(*deny_reply)(void *, uint8_t *, size_t);
	uint64_t		(*quota_cb)(void *);	/* relay_opts.quota */
	uint64_t		 quota_left;	/* granted, not yet sent */
	void			*arg;
};

static inline bool
relay_held(const struct relay *r)
{
	return r->state == RELAY_ST_HELD;
}

/* Client bytes held for the peek now. */
static inline size_t
relay_peek_held(const struct relay *r)
{
	return r->peek_len - r->peek_off;
}

/* relay.c */
void	 relay_enter_state(struct relay *r, enum relay_state st);
/* Everything but the struct (events, fds, pipes, buffers). */
void	 relay_clear(struct relay *r);
/* One reference less: freed on the next loop turn at the last. */
void	 relay_unref(struct relay *r);
/* relay_peek.c: TAKE's end: the sockets and the held bytes go to the
 * take callback (none of its own), then the relay's reference. */
void	 relay_hand_over(struct relay *r);
/* A failed read (ev EV_READ) or write (EV_WRITE) on fd[i]: 0 if it would
 * block, else -1 with r->why set. */
int	 relay_io_error(struct relay *r, int i, short ev, const char *what);
/* Append n bytes to d's prefix; 0 or -1 (errno). */
int	 relay_pre_append(struct relay_dir *d, const uint8_t *p, size_t n);

/* relay_write.c: write what direction i holds (prefix, pipe, buffer)
 * to its destination, within the upload quota; 1, 0, or -1 (r->why:
 * also "upload_budget" when the quota refused more). */
int	 relay_dir_drain(struct relay *r, int i);

/* relay_peek.c; steps return 1 (progress), 0 (would block), -1 (r->why) */
/* The bytes the caller read past its handshake are the first held. */
int	 relay_peek_init(struct relay *r, const struct relay_opts *o);
int	 relay_peek_read(struct relay *r);
/* Show the held bytes to peek_cb (again, while it passes some of them
 * and others are still held) and act on its verdicts. */
int	 relay_peek_decide(struct relay *r);
/* The server's bytes just read into a buffer: keep the first ones while
 * the client's are held (a WATCH may come). */
void	 relay_watch_record(struct relay *r, const uint8_t *p, size_t n);
/* PASSING: once the last passed byte left, hold again. */
int	 relay_pass_step(struct relay *r);

#endif /* RELAY_INT_H */
