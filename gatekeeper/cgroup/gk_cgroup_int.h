/*
 * gk_cgroup_int.h: what gk_cgroup.c (the layout) and gk_cgcage.c (one
 * cage) share: the two structs and the cgroupfs file helpers.
 */
#ifndef GK_CGROUP_INT_H
#define GK_CGROUP_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/cgroup/gk_cgparse.h"
#include "gatekeeper/cgroup/gk_cgroup.h"
#include "gatekeeper/policy/gk_rlimits.h"

struct event;
struct event_base;
struct gk_cgsd;
struct gk_cgsd_job;

#define CG_FILE_MAX		8192
#define CG_MOUNTINFO_MAX	(256 * 1024)
#define CG_CPU_PERIOD		100000		/* us */
#define CG_RM_TRY_MS		20
#define CG_RM_GIVEUP_MS		10000
#define CG_KILL_ROUNDS		64		/* v1-only end */
#define CG_DIR_MAX		(GK_CG_NAME_MAX + 8)	/* a name, ".scope" */

enum cg_dir {
	CG_V2,				/* lifetime (and limits on v2) */
	CG_V1_MEMORY,
	CG_V1_PIDS,
	CG_V1_CPU,
	CG__DIRS
};

struct gk_cg {
	struct event_base	*base;
	char			 dir[CG__DIRS][GK_CG_PATH_MAX];	/* subtree
						 * per hierarchy; "" none */
	bool			 v2_limits;	/* controllers in v2 */
	char			 v2_ctl[128];	/* its subtree_control */
	unsigned		 can;		/* limits that work */
	char			 desc[512];
	struct event		*rm_ev;
	TAILQ_HEAD(, gk_cg_cage) dying;
	struct gk_cgsd		*sd;		/* systemd's scopes, or NULL */
	char			 slice[GK_CG_NAME_MAX * 4 + 8];
};

struct cg_move;

struct gk_cg_cage {
	TAILQ_ENTRY(gk_cg_cage)	 entry;
	struct gk_cg		*g;
	char			 name[CG_DIR_MAX + 1];	/* its directory */
	bool			 made[CG__DIRS];
	char			 kill[GK_CG_PATH_MAX + CG_DIR_MAX + 16];
	uint64_t		 dying_since;	/* gk_clock_ms */
	/* a systemd scope: what it is started with, and its start */
	struct gk_rlimits	 lim;
	uid_t			 owner;
	struct gk_cgsd_job	*job;
	gk_cg_attach_cb		 cb;
	void			*cb_arg;
	struct cg_move		*move;		/* a move under way, or NULL */
};

/*
 * gk_cgmove.c: pid written to cgroup.procs of each of c's directories on
 * a thread of its own (the kernel makes a move wait for an RCU grace
 * period, which the loop must not); c->cb(c->cb_arg, rc, err) from the
 * loop once done, unless cancelled. 1 (under way), or -1 with err.
 */
int	 cg_move_start(struct gk_cg_cage *c, pid_t pid, char *err,
	    size_t errlen);
/* The cage ends: its move's end is not told (the thread ends alone). */
void	 cg_move_cancel(struct gk_cg_cage *c);

/* The path of file in cage c's directory of hierarchy d. */
#define CG_FILE_PATH_MAX	(GK_CG_PATH_MAX + CG_DIR_MAX + 64)
void	 cg_cage_file(const struct gk_cg_cage *c, int d, const char *file,
	    char out[CG_FILE_PATH_MAX]);
int	 cg_write_file(const char *path, const char *val, char *err,
	    size_t errlen);
/* The whole (small) file into buf, NUL-terminated: its length, or -1. */
ssize_t	 cg_read_file(const char *path, char *buf, size_t len);
bool	 cg_path2(char *out, size_t len, const char *a, const char *b);
bool	 cg_make_dir(const char *path);
/* Enable controllers ctl ("+memory +pids") for dir's children. */
bool	 cg_subtree_control(const char *dir, const char *ctl);
/* Where limit c is written: CG_V2, c's v1 directory, or -1. */
int	 cg_limit_dir(const struct gk_cg *g, enum gk_cg_ctl c);
/* Remove a cage's directories: true once all are gone. */
bool	 cg_cage_rmdirs(struct gk_cg_cage *c);
/* The removal timer's callback (g->rm_ev). */
void	 cg_rm_cb(int fd, short what, void *arg);
/*
 * gk_cgown.c: our own process into a delegated scope systemd makes for
 * it (or finds it in one already): self->v2 then names the scope. mnt is
 * the cgroup2 mount. 0, or -1 with why (self unchanged).
 */
int	 cg_own_scope(const char *mnt, const char *subtree,
	    struct gk_cg_self *self, char *why, size_t whylen);
/* Its unit's name: "gk-test" -> "gatekeeperd-gk\x2dtest.scope". */
bool	 cg_own_unit(const char *subtree, char *unit, size_t ulen);

#endif /* GK_CGROUP_INT_H */
