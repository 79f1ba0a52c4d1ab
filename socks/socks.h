/*
 * socks: pure parsers for the two proxy protocols a cage speaks to us,
 * SOCKS5 (RFC 1928, RFC 1929) and HTTP/1.x proxy request heads (RFC 9112).
 * Bytes in, result out: no I/O, no logging, no globals. Every parser
 * returns NEED_MORE for a valid prefix, so the session waits for more.
 */
#ifndef SOCKS_H
#define SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gk_addr.h"

/* A destination: an IP literal or a normalized host name, and a port. */
#define SOCKS_HOST_MAX	255

struct socks_host {
	bool		 is_addr;
	struct gk_addr	 addr;		/* if is_addr */
	char		 name[SOCKS_HOST_MAX + 1];	/* name or IP text */
	uint16_t	 port;
};

/*
 * Host text (no port) to a socks_host: "[v6]", a v6 or dotted-quad v4
 * literal, or a name that gk_name_normalize accepts (lower case, trailing
 * dot dropped). Returns 0, or -1 with out->name empty. Port untouched.
 */
int		 socks_host_parse(const uint8_t *s, size_t n,
		    struct socks_host *out);

/* ---- SOCKS5 ---- */

enum socks5_status {
	SOCKS5_OK,
	SOCKS5_NEED_MORE,
	SOCKS5_INVALID,		/* malformed: reply GENERAL_FAILURE, close */
	SOCKS5_BAD_VERSION,	/* not SOCKS5 (e.g. SOCKS4): just close */
	SOCKS5_BAD_COMMAND,	/* CMD other than CONNECT: CMD_NOT_SUPPORTED */
	SOCKS5_BAD_ATYP,	/* ATYP not 1, 3, 4: ATYP_NOT_SUPPORTED */
	SOCKS5_BAD_NAME,	/* domain not a valid host name */
};

#define SOCKS5_VERSION		5
#define SOCKS5_AUTH_VERSION	1	/* RFC 1929 subnegotiation */

#define SOCKS5_METHOD_NONE	0x00
#define SOCKS5_METHOD_USERPASS	0x02
#define SOCKS5_METHOD_NO_ACCEPTABLE 0xff

#define SOCKS5_CMD_CONNECT	1
#define SOCKS5_CMD_BIND		2
#define SOCKS5_CMD_UDP_ASSOCIATE 3

#define SOCKS5_ATYP_IPV4	1
#define SOCKS5_ATYP_DOMAIN	3
#define SOCKS5_ATYP_IPV6	4

#define SOCKS5_REP_SUCCEEDED		0
#define SOCKS5_REP_GENERAL_FAILURE	1
#define SOCKS5_REP_NOT_ALLOWED		2
#define SOCKS5_REP_NET_UNREACHABLE	3
#define SOCKS5_REP_HOST_UNREACHABLE	4
#define SOCKS5_REP_CONN_REFUSED		5
#define SOCKS5_REP_TTL_EXPIRED		6
#define SOCKS5_REP_CMD_NOT_SUPPORTED	7
#define SOCKS5_REP_ATYP_NOT_SUPPORTED	8

#define SOCKS5_REPLY_MAX	22	/* VER REP RSV ATYP + 16 + 2 */

struct socks5_greeting {
	uint8_t		 nmethods;
	bool		 no_auth;	/* 0x00 offered */
	bool		 userpass;	/* 0x02 offered */
	size_t		 consumed;
};

struct socks5_auth {
	char		 user[256];	/* NUL-terminated, 1..255 bytes */
	char		 pass[256];	/* NUL-terminated, 0..255 bytes */
	uint8_t		 ulen;
	uint8_t		 plen;
	size_t		 consumed;
};

/*
 * cmd and atyp are set as soon as they are read (also with BAD_COMMAND /
 * BAD_ATYP). dst is set on OK and, for BAD_NAME, dst.name holds the
 * printable, lower-cased domain for logging. DST.PORT 0 parses as OK
 * with dst.port 0: the caller refuses it (NOT_ALLOWED).
 */
struct socks5_request {
	uint8_t		 cmd;
	uint8_t		 atyp;
	struct socks_host dst;
	size_t		 consumed;
};

enum socks5_status socks5_parse_greeting(const uint8_t *buf, size_t len,
		    struct socks5_greeting *out);
enum socks5_status socks5_parse_auth(const uint8_t *buf, size_t len,
		    struct socks5_auth *out);
enum socks5_status socks5_parse_request(const uint8_t *buf, size_t len,
		    struct socks5_request *out);
const char	*socks5_strstatus(enum socks5_status st);
/* The REP code for a failed request parse (GENERAL_FAILURE by default). */
uint8_t		 socks5_status_rep(enum socks5_status st);

/* Builders return the bytes written, or 0 if outlen is too small. */
size_t		 socks5_build_method(uint8_t method, uint8_t *out,
		    size_t outlen);
