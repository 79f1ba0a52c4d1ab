/*
 * relay: move bytes between a client and a server socket until both
 * directions have ended, an error, the idle timeout, or the peek says no
 * (holding the client's bytes for the peek is relay_peek.c).
 * Each direction (UP: client->server, DOWN: server->client) has a prefix
 * to deliver first, then a bounded buffer for its first RELAY_SPLICE_AFTER
 * bytes, then a pipe for splice(2) (or the buffer throughout where splice
 * cannot be used). Most tunnels are short (a request, a small answer):
 * for them a read and a send cost less than a pipe's pipe2, fcntl, two
 * splices and two closes. Pipes and buffers are made when data flows and
 * given back by the tick once a direction is empty and quiet. One driver,
 * relay_drive(), moves what it can, then recomputes the read/write
 * interest of both fds from the state of both directions.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/relay_int.h"

#define RELAY_PIPE_SIZE		(256 * 1024)	/* grown to, for bulk */
#define RELAY_PIPE_MIN		(64 * 1024)	/* less: buffered instead */
#define RELAY_BUF_SIZE		(64 * 1024)	/* per direction, buffered */
#define RELAY_ROUNDS		16		/* per wakeup, then yield */
#define RELAY_RELEASE_MS	2000		/* quiet: free pipe/buffer */
#define RELAY_SPLICE_AFTER	(64 * 1024)	/* copied before a pipe */
#define RELAY_BUF_SPARE		32		/* buffers kept for reuse */

/*
 * Spare buffers: every tunnel's first bytes are copied through a
 * RELAY_BUF_SIZE buffer per direction, so short tunnels would otherwise
 * malloc and free two of them each, and the heap's top would be given
 * back and faulted in again under load. At most RELAY_BUF_SPARE (2 MiB)
 * are kept.
 */
static uint8_t	*buf_spare[RELAY_BUF_SPARE];
static int	 buf_nspare;

static uint8_t *
buf_get(void)
{
	return buf_nspare > 0 ? buf_spare[--buf_nspare] :
	    malloc(RELAY_BUF_SIZE);
}

static void
buf_put(uint8_t *b)
{
	if (b != NULL && buf_nspare < RELAY_BUF_SPARE)
		buf_spare[buf_nspare++] = b;
	else
		free(b);
}

static const char *
relay_strstate(enum relay_state st)
{
	static const char *const names[] = { "held", "passing", "open",
	    "done" };

	return (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] :
	    "unknown";
}

void
relay_enter_state(struct relay *r, enum relay_state st)
{
	log_debug("conn=%llu relay %s -> %s", (unsigned long long)r->conn,
	    relay_strstate(r->state), relay_strstate(st));
	r->state = st;
	if (st != RELAY_ST_HELD)
		r->peek_deadline = 0;	/* a verdict came */
}

static size_t
dir_pending(const struct relay_dir *d)
{
	return (size_t)(d->pre_len - d->pre_off) + d->piped +
	    (d->buf_len - d->buf_off);
}

/* Does direction d read by splice now? Once it has moved
 * RELAY_SPLICE_AFTER bytes and its buffer is empty (order kept), and from
 * then on. */
static bool
dir_splicing(const struct relay_dir *d)
{
	return !d->no_splice && (d->pipe[0] != -1 ||
	    (d->bytes >= RELAY_SPLICE_AFTER && d->buf_off == d->buf_len));
}

static bool
dir_holds(const struct relay_dir *d)
{
	return d->pipe[0] != -1 || d->buf != NULL;
}

/* Room in the buffered path's buffer, counting what compaction frees. */
static size_t
buf_room(const struct relay_dir *d)
{
	return RELAY_BUF_SIZE - (d->buf_len - d->buf_off);
}

