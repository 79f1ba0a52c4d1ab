/*
 * gk_cgroup: cgroup directories and files for cages. Every write is one
 * small write(2) to a cgroupfs file; errors carry the file and errno.
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
#include "gatekeeper/cgroup/gk_cgsd.h"

#define CG_FILE_MAX		8192
#define CG_MOUNTINFO_MAX	(256 * 1024)
#define CG_CPU_PERIOD		100000		/* us */
#define CG_RM_TRY_MS		20
#define CG_RM_GIVEUP_MS		10000
#define CG_KILL_ROUNDS		64		/* v1-only end */
#define CG_DIR_MAX		(GK_CG_NAME_MAX + 8)	/* a name, ".scope" */
#define CG_SCOPE		".scope"

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
};

/* ---- files ------------------------------------------------------------ */

static int
write_file(const char *path, const char *val, char *err, size_t errlen)
{
	ssize_t n;
	int fd, e;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		gk_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	if (n != (ssize_t)strlen(val)) {
		gk_seterr(err, errlen, "writing \"%s\" to %s: %s", val, path,
		    n == -1 ? strerror(e) : "short write");
		errno = n == -1 ? e : EIO;
		return -1;
	}
	return 0;
}

/* The whole (small) file into buf, NUL-terminated: its length, or -1. */
static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)got < len - 1 &&
	    (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

static bool
path2(char *out, size_t len, const char *a, const char *b)
{
	int n = snprintf(out, len, "%s/%s", a, b);

	return n > 0 && (size_t)n < len;
}

static void rm_cb(evutil_socket_t, short, void *);
static int limit_dir(const struct gk_cg *, enum gk_cg_ctl);

/* ---- finding the hierarchies ------------------------------------------ */

/* mount + own path + "/" + subtree; false if it does not fit. */
static bool
subtree_path(char *out, const char *mnt, const char *own, const char *sub)
{
	int n;

	if (strcmp(own, "/") == 0)
		own = "";
	n = snprintf(out, GK_CG_PATH_MAX, "%s%s/%s", mnt, own, sub);
	return n > 0 && n < GK_CG_PATH_MAX;
}

static bool
make_dir(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST;
}

/* The v2 controllers we use that `dir`'s cgroup.controllers offers, as
 * "+memory +pids +cpu"; their bits in *bits. */
static void
v2_controllers(const char *dir, char *out, size_t len, unsigned *bits)
{
	char path[GK_CG_PATH_MAX + 32], buf[512], *tok, *save;
	size_t o = 0;
	int c;

	*bits = 0;
	out[0] = '\0';
	if (!path2(path, sizeof(path), dir, "cgroup.controllers") ||
	    read_file(path, buf, sizeof(buf)) < 0)
		return;
	for (tok = strtok_r(buf, " \n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \n", &save)) {
		for (c = 0; c < GK_CG__CTLS; c++) {
			if (strcmp(tok, gk_cg_ctl_name(c)) != 0)
				continue;
			*bits |= 1u << c;
			o += (size_t)snprintf(out + o, len - o, "%s+%s",
			    o > 0 ? " " : "", tok);
		}
	}
}

/* Enable controllers ctl ("+memory +pids") for dir's children. */
static bool
subtree_control(const char *dir, const char *ctl)
{
	char path[GK_CG_PATH_MAX + 32], err[128];

	return path2(path, sizeof(path), dir, "cgroup.subtree_control") &&
	    write_file(path, ctl, err, sizeof(err)) == 0;
}

/*
 * The v2 subtree. At the root of the hierarchy (a hybrid host, a test):
 * <mount>/<subtree>. Delegated (our own cgroup is not the root, as a
 * systemd unit with Delegate=yes): we move into <own>/daemon so that
 * <own> may enable controllers for <own>/<subtree>.
 */
static int
open_v2(struct gk_cg *g, const char *mnt, const char *own, const char *sub,
    char *why, size_t whylen)
{
	char base[GK_CG_PATH_MAX], leaf[GK_CG_PATH_MAX + 16], ctl[128],
	    path[GK_CG_PATH_MAX + 32], pid[32], err[256];
	unsigned bits = 0;

	if (!subtree_path(g->dir[CG_V2], mnt, own, sub) ||
	    !subtree_path(base, mnt, own, "") ) {
		gk_seterr(why, whylen, "cgroup path too long");
		return -1;
	}
	base[strlen(base) - 1] = '\0';		/* no trailing "/" */
	if (strcmp(own, "/") != 0) {
		snprintf(leaf, sizeof(leaf), "%s/daemon", base);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if (!make_dir(leaf) || !path2(path, sizeof(path), leaf,
		    "cgroup.procs") || write_file(path, pid, err,
		    sizeof(err)) == -1) {
			gk_seterr(why, whylen, "cannot move into %s (is the "
			    "unit delegated? Delegate=yes): %s", leaf,
			    errno != 0 ? strerror(errno) : err);
			return -1;
		}
	}
	v2_controllers(base, ctl, sizeof(ctl), &bits);
	if (bits != 0 && !subtree_control(base, ctl))
		bits = 0;
	if (!make_dir(g->dir[CG_V2])) {
		gk_seterr(why, whylen, "mkdir %s: %s", g->dir[CG_V2],
		    strerror(errno));
		return -1;
	}
	if (bits != 0) {
		v2_controllers(g->dir[CG_V2], ctl, sizeof(ctl), &bits);
		if (bits != 0 && !subtree_control(g->dir[CG_V2], ctl))
			bits = 0;
		snprintf(g->v2_ctl, sizeof(g->v2_ctl), "%s", ctl);
	}
	g->v2_limits = bits != 0;
	g->can |= bits;
	return 0;
}

/* Any v1 controller mounted (a hybrid or legacy layout)? */
static bool
any_v1(const struct gk_cg_mounts *m)
{
	int c;

	for (c = 0; c < GK_CG__CTLS; c++)
		if (m->v1[c][0] != '\0')
			return true;
	return false;
}

/*
 * systemd's scopes, where systemd manages the cgroups (PID 1, cgroup v2
 * alone): 1 in use, 0 not such a host, -1 such a host but systemd cannot
 * be asked (why).
 */
static int
open_systemd(struct gk_cg *g, const struct gk_cg_mounts *m,
    const char *subtree, char *why, size_t whylen)
{
	char sdwhy[256], ctl[128];
	unsigned bits;

	if (!gk_cgsd_usable(m->v2[0] != '\0' && !any_v1(m), sdwhy,
	    sizeof(sdwhy))) {
		log_debug("cgroup: not systemd's scopes: %s", sdwhy);
		return 0;
	}
	if (!gk_cgsd_slice_name(subtree, g->slice, sizeof(g->slice)) ||
	    !path2(g->dir[CG_V2], sizeof(g->dir[CG_V2]), m->v2, g->slice)) {
		gk_seterr(why, whylen, "cgroup name \"%s\" too long", subtree);
		return -1;
	}
	if ((g->sd = gk_cgsd_open(g->base, sdwhy, sizeof(sdwhy))) == NULL) {
		gk_seterr(why, whylen, "systemd manages this host's cgroups, "
		    "but %s", sdwhy);
		return -1;
	}
	/* systemd enables them down to the slice as a scope's limits ask */
	v2_controllers(m->v2, ctl, sizeof(ctl), &bits);
	g->v2_limits = bits != 0;
	g->can = bits;
	return 1;
}

/* Our own cgroup's subtree in each hierarchy we can write. */
static int
open_cgroupfs(struct gk_cg *g, const struct gk_cg_mounts *m,
    const struct gk_cg_self *self, const char *subtree, char *why,
    size_t whylen)
{
	char v2why[256] = "";
	int c;

	if (m->v2[0] != '\0' && self->v2[0] != '\0' &&
	    open_v2(g, m->v2, self->v2, subtree, v2why, sizeof(v2why)) == -1)
		g->dir[CG_V2][0] = '\0';
	else if (m->v2[0] == '\0')
		snprintf(v2why, sizeof(v2why), "no cgroup2 hierarchy mounted");
	/* v1 controllers: only those v2 does not have */
	for (c = 0; c < GK_CG__CTLS; c++) {
		if ((g->can & (1u << c)) || m->v1[c][0] == '\0' ||
		    self->v1[c][0] == '\0' ||
		    !subtree_path(g->dir[CG_V1_MEMORY + c], m->v1[c],
		    self->v1[c], subtree))
			continue;
		if (!make_dir(g->dir[CG_V1_MEMORY + c])) {
			log_warnx("cgroup: mkdir %s: %s", g->dir[CG_V1_MEMORY +
			    c], strerror(errno));
			g->dir[CG_V1_MEMORY + c][0] = '\0';
			continue;
		}
		g->can |= 1u << c;
	}
	if (g->dir[CG_V2][0] == '\0' && g->dir[CG_V1_PIDS][0] == '\0' &&
	    g->dir[CG_V1_MEMORY][0] == '\0') {
		gk_seterr(why, whylen, "%s, and no writable v1 pids or memory "
		    "hierarchy", v2why[0] != '\0' ? v2why :
		    "no writable cgroup2 hierarchy");
		return -1;
	}
	return 0;
}

/* For the start-up log: where cages go and what limits them. */
static void
describe(struct gk_cg *g)
{
	size_t o;
	int c;

	o = (size_t)snprintf(g->desc, sizeof(g->desc), "cages' processes in "
	    "%s%s", g->sd != NULL ? "systemd scopes in " : "",
	    g->dir[CG_V2][0] != '\0' ? g->dir[CG_V2] :
	    g->dir[CG_V1_PIDS][0] != '\0' ? g->dir[CG_V1_PIDS] :
	    g->dir[CG_V1_MEMORY]);
	for (c = 0; c < GK_CG__CTLS && o < sizeof(g->desc); c++) {
		if (!(g->can & (1u << c)))
			continue;
		o += (size_t)snprintf(g->desc + o, sizeof(g->desc) - o,
		    "%s%s in %s", strstr(g->desc, "; limits") == NULL ?
		    "; limits: " : ", ", gk_cg_ctl_name(c),
		    limit_dir(g, c) == CG_V2 ? "v2" : g->dir[CG_V1_MEMORY + c]);
	}
	if (g->can == 0 && o < sizeof(g->desc))
		snprintf(g->desc + o, sizeof(g->desc) - o, "; no limits "
		    "(no memory, pids or cpu controller to write)");
}

/* /proc/self/mountinfo and /proc/self/cgroup, parsed. */
static int
read_layout(struct gk_cg_mounts *m, struct gk_cg_self *self, char *why,
    size_t whylen)
{
	char buf[CG_FILE_MAX], *mi;
	ssize_t n;

	if ((mi = malloc(CG_MOUNTINFO_MAX)) == NULL ||
	    (n = read_file("/proc/self/mountinfo", mi, CG_MOUNTINFO_MAX)) <
	    0) {
		gk_seterr(why, whylen, "/proc/self/mountinfo: %s",
		    strerror(errno));
		free(mi);
		return -1;
	}
	gk_cg_mounts_parse(mi, (size_t)n, m);
	free(mi);
	if (read_file("/proc/self/cgroup", buf, sizeof(buf)) < 0) {
		gk_seterr(why, whylen, "/proc/self/cgroup: %s",
		    strerror(errno));
		return -1;
	}
	gk_cg_self_parse(buf, strlen(buf), self);
	return 0;
}

struct gk_cg *
gk_cg_open(struct event_base *base, const char *subtree, char *why,
    size_t whylen)
{
	struct gk_cg_mounts m;
	struct gk_cg_self self;
	struct gk_cg *g;
	int sd;

	if (subtree[0] == '\0' || strchr(subtree, '/') != NULL ||
	    strcmp(subtree, ".") == 0 || strcmp(subtree, "..") == 0) {
		gk_seterr(why, whylen, "bad cgroup subtree name \"%s\"",
		    subtree);
		return NULL;
	}
	if (read_layout(&m, &self, why, whylen) == -1)
		return NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		gk_seterr(why, whylen, "out of memory");
		return NULL;
	}
	g->base = base;
	TAILQ_INIT(&g->dying);
	if ((sd = open_systemd(g, &m, subtree, why, whylen)) == 0)
		sd = open_cgroupfs(g, &m, &self, subtree, why, whylen);
	if (sd != -1 && (g->rm_ev = evtimer_new(base, rm_cb, g)) == NULL) {
		gk_seterr(why, whylen, "out of memory");
		sd = -1;
	}
	if (sd == -1) {
		gk_cgsd_close(g->sd);
		free(g);
		return NULL;
	}
	describe(g);
	return g;
}

