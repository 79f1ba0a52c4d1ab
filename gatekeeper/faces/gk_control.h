/*
 * gk_control: the control socket (DESIGN.md, "Control socket"). A unix
 * stream socket, mode 0660, group "gatekeeper" when that group exists.
 * Peers are authenticated at accept (gk_peer.h): they must share
 * gatekeeperd's user namespace and not run inside a cage, and be root,
 * the daemon's own uid, or a member of group "gatekeeper". The protocol is newline-delimited
 * JSON (gk_ctlreq.h), one reply line per request, in order.
 *
 * A cage lives exactly as long as the connection that created it. The
 * plumbing and containment of namespace cages are the cage table's facets
 * (gatekeeper/cage/gk_plumb_facet.h, gk_contain_facet.h).
 */
#ifndef GK_CONTROL_H
#define GK_CONTROL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_peer.h"
#include "gatekeeper/policy/gk_proto.h"

#define GK_CONTROL_CONNS_DEFAULT 1024	/* until gk_control_set_max() */

struct event_base;
struct gk_cage;
struct gk_cage_table;
struct gk_audit;
struct json_object;

struct gk_control;

/*
 * Create the socket at `path` (and its parent directory, 0755, if
 * missing). A stale socket nobody answers on is replaced; a live one
 * (another gatekeeperd) or a non-socket file is an error. `audit` may be
 * NULL. On error returns NULL with a message in err.
 */
struct gk_control *gk_control_new(struct event_base *base, const char *path,
		    struct gk_cage_table *cages, struct gk_audit *audit,
		    char *err, size_t errlen);
/*
 * Close every connection, destroying the cages they hold (audit reason
 * "shutdown"), and remove the socket. Accepts NULL.
 */
void		 gk_control_free(struct gk_control *c);
size_t		 gk_control_nconns(const struct gk_control *c);
/*
 * At most `max` connections open at once (control-connections); past it
 * a new peer gets one line naming the limit and the key, and the
 * connection closes. Lowering it closes no open connection.
 */
void		 gk_control_set_max(struct gk_control *c, uint32_t max);

/*
 * The "reload" request (root only): what SIGHUP does. fn returns 0 with
 * the running host policy's version (or "none") in `policy`, or -1 with
 * why nothing changed in err.
 */
struct gk_ctl_reload {
	void	*arg;
	int	(*fn)(void *arg, char *policy, size_t policylen, char *err,
		    size_t errlen);
};
void		 gk_control_set_reload(struct gk_control *c,
		    const struct gk_ctl_reload *h);

#endif /* GK_CONTROL_H */