/* Whether direction i has room and reason to read its source. */
static bool
dir_wants_read(const struct relay *r, int i)
{
	const struct relay_dir *d = &r->dir[i];

	if (d->eof || d->shut || (i == RELAY_DOWN && r->hold_server &&
	    !r->verdict_seen))
		return false;
	if (i == RELAY_UP && relay_held(r))
		return relay_peek_held(r) < RELAY_PEEK_MAX;
	/* past the limit: read and drop (OPEN, up_limited) or hold again
	 * (PASSING) once the pipe is empty; never read more into it */
	if (d->limited && d->left == 0)
		return d->piped == 0 && r->state == RELAY_ST_OPEN;
	if (dir_splicing(d))
		return !d->full && (d->pipe[0] == -1 || d->piped < d->pipe_cap);
	return buf_room(d) > 0;
}

static void
dir_close_pipe(struct relay_dir *d)
{
	if (d->pipe[0] != -1) {
		close(d->pipe[0]);
		close(d->pipe[1]);
		gk_limit_fds_give(2);
	}
	d->pipe[0] = d->pipe[1] = -1;
	d->piped = d->pipe_cap = 0;
	d->full = d->grown = 0;
}

/* Give back an empty direction's pipe and buffer. */
static void
dir_release(struct relay_dir *d)
{
	if (d->piped == 0)
		dir_close_pipe(d);
	if (d->buf_off == d->buf_len) {
		buf_put(d->buf);
		d->buf = NULL;
		d->buf_off = d->buf_len = 0;
	}
}

int
relay_pre_append(struct relay_dir *d, const uint8_t *p, size_t n)
{
	size_t	 have = d->pre_len - d->pre_off;
	uint8_t	*np;

	if (n == 0)
		return 0;
	if (n > UINT32_MAX - have) {
		errno = EMSGSIZE;
		return -1;
	}
	if ((np = malloc(have + n)) == NULL)
		return -1;
	if (have > 0)
		memcpy(np, d->pre + d->pre_off, have);
	memcpy(np + have, p, n);
	free(d->pre);
	d->pre = np;
	d->pre_off = 0;
	d->pre_len = have + n;
	return 0;
}

/*
 * A pipe for splicing, of the default size (RELAY_PIPE_MIN or more); it
 * grows to RELAY_PIPE_SIZE the first time a read fills it. On failure
 * (EMFILE, ENFILE, a small pipe because the user's pipe quota is spent)
 * this direction uses the buffered path from now on.
 */
static void
pipe_open(struct relay *r, struct relay_dir *d)
{
	int	 sz = -1;

	/* the daemon's descriptor budget first: without room, buffered */
	if (!gk_limit_fds_take(2)) {
		d->pipe[0] = d->pipe[1] = -1;
		errno = EMFILE;
	} else if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) == -1) {
		d->pipe[0] = d->pipe[1] = -1;
		gk_limit_fds_give(2);
	}
	else if ((sz = fcntl(d->pipe[1], F_GETPIPE_SZ)) >= RELAY_PIPE_MIN) {
		d->pipe_cap = (uint32_t)sz;
		return;
	}
	log_debug("conn=%llu relay pipe: %s, buffered",
	    (unsigned long long)r->conn, sz == -1 ? strerror(errno) :
	    "too small");
	dir_close_pipe(d);
	d->no_splice = 1;
}

/* ---- moving bytes ---------------------------------------------------- */

/*
 * Steps return 1 when something changed (bytes, EOF, a mode), 0 when they
 * would block, -1 on an error with r->why set.
 */
int
relay_io_error(struct relay *r, int i, short ev, const char *what)
{
	if (errno == EAGAIN || errno == EINTR) {
		r->ready[i] &= ~ev;
		return 0;
	}
	log_debug("conn=%llu relay %s: %s", (unsigned long long)r->conn, what,
	    strerror(errno));
	r->why = i == RELAY_CLIENT ? "client_error" : "server_error";
	return -1;
}