static bool
cage_rmdirs(struct gk_cg_cage *c)
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

void
gk_cg_close(struct gk_cg *g)
{
	struct gk_cg_cage *c;
	int d;

	if (g == NULL)
		return;
	while ((c = TAILQ_FIRST(&g->dying)) != NULL) {
		TAILQ_REMOVE(&g->dying, c, entry);
		(void)cage_rmdirs(c);
		free(c);
	}
	if (g->rm_ev != NULL)
		event_free(g->rm_ev);
	for (d = 0; d < CG__DIRS && g->sd == NULL; d++)	/* if empty */
		if (g->dir[d][0] != '\0')
			(void)rmdir(g->dir[d]);
	gk_cgsd_close(g->sd);	/* systemd removes the slice's scopes */
	free(g);
}

unsigned
gk_cg_can_limit(const struct gk_cg *g)
{
	return g == NULL ? 0 : g->can;
}

const char *
gk_cg_lacking(const struct gk_cg *g, const struct gk_rlimits *l)
{
	const bool asks[GK_CG__CTLS] = { l->memory != 0, l->pids != 0,
	    l->cpus != 0 };
	int c;

	for (c = 0; c < GK_CG__CTLS; c++)
		if (asks[c] && !(gk_cg_can_limit(g) & (1u << c)))
			return gk_cg_ctl_name(c);
	return NULL;
}

