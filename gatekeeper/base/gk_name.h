/*
 * gk_name: the one host-name rule. The allowlist pattern grammar
 * (gk_policy), the SOCKS5 and HTTP proxy targets (socks_host_parse), the
 * DNS server's "is the question a host name" (dns_msg) and the TLS server
 * name (sni_parse) all decide with gk_name_parse(), so a name one of them
 * accepts every one accepts, as the same lower-case text
 * (tests/fuzz/fuzz_name.c checks it).
 *
 * A host name is:
 *   - labels of 1..GK_LABEL_MAX bytes of ASCII letters, digits, '-' and
 *     '_', joined by single dots. '-' and '_' may stand anywhere in a
 *     label, first and last included: "_dmarc.example.com",
 *     "api_x.example", "xn--bcher-kva.example" pass, and so do "-x.example"
 *     and "x-.example", which resolvers carry and TLS clients send; the
 *     RFC 952 letter-digit-hyphen form is not enforced anywhere, so no path
 *     can refuse what another accepts;
 *   - one trailing dot allowed, and dropped;
 *   - at most GK_NAME_MAX bytes without that dot;
 *   - not an IP literal: the last label is not all digits ("1.2.3.4",
 *     "example.123"; RFC 6066 3 forbids addresses as a TLS server name,
 *     and a name pattern never matches an address).
 * ASCII only: internationalized names are written in punycode (xn--...).
 * The text produced is lower case, without the trailing dot.
 */
#ifndef GK_NAME_H
#define GK_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GK_NAME_MAX	253	/* presentation form, no trailing dot */
#define GK_LABEL_MAX	63

enum gk_name_status {
	GK_NAME_OK,
	GK_NAME_EMPTY,		/* "" or "." */
	GK_NAME_EMPTY_LABEL,	/* ".x", "a..b", "x.." */
	GK_NAME_LABEL_TOO_LONG,	/* a label of more than GK_LABEL_MAX bytes */
	GK_NAME_TOO_LONG,	/* more than GK_NAME_MAX bytes */
	GK_NAME_NON_ASCII,	/* a byte >= 0x80 */
	GK_NAME_BAD_CHAR,	/* another byte outside [A-Za-z0-9_.-] */
	GK_NAME_NUMERIC,	/* the last label is all digits */
};

struct gk_name {
	char	 text[GK_NAME_MAX + 1];	/* lower case, NUL-terminated;
					   "" unless GK_NAME_OK */
	size_t	 len;
	size_t	 err_off;	/* unless GK_NAME_OK: the offending bytes, */
	size_t	 err_len;	/* buf[err_off, err_off + err_len) */
};

/*
 * Check buf[0, len) against the rule above. The first problem found
 * scanning left to right (a bad byte, an empty or long label) wins; the
 * name's length and the numeric last label are checked after the scan.
 * Empty label: err_off is where it starts, err_len 0. Too long and
 * numeric: the whole name without the trailing dot. Pure and bounded:
 * reads len bytes at most, writes only *out.
 */
enum gk_name_status gk_name_parse(const uint8_t *buf, size_t len,
		    struct gk_name *out);
const char	*gk_name_strstatus(enum gk_name_status st);

/*
 * gk_name_parse() for callers that want the text only: out gets it,
 * returns its length, or -1 if in is not a host name (or NULL).
 */
int		 gk_name_normalize(const char *in, size_t len,
		    char out[GK_NAME_MAX + 1]);

/* A byte a label may hold: ASCII letter, digit, '-' or '_'. */
static inline bool
gk_name_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* ASCII lower case; every other byte unchanged. The only copy. */
static inline uint8_t
gk_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + ('a' - 'A')) : c;
}

#endif /* GK_NAME_H */