static int
fill_buf(struct relay *r, int i)
{
	struct relay_dir	*d = &r->dir[i];
	size_t			 room;
	ssize_t			 n;
	int			 from = d->piped > 0 ? d->pipe[0] : r->fd[i];

	if (d->buf == NULL && (d->buf = buf_get()) == NULL) {
		r->why = "nomem";
		return -1;
	}
	if (d->buf_off == d->buf_len)
		d->buf_off = d->buf_len = 0;
	else if (d->buf_len == RELAY_BUF_SIZE) {
		memmove(d->buf, d->buf + d->buf_off, d->buf_len - d->buf_off);
		d->buf_len -= d->buf_off;
		d->buf_off = 0;
	}
	room = RELAY_BUF_SIZE - d->buf_len;
	if (d->piped > 0 && room > d->piped)
		room = d->piped;
	else if (d->piped == 0 && d->limited && room > d->left)
		room = (size_t)d->left;
	if ((n = read(from, d->buf + d->buf_len, room)) == -1)
		return relay_io_error(r, i, EV_READ, "read");
	if (i == RELAY_DOWN && from == r->fd[i] && n > 0)
		relay_watch_record(r, d->buf + d->buf_len, (size_t)n);
	d->buf_len += n;
	if (from != r->fd[i])
		d->piped -= n;		/* left in the pipe by splice */
	else if (n == 0)
		d->eof = 1;
	else if (d->limited)
		d->left -= (uint64_t)n;
	else if ((size_t)n < room)
		r->ready[i] &= ~EV_READ;	/* drained the socket */
	return 1;
}

