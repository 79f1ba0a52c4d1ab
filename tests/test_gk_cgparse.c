/*
 * Tests for gk_cgparse: mountinfo of a hybrid host (this machine's
 * layout) and of a pure v2 one, escaped mount points, /proc/self/cgroup,
 * counter files, /proc/PID/stat with a hostile process name, and cage
 * cgroup names both ways; every truncation of each input is read without
 * reading past it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/cgroup/gk_cgparse.h"
#include "gatekeeper/cgroup/gk_cgroup_int.h"
#include "gatekeeper/cgroup/gk_cgsd.h"

static const char hybrid[] =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
    "35 30 0:32 / /sys/fs/cgroup/memory rw,relatime shared:5 - cgroup "
    "cgroup rw,memory\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "99 30 0:38 /sub /mnt/memsub rw - cgroup cgroup rw,memory\n";

static const char v2[] = "24 1 0:21 / /sys/fs/cg\\040two rw,nosuid - "
    "cgroup2 cgroup2 rw,nsdelegate\nnonsense\n";
static const char joined[] = "1 2 0:1 / /a\\09 rw - cgroup2 x rw\n"
    "3 2 0:3 / /c rw - cgroup c rw,cpu,cpuacct\n";

static void
test_mounts(void **state)
{
	struct gk_cg_mounts m;

	(void)state;
	assert_int_equal(gk_cg_mounts_parse(hybrid, strlen(hybrid), &m), 0);
	assert_string_equal(m.v2, "/sys/fs/cgroup/unified");
	assert_string_equal(m.v1[GK_CG_MEMORY], "/sys/fs/cgroup/memory");
	assert_string_equal(m.v1[GK_CG_PIDS], "/sys/fs/cgroup/pids");
	assert_string_equal(m.v1[GK_CG_CPU], "/sys/fs/cgroup/cpu");
	/* pure v2, an escaped space, a line that is not one */
	assert_int_equal(gk_cg_mounts_parse(v2, strlen(v2), &m), 1);
	assert_string_equal(m.v2, "/sys/fs/cg two");
	assert_string_equal(m.v1[GK_CG_MEMORY], "");
	/* "cpu,cpuacct" joined is cpu; a bad escape is skipped */
	assert_int_equal(gk_cg_mounts_parse(joined, strlen(joined), &m), 0);
	assert_string_equal(m.v2, "");
	assert_string_equal(m.v1[GK_CG_CPU], "/c");
}

static void
test_self(void **state)
{
	static const char self[] = "9:name=systemd:/\n8:pids:/\n"
	    "4:memory:/process_api/285dde0d\n2:cpu,cpuacct:/x\n0::/\n";
	struct gk_cg_self s;

	(void)state;
	assert_int_equal(gk_cg_self_parse(self, strlen(self), &s), 0);
	assert_string_equal(s.v2, "/");
	assert_string_equal(s.v1[GK_CG_MEMORY], "/process_api/285dde0d");
	assert_string_equal(s.v1[GK_CG_PIDS], "/");
	assert_string_equal(s.v1[GK_CG_CPU], "/x");
	assert_int_equal(gk_cg_self_parse("0::relative\nx\n", 14, &s), 2);
	assert_string_equal(s.v2, "");
}

