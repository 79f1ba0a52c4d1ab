/*
 * broker: two TLS ends in memory BIOs and the plaintext between them
 * (broker.h). One pump moves everything it can: socket bytes into the
 * read BIOs, handshakes, the client's plaintext through the request
 * follower (heads to the caller, bodies counted past) to the server's
 * TLS, the server's plaintext to the client's, and the write BIOs out to
 * the sockets; then each socket gets the interest its BIOs need.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "socks/broker.h"
#include "socks/broker_int.h"

/* TLS 1.3 suites, AES-128-GCM first: the cheapest per byte where AES
 * is in the CPU, both of the broker's ends decrypting and encrypting */
#define CIPHERS13	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:" \
			"TLS_CHACHA20_POLY1305_SHA256"

static SSL_CTX *server_ctx;	/* the client-facing end, every cage's */

static const char *
ssl_why(void)
{
	static char buf[160];
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		return "connection closed";
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf;
}

/* ALPN: HTTP/1.1 when offered; otherwise none (the client's default). */
static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char h1[] = "\x08http/1.1";
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, h1, sizeof(h1) - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *
broker_server_ctx(void)
{
	SSL_CTX *ctx;

	if (server_ctx != NULL)
		return server_ctx;
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* no resumption: a ticket must not carry one cage's session to
	 * another's connection */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	(void)SSL_CTX_set_ciphersuites(ctx, CIPHERS13);
	server_ctx = ctx;
	return ctx;
}

