/*
 * http_cred: the credential broker's pure part (issue 29). A cage sees a
 * placeholder where a secret would be; in each request head of a brokered
 * connection the placeholders of the credentials bound to its host are
 * replaced by their secrets, and the mark of any other credential's
 * placeholder (its last bytes) is a leak. Bytes in, result out: no I/O,
 * no allocation, no logging, bounded stack.
 */
#ifndef HTTP_CRED_H
#define HTTP_CRED_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_CRED_MAX		32	/* credentials in one set */
#define HTTP_CRED_MARK_MAX	16	/* bytes of a placeholder's mark */

struct http_cred {
	const char	*name;		/* for reports only */
	const uint8_t	*placeholder;	/* none (len 0) matches nothing */
	size_t		 placeholder_len;
	const uint8_t	*secret;	/* 0x21..0x7e if bound */
	size_t		 secret_len;
	bool		 bound;		/* bound to this connection's host */
};

enum http_cred_status {
	HTTP_CRED_OK,		/* out holds the head, rewritten or not */
	HTTP_CRED_LEAK,		/* an unbound credential's mark is in the
				   head; *which says which */
	HTTP_CRED_TOO_LONG,	/* the rewritten head would exceed outcap */
	HTTP_CRED_INVALID,	/* not a head http_follow() would pass, or
				   a bad credential set (below) */
};

/* The mark of a placeholder: its last min(HTTP_CRED_MARK_MAX, len)
 * bytes. Returns their offset into it, *mark_len their count. */
size_t		 http_cred_mark(size_t placeholder_len, size_t *mark_len);
/*
 * Does buf hold the mark of one of creds (ASCII case-insensitive), bound
 * or not? The lowest such index, or -1. For DNS names, SNI, SOCKS5 and
 * CONNECT targets, plain-HTTP heads.
 */
ssize_t		 http_cred_find(const uint8_t *buf, size_t len,
		    const struct http_cred *creds, size_t n);
/*
 * Rewrite one complete HTTP/1.x request head, bytes [0,len) exactly as
 * http_follow() passes it with HTTP_FOLLOW_HEAD (the blank bytes it skips
 * before the request line included, copied): in the request target and
 * in every header value each bound credential's placeholder (its exact
 * bytes) is replaced by its secret, left to right, what was put never
 * looked at again (at one offset the longest placeholder wins, then the
 * lowest index). In an Authorization or Proxy-Authorization value
 * "Basic" 1*SP token68 whose base64 decodes, the decoded bytes are
 * rewritten and, if anything was replaced, re-encoded (standard base64,
 * padded); else the value is rewritten as any other. Method, version,
 * header names, white space and line ends are copied untouched.
 *
 * LEAK if an unbound credential's mark is anywhere in the head, raw or
 * in a decoded Basic value (ASCII case-insensitive): *which is its index
 * (one seen raw first, the lowest) and nothing is written. INVALID for a head http_follow()
 * refuses or does not end at len (obs-fold, bare LF, CONNECT, h2c, over
 * HTTP_HEAD_MAX, ...), for more than HTTP_CRED_MAX creds, and for a
 * bound credential whose secret has a byte outside 0x21..0x7e (it could
 * break the head's structure). TOO_LONG: out (outcap bytes) is too
 * small; what was written is wiped. *out_len is set on OK (0 otherwise),
 * *replaced (if not NULL) counts the substitutions on OK (0 otherwise),
 * *which (if not NULL) is set on LEAK only. head and out must not overlap.
 * Work is O(len * n).
 */
enum http_cred_status http_cred_rewrite(const uint8_t *head, size_t len,
		    const struct http_cred *creds, size_t n, uint8_t *out,
		    size_t outcap, size_t *out_len, size_t *which,
		    unsigned *replaced);
const char	*http_cred_strstatus(enum http_cred_status st);

#endif /* HTTP_CRED_H */
