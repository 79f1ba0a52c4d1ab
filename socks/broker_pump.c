/*
 * broker_pump: moving a brokered connection's bytes (broker.h). Each
 * socket event runs the pump: rounds of every step until none moves a
 * byte (bounded; more next turn), then the end if it is due, then each
 * socket's interest: what its TLS calls last waited for (a read that
 * would block, a write the socket did not take). A direction whose
 * buffer is full is not read: the sender's socket fills, and waits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "socks/broker.h"
#include "socks/broker_int.h"

#define PUMP_ROUNDS	64

static int
fail(struct broker *b, const char *why)
{
	if (b->why == NULL)
		b->why = why;
	ERR_clear_error();
	return -1;
}

/* A TLS call on sd returned r <= 0: 0 it waits (sd->need says for
 * what), -1 its stream ended or failed. */
static int
tls_wait(struct bk_side *sd, int r)
{
	switch (SSL_get_error(sd->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		sd->need |= EV_READ;
		return 0;
	case SSL_ERROR_WANT_WRITE:
		sd->need |= EV_WRITE;
		return 0;
	default:
		return -1;
	}
}

/* The upstream's handshake failed: a 502 to the client, once it can. */
static void
upstream_failed(struct broker *b, struct bk_side *sd)
{
	long v = SSL_get_verify_result(sd->ssl);

	b->upstream_failed = true;
	if (v != X509_V_OK)
		snprintf(b->upstream_why, sizeof(b->upstream_why), "its "
		    "certificate did not verify: %s",
		    X509_verify_cert_error_string(v));
	else
		snprintf(b->upstream_why, sizeof(b->upstream_why), "TLS: %s",
		    ERR_peek_last_error() != 0 ? ERR_reason_error_string(
		    ERR_peek_last_error()) : "the server closed");
	ERR_clear_error();
	sd->closed = true;
	log_info("conn=%llu broker upstream TLS failed: %s",
	    (unsigned long long)b->conn, b->upstream_why);
}

static int
handshake(struct broker *b, int i)
{
	struct bk_side *sd = &b->s[i];
	int r;

	if (sd->hs_done || sd->closed)
		return 0;
	if ((r = SSL_do_handshake(sd->ssl)) == 1) {
		sd->hs_done = true;
		b->last_act = gk_clock_ms();
		return 1;
	}
	if (tls_wait(sd, r) == 0)
		return 0;
	if (i == BK_SERVER) {
		upstream_failed(b, sd);
		return 1;
	}
	log_info("conn=%llu broker client TLS failed: %s",
	    (unsigned long long)b->conn, ERR_peek_last_error() != 0 ?
	    ERR_reason_error_string(ERR_peek_last_error()) : "closed");
	return fail(b, "client_tls");
}

/* An answer to the client instead of the server's (what it sent is
 * dropped), then the client's TLS end: the broker ends once it is out
 * (or after BK_FINISH_MS). */
static void
reply(struct broker *b, const char *status, const char *text,
    const char *why)
{
	b->down_w = 0;
	b->down_len = http_reply_text((char *)b->down, BK_DOWN_CAP, status,
	    text);
	b->refusing = true;
	b->why = why;
	b->finish_by = gk_clock_ms() + BK_FINISH_MS;
}

/* A head at p (blank bytes first): shown, rewritten into place (what
 * follows it moved by what it grew or shrank), then ready to go. */
static int
up_head(struct broker *b, uint8_t *p, const struct http_follow_out *fo)
{
	static uint8_t out[HTTP_HEAD_MAX + HTTP_BLANK_MAX + BK_UP_SLACK];
	size_t len = (size_t)fo->pass - fo->blank, end = (size_t)(p - b->up) +
	    (size_t)fo->pass, room = BK_UP_CAP + BK_UP_SLACK - b->up_len;
	size_t nlen = 0, cap = len + room < sizeof(out) ? len + room :
	    sizeof(out);
	char why[400];

	why[0] = '\0';
	if (b->head_cb(b->arg, p + fo->blank, len, out, cap, &nlen, fo, why,
	    sizeof(why)) == BROKER_REFUSE || nlen > cap) {
		reply(b, "403 Forbidden", why, "denied");
		return -1;
	}
	if (nlen != len) {	/* the bytes after the head follow it */
		memmove(p + fo->blank + nlen, b->up + end, b->up_len - end);
		b->up_len = b->up_len + nlen - len;
	}
	memcpy(p + fo->blank, out, nlen);
	explicit_bzero(out, nlen);	/* it held a secret */
	b->up_ready += fo->blank + nlen;
	return 1;
}

/* One step of the client's plaintext: 1 on, 0 wait, -1 refused. */
static int
up_step(struct broker *b, uint8_t *p, size_t avail)
{
	struct http_follow_out fo;
	char why[400];

	switch (http_follow(&b->f, p, avail, &fo)) {
	case HTTP_FOLLOW_NEED_MORE:
		if (avail < HTTP_HEAD_MAX + HTTP_BLANK_MAX)
			return 0;
		reply(b, "431 Request Header Fields Too Large", "gatekeeper: "
		    "a request head over 16 KiB", "denied");
		return -1;
	case HTTP_FOLLOW_HEAD:
		return up_head(b, p, &fo);
	case HTTP_FOLLOW_PASS:
		if (fo.pass > avail) {
			b->skip = fo.pass - avail;
			fo.pass = avail;
		}
		b->up_ready += (size_t)fo.pass;
		return fo.pass > 0 || b->skip > 0 ? 1 : 0;
	case HTTP_FOLLOW_OPAQUE:
		b->opaque = true;
		return 1;
	case HTTP_FOLLOW_INVALID:
	default:
		snprintf(why, sizeof(why), "gatekeeper: a request it cannot "
		    "follow: %s", fo.why != NULL ? fo.why : "malformed");
		reply(b, "400 Bad Request", why, "denied");
		return -1;
	}
}

/* What of the client's plaintext can go: skipped bodies, checked heads. */
static void
up_process(struct broker *b)
{
	size_t avail, k;
	int st = 1, rounds;

	/* bounded: each step takes a byte or sets opaque or waits */
	for (rounds = 0; st == 1 && rounds < 4096 && !b->refusing; rounds++) {
		avail = b->up_len - b->up_ready;
		if (avail == 0)
			return;
		if (b->opaque) {
			b->up_ready = b->up_len;
			return;
		}
		if (b->skip > 0) {
			k = b->skip < avail ? (size_t)b->skip : avail;
			b->up_ready += k;
			b->skip -= k;
			continue;
		}
		st = up_step(b, b->up + b->up_ready, avail);
	}
}

/* SSL_read into buf: >0 bytes, 0 it waits, -1 its stream ended (closed
 * set). */
static int
tls_read(struct broker *b, int i, uint8_t *buf, size_t room)
{
	struct bk_side *sd = &b->s[i];
	int n;

	n = SSL_read(sd->ssl, buf, room > INT32_MAX ? INT32_MAX : (int)room);
	if (n > 0) {
		b->last_act = gk_clock_ms();
		return n;
	}
	if (tls_wait(sd, n) == 0)
		return 0;
	if (SSL_get_error(sd->ssl, n) != SSL_ERROR_ZERO_RETURN)
		log_debug("conn=%llu broker %s TLS read ends: %s",
		    (unsigned long long)b->conn, i == BK_CLIENT ? "client" :
		    "server", ERR_peek_last_error() != 0 ?
		    ERR_reason_error_string(ERR_peek_last_error()) : "eof");
	ERR_clear_error();
	sd->closed = true;
	return -1;
}

/* SSL_write of buf: >0 bytes taken, 0 it waits, -1 failed. */
static int
tls_write(struct broker *b, int i, const uint8_t *buf, size_t len)
{
	struct bk_side *sd = &b->s[i];
	int n;

	n = SSL_write(sd->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
	if (n > 0) {
		b->last_act = gk_clock_ms();
		return n;
	}
	if (!sd->wr_failed && tls_wait(sd, n) == 0)
		return 0;
	return fail(b, i == BK_CLIENT ? "client_error" : "server_error");
}

static int
up_in(struct broker *b)
{
	struct bk_side *c = &b->s[BK_CLIENT];
	int n, moved = 0;

	while (c->hs_done && !c->closed && !b->refusing &&
	    b->up_len < BK_UP_CAP) {
		if ((n = tls_read(b, BK_CLIENT, b->up + b->up_len,
		    BK_UP_CAP - b->up_len)) <= 0)
			return moved | (n < 0);
		b->up_len += (size_t)n;
		up_process(b);
		moved = 1;
	}
	return moved;
}

/* What may go to the server now, at most len: the quota's grant (asked
 * again when spent; 0: refused, the end is due). */
static size_t
up_cap(struct broker *b, size_t len)
{
	if (b->quota_cb == NULL)
		return len;
	if (b->quota_left == 0 && (b->quota_left = b->quota_cb(b->arg)) == 0)
		return 0;
	return b->quota_left < len ? (size_t)b->quota_left : len;
}

static int
up_out(struct broker *b)
{
	struct bk_side *s = &b->s[BK_SERVER];
	size_t len;
	int n, moved = 0;

	while (s->hs_done && !s->closed && !b->refusing &&
	    b->up_w < b->up_ready) {
		if ((len = up_cap(b, b->up_ready - b->up_w)) == 0)
			return fail(b, "upload_budget");
		if ((n = tls_write(b, BK_SERVER, b->up + b->up_w, len)) < 0)
			return -1;
		if (n == 0)
			break;
		b->up_w += (size_t)n;
		b->up_bytes += (uint64_t)n;
		if (b->quota_cb != NULL)
			b->quota_left -= (uint64_t)n;
		moved = 1;
	}
	if (b->up_w == b->up_ready && b->up_w > 0) {	/* room again */
		memmove(b->up, b->up + b->up_w, b->up_len - b->up_w);
		b->up_len -= b->up_w;
		b->up_ready = b->up_w = 0;
	}
	return moved;
}

static int
down_in(struct broker *b)
{
	struct bk_side *s = &b->s[BK_SERVER];
	int n, moved = 0;

	if (b->down_w == b->down_len)
		b->down_w = b->down_len = 0;
	while (s->hs_done && !s->closed && !b->refusing &&
	    b->down_len < BK_DOWN_CAP) {
		if ((n = tls_read(b, BK_SERVER, b->down + b->down_len,
		    BK_DOWN_CAP - b->down_len)) <= 0)
			return moved | (n < 0);
		b->down_len += (size_t)n;
		moved = 1;
	}
	return moved;
}

static int
down_out(struct broker *b)
{
	struct bk_side *c = &b->s[BK_CLIENT];
	int n, moved = 0;

	while (c->hs_done && !c->closed && b->down_w < b->down_len) {
		if ((n = tls_write(b, BK_CLIENT, b->down + b->down_w,
		    b->down_len - b->down_w)) < 0)
			return -1;
		if (n == 0)
			break;
		b->down_w += (size_t)n;
		b->down_bytes += (uint64_t)n;
		moved = 1;
	}
	return moved;
}

/* Our close_notify to sd, once (again while its socket is full). */
static void
shut(struct bk_side *sd)
{
	int r;

	if (sd->shut || !sd->hs_done || sd->closed || sd->wr_failed)
		return;
	if ((r = SSL_shutdown(sd->ssl)) < 0 && tls_wait(sd, r) == 0 &&
	    (sd->need & EV_WRITE))
		return;		/* the socket is full: again later */
	ERR_clear_error();
	sd->shut = true;
}

/* Either end closed and what it sent is on, or a reply is out: the
 * close_notify to the other, then the end once nothing waits to go. */
static int
closing(struct broker *b)
{
	struct bk_side *c = &b->s[BK_CLIENT], *s = &b->s[BK_SERVER];
	char text[300];

	if (b->upstream_failed && c->hs_done && !b->refusing) {
		snprintf(text, sizeof(text), "gatekeeper: the server %s",
		    b->upstream_why);
		reply(b, "502 Bad Gateway", text, "upstream_tls");
		return 1;
	}
	if (!b->finishing && ((b->refusing && b->down_w == b->down_len) ||
	    (s->closed && b->down_w == b->down_len && c->hs_done) ||
	    (c->closed && (b->up_w == b->up_ready || s->closed)))) {
		b->finishing = true;
		if (b->why == NULL)
			b->why = "closed";
		b->finish_by = gk_clock_ms() + BK_FINISH_MS;
	}
	if (b->finishing) {
		shut(c);
		shut(s);
	}
	return 0;
}

/* Every step once: 1 something moved, 0 nothing, -1 the end is due. */
static int
pump_round(struct broker *b)
{
	int m = 0, r, i;

	if (handshake(b, BK_CLIENT) < 0)
		return -1;
	m |= handshake(b, BK_SERVER);
	m |= up_in(b);
	if ((r = up_out(b)) < 0)
		return -1;
	m |= r;
	m |= down_in(b);
	if ((r = down_out(b)) < 0)
		return -1;
	m |= r;
	m |= closing(b);
	for (i = 0; i < 2; i++)		/* this round's records, out */
		if (bk_bio_flush(&b->s[i]) < 0)
			return fail(b, i == BK_CLIENT ? "client_error" :
			    "server_error");
	return m != 0;
}

static void
want(struct bk_side *sd, short ev, bool on)
{
	struct event *e = ev == EV_READ ? sd->rd : sd->wr;

	if (on == ((sd->want & ev) != 0))
		return;
	if (on ? event_add(e, NULL) : event_del(e))
		return;
	sd->want ^= ev;
}

/* Done: an error, or finishing with every close_notify out. */
static bool
ended(const struct broker *b, int st)
{
	const struct bk_side *c = &b->s[BK_CLIENT], *s = &b->s[BK_SERVER];

	if (st < 0)
		return true;
	return b->finishing && (c->shut || !c->hs_done || c->closed ||
	    c->wr_failed) && (s->shut || !s->hs_done || s->closed ||
	    s->wr_failed) && !(c->need & EV_WRITE) && !(s->need & EV_WRITE) &&
	    (c->ob_off == c->ob_len || c->wr_failed) &&
	    (s->ob_off == s->ob_len || s->wr_failed);
}

void
bk_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct broker *b = arg;
	struct bk_side *sd;
	int round, st = 0, i;

	(void)fd;
	(void)what;
	for (i = 0; i < 2; i++) {
		b->s[i].need = 0;
		b->s[i].wr_blocked = false;
	}
	for (round = 0; round < PUMP_ROUNDS; round++)
		if ((st = pump_round(b)) <= 0)
			break;
	if (ended(b, st)) {
		broker_end(b, b->why != NULL ? b->why : "closed");
		return;
	}
	for (i = 0; i < 2; i++) {
		sd = &b->s[i];
		want(sd, EV_READ, !sd->eof && (sd->need & EV_READ));
		want(sd, EV_WRITE, (sd->need & EV_WRITE) != 0 ||
		    sd->ob_off < sd->ob_len);
	}
	if (st > 0)		/* rounds ran out: go on next turn */
		event_active(b->s[BK_CLIENT].wr, EV_WRITE, 0);
}
