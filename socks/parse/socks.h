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

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_host.h"

/*
 * Host text (no port) to a socks_host: "[v6]", a v6 or dotted-quad v4
 * literal, or a name that gk_name_normalize accepts (lower case, trailing
 * dot dropped). Returns 0, or -1 with out->name empty. Port untouched.
 */
int		 socks_host_parse(const uint8_t *s, size_t n,
		    struct gk_host *out);

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
	struct gk_host dst;
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
	struct gk_host dst;		/* port 80 if absent (http://) */
	int		 host_hdr;	/* index in hdr[] or -1 */
	int		 proxy_auth;	/* index in hdr[] or -1 */
	enum http_body	 body;
	uint64_t	 content_length;
	size_t		 nhdr;
	struct http_header hdr[HTTP_MAX_HEADERS];
	size_t		 head_len;	/* through the empty line's CRLF */
};

/* What the Upgrade header(s) of a request ask for (RFC 9110 7.8). */
#define HTTP_UPGRADE_WEBSOCKET	0x01	/* RFC 6455 */
#define HTTP_UPGRADE_H2C	0x02	/* HTTP/2 over cleartext */
#define HTTP_UPGRADE_OTHER	0x04	/* any other protocol (TLS/1.2, ...) */

struct http_host {
	struct gk_host host;		/* port 0 if the Host had none */
	unsigned	 minor;
	size_t		 head_len;
	/* Set once the head parsed, whatever its host (to follow it): */
	enum http_method method;
	enum http_body	 body;		/* what follows the head */
	uint64_t	 content_length;	/* HTTP_BODY_LENGTH */
	unsigned	 upgrade;	/* HTTP_UPGRADE_* bits */
};

/*
 * Parse a proxy request head: CONNECT host:port, or an absolute-form
 * http:// request. Bytes after head_len (a body, pipelined data) are
 * not part of it.
 */
enum http_status http_parse_request(const uint8_t *buf, size_t len,
		    struct http_request *out);
/*
 * A request head at the start of buf (a tunnel's plain HTTP): is it
 * HTTP/1.x, and for which Host? The whole head is read (duplicate Host is
 * INVALID). An absolute-form target wins over the Host header; both
 * present and different is INVALID. NOT_HTTP if buf does not start with
 * a method token and SP (http_sniff() says what such bytes are).
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
		    struct gk_host *out);
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
/* gatekeeper's own final answer: "HTTP/1.1 STATUS", a text/plain body of
 * `text` and a newline, Connection: close, into buf; its length, or 0
 * when it does not fit. */
size_t		 http_reply_text(char *buf, size_t cap, const char *status,
		    const char *text);

/* ---- plain HTTP in a tunnel: its first bytes, then every request ---- */

/* CR, LF, SP and HTAB skipped before a request line; more is refused
 * (servers skip empty lines before one, some any number of them). */
#define HTTP_BLANK_MAX		32
#define HTTP_CHUNK_LINE_MAX	1024	/* chunk-size line, with extensions */

enum http_sniff {
	HTTP_SNIFF_NEED_MORE,	/* undecided: call again with more */
	HTTP_SNIFF_REQUEST,	/* an HTTP request, well-formed or not */
	HTTP_SNIFF_OTHER,	/* no HTTP request: a line or binary protocol */
	HTTP_SNIFF_PROXY,	/* a PROXY protocol header (v1 or v2) */
	HTTP_SNIFF_BLANKS,	/* over HTTP_BLANK_MAX blank bytes first */
};

struct http_sniff_result {
	size_t		 blank;		/* blank bytes before the first line */
};

/*
 * What the first bytes of a tunnel that are not TLS are. A PROXY protocol
 * v2 signature at the start, or "PROXY " as the first line's start (v1):
 * PROXY. After up to HTTP_BLANK_MAX blank bytes, the first line is a
 * REQUEST if its first word (a token) is followed by a separator and
 * either the word is a method of the IANA registry (any case) followed
 * by a target in origin-, asterisk- or absolute-form ("GET /", the
 * HTTP/0.9 form), or "HTTP/" (any case) comes before the line ends.
 * Anything else (SMTP "EHLO x", IRC "NICK x", "a1 LOGIN", RTSP, an SSH
 * banner, binary protocols) is OTHER, decided at the latest at the
 * line's LF, at a control character no request line holds (NUL, ...),
 * or after HTTP_HEAD_MAX bytes.
 */
enum http_sniff	 http_sniff(const uint8_t *buf, size_t len,
		    struct http_sniff_result *out);
const char	*http_strsniff(enum http_sniff s);

enum http_follow_state {
	HTTP_FOLLOW_ST_HEAD,	/* a request head (after blank bytes) */
	HTTP_FOLLOW_ST_BODY,	/* a Content-Length body: left bytes */
	HTTP_FOLLOW_ST_CHUNK,	/* a chunk-size line */
	HTTP_FOLLOW_ST_DATA,	/* chunk data: left bytes */
	HTTP_FOLLOW_ST_DATA_END, /* the CRLF after chunk data */
	HTTP_FOLLOW_ST_TRAILER,	/* the trailer section and its empty line */
	HTTP_FOLLOW_ST_OPAQUE,	/* switched protocols (websocket) */
};

/* The caller's state; http_follow_init() it at the stream's start. */
struct http_follow {
	enum http_follow_state state;
	uint64_t	 left;		/* ST_BODY, ST_DATA */
	bool		 upgrade;	/* the last one asked for websocket */
	uint64_t	 requests;	/* heads seen */
};

enum http_follow_status {
	HTTP_FOLLOW_NEED_MORE,	/* buf is a prefix: call again with more */
	HTTP_FOLLOW_HEAD,	/* a request head: check out->host; pass */
	HTTP_FOLLOW_PASS,	/* framing or data: pass out->pass bytes */
	HTTP_FOLLOW_OPAQUE,	/* switched protocols: the rest is not HTTP */
	HTTP_FOLLOW_INVALID,	/* not a request stream that can be followed */
};

struct http_follow_out {
	uint64_t	 pass;		/* HEAD, PASS: bytes from buf[0] on;
					   PASS may exceed len (a body) */
	size_t		 blank;		/* HEAD: blank bytes before it */
	enum http_status st;		/* HEAD: HTTP_OK or HTTP_ABSENT */
	struct http_host host;		/* HEAD */
	const char	*why;		/* INVALID: a phrase for the log */
};

void		 http_follow_init(struct http_follow *f);
/*
 * buf: the stream from where the last verdict's pass ended. HEAD: a head
 * (http_peek_host() says OK or ABSENT) after up to HTTP_BLANK_MAX blank
 * bytes; a CONNECT, an Upgrade to h2c or to anything but websocket are
 * INVALID instead. Then its body: PASS of the Content-Length (whether
 * held or not: also with len 0), or chunked: PASS of each chunk-size
 * line, of its data, of the CRLF after it (checked), and of the trailer
 * section. After a websocket Upgrade, bytes that start with neither a
 * tchar nor a blank byte are frames: OPAQUE from then on. f changes only
 * with HEAD and PASS, as if out->pass bytes were consumed.
 */
enum http_follow_status http_follow(struct http_follow *f,
		    const uint8_t *buf, size_t len,
		    struct http_follow_out *out);

#endif /* SOCKS_H */
