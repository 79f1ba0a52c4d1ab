/*
 * gk_err: a message for the caller, in the caller's buffer: the one
 * formatter of every "0, or -1 with a message in err" function, and the
 * ways to quote a string from elsewhere in such a message.
 */
#ifndef GK_ERR_H
#define GK_ERR_H

#include <stddef.h>

/*
 * printf into err (errlen bytes, cut and terminated; nothing when err is
 * NULL or errlen 0). Returns -1, so a failing path can end with
 * `return gk_seterr(err, errlen, ...);`.
 */
int	gk_seterr(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/*
 * `s` for a one-line message: bytes outside printable ASCII become '?',
 * cut to len - 1 bytes (with "..." when cut). Returns buf ("" when len
 * is 0).
 */
const char *gk_printable(const char *s, char *buf, size_t len);
/*
 * `s[0..n)`, text from a peer, quote-safe for a message: printable ASCII
 * as is, other bytes and \ ' as \xNN; at most max bytes of it, then
 * "..." when there was more (or out ran short). Returns out, always
 * terminated ("" when outlen is 0). The one \xNN escaper.
 */
const char *gk_escape(const void *s, size_t n, size_t max, char *out,
	    size_t outlen);

#endif /* GK_ERR_H */
