/*
 * broker_bio: the BIO each TLS end of a broker reads and writes its
 * socket through: non-blocking read(2) and send(2) straight from and into
 * OpenSSL's own buffers (no copy, no memory BIO to keep in step), after
 * the bytes the peek held (a ClientHello that was read before the
 * broker took the connection), which are read first. EOF and errors end
 * the stream as the kernel says; EAGAIN is a retry.
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

static int
bio_write(BIO *b, const char *in, int inl)
{
	struct bk_side *sd = BIO_get_data(b);
	ssize_t r;

	BIO_clear_retry_flags(b);
	if (inl <= 0)
		return 0;
	r = send(sd->fd, in, (size_t)inl, MSG_NOSIGNAL);
	if (r >= 0)
		return (int)r;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		BIO_set_retry_write(b);
		sd->wr_blocked = true;
	} else
		sd->wr_failed = true;
	return -1;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
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
