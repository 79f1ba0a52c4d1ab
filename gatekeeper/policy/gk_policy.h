/*
 * gk_policy: the allowlist pattern grammar (DESIGN.md, "Allowlist patterns")
 * and matching of names and addresses against a cage's allowlist.
 *
 *   example.com           exactly that name, any port
 *   *.example.com         example.com and every name below it, any depth
 *   **.example.com        the same as *.example.com
 *   example.com:443       ... restricted to one port (also after wildcards)
 *   203.0.113.0/24[:P]    IPv4 CIDR (a bare address is a /32)
 *   [2001:db8::/32][:P]   bracketed IPv6 CIDR (a bare address is a /128)
 *   [METHODS ]NAME[:P]/PATH  a request rule (gk_reqrule.c), as in "GET,HEAD
 *                         github.com/acme/x": the name is allowed as
 *                         without the path, and its requests are checked
 *
 * Names follow gk_name.h's rule (what the DNS server and the TLS server
 * name parser accept too) and compare case-insensitively with a trailing
 * dot ignored; a name pattern never matches an IP literal. Wildcards
 * over a public suffix (libpsl, ICANN and private sections: *.com,
 * *.co.uk, *.github.io) are refused.
 */
#ifndef GK_POLICY_H
#define GK_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_name.h"

#define GK_PATTERN_MAX		1024	/* longest accepted pattern text */
#define GK_PATH_MAX		1023	/* a rule's path glob */

/* Request methods a rule may name (gk_pattern.methods; 0: every one). */
#define GK_METHOD_GET		0x01
#define GK_METHOD_HEAD		0x02
#define GK_METHOD_POST		0x04
#define GK_METHOD_PUT		0x08
#define GK_METHOD_PATCH		0x10
#define GK_METHOD_DELETE	0x20
#define GK_METHOD_OPTIONS	0x40
#define GK_METHOD_ALL		0x7f
#define GK_ALLOWLIST_MAX	4096	/* patterns in one allowlist */

enum gk_pat_kind {
	GK_PAT_EXACT,
	GK_PAT_WILDCARD,	/* name and everything below it */
	GK_PAT_CIDR,
};

enum gk_pat_status {
	GK_PAT_OK,
	GK_PAT_EMPTY,
	GK_PAT_TOO_LONG,	/* text over GK_PATTERN_MAX */
	GK_PAT_EMPTY_LABEL,
	GK_PAT_LABEL_TOO_LONG,
	GK_PAT_NAME_TOO_LONG,
	GK_PAT_NON_ASCII,
	GK_PAT_BAD_CHAR,
	GK_PAT_BAD_WILDCARD,	/* '*' anywhere but a whole leading label */
	GK_PAT_BARE_WILDCARD,	/* "*" or "**" alone */
	GK_PAT_BAD_PORT,
	GK_PAT_BAD_CIDR,
	GK_PAT_PUBLIC_SUFFIX,
	GK_PAT_BAD_METHOD,	/* not one of GK_METHOD_* in upper case */
	GK_PAT_BAD_PATH,	/* a path glob, or methods/path on an address */
};

struct gk_pattern {
	enum gk_pat_kind kind;
	char		 name[GK_NAME_MAX + 1];	/* lower case, no "*.", no dot */
	struct gk_addr	 net;			/* GK_PAT_CIDR, host bits zero */
	uint8_t		 prefix;
	uint16_t	 port;			/* 0: any port */
	uint16_t	 methods;		/* GK_METHOD_* bits; 0: all */
	char		 path[GK_PATH_MAX + 1];	/* "": no path, not a rule */
};

/*
 * Load the Public Suffix List used to refuse wildcards over public
 * suffixes: path NULL picks the newest of libpsl's built-in data and the
 * distribution file (/usr/share/publicsuffix). The parser calls it lazily
 * on first use; call it at startup, before dropping privileges or
 * entering a sandbox. Returns 0, or -1 if nothing could be loaded: every
 * wildcard is then refused (fail closed). Not thread-safe.
 */
int		 gk_policy_psl_load(const char *path);

/* Pure parser: no I/O (except the lazy PSL load), no logging. */
enum gk_pat_status gk_pattern_parse(const uint8_t *buf, size_t len,
		    struct gk_pattern *out);
/*
 * Canonical text of a parsed pattern ("*.github.com:443", "GET,HEAD
 * github.com/acme/x": methods in GK_METHOD_* order, one space). Like
 * gk_pattern_error() and gk_allow_explain(), returns the length written
 * (always NUL-terminated when len > 0; truncated to fit).
 */
size_t		 gk_pattern_format(const struct gk_pattern *p, char *buf,
		    size_t len);
