/*
 * test_broker: the TLS broker (socks/broker.h) between a real OpenSSL
 * client and a real OpenSSL server, each in its own thread on blocking
 * sockets, the broker on the test's event loop. Certificates are made
 * here: the cage's authority and its leaf (gk_cred_ca.c) for the client,
 * another authority for the server, which the broker verifies against.
 *
 *   a request's head is shown, changed in place, and the server gets the
 *   change; its body (4 MiB, Content-Length) and a 4 MiB response pass
 *   byte for byte; the ClientHello the peek held is the start of the
 *   client's stream; a refused head is answered 403 with the reason and
 *   nothing reaches the server; a server whose certificate does not
 *   verify is answered 502 saying so; a client that speaks no TLS ends
 *   the broker (client_tls); kept-alive requests are each shown.
 */
#include <sys/socket.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "gatekeeper/cage/gk_cred.h"
#include "socks/broker.h"

#define NAME		"api.example.com"
#define BIG		(4 * 1024 * 1024)
#define DEADLINE_SEC	20

struct pki {
	X509		*ca, *leaf, *sca, *sleaf;
	EVP_PKEY	*cakey, *key, *scakey, *skey;
};

struct run {
	struct pki	*p;
	int		 cfd, sfd;		/* the threads' ends */
	int		 bc, bs;		/* the broker's ends */
	bool		 refuse;		/* the head callback refuses */
	bool		 server_bad;		/* server's cert: wrong CA */
	bool		 plain_client;		/* no TLS from the client */
	size_t		 body;			/* request body bytes */
	int		 requests;		/* on one connection */
	/* results */
	char		 reply[512];		/* the client's first bytes */
	size_t		 down;			/* response body bytes read */
	int		 heads;			/* the callback saw */
	int		 server_heads;		/* with the secret in */
	bool		 server_saw_placeholder;
	size_t		 server_body;
	bool		 body_ok;
	const char	*reason;
	bool		 done;
	struct event_base *base;
};

static struct pki pki;

static int
setup_pki(void **state)
{
	const char *names[] = { "example.com" };
	char err[256];

	(void)state;
	assert_int_equal(gk_cred_ca_make("cage", names, 1, 1, &pki.ca,
	    &pki.cakey, err, sizeof(err)), 0);
	pki.key = gk_cred_key_make();
	pki.leaf = gk_cred_leaf_make(pki.ca, pki.cakey, pki.key, NAME);
	assert_int_equal(gk_cred_ca_make("server", names, 1, 1, &pki.sca,
	    &pki.scakey, err, sizeof(err)), 0);
	pki.skey = gk_cred_key_make();
	pki.sleaf = gk_cred_leaf_make(pki.sca, pki.scakey, pki.skey, NAME);
	assert_non_null(pki.leaf);
	assert_non_null(pki.sleaf);
	return 0;
}

static int
teardown_pki(void **state)
{
	(void)state;
	X509_free(pki.ca);
	X509_free(pki.leaf);
	X509_free(pki.sca);
	X509_free(pki.sleaf);
	EVP_PKEY_free(pki.cakey);
	EVP_PKEY_free(pki.key);
	EVP_PKEY_free(pki.scakey);
	EVP_PKEY_free(pki.skey);
	return 0;
}

static uint8_t
pattern(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 9));
}

/* Read a head (to CRLF CRLF) into buf; its length, or 0. */
static size_t
read_head(SSL *ssl, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		if (SSL_read(ssl, buf + n, 1) != 1)
			return 0;
		n++;
		buf[n] = '\0';
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
			return n;
	}
	return 0;
}

static void
server_one(struct run *r, SSL *ssl)
{
	static uint8_t buf[64 * 1024];
	char head[4096], out[128];
	size_t i, got = 0, k;
	int n;

	if (read_head(ssl, head, sizeof(head)) == 0)
		return;
	if (strstr(head, "Bearer REALSECRET0123456789abcd123456\r\n") != NULL)
		r->server_heads++;
	if (strstr(head, "PLACEHOLDER") != NULL)
		r->server_saw_placeholder = true;
	r->body_ok = true;
	while (got < r->body && (n = SSL_read(ssl, buf, sizeof(buf))) > 0)
		for (i = 0; i < (size_t)n; i++, got++)
			if (buf[i] != pattern(got))
				r->body_ok = false;
	r->server_body += got;
	n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: "
	    "%d\r\n\r\n", BIG);
	SSL_write(ssl, out, n);
	for (got = 0; got < BIG; got += k) {
		k = BIG - got < sizeof(buf) ? BIG - got : sizeof(buf);
		for (i = 0; i < k; i++)
			buf[i] = pattern(got + i);
		if (SSL_write(ssl, buf, (int)k) <= 0)
			return;
	}
}

