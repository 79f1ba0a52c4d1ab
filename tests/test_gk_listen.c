/*
 * gk_listen: binding (IP_FREEBIND, errors), the session cap, the pause
 * after EMFILE and its two ends (the timer, a session ending), over real
 * sockets on 127.0.0.1 and a unix socket. EMFILE is driven as in
 * test_relay.c: RLIMIT_NOFILE lowered to the highest open descriptor,
 * every free one below it taken.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_listen.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"

#define NMAX		16
#define FILL_MAX	4096

struct fx {
	struct event_base	*base;
	struct gk_listen	*l;
	struct sockaddr_in	 sin;		/* where l listens */
	int			 acc[NMAX];	/* accepted, -1 once done */
	struct gk_addr		 peer[NMAX];
	int			 nacc;
	int			 fill[FILL_MAX];	/* exhaust() */
	int			 nfill;
	struct rlimit		 old;
};

static int
count_fds(void)
{
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*de;
	int		 n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* The listener's callback: keep the fd, answer one byte. */
static void
accept_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct fx *f = arg;

	assert_true(f->nacc < NMAX);
	if (sa->sa_family == AF_UNIX)	/* no IP address */
		f->peer[f->nacc].family = AF_UNSPEC;
	else
		assert_int_equal(gk_addr_from_sockaddr(&f->peer[f->nacc], sa),
		    0);
	f->acc[f->nacc++] = fd;
	assert_int_equal(write(fd, "!", 1), 1);
}

/* Run the loop in 10 ms slices until pred(f) or `ms` passed. */
static bool
run_until(struct fx *f, bool (*pred)(struct fx *, int), int arg, int ms)
{
	struct timeval	 tv = { 0, 10 * 1000 };
	uint64_t	 end = gk_now_ms() + (uint64_t)ms;

	while (!(pred != NULL && pred(f, arg)) && gk_now_ms() < end) {
		event_base_loopexit(f->base, &tv);
		event_base_dispatch(f->base);
	}
	return pred != NULL && pred(f, arg);
}

static bool
accepted(struct fx *f, int n)
{
	return f->nacc >= n;
}

static bool
paused(struct fx *f, int unused)
{
	(void)unused;
	return !gk_listen_accepting(f->l);
}

/* A client connected to f's listener (the kernel completes it at once,
 * into the backlog). */
static int
client(struct fx *f)
{
	int fd;

	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >=
	    0);
	assert_int_equal(connect(fd, (struct sockaddr *)&f->sin,
	    sizeof(f->sin)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/* Whether the listener answered this client: 1 yes, 0 not yet (and the
 * connection is still open, waiting), -1 closed or failed. */
static int
answered(int fd)
{
	char	 c;
	ssize_t	 n = read(fd, &c, 1);

	if (n == 1)
		return c == '!' ? 1 : -1;
	return n == -1 && errno == EAGAIN ? 0 : -1;
}

/* The owner ends session i. */
static void
done(struct fx *f, int i)
{
	assert_true(f->acc[i] != -1);
	close(f->acc[i]);
	f->acc[i] = -1;
	gk_listen_session_done(f->l);
}

/* No descriptor left for this process. */
static void
exhaust(struct fx *f)
{
	struct rlimit	 lim;
	int		 fd, maxfd = 0;

	for (fd = 0; fd < FILL_MAX; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			maxfd = fd;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &f->old), 0);
	lim = f->old;
	lim.rlim_cur = (rlim_t)maxfd + 1;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	f->nfill = 0;
	while (f->nfill < FILL_MAX &&
	    (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1)
		f->fill[f->nfill++] = fd;
	assert_int_equal(errno, EMFILE);
}

static void
release(struct fx *f)
{
	while (f->nfill > 0)
		close(f->fill[--f->nfill]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &f->old), 0);
}

static void
listen_tcp(struct fx *f, size_t cap)
{
	struct gk_addr	 lo;
	socklen_t	 len = sizeof(f->sin);
	int		 fd;

	assert_int_equal(gk_addr_parse("127.0.0.1", &lo), 0);
	assert_true((fd = gk_listen_bind(&lo, 0, SOCK_STREAM, 16)) >= 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&f->sin, &len), 0);
	f->l = gk_listen_new(f->base, fd, cap, "test", accept_cb, f);
	assert_non_null(f->l);
	assert_true(gk_listen_accepting(f->l));
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(f->base = event_base_new());
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	int i;

	for (i = 0; i < f->nacc; i++)
		if (f->acc[i] != -1)
			done(f, i);
	gk_listen_free(f->l);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* ---- binding ---------------------------------------------------------- */

/* The gateway address need not exist yet (IP_FREEBIND): 192.0.2.1 is on
 * no link here. Non-blocking, close-on-exec, TCP and UDP. */
static void
test_bind_freebind(void **state)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	struct gk_addr		 a;
	int			 fd, type, i;
	const int		 types[] = { SOCK_STREAM, SOCK_DGRAM };

	(void)state;
	assert_int_equal(gk_addr_parse("192.0.2.1", &a), 0);
	for (i = 0; i < 2; i++) {
		type = types[i];
		assert_true((fd = gk_listen_bind(&a, 0, type, 8)) >= 0);
		assert_int_equal(getsockname(fd, (struct sockaddr *)&sin,
		    &len), 0);
		assert_int_equal(sin.sin_addr.s_addr, inet_addr("192.0.2.1"));
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
		close(fd);
	}
}

