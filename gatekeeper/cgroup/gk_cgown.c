/*
 * gk_cgown: a delegated scope of gatekeeperd's own, asked of systemd at
 * start, where systemd manages the host's cgroups but cannot make a
 * scope per cage for us: gatekeeperd runs in a PID namespace of its own
 * (a container without its own systemd, `unshare --pid`, the suite's
 * tests), so the pids it would name mean nothing to systemd.
 *
 * Without it, gatekeeperd's cgroup is whatever unit started it (a login
 * session's scope, most often): systemd's, not ours. Its children can be
 * made, but no controller can be enabled there while the session's own
 * processes sit in it, so no cage could be limited. So we ask systemd for
 * `gatekeeperd-<subtree>.scope` with Delegate=yes (its subtree is ours),
 * in systemd's default slice (a slice of its own would outlive us, and
 * the cages' slice is the unit's to stop), holding ourselves
 * (gk_cgsd_own_scope(): StartTransientUnit with the PID 0, which systemd
 * reads as the caller, whose pid it knows from the socket in its own
 * namespace). If the scope is there already (an earlier gatekeeperd of
 * the same subtree, whose cages it may still hold and our start-up sweep
 * ends), we join it. The cages' cgroups are then made below it by
 * cgroupfs as on any delegated host.
 *
 * Synchronous, at start only; each call and the wait bounded.
 */
#include <sys/xattr.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"
#include "gatekeeper/cgroup/gk_cgsd.h"

#define OWN_WAIT_MS	15000
#define OWN_POLL_MS	10

/* Is dir a cgroup systemd delegated (its "trusted.delegate" mark, from
 * systemd 251 on; a unit with Delegate=yes)? */
static bool
delegated(const char *dir)
{
	char v[8];
	ssize_t n;

	n = getxattr(dir, "trusted.delegate", v, sizeof(v) - 1);
	if (n <= 0)
		n = getxattr(dir, "user.delegate", v, sizeof(v) - 1);
	return n == 1 && v[0] == '1';
}

bool
cg_own_unit(const char *subtree, char *unit, size_t ulen)
{
	return gk_cgsd_unit_name("gatekeeperd-", subtree, ".scope", unit,
	    ulen);
}

/* Wait (bounded) until /proc/self/cgroup's v2 line is in unit; its path
 * to the scope into own. 0, or -1 with why. */
static int
own_wait(const char *unit, char *own, size_t ownlen, char *why,
    size_t whylen)
{
	struct timespec ts = { 0, OWN_POLL_MS * 1000000L };
	struct gk_cg_self self;
	char buf[CG_FILE_MAX];
	int waited;

	for (waited = 0; waited <= OWN_WAIT_MS; waited += OWN_POLL_MS) {
		if (cg_read_file("/proc/self/cgroup", buf, sizeof(buf)) > 0) {
			gk_cg_self_parse(buf, strlen(buf), &self);
			if (gk_cg_in_unit(self.v2, unit, own, ownlen))
				return 0;
		}
		nanosleep(&ts, NULL);
	}
	return gk_seterr(why, whylen, "systemd took gatekeeperd's scope %s "
	    "but did not move it there within %d s", unit, OWN_WAIT_MS / 1000);
}

int
cg_own_scope(const char *mnt, const char *subtree, struct gk_cg_self *self,
    char *why, size_t whylen)
{
	char dir[GK_CG_PATH_MAX * 2], unit[CG_DIR_MAX + 96];

	snprintf(dir, sizeof(dir), "%s%s", mnt, self->v2);
	if (self->v2[0] != '\0' && strcmp(self->v2, "/") != 0 &&
	    delegated(dir))
		return 0;		/* ours already */
	if (!cg_own_unit(subtree, unit, sizeof(unit)))
		return gk_seterr(why, whylen, "cgroup name \"%s\" too long",
		    subtree);
	if (gk_cgsd_own_scope(unit, why, whylen) == -1 ||
	    own_wait(unit, self->v2, sizeof(self->v2), why, whylen) == -1)
		return -1;
	log_info("cgroup: gatekeeperd runs in a PID namespace of its own: "
	    "systemd gave it the delegated scope %s for its cages", unit);
	return 0;
}
