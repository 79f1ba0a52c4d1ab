/*
 * gk_cgroup: where cages' cgroups go (the layout found at start) and the
 * small cgroupfs file operations (one write(2) per value; errors carry
 * the file and errno). One cage's cgroup is gk_cgcage.c's.
 */
#include <sys/stat.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cgroup/gk_cgroup.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"
#include "gatekeeper/cgroup/gk_cgsd.h"

/* ---- files ------------------------------------------------------------ */

int
cg_write_file(const char *path, const char *val, char *err, size_t errlen)
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
ssize_t
cg_read_file(const char *path, char *buf, size_t len)
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

bool
cg_path2(char *out, size_t len, const char *a, const char *b)
{
	int n = snprintf(out, len, "%s/%s", a, b);

	return n > 0 && (size_t)n < len;
}


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

bool
cg_make_dir(const char *path)
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
	if (!cg_path2(path, sizeof(path), dir, "cgroup.controllers") ||
	    cg_read_file(path, buf, sizeof(buf)) < 0)
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
bool
cg_subtree_control(const char *dir, const char *ctl)
{
	char path[GK_CG_PATH_MAX + 32], err[128];

	return cg_path2(path, sizeof(path), dir, "cgroup.subtree_control") &&
	    cg_write_file(path, ctl, err, sizeof(err)) == 0;
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
		if (!cg_make_dir(leaf) || !cg_path2(path, sizeof(path), leaf,
		    "cgroup.procs") || cg_write_file(path, pid, err,
		    sizeof(err)) == -1) {
			gk_seterr(why, whylen, "cannot move into %s (is the "
			    "unit delegated? Delegate=yes): %s", leaf,
			    errno != 0 ? strerror(errno) : err);
			return -1;
		}
	}
	v2_controllers(base, ctl, sizeof(ctl), &bits);
	if (bits != 0 && !cg_subtree_control(base, ctl))
		bits = 0;
	if (!cg_make_dir(g->dir[CG_V2])) {
		gk_seterr(why, whylen, "mkdir %s: %s", g->dir[CG_V2],
		    strerror(errno));
		return -1;
	}
	if (bits != 0) {
		v2_controllers(g->dir[CG_V2], ctl, sizeof(ctl), &bits);
		if (bits != 0 && !cg_subtree_control(g->dir[CG_V2], ctl))
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
 * alone): 1 in use, 0 not such a host, 2 such a host but we are in a PID
 * namespace of our own, -1 such a host but systemd cannot be asked (why).
 */
static int
open_systemd(struct gk_cg *g, const struct gk_cg_mounts *m,
    const char *subtree, char *why, size_t whylen)
{
	char sdwhy[256], ctl[128];
	enum gk_cgsd_fit fit;
	unsigned bits;

	fit = gk_cgsd_usable(m->v2[0] != '\0' && !any_v1(m), sdwhy,
	    sizeof(sdwhy));
	if (fit != GK_CGSD_YES) {
		log_debug("cgroup: not systemd's scopes: %s", sdwhy);
		return fit == GK_CGSD_PIDNS ? 2 : 0;
	}
	if (!gk_cgsd_slice_name(subtree, g->slice, sizeof(g->slice)) ||
	    !cg_path2(g->dir[CG_V2], sizeof(g->dir[CG_V2]), m->v2, g->slice)) {
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
		if (!cg_make_dir(g->dir[CG_V1_MEMORY + c])) {
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

/*
 * systemd owns this host's cgroups but cannot place our pids: a delegated
 * scope of our own (gk_cgown.c). Without it our cgroup is systemd's
 * unit's (a session's scope), where nothing can be limited: said so.
 */
static void
own_scope(const struct gk_cg_mounts *m, struct gk_cg_self *self,
    const char *subtree)
{
	char why[512];

	if (cg_own_scope(m->v2, subtree, self, why, sizeof(why)) == -1)
		log_warnx("cgroup: %s; cages' cgroups go below gatekeeperd's "
		    "own, %s, which systemd manages: limits will likely not "
		    "apply there (run gatekeeperd as its unit, or under "
		    "`systemd-run --scope -p Delegate=yes`)", why, self->v2);
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
		    cg_limit_dir(g, c) == CG_V2 ? "v2" : g->dir[CG_V1_MEMORY + c]);
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
	    (n = cg_read_file("/proc/self/mountinfo", mi, CG_MOUNTINFO_MAX)) <
	    0) {
		gk_seterr(why, whylen, "/proc/self/mountinfo: %s",
		    strerror(errno));
		free(mi);
		return -1;
	}
	gk_cg_mounts_parse(mi, (size_t)n, m);
	free(mi);
	if (cg_read_file("/proc/self/cgroup", buf, sizeof(buf)) < 0) {
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
	if ((sd = open_systemd(g, &m, subtree, why, whylen)) == 2)
		own_scope(&m, &self, subtree);
	if (sd == 0 || sd == 2)
		sd = open_cgroupfs(g, &m, &self, subtree, why, whylen);
	if (sd != -1 && (g->rm_ev = evtimer_new(base, cg_rm_cb, g)) == NULL) {
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

void
gk_cg_close(struct gk_cg *g)
{
	struct gk_cg_cage *c;
	int d;

	if (g == NULL)
		return;
	while ((c = TAILQ_FIRST(&g->dying)) != NULL) {
		TAILQ_REMOVE(&g->dying, c, entry);
		(void)cg_cage_rmdirs(c);
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