static void *
server_thread(void *arg)
{
	struct run *r = arg;
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	SSL *ssl;
	int i;

	SSL_CTX_use_certificate(ctx, r->server_bad ? r->p->leaf :
	    r->p->sleaf);
	SSL_CTX_use_PrivateKey(ctx, r->server_bad ? r->p->key : r->p->skey);
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, r->sfd);
	if (SSL_accept(ssl) == 1)
		for (i = 0; i < r->requests; i++)
			server_one(r, ssl);
	SSL_shutdown(ssl);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(r->sfd);
	ERR_clear_error();
	return NULL;
}

static void
client_one(struct run *r, SSL *ssl, int nth)
{
	static uint8_t buf[64 * 1024];
	char head[512];
	size_t i, sent, k;
	int n;

	n = snprintf(head, sizeof(head), "POST /up HTTP/1.1\r\nHost: " NAME
	    "\r\nAuthorization: Bearer PLACEHOLDER0123456789abcd\r\n"
	    "Content-Length: %zu\r\n\r\n", r->body);
	SSL_write(ssl, head, n);
	for (sent = 0; sent < r->body; sent += k) {
		k = r->body - sent < sizeof(buf) ? r->body - sent : sizeof(buf);
		for (i = 0; i < k; i++)
			buf[i] = pattern(sent + i);
		if (SSL_write(ssl, buf, (int)k) <= 0)
			return;
	}
	if (read_head(ssl, nth == 0 ? r->reply : head, nth == 0 ?
	    sizeof(r->reply) : sizeof(head)) == 0)
		return;
	if (strstr(nth == 0 ? r->reply : head, "200 OK") == NULL) {
		while (SSL_read(ssl, buf, sizeof(buf)) > 0)
			;
		return;
	}
	for (sent = 0; sent < BIG && (n = SSL_read(ssl, buf, sizeof(buf))) >
	    0; sent += (size_t)n)
		for (i = 0; i < (size_t)n; i++)
			if (buf[i] != pattern(sent + i))
				r->body_ok = false;
	r->down += sent;
}

static void *
client_thread(void *arg)
{
	struct run *r = arg;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;
	int i;

	if (r->plain_client) {
		(void)!write(r->cfd, "GET / HTTP/1.1\r\n\r\n", 18);
		(void)!read(r->cfd, r->reply, sizeof(r->reply) - 1);
		close(r->cfd);
		SSL_CTX_free(ctx);
		return NULL;
	}
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), r->p->ca);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(ctx);
	SSL_set_tlsext_host_name(ssl, NAME);
	SSL_set1_host(ssl, NAME);
	SSL_set_fd(ssl, r->cfd);
	if (SSL_connect(ssl) == 1)
		for (i = 0; i < r->requests; i++)
			client_one(r, ssl, i);
	else
		snprintf(r->reply, sizeof(r->reply), "handshake failed");
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(r->cfd);
	ERR_clear_error();
	return NULL;
}

static enum broker_verdict
head_cb(void *arg, const uint8_t *head, size_t len, uint8_t *out,
    size_t outcap, size_t *outlen, const struct http_follow_out *fo,
    char *why, size_t whylen)
{
	struct run *r = arg;
	const char *ph = "PLACEHOLDER0123456789abcd";
	uint8_t *p;

	r->heads++;
	assert_int_equal(fo->st, HTTP_OK);
	assert_string_equal(fo->host.host.name, NAME);
	if (r->refuse) {
		snprintf(why, whylen, "refused by the test");
		return BROKER_REFUSE;
	}
	/* grown by 5 bytes: what follows the head must follow it still */
	assert_true(len + 5 <= outcap);
	memcpy(out, head, len);
	p = memmem(out, len, ph, strlen(ph));
	assert_non_null(p);
	memmove(p + strlen(ph) + 5, p + strlen(ph), len - (size_t)(p - out) -
	    strlen(ph));
	memcpy(p, "REALSECRET0123456789abcd123456", strlen(ph) + 5);
	*outlen = len + 5;
	return BROKER_PASS;
}

