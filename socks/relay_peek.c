/*
 * relay_peek: hold the client's bytes until the caller's peek decides:
 * wait for more, allow the rest of the stream, deny, or pass the next N
 * bytes of the stream and look again at what follows them. Passed bytes
 * that are held go to the prefix of the client->server direction; those
 * beyond, relay.c forwards as they come (spliced, unexamined), counted
 * down in dir->left (RELAY_ST_PASSING); once the last of them has left
 * for the server, the direction is held again. WATCH: the bytes after a
 * passed prefix stay held, unshown, until the watch callback has seen
 * enough of the server's first bytes (kept in sv[] while the client's
 * are held); a TLS peek lets a ClientHello go and waits for what the
 * server answers it.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "socks/relay_int.h"

int
relay_peek_init(struct relay *r, const struct relay_opts *o)
{
	if (o->from_client_len > RELAY_PEEK_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (o->from_client_len == 0)
		return 0;
	if ((r->peek = malloc(o->from_client_len)) == NULL)
		return -1;
	memcpy(r->peek, o->from_client, o->from_client_len);
	r->peek_off = 0;
	r->peek_len = (uint32_t)o->from_client_len;
	r->peek_new = true;
	return 0;
}

int
relay_peek_read(struct relay *r)
{
	uint8_t		 tmp[RELAY_PEEK_MAX];
	uint8_t		*np;
	size_t		 held = relay_peek_held(r);
	size_t		 room = RELAY_PEEK_MAX - held;
	ssize_t		 n;

	n = read(r->fd[RELAY_CLIENT], tmp, room);
	if (n == -1)
		return relay_io_error(r, RELAY_CLIENT, EV_READ, "read");
	if (n == 0) {
		r->dir[RELAY_UP].eof = 1;
		r->peek_new = true;
		return 1;
	}
	if (r->peek_off > 0) {		/* drop what was passed */
		memmove(r->peek, r->peek + r->peek_off, held);
		r->peek_off = 0;
		r->peek_len = (uint32_t)held;
	}
	if ((np = realloc(r->peek, held + (size_t)n)) == NULL) {
		r->why = "nomem";
		return -1;
	}
	if ((size_t)n < room)		/* drained the socket */
		r->ready[RELAY_CLIENT] &= ~EV_READ;
	memcpy(np + held, tmp, (size_t)n);
	r->peek = np;
	r->peek_len += (uint32_t)n;
	r->peek_new = true;
	r->dir[RELAY_UP].moved = 1;
	r->active = true;
	return 1;
}

/* The first n held bytes go to the server, before anything read later. */
static int
peek_take(struct relay *r, size_t n)
{
	if (n > 0 && relay_pre_append(&r->dir[RELAY_UP], r->peek + r->peek_off,
	    n) == -1) {
		r->why = "nomem";
		return -1;
	}
	r->peek_off += (uint32_t)n;
	if (r->peek_off == r->peek_len) {
		free(r->peek);
		r->peek = NULL;
		r->peek_off = r->peek_len = 0;
	}
	return 0;
}

/* PASS n: within the held bytes, look again at once at what follows
 * (or at the end); beyond them, forward n - held more first. */
static int
peek_pass(struct relay *r, uint64_t n)
{
	struct relay_dir	*d = &r->dir[RELAY_UP];
	size_t			 held = relay_peek_held(r);

	if (n <= held) {
		if (peek_take(r, (size_t)n) == -1)
			return -1;
		r->peek_new = relay_peek_held(r) > 0 || d->eof;
		return 1;
	}
	if (peek_take(r, held) == -1)
		return -1;
	d->limited = 1;
	d->left = n - held;
	relay_enter_state(r, RELAY_ST_PASSING);
	return 1;
}

/* WATCH n: the first n held bytes go; what follows them is held until
 * the watch callback is done with the server's bytes. */
static int
peek_watch(struct relay *r, uint64_t n)
{
	if (r->watch_cb == NULL || n == 0 || n > relay_peek_held(r)) {
		r->why = "denied";
		return -1;
	}
	if (peek_take(r, (size_t)n) == -1)
		return -1;
	r->watching = true;
	r->sv_new = true;	/* the server may have spoken already */
	r->peek_deadline = 0;	/* a verdict came */
	return 1;
}

void
relay_watch_record(struct relay *r, const uint8_t *p, size_t n)
{
	size_t room = RELAY_WATCH_MAX - r->sv_len;

	if (r->watch_cb == NULL || !relay_held(r) || room == 0)
		return;
	if (n > room)
		n = room;
	memcpy(r->sv + r->sv_len, p, n);
	r->sv_len += (uint32_t)n;
	r->sv_new = true;
}

/* WATCH: show the server's first bytes; 1 once the callback is done. */
static int
watch_once(struct relay *r)
{
	bool done;

	r->sv_new = false;
	done = r->watch_cb(r->arg, r->sv, r->sv_len,
	    r->dir[RELAY_DOWN].eof);
	if (r->state == RELAY_ST_DONE) {	/* relay_free() in watch_cb */
		r->why = NULL;
		return -1;
	}
	if (!done)
		return 0;
	r->watching = false;
	r->peek_new = true;	/* the held bytes, shown again */
	return 1;
}

