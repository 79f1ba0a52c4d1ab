/*
 * gk_contain: cages' cgroups for gatekeeperd (see gk_contain.h).
 *
 * The first process of a sandbox is a child of gk-run, stopped before
 * it execs bwrap; gk-run sends a pidfd of it (cage.attach), and it goes
 * into the cage's cgroup before gk-run lets it run, so nothing of the
 * command ever runs outside. The pid behind the pidfd must be a child of
 * the control peer that owns the cage, with the peer's uid.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cgroup/gk_cgroup.h"
#include "gatekeeper/gk_contain.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/state/gk_conf.h"

#define POLL_SEC	1	/* limit counters of limited cages */

struct gk_contain {
	struct gk_cg		*cg;
	struct gk_cage_table	*cages;
	struct event		*poll_ev;
	bool			 leaving;	/* cages end without a kill */
	bool			 retire;	/* and the slice goes too */
};

/* gk_cage_facet(c, GK_FACET_CONTAIN) */
struct cage_cg {
	struct gk_cg_cage	*cgc;
	struct gk_rlimits	 lim;		/* enforced */
	uint64_t		 oom_seen;
	uint64_t		 pids_seen;
	/* a cage.attach under way (a systemd scope being made) */
	struct gk_cage		*cage;
	gk_attach_done	 done;
	void			*done_arg;
};

/* New counts of c's limit events: counted, audited, told to the owner. */
static void
poll_cage(struct gk_cage *c)
{
	struct cage_cg *r = gk_cage_facet(c, GK_FACET_CONTAIN);
	char ex[64], v[GK_RLIM_TEXT];
	uint64_t oom, pmax;

	if (r == NULL || (r->lim.memory == 0 && r->lim.pids == 0) ||
	    gk_cg_cage_events(r->cgc, &oom, &pmax) == -1)
		return;
	if (oom > r->oom_seen) {
		gk_size_format(r->lim.memory, v, sizeof(v));
		snprintf(ex, sizeof(ex), "%llu killed at %s",
		    (unsigned long long)(oom - r->oom_seen), v);
		gk_limit_hits(c, GK_LIM_MEMORY, oom - r->oom_seen,
		    r->lim.memory, ex);
		gk_events_limit(c, "memory", r->lim.memory, oom - r->oom_seen);
		log_info("cage=%s action=limit limit=memory value=%llu "
		    "killed=%llu", gk_cage_id(c),
		    (unsigned long long)r->lim.memory,
		    (unsigned long long)(oom - r->oom_seen));
		r->oom_seen = oom;
	}
	if (pmax > r->pids_seen) {
		snprintf(ex, sizeof(ex), "%llu forks refused at %u",
		    (unsigned long long)(pmax - r->pids_seen), r->lim.pids);
		gk_limit_hits(c, GK_LIM_PIDS, pmax - r->pids_seen, r->lim.pids,
		    ex);
		gk_events_limit(c, "pids", r->lim.pids, pmax - r->pids_seen);
		log_info("cage=%s action=limit limit=pids value=%u "
		    "refused=%llu", gk_cage_id(c), r->lim.pids,
		    (unsigned long long)(pmax - r->pids_seen));
		r->pids_seen = pmax;
	}
}

static void
poll_one(struct gk_cage *c, void *arg)
{
	(void)arg;
	poll_cage(c);
}

static void
poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_contain *k = arg;

	(void)fd;
	(void)what;
	gk_cage_foreach(k->cages, poll_one, NULL);
}

/* Drop what cannot be enforced (best effort), saying so; false if any
 * would be dropped without leave. */
static bool
trim_limits(struct gk_contain *k, const struct gk_cage *c,
    struct gk_rlimits *l, bool best_effort, char *err, size_t errlen)
{
	const char *lack;
	char dropped[32] = "";

	if ((lack = gk_cg_lacking(k->cg, l)) != NULL && !best_effort) {
		snprintf(err, errlen, "a %s limit was asked for, but no %s "
		    "controller can be written here (%s)", lack, lack,
		    gk_cg_describe(k->cg));
		return false;
	}
	for (; lack != NULL; lack = gk_cg_lacking(k->cg, l)) {
		if (strcmp(lack, "memory") == 0)
			l->memory = 0;
		else if (strcmp(lack, "pids") == 0)
			l->pids = 0;
		else
			l->cpus = 0;
		snprintf(dropped + strlen(dropped), sizeof(dropped) -
		    strlen(dropped), "%s%s", dropped[0] != '\0' ? " " : "",
		    lack);
	}
	if (dropped[0] != '\0')
		log_warnx("cage=%s: limits it asked for that cannot be "
		    "enforced are dropped (best effort): %s", gk_cage_id(c),
		    dropped);
	return true;
}

