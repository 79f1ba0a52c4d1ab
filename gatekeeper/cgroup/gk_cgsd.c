/*
 * gk_cgsd: cages as systemd scope units (see gk_cgsd.h). sd-bus from
 * libsystemd, driven by the libevent loop: the bus descriptor's events
 * and sd-bus's own timeout, re-armed after each pass.
 *
 * A scope start is two steps: StartTransientUnit answers with a job, and
 * the process is in the scope only when that job is done (the
 * JobRemoved signal); both are bounded by JOB_TIMEOUT_MS.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"
#include "gatekeeper/cgroup/gk_cgsd.h"

#define SD_DEST		"org.freedesktop.systemd1"
#define SD_PATH		"/org/freedesktop/systemd1"
#define SD_MANAGER	"org.freedesktop.systemd1.Manager"
#define SD_PRIVATE	"unix:path=/run/systemd/private"
#define JOB_TIMEOUT_MS	15000
#define LATE_KEEP_MS	60000		/* a timed-out job, kept */
#define SYNC_TIMEOUT_US	(2 * 1000 * 1000)
#define OWN_CALL_US	(5 * 1000 * 1000)	/* gk_cgsd_own_scope()'s */
#define CPU_USEC_PER_S	1000000ULL

struct gk_cgsd {
	struct event_base	*base;
	sd_bus			*bus;
	struct event		*rev;		/* the bus fd, readable */
	struct event		*wev;		/* writable, when sd-bus asks */
	struct event		*tev;		/* sd-bus's next timeout */
	sd_bus_slot		*removed;	/* JobRemoved */
	bool			 lost;		/* the connection is gone */
	unsigned		 version;	/* systemd's, 0 unknown */
	TAILQ_HEAD(, gk_cgsd_job) jobs;
};

struct gk_cgsd_job {
	TAILQ_ENTRY(gk_cgsd_job) entry;
	struct gk_cgsd		*sd;
	sd_bus_slot		*call;		/* StartTransientUnit */
	struct event		*timer;
	char			 unit[128];
	char			 path[256];	/* the job object, once known */
	char			 kill[512];
	pid_t			 pid;
	char			 want[384];	/* /proc/PID/cgroup, once in */
	gk_cgsd_done_cb		 done;		/* NULL: cancelled */
	void			*arg;
};

static void	bus_update(struct gk_cgsd *);

/* ---- the bus on the loop ------------------------------------------------ */

static void
job_free(struct gk_cgsd_job *j)
{
	TAILQ_REMOVE(&j->sd->jobs, j, entry);
	sd_bus_slot_unref(j->call);
	if (j->timer != NULL)
		event_free(j->timer);
	free(j);
}

/* A scope whose cage ended before it was made: its processes go. */
static void
kill_scope(const char *path)
{
	char err[256];

	if (path[0] != '\0' && cg_write_file(path, "1", err, sizeof(err)) ==
	    -1 && errno != ENOENT)
		log_warnx("cgroup: %s", err);
}

/* The job's end: its callback once (or, cancelled, its processes
 * killed), then it goes. */
static void
job_end(struct gk_cgsd_job *j, int rc, const char *err)
{
	gk_cgsd_done_cb done = j->done;
	void *arg = j->arg;

	if (done == NULL)
		kill_scope(j->kill);	/* its cage ended meanwhile */
	job_free(j);
	if (done != NULL)
		done(arg, rc, err);
}

/*
 * No end in time: the cage is told it failed; the job is kept a while
 * longer, so that a scope systemd starts late is killed, not left.
 */
static void
job_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct timeval tv = { LATE_KEEP_MS / 1000, 0 };
	struct gk_cgsd_job *j = arg;
	gk_cgsd_done_cb done = j->done;
	char err[256];

	(void)fd;
	(void)what;
	if (done == NULL) {
		kill_scope(j->kill);
		job_free(j);
		return;
	}
	snprintf(err, sizeof(err), "systemd did not start scope %s within "
	    "%d s", j->unit, JOB_TIMEOUT_MS / 1000);
	j->done = NULL;
	evtimer_add(j->timer, &tv);
	done(j->arg, -1, err);
}

static void
lost(struct gk_cgsd *sd, const char *why)
{
	struct gk_cgsd_job *j;
	char err[256];

	if (!sd->lost)
		log_warnx("cgroup: the connection to systemd is gone (%s); "
		    "it is made again for the next cage", why);
	sd->lost = true;
	snprintf(err, sizeof(err), "the connection to systemd was lost "
	    "(%s)", why);
	while ((j = TAILQ_FIRST(&sd->jobs)) != NULL)
		job_end(j, -1, err);
}