static int
fill_splice(struct relay *r, int i)
{
	struct relay_dir	*d = &r->dir[i];
	ssize_t			 n;
	int			 sz;

	if (d->pipe[0] == -1) {
		/*
		 * No pipe yet: look before making one. Most short tunnels
		 * read only an EOF in one direction, and a pipe for that
		 * costs pipe2, fcntl and two closes for nothing.
		 */
		uint8_t	 c;

		if ((n = recv(r->fd[i], &c, 1, MSG_PEEK | MSG_DONTWAIT)) == 0) {
			d->eof = 1;
			return 1;
		}
		if (n == -1)
			return relay_io_error(r, i, EV_READ, "recv");
		pipe_open(r, d);
		if (d->no_splice)
			return 1;
	}
	sz = (int)(d->pipe_cap - d->piped);
	if (d->limited && (uint64_t)sz > d->left)
		sz = (int)d->left;
	n = splice(r->fd[i], NULL, d->pipe[1], NULL, (size_t)sz,
	    RELAY_SPLICE_F);
	if (n > 0) {
		d->piped += n;
		if (d->limited)
			d->left -= (uint64_t)n;
		if (!d->grown && d->piped >= d->pipe_cap / 2) {
			d->grown = 1;	/* bulk: fewer, larger splices */
			sz = fcntl(d->pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
			if (sz > 0)
				d->pipe_cap = (uint32_t)sz;
		}
	} else if (n == 0)
		d->eof = 1;
	else if (errno == EAGAIN && d->piped > 0)
		d->full = 1;	/* pipe slots or socket: wait for a drain */
	else if (errno == EINVAL) {
		log_debug("conn=%llu relay splice unsupported, buffered",
		    (unsigned long long)r->conn);
		if (d->piped == 0)
			dir_close_pipe(d);
		d->no_splice = 1;	/* fill_buf empties the pipe first */
	} else
		return relay_io_error(r, i, EV_READ, "splice");
	return 1;
}

/* ---- the driver ------------------------------------------------------ */

/* Past the limit: read and drop, to see the client's EOF. */
static int
discard_read(struct relay *r, int i)
{
	uint8_t	 sink[4096];
	ssize_t	 n;

	if ((n = read(r->fd[i], sink, sizeof(sink))) == -1)
		return relay_io_error(r, i, EV_READ, "read");
	if (n == 0)
		r->dir[i].eof = 1;
	else if ((size_t)n < sizeof(sink))
		r->ready[i] &= ~EV_READ;
	return 1;
}

/* Advance direction i once: read, show the peek, write, finish. */
static int
dir_step(struct relay *r, int i)
{
	struct relay_dir	*d = &r->dir[i];
	int			 rv = 0, st;
	bool			 was_eof = d->eof;

	if (d->shut)
		return 0;
	if (d->no_splice && d->piped > 0) {
		if (buf_room(d) > 0)
			rv = fill_buf(r, i);	/* empty what splice left */
	} else if ((r->ready[i] & EV_READ) && dir_wants_read(r, i)) {
		if (i == RELAY_UP && relay_held(r))
			rv = relay_peek_read(r);
		else if (d->limited && d->left == 0 && d->piped == 0)
			rv = discard_read(r, i);
		else if (!dir_splicing(d))
			rv = fill_buf(r, i);
		else
			rv = fill_splice(r, i);
	}
	if (rv == -1)
		return -1;
	if (i == RELAY_DOWN && d->eof && !was_eof)
		r->sv_new = true;	/* a watch is told the server ended */
	if (relay_held(r) && (i == RELAY_UP ? r->peek_new : r->sv_new)) {
		if ((st = relay_peek_decide(r)) == -1)
			return -1;
		rv |= st;
	}
	if ((r->ready[!i] & EV_WRITE) && dir_pending(d) > 0) {
		if ((st = relay_dir_drain(r, i)) == -1)
			return -1;
		rv |= st;
	}
	if (i == RELAY_UP)
		rv |= relay_pass_step(r);
	/* the client's end waits for the peek (it sees the end); the
	 * server's goes on to the client at once, held or not */
	if (d->eof && dir_pending(d) == 0 &&
	    (i == RELAY_DOWN || !relay_held(r))) {
		/* with the other way shut too, both sockets are closed at
		 * the end of this drive: the close sends the FIN (nothing
		 * is left unread on that socket, it gave its EOF) */
		if (!r->dir[!i].shut && shutdown(r->fd[!i], SHUT_WR) == -1)
			log_debug("conn=%llu relay shutdown: %s",
			    (unsigned long long)r->conn, strerror(errno));
		d->shut = 1;
		dir_release(d);
		rv = 1;
	}
	return rv;
}

static void
relay_schedule(struct relay *r, uint64_t now)
{
	struct timeval	 tv;
	uint64_t	 ms = UINT64_MAX;

	if (r->idle_ms > 0)
		ms = r->last_act + r->idle_ms > now ?
		    r->last_act + r->idle_ms - now : 0;
	if (r->peek_deadline > 0 && (r->peek_deadline <= now ||
	    r->peek_deadline - now < ms))
		ms = r->peek_deadline > now ? r->peek_deadline - now : 0;
	r->releasing = dir_holds(&r->dir[0]) || dir_holds(&r->dir[1]);
	if (r->releasing && ms > RELAY_RELEASE_MS)
		ms = RELAY_RELEASE_MS;
	if (ms == UINT64_MAX) {
		evtimer_del(r->tick);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(r->tick, &tv);
}

/* Register the interest both directions need; arm the tick if needed. */
static void
relay_update(struct relay *r)
{
	short	 want[2] = { 0, 0 };
	int	 i;

	for (i = 0; i < 2; i++) {
		if (dir_wants_read(r, i))
			want[i] |= EV_READ;
		if (!r->dir[i].shut && dir_pending(&r->dir[i]) > 0)
			want[!i] |= EV_WRITE;
	}
	for (i = 0; i < 2; i++) {
		if ((want[i] ^ r->want[i]) & EV_READ) {
			if (want[i] & EV_READ)
				event_add(r->rd[i], NULL);
			else
				event_del(r->rd[i]);
		}
		if ((want[i] ^ r->want[i]) & EV_WRITE) {
			if (want[i] & EV_WRITE)
				event_add(r->wr[i], NULL);
			else
				event_del(r->wr[i]);
		}
		r->want[i] = want[i];
	}
	if (!r->releasing && (dir_holds(&r->dir[0]) || dir_holds(&r->dir[1])))
		relay_schedule(r, gk_clock_ms());
}

static void
relay_check(const struct relay *r)
{
	const struct relay_dir	*d;
	int			 i;

	for (i = 0; i < 2; i++) {
		d = &r->dir[i];
		assert(d->pre_off <= d->pre_len);
		assert(d->buf_off <= d->buf_len);
		assert(d->buf_len <= RELAY_BUF_SIZE);
		assert(d->pipe[0] != -1 || d->piped == 0);
		assert(d->piped <= d->pipe_cap);
		assert(!d->shut || dir_pending(d) == 0);
	}
	assert(r->peek_off <= r->peek_len);
	assert(r->peek_len <= RELAY_PEEK_MAX);
	assert(relay_held(r) || r->peek == NULL);
	assert(relay_held(r) || !r->watching);
	assert(r->state != RELAY_ST_PASSING || r->dir[RELAY_UP].limited);
}

static void
relay_drive(struct relay *r)
{
	int	 i, round, progress, st;

	for (round = 0; round < RELAY_ROUNDS; round++) {
		progress = 0;
		for (i = 0; i < 2; i++) {
			if ((st = dir_step(r, i)) == -1) {
				relay_end(r, r->why);
				return;
			}
			progress |= st;
		}
		if (!progress)
			break;
	}
	if (r->active)
		r->last_act = gk_clock_ms();
	r->active = false;
	if (r->dir[RELAY_DOWN].bytes > r->down_pre)
		r->peek_deadline = 0;	/* the server spoke first */
	if (r->dir[RELAY_UP].shut && r->dir[RELAY_DOWN].shut) {
		relay_end(r, "closed");
		return;
	}
	relay_update(r);
	relay_check(r);
}

static void
relay_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct relay	*r = arg;
	int		 i = fd == r->fd[RELAY_SERVER];

	r->ready[i] |= what & (EV_READ | EV_WRITE);
	relay_drive(r);
}

/* Idle timeout, and giving back the pipes of quiet, empty directions. */
static void
relay_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct relay	*r = arg;
	uint64_t	 now = gk_clock_ms();
	int		 i;

	(void)fd;
	(void)what;
	if (r->idle_ms > 0 && now - r->last_act >= r->idle_ms) {
		relay_end(r, "idle");
		return;
	}
	if (r->peek_deadline > 0 && now >= r->peek_deadline) {
		relay_end(r, "peek_timeout");
		return;
	}
	for (i = 0; i < 2; i++) {
		if (!r->dir[i].moved)
			dir_release(&r->dir[i]);
		r->dir[i].moved = 0;
	}
	relay_schedule(r, now);
}

