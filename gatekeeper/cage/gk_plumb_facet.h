/*
 * gk_plumb_facet: a namespace cage's network (the plumbing facet,
 * gk_facet.h). Its begin hands the namespace passed with cage.create to
 * the daemon's plumbing (gatekeeper/gk_plumb.c, from nft/), which gives
 * the cage its address; its end takes the plumbing down. A cage named by
 * a source address has nothing here.
 */
#ifndef GK_PLUMB_FACET_H
#define GK_PLUMB_FACET_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_peer.h"

struct gk_cage;
struct gk_cage_spec;
struct gk_cage_table;

/* The daemon's plumbing, given to the table (gk_plumb_facet_set). */
struct gk_cage_plumbing {
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

/* Without it (NULL) namespace cages are refused with a message. */
void		 gk_plumb_facet_set(struct gk_cage_table *t,
		    const struct gk_cage_plumbing *p);
const struct gk_cage_plumbing *gk_plumb_facet(const struct gk_cage_table *t);

/* The facet: a netns spec is plumbed (its nsfd, uid, transparent, and
 * whether its allowlist has a CIDR pattern). */
int		 gk_plumb_facet_begin(struct gk_cage *c,
		    const struct gk_cage_spec *s, char *err, size_t errlen);
void		 gk_plumb_facet_end(struct gk_cage *c, const char *reason);

/* Is c plumbed (a namespace cage)? */
bool		 gk_cage_plumbed(const struct gk_cage *c);
/* Its host link's index (0: none): the kernel keeps a copy of its pins. */
uint32_t	 gk_cage_plumb_link(const struct gk_cage *c);
/* c's allowlist now has a CIDR pattern: its TCP to any address is
 * carried to the transparent proxy too. */
void		 gk_cage_plumb_open(struct gk_cage *c);

#endif /* GK_PLUMB_FACET_H */