static void
bus_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gk_cgsd *sd = arg;
	int r, n;

	(void)fd;
	(void)what;
	for (n = 0; n < 256; n++)
		if ((r = sd_bus_process(sd->bus, NULL)) <= 0)
			break;
	if (r < 0 || sd_bus_is_open(sd->bus) <= 0) {
		lost(sd, r < 0 ? strerror(-r) : "closed");
		return;
	}
	bus_update(sd);
}

/* Interest from sd-bus: readable always, writable when it has output
 * queued, its timeout (CLOCK_MONOTONIC, absolute) as a timer. */
static void
bus_update(struct gk_cgsd *sd)
{
	struct timespec now;
	struct timeval tv;
	uint64_t until, at;
	int ev;

	if (sd->lost)
		return;
	ev = sd_bus_get_events(sd->bus);
	if (ev > 0 && (ev & POLLOUT))
		event_add(sd->wev, NULL);
	else
		event_del(sd->wev);
	if (sd_bus_get_timeout(sd->bus, &until) < 0 || until == UINT64_MAX) {
		evtimer_del(sd->tev);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	at = (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
	until = until > at ? until - at : 0;
	tv.tv_sec = (time_t)(until / 1000000);
	tv.tv_usec = (suseconds_t)(until % 1000000);
	evtimer_add(sd->tev, &tv);
}

/* ---- job ends ----------------------------------------------------------- */

/* Is pid where the scope put it? (/proc/PID/cgroup names the scope) */
static bool
moved(const struct gk_cgsd_job *j)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)j->pid);
	return cg_read_file(path, buf, sizeof(buf)) > 0 &&
	    strstr(buf, j->want) != NULL;
}

static int
removed_cb(sd_bus_message *m, void *arg, sd_bus_error *e)
{
	struct gk_cgsd *sd = arg;
	struct gk_cgsd_job *j;
	const char *path, *unit, *result;
	char err[384];
	uint32_t id;

	(void)e;
	if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
		return 0;
	TAILQ_FOREACH(j, &sd->jobs, entry)
		if (strcmp(j->path, path) == 0)
			break;
	if (j == NULL)
		return 0;
	if (strcmp(result, "done") != 0) {
		snprintf(err, sizeof(err), "systemd could not start scope %s "
		    "(job %s)", unit, result);
		job_end(j, -1, err);
	} else if (j->done != NULL && !moved(j)) {
		snprintf(err, sizeof(err), "systemd started scope %s, but "
		    "process %d is not in it", unit, (int)j->pid);
		job_end(j, -1, err);
	} else
		job_end(j, 0, NULL);
	return 0;
}

static int
started_cb(sd_bus_message *m, void *arg, sd_bus_error *e)
{
	struct gk_cgsd_job *j = arg;
	const sd_bus_error *me;
	const char *path;
	char err[512];

	(void)e;
	j->call = sd_bus_slot_unref(j->call);
	if ((me = sd_bus_message_get_error(m)) != NULL) {
		snprintf(err, sizeof(err), "systemd refused scope %s: %s",
		    j->unit, me->message != NULL ? me->message : me->name);
		job_end(j, -1, err);
		return 0;
	}
	if (sd_bus_message_read(m, "o", &path) < 0 ||
	    strlen(path) >= sizeof(j->path)) {
		snprintf(err, sizeof(err), "systemd's answer to scope %s is "
		    "not understood", j->unit);
		job_end(j, -1, err);
		return 0;
	}
	snprintf(j->path, sizeof(j->path), "%s", path);
	return 0;
}

/* ---- the API ------------------------------------------------------------ */

/*
 * Is systemd, PID 1 of the host, a process of our PID namespace? Its
 * private socket's peer credentials say: the kernel gives its pid as our
 * namespace sees it, 0 when it is outside. (/proc/1 cannot say: in a
 * namespace with a /proc of its own, that is the namespace's own init.)
 * -1: the socket cannot be reached.
 */
static int
systemd_visible(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd, r = -1;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", SD_PRIVATE + 10);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
		r = cr.pid != 0;
	close(fd);
	return r;
}

