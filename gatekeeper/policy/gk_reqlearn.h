/*
 * gk_reqlearn: request rules learned from requests (gk-run --learn on
 * inspected hosts). Pure: no I/O, no logging, nothing allocated.
 *
 * Two steps. gatekeeperd cuts each request's target to a learnable path
 * (gk_reqlearn_path: the path without its query, at most
 * GK_LEARN_PATH_SEGS segments, a last segment "**" standing for the
 * rest) and tells it once with its method; gk-run gathers what it was
 * told and makes rules of it (gk_reqlearn_merge): per host and port, the
 * same path with several methods is one rule naming them all ("GET,HEAD
 * github.com:443/acme/hello.git/info/refs"), and a host with more than
 * GK_LEARN_HOST_RULES paths has them cut a segment shorter, and again,
 * until they are few enough (at worst the path "**", every method seen).
 * Every rule made parses back (gk_pattern_parse) and allows each request
 * it was learned from.
 */
#ifndef GK_REQLEARN_H
#define GK_REQLEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_policy.h"

#define GK_LEARN_PATH_SEGS	4	/* segments a learned path keeps */
#define GK_LEARN_HOST_RULES	16	/* rules learned per host and port */
#define GK_LEARN_PATH_MAX	255	/* a learned path's bytes */

/*
 * The learnable path of a request's target (origin-form "/a/b?q" or
 * absolute-form "http://h/a/b"), NUL-terminated in out: the path up to
 * '?' or '#', cut after GK_LEARN_PATH_SEGS segments (or before the first
 * segment holding a '*'; fewer when it would not fit outlen) with a last
 * segment "**" for the rest. False when it cannot be a rule: no path, a
 * byte a rule's path cannot hold (control, space, non-ASCII), a dot
 * segment (such a request never matches a rule), a method that no rule
 * names (gk_method_bit), or longer than GK_PATH_MAX.
 */
bool		 gk_reqlearn_path(const char *method, size_t mlen,
		    const char *target, size_t tlen, char *out,
		    size_t outlen);

/* One learned request, or (after gk_reqlearn_merge) one rule. */
struct gk_learned_req {
	char		 host[GK_NAME_MAX + 1];	/* normalized */
	uint16_t	 port;			/* 0: any */
	uint16_t	 methods;		/* GK_METHOD_* bits */
	char		 path[GK_LEARN_PATH_MAX + 1];	/* learnable */
};

/*
 * v[0..n) (each path from gk_reqlearn_path) made into rules in place:
 * sorted by host, port and path, one per path with its methods, at most
 * GK_LEARN_HOST_RULES per host and port (cut shorter as above). Returns
 * how many there are now.
 */
size_t		 gk_reqlearn_merge(struct gk_learned_req *v, size_t n);
/* "GET,HEAD github.com:443/acme/x": the length written (as snprintf). */
size_t		 gk_reqlearn_format(const struct gk_learned_req *r, char *buf,
		    size_t len);

#endif /* GK_REQLEARN_H */
