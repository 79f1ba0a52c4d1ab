/*
 * broker_int.h: the broker's state, shared by broker.c (its making and
 * its end) and broker_pump.c (moving bytes).
 */
#ifndef BROKER_INT_H
#define BROKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>
#include <openssl/ssl.h>

#include "socks/broker.h"
#include "socks/parse/socks.h"

#define BK_CLIENT	0
#define BK_SERVER	1
#define BK_UP_CAP	(64 * 1024)	/* the client's plaintext */
#define BK_UP_SLACK	64		/* room for a rewritten head to grow */
#define BK_DOWN_CAP	(64 * 1024)	/* the server's plaintext */
#define BK_READ_BUF	(64 * 1024)	/* TLS read-ahead: records a read */
#define BK_OBUF		(96 * 1024)	/* TLS records gathered to send */
#define BK_FINISH_MS	2000		/* to flush a last reply, at most */

struct bk_side {
	int		 fd;
	SSL		*ssl;		/* reads and writes fd (broker_bio.c) */
	uint8_t		*pre;		/* read first: the held hello */
	size_t		 pre_off, pre_len;
	uint8_t		*obuf;		/* records to send: [ob_off, ob_len) */
	size_t		 ob_off, ob_len;
	struct event	*rd, *wr;
	short		 want;		/* EV_READ/EV_WRITE registered */
	short		 need;		/* what the last TLS call waits for */
	bool		 eof;		/* the socket's */
	bool		 wr_blocked;	/* a send(2) would block */
	bool		 wr_failed;	/* a send(2) failed */
	bool		 hs_done;
	bool		 closed;	/* its TLS ended (close_notify, EOF) */
	bool		 shut;		/* our close_notify went (or is due) */
};

struct broker {
	struct event_base	*base;
	uint64_t		 conn;
	struct bk_side		 s[2];
	/* client plaintext: [up_w, up_ready) checked, to go; [up_ready,
	 * up_len) not yet (a head in part) */
	uint8_t			*up;
	size_t			 up_w, up_ready, up_len;
	uint64_t		 skip;		/* body bytes to go unlooked */
	bool			 opaque;	/* upgraded: nothing looked at */
	struct http_follow	 f;
	uint8_t			*down;		/* [down_w, down_len) to go */
	size_t			 down_w, down_len;
	uint64_t		 up_bytes, down_bytes;
	bool			 refusing;	/* a reply goes, then the end */
	bool			 finishing;	/* close_notify sent: flush */
	bool			 upstream_failed; /* a 502 is due */
	char			 upstream_why[200];
	const char		*why;		/* the end's reason */
	uint64_t		 finish_by;	/* gk_clock_ms() */
	uint64_t		 handshake_by;	/* 0: none (or done) */
	uint32_t		 idle_ms;
	uint64_t		 last_act;
	struct event		*tick;
	bool			 done;
	broker_head_cb		 head_cb;
	broker_done_cb		 done_cb;
	uint64_t		(*quota_cb)(void *);	/* broker_opts.quota */
	uint64_t		 quota_left;	/* granted, not yet sent */
	void			*arg;
};

/* broker_pump.c: the sockets' events. */
void	 bk_io_cb(evutil_socket_t fd, short what, void *arg);
/* broker_bio.c: the BIO over sd's socket, sd->pre read first. */
BIO	*bk_bio_new(struct bk_side *sd);
/* Send what waits: 1 all gone, 0 some waits (wr_blocked), -1 failed. */
int	 bk_bio_flush(struct bk_side *sd);

#endif /* BROKER_INT_H */
