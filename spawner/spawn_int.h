/*
 * spawn_int: gk-run's I/O half (the kernel, the filesystem, gatekeeperd,
 * bwrap). Functions return 0 / a value, or -1 with a complete one-line
 * message for the user in `err` (main() prefixes "gk-run: ").
 */
#ifndef SPAWN_INT_H
#define SPAWN_INT_H

#include <sys/types.h>

#include "spawn.h"

/* spawn_seccomp.c: the profile as BPF in a memfd at offset 0, CLOEXEC. */
int		 spawn_seccomp_memfd(enum spawn_seccomp profile, char *err,
		    size_t errlen);

/* spawn_resolve.c */
/* --cwd DIR (or the current directory), canonical; malloc'd. */
char		*spawn_resolve_cwd(const char *opt_cwd, char *err,
		    size_t errlen);
/*
 * The mounts for --fs and --platform: the base (/, /dev, /proc, /tmp),
 * the working directory, --ro/--rw/--hide (realpath; they must exist on
 * Linux), the default hides that exist, the control sockets; sorted
 * with spawn_mounts_sort().
 */
int		 spawn_resolve_mounts(const struct spawn_opts *o,
		    const char *cwd, struct spawn_mount **out, size_t *n,
		    char *err, size_t errlen);
/* A CLOEXEC memfd holding the data, at offset 0; -1 (errno). */
int		 spawn_memfd_data(const char *name, const void *data,
		    size_t len);
/* A whole small fd from offset 0 (malloc'd); NULL (errno). */
uint8_t		*spawn_fd_slurp(int fd, size_t max, size_t *len);
/* Read a whole allow-file; NULL with err. */
uint8_t		*spawn_read_file(const char *path, size_t max, size_t *len,
		    char *err, size_t errlen);

/* spawn_exec.c */
/* bwrap in $PATH (malloc'd), or NULL with err. */
char		*spawn_find_bwrap(char *err, size_t errlen);
/*
 * Would execvp(cmd[0]) inside the sandbox succeed? Mirrors the PATH
 * search against the plan's visible paths, and checks what execve
 * checks: a regular file, execute permission, not on a noexec mount,
 * and a "#!" interpreter or ELF loader that exists. Returns 0, or the
 * exit status (126, 127) with the message in err.
 */
int		 spawn_check_command(const struct spawn_plan *p,
		    const char *path_env, char *resolved, size_t reslen,
		    char *err, size_t errlen);

/* spawn_ctl.c */
int		 spawn_ctl_connect(const char *path, char *err, size_t errlen);
/*
 * unshare(CLONE_NEWUSER | CLONE_NEWNET), identity uid/gid maps, lo up;
 * returns an fd for the new network namespace (CLOEXEC).
 */
int		 spawn_ctl_netns(char *err, size_t errlen);
/* Send the request with nsfd (SCM_RIGHTS) and wait for the cage. */
int		 spawn_ctl_create(int sock, int nsfd, const char *request,
		    const char *path, struct spawn_cage *c, char *err,
		    size_t errlen);
/* After a sandbox failure: are user namespaces the reason? */
bool		 spawn_userns_works(void);

/* spawn_run.c */
struct spawn_run {
	const char	*bwrap;		/* path to exec */
	char *const	*argv;
	char *const	*envp;
	const int	*pass_fds;	/* for bwrap; closed in the parent */
	size_t		 npass;
	int		 status_wfd;	/* --json-status-fd (in pass_fds) */
	int		 status_rfd;
	int		 ctl_fd;	/* -1: no cage */
	unsigned int	 timeout;
	int		 verbose;
	const char	*cmdname;	/* for messages */
};

/*
 * Fork, exec bwrap in the child, forward signals to the sandbox, enforce
 * the timeout, wait. Returns gk-run's exit status; on a failure of its
 * own writes one line to stderr first.
 */
int		 spawn_run(const struct spawn_run *r);

#endif /* SPAWN_INT_H */