const char *
gk_cg_describe(const struct gk_cg *g)
{
	return g->desc;
}

/* ---- one cage ----------------------------------------------------------- */

/* Where limit `c` is written: the v2 directory, or c's v1 one. */
static int
limit_dir(const struct gk_cg *g, enum gk_cg_ctl c)
{
	if (g->dir[CG_V1_MEMORY + c][0] != '\0')
		return CG_V1_MEMORY + c;
	return g->v2_limits && (g->can & (1u << c)) ? CG_V2 : -1;
}

static int
cage_write(struct gk_cg_cage *c, int d, const char *file, const char *val,
    char *err, size_t errlen)
{
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/%s", c->g->dir[d], c->name, file);
	return write_file(path, val, err, errlen);
}

/*
 * The subtree of d made again: another gatekeeperd given the same name
 * (a test's, a benchmark's) removes it when it stops and finds it empty.
 */
static bool
root_remake(struct gk_cg *g, int d)
{
	if (!make_dir(g->dir[d]))
		return false;
	if (d == CG_V2 && g->v2_limits)
		(void)subtree_control(g->dir[d], g->v2_ctl);
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
		d = limit_dir(c->g, GK_CG_MEMORY);
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
		d = limit_dir(c->g, GK_CG_PIDS);
		snprintf(v, sizeof(v), "%u", l->pids);
		if (cage_mkdir(c, d, err, errlen) == -1 ||
		    cage_write(c, d, "pids.max", v, err, errlen) == -1)
			return -1;
	}
	if (l->cpus != 0) {
		d = limit_dir(c->g, GK_CG_CPU);
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
		snprintf(c->name, sizeof(c->name), "%s%s", name, CG_SCOPE);
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
	(void)cage_rmdirs(c);
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
	    CG_SCOPE : "");
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
	char v[32];
	int d;

	if (c->g->sd != NULL && !c->made[CG_V2])
		return scope_start(c, pid, cb, arg, err, errlen);
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (d = 0; d < CG__DIRS; d++)
		if (c->made[d] && cage_write(c, d, "cgroup.procs", v, err,
		    errlen) == -1)
			return -1;
	return 0;
}