size_t		 socks5_build_auth_reply(bool ok, uint8_t *out, size_t outlen);
/* bnd NULL means 0.0.0.0 (port is still written). */
size_t		 socks5_build_reply(uint8_t rep, const struct gk_addr *bnd,
		    uint16_t port, uint8_t *out, size_t outlen);

/* ---- HTTP proxy requests ---- */

#define HTTP_HEAD_MAX		16384	/* request line + headers + CRLF */
#define HTTP_MAX_HEADERS	100
#define HTTP_METHOD_MAX		32
/* Enough for http_build_origin() of any head http_parse_request takes. */
#define HTTP_ORIGIN_MAX		(HTTP_HEAD_MAX + 64)

enum http_status {
	HTTP_OK,
	HTTP_NEED_MORE,
	HTTP_INVALID,		/* 400 */
	HTTP_TOO_LONG,		/* head or header count over the limit: 431 */
	HTTP_BAD_SCHEME,	/* absolute-form but not http:// */
	HTTP_NOT_PROXY_REQUEST,	/* origin-form "/x" or "*": not for a proxy */
	HTTP_NOT_HTTP,		/* http_peek_host: not an HTTP request */
	HTTP_ABSENT,		/* http_peek_host: HTTP/1.0 without Host */
};

enum http_method {
	HTTP_METHOD_OTHER,
	HTTP_METHOD_CONNECT,
};

enum http_hdr {
	HTTP_H_OTHER,
	HTTP_H_HOST,
	HTTP_H_PROXY_AUTHORIZATION,
	HTTP_H_PROXY_CONNECTION,
	HTTP_H_CONNECTION,
	HTTP_H_KEEP_ALIVE,
	HTTP_H_TE,
	HTTP_H_TRAILER,
	HTTP_H_UPGRADE,
	HTTP_H_CONTENT_LENGTH,
	HTTP_H_TRANSFER_ENCODING,
};

enum http_body {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,	/* content_length bytes follow the head */
	HTTP_BODY_CHUNKED,
};

/* Offsets are into the buffer given to the parser. */
struct http_span {
	size_t		 off;
	size_t		 len;
};

struct http_header {
	enum http_hdr	 kind;
	struct http_span line;		/* the whole line, CRLF included */
	struct http_span name;
	struct http_span value;		/* leading/trailing OWS removed */
};

struct http_request {
	enum http_method method;
	struct http_span method_tok;
	struct http_span target;	/* the request-target as sent */
	struct http_span authority;	/* host[:port] of the target */
	struct http_span path;		/* absolute-form: path?query, or 0 */
	unsigned	 minor;		/* HTTP/1.<minor> */
	struct socks_host dst;		/* port 80 if absent (http://) */
	int		 host_hdr;	/* index in hdr[] or -1 */
	int		 proxy_auth;	/* index in hdr[] or -1 */
	enum http_body	 body;
	uint64_t	 content_length;
	size_t		 nhdr;
	struct http_header hdr[HTTP_MAX_HEADERS];
	size_t		 head_len;	/* through the empty line's CRLF */
};

struct http_host {
	struct socks_host host;		/* port 0 if the Host had none */
	unsigned	 minor;
	size_t		 head_len;
};

/*
 * Parse a proxy request head: CONNECT host:port, or an absolute-form
 * http:// request. Bytes after head_len (a body, pipelined data) are
 * not part of it.
 */
enum http_status http_parse_request(const uint8_t *buf, size_t len,
		    struct http_request *out);
/*
 * First bytes of a tunnel: is it HTTP/1.x, and for which Host? The whole
 * head is read (duplicate Host is INVALID). An absolute-form target wins
 * over the Host header; both present and different is INVALID.
 */
enum http_status http_peek_host(const uint8_t *buf, size_t len,
		    struct http_host *out);
/*
 * Decode a Proxy-Authorization value "Basic <base64(user:pass)>" into
 * NUL-terminated user and pass. INVALID for another scheme, bad base64,
 * no ':' or control characters; TOO_LONG if a buffer is too small.
 */
enum http_status http_parse_basic_auth(const uint8_t *value, size_t len,
		    char *user, size_t userlen, char *pass, size_t passlen);
/*
 * A Host header value: host [":" port], IPv6 in brackets. Port 0 if
 * absent. Returns 0, or -1 (bad host or port).
 */
int		 http_hostport_parse(const uint8_t *s, size_t n,
		    struct socks_host *out);
/* Is header i forwarded to the origin server by http_build_origin()? */
bool		 http_header_forwarded(const uint8_t *buf,
		    const struct http_request *req, size_t i);
/*
 * Write the origin-form head for an absolute-form request: request line
 * with the path, "Host: <authority of the target>", the forwarded
 * headers verbatim, "Connection: close". Returns the length, or 0 if it
 * does not fit in outlen or req is a CONNECT.
 */
size_t		 http_build_origin(const uint8_t *buf,
		    const struct http_request *req, uint8_t *out,
		    size_t outlen);
const char	*http_strstatus(enum http_status st);

#endif /* SOCKS_H */
