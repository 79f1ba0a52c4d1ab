/*
 * gk_cgcage: one cage's cgroup (see gk_cgroup.h): made with its limits,
 * its first process put in (by systemd for a scope), its limit events
 * read, killed and removed at its end; and the start-up sweep of cages
 * whose gk-run is gone.
 */
#include <sys/stat.h>
#include <sys/queue.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cgroup/gk_cgroup.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"
#include "gatekeeper/cgroup/gk_cgsd.h"

bool
cg_cage_rmdirs(struct gk_cg_cage *c)
{
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 2];
	bool all = true;
	int d;

	for (d = 0; d < CG__DIRS; d++) {
		if (!c->made[d])
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->g->dir[d], c->name);
		if (rmdir(path) == 0 || errno == ENOENT)
			c->made[d] = false;
		else
			all = false;
	}
	return all;
}

/* ---- one cage ----------------------------------------------------------- */

/* Where limit `c` is written: the v2 directory, or c's v1 one. */
int
cg_limit_dir(const struct gk_cg *g, enum gk_cg_ctl c)
{
	if (g->dir[CG_V1_MEMORY + c][0] != '\0')
		return CG_V1_MEMORY + c;
	return g->v2_limits && (g->can & (1u << c)) ? CG_V2 : -1;
}

void
cg_cage_file(const struct gk_cg_cage *c, int d, const char *file,
    char out[CG_FILE_PATH_MAX])
{
	snprintf(out, CG_FILE_PATH_MAX, "%s/%s/%s", c->g->dir[d], c->name,
	    file);
}

static int
cage_write(struct gk_cg_cage *c, int d, const char *file, const char *val,
    char *err, size_t errlen)
{
	char path[CG_FILE_PATH_MAX];

	cg_cage_file(c, d, file, path);
	return cg_write_file(path, val, err, errlen);
}

/*
 * The subtree of d made again: another gatekeeperd given the same name
 * (a test's, a benchmark's) removes it when it stops and finds it empty.
 */
static bool
root_remake(struct gk_cg *g, int d)
{
	if (!cg_make_dir(g->dir[d]))
		return false;
	if (d == CG_V2 && g->v2_limits)
		(void)cg_subtree_control(g->dir[d], g->v2_ctl);
	log_warnx("cgroup: %s was removed under us (another gatekeeperd "
	    "with the same --cgroup name stopped?); made again",
	    g->dir[d]);
	return true;
}

static int
cage_mkdir(struct gk_cg_cage *c, int d, char *err, size_t errlen)
{
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 2];

	if (c->made[d])
		return 0;
	snprintf(path, sizeof(path), "%s/%s", c->g->dir[d], c->name);
	if (mkdir(path, 0755) == -1 && (errno != ENOENT ||
	    !root_remake(c->g, d) || mkdir(path, 0755) == -1)) {
		gk_seterr(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	c->made[d] = true;
	return 0;
}

static int
set_limits(struct gk_cg_cage *c, const struct gk_rlimits *l, char *err,
    size_t errlen)
{
	char v[64], e2[64];
	int d;

	if (l->memory != 0) {
		d = cg_limit_dir(c->g, GK_CG_MEMORY);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory);
		if (cage_mkdir(c, d, err, errlen) == -1 ||
		    cage_write(c, d, d == CG_V2 ? "memory.max" :
		    "memory.limit_in_bytes", v, err, errlen) == -1)
			return -1;
		/* no escape into swap (the file is absent without swap
		 * accounting: nothing to close then) */
		(void)cage_write(c, d, d == CG_V2 ? "memory.swap.max" :
		    "memory.memsw.limit_in_bytes", d == CG_V2 ? "0" : v, e2,
		    sizeof(e2));
	}
	if (l->pids != 0) {
		d = cg_limit_dir(c->g, GK_CG_PIDS);
		snprintf(v, sizeof(v), "%u", l->pids);
		if (cage_mkdir(c, d, err, errlen) == -1 ||
		    cage_write(c, d, "pids.max", v, err, errlen) == -1)
			return -1;
	}
	if (l->cpus != 0) {
		d = cg_limit_dir(c->g, GK_CG_CPU);
		if (cage_mkdir(c, d, err, errlen) == -1)
			return -1;
		if (d == CG_V2) {
			snprintf(v, sizeof(v), "%llu %d",
			    (unsigned long long)l->cpus * CG_CPU_PERIOD / 1000,
			    CG_CPU_PERIOD);
			return cage_write(c, d, "cpu.max", v, err, errlen);
		}
		snprintf(v, sizeof(v), "%d", CG_CPU_PERIOD);
		if (cage_write(c, d, "cpu.cfs_period_us", v, err, errlen) ==
		    -1)
			return -1;
		snprintf(v, sizeof(v), "%llu",
		    (unsigned long long)l->cpus * CG_CPU_PERIOD / 1000);
		return cage_write(c, d, "cpu.cfs_quota_us", v, err, errlen);
	}
	return 0;
}

