/*
 * gk_cgroup: a cgroup per namespace cage, so that the cage owns its
 * processes: they are put in it before the command runs, limited there
 * (memory, pids, cpu), and killed all at once when the cage ends.
 *
 * Layouts (found at start from /proc/self/mountinfo and /proc/self/cgroup):
 *  - systemd as PID 1 with cgroup v2 alone (a stock systemd host): a
 *    transient scope unit per cage in <subtree>.slice (gk_cgsd.h), made
 *    and limited by systemd, cgroup.kill for the end;
 *  - cgroup v2 with controllers, without systemd: everything in one
 *    directory per cage under <our cgroup>/<subtree>/, cgroup.kill for
 *    the end;
 *  - hybrid (v1 controllers, an empty v2 hierarchy, e.g. at
 *    /sys/fs/cgroup/unified): the v2 directory for lifetime
 *    (cgroup.kill), one directory per cage in the v1 memory, pids and cpu
 *    hierarchies for its limits (made only when a limit asks for it);
 *  - v1 only: the v1 pids (or memory) directory for lifetime; its end
 *    kills what cgroup.procs lists until it is empty.
 * Where none can be written, gk_cg_open() says why and cages run
 * uncontained.
 *
 * A cage's directory is named after it and its owner (gk_cg_name): a
 * gatekeeperd that stops leaves cages' cgroups and processes alone, and
 * the next one sweeps those whose owner is gone (gk_cg_sweep).
 *
 * Threads: the loop's. Removal after a kill waits for the processes to
 * exit: retried from a timer on the loop, never blocking it.
 */
#ifndef GK_CGROUP_H
#define GK_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gatekeeper/cgroup/gk_cgparse.h"
#include "gatekeeper/policy/gk_rlimits.h"

struct event_base;
struct gk_cg;
struct gk_cg_cage;

/*
 * Find the hierarchies and make (or reuse) the subtree `subtree` (a
 * single path component) in each usable one. NULL with `why` (one line:
 * what is missing) when no cage can be contained.
 */
struct gk_cg	*gk_cg_open(struct event_base *base, const char *subtree,
		    char *why, size_t whylen);
/* Cages' cgroups and processes are left alone; pending removals are
 * tried once more. NULL is fine. */
void		 gk_cg_close(struct gk_cg *g);
/* Which limits can be enforced: bits (1 << GK_CG_MEMORY) etc. */
unsigned	 gk_cg_can_limit(const struct gk_cg *g);
/* The first limit l asks for that cannot be enforced here ("memory",
 * "pids", "cpu"), or NULL. */
const char	*gk_cg_lacking(const struct gk_cg *g,
		    const struct gk_rlimits *l);
/* For the start-up log: where cages go and what limits them. */
const char	*gk_cg_describe(const struct gk_cg *g);

/*
 * A cage's cgroup(s), named `name` (gk_cg_name), with limits l (those
 * gk_cg_can_limit() lacks are refused: -1), the lifetime directory's
 * cgroup.kill given to `owner` (so gk-run can end its cage without the
 * daemon). NULL with err.
 */
struct gk_cg_cage *gk_cg_cage_new(struct gk_cg *g, const char *name,
		    const struct gk_rlimits *l, uid_t owner, char *err,
		    size_t errlen);
/* The existing cgroup `name` (a reattach after a restart): its
 * directories as they are; NULL with err when it is gone. */
struct gk_cg_cage *gk_cg_cage_adopt(struct gk_cg *g, const char *name,
		    uid_t owner, char *err, size_t errlen);
/*
 * Put process pid (and the children it makes later) in the cage: 0 done,
 * -1 with err, or 1 under way (a systemd scope): cb(arg, rc, err) comes
 * from the loop later, unless the cage ends first.
 */
typedef void	(*gk_cg_attach_cb)(void *arg, int rc, const char *err);
int		 gk_cg_cage_attach(struct gk_cg_cage *c, pid_t pid,
		    gk_cg_attach_cb cb, void *arg, char *err, size_t errlen);
/* Counters since creation: processes the memory limit killed, forks
 * the pids limit refused. 0, or -1 when none can be read. */
int		 gk_cg_cage_events(struct gk_cg_cage *c, uint64_t *oom_kills,
		    uint64_t *pids_max);
/* The owner's cgroup.kill ("" when there is none). */
const char	*gk_cg_cage_kill_path(const struct gk_cg_cage *c);
/* Kill every process in it, remove the directories (in the background
 * until they are empty, at most 10 s), free c. */
void		 gk_cg_cage_end(struct gk_cg_cage *c);
/* Free c and leave its cgroup as it is (the daemon stops). */
void		 gk_cg_cage_forget(struct gk_cg_cage *c);

/*
 * Every cage cgroup in the subtree whose owner's pids are ours (same pid
 * namespace; another gatekeeperd's, in another, are not looked at):
 * those whose owner (pid, start time) is gone are killed and removed,
 * the others left for their owner. Returns how many went.
 */
size_t		 gk_cg_sweep(struct gk_cg *g);

/* Does the service stop for good (systemd's stop job for its unit, not a
 * restart)? 1 yes, 0 no, -1 unknown. Blocks up to 2 s: at shutdown. */
int		 gk_cg_stopping(struct gk_cg *g);
/* The service stops for good: the slice of its scopes goes too. */
void		 gk_cg_retire(struct gk_cg *g);

/* Start time (clock ticks since boot) and parent of pid: 0 or -1. */
int		 gk_proc_start(pid_t pid, pid_t *ppid, uint64_t *start);
/* The owner record of pid (in our pid namespace): 0 or -1. */
int		 gk_cg_owner_of(pid_t pid, struct gk_cg_owner *o);

#endif /* GK_CGROUP_H */