/* TAKE: only while nothing of either peer's went on; the end hands
 * over. */
static int
peek_take_all(struct relay *r)
{
	const struct relay_dir *u = &r->dir[RELAY_UP];
	const struct relay_dir *d = &r->dir[RELAY_DOWN];

	/* the proxy's own reply (to_client) may have gone: nothing else */
	if (r->take_cb == NULL || u->bytes > 0 || d->bytes != r->down_pre ||
	    u->pre_off < u->pre_len || d->pre_off < d->pre_len ||
	    d->buf_len > d->buf_off || d->piped > 0 || r->sv_len > 0) {
		r->why = "denied";
		return -1;
	}
	r->taken = true;
	r->why = "taken";
	return -1;
}

/* A DENY's answer to the client, when nothing of the server's waits to
 * reach it first (a denied request's 403): one try, not blocking. */
static void
deny_reply(struct relay *r)
{
	const struct relay_dir *d = &r->dir[RELAY_DOWN];
	uint8_t buf[1024];
	size_t n;

	if (r->deny_reply == NULL || d->pre_off < d->pre_len ||
	    d->buf_off < d->buf_len || d->piped > 0 ||
	    (n = r->deny_reply(r->arg, buf, sizeof(buf))) == 0)
		return;
	(void)!send(r->fd[RELAY_CLIENT], buf, n < sizeof(buf) ? n :
	    sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* One verdict on the held bytes: 1 after ALLOW or PASS, 0 to wait. */
static int
peek_once(struct relay *r)
{
	struct relay_dir	*d = &r->dir[RELAY_UP];
	const uint8_t		*p = (const uint8_t *)"";
	uint64_t		 pass = 0;
	enum relay_peek		 v;

	r->peek_new = false;
	if (r->peek != NULL)
		p = r->peek + r->peek_off;
	v = r->peek_cb(r->arg, p, relay_peek_held(r), d->eof, &pass);
	if (v != RELAY_PEEK_MORE)
		r->verdict_seen = true;	/* the server may be heard */
	if (r->state == RELAY_ST_DONE) {	/* relay_free() in peek_cb */
		r->why = NULL;
		return -1;
	}
	if (v == RELAY_PEEK_PASS && pass == 0)
		v = RELAY_PEEK_MORE;
	if (v == RELAY_PEEK_MORE && d->eof)
		v = RELAY_PEEK_ALLOW;
	switch (v) {
	case RELAY_PEEK_MORE:
		if (relay_peek_held(r) < RELAY_PEEK_MAX)
			return 0;
		r->why = "peek_too_long";
		return -1;
	case RELAY_PEEK_ALLOW:
		if (peek_take(r, relay_peek_held(r)) == -1)
			return -1;
		relay_enter_state(r, RELAY_ST_OPEN);
		return 1;
	case RELAY_PEEK_PASS:
		return peek_pass(r, pass);
	case RELAY_PEEK_WATCH:
		return peek_watch(r, pass);
	case RELAY_PEEK_TAKE:
		return peek_take_all(r);
	case RELAY_PEEK_DENY:
		break;
	}
	deny_reply(r);
	r->why = "denied";
	return -1;
}

int
relay_peek_decide(struct relay *r)
{
	int	 rv = 0, st;

	/* Bounded: a PASS that keeps holding took at least one held byte,
	 * or was the answer to the end (no bytes, eof) and left HELD; a
	 * watch ends at most once per WATCH, which took a byte. */
	for (;;) {
		if (relay_held(r) && r->watching && r->sv_new)
			st = watch_once(r);
		else if (relay_held(r) && !r->watching && r->peek_new)
			st = peek_once(r);
		else
			return rv;
		if (st == -1)
			return -1;
		if (st == 0)
			return rv;
		rv |= st;
	}
}

int
relay_pass_step(struct relay *r)
{
	struct relay_dir	*d = &r->dir[RELAY_UP];

	if (r->state != RELAY_ST_PASSING || d->left > 0 || d->piped > 0 ||
	    d->buf_off < d->buf_len)
		return 0;
	d->limited = 0;
	relay_enter_state(r, RELAY_ST_HELD);
	return 1;
}

void
relay_hand_over(struct relay *r)
{
	int cfd = r->fd[RELAY_CLIENT], sfd = r->fd[RELAY_SERVER];
	uint8_t *held = r->peek;
	size_t len = relay_peek_held(r), off = r->peek_off;

	r->fd[RELAY_CLIENT] = r->fd[RELAY_SERVER] = -1;
	r->peek = NULL;
	relay_clear(r);		/* its events go before the taker's come */
	r->take_cb(r->arg, cfd, sfd, held != NULL ? held + off : NULL, len);
	free(held);
	relay_unref(r);
}