struct gk_cg_cage *
gk_cg_cage_new(struct gk_cg *g, const char *name, const struct gk_rlimits *l,
    uid_t owner, char *err, size_t errlen)
{
	struct gk_cg_cage *c;
	const char *lack;
	int life;

	if ((lack = gk_cg_lacking(g, l)) != NULL) {
		gk_seterr(err, errlen, "a %s limit cannot be enforced here (no "
		    "writable %s controller)", lack, lack);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	c->g = g;
	if (g->sd != NULL) {	/* systemd makes it when its process comes */
		snprintf(c->name, sizeof(c->name), "%s%s", name, GK_CG_SCOPE);
		snprintf(c->kill, sizeof(c->kill), "%s/%s/cgroup.kill",
		    g->dir[CG_V2], c->name);
		c->lim = *l;
		c->owner = owner;
		return c;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	life = g->dir[CG_V2][0] != '\0' ? CG_V2 :
	    g->dir[CG_V1_PIDS][0] != '\0' ? CG_V1_PIDS : CG_V1_MEMORY;
	if (cage_mkdir(c, life, err, errlen) == -1 ||
	    set_limits(c, l, err, errlen) == -1)
		goto fail;
	if (life == CG_V2) {
		snprintf(c->kill, sizeof(c->kill), "%s/%s/cgroup.kill",
		    g->dir[CG_V2], c->name);
		/* gk-run ends its own cage, also without us */
		if (owner != 0 && chown(c->kill, owner, (gid_t)-1) == -1) {
			log_warn("cgroup: chown %s", c->kill);
			c->kill[0] = '\0';
		}
	}
	return c;
fail:
	(void)cg_cage_rmdirs(c);
	free(c);
	return NULL;
}

/* Which of the hierarchies have a directory `c->name`. */
static void
cage_found(struct gk_cg_cage *c)
{
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 2];
	struct stat st;
	int d;

	for (d = 0; d < CG__DIRS; d++) {
		snprintf(path, sizeof(path), "%s/%s", c->g->dir[d], c->name);
		c->made[d] = c->g->dir[d][0] != '\0' && stat(path, &st) == 0 &&
		    S_ISDIR(st.st_mode);
	}
}

struct gk_cg_cage *
gk_cg_cage_adopt(struct gk_cg *g, const char *name, uid_t owner, char *err,
    size_t errlen)
{
	struct gk_cg_cage *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	c->g = g;
	snprintf(c->name, sizeof(c->name), "%s%s", name, g->sd != NULL ?
	    GK_CG_SCOPE : "");
	cage_found(c);
	if (!c->made[CG_V2] && !c->made[CG_V1_PIDS] && !c->made[CG_V1_MEMORY]) {
		gk_seterr(err, errlen, "its cgroup %s is gone", name);
		free(c);
		return NULL;
	}
	if (c->made[CG_V2]) {
		snprintf(c->kill, sizeof(c->kill), "%s/%s/cgroup.kill",
		    g->dir[CG_V2], c->name);
		if (owner != 0 && chown(c->kill, owner, (gid_t)-1) == -1)
			c->kill[0] = '\0';
	}
	return c;
}

/* The scope's start ended: its cgroup.kill is its owner's too. */
static void
scope_done(void *arg, int rc, const char *err)
{
	struct gk_cg_cage *c = arg;

	c->job = NULL;
	if (rc == 0) {
		c->made[CG_V2] = true;
		if (c->owner != 0 && chown(c->kill, c->owner, (gid_t)-1) ==
		    -1) {
			log_warn("cgroup: chown %s", c->kill);
			c->kill[0] = '\0';
		}
	}
	c->cb(c->cb_arg, rc, err);
}

static int
scope_start(struct gk_cg_cage *c, pid_t pid, gk_cg_attach_cb cb, void *arg,
    char *err, size_t errlen)
{
	char desc[160];

	snprintf(desc, sizeof(desc), "gatekeeper cage %s of uid %u",
	    c->name, (unsigned)c->owner);
	c->cb = cb;
	c->cb_arg = arg;
	if ((c->job = gk_cgsd_scope_start(c->g->sd, c->name, c->g->slice,
	    desc, pid, &c->lim, c->kill, scope_done, c, err, errlen)) == NULL)
		return -1;
	return 1;
}

int
gk_cg_cage_attach(struct gk_cg_cage *c, pid_t pid, gk_cg_attach_cb cb,
    void *arg, char *err, size_t errlen)
{
	if (c->g->sd != NULL && !c->made[CG_V2])
		return scope_start(c, pid, cb, arg, err, errlen);
	c->cb = cb;
	c->cb_arg = arg;
	return cg_move_start(c, pid, err, errlen);
}

static int
cage_counter(struct gk_cg_cage *c, int d, const char *file, const char *key,
    uint64_t *out)
{
	char path[CG_FILE_PATH_MAX], buf[1024];
	ssize_t n;

	cg_cage_file(c, d, file, path);
	if ((n = cg_read_file(path, buf, sizeof(buf))) < 0)
		return -1;
	return gk_cg_counter(buf, (size_t)n, key, out);
}

int
gk_cg_cage_events(struct gk_cg_cage *c, uint64_t *oom_kills,
    uint64_t *pids_max)
{
	int d, got = 0;

	*oom_kills = *pids_max = 0;
	if ((d = cg_limit_dir(c->g, GK_CG_MEMORY)) >= 0 && c->made[d])
		got += cage_counter(c, d, d == CG_V2 ? "memory.events" :
		    "memory.oom_control", "oom_kill", oom_kills) == 0;
	if ((d = cg_limit_dir(c->g, GK_CG_PIDS)) >= 0 && c->made[d])
		got += cage_counter(c, d, "pids.events", "max", pids_max) == 0;
	return got > 0 ? 0 : -1;
}

const char *
gk_cg_cage_kill_path(const struct gk_cg_cage *c)
{
	return c->kill;
}

/* v1 only: SIGKILL what cgroup.procs lists until it lists nothing. */
static void
kill_listed(struct gk_cg_cage *c, int d)
{
	char path[CG_FILE_PATH_MAX], buf[CG_FILE_MAX];
	char *p, *end;
	long pid;
	int round;

	cg_cage_file(c, d, "cgroup.procs", path);
	for (round = 0; round < CG_KILL_ROUNDS; round++) {
		if (cg_read_file(path, buf, sizeof(buf)) <= 0)
			return;
		for (p = buf; *p != '\0'; p = end) {
			pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 1)
				(void)kill((pid_t)pid, SIGKILL);
			while (*end == '\n')
				end++;
		}
	}
}

