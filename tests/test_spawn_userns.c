/*
 * Why a user namespace could not be made (spawn_userns_diagnose()): each
 * way hosts restrict them, as the kernel reports it at each step, gives
 * the setting and the command that allows them; anything else says the
 * step and the error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"

#define PROFILE		"/etc/apparmor.d/gk-run"

/* A host that allows them: nothing restricts, nothing is absent. */
static const struct spawn_userns_host open_host = {
	.max_user = 63379, .max_net = 63379, .aa_restrict = 0, .clone = -1,
	.aa_confined = false, .profile = PROFILE,
};

static const struct {
	const char		*name;
	enum spawn_userns_step	 step;
	int			 err;
	long			 max_user, max_net, aa_restrict, clone;
	bool			 confined;
	const char		*want[3];	/* substrings, in order */
	const char		*not;		/* must not appear */
} cases[] = {
	/* user.max_user_namespaces = 0: unshare fails with ENOSPC */
	{ "max_user 0", SPAWN_USERNS_CREATE, ENOSPC, 0, 63379, -1, -1, false,
	    { "this host does not let unprivileged users create user "
	    "namespaces (user.max_user_namespaces = 0); gk-run needs them: "
	    "sysctl -w user.max_user_namespaces=15000 (and in "
	    "/etc/sysctl.d/ to keep it)" }, NULL },
	{ "max_user 0, bwrap's nested", SPAWN_USERNS_NESTED, ENOSPC, 0, -1,
	    0, 1, false, { "(user.max_user_namespaces = 0)",
	    "sysctl -w user.max_user_namespaces=15000" }, "AppArmor" },
	{ "max_net 0 (gated: user and net at once)", SPAWN_USERNS_CREATE,
	    ENOSPC, 63379, 0, -1, -1, false,
	    { "network namespaces (user.max_net_namespaces = 0)",
	    "sysctl -w user.max_net_namespaces=15000" }, NULL },
	{ "max_net 0 does not explain a nested user namespace",
	    SPAWN_USERNS_NESTED, ENOSPC, 7, 0, -1, -1, false,
	    { "cannot create a nested user namespace (as bwrap does",
	    "user.max_user_namespaces = 7 is used up",
	    "nested 32 deep" }, "max_net" },
	{ "limit used up", SPAWN_USERNS_CREATE, ENOSPC, 12, 12, 0, -1, false,
	    { "cannot create a user namespace: No space left on device",
	    "user.max_user_namespaces = 12 is used up",
	    "sysctl -w user.max_user_namespaces=15000" }, NULL },
	{ "limit, settings unreadable", SPAWN_USERNS_CREATE, ENOSPC, -1, -1,
	    -1, -1, false, { "cannot create a user namespace: No space left",
	    "user.max_user_namespaces and user.max_net_namespaces" }, NULL },
	/* Debian's kernel.unprivileged_userns_clone = 0: EPERM */
	{ "debian clone 0", SPAWN_USERNS_CREATE, EPERM, 63379, 63379, -1, 0,
	    false, { "this host does not let unprivileged users create user "
	    "namespaces (kernel.unprivileged_userns_clone = 0); gk-run needs "
	    "them: sysctl -w kernel.unprivileged_userns_clone=1 (and in "
	    "/etc/sysctl.d/ to keep it)" }, NULL },
	/* AppArmor (Ubuntu 23.10+): unshare fails, or the map write does,
	 * or bwrap's nested unshare */
	{ "apparmor: unshare EPERM", SPAWN_USERNS_CREATE, EPERM, 63379,
	    63379, 1, -1, false, { "this host does not let unprivileged "
	    "users create user namespaces (AppArmor restricts them: "
	    "kernel.apparmor_restrict_unprivileged_userns = 1, and gk-run "
	    "runs without a profile that allows them); install the profile: "
	    "apparmor_parser -r " PROFILE " (shipped with gatekeeper), or "
	    "allow them to every program: sysctl -w "
	    "kernel.apparmor_restrict_unprivileged_userns=0" }, NULL },
	{ "apparmor: unshare EACCES", SPAWN_USERNS_CREATE, EACCES, 63379,
	    63379, 1, -1, false, { "(AppArmor restricts them",
	    "apparmor_parser -r " PROFILE }, NULL },
	{ "apparmor: uid_map EPERM", SPAWN_USERNS_MAP, EPERM, 63379, 63379,
	    1, -1, false, { "kernel.apparmor_restrict_unprivileged_userns = 1",
	    "without a profile that allows them" }, "uid and gid maps" },
	{ "apparmor: nested EACCES", SPAWN_USERNS_NESTED, EACCES, 63379,
	    63379, 1, -1, false, { "AppArmor restricts them" }, NULL },
	{ "apparmor: under another profile", SPAWN_USERNS_MAP, EPERM, 63379,
	    63379, 1, -1, true, { "gk-run runs under a profile that does not "
	    "allow them", "apparmor_parser -r " PROFILE }, "without" },
	{ "apparmor wins over a Debian clone 0", SPAWN_USERNS_CREATE, EPERM,
	    63379, 63379, 1, 0, false, { "AppArmor" },
	    "unprivileged_userns_clone" },
	/* clone 0 does not fail maps: not blamed for them */
	{ "clone 0, map EPERM", SPAWN_USERNS_MAP, EPERM, 63379, 63379, 0, 0,
	    false, { "cannot write the user namespace's uid and gid maps: "
	    "Operation not permitted", "gk-run needs them" },
	    "unprivileged_userns_clone" },
	/* forbidden by something gk-run cannot name (a container's
	 * seccomp filter, another sandbox) */
	{ "unknown EPERM", SPAWN_USERNS_CREATE, EPERM, 63379, 63379, -1, -1,
	    false, { "cannot create a user namespace: Operation not "
	    "permitted", "run it where they are allowed" }, "sysctl" },
	{ "unknown nested EPERM", SPAWN_USERNS_NESTED, EPERM, 63379, 63379,
	    0, 1, false, { "cannot create a nested user namespace (as bwrap "
	    "does in the cage's): Operation not permitted" },
	    "sysctl" },
	/* no CONFIG_USER_NS: no /proc/sys/user/max_user_namespaces */
	{ "no user namespaces in the kernel", SPAWN_USERNS_CREATE, EINVAL,
	    -1, -1, -1, -1, false, { "cannot create a user namespace: "
	    "Invalid argument", "CONFIG_USER_NS" }, NULL },
	{ "EINVAL with the setting present", SPAWN_USERNS_CREATE, EINVAL,
	    63379, 63379, -1, -1, false, { "cannot create a user namespace: "
	    "Invalid argument" }, "CONFIG_USER_NS" },
	{ "ENOSPC writing a map is no limit", SPAWN_USERNS_MAP, ENOSPC, 0, 0,
	    -1, -1, false, { "cannot write the user namespace's uid and gid "
	    "maps: No space left on device" }, "sysctl" },
	{ "other errors", SPAWN_USERNS_MAP, ENOMEM, 0, 0, 1, 0, false,
	    { "cannot write the user namespace's uid and gid maps: Cannot "
	    "allocate memory" }, "sysctl" },
};

