/*
 * gk_control: the control socket (DESIGN.md, "Control socket"). A unix
 * stream socket, mode 0660, group "gatekeeper" when that group exists.
 * Peers are authenticated at accept (gk_peer.h): they must share
 * gatekeeperd's user namespace and not run inside a cage, and be root,
 * the daemon's own uid, or a member of group "gatekeeper". The protocol is newline-delimited
 * JSON (gk_ctlreq.h), one reply line per request, in order.
 *
 * A cage lives exactly as long as the connection that created it.
 */
#ifndef GK_CONTROL_H
#define GK_CONTROL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_peer.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/policy/gk_rlimits.h"

#define GK_CONTROL_CONNS_MAX	1024	/* concurrent connections */

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
 * Kernel plumbing for cages created with a network namespace
 * ({"op":"cage.create","netns":true,...} with the namespace fd passed as
 * SCM_RIGHTS on the request line). main.c fills it from nft/; without it
 * such requests are refused with a message.
 */
struct gk_ctl_plumb {
	void	*arg;
	/* Validate `nsfd` for a peer with `uid`, take a cage address and
	 * plumb the namespace (with `transparent`, its TCP to the addresses
	 * its DNS answers give it goes to the transparent proxy, and with
	 * `open` too, for CIDR allowlists, its TCP to any address): 0 with
	 * *addr and *link (the host link's index, for the kernel's copy
	 * of its pins; 0: none) set, or -1 with a message. The fd stays
	 * the caller's. */
	int	(*up)(void *arg, int nsfd, uid_t uid, bool transparent,
		    bool open, struct gk_addr *addr, uint32_t *link,
		    char *err, size_t errlen);
	/* The cage's allowlist gained a CIDR pattern: up() with `open`. */
	void	(*open)(void *arg, const struct gk_addr *addr);
	/* Undo up() (asynchronously; the address is reused only after). */
	void	(*down)(void *arg, const struct gk_addr *addr);
	/* Whether `addr` is in the pool up() hands out ("source" cages may
	 * not take one). */
	bool	(*owns)(void *arg, const struct gk_addr *addr);
	/* Whether a peer in network namespace `netns` runs inside a
	 * plumbed cage: such peers are refused (a sandboxed program must
	 * not make itself cages). */
	bool	(*peer_in_cage)(void *arg, const struct gk_ns_id *netns);
	/* Endpoints a plumbed cage reaches, for the create reply. */
	char	 gateway[GK_ADDR_STRLEN];
	char	 dns[GK_ADDR_STRLEN + 8];
	char	 socks[GK_ADDR_STRLEN + 8];
	char	 http[GK_ADDR_STRLEN + 8];
	char	 transparent[GK_ADDR_STRLEN + 8];	/* "" when off */
};
void		 gk_control_set_plumb(struct gk_control *c,
		    const struct gk_ctl_plumb *p);

/*
 * Containment of namespace cages' processes (gk_contain.c, with
 * gatekeeper/cgroup/). Without it cages have no cgroup, "limits" are
 * refused (unless best_effort) and cage.attach answers that processes
 * are not contained.
 */
typedef void	(*gk_ctl_attach_done)(void *arg, struct gk_cage *c, int rc,
		    const char *err);
struct gk_ctl_contain {
	void	*arg;
	/* A namespace cage was made for peer `owner`: its cgroup, with
	 * limits l (if some cannot be enforced: -1 with a message, unless
	 * best_effort); or, with `adopt` (a reattach), the existing cgroup
	 * of that name if `owner` made it. Keeps its record in c->cg. 0 or
	 * -1. */
	int	(*create)(void *arg, struct gk_cage *c, pid_t owner,
		    const struct gk_rlimits *l, bool best_effort,
		    const char *adopt, char *err, size_t errlen);
	/* cage.attach: the process of `pidfd`, a child of peer `owner`
	 * with uid `uid`, into c's cgroup. 0 done, -1 with a message, or
	 * 1 under way: done(done_arg, c, rc, err) follows from the loop,
	 * unless c ends first. */
	int	(*attach)(void *arg, struct gk_cage *c, int pidfd,
		    pid_t owner, uid_t uid, gk_ctl_attach_done done,
		    void *done_arg, char *err, size_t errlen);
	/* c ends: its processes are killed, its cgroup goes. */
	void	(*end)(void *arg, struct gk_cage *c);
	/* Before a reply to c's owner: c's limit events so far are
	 * counted and told (so they come before the reply). */
	void	(*poll)(void *arg, struct gk_cage *c);
	/* What the create reply says of it: {"kill":PATH,"limits":{...},
	 * ...}, or NULL (not contained). */
	struct json_object *(*describe)(void *arg, const struct gk_cage *c);
};
void		 gk_control_set_contain(struct gk_control *c,
		    const struct gk_ctl_contain *h);

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