static void
schedule_rm(struct gk_cg *g)
{
	struct timeval tv = { 0, CG_RM_TRY_MS * 1000 };

	evtimer_add(g->rm_ev, &tv);
}

void
cg_rm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_cg *g = arg;
	struct gk_cg_cage *c, *next;
	uint64_t now = gk_clock_ms();

	(void)fd;
	(void)what;
	for (c = TAILQ_FIRST(&g->dying); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!cg_cage_rmdirs(c) && now - c->dying_since <
		    CG_RM_GIVEUP_MS)
			continue;
		if (c->made[CG_V2] || c->made[CG_V1_PIDS] ||
		    c->made[CG_V1_MEMORY] || c->made[CG_V1_CPU])
			log_warnx("cgroup %s: still busy after %d s; left for "
			    "the next start's sweep", c->name,
			    CG_RM_GIVEUP_MS / 1000);
		TAILQ_REMOVE(&g->dying, c, entry);
		free(c);
	}
	if (!TAILQ_EMPTY(&g->dying))
		schedule_rm(g);
}

void
gk_cg_cage_end(struct gk_cg_cage *c)
{
	struct gk_cg *g;
	char err[256];

	if (c == NULL)
		return;
	g = c->g;
	cg_move_cancel(c);
	if (c->job != NULL) {	/* killed when systemd has made it */
		gk_cgsd_job_cancel(c->job);
		free(c);
		return;
	}
	if (g->sd != NULL) {	/* systemd removes the scope, once empty */
		if (c->made[CG_V2] && cage_write(c, CG_V2, "cgroup.kill", "1",
		    err, sizeof(err)) == -1 && errno != ENOENT)
			log_warnx("cgroup: %s", err);
		free(c);
		return;
	}
	if (c->made[CG_V2]) {
		if (cage_write(c, CG_V2, "cgroup.kill", "1", err,
		    sizeof(err)) == -1)
			log_warnx("cgroup: %s", err);
	} else
		kill_listed(c, c->made[CG_V1_PIDS] ? CG_V1_PIDS :
		    CG_V1_MEMORY);
	if (cg_cage_rmdirs(c)) {
		free(c);
		return;
	}
	c->dying_since = gk_clock_ms();
	TAILQ_INSERT_TAIL(&g->dying, c, entry);
	if (!evtimer_pending(g->rm_ev, NULL))
		schedule_rm(g);
}

