/*
 * broker_pump: moving a brokered connection's bytes (broker.h). Each
 * socket event runs the pump: rounds of every step until none moves a
 * byte (bounded; more next turn), then the end if it is due, then each
 * socket's interest from its BIOs.
 */
#include <sys/socket.h>

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
#define IO_CHUNK	(16 * 1024)

static uint8_t scratch[BK_BIO_HIGH];

static size_t
pending(BIO *b)
{
	return BIO_ctrl_pending(b);
}

static int
fail(struct broker *b, const char *why)
{
	if (b->why == NULL)
		b->why = why;
	ERR_clear_error();
	return -1;
}

/* The socket's bytes into the read BIO: 1 moved, 0 none, -1 ended. */
static int
sock_in(struct broker *b, struct bk_side *sd)
{
	ssize_t n;

	if (sd->eof || pending(sd->rbio) >= BK_BIO_HIGH)
		return 0;
	n = read(sd->fd, scratch, IO_CHUNK);
	if (n > 0) {
		BIO_write(sd->rbio, scratch, (int)n);
		b->last_act = gk_clock_ms();
		return 1;
	}
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return 0;
	sd->eof = true;		/* EOF, or a reset: the TLS sees its end */
	BIO_set_mem_eof_return(sd->rbio, 0);
	return 1;
}

/* The write BIO out to the socket. */
static int
sock_out(struct broker *b, struct bk_side *sd, int i)
{
	char *p;
	long len;
	ssize_t n;
	int moved = 0;

	while ((len = BIO_get_mem_data(sd->wbio, &p)) > 0) {
		if (len > (long)sizeof(scratch))
			len = (long)sizeof(scratch);
		n = send(sd->fd, p, (size_t)len, MSG_NOSIGNAL);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return moved;
		if (n <= 0)
			return fail(b, i == BK_CLIENT ? "client_error" :
			    "server_error");
		BIO_read(sd->wbio, scratch, (int)n);	/* drop them */
		b->last_act = gk_clock_ms();
		moved = 1;
	}
	return moved;
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
	int r, e;

	if (sd->hs_done || sd->closed)
		return 0;
	if ((r = SSL_do_handshake(sd->ssl)) == 1) {
		sd->hs_done = true;
		return 1;
	}
	e = SSL_get_error(sd->ssl, r);
	if (e == SSL_ERROR_WANT_READ && !sd->eof)
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

/* An answer to the client, then its TLS end: the broker ends once it
 * is out (or after BK_FINISH_MS). */
static void
reply(struct broker *b, const char *status, const char *text,
    const char *why)
{
	char buf[768];
	int n;

	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %s\r\nContent-Type: "
	    "text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n"
	    "%s\n", status, strlen(text) + 1, text);
	if (n > 0 && (size_t)n < sizeof(buf))
		SSL_write(b->s[BK_CLIENT].ssl, buf, n);
	SSL_shutdown(b->s[BK_CLIENT].ssl);
	b->s[BK_CLIENT].shut = true;
	b->refusing = b->finishing = true;
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

/* SSL_read into buf: >0 bytes, 0 nothing now, -1 ended (closed set). */
static int
tls_read(struct broker *b, int i, uint8_t *buf, size_t room)
{
	struct bk_side *sd = &b->s[i];
	int n, e;

	n = SSL_read(sd->ssl, buf, room > INT32_MAX ? INT32_MAX : (int)room);
	if (n > 0)
		return n;
	e = SSL_get_error(sd->ssl, n);
	if (e == SSL_ERROR_WANT_READ && !sd->eof)
		return 0;
	if (e != SSL_ERROR_ZERO_RETURN && e != SSL_ERROR_WANT_READ)
		log_debug("conn=%llu broker %s TLS read ends: %s",
		    (unsigned long long)b->conn, i == BK_CLIENT ? "client" :
		    "server", ERR_peek_last_error() != 0 ?
		    ERR_reason_error_string(ERR_peek_last_error()) : "eof");
	ERR_clear_error();
	sd->closed = true;
	return -1;
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

static int
up_out(struct broker *b)
{
	struct bk_side *s = &b->s[BK_SERVER];
	int n, moved = 0;

	while (s->hs_done && !s->closed && b->up_w < b->up_ready &&
	    pending(s->wbio) < BK_BIO_HIGH) {
		n = SSL_write(s->ssl, b->up + b->up_w, (int)(b->up_ready -
		    b->up_w));
		if (n <= 0)
			return fail(b, "server_error");
		b->up_w += (size_t)n;
		b->up_bytes += (uint64_t)n;
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
	while (s->hs_done && !s->closed && b->down_len < BK_DOWN_CAP) {
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

	while (c->hs_done && !b->refusing && b->down_w < b->down_len &&
	    pending(c->wbio) < BK_BIO_HIGH) {
		n = SSL_write(c->ssl, b->down + b->down_w, (int)(b->down_len -
		    b->down_w));
		if (n <= 0)
			return fail(b, "client_error");
		b->down_w += (size_t)n;
		b->down_bytes += (uint64_t)n;
		moved = 1;
	}
	return moved;
}

/* Either end closed and what it sent is on: close_notify the other. */
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
	if (b->finishing)
		return 0;
	if ((s->closed && b->down_w == b->down_len && c->hs_done) ||
	    (c->closed && (b->up_w == b->up_ready || s->closed))) {
		if (!c->shut && c->hs_done)
			SSL_shutdown(c->ssl);
		if (!s->shut && s->hs_done && !s->closed)
			SSL_shutdown(s->ssl);
		c->shut = s->shut = true;
		b->finishing = true;
		b->why = "closed";
		b->finish_by = gk_clock_ms() + BK_FINISH_MS;
		return 1;
	}
	return 0;
}

/* Every step once: 1 something moved, 0 nothing, -1 the end is due. */
static int
pump_round(struct broker *b)
{
	int m = 0, i;

	for (i = 0; i < 2; i++)
		if ((m |= sock_in(b, &b->s[i])) < 0)
			return -1;
	if ((m |= handshake(b, BK_CLIENT)) < 0 ||
	    (m |= handshake(b, BK_SERVER)) < 0)
		return -1;
	m |= up_in(b);
	if ((m |= up_out(b)) < 0)
		return -1;
	m |= down_in(b);
	if ((m |= down_out(b)) < 0)
		return -1;
	m |= closing(b);
	for (i = 0; i < 2; i++)
		if ((m |= sock_out(b, &b->s[i], i)) < 0)
			return -1;
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

void
bk_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct broker *b = arg;
	struct bk_side *sd;
	int round, st = 0, i;

	(void)fd;
	(void)what;
	for (round = 0; round < PUMP_ROUNDS; round++)
		if ((st = pump_round(b)) <= 0)
			break;
	if (st < 0 || (b->finishing && pending(b->s[BK_CLIENT].wbio) == 0 &&
	    pending(b->s[BK_SERVER].wbio) == 0)) {
		broker_end(b, b->why != NULL ? b->why : "closed");
		return;
	}
	for (i = 0; i < 2; i++) {
		sd = &b->s[i];
		want(sd, EV_READ, !sd->eof && pending(sd->rbio) < BK_BIO_HIGH);
		want(sd, EV_WRITE, pending(sd->wbio) > 0);
	}
	if (st > 0)		/* rounds ran out: go on next turn */
		event_active(b->s[BK_CLIENT].wr, EV_WRITE, 0);
}
