/*
 * gk_plumb: the daemon's kernel plumbing for namespace cages (nft/),
 * wired to the control socket's hooks. Part of the gatekeeperd
 * executable, not of the core library.
 */
#ifndef GK_PLUMB_H
#define GK_PLUMB_H

#include <stddef.h>

struct event_base;
struct gk_conf;
struct gk_cage_plumbing;
struct gk_plumb;
struct gk_cage_table;
struct proxy_ctx;

/*
 * Per --plumbing: off, or auto with --listen outside --cage-subnet: 0 and
 * *out NULL (logged). Else set up the nftables table and sweep leftover
 * links: 0 with *out, or -1 with a message in err.
 */
int	gk_plumb_start(struct gk_plumb **out, struct event_base *base,
	    const struct gk_conf *c, char *err, size_t errlen);
/*
 * Once the cage table and the proxies exist: copy transparent cages' pins
 * to the kernel, and record the connections it refuses as denials (a
 * log group; if it cannot be had, logged, and they are not reported).
 */
void	gk_plumb_attach(struct gk_plumb *p, struct gk_cage_table *cages,
	    const struct proxy_ctx *ctx);
/* The control socket's hooks for a started plumbing. */
void	gk_plumb_hooks(struct gk_plumb *p, const struct gk_conf *c,
	    struct gk_cage_plumbing *h);
/* After the cages are gone: finish teardowns, remove links and table. */
void	gk_plumb_stop(struct gk_plumb *p);

#endif /* GK_PLUMB_H */
