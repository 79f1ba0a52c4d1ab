/*
 * gk_peer: the process at the other end of a unix socket, with its user
 * and network namespaces, read race-free at accept (gk_peer.c).
 */
#ifndef GK_PEER_H
#define GK_PEER_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

/* A namespace, as the kernel names it: the device and inode of nsfs. */
struct gk_ns_id {
	dev_t		 dev;
	ino_t		 ino;
};

struct gk_peer {
	uid_t		 uid;
	gid_t		 gid;
	pid_t		 pid;		/* at connect time */
	struct gk_ns_id	 userns;
	struct gk_ns_id	 netns;
};

static inline bool
gk_ns_eq(const struct gk_ns_id *a, const struct gk_ns_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/*
 * Credentials and namespaces of the process that connected to `fd`:
 * 0, or -1 with the reason in why (the peer is gone, or cannot be seen).
 */
int		 gk_peer_identify(int fd, struct gk_peer *p, char *why,
		    size_t len);
/* This process's namespace `name` ("user", "net"): 0 or -1 (errno). */
int		 gk_ns_self(const char *name, struct gk_ns_id *id);

#endif /* GK_PEER_H */
