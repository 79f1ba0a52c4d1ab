/*
 * gk_hostpolicy: the host policy every cage stays within (the `policy`
 * key, /etc/gatekeeper/policy by default; reloaded on SIGHUP). One
 * directive per line, `#` comments, blank lines ignored:
 *
 *   version 2026-11-25.1          # optional: what gatekeeper_policy_info
 *                                 # and audit lines report
 *   deny  *.evil.example          # no cage may reach these, whatever it
 *   deny  169.254.0.0/16          # asks for (deny wins)
 *   allow *.github.com            # optional: the bound; a cage may ask
 *   allow registry.npmjs.org:443  # only for patterns within it
 *
 * Patterns are allowlist patterns (gk_policy.h). Without a `version`
 * line the version is "sha256:" and the first 12 hex digits of the
 * file's SHA-256. Pure: bytes in, policy out; no I/O, no logging.
 */
#ifndef GK_HOSTPOLICY_H
#define GK_HOSTPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/policy/gk_policy.h"

#define GK_HOSTPOLICY_MAX		(256 * 1024)	/* bytes in a file */
#define GK_HOSTPOLICY_VERSION_MAX	64		/* printable ASCII */

struct gk_hostpolicy {
	struct gk_allowlist	*deny;		/* never NULL once parsed */
	struct gk_allowlist	*bound;		/* NULL: no `allow` line */
	char			 version[GK_HOSTPOLICY_VERSION_MAX + 1];
};

/*
 * Parse a policy file's bytes. `name` names the file in messages
 * ("NAME:LINE: invalid pattern ...", "NAME:LINE: unknown directive ...").
 * 0, or -1 with one message in err (out then holds nothing to clear).
 */
int		 gk_hostpolicy_parse(const uint8_t *buf, size_t len,
		    const char *name, struct gk_hostpolicy *out, char *err,
		    size_t errlen);
void		 gk_hostpolicy_clear(struct gk_hostpolicy *p);

/*
 * Does the policy deny `name` (need not be normalized) on `port`? For a
 * connection (port != 0): a deny pattern covers the name on any port or
 * on that one. For a lookup (port 0): a deny pattern covers the name on
 * every port (a port-bound deny leaves the name's other ports, and so
 * its lookup, alone). NULL p denies nothing.
 */
bool		 gk_hostpolicy_denies_name(const struct gk_hostpolicy *p,
		    const char *name, size_t len, uint16_t port);
/* The same for an address (CIDR deny patterns). */
bool		 gk_hostpolicy_denies_addr(const struct gk_hostpolicy *p,
		    const struct gk_addr *a, uint16_t port);
/*
 * Is `pat` within the bound: does some `allow` pattern cover everything
 * pat allows (every name, every address, on every port pat allows)?
 * True when there is no bound (or p is NULL).
 */
bool		 gk_hostpolicy_within(const struct gk_hostpolicy *p,
		    const struct gk_pattern *pat);
/* Which patterns of al are outside the bound: their texts, ", "-joined
 * into buf (cut to fit); returns how many. */
size_t		 gk_hostpolicy_outside(const struct gk_hostpolicy *p,
		    const struct gk_allowlist *al, char *buf, size_t buflen);

/*
 * May an asking cage be asked about `name` on `port` (0: on some port:
 * a lookup's placeholder)? Not what the policy denies, nor what its bound
 * could not let a cage allow.
 */
static inline bool
gk_hostpolicy_may_ask(const struct gk_hostpolicy *p, const char *name,
    size_t len, uint16_t port)
{
	if (p == NULL)
		return true;
	if (gk_hostpolicy_denies_name(p, name, len, port))
		return false;
	return p->bound == NULL || gk_allow_name(p->bound, name, len, port);
}

#endif /* GK_HOSTPOLICY_H */