/* A port in use fails with EADDRINUSE and leaks nothing. */
static void
test_bind_in_use(void **state)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	struct gk_addr		 lo;
	int			 fd, n;

	(void)state;
	assert_int_equal(gk_addr_parse("127.0.0.1", &lo), 0);
	assert_true((fd = gk_listen_bind(&lo, 0, SOCK_STREAM, 8)) >= 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	n = count_fds();
	errno = 0;
	assert_int_equal(gk_listen_bind(&lo, ntohs(sin.sin_port),
	    SOCK_STREAM, 8), -1);
	assert_int_equal(errno, EADDRINUSE);
	assert_int_equal(count_fds(), n);
	close(fd);
}

/* ---- accepting -------------------------------------------------------- */

static void
test_accept(void **state)
{
	struct fx	*f = *state;
	char		 buf[GK_ADDR_STRLEN];
	int		 c, n = count_fds();

	listen_tcp(f, 0);
	c = client(f);
	assert_true(run_until(f, accepted, 1, 2000));
	assert_int_equal(answered(c), 1);
	assert_string_equal(gk_addr_ntop(&f->peer[0], buf, sizeof(buf)),
	    "127.0.0.1");
	assert_true(fcntl(f->acc[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(f->acc[0], F_GETFL) & O_NONBLOCK);
	assert_int_equal(gk_listen_sessions(f->l), 1);
	done(f, 0);
	assert_int_equal(gk_listen_sessions(f->l), 0);
	close(c);
	/* the listener owns its socket: freeing it closes it */
	gk_listen_free(f->l);
	f->l = NULL;
	assert_int_equal(count_fds(), n);
}

/* An already bound unix socket (the control socket's case). */
static void
test_unix_fd(void **state)
{
	struct fx		*f = *state;
	struct sockaddr_un	 sun = { .sun_family = AF_UNIX };
	socklen_t		 len;
	int			 fd, c;

	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "gk_listen_test.%d", (int)getpid());
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(sun.sun_path + 1));
	assert_true((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_non_null(f->l = gk_listen_new(f->base, fd, 4, "unix",
	    accept_cb, f));
	assert_true((c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >=
	    0);
	assert_int_equal(connect(c, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(fcntl(c, F_SETFL, O_NONBLOCK), 0);
	assert_true(run_until(f, accepted, 1, 2000));
	assert_int_equal(answered(c), 1);
	assert_int_equal(f->peer[0].family, AF_UNSPEC);
	assert_int_equal(gk_listen_sessions(f->l), 1);
	close(c);
}

/* At the cap the listener stops; clients wait; a session ending lets the
 * next one in. */
static void
test_cap(void **state)
{
	struct fx	*f = *state;
	int		 c[3], i;

	listen_tcp(f, 2);
	for (i = 0; i < 3; i++)
		c[i] = client(f);
	assert_true(run_until(f, accepted, 2, 2000));
	assert_false(run_until(f, accepted, 3, 300));
	assert_int_equal(gk_listen_sessions(f->l), 2);
	assert_false(gk_listen_accepting(f->l));
	assert_int_equal(answered(c[0]) + answered(c[1]) + answered(c[2]), 2);
	done(f, 0);
	assert_true(gk_listen_accepting(f->l));
	assert_true(run_until(f, accepted, 3, 2000));
	assert_false(gk_listen_accepting(f->l));	/* at the cap again */
	for (i = 0; i < 3; i++)
		(void)answered(c[i]);
	done(f, 1);
	done(f, 2);
	assert_true(gk_listen_accepting(f->l));
	assert_int_equal(gk_listen_sessions(f->l), 0);
	for (i = 0; i < 3; i++)
		close(c[i]);
}

/* A session refused by the callback at once: no count left behind. */
static void
refuse_cb(int fd, struct sockaddr *sa, void *arg)
{
	struct fx *f = arg;

	(void)sa;
	close(fd);
	f->nacc++;
	gk_listen_session_done(f->l);
}

static void
test_refused_at_once(void **state)
{
	struct fx	*f = *state;
	struct gk_addr	 lo;
	socklen_t	 len = sizeof(f->sin);
	int		 fd, c[2];

	assert_int_equal(gk_addr_parse("127.0.0.1", &lo), 0);
	assert_true((fd = gk_listen_bind(&lo, 0, SOCK_STREAM, 16)) >= 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&f->sin, &len), 0);
	assert_non_null(f->l = gk_listen_new(f->base, fd, 1, "test",
	    refuse_cb, f));
	c[0] = client(f);
	c[1] = client(f);
	/* cap 1, but each session ends inside the callback */
	assert_true(run_until(f, accepted, 2, 2000));
	assert_int_equal(gk_listen_sessions(f->l), 0);
	assert_true(gk_listen_accepting(f->l));
	f->nacc = 0;
	close(c[0]);
	close(c[1]);
}

/* ---- out of descriptors ----------------------------------------------- */

/* EMFILE: the listener pauses; the client waits (its connection stays
 * open, unanswered) even once descriptors are back, until the pause's
 * timer ends it; then it is answered. */
static void
test_emfile_timer(void **state)
{
	struct fx	*f = *state;
	uint64_t	 t0, dt;
	int		 c;

	listen_tcp(f, 0);
	c = client(f);
	exhaust(f);
	assert_true(run_until(f, paused, 0, 2000));
	t0 = gk_now_ms();
	assert_int_equal(f->nacc, 0);
	assert_int_equal(gk_listen_sessions(f->l), 0);
	release(f);
	assert_false(run_until(f, accepted, 1, 300));
	assert_false(gk_listen_accepting(f->l));
	assert_int_equal(answered(c), 0);		/* waiting */
	assert_true(run_until(f, accepted, 1, 3000));
	dt = gk_now_ms() - t0;
	assert_true(dt >= GK_LISTEN_PAUSE_SEC * 1000 - 100);
	assert_true(dt < GK_LISTEN_PAUSE_SEC * 1000 + 1500);
	assert_true(gk_listen_accepting(f->l));
	assert_int_equal(answered(c), 1);
	close(c);
}

/* While descriptors are still short the listener keeps pausing (and does
 * not spin); it answers once they are back. */
static void
test_emfile_long(void **state)
{
	struct fx	*f = *state;
	clock_t		 cpu;
	int		 c;

	listen_tcp(f, 0);
	c = client(f);
	exhaust(f);
	cpu = clock();
	assert_false(run_until(f, accepted, 1, 2500));	/* > one pause */
	assert_true(clock() - cpu < CLOCKS_PER_SEC / 4);	/* asleep */
	assert_false(gk_listen_accepting(f->l));
	assert_int_equal(answered(c), 0);
	release(f);
	assert_true(run_until(f, accepted, 1, 3000));
	assert_int_equal(answered(c), 1);
	close(c);
}

/* EMFILE, then a session ends: the pause ends at once, not at the timer. */
static void
test_emfile_session_done(void **state)
{
	struct fx	*f = *state;
	uint64_t	 t0;
	int		 a, b;

	listen_tcp(f, 0);
	a = client(f);
	assert_true(run_until(f, accepted, 1, 2000));
	assert_int_equal(answered(a), 1);
	b = client(f);
	exhaust(f);
	assert_true(run_until(f, paused, 0, 2000));
	release(f);
	assert_false(run_until(f, accepted, 2, 100));
	assert_int_equal(answered(b), 0);
	t0 = gk_now_ms();
	done(f, 0);		/* session a ends: a descriptor comes back */
	assert_true(gk_listen_accepting(f->l));
	assert_true(run_until(f, accepted, 2, 3000));
	assert_true(gk_now_ms() - t0 < GK_LISTEN_PAUSE_SEC * 1000 / 2);
	assert_int_equal(answered(b), 1);
	close(a);
	close(b);
}

/* EMFILE at the cap's edge: a pause and the cap together; the listener
 * comes back only when both allow it. */
static void
test_emfile_and_cap(void **state)
{
	struct fx	*f = *state;
	int		 c[3];

	listen_tcp(f, 2);
	c[0] = client(f);
	assert_true(run_until(f, accepted, 1, 2000));
	c[1] = client(f);
	c[2] = client(f);
	exhaust(f);
	assert_true(run_until(f, paused, 0, 2000));
	release(f);
	/* the timer ends the pause: one more fits under the cap */
	assert_true(run_until(f, accepted, 2, 3000));
	assert_false(run_until(f, accepted, 3, 300));
	assert_false(gk_listen_accepting(f->l));
	done(f, 0);
	assert_true(run_until(f, accepted, 3, 2000));
	assert_int_equal(answered(c[0]) + answered(c[1]) + answered(c[2]), 3);
	close(c[0]);
	close(c[1]);
	close(c[2]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_freebind),
		cmocka_unit_test(test_bind_in_use),
		cmocka_unit_test_setup_teardown(test_accept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_at_once, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_emfile_timer, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_emfile_long, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_emfile_session_done,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_emfile_and_cap, setup,
		    teardown),
	};

	log_init("test_gk_listen", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
