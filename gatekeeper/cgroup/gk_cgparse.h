/*
 * gk_cgparse: the text gatekeeperd reads to find and use cgroups, parsed
 * by pure functions over bounded buffers (no I/O): /proc/self/mountinfo
 * (where the v2 hierarchy and the v1 memory, pids and cpu controllers
 * are mounted), /proc/self/cgroup (our own place in each), "key value"
 * counter files (memory.events, memory.oom_control, pids.events),
 * /proc/PID/stat (parent and start time) and the names of cage cgroups.
 */
#ifndef GK_CGPARSE_H
#define GK_CGPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GK_CG_PATH_MAX	512

enum gk_cg_ctl {
	GK_CG_MEMORY,
	GK_CG_PIDS,
	GK_CG_CPU,
	GK_CG__CTLS
};

/* Mount points ("" when absent). A v1 hierarchy counts only when its
 * root is mounted (mountinfo's root field "/"). */
struct gk_cg_mounts {
	char	 v2[GK_CG_PATH_MAX];
	char	 v1[GK_CG__CTLS][GK_CG_PATH_MAX];
};

/* Our own cgroup in each ("" when not listed). */
struct gk_cg_self {
	char	 v2[GK_CG_PATH_MAX];
	char	 v1[GK_CG__CTLS][GK_CG_PATH_MAX];
};

const char	*gk_cg_ctl_name(enum gk_cg_ctl c);	/* "memory"... */

/*
 * /proc/self/mountinfo: the first cgroup2 mount, and for each controller
 * the first cgroup (v1) mount whose super options name it. Octal escapes
 * (\040) in mount points are decoded; a mount point that does not fit is
 * skipped. Returns the number of lines that could not be read (0: all).
 */
size_t		 gk_cg_mounts_parse(const char *text, size_t len,
		    struct gk_cg_mounts *m);
/* /proc/self/cgroup ("0::/path", "4:memory:/path", "2:cpu,cpuacct:/").
 * Returns the number of lines that could not be read. */
size_t		 gk_cg_self_parse(const char *text, size_t len,
		    struct gk_cg_self *s);
/* The value of the line "key N" in a counter file: 0, or -1 if absent or
 * not a number. */
int		 gk_cg_counter(const char *text, size_t len, const char *key,
		    uint64_t *out);
/* /proc/PID/stat: its parent (field 4) and start time in clock ticks
 * (field 22), read after the last ')' (a name may hold anything). 0 or
 * -1. */
int		 gk_proc_stat_parse(const char *text, size_t len, pid_t *ppid,
		    uint64_t *start);

/*
 * A cage's cgroup is named after the cage and its owner (the gk-run that
 * created it, known by pid and start time, so a reused pid does not
 * pass for it, and the pid namespace those pids are of, identified by
 * its inode): "cage-<id>-<pidns>-<pid>-<start>". gk_cg_name() writes it
 * (false if it does not fit); gk_cg_name_parse() reads one back (false if
 * the name is not of that form).
 */
#define GK_CG_NAME_MAX	64
struct gk_cg_owner {
	uint64_t	 pidns;
	pid_t		 pid;
	uint64_t	 start;
};
bool		 gk_cg_name(char *buf, size_t len, const char *id,
		    const struct gk_cg_owner *o);
bool		 gk_cg_name_parse(const char *name, char *id, size_t idlen,
		    struct gk_cg_owner *o);
/* A systemd scope's directory is its unit, "NAME.scope": the length of
 * NAME, or 0 when dir has no such suffix (or nothing before it). */
#define GK_CG_SCOPE	".scope"
size_t		 gk_cg_unscope(const char *dir);

/*
 * Is path (a cgroup path of /proc/PID/cgroup) in unit, one of its
 * components ("/system.slice/u.scope/daemon" is in "u.scope")? Then its
 * path through that component goes into out: true. False if not, or if
 * out (len) is too small.
 */
bool		 gk_cg_in_unit(const char *path, const char *unit, char *out,
		    size_t len);

#endif /* GK_CGPARSE_H */