enum gk_cgsd_fit
gk_cgsd_usable(bool unified_only, char *why, size_t whylen)
{
	if (sd_booted() <= 0) {
		gk_seterr(why, whylen, "systemd is not PID 1");
		return GK_CGSD_NO;
	}
	if (!unified_only) {
		gk_seterr(why, whylen, "systemd runs with cgroup v1 "
		    "controllers (hybrid or legacy layout)");
		return GK_CGSD_NO;
	}
	if (systemd_visible() == 0) {
		gk_seterr(why, whylen, "gatekeeperd runs in a pid namespace "
		    "of its own (systemd cannot see its peers' pids)");
		return GK_CGSD_PIDNS;
	}
	return GK_CGSD_YES;
}

/* systemd's version ("252.38-1~deb12u1": 252); 0 if unknown. */
static unsigned
manager_version(struct gk_cgsd *sd)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *v = NULL;
	unsigned n = 0;

	if (sd_bus_get_property_string(sd->bus, SD_DEST, SD_PATH, SD_MANAGER,
	    "Version", &e, &v) >= 0 && v != NULL)
		n = (unsigned)strtoul(v, NULL, 10);
	if (n == 0)
		log_warnx("cgroup: systemd's version unknown (%s)",
		    e.message != NULL ? e.message : "not a number");
	free(v);
	sd_bus_error_free(&e);
	return n;
}

/* systemd's private socket, else the system bus; calls bounded by
 * SYNC_TIMEOUT_US. NULL with why. */
static sd_bus *
open_bus(char *why, size_t whylen)
{
	sd_bus *bus = NULL;
	int r;

	if ((r = sd_bus_new(&bus)) < 0 ||
	    (r = sd_bus_set_address(bus, SD_PRIVATE)) < 0 ||
	    (r = sd_bus_start(bus)) < 0) {
		sd_bus_unref(bus);
		bus = NULL;
		if ((r = sd_bus_open_system(&bus)) < 0) {
			gk_seterr(why, whylen, "cannot talk to systemd (%s, "
			    "or the system bus): %s", SD_PRIVATE + 10,
			    strerror(-r));
			return NULL;
		}
	}
	sd_bus_set_method_call_timeout(bus, SYNC_TIMEOUT_US);
	return bus;
}

static int
connect_bus(struct gk_cgsd *sd, char *why, size_t whylen)
{
	sd_bus *bus;
	int r;

	if ((bus = open_bus(why, whylen)) == NULL)
		return -1;
	if ((r = sd_bus_match_signal(bus, &sd->removed, NULL, SD_PATH,
	    SD_MANAGER, "JobRemoved", removed_cb, sd)) < 0) {
		gk_seterr(why, whylen, "systemd's JobRemoved signal: %s",
		    strerror(-r));
		sd_bus_flush_close_unref(bus);
		return -1;
	}
	sd->bus = bus;
	sd->rev = event_new(sd->base, sd_bus_get_fd(bus), EV_READ | EV_PERSIST,
	    bus_cb, sd);
	sd->wev = event_new(sd->base, sd_bus_get_fd(bus), EV_WRITE, bus_cb,
	    sd);
	sd->tev = evtimer_new(sd->base, bus_cb, sd);
	if (sd->rev == NULL || sd->wev == NULL || sd->tev == NULL ||
	    event_add(sd->rev, NULL) == -1) {
		gk_seterr(why, whylen, "out of memory");
		return -1;
	}
	sd->lost = false;
	sd->version = manager_version(sd);
	bus_update(sd);
	return 0;
}

static void
disconnect(struct gk_cgsd *sd)
{
	if (sd->rev != NULL)
		event_free(sd->rev);
	if (sd->wev != NULL)
		event_free(sd->wev);
	if (sd->tev != NULL)
		event_free(sd->tev);
	sd->rev = sd->wev = sd->tev = NULL;
	sd->removed = sd_bus_slot_unref(sd->removed);
	if (sd->bus != NULL)
		sd_bus_flush_close_unref(sd->bus);
	sd->bus = NULL;
}

struct gk_cgsd *
gk_cgsd_open(struct event_base *base, char *why, size_t whylen)
{
	struct gk_cgsd *sd;

	if ((sd = calloc(1, sizeof(*sd))) == NULL) {
		gk_seterr(why, whylen, "out of memory");
		return NULL;
	}
	sd->base = base;
	TAILQ_INIT(&sd->jobs);
	if (connect_bus(sd, why, whylen) == -1) {
		disconnect(sd);
		free(sd);
		return NULL;
	}
	return sd;
}

void
gk_cgsd_close(struct gk_cgsd *sd)
{
	struct gk_cgsd_job *j;

	if (sd == NULL)
		return;
	while ((j = TAILQ_FIRST(&sd->jobs)) != NULL) {
		if (j->done == NULL)	/* its cage ended: nothing stays */
			kill_scope(j->kill);
		job_free(j);
	}
	disconnect(sd);
	free(sd);
}

