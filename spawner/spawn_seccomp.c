/*
 * The seccomp profiles, built with libseccomp and handed to bwrap as
 * BPF (--seccomp FD). Both start from "allow" and deny a list:
 *
 * default: EPERM for ptrace, kexec_load, kexec_file_load, init_module,
 *   finit_module, delete_module, keyctl, request_key, add_key, mount,
 *   umount, umount2, pivot_root, the new mount API (open_tree,
 *   move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr),
 *   swapon, swapoff, reboot, nfsservctl, vmsplice, migrate_pages,
 *   move_pages, userfaultfd, bpf, perf_event_open, and the CAP_SYS_*
 *   calls acct, quotactl, quotactl_fd, lookup_dcookie, syslog,
 *   open_by_handle_at, and io_uring (setup, enter, register: programs
 *   that use it fall back to plain calls); the process is killed (SIGSYS) on iopl, ioperm,
 *   clock_settime and settimeofday.
 * relaxed: EPERM for reboot, kexec_load, kexec_file_load, init_module,
 *   finit_module, delete_module, swapon, swapoff.
 * Both: no new namespaces (NOTES-linux.md, section 5: denying unshare
 *   alone is not enough): setns, and unshare or clone with any CLONE_NEW*
 *   flag (one masked rule per flag) fail with EPERM; clone3, whose flags
 *   are in memory where seccomp cannot look, fails with ENOSYS so that
 *   glibc falls back to clone.
 * Calls from other ABIs (i386, x32) hit libseccomp's bad-arch action,
 * which kills.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <seccomp.h>

#include "spawner/spawn_int.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

enum sc_action {
	SC_EPERM,
	SC_KILL,
};

struct sc_rule {
	const char	*name;
	enum sc_action	 action;
};

static const struct sc_rule default_rules[] = {
	{ "ptrace", SC_EPERM }, { "kexec_load", SC_EPERM },
	{ "kexec_file_load", SC_EPERM }, { "init_module", SC_EPERM },
	{ "finit_module", SC_EPERM }, { "delete_module", SC_EPERM },
	{ "keyctl", SC_EPERM }, { "request_key", SC_EPERM },
	{ "add_key", SC_EPERM }, { "mount", SC_EPERM },
	{ "umount", SC_EPERM }, { "umount2", SC_EPERM },
	{ "pivot_root", SC_EPERM }, { "open_tree", SC_EPERM },
	{ "move_mount", SC_EPERM }, { "fsopen", SC_EPERM },
	{ "fsconfig", SC_EPERM }, { "fsmount", SC_EPERM },
	{ "fspick", SC_EPERM }, { "mount_setattr", SC_EPERM },
	{ "swapon", SC_EPERM }, { "swapoff", SC_EPERM },
	{ "reboot", SC_EPERM }, { "nfsservctl", SC_EPERM },
	{ "vmsplice", SC_EPERM }, { "migrate_pages", SC_EPERM },
	{ "move_pages", SC_EPERM }, { "userfaultfd", SC_EPERM },
	{ "bpf", SC_EPERM }, { "perf_event_open", SC_EPERM },
	{ "acct", SC_EPERM }, { "quotactl", SC_EPERM },
	{ "quotactl_fd", SC_EPERM }, { "lookup_dcookie", SC_EPERM },
	{ "syslog", SC_EPERM }, { "open_by_handle_at", SC_EPERM },
	/* a large kernel surface; libuv, liburing users fall back */
	{ "io_uring_setup", SC_EPERM }, { "io_uring_enter", SC_EPERM },
	{ "io_uring_register", SC_EPERM },
	{ "iopl", SC_KILL }, { "ioperm", SC_KILL },
	{ "clock_settime", SC_KILL }, { "settimeofday", SC_KILL },
	{ NULL, SC_EPERM },
};

static const struct sc_rule relaxed_rules[] = {
	{ "reboot", SC_EPERM }, { "kexec_load", SC_EPERM },
	{ "kexec_file_load", SC_EPERM }, { "init_module", SC_EPERM },
	{ "finit_module", SC_EPERM }, { "delete_module", SC_EPERM },
	{ "swapon", SC_EPERM }, { "swapoff", SC_EPERM },
	{ NULL, SC_EPERM },
};

/* CLONE_NEWTIME shares its bit with clone()'s exit signal: unshare only. */
static const unsigned long clone_new_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

const char *
spawn_seccomp_name(enum spawn_seccomp profile)
{
	switch (profile) {
	case SPAWN_SECCOMP_DEFAULT:
		return "default";
	case SPAWN_SECCOMP_RELAXED:
		return "relaxed";
	case SPAWN_SECCOMP_OFF:
		return "off";
	}
	return "?";
}

static int
add_list(scmp_filter_ctx ctx, const struct sc_rule *r, char *err,
    size_t errlen)
{
	int nr, rc;

	for (; r->name != NULL; r++) {
		/* unknown to this libseccomp: nothing to deny */
		if ((nr = seccomp_syscall_resolve_name(r->name)) ==
		    __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, r->action == SC_KILL ?
		    SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0) {
			snprintf(err, errlen, "seccomp rule for %s: %s",
			    r->name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static int
add_namespace_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < sizeof(clone_new_flags) /
	    sizeof(clone_new_flags[0]); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    clone_new_flags[i], clone_new_flags[i]));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			    SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
			    clone_new_flags[i], clone_new_flags[i]));
	}
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    CLONE_NEWTIME, CLONE_NEWTIME));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(setns), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
		    SCMP_SYS(clone3), 0);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp namespace rules: %s",
		    strerror(-rc));
		return -1;
	}
	return 0;
}

void *
spawn_seccomp_build(enum spawn_seccomp profile, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	const struct sc_rule *list;

	if (profile == SPAWN_SECCOMP_OFF)
		return NULL;
	list = profile == SPAWN_SECCOMP_RELAXED ? relaxed_rules :
	    default_rules;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return NULL;
	}
	/* bwrap sets no_new_privs itself; keep the filter free of it */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
	    add_list(ctx, list, err, errlen) == -1 ||
	    add_namespace_rules(ctx, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "seccomp_attr_set failed");
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

int
spawn_seccomp_memfd(enum spawn_seccomp profile, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int fd, rc;

	err[0] = '\0';
	if ((ctx = spawn_seccomp_build(profile, err, errlen)) == NULL)
		return -1;
	if ((fd = memfd_create("gk-run-seccomp", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		seccomp_release(ctx);
		return -1;
	}
	rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	/* bwrap reads from the current offset */
	if (rc < 0 || lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errlen, "exporting the seccomp filter: %s",
		    strerror(rc < 0 ? -rc : errno));
		close(fd);
		return -1;
	}
	return fd;
}
