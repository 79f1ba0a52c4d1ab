/*
 * gk_cgmove: a cage's first process moved into its cgroups off the event
 * loop.
 *
 * Writing a pid to cgroup.procs makes the kernel wait for an RCU grace
 * period (cgroup_threadgroup_rwsem's writer): 7-31 ms a move on a
 * virtual machine, during which gatekeeperd's loop, and so every cage's
 * DNS and proxying, stood still. So the writes (v2's, then the v1
 * hierarchies') run on a thread of their own, which touches nothing but
 * its own copy of the paths and the pid, and says it is done through a
 * pipe the loop watches; the loop then answers the cage.attach. A cage
 * that ends meanwhile cancels it: the loop only frees what is left.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_thread.h"
#include "gatekeeper/cgroup/gk_cgroup.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"

struct cg_move {
	struct gk_cg_cage *c;		/* NULL: the cage ended (loop side) */
	char		 path[CG__DIRS][CG_FILE_PATH_MAX];
	int		 n;
	char		 pid[32];
	int		 rc;		/* the thread's */
	char		 err[256];
	int		 pipe[2];
	struct event	*ev;
};

static void
move_free(struct cg_move *m)
{
	if (m->ev != NULL)
		event_free(m->ev);
	close(m->pipe[0]);
	close(m->pipe[1]);
	free(m);
}

static void *
move_run(void *arg)
{
	struct cg_move *m = arg;
	int i;

	m->rc = 0;
	for (i = 0; i < m->n && m->rc == 0; i++)
		m->rc = cg_write_file(m->path[i], m->pid, m->err,
		    sizeof(m->err));
	/* the loop reads m once this byte is there */
	while (write(m->pipe[1], "", 1) == -1 && errno == EINTR)
		;
	return NULL;
}

static void
move_done(evutil_socket_t fd, short what, void *arg)
{
	struct cg_move *m = arg;
	struct gk_cg_cage *c = m->c;
	char b;

	(void)what;
	if (read(fd, &b, 1) != 1 && errno == EAGAIN)
		return;		/* not yet */
	if (c != NULL) {
		c->move = NULL;
		c->cb(c->cb_arg, m->rc, m->err);
	}
	move_free(m);
}

int
cg_move_start(struct gk_cg_cage *c, pid_t pid, char *err, size_t errlen)
{
	struct cg_move *m;
	pthread_t t;
	int d, rc;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return gk_seterr(err, errlen, "out of memory");
	m->c = c;
	snprintf(m->pid, sizeof(m->pid), "%d", (int)pid);
	for (d = 0; d < CG__DIRS; d++)
		if (c->made[d])
			cg_cage_file(c, d, "cgroup.procs", m->path[m->n++]);
	if (pipe2(m->pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		free(m);
		return gk_seterr(err, errlen, "pipe: %s", strerror(errno));
	}
	if ((m->ev = event_new(c->g->base, m->pipe[0], EV_READ | EV_PERSIST,
	    move_done, m)) == NULL || event_add(m->ev, NULL) == -1) {
		move_free(m);
		return gk_seterr(err, errlen, "out of memory");
	}
	/* signals are the loop's */
	if ((rc = gk_thread_start(&t, move_run, m, true)) != 0) {
		move_free(m);
		return gk_seterr(err, errlen, "cannot start a thread to put "
		    "the process in its cgroup: %s", strerror(rc));
	}
	c->move = m;
	return 1;
}

void
cg_move_cancel(struct gk_cg_cage *c)
{
	if (c->move != NULL) {
		c->move->c = NULL;	/* the loop frees it when done */
		c->move = NULL;
	}
}
