/*
 * broker: a TLS connection a cage's client opened to a bound host,
 * terminated here (a leaf of the cage's authority, gk_cred.h) and opened
 * again to the server (verified for the checked name), with every
 * request head shown to the caller, who may change bytes in place (the
 * length stays) or refuse the request; bodies and responses pass
 * untouched, and after a websocket upgrade everything does. HTTP/1.1
 * only (the client is offered nothing else by ALPN).
 *
 * The TLS state lives in memory BIOs: the sockets are read and written
 * here, a bounded buffer each way (backpressure as the relay's), an idle
 * timeout, one end.
 */
#ifndef BROKER_H
#define BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "socks/parse/socks.h"

struct event_base;
struct broker;

typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;

enum broker_verdict {
	BROKER_PASS,		/* the head (as changed) goes on */
	BROKER_REFUSE,		/* answered 403 with why; the end */
};

/* A request head, head[0, len): PASS with what goes instead in out
 * (*outlen bytes, at most outcap: a base64 value re-encoded may grow);
 * fo is what http_follow() said of it. REFUSE: why is the response's
 * text. */
typedef enum broker_verdict (*broker_head_cb)(void *arg, const uint8_t *head,
    size_t len, uint8_t *out, size_t outcap, size_t *outlen,
    const struct http_follow_out *fo, char *why, size_t whylen);
/* The end, once (never after broker_free()): reason as the relay's, or
 * "denied", "client_tls", "upstream_tls"; up/down: plaintext bytes
 * written to the server/client. Both sockets are closed. */
typedef void (*broker_done_cb)(void *arg, const char *reason, uint64_t up,
    uint64_t down);

struct broker_opts {
	uint64_t	 conn;		/* for logs */
	unsigned	 idle_sec;	/* 0: none */
	unsigned	 handshake_ms;	/* both TLS handshakes by then (0:
					   none), else the end, "tls_timeout" */
	const char	*name;		/* the checked name: leaf, SNI, verify */
	X509		*cert;		/* the leaf for name, and its key */
	EVP_PKEY	*key;
	SSL_CTX		*upstream;	/* broker_upstream_ctx() */
	const uint8_t	*held;		/* the client's bytes so far */
	size_t		 held_len;
	broker_head_cb	 head;
	broker_done_cb	 done;
	/* An upload quota, as relay_opts.quota: plaintext bytes to the
	 * server go only as it grants them; 0 ends the broker, reason
	 * "upload_budget". NULL: none. */
	uint64_t	(*quota)(void *arg);
	void		*arg;
};

/* Both fds connected and non-blocking; the broker's on success (NULL
 * with errno: still the caller's). No callback runs inside this call. */
struct broker	*broker_new(struct event_base *base, int client_fd,
		    int server_fd, const struct broker_opts *o);
/* End now, as by itself: the done callback with reason. */
void		 broker_end(struct broker *b, const char *reason);
/* End now, no callback. Accepts NULL. */
void		 broker_free(struct broker *b);
/* What verifies servers: cafile's certificates, or the system's store
 * (cafile NULL). NULL with OpenSSL's words in err. */
SSL_CTX		*broker_upstream_ctx(const char *cafile, char *err,
		    size_t errlen);
void		 broker_ctx_free(SSL_CTX *ctx);

#endif /* BROKER_H */
