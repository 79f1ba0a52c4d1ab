/*
 * gk_reqrule: what gk_policy.c and gk_reqrule.c share (not an API: the
 * public part is in gk_policy.h). A failed parse names a message
 * template and the offending span of the input; gk_rule_split() cuts a
 * pattern's methods and path off its host part.
 */
#ifndef GK_REQRULE_H
#define GK_REQRULE_H

#include "gatekeeper/policy/gk_policy.h"

/*
 * Why a parse failed, one per message; each implies a status. Templates:
 * $S the offending span (escaped), $N its length, $B the address bits,
 * $T the network, $P the name.
 */
struct pat_why {
	enum gk_pat_status	 st;
	const char		*msg;
};
#define WHY(id, st, msg)	static const struct pat_why id = { st, msg }

struct pat_diag {
	const struct pat_why *why;
	size_t		 off, n;	/* offending span of the input */
	struct gk_addr	 net;		/* why_host_bits: network */
	unsigned	 prefix;
};

static inline enum gk_pat_status
pat_fail(struct pat_diag *d, const struct pat_why *why, size_t off, size_t n)
{
	d->why = why;
	d->off = off;
	d->n = n;
	return why->st;
}

/*
 * Cut b[0..len) into "[METHODS ]HOST[/PATH]": sets out->methods and
 * out->path and the host part's span (*hoff, *hlen), which holds an
 * address pattern whole (its '/' is a prefix). Fails on a bad method or
 * path, a rule on an address, or methods without a path.
 */
enum gk_pat_status gk_rule_split(const uint8_t *b, size_t len,
		    struct gk_pattern *out, size_t *hoff, size_t *hlen,
		    struct pat_diag *d);
/*
 * The path of a request-target t[0..n): an origin-form one up to '?' or
 * '#', an absolute-form one's after its authority ("/" when it has
 * none). False for others ("*", authority-form).
 */
bool		 gk_target_path(const char *t, size_t n, const char **path,
		    size_t *plen);
/* "GET,HEAD" (GK_METHOD_* order; "" for 0): the length written. */
size_t		 gk_methods_format(uint16_t methods, char *buf, size_t len);
/* gk_allow_name(), or with rules: by request rules only (inspected). */
bool		 gk_allow_name_by(const struct gk_allowlist *al,
		    const char *name, size_t len, uint16_t port, bool rules);
/* Does name pattern p (plen: strlen(p->name)) cover normalized nm? */
bool		 gk_pat_covers(const struct gk_pattern *p, size_t plen,
		    const char *nm, size_t n);

#endif /* GK_REQRULE_H */