/* A reattach: the cgroup the peer's earlier cage had, if it is the
 * peer's (same owner: pid namespace, pid, start time). */
static struct gk_cg_cage *
adopt_cgroup(struct gk_contain *k, const struct gk_cage *c,
    const char *name, const struct gk_cg_owner *peer, char *err,
    size_t errlen)
{
	char id[GK_CG_NAME_MAX + 1], bare[GK_CG_NAME_MAX + 1];
	struct gk_cg_owner o;
	struct gk_cg_cage *cgc;
	size_t n;

	if ((n = gk_cg_unscope(name)) == 0)	/* not a systemd scope's */
		n = strlen(name);
	snprintf(bare, sizeof(bare), "%.*s", (int)n, name);
	if (!gk_cg_name_parse(bare, id, sizeof(id), &o) ||
	    o.pidns != peer->pidns || o.pid != peer->pid ||
	    o.start != peer->start) {
		snprintf(err, errlen, "cgroup %s is not one this process "
		    "created", name);
		return NULL;
	}
	if ((cgc = gk_cg_cage_adopt(k->cg, bare, gk_cage_uid(c), err,
	    errlen)) != NULL)
		log_info("cage=%s cgroup=%s action=reattach: its processes "
		    "are this cage's again", gk_cage_id(c), name);
	return cgc;
}