void
gk_cg_cage_forget(struct gk_cg_cage *c)
{
	if (c != NULL && c->job != NULL)	/* half made: not kept */
		gk_cgsd_job_cancel(c->job);
	if (c != NULL)
		cg_move_cancel(c);
	free(c);
}

/* ---- start-up sweep and processes --------------------------------------- */

int
gk_proc_start(pid_t pid, pid_t *ppid, uint64_t *start)
{
	char path[64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((n = cg_read_file(path, buf, sizeof(buf))) <= 0)
		return -1;
	return gk_proc_stat_parse(buf, (size_t)n, ppid, start);
}

static uint64_t
own_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

int
gk_cg_owner_of(pid_t pid, struct gk_cg_owner *o)
{
	pid_t ppid;

	o->pid = pid;
	o->pidns = own_pidns();
	return gk_proc_start(pid, &ppid, &o->start);
}

size_t
gk_cg_sweep(struct gk_cg *g)
{
	char id[GK_CG_NAME_MAX + 1], bare[CG_DIR_MAX + 1];
	struct gk_cg_owner o, now;
	struct gk_cg_cage *c;
	struct dirent *de;
	uint64_t ns = own_pidns();
	size_t went = 0, n;
	DIR *dir;
	int life;

	life = g->dir[CG_V2][0] != '\0' ? CG_V2 :
	    g->dir[CG_V1_PIDS][0] != '\0' ? CG_V1_PIDS : CG_V1_MEMORY;
	if ((dir = opendir(g->dir[life])) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		snprintf(bare, sizeof(bare), "%.*s", CG_DIR_MAX, de->d_name);
		if (g->sd != NULL) {	/* a scope's: "NAME.scope" */
			if ((n = gk_cg_unscope(bare)) == 0)
				continue;
			bare[n] = '\0';
		}
		if (!gk_cg_name_parse(bare, id, sizeof(id), &o) ||
		    o.pidns != ns || (gk_cg_owner_of(o.pid, &now) == 0 &&
		    now.start == o.start))
			continue;
		if ((c = calloc(1, sizeof(*c))) == NULL)
			break;
		c->g = g;
		snprintf(c->name, sizeof(c->name), "%.*s", CG_DIR_MAX,
		    de->d_name);
		cage_found(c);
		gk_cg_cage_end(c);
		went++;
	}
	closedir(dir);
	return went;
}