/*
 * A message a person can act on: "invalid pattern '*.com': ...". The
 * pattern text is quoted with non-printable bytes escaped.
 */
size_t		 gk_pattern_error(const uint8_t *buf, size_t len,
		    enum gk_pat_status st, char *msg, size_t msglen);
const char	*gk_pat_strstatus(enum gk_pat_status st);
/* Same kind, port, name or network, methods and path. */
bool		 gk_pattern_equal(const struct gk_pattern *a,
		    const struct gk_pattern *b);

struct gk_allowlist;

/*
 * Build an allowlist from pattern texts; duplicates are merged. On the
 * first invalid pattern returns NULL with the gk_pattern_error() text
 * in err. An empty list (n == 0) is valid and allows nothing.
 */
struct gk_allowlist *gk_allowlist_new(const char *const *patterns, size_t n,
		    char *err, size_t errlen);
/*
 * A new allowlist: al's patterns but those drop() says go (drop NULL:
 * none go), then the pattern texts add[0..nadd) merged in as by
 * gk_allowlist_new(). al is not changed. NULL with a message in err on
 * a bad added pattern, too many, or no memory.
 */
struct gk_allowlist *gk_allowlist_edit(const struct gk_allowlist *al,
		    bool (*drop)(const struct gk_pattern *, void *), void *arg,
		    const char *const *add, size_t nadd, char *err,
		    size_t errlen);
void		 gk_allowlist_free(struct gk_allowlist *al);
size_t		 gk_allowlist_len(const struct gk_allowlist *al);
const struct gk_pattern *gk_allowlist_at(const struct gk_allowlist *al,
		    size_t i);

/*
 * Name matching. `name` need not be normalized (it is, internally, by
 * gk_name_normalize); what is not a host name never matches. port 0
 * means "any port would do" (a DNS lookup): the name is allowed if a name
 * pattern covers it on some port.
 */
bool		 gk_allow_name(const struct gk_allowlist *al, const char *name,
		    size_t len, uint16_t port);
/* Address matching against CIDR entries only. port 0: any port. */
bool		 gk_allow_addr(const struct gk_allowlist *al,
		    const struct gk_addr *a, uint16_t port);
/* True if any entry is a CIDR pattern. */
bool		 gk_allow_has_cidr(const struct gk_allowlist *al);
/* True if a CIDR entry explicitly covers a (any port). */
bool		 gk_allow_addr_cidr(const struct gk_allowlist *al,
		    const struct gk_addr *a);

/*
 * Why a name was denied, for deny records and error messages: names the
 * pattern that came closest and what would allow the name, e.g.
 *   "closest pattern 'github.com' is exact; '*.github.com' would cover
 *    api.github.com"
 *   "'*.github.com' covers the name but only on port 443"
 *   "no pattern shares a domain with 'evil.example'"
 *   "the allowlist is empty"
 */
size_t		 gk_allow_explain(const struct gk_allowlist *al,
		    const char *name, size_t len, uint16_t port, char *buf,
		    size_t buflen);

/*
 * Request rules (gk_reqrule.c). A host (name, port) is inspected when a
 * rule pattern (one with a path) covers it; port 0: on any port. Plain
 * patterns for the same host do not make it uninspected.
 */
bool		 gk_allow_inspects(const struct gk_allowlist *al,
		    const char *name, size_t len, uint16_t port);
/*
 * May this request go to an inspected host? True if a rule covering
 * (name, port) names the method (or none) and its path glob matches the
 * target's path: an origin-form target ("/a/b?q") up to '?' or '#', or
 * an absolute-form one ("https://h/a/b?q": its path; none is "/"). A
 * path with a dot segment (also as %2e, or before ';', or between '\',
 * %2f or %5c), a NUL or another control byte, or a method that is not a
 * token never matches. False with why (NUL-terminated, truncated) naming
 * the method, the path and the closest rule.
 */
bool		 gk_allow_request(const struct gk_allowlist *al,
		    const char *name, size_t len, uint16_t port,
		    const char *method, size_t mlen, const char *target,
		    size_t tlen, char *why, size_t whylen);
/* The GK_METHOD_* bit of a method's text ("GET": exact case), or 0. */
uint16_t	 gk_method_bit(const char *m, size_t n);
/*
 * Does the path glob (a rule's path) match path[0..n)? '*' matches any
 * bytes within a segment, '**' as a whole segment any number of segments
 * (zero too); other bytes are literal. No dot-segment check: see
 * gk_allow_request().
 */
bool		 gk_path_match(const char *glob, const char *path, size_t n);

#endif /* GK_POLICY_H */