static int
contain_create(void *arg, struct gk_cage *c, pid_t owner,
    const struct gk_rlimits *l, bool best_effort, const char *adopt,
    char *err, size_t errlen)
{
	struct gk_contain *k = arg;
	char name[GK_CG_NAME_MAX + 1];
	struct gk_rlimits lim = *l;
	struct gk_cg_owner o;
	struct cage_cg *r;

	if (!trim_limits(k, c, &lim, best_effort, err, errlen))
		return -1;
	if (gk_cg_owner_of(owner, &o) == -1 ||
	    !gk_cg_name(name, sizeof(name), gk_cage_id(c), &o)) {
		snprintf(err, errlen, "cannot read the control peer's process "
		    "(pid %d): %s", (int)owner, strerror(errno));
		return -1;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (adopt != NULL)
		r->cgc = adopt_cgroup(k, c, adopt, &o, err, errlen);
	else
		r->cgc = gk_cg_cage_new(k->cg, name, &lim, gk_cage_uid(c), err,
		    errlen);
	if (r->cgc == NULL) {
		free(r);
		return -1;
	}
	r->lim = lim;
	/* only what happens from now on is news */
	if (adopt != NULL)
		(void)gk_cg_cage_events(r->cgc, &r->oom_seen, &r->pids_seen);
	gk_cage_facet_set(c, GK_FACET_CONTAIN, r);
	return 0;
}

/* The number after "KEY:" on a line of a /proc file; -1 if none. */
static long
proc_field(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':' &&
		    sscanf(line + n + 1, "%ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The pid a pidfd refers to (its fdinfo's "Pid:" line); -1 if none. */
static pid_t
pidfd_pid(int pidfd)
{
	char path[64];
	long pid;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	pid = proc_field(path, "Pid");
	return pid > 0 ? (pid_t)pid : -1;
}

/* The real uid of pid, from /proc/PID/status; -1 if unknown. */
static long
proc_uid(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return proc_field(path, "Uid");
}

/* A systemd scope's start ended: the cage.attach's answer. */
static void
attached_cb(void *arg, int rc, const char *err)
{
	struct cage_cg *r = arg;
	gk_attach_done done = r->done;

	r->done = NULL;
	if (rc == -1)
		log_warnx("cage=%s cannot put its process in its cgroup: %s",
		    gk_cage_id(r->cage), err);
	done(r->done_arg, r->cage, rc, err);
}

static int
contain_attach(void *arg, struct gk_cage *c, int pidfd, pid_t owner,
    uid_t uid, gk_attach_done done, void *done_arg, char *err,
    size_t errlen)
{
	struct cage_cg *r = gk_cage_facet(c, GK_FACET_CONTAIN);
	uint64_t start;
	pid_t pid, ppid;

	(void)arg;
	if ((pid = pidfd_pid(pidfd)) == -1) {
		snprintf(err, errlen, "the fd sent is not a pidfd of a live "
		    "process (pidfd_open)");
		return -1;
	}
	if (gk_proc_start(pid, &ppid, &start) == -1 || ppid != owner) {
		snprintf(err, errlen, "process %d is not a child of the "
		    "requesting process (pid %d)", (int)pid, (int)owner);
		return -1;
	}
	if (uid != 0 && proc_uid(pid) != (long)uid) {
		snprintf(err, errlen, "process %d does not run as uid %u",
		    (int)pid, (unsigned)uid);
		return -1;
	}
	r->cage = c;
	r->done = done;
	r->done_arg = done_arg;
	return gk_cg_cage_attach(r->cgc, pid, attached_cb, r, err, errlen);
}

static void
contain_end(void *arg, struct gk_cage *c)
{
	struct cage_cg *r = gk_cage_facet(c, GK_FACET_CONTAIN);

	poll_cage(c);		/* what happened last, before the kill */
	if (r->done != NULL)	/* its cage.attach is answered */
		attached_cb(r, -1, "the cage ended while its cgroup was made");
	if (((struct gk_contain *)arg)->leaving)
		gk_cg_cage_forget(r->cgc);	/* for a later gatekeeperd */
	else
		gk_cg_cage_end(r->cgc);
	free(r);
	gk_cage_facet_set(c, GK_FACET_CONTAIN, NULL);
}

static void
contain_poll(void *arg, struct gk_cage *c)
{
	(void)arg;
	poll_cage(c);
}

static struct json_object *
contain_describe(void *arg, const struct gk_cage *c)
{
	const struct cage_cg *r = gk_cage_facet(c, GK_FACET_CONTAIN);
	struct json_object *o, *l;
	char v[GK_RLIM_TEXT];

	(void)arg;
	o = json_object_new_object();
	json_object_object_add(o, "kill", json_object_new_string(
	    gk_cg_cage_kill_path(r->cgc)));
	l = json_object_new_object();
	if (r->lim.memory != 0) {
		json_object_object_add(l, "memory", json_object_new_int64(
		    (int64_t)r->lim.memory));
	}
	if (r->lim.pids != 0)
		json_object_object_add(l, "pids", json_object_new_int64(
		    r->lim.pids));
	if (r->lim.cpus != 0) {
		gk_cpus_format(r->lim.cpus, v, sizeof(v));
		json_object_object_add(l, "cpus", json_object_new_double_s(
		    r->lim.cpus / 1000.0, v));
	}
	json_object_object_add(o, "limits", l);
	return o;
}

int
gk_contain_start(struct gk_contain **out, struct event_base *base,
    const struct gk_conf *c, struct gk_cage_table *cages)
{
	struct timeval tv = { POLL_SEC, 0 };
	struct gk_contain *k;
	char why[512];
	size_t went;

	*out = NULL;
	if (strcmp(c->cgroup, "off") == 0) {
		log_info("cgroup off: namespace cages' processes are not "
		    "contained (no limits; they may outlive their cage)");
		return 0;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL)
		return -1;
	k->cages = cages;
	if ((k->cg = gk_cg_open(base, c->cgroup, why, sizeof(why))) == NULL) {
		log_warnx("cgroups: %s: namespace cages' processes are not "
		    "contained (no limits; they may outlive their cage)", why);
		free(k);
		return 0;
	}
	if ((k->poll_ev = event_new(base, -1, EV_PERSIST, poll_cb, k)) ==
	    NULL || event_add(k->poll_ev, &tv) == -1) {
		gk_cg_close(k->cg);
		if (k->poll_ev != NULL)
			event_free(k->poll_ev);
		free(k);
		return -1;
	}
	log_info("cgroups: %s", gk_cg_describe(k->cg));
	if ((went = gk_cg_sweep(k->cg)) > 0)
		log_info("cgroups: %zu leftover cage%s whose gk-run is gone "
		    "killed and removed", went, went == 1 ? "" : "s");
	*out = k;
	return 0;
}

void
gk_contain_hooks(struct gk_contain *k, struct gk_cage_containment *h)
{
	memset(h, 0, sizeof(*h));
	h->arg = k;
	h->create = contain_create;
	h->attach = contain_attach;
	h->end = contain_end;
	h->poll = contain_poll;
	h->describe = contain_describe;
}

bool
gk_contain_leave(struct gk_contain *k)
{
	if (k == NULL)
		return true;
	if (gk_cg_stopping(k->cg) == 1) {
		log_info("cgroups: the service is stopped (not restarted): "
		    "every cage's processes end with it");
		k->retire = true;
		return false;
	}
	k->leaving = true;
	return true;
}

void
gk_contain_stop(struct gk_contain *k)
{
	if (k == NULL)
		return;
	event_free(k->poll_ev);
	if (k->retire)
		gk_cg_retire(k->cg);
	gk_cg_close(k->cg);
	free(k);
}