static void
done_cb(void *arg, const char *reason, uint64_t up, uint64_t down)
{
	struct run *r = arg;

	(void)up;
	(void)down;
	r->reason = reason;
	r->done = true;
	event_base_loopbreak(r->base);
}

/* The client's first bytes, as the peek would hold them. */
static size_t
read_hello(int fd, uint8_t *buf, size_t cap)
{
	ssize_t n = read(fd, buf, cap);

	return n > 0 ? (size_t)n : 0;
}

static void
run_broker(struct run *r)
{
	static const struct timeval dl = { DEADLINE_SEC, 0 };
	int c[2], s[2];
	pthread_t ct, st;
	struct broker_opts o;
	uint8_t hello[16384];
	char err[256];
	struct broker *b;
	int i;

	r->p = &pki;
	r->base = event_base_new();
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	r->cfd = c[0], r->bc = c[1], r->sfd = s[0], r->bs = s[1];
	assert_int_equal(pthread_create(&ct, NULL, client_thread, r), 0);
	assert_int_equal(pthread_create(&st, NULL, server_thread, r), 0);
	memset(&o, 0, sizeof(o));
	o.held_len = read_hello(r->bc, hello, sizeof(hello));
	o.held = hello;
	fcntl(r->bc, F_SETFL, O_NONBLOCK);
	fcntl(r->bs, F_SETFL, O_NONBLOCK);
	o.conn = 1;
	o.idle_sec = DEADLINE_SEC;
	o.name = NAME;
	o.cert = r->p->leaf;
	o.key = r->p->key;
	o.upstream = broker_upstream_ctx(NULL, err, sizeof(err));
	assert_non_null(o.upstream);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(o.upstream), r->p->sca);
	o.head = head_cb;
	o.done = done_cb;
	o.arg = r;
	b = broker_new(r->base, r->bc, r->bs, &o);
	assert_non_null(b);
	event_base_loopexit(r->base, &dl);
	event_base_dispatch(r->base);
	if (!r->done)
		broker_end(b, "test deadline");
	pthread_join(ct, NULL);
	shutdown(r->sfd, SHUT_RDWR);
	pthread_join(st, NULL);
	broker_ctx_free(o.upstream);
	for (i = 0; i < 4; i++)		/* the broker frees a turn later */
		event_base_loop(r->base, EVLOOP_NONBLOCK);
	event_base_free(r->base);
}

static void
test_rewrite_and_bulk(void **state)
{
	struct run r = { .body = BIG, .requests = 1 };

	(void)state;
	run_broker(&r);
	assert_non_null(strstr(r.reply, "200 OK"));
	assert_int_equal(r.heads, 1);
	assert_int_equal(r.server_heads, 1);
	assert_false(r.server_saw_placeholder);
	assert_int_equal(r.server_body, BIG);
	assert_int_equal(r.down, BIG);
	assert_true(r.body_ok);
	assert_string_equal(r.reason, "closed");
}

static void
test_keepalive(void **state)
{
	struct run r = { .body = 100, .requests = 3 };

	(void)state;
	run_broker(&r);
	assert_int_equal(r.heads, 3);
	assert_int_equal(r.server_heads, 3);
	assert_int_equal(r.down, 3 * (size_t)BIG);
	assert_true(r.body_ok);
}

static void
test_refused(void **state)
{
	struct run r = { .body = 10, .requests = 1, .refuse = true };

	(void)state;
	run_broker(&r);
	assert_non_null(strstr(r.reply, "403 Forbidden"));
	assert_int_equal(r.server_heads, 0);
	assert_int_equal(r.server_body, 0);
	assert_string_equal(r.reason, "denied");
}

static void
test_upstream_unverified(void **state)
{
	struct run r = { .body = 0, .requests = 1, .server_bad = true };

	(void)state;
	run_broker(&r);
	assert_non_null(strstr(r.reply, "502 Bad Gateway"));
	assert_int_equal(r.server_heads, 0);
	assert_string_equal(r.reason, "upstream_tls");
}

static void
test_plain_client(void **state)
{
	struct run r = { .requests = 1, .plain_client = true };

	(void)state;
	run_broker(&r);
	assert_true(r.done);
	assert_string_equal(r.reason, "client_tls");
	assert_int_equal(r.heads, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite_and_bulk),
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_upstream_unverified),
		cmocka_unit_test(test_plain_client),
	};

	signal(SIGPIPE, SIG_IGN);	/* as gatekeeperd: a peer's close */
	return cmocka_run_group_tests(tests, setup_pki, teardown_pki);
}
