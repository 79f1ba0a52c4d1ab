/*
 * gk_cgsd: cages' cgroups as systemd scope units, on a host where
 * systemd manages cgroups (PID 1, pure cgroup v2).
 *
 * Each cage is a transient scope `cage-....scope` in a slice of its own
 * (`gatekeeper.slice` by default), made through systemd's manager API
 * (StartTransientUnit, as `systemd-run --scope` does): systemd, not
 * gatekeeperd, moves the cage's first process in, so the move works for
 * any user's process without CAP_SYS_NICE (the cpuset check), and the
 * cages live outside gatekeeperd's own unit, where its restart cannot
 * collide with them. Limits are the scope's properties (MemoryMax=,
 * MemorySwapMax=, TasksMax=, CPUQuota=); systemd removes a scope once
 * its processes are gone.
 *
 * The connection is systemd's private socket (/run/systemd/private, root
 * only, no bus daemon needed), else the system bus; it runs on the event
 * loop, never blocking it, but for gk_cgsd_open() and
 * gk_cgsd_unit_stopping() (start-up and shutdown).
 */
#ifndef GK_CGSD_H
#define GK_CGSD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gatekeeper/policy/gk_rlimits.h"

struct event_base;
struct gk_cgsd;
struct gk_cgsd_job;

/*
 * Whether systemd manages this host's cgroups as we need: YES when booted
 * with it, cgroup v2 alone and its PID namespace ours; PIDNS when all but
 * the last (it cannot place our pids: gk_cgown.c's case); NO otherwise.
 * Not YES: with why.
 */
enum gk_cgsd_fit { GK_CGSD_NO, GK_CGSD_YES, GK_CGSD_PIDNS };
enum gk_cgsd_fit gk_cgsd_usable(bool unified_only, char *why,
		    size_t whylen);
/* Connect. NULL with why. */
struct gk_cgsd	*gk_cgsd_open(struct event_base *base, char *why,
		    size_t whylen);
/* Pending starts are dropped (their callbacks never come). NULL fine. */
void		 gk_cgsd_close(struct gk_cgsd *sd);

/* "gatekeeper" -> "gatekeeper.slice", systemd's escaping for anything
 * but [A-Za-z0-9:_.] (so a '-' does not nest it in another slice). */
bool		 gk_cgsd_slice_name(const char *name, char *out, size_t len);
/* prefix, then name escaped as above, then suffix ("gatekeeperd-",
 * "gk-test", ".scope" -> "gatekeeperd-gk\x2dtest.scope"); false if it
 * does not fit or name is empty or starts with a dot. */
bool		 gk_cgsd_unit_name(const char *prefix, const char *name,
		    const char *suffix, char *out, size_t len);

/*
 * Our own process into delegated scope `unit` (Delegate=yes, systemd's
 * default slice), made for it or, when there (an earlier gatekeeperd's),
 * joined in its "/daemon". Synchronous, each call bounded; the move is
 * systemd's job, done shortly after: the caller waits for it. 0, or -1
 * with why.
 */
int		 gk_cgsd_own_scope(const char *unit, char *why, size_t whylen);

/*
 * rc 0 (the process is in the scope) or -1 with a message; called once,
 * from the loop, unless the job was cancelled.
 */
typedef void	(*gk_cgsd_done_cb)(void *arg, int rc, const char *err);

/*
 * Start scope `unit` in `slice` holding process pid, limited by l,
 * described by desc. `kill` is the scope's cgroup.kill: written if the
 * job is cancelled before it ends (the process must not outlive its
 * cage). NULL with err when the request cannot be sent.
 */
struct gk_cgsd_job *gk_cgsd_scope_start(struct gk_cgsd *sd,
		    const char *unit, const char *slice, const char *desc,
		    pid_t pid, const struct gk_rlimits *l, const char *kill,
		    gk_cgsd_done_cb done, void *arg, char *err, size_t errlen);
/* No callback; when the job ends, the scope's processes are killed. */
void		 gk_cgsd_job_cancel(struct gk_cgsd_job *j);

/*
 * Is our own unit being stopped (a stop job, not a restart)? 1 yes, 0 no
 * (a restart, no job: a crash, `systemctl kill`, not a unit), -1 unknown.
 * Blocks (at most 2 s): for shutdown only.
 */
int		 gk_cgsd_unit_stopping(struct gk_cgsd *sd);
/* Stop the slice (its scopes' processes are killed by systemd); not
 * waited for. */
void		 gk_cgsd_slice_stop(struct gk_cgsd *sd, const char *slice);

#endif /* GK_CGSD_H */