static void
test_cases(void **state)
{
	struct spawn_userns_host h;
	char msg[SPAWN_ERRLEN];
	const char *at;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h = open_host;
		h.max_user = cases[i].max_user;
		h.max_net = cases[i].max_net;
		h.aa_restrict = cases[i].aa_restrict;
		h.clone = cases[i].clone;
		h.aa_confined = cases[i].confined;
		memset(msg, 'x', sizeof(msg));
		spawn_userns_diagnose(cases[i].step, cases[i].err, &h, msg,
		    sizeof(msg));
		print_message("%s: %s\n", cases[i].name, msg);
		at = msg;
		for (j = 0; j < 3 && cases[i].want[j] != NULL; j++) {
			at = strstr(at, cases[i].want[j]);
			assert_non_null(at);
		}
		if (cases[i].not != NULL)
			assert_null(strstr(msg, cases[i].not));
		/* one line, no prefix (main() adds "gk-run: ") */
		assert_null(strchr(msg, '\n'));
		assert_true(strncmp(msg, "gk-run", 6) != 0);
	}
}

/* Every message fits SPAWN_ERRLEN whole, and a small buffer is cut
 * safely. */
static void
test_bounds(void **state)
{
	static const int errs[] = { ENOSPC, EPERM, EACCES, EINVAL, ENOMEM };
	struct spawn_userns_host h = open_host;
	char msg[SPAWN_ERRLEN], small[16];
	int step;
	size_t e;

	(void)state;
	h.max_user = 9223372036854775807L;
	h.aa_restrict = 1;
	for (step = SPAWN_USERNS_CREATE; step <= SPAWN_USERNS_NESTED; step++)
		for (e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
			spawn_userns_diagnose((enum spawn_userns_step)step,
			    errs[e], &h, msg, sizeof(msg));
			assert_true(strlen(msg) < sizeof(msg) - 1);
			memset(small, 'x', sizeof(small));
			spawn_userns_diagnose((enum spawn_userns_step)step,
			    errs[e], &h, small, sizeof(small));
			assert_int_equal(strlen(small), sizeof(small) - 1);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