static void
relay_free_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	free(arg);
}

void
relay_unref(struct relay *r)
{
	assert(r->refs > 0);
	if (--r->refs > 0)
		return;
	/* Free on the next loop turn: frames up the stack may still look. */
	if (event_base_once(r->base, -1, EV_TIMEOUT, relay_free_cb, r,
	    NULL) == -1)
		free(r);
}

/* Everything but the struct: events, fds, pipes, buffers. */
void
relay_clear(struct relay *r)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		if (r->rd[i] != NULL)
			event_free(r->rd[i]);
		if (r->wr[i] != NULL)
			event_free(r->wr[i]);
		r->rd[i] = r->wr[i] = NULL;
		if (r->fd[i] != -1)
			close(r->fd[i]);
		r->fd[i] = -1;
		dir_close_pipe(&r->dir[i]);
		buf_put(r->dir[i].buf);
		free(r->dir[i].pre);
		r->dir[i].buf = r->dir[i].pre = NULL;
	}
	if (r->tick != NULL)
		event_free(r->tick);
	r->tick = NULL;
	free(r->peek);
	r->peek = NULL;
}

/* The one teardown. reason NULL: relay_free(), no callback. */
void
relay_end(struct relay *r, const char *reason)
{
	uint64_t	 up = r->dir[RELAY_UP].bytes;
	uint64_t	 down = r->dir[RELAY_DOWN].bytes;

	if (r->state == RELAY_ST_DONE)
		return;
	log_debug("conn=%llu relay client=%d server=%d reason=%s up=%llu "
	    "down=%llu", (unsigned long long)r->conn, r->fd[RELAY_CLIENT],
	    r->fd[RELAY_SERVER],
	    reason != NULL ? reason : "freed", (unsigned long long)up,
	    (unsigned long long)down);
	relay_enter_state(r, RELAY_ST_DONE);
	if (r->taken && reason != NULL) {
		relay_hand_over(r);
		return;
	}
	relay_clear(r);
	if (reason != NULL && r->done_cb != NULL)
		r->done_cb(r->arg, reason, up, down);
	relay_unref(r);
}

void
relay_free(struct relay *r)
{
	if (r != NULL)
		relay_end(r, NULL);
}