static void
test_counter(void **state)
{
	static const char ev[] = "low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n";
	uint64_t v = 9;

	(void)state;
	assert_int_equal(gk_cg_counter(ev, strlen(ev), "oom_kill", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(gk_cg_counter(ev, strlen(ev), "max", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(gk_cg_counter(ev, strlen(ev), "oom_", &v), -1);
	assert_int_equal(gk_cg_counter("max x\n", 6, "max", &v), -1);
	assert_int_equal(gk_cg_counter("max", 3, "max", &v), -1);
}

static void
test_stat(void **state)
{
	static const char st[] = "1234 (a) b) (c) S 1000 1234 1234 0 -1 4194560 "
	    "100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100\n";
	uint64_t start;
	pid_t ppid;

	(void)state;
	assert_int_equal(gk_proc_stat_parse(st, strlen(st), &ppid, &start), 0);
	assert_int_equal(ppid, 1000);
	assert_int_equal(start, 987654);
	assert_int_equal(gk_proc_stat_parse(st, 40, &ppid, &start), -1);
	assert_int_equal(gk_proc_stat_parse("no paren", 8, &ppid, &start), -1);
}

static void
test_names(void **state)
{
	struct gk_cg_owner o = { 4026531836ULL, 4242, 987654 }, back;
	char buf[GK_CG_NAME_MAX + 1], id[16];

	(void)state;
	assert_true(gk_cg_name(buf, sizeof(buf), "ab12cd34", &o));
	assert_string_equal(buf, "cage-ab12cd34-4026531836-4242-987654");
	assert_true(gk_cg_name_parse(buf, id, sizeof(id), &back));
	assert_string_equal(id, "ab12cd34");
	assert_int_equal(back.pidns, o.pidns);
	assert_int_equal(back.pid, 4242);
	assert_int_equal(back.start, 987654);
	assert_false(gk_cg_name(buf, 10, "ab12cd34", &o));
	assert_false(gk_cg_name_parse("cage-ab-1-2", id, sizeof(id), &back));
	assert_false(gk_cg_name_parse("cage-AB-1-2-3", id, sizeof(id),
	    &back));
	assert_false(gk_cg_name_parse("cage-ab-1-0-3", id, sizeof(id),
	    &back));
	assert_false(gk_cg_name_parse("cage-ab-1-2-3x", id, sizeof(id),
	    &back));
	assert_false(gk_cg_name_parse("daemon", id, sizeof(id), &back));
	assert_false(gk_cg_name_parse("cage--1-2-3", id, sizeof(id), &back));
}

/* Every prefix of the hybrid mountinfo, in an exact-size copy. */
static void
test_truncated(void **state)
{
	struct gk_cg_mounts m;
	struct gk_cg_self s;
	uint64_t v, st;
	size_t i, n = strlen(hybrid);
	pid_t pp;
	char *cp;

	(void)state;
	for (i = 0; i <= n; i++) {
		assert_non_null(cp = malloc(i == 0 ? 1 : i));
		memcpy(cp, hybrid, i);
		(void)gk_cg_mounts_parse(cp, i, &m);
		(void)gk_cg_self_parse(cp, i, &s);
		(void)gk_cg_counter(cp, i, "rw", &v);
		(void)gk_proc_stat_parse(cp, i, &pp, &st);
		free(cp);
	}
}

/* A systemd scope's directory name -> the cage cgroup's name. */
static void
test_unscope(void **state)
{
	(void)state;
	assert_int_equal(gk_cg_unscope("cage-a-1-2-3.scope"), 12);
	assert_int_equal(gk_cg_unscope("x.scope"), 1);
	assert_int_equal(gk_cg_unscope(".scope"), 0);	/* nothing before */
	assert_int_equal(gk_cg_unscope("cage-a-1-2-3"), 0);
	assert_int_equal(gk_cg_unscope("cage.scope.x"), 0);
	assert_int_equal(gk_cg_unscope("scope"), 0);
	assert_int_equal(gk_cg_unscope(""), 0);
}

/* A path of /proc/self/cgroup in a unit: the unit a whole component. */
static void
test_in_unit(void **state)
{
	static const char u[] = "gatekeeperd-gk\\x2dtest.scope";
	char out[64], small[36];

	(void)state;
	assert_true(gk_cg_in_unit("/system.slice/gatekeeperd-gk\\x2dtest.scope"
	    "/daemon", u, out, sizeof(out)));
	assert_string_equal(out, "/system.slice/gatekeeperd-gk\\x2dtest.scope");
	assert_true(gk_cg_in_unit("/system.slice/gatekeeperd-gk\\x2dtest.scope",
	    u, out, sizeof(out)));
	assert_string_equal(out, "/system.slice/gatekeeperd-gk\\x2dtest.scope");
	/* part of a component, either end: not in it */
	assert_false(gk_cg_in_unit("/system.slice/xgatekeeperd-gk\\x2dtest.scope",
	    u, out, sizeof(out)));
	assert_false(gk_cg_in_unit("/system.slice/gatekeeperd-gk\\x2dtest.scope2",
	    u, out, sizeof(out)));
	assert_false(gk_cg_in_unit("gatekeeperd-gk\\x2dtest.scope", u, out,
	    sizeof(out)));
	assert_false(gk_cg_in_unit("/user.slice/session-2.scope", u, out,
	    sizeof(out)));
	assert_false(gk_cg_in_unit("/", u, out, sizeof(out)));
	assert_false(gk_cg_in_unit("/a", "", out, sizeof(out)));
	/* a later whole component after a partial one */
	assert_true(gk_cg_in_unit("/x.scopex/x.scope/y", "x.scope", out,
	    sizeof(out)));
	assert_string_equal(out, "/x.scopex/x.scope");
	/* "/system.slice/" + 29 = 43 bytes and its NUL: too long for 36 */
	assert_false(gk_cg_in_unit("/system.slice/gatekeeperd-gk\\x2dtest.scope",
	    u, small, sizeof(small)));
	assert_true(gk_cg_in_unit("/gatekeeperd-gk\\x2dtest.scope", u, small,
	    sizeof(small)));
}

/* The daemon's own scope's name: its subtree, escaped as systemd does. */
static void
test_own_unit(void **state)
{
	char out[64], small[20];

	(void)state;
	assert_true(cg_own_unit("gatekeeper", out, sizeof(out)));
	assert_string_equal(out, "gatekeeperd-gatekeeper.scope");
	assert_true(cg_own_unit("gk-test-1", out, sizeof(out)));
	assert_string_equal(out, "gatekeeperd-gk\\x2dtest\\x2d1.scope");
	assert_false(cg_own_unit("", out, sizeof(out)));
	assert_false(cg_own_unit("gatekeeper", small, sizeof(small)));
}

/* --cgroup NAME -> the slice: systemd's escaping, bounded. */
static void
test_slice_name(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;	/* NULL: refused */
	} cases[] = {
		{ "gatekeeper", "gatekeeper.slice" },
		{ "gk-test-17", "gk\\x2dtest\\x2d17.slice" },
		{ "a_b:c.d", "a_b:c.d.slice" },
		{ "x y", "x\\x20y.slice" },
		{ "", NULL },
		{ ".hidden", NULL },
	};
	char out[64], small[13];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].out == NULL) {
			assert_false(gk_cgsd_slice_name(cases[i].in, out,
			    sizeof(out)));
			continue;
		}
		assert_true(gk_cgsd_slice_name(cases[i].in, out, sizeof(out)));
		assert_string_equal(out, cases[i].out);
	}
	/* "gatekeeper.slice" needs 17 bytes: cut at every size below */
	for (i = 1; i < 17; i++)
		assert_false(gk_cgsd_slice_name("gatekeeper", small,
		    i < sizeof(small) ? i : sizeof(small)));
	/* "a\\x2db.slice": 12 bytes and its NUL */
	assert_false(gk_cgsd_slice_name("a-b", small, 9));
	assert_false(gk_cgsd_slice_name("a-b", small, 12));
	assert_true(gk_cgsd_slice_name("a-b", small, 13));
	assert_string_equal(small, "a\\x2db.slice");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_slice_name),
		cmocka_unit_test(test_unscope),
		cmocka_unit_test(test_in_unit),
		cmocka_unit_test(test_own_unit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
