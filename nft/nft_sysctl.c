/*
 * nft_sysctl: the sysctls of a cage's two ends, written without a walk
 * over every namespace.
 *
 * /proc/sys is one tree of dentries for every network namespace: each
 * namespace in which /proc/sys/net was ever looked up has its own "net"
 * entry there, all with the same name under the same parent, so looking
 * up a path below /proc/sys/net compares the name against every one of
 * them (proc_sys_compare): O(cages) per sysctl, which made a cage's
 * creation 8x slower with 5,000 cages live. So:
 *  - the host ends' sysctls are opened below /proc/sys/net/ipv4/conf and
 *    ipv6/conf of gatekeeperd's own namespace, opened once;
 *  - a cage's sysctls are written through a proc instance of its own
 *    (fsopen, fsmount: a detached mount, never attached to any path),
 *    whose tree holds that one namespace and goes with it; where such a
 *    mount is refused (a system call filter), through /proc, as before.
 */
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/mount.h>

#include "nft/nft_int.h"

/* Write val to the file at path below dirfd. 0, or -1 with err. */
static int
write_at(int dirfd, const char *shown, const char *path, const char *val,
    char *err, size_t errlen)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd;

	if ((fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC)) == -1)
		goto fail;
	n = write(fd, val, len);
	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = EIO;
		close(fd);
		goto fail;
	}
	if (close(fd) == -1)
		goto fail;
	return 0;
fail:
	gk_seterr(err, errlen, "writing %s to %s%s: %s", val, shown, path,
	    strerror(errno));
	return -1;
}

int
nft_sysctl_write(const char *path, const char *val, char *err,
    size_t errlen)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "/proc/sys/%s", path);
	return write_at(AT_FDCWD, "", full, val, err, errlen);
}

/* IPv6 off; a kernel without IPv6 has nothing to do. */
static int
ipv6_off(int dirfd, const char *shown, const char *path, char *err,
    size_t errlen)
{
	if (write_at(dirfd, shown, path, "1", err, errlen) == 0)
		return 0;
	if (errno == ENOENT && access("/proc/sys/net/ipv6", F_OK) == -1)
		return 0;
	return -1;
}

/* gatekeeperd's own /proc/sys/net/ipv4/conf and ipv6/conf (-1: none, as
 * in a kernel without IPv6), opened on first use, kept. */
static int	host_conf4 = -1, host_conf6 = -1;

int
nft_sysctl_host(const char *ifname, char *err, size_t errlen)
{
	char path[64];

	if (host_conf4 == -1 && (host_conf4 = open("/proc/sys/net/ipv4/conf",
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return gk_seterr(err, errlen, "opening /proc/sys/net/ipv4/conf: "
		    "%s", strerror(errno));
	if (host_conf6 == -1)
		host_conf6 = open("/proc/sys/net/ipv6/conf", O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/disable_ipv6", ifname);
	if (host_conf6 != -1 && ipv6_off(host_conf6,
	    "/proc/sys/net/ipv6/conf/", path, err, errlen) == -1)
		return -1;
	/* Strict reverse-path filter: a second layer behind the set. */
	snprintf(path, sizeof(path), "%s/rp_filter", ifname);
	if (write_at(host_conf4, "/proc/sys/net/ipv4/conf/", path, "1", err,
	    errlen) == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/forwarding", ifname);
	return write_at(host_conf4, "/proc/sys/net/ipv4/conf/", path, "0",
	    err, errlen);
}

/* A proc instance of our own, mounted nowhere; -1 when refused. */
static int
proc_instance(void)
{
	int fs, mnt;

	if ((fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC)) == -1)
		return -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ==
	    -1) {
		close(fs);
		return -1;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fs);
	return mnt;
}

int
nft_link_cage_sysctls(char *err, size_t errlen)
{
	int mnt = proc_instance(), dir = mnt != -1 ? mnt : AT_FDCWD, rc;
	const char *top = mnt != -1 ? "sys/net/ipv6/conf/" :
	    "/proc/sys/net/ipv6/conf/";
	char path[64];

	snprintf(path, sizeof(path), "%sdefault/disable_ipv6", top);
	rc = ipv6_off(dir, "", path, err, errlen);
	snprintf(path, sizeof(path), "%sall/disable_ipv6", top);
	if (rc == 0)
		rc = ipv6_off(dir, "", path, err, errlen);
	if (mnt != -1)
		close(mnt);
	return rc;
}