SSL_CTX *
broker_upstream_ctx(const char *cafile, char *err, size_t errlen)
{
	static const unsigned char h1[] = "\x08http/1.1";
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		snprintf(err, errlen, "TLS: %s", ssl_why());
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	(void)SSL_CTX_set_ciphersuites(ctx, CIPHERS13);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_IGNORE_UNEXPECTED_EOF);
	if ((cafile != NULL ? SSL_CTX_load_verify_locations(ctx, cafile,
	    NULL) : SSL_CTX_set_default_verify_paths(ctx)) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, h1, sizeof(h1) - 1) != 0) {
		snprintf(err, errlen, "%s: %s", cafile != NULL ? cafile :
		    "the system's certificate store", ssl_why());
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

void
broker_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

/* ---- the two ends ------------------------------------------------------ */

static int
side_init(struct broker *b, struct bk_side *sd, SSL *ssl, int fd)
{
	BIO *bio;

	sd->fd = fd;
	sd->ssl = ssl;
	if (ssl == NULL || (sd->obuf = malloc(BK_OBUF)) == NULL ||
	    (bio = bk_bio_new(sd)) == NULL)
		return -1;
	SSL_set_bio(ssl, bio, bio);	/* the SSL owns it */
	SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_set_read_ahead(ssl, 1);	/* whole records, many a read */
	SSL_set_default_read_buffer_len(ssl, BK_READ_BUF);
	sd->rd = event_new(b->base, fd, EV_READ | EV_PERSIST, bk_io_cb, b);
	sd->wr = event_new(b->base, fd, EV_WRITE | EV_PERSIST, bk_io_cb, b);
	return sd->rd != NULL && sd->wr != NULL ? 0 : -1;
}

static SSL *
client_ssl(const struct broker_opts *o)
{
	SSL_CTX *ctx = broker_server_ctx();
	SSL *ssl;

	if (ctx == NULL || (ssl = SSL_new(ctx)) == NULL)
		return NULL;
	if (SSL_use_certificate(ssl, o->cert) != 1 ||
	    SSL_use_PrivateKey(ssl, o->key) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

static SSL *
server_ssl(const struct broker_opts *o)
{
	SSL *ssl;

	if ((ssl = SSL_new(o->upstream)) == NULL)
		return NULL;
	if (SSL_set_tlsext_host_name(ssl, o->name) != 1 ||
	    SSL_set1_host(ssl, o->name) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	SSL_set_connect_state(ssl);
	return ssl;
}

static void
side_clear(struct bk_side *sd)
{
	if (sd->rd != NULL)
		event_free(sd->rd);
	if (sd->wr != NULL)
		event_free(sd->wr);
	sd->rd = sd->wr = NULL;
	SSL_free(sd->ssl);	/* and its BIO */
	sd->ssl = NULL;
	free(sd->pre);
	free(sd->obuf);
	sd->pre = sd->obuf = NULL;
	if (sd->fd != -1)
		close(sd->fd);
	sd->fd = -1;
}

static void
bk_clear(struct broker *b)
{
	int i;

	for (i = 0; i < 2; i++)
		side_clear(&b->s[i]);
	if (b->tick != NULL)
		event_free(b->tick);
	b->tick = NULL;
	free(b->up);
	free(b->down);
	b->up = b->down = NULL;
}

static void
bk_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct broker *b = arg;
	uint64_t now = gk_clock_ms();

	(void)fd;
	(void)what;
	if (b->finish_by > 0 && now >= b->finish_by) {
		broker_end(b, b->why != NULL ? b->why : "closed");
		return;
	}
	if (b->handshake_by > 0 && now >= b->handshake_by &&
	    !(b->s[BK_CLIENT].hs_done && (b->s[BK_SERVER].hs_done ||
	    b->upstream_failed))) {
		broker_end(b, "tls_timeout");
		return;
	}
	if (b->idle_ms > 0 && now - b->last_act >= b->idle_ms)
		broker_end(b, "idle");
}

static int
bk_init(struct broker *b, int cfd, int sfd, const struct broker_opts *o)
{
	static const struct timeval sec = { 1, 0 };

	b->s[BK_CLIENT].fd = b->s[BK_SERVER].fd = -1;
	if ((b->up = malloc(BK_UP_CAP + BK_UP_SLACK)) == NULL ||
	    (b->down = malloc(BK_DOWN_CAP)) == NULL ||
	    side_init(b, &b->s[BK_CLIENT], client_ssl(o), cfd) == -1 ||
	    side_init(b, &b->s[BK_SERVER], server_ssl(o), sfd) == -1 ||
	    (b->tick = event_new(b->base, -1, EV_PERSIST, bk_tick_cb,
	    b)) == NULL || event_add(b->tick, &sec) == -1)
		return -1;
	if (o->held_len > 0) {
		if ((b->s[BK_CLIENT].pre = malloc(o->held_len)) == NULL)
			return -1;
		memcpy(b->s[BK_CLIENT].pre, o->held, o->held_len);
		b->s[BK_CLIENT].pre_len = o->held_len;
	}
	return 0;
}

struct broker *
broker_new(struct event_base *base, int client_fd, int server_fd,
    const struct broker_opts *o)
{
	struct broker *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->base = base;
	b->conn = o->conn;
	b->head_cb = o->head;
	b->done_cb = o->done;
	b->quota_cb = o->quota;
	b->arg = o->arg;
	b->idle_ms = o->idle_sec * 1000u;
	b->last_act = gk_clock_ms();
	if (o->handshake_ms > 0)
		b->handshake_by = b->last_act + o->handshake_ms;
	http_follow_init(&b->f);
	if (bk_init(b, client_fd, server_fd, o) == -1) {
		b->s[BK_CLIENT].fd = b->s[BK_SERVER].fd = -1;
		bk_clear(b);
		free(b);
		ERR_clear_error();
		errno = ENOMEM;
		return NULL;
	}
	/* the first pump on the next loop turn: the client's hello is in */
	event_active(b->s[BK_CLIENT].wr, EV_WRITE, 0);
	log_debug("conn=%llu broker client=%d server=%d name=%s",
	    (unsigned long long)b->conn, client_fd, server_fd, o->name);
	return b;
}

static void
bk_free_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	free(arg);
}

static void
bk_teardown(struct broker *b, const char *reason)
{
	if (b->done)
		return;
	b->done = true;
	log_debug("conn=%llu broker end reason=%s up=%llu down=%llu",
	    (unsigned long long)b->conn, reason != NULL ? reason : "freed",
	    (unsigned long long)b->up_bytes, (unsigned long long)b->down_bytes);
	bk_clear(b);
	if (reason != NULL && b->done_cb != NULL)
		b->done_cb(b->arg, reason, b->up_bytes, b->down_bytes);
	/* frames up the stack may still look: free on the next turn */
	if (event_base_once(b->base, -1, EV_TIMEOUT, bk_free_cb, b, NULL) ==
	    -1)
		free(b);
}

void
broker_end(struct broker *b, const char *reason)
{
	bk_teardown(b, reason);
}

void
broker_free(struct broker *b)
{
	if (b != NULL)
		bk_teardown(b, NULL);
}
