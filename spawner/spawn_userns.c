/*
 * User namespaces: gk-run's child makes one (gated), bwrap makes one in
 * every mode, and hosts restrict them in several ways. When one cannot
 * be made, spawn_userns_diagnose() (pure) turns the step that failed,
 * its errno and the host's settings into one line saying what is
 * missing and how to allow it:
 *
 *   user.max_user_namespaces = 0           unshare: ENOSPC
 *   kernel.unprivileged_userns_clone = 0   unshare: EPERM (Debian's patch)
 *   kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu 23.10+):
 *     unshare fails (EPERM/EACCES), or succeeds into a namespace without
 *     capabilities, where writing uid_map fails (EPERM) and a nested
 *     unshare (bwrap's, inside the cage's namespace) fails
 *
 * The I/O half reads those settings, writes the identity maps, and
 * probes (after bwrap failed) which step fails for gk-run itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "spawner/spawn_int.h"

#define SYSCTL_KEEP	"(and in /etc/sysctl.d/ to keep it)"
#define NO_USERNS	"this host does not let unprivileged users create " \
			"user namespaces"

/* ---- the diagnosis (pure) --------------------------------------------- */

static const char *
step_what(enum spawn_userns_step step)
{
	switch (step) {
	case SPAWN_USERNS_CREATE:
		return "cannot create a user namespace";
	case SPAWN_USERNS_MAP:
		return "cannot write the user namespace's uid and gid maps";
	case SPAWN_USERNS_NESTED:
		return "cannot create a nested user namespace (as bwrap "
		    "does in the cage's)";
	}
	return "cannot create a user namespace";
}

/* ENOSPC: a limit, or the nesting depth. */
static void
diagnose_nospace(enum spawn_userns_step step,
    const struct spawn_userns_host *h, char *msg, size_t len)
{
	if (h->max_user == 0)
		gk_seterr(msg, len, NO_USERNS " (user.max_user_namespaces = "
		    "0); gk-run needs them: sysctl -w "
		    "user.max_user_namespaces=15000 " SYSCTL_KEEP);
	else if (h->max_net == 0 && step == SPAWN_USERNS_CREATE)
		gk_seterr(msg, len, "this host does not let unprivileged "
		    "users create network namespaces (user.max_net_namespaces"
		    " = 0); gk-run needs them: sysctl -w "
		    "user.max_net_namespaces=15000 " SYSCTL_KEEP);
	else if (h->max_user > 0)
		gk_seterr(msg, len, "%s: %s (the limit user."
		    "max_user_namespaces = %ld is used up, or namespaces are "
		    "nested 32 deep); raise it: sysctl -w "
		    "user.max_user_namespaces=15000 " SYSCTL_KEEP,
		    step_what(step), strerror(ENOSPC), h->max_user);
	else
		gk_seterr(msg, len, "%s: %s (a limit on namespaces is used "
		    "up, or they are nested 32 deep); see sysctl user.max_"
		    "user_namespaces and user.max_net_namespaces",
		    step_what(step), strerror(ENOSPC));
}

/* EPERM, EACCES: a policy of the host, AppArmor's or Debian's. */
static void
diagnose_denied(enum spawn_userns_step step, int err,
    const struct spawn_userns_host *h, char *msg, size_t len)
{
	if (h->aa_restrict == 1)
		gk_seterr(msg, len, NO_USERNS " (AppArmor restricts them: "
		    "kernel.apparmor_restrict_unprivileged_userns = 1, and "
		    "gk-run runs %s); install the profile: apparmor_parser "
		    "-r %s (shipped with gatekeeper), or allow them to every "
		    "program: sysctl -w kernel.apparmor_restrict_"
		    "unprivileged_userns=0 " SYSCTL_KEEP,
		    h->aa_confined ? "under a profile that does not allow "
		    "them" : "without a profile that allows them",
		    h->profile);
	else if (h->clone == 0 && step == SPAWN_USERNS_CREATE)
		gk_seterr(msg, len, NO_USERNS " (kernel.unprivileged_userns_"
		    "clone = 0); gk-run needs them: sysctl -w "
		    "kernel.unprivileged_userns_clone=1 " SYSCTL_KEEP);
	else if (step == SPAWN_USERNS_MAP)
		gk_seterr(msg, len, "%s: %s (the new namespace has no "
		    "capabilities: is a security module or the container "
		    "gk-run runs in restricting user namespaces? gk-run "
		    "needs them)", step_what(step), strerror(err));
	else
		gk_seterr(msg, len, "%s: %s (user namespaces are forbidden "
		    "here, maybe by the container or sandbox gk-run runs in, "
		    "or a security module; gk-run needs them: run it where "
		    "they are allowed)", step_what(step), strerror(err));
}