bool
gk_cgsd_unit_name(const char *prefix, const char *name, const char *suffix,
    char *out, size_t len)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.";
	size_t o;
	int n;

	if (name[0] == '\0' || name[0] == '.' ||
	    (n = snprintf(out, len, "%s", prefix)) < 0 || (size_t)n >= len)
		return false;
	for (o = (size_t)n; *name != '\0'; name++) {
		n = strchr(ok, *name) != NULL ?
		    snprintf(out + o, len - o, "%c", *name) :
		    snprintf(out + o, len - o, "\\x%02x", (unsigned char)*name);
		if (n < 0 || (size_t)n >= len - o)
			return false;
		o += (size_t)n;
	}
	n = snprintf(out + o, len - o, "%s", suffix);
	return n >= 0 && (size_t)n < len - o;
}

bool
gk_cgsd_slice_name(const char *name, char *out, size_t len)
{
	return gk_cgsd_unit_name("", name, ".slice", out, len);
}

int
gk_cgsd_own_scope(const char *unit, char *why, size_t whylen)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *bus;
	int r;

	if ((bus = open_bus(why, whylen)) == NULL)
		return -1;
	sd_bus_set_method_call_timeout(bus, OWN_CALL_US);
	/* PIDs 0: the caller, whose pid systemd has from the socket */
	r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER,
	    "StartTransientUnit", &e, NULL, "ssa(sv)a(sa(sv))", unit, "fail",
	    4, "Description", "s", "gatekeeperd and its cages", "PIDs", "au",
	    1, (uint32_t)0, "Delegate", "b", 1, "CollectMode", "s",
	    "inactive-or-failed", 0);
	if (r < 0 && sd_bus_error_has_name(&e,
	    "org.freedesktop.systemd1.UnitExists")) {
		sd_bus_error_free(&e);
		r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER,
		    "AttachProcessesToUnit", &e, NULL, "ssau", unit, "/daemon",
		    1, (uint32_t)0);
	}
	if (r < 0)
		gk_seterr(why, whylen, "systemd would not give gatekeeperd "
		    "the delegated scope %s: %s", unit, e.message != NULL ?
		    e.message : strerror(-r));
	sd_bus_error_free(&e);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? -1 : 0;
}

/* The scope's properties: who is in it, where, its limits, and that a
 * failed one (a limit's kill) is collected, not kept as failed. */
static int
scope_props(struct gk_cgsd *sd, sd_bus_message *m, const char *slice,
    const char *desc, pid_t pid, const struct gk_rlimits *l)
{
	int r;

	if ((r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Description", "s",
	    desc)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Slice", "s", slice)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1,
	    (uint32_t)pid)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "CollectMode", "s",
	    "inactive-or-failed")) < 0 ||
	    /* whoever ends a cage ends it at once, as cgroup.kill does */
	    (r = sd_bus_message_append(m, "(sv)", "KillSignal", "i",
	    SIGKILL)) < 0)
		return r;
	/* a process the memory limit kills is that process alone, as the
	 * kernel does it: OOMPolicy=continue, from systemd 253 on; 252
	 * stops the whole scope after an OOM kill (with SIGKILL, above) */
	if (sd->version >= 253 && (r = sd_bus_message_append(m, "(sv)",
	    "OOMPolicy", "s", "continue")) < 0)
		return r;
	if (l->memory != 0 && ((r = sd_bus_message_append(m, "(sv)",
	    "MemoryMax", "t", l->memory)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "MemorySwapMax", "t",
	    (uint64_t)0)) < 0))
		return r;
	if (l->pids != 0 && (r = sd_bus_message_append(m, "(sv)",
	    "TasksMax", "t", (uint64_t)l->pids)) < 0)
		return r;
	/* cpus in thousandths of a CPU: usec of CPU time per second */
	if (l->cpus != 0 && (r = sd_bus_message_append(m, "(sv)",
	    "CPUQuotaPerSecUSec", "t",
	    (uint64_t)l->cpus * CPU_USEC_PER_S / 1000)) < 0)
		return r;
	if ((r = sd_bus_message_close_container(m)) < 0)
		return r;
	return sd_bus_message_append(m, "a(sa(sv))", 0);
}