static int
relay_init(struct relay *r, const struct relay_opts *o)
{
	int	 i;
	size_t	 n;

	for (i = 0; i < 2; i++) {
		r->dir[i].pipe[0] = r->dir[i].pipe[1] = -1;
		r->dir[i].no_splice = o->no_splice;
		r->ready[i] = EV_WRITE;	/* readable: wait to be told */
		r->rd[i] = event_new(r->base, r->fd[i], EV_READ | EV_PERSIST,
		    relay_io_cb, r);
		r->wr[i] = event_new(r->base, r->fd[i], EV_WRITE | EV_PERSIST,
		    relay_io_cb, r);
		if (r->rd[i] == NULL || r->wr[i] == NULL)
			return -1;
	}
	if ((r->tick = evtimer_new(r->base, relay_tick_cb, r)) == NULL)
		return -1;
	if (relay_pre_append(&r->dir[RELAY_UP], o->to_server,
	    o->to_server_len) == -1 || relay_pre_append(&r->dir[RELAY_DOWN],
	    o->to_client, o->to_client_len) == -1)
		return -1;
	if (o->up_limited) {
		if (o->peek != NULL) {
			errno = EINVAL;
			return -1;
		}
		n = o->from_client_len < o->up_limit ? o->from_client_len :
		    (size_t)o->up_limit;
		r->dir[RELAY_UP].limited = 1;
		r->dir[RELAY_UP].left = o->up_limit - n;
		return relay_pre_append(&r->dir[RELAY_UP], o->from_client, n);
	}
	if (o->peek == NULL)
		return relay_pre_append(&r->dir[RELAY_UP], o->from_client,
		    o->from_client_len);
	return relay_peek_init(r, o);
}

struct relay *
relay_new(struct event_base *base, int client_fd, int server_fd,
    const struct relay_opts *o, relay_done_cb done, void *arg)
{
	static const struct relay_opts	 defaults;
	struct relay			*r;
	int				 saved, i;

	if (o == NULL)
		o = &defaults;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->base = base;
	r->conn = o->conn;
	r->fd[RELAY_CLIENT] = client_fd;
	r->fd[RELAY_SERVER] = server_fd;
	r->refs = 1;
	r->state = o->peek != NULL ? RELAY_ST_HELD : RELAY_ST_OPEN;
	r->peek_cb = o->peek;
	r->watch_cb = o->peek != NULL ? o->watch : NULL;
	r->take_cb = o->peek != NULL ? o->take : NULL;
	r->hold_server = o->peek != NULL && o->hold_server;
	r->deny_reply = o->peek != NULL ? o->deny_reply : NULL;
	r->quota_cb = o->quota;
	r->done_cb = done;
	r->arg = arg;
	r->idle_ms = o->idle_sec > UINT32_MAX / 1000 ? UINT32_MAX :
	    o->idle_sec * 1000;
	r->last_act = gk_clock_ms();
	if (o->peek != NULL && o->peek_ms > 0)
		r->peek_deadline = r->last_act + o->peek_ms;
	r->down_pre = o->to_client_len;
	if (relay_init(r, o) == -1) {
		saved = errno;
		r->fd[0] = r->fd[1] = -1;	/* still the caller's */
		relay_clear(r);
		free(r);
		errno = saved;
		return NULL;
	}
	if (r->idle_ms > 0 || r->peek_deadline > 0)
		relay_schedule(r, r->last_act);
	/* Read interest now, while the caller's registration of its socket
	 * (a handshake's, a dial's) still stands: the kernel's set then
	 * need not change when the caller lets go of it. */
	for (i = 0; i < 2; i++)
		if (dir_wants_read(r, i) && event_add(r->rd[i], NULL) == 0)
			r->want[i] |= EV_READ;
	/* First drive on the next loop turn: no callback inside this call. */
	event_active(r->wr[RELAY_CLIENT], EV_WRITE, 0);
	log_debug("conn=%llu relay client=%d server=%d %s",
	    (unsigned long long)r->conn, client_fd, server_fd,
	    relay_strstate(r->state));
	return r;
}