void
spawn_userns_diagnose(enum spawn_userns_step step, int err,
    const struct spawn_userns_host *h, char *msg, size_t len)
{
	if (err == ENOSPC && step != SPAWN_USERNS_MAP)
		diagnose_nospace(step, h, msg, len);
	else if (err == EPERM || err == EACCES)
		diagnose_denied(step, err, h, msg, len);
	else if (err == EINVAL && step == SPAWN_USERNS_CREATE &&
	    h->max_user == -1)
		gk_seterr(msg, len, "%s: %s (this kernel has no user "
		    "namespaces, CONFIG_USER_NS; gk-run needs a kernel with "
		    "them)", step_what(step), strerror(err));
	else
		gk_seterr(msg, len, "%s: %s", step_what(step),
		    strerror(err));
}

/* ---- the host --------------------------------------------------------- */

long
spawn_sysctl_long(const char *path)
{
	char buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || v < 0)
		return -1;
	return v;
}

/* Does AppArmor confine us ("unconfined": no; "gk-run (unconfined)",
 * a named profile: yes)? Its own attribute file only: the generic
 * /proc/self/attr/current may be another module's. */
static bool
apparmor_confined(void)
{
	char buf[256];
	ssize_t n;
	int fd;

	if ((fd = open("/proc/self/attr/apparmor/current",
	    O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, "unconfined") != 0;
}

void
spawn_userns_host_read(struct spawn_userns_host *h)
{
	h->max_user = spawn_sysctl_long("/proc/sys/user/max_user_namespaces");
	h->max_net = spawn_sysctl_long("/proc/sys/user/max_net_namespaces");
	h->aa_restrict = spawn_sysctl_long(
	    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	h->clone = spawn_sysctl_long("/proc/sys/kernel/unprivileged_userns_clone");
	h->aa_confined = apparmor_confined();
	h->profile = GK_APPARMOR_PROFILE;
}

void
spawn_userns_explain(enum spawn_userns_step step, int err, char *msg,
    size_t len)
{
	struct spawn_userns_host h;

	spawn_userns_host_read(&h);
	spawn_userns_diagnose(step, err, &h, msg, len);
}

/* ---- the maps and the probe ------------------------------------------- */

static int
write_file(const char *path, const char *s)
{
	ssize_t n = (ssize_t)strlen(s);
	int fd, e;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write(fd, s, (size_t)n) != n) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

int
spawn_userns_map(uid_t uid, gid_t gid)
{
	char map[64];

	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (write_file("/proc/self/uid_map", map) == -1)
		return -1;
	if (write_file("/proc/self/setgroups", "deny") == -1 && errno != ENOENT)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	return write_file("/proc/self/gid_map", map);
}

/* The probe's child: each step as the sandbox takes it; what failed. */
static void __attribute__((noreturn))
probe_child(int fd)
{
	uid_t uid = getuid();	/* outside: 65534 once unshared */
	gid_t gid = getgid();
	int r[2] = { -1, 0 };

	if (unshare(CLONE_NEWUSER) == -1)
		r[0] = SPAWN_USERNS_CREATE;
	else if (spawn_userns_map(uid, gid) == -1)
		r[0] = SPAWN_USERNS_MAP;
	else if (unshare(CLONE_NEWUSER) == -1)
		r[0] = SPAWN_USERNS_NESTED;
	r[1] = errno;
	_exit(write(fd, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

int
spawn_userns_probe(char *msg, size_t len)
{
	int p[2], r[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return 0;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		close(p[0]);
		probe_child(p[1]);
	}
	close(p[1]);
	do
		n = read(p[0], r, sizeof(r));
	while (n == -1 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(r) || r[0] < SPAWN_USERNS_CREATE ||
	    r[0] > SPAWN_USERNS_NESTED)
		return 0;	/* they work, or we cannot tell */
	spawn_userns_explain((enum spawn_userns_step)r[0], r[1], msg, len);
	return -1;
}