static bool
reconnect(struct gk_cgsd *sd, char *err, size_t errlen)
{
	if (!sd->lost)
		return true;
	disconnect(sd);
	if (connect_bus(sd, err, errlen) == -1) {
		disconnect(sd);
		sd->lost = true;
		return false;
	}
	log_info("cgroup: connected to systemd again");
	return true;
}

struct gk_cgsd_job *
gk_cgsd_scope_start(struct gk_cgsd *sd, const char *unit, const char *slice,
    const char *desc, pid_t pid, const struct gk_rlimits *l,
    const char *kill, gk_cgsd_done_cb done, void *arg, char *err,
    size_t errlen)
{
	struct timeval tv = { JOB_TIMEOUT_MS / 1000, 0 };
	struct gk_cgsd_job *j;
	sd_bus_message *m = NULL;
	int r;

	if (!reconnect(sd, err, errlen))
		return NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	j->sd = sd;
	j->pid = pid;
	j->done = done;
	j->arg = arg;
	snprintf(j->unit, sizeof(j->unit), "%s", unit);
	snprintf(j->kill, sizeof(j->kill), "%s", kill);
	snprintf(j->want, sizeof(j->want), "0::/%s/%s\n", slice, unit);
	TAILQ_INSERT_TAIL(&sd->jobs, j, entry);
	if ((j->timer = evtimer_new(sd->base, job_timeout_cb, j)) == NULL ||
	    evtimer_add(j->timer, &tv) == -1) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = sd_bus_message_new_method_call(sd->bus, &m, SD_DEST, SD_PATH,
	    SD_MANAGER, "StartTransientUnit")) < 0 ||
	    (r = sd_bus_message_append(m, "ss", unit, "fail")) < 0 ||
	    (r = scope_props(sd, m, slice, desc, pid, l)) < 0 ||
	    (r = sd_bus_call_async(sd->bus, &j->call, m, started_cb, j,
	    (uint64_t)JOB_TIMEOUT_MS * 1000)) < 0)
		goto fail;
	sd_bus_message_unref(m);
	bus_update(sd);
	return j;
fail:
	sd_bus_message_unref(m);
	gk_seterr(err, errlen, "cannot ask systemd for scope %s: %s", unit,
	    strerror(-r));
	job_free(j);
	return NULL;
}

void
gk_cgsd_job_cancel(struct gk_cgsd_job *j)
{
	if (j != NULL)
		j->done = NULL;
}

/* The unit's Job: (id, path); its JobType. 1 "stop", 0 else, -1. */
static int
job_is_stop(struct gk_cgsd *sd, const char *unitpath)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *jobpath;
	char *type = NULL;
	uint32_t id;
	int r, rc = -1;

	r = sd_bus_get_property(sd->bus, SD_DEST, unitpath,
	    "org.freedesktop.systemd1.Unit", "Job", &e, &reply, "(uo)");
	if (r < 0 || sd_bus_message_read(reply, "(uo)", &id, &jobpath) < 0)
		goto out;
	if (id == 0) {
		rc = 0;
		goto out;
	}
	if (sd_bus_get_property_string(sd->bus, SD_DEST, jobpath,
	    "org.freedesktop.systemd1.Job", "JobType", &e, &type) < 0)
		goto out;
	rc = strcmp(type, "stop") == 0;
out:
	free(type);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return rc;
}

int
gk_cgsd_unit_stopping(struct gk_cgsd *sd)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path;
	char *unit = NULL, why[256];
	int rc = -1;

	if (sd == NULL || !reconnect(sd, why, sizeof(why)))
		return -1;
	if (sd_pid_get_unit(0, &unit) < 0)
		return 0;		/* not a unit of its own */
	if (sd_bus_call_method(sd->bus, SD_DEST, SD_PATH, SD_MANAGER,
	    "GetUnit", &e, &reply, "s", unit) >= 0 &&
	    sd_bus_message_read(reply, "o", &path) >= 0)
		rc = job_is_stop(sd, path);
	if (rc == -1)
		log_warnx("cgroup: cannot tell whether %s is stopped or "
		    "restarted: %s", unit, e.message != NULL ? e.message :
		    "no answer");
	free(unit);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return rc;
}

void
gk_cgsd_slice_stop(struct gk_cgsd *sd, const char *slice)
{
	char why[256];

	if (sd == NULL || !reconnect(sd, why, sizeof(why)))
		return;
	if (sd_bus_call_method_async(sd->bus, NULL, SD_DEST, SD_PATH,
	    SD_MANAGER, "StopUnit", NULL, NULL, "ss", slice, "replace") < 0)
		return;
	(void)sd_bus_flush(sd->bus);
}
