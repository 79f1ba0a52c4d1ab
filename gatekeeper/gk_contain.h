/*
 * gk_contain: gatekeeperd's glue between the control socket and cages'
 * cgroups (gatekeeper/cgroup/). A namespace cage gets a cgroup when it is
 * created; gk-run puts the sandbox's first process in it (cage.attach)
 * before anything runs; the cage's end kills whatever is in it. Memory
 * and pids limit events are counted, audited and told to the owner.
 * Part of the gatekeeperd executable.
 */
#ifndef GK_CONTAIN_H
#define GK_CONTAIN_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct gk_cage_table;
struct gk_conf;
struct gk_contain;
struct gk_cage_containment;

/*
 * Per the cgroup key: off, or no hierarchy can be written: 0 and *out
 * NULL (said once in the log: cages' processes are not contained). Else
 * the subtree is made, cgroups of cages whose gk-run is gone are swept,
 * and *out is set. -1 only on out of memory.
 */
int	gk_contain_start(struct gk_contain **out, struct event_base *base,
	    const struct gk_conf *c, struct gk_cage_table *cages);
void	gk_contain_hooks(struct gk_contain *k, struct gk_cage_containment *h);
/*
 * Before the cages go at shutdown. A restart (or a crash, or no service
 * manager to ask): their cgroups and processes stay, for gk-run to
 * register them again with the next gatekeeperd: true. The service is
 * stopped for good (systemd's stop job): false, and cages' processes are
 * killed as the cages go.
 */
bool	gk_contain_leave(struct gk_contain *k);
void	gk_contain_stop(struct gk_contain *k);

#endif /* GK_CONTAIN_H */
