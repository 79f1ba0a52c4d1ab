/*
 * nft_netns: enter a network namespace on the calling thread and come
 * back; validate a namespace fd a control client passed us.
 *
 * setns(CLONE_NEWNET) changes only the calling thread. While inside,
 * sockets are created in the cage and /proc/sys/net/... is the cage's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "gatekeeper/base/gk_log.h"
#include "nft/nft_int.h"

int
nft_netns_run(int nsfd, int (*fn)(void *, char *, size_t), void *arg,
    char *err, size_t errlen)
{
	int self, rc;

	if ((self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) ==
	    -1) {
		gk_seterr(err, errlen, "opening /proc/thread-self/ns/net: %s",
		    strerror(errno));
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET) == -1) {
		gk_seterr(err, errlen, "entering the cage's network namespace: "
		    "%s", strerror(errno));
		close(self);
		return -1;
	}
	rc = fn(arg, err, errlen);
	/* Staying in the cage would put every later socket there. */
	if (setns(self, CLONE_NEWNET) == -1)
		fatal("returning to our own network namespace");
	close(self);
	return rc;
}

static const char *
ns_type_name(int type)
{
	switch (type) {
	case CLONE_NEWUSER:
		return "user";
	case CLONE_NEWPID:
		return "pid";
	case CLONE_NEWNS:
		return "mount";
	case CLONE_NEWUTS:
		return "uts";
	case CLONE_NEWIPC:
		return "ipc";
	case CLONE_NEWCGROUP:
		return "cgroup";
	default:
		return "non-network";
	}
}

/* Is st the namespace at path? (false if path cannot be read) */
static bool
same_ns(const struct stat *st, const char *path)
{
	struct stat o;

	if (stat(path, &o) == -1)
		return false;
	return st->st_dev == o.st_dev && st->st_ino == o.st_ino;
}

bool
nft_netns_is_own(int nsfd)
{
	struct stat st;

	if (fstat(nsfd, &st) == -1)
		return false;
	return same_ns(&st, "/proc/thread-self/ns/net") ||
	    same_ns(&st, "/proc/self/ns/net");
}

static int
check_type(int nsfd, char *err, size_t errlen)
{
	struct stat st;
	int type;

	if ((type = ioctl(nsfd, NS_GET_NSTYPE)) == -1) {
		if (errno == ENOTTY || errno == EINVAL)
			gk_seterr(err, errlen, "the passed fd is not a "
			    "namespace: %s", strerror(errno));
		else
			gk_seterr(err, errlen, "checking the passed namespace "
			    "fd: %s", strerror(errno));
		return -1;
	}
	if (type != CLONE_NEWNET) {
		gk_seterr(err, errlen, "the passed fd is a %s namespace, not a "
		    "network namespace", ns_type_name(type));
		return -1;
	}
	if (fstat(nsfd, &st) == -1) {
		gk_seterr(err, errlen, "checking the passed namespace fd: %s",
		    strerror(errno));
		return -1;
	}
	if (nft_netns_is_own(nsfd)) {
		gk_seterr(err, errlen, "the passed network namespace is "
		    "gatekeeperd's own; pass the cage's new namespace");
		return -1;
	}
	if (same_ns(&st, "/proc/1/ns/net")) {
		gk_seterr(err, errlen, "the passed network namespace is the "
		    "host's (pid 1's); pass the cage's new namespace");
		return -1;
	}
	return 0;
}

static int
check_owner(int nsfd, uid_t uid, char *err, size_t errlen)
{
	struct stat st;
	uid_t owner;
	int ufd;

	if ((ufd = ioctl(nsfd, NS_GET_USERNS)) == -1) {
		gk_seterr(err, errlen, "finding the owner of the passed "
		    "network namespace: %s", strerror(errno));
		return -1;
	}
	if (fstat(ufd, &st) == -1) {
		gk_seterr(err, errlen, "finding the owner of the passed "
		    "network namespace: %s", strerror(errno));
		goto fail;
	}
	if (same_ns(&st, "/proc/1/ns/user") ||
	    same_ns(&st, "/proc/self/ns/user")) {
		gk_seterr(err, errlen, "the passed network namespace belongs "
		    "to the initial user namespace; gk-run must create it with "
		    "a new user namespace (unshare CLONE_NEWUSER|CLONE_NEWNET)");
		goto fail;
	}
	if (ioctl(ufd, NS_GET_OWNER_UID, &owner) == -1) {
		gk_seterr(err, errlen, "finding the owner of the passed "
		    "network namespace: %s", strerror(errno));
		goto fail;
	}
	if (owner != uid) {
		gk_seterr(err, errlen, "the passed network namespace was "
		    "created by uid %u, not by the caller (uid %u)",
		    (unsigned)owner, (unsigned)uid);
		goto fail;
	}
	close(ufd);
	return 0;
fail:
	close(ufd);
	return -1;
}

static int
connect_cb(void *arg, char *err, size_t errlen)
{
	struct nl_sock **skp = arg;

	*skp = nft_link_sock(err, errlen);
	return *skp != NULL ? 0 : -1;
}

static int
check_links(int nsfd, char *err, size_t errlen)
{
	struct nl_sock *sk = NULL;
	char names[256];
	int n;

	if (nft_netns_run(nsfd, connect_cb, &sk, err, errlen) == -1)
		return -1;
	n = nft_link_list(sk, names, sizeof(names), err, errlen);
	nl_socket_free(sk);
	if (n == -1)
		return -1;
	if (n != 1 || strcmp(names, "lo") != 0) {
		gk_seterr(err, errlen, "the passed network namespace has links "
		    "other than lo (%s); pass a fresh one", names);
		return -1;
	}
	return 0;
}

int
nft_netns_check(int nsfd, uid_t uid, char *err, size_t errlen)
{
	if (check_type(nsfd, err, errlen) == -1 ||
	    check_owner(nsfd, uid, err, errlen) == -1 ||
	    check_links(nsfd, err, errlen) == -1)
		return -1;
	return 0;
}
