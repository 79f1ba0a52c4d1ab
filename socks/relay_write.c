/*
 * relay_write: a direction's bytes out to its destination: its prefix,
 * then its pipe (splice) or its buffer, counted as they go. Client to
 * server, an upload quota (relay_opts.quota) bounds what goes: each
 * write is cut to what is granted, and when that is spent and more
 * waits, the quota is asked again; a refusal ends the relay
 * ("upload_budget"). No byte is copied for it: a splice is only shorter.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/relay_int.h"

static void
dir_count(struct relay *r, int i, size_t n)
{
	r->dir[i].bytes += n;
	r->dir[i].moved = 1;
	r->active = true;
	gk_stats.bytes[i == RELAY_UP ? GK_DIR_UPSTREAM : GK_DIR_DOWNSTREAM] +=
	    n;
	if (i == RELAY_UP && r->quota_cb != NULL)
		r->quota_left -= n;
}

/* send(2) from p[*off, len), at most cap bytes, advancing *off. */
static int
drain_mem(struct relay *r, int i, const uint8_t *p, uint32_t *off,
    uint32_t len, uint64_t cap)
{
	int	 dst = !i;
	size_t	 want = len - *off;
	ssize_t	 n;

	if (want > cap)
		want = (size_t)cap;
	n = send(r->fd[dst], p + *off, want, MSG_NOSIGNAL);
	if (n == -1)
		return relay_io_error(r, dst, EV_WRITE, "send");
	if ((size_t)n < want)
		r->ready[dst] &= ~EV_WRITE;
	*off += n;
	dir_count(r, i, n);
	return 1;
}

static int
drain_splice(struct relay *r, int i, uint64_t cap)
{
	struct relay_dir	*d = &r->dir[i];
	int			 dst = !i;
	size_t			 want = d->piped;
	ssize_t			 n;

	if (want > cap)
		want = (size_t)cap;
	n = splice(d->pipe[0], NULL, r->fd[dst], NULL, want, RELAY_SPLICE_F);
	if (n == -1 && errno == EINVAL) {
		log_debug("conn=%llu relay splice out unsupported, "
		    "buffered", (unsigned long long)r->conn);
		d->no_splice = 1;	/* fill_buf empties the pipe */
		return 1;
	}
	if (n == -1)
		return relay_io_error(r, dst, EV_WRITE, "splice");
	if ((size_t)n < want)
		r->ready[dst] &= ~EV_WRITE;
	d->piped -= n;
	d->full = 0;
	dir_count(r, i, n);
	return 1;
}

/* What direction i may write now: its quota's grant (asked again when
 * spent; 0: refused, the end), or no bound. */
static uint64_t
dir_cap(struct relay *r, int i)
{
	if (i != RELAY_UP || r->quota_cb == NULL)
		return UINT64_MAX;
	if (r->quota_left == 0 && (r->quota_left = r->quota_cb(r->arg)) == 0)
		r->why = "upload_budget";
	return r->quota_left;
}

int
relay_dir_drain(struct relay *r, int i)
{
	struct relay_dir	*d = &r->dir[i];
	uint64_t		 cap;
	int			 rv;

	if ((cap = dir_cap(r, i)) == 0)
		return -1;
	if (d->pre_off < d->pre_len) {
		rv = drain_mem(r, i, d->pre, &d->pre_off, d->pre_len, cap);
		if (d->pre_off == d->pre_len) {
			free(d->pre);
			d->pre = NULL;
			d->pre_off = d->pre_len = 0;
		}
		return rv;
	}
	if (!d->no_splice && d->piped > 0)
		return drain_splice(r, i, cap);
	if (d->buf_off < d->buf_len)
		return drain_mem(r, i, d->buf, &d->buf_off, d->buf_len, cap);
	return 0;
}