static int
cage_counter(struct gk_cg_cage *c, int d, const char *file, const char *key,
    uint64_t *out)
{
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", c->g->dir[d], c->name, file);
	if ((n = read_file(path, buf, sizeof(buf))) < 0)
		return -1;
	return gk_cg_counter(buf, (size_t)n, key, out);
}

int
gk_cg_cage_events(struct gk_cg_cage *c, uint64_t *oom_kills,
    uint64_t *pids_max)
{
	int d, got = 0;

	*oom_kills = *pids_max = 0;
	if ((d = limit_dir(c->g, GK_CG_MEMORY)) >= 0 && c->made[d])
		got += cage_counter(c, d, d == CG_V2 ? "memory.events" :
		    "memory.oom_control", "oom_kill", oom_kills) == 0;
	if ((d = limit_dir(c->g, GK_CG_PIDS)) >= 0 && c->made[d])
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
	char path[GK_CG_PATH_MAX + CG_DIR_MAX + 64], buf[CG_FILE_MAX];
	char *p, *end;
	long pid;
	int round;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", c->g->dir[d],
	    c->name);
	for (round = 0; round < CG_KILL_ROUNDS; round++) {
		if (read_file(path, buf, sizeof(buf)) <= 0)
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

static void
rm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_cg *g = arg;
	struct gk_cg_cage *c, *next;
	uint64_t now = gk_clock_ms();

	(void)fd;
	(void)what;
	for (c = TAILQ_FIRST(&g->dying); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!cage_rmdirs(c) && now - c->dying_since <
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
	if (cage_rmdirs(c)) {
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
	free(c);
}

/* ---- start-up sweep and processes --------------------------------------- */

int
gk_proc_start(pid_t pid, pid_t *ppid, uint64_t *start)
{
	char path[64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((n = read_file(path, buf, sizeof(buf))) <= 0)
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

/* "NAME.scope" -> "NAME": false if it has no such suffix. */
static bool
strip_scope(char *name)
{
	size_t n = strlen(name), k = strlen(CG_SCOPE);

	if (n <= k || strcmp(name + n - k, CG_SCOPE) != 0)
		return false;
	name[n - k] = '\0';
	return true;
}

size_t
gk_cg_sweep(struct gk_cg *g)
{
	char id[GK_CG_NAME_MAX + 1], bare[CG_DIR_MAX + 1];
	struct gk_cg_owner o, now;
	struct gk_cg_cage *c;
	struct dirent *de;
	uint64_t ns = own_pidns();
	size_t went = 0;
	DIR *dir;
	int life;

	life = g->dir[CG_V2][0] != '\0' ? CG_V2 :
	    g->dir[CG_V1_PIDS][0] != '\0' ? CG_V1_PIDS : CG_V1_MEMORY;
	if ((dir = opendir(g->dir[life])) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		snprintf(bare, sizeof(bare), "%.*s", CG_DIR_MAX, de->d_name);
		if (g->sd != NULL && !strip_scope(bare))
			continue;
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

int
gk_cg_stopping(struct gk_cg *g)
{
	return g == NULL || g->sd == NULL ? 0 : gk_cgsd_unit_stopping(g->sd);
}

void
gk_cg_retire(struct gk_cg *g)
{
	if (g != NULL && g->sd != NULL)
		gk_cgsd_slice_stop(g->sd, g->slice);
}
