/*
 * broker_bio: the BIO each TLS end of a broker reads and writes its
 * socket through: non-blocking read(2) straight into OpenSSL's buffer
 * (after the bytes the peek held: a ClientHello read before the broker
 * took the connection), and records gathered in a buffer of its own
 * that the pump sends after each round (and a handshake's flush at
 * once), so that a 64 KiB write is one send(2) and whole segments, not
 * four 16 KiB records each its own. EOF and errors end the stream as the
 * kernel says; EAGAIN is a retry.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>

#include "socks/broker_int.h"

static BIO_METHOD *method;

static int
bio_read(BIO *b, char *out, int outl)
{
	struct bk_side *sd = BIO_get_data(b);
	size_t n;
	ssize_t r;

	BIO_clear_retry_flags(b);
	if (outl <= 0)
		return 0;
	if (sd->pre_off < sd->pre_len) {
		n = sd->pre_len - sd->pre_off;
		if (n > (size_t)outl)
			n = (size_t)outl;
		memcpy(out, sd->pre + sd->pre_off, n);
		sd->pre_off += n;
		return (int)n;
	}
	r = read(sd->fd, out, (size_t)outl);
	if (r > 0)
		return (int)r;
	if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR)) {
		BIO_set_retry_read(b);
		return -1;
	}
	sd->eof = true;		/* EOF, or a reset: the TLS sees its end */
	return 0;
}

/*
 * Send what waits in sd's output buffer: 1 all gone, 0 some waits (the
 * socket is full: wr_blocked), -1 failed (wr_failed).
 */
int
bk_bio_flush(struct bk_side *sd)
{
	ssize_t r;

	while (sd->ob_off < sd->ob_len) {
		r = send(sd->fd, sd->obuf + sd->ob_off, sd->ob_len - sd->ob_off,
		    MSG_NOSIGNAL);
		if (r > 0) {
			sd->ob_off += (size_t)r;
			continue;
		}
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR)) {
			sd->wr_blocked = true;
			return 0;
		}
		sd->wr_failed = true;
		return -1;
	}
	sd->ob_off = sd->ob_len = 0;
	return 1;
}

/* Records gather in the output buffer and go out together (one send(2),
 * whole segments, for the four records of 64 KiB); full, it is sent
 * first, and a socket that takes none of it makes the write a retry. */
static int
bio_write(BIO *b, const char *in, int inl)
{
	struct bk_side *sd = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (inl <= 0)
		return 0;
	if (sd->ob_len + (size_t)inl > BK_OBUF && bk_bio_flush(sd) < 0)
		return -1;
	/* compact only when it frees at least what it moves */
	if (sd->ob_len + (size_t)inl > BK_OBUF &&
	    sd->ob_off >= sd->ob_len - sd->ob_off) {
		memmove(sd->obuf, sd->obuf + sd->ob_off, sd->ob_len -
		    sd->ob_off);
		sd->ob_len -= sd->ob_off;
		sd->ob_off = 0;
	}
	if (sd->ob_len + (size_t)inl > BK_OBUF) {
		BIO_set_retry_write(b);
		return -1;
	}
	memcpy(sd->obuf + sd->ob_len, in, (size_t)inl);
	sd->ob_len += (size_t)inl;
	return inl;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:	/* a handshake flight: out now */
		if (bk_bio_flush(BIO_get_data(b)) == 1)
			return 1;
		BIO_set_retry_write(b);
		return 0;
	case BIO_CTRL_WPENDING:
		return (long)(((struct bk_side *)BIO_get_data(b))->ob_len -
		    ((struct bk_side *)BIO_get_data(b))->ob_off);
	default:
		return 0;
	}
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* The BIO over sd's socket (sd->pre: bytes read first). NULL: no
 * memory. */
BIO *
bk_bio_new(struct bk_side *sd)
{
	BIO *b;

	if (method == NULL) {
		if ((method = BIO_meth_new(BIO_get_new_index() |
		    BIO_TYPE_SOURCE_SINK, "gatekeeper broker socket")) == NULL)
			return NULL;
		BIO_meth_set_read(method, bio_read);
		BIO_meth_set_write(method, bio_write);
		BIO_meth_set_ctrl(method, bio_ctrl);
		BIO_meth_set_create(method, bio_create);
	}
	if ((b = BIO_new(method)) != NULL)
		BIO_set_data(b, sd);
	return b;
}
