/*
 * The cage's kernel side and the control connection: a user and network
 * namespace (NOTES-linux.md, section 3; made by the sandbox's first
 * process, see spawn_start.c), then one request to gatekeeperd carrying
 * the namespace fd, and its reply. gk-run keeps the connection open,
 * CLOEXEC, for the cage's lifetime: closing it (exit, crash, kill -9)
 * makes gatekeeperd tear the cage down.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "spawner/client/gk_client.h"
#include "spawner/spawn_int.h"

int
spawn_ctl_connect(const char *path, char *err, size_t errlen)
{
	struct gk_client *c;
	char show[128];

	if ((c = gk_client_open(path, SPAWN_REPLY_WAIT_MS)) != NULL)
		return gk_client_release(c);
	/* the same words as gatekeeperctl's, from the shared client */
	gk_client_open_error(errno, spawn_printable(path, show, sizeof(show)),
	    SPAWN_REPLY_WAIT_MS, err, errlen);
	return -1;
}

/* Best effort: gatekeeperd brings lo up too (gated); --net none's
 * answerer cannot bind 127.0.0.1 without it, and says so. */
static void
loopback_up(void)
{
	struct ifreq ifr;
	int s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		(void)ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

int
spawn_netns_make(int flags, char *err, size_t errlen)
{
	/* our ids outside: inside, before the map, they read 65534 */
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWUSER | flags) == -1) {
		spawn_userns_explain(SPAWN_USERNS_CREATE, errno, err, errlen);
		return -1;
	}
	if (spawn_userns_map(uid, gid) == -1) {
		spawn_userns_explain(SPAWN_USERNS_MAP, errno, err, errlen);
		return -1;
	}
	if (flags & CLONE_NEWNET)
		loopback_up();
	return 0;
}

int
spawn_ctl_netns(int flags, char *err, size_t errlen)
{
	int fd;

	if (spawn_netns_make(CLONE_NEWNET | flags, err, errlen) == -1)
		return -1;
	if ((fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1) {
		gk_seterr(err, errlen, "cannot open the cage's network "
		    "namespace: %s", strerror(errno));
		return -1;
	}
	return fd;
}

/* The request line, with nsfd on its first byte (the shared client). */
static int
send_request(int sock, int nsfd, const char *req, const char *path,
    char *err, size_t errlen)
{
	struct gk_client *c;
	int r, e;

	if ((c = gk_client_adopt(sock)) == NULL)
		return gk_seterr(err, errlen, "out of memory");
	r = gk_client_send(c, req, nsfd);
	e = errno;
	(void)gk_client_release(c);
	if (r == -1)
		return gk_seterr(err, errlen, "cannot send the request to "
		    "gatekeeperd at %s: %s", path, e == EAGAIN ? "timed out" :
		    strerror(e));
	return 0;
}

/* One line into *out (malloc'd, NUL-terminated); its length, or -1 with
 * err. */
static ssize_t
read_reply(int sock, const char *path, char **out, char *err, size_t errlen)
{
	enum gk_client_status st;
	struct gk_client *c;
	const char *line;
	size_t len = 0;
	int e;

	*out = NULL;
	if ((c = gk_client_adopt(sock)) == NULL)
		return gk_seterr(err, errlen, "out of memory");
	st = gk_client_read_line(c, SPAWN_REPLY_WAIT_MS, &line, &len);
	e = errno;
	if (st == GK_CLIENT_OK && (*out = malloc(len + 1)) != NULL) {
		memcpy(*out, line, len);
		(*out)[len] = '\0';
	}
	(void)gk_client_release(c);
	if (st == GK_CLIENT_OK && *out != NULL)
		return (ssize_t)len;
	if (st == GK_CLIENT_OK)
		gk_seterr(err, errlen, "out of memory");
	else if (st == GK_CLIENT_TOO_LONG)
		gk_seterr(err, errlen, "gatekeeperd's reply is over %d bytes "
		    "without a newline", GK_CTL_LINE_MAX);
	else if (st == GK_CLIENT_TIMEOUT)
		gk_seterr(err, errlen, "gatekeeperd at %s did not answer "
		    "within %d s (is it stuck? see journalctl -u gatekeeperd)",
		    path, SPAWN_REPLY_WAIT_MS / 1000);
	else
		gk_seterr(err, errlen, "gatekeeperd at %s closed the "
		    "connection without a reply%s%s (see journalctl -u "
		    "gatekeeperd)", path, st == GK_CLIENT_ERROR ? ": " : "",
		    st == GK_CLIENT_ERROR ? strerror(e) : "");
	return -1;
}

int
spawn_ctl_create(int sock, int nsfd, const char *request, const char *path,
    struct spawn_cage *c, char *err, size_t errlen)
{
	char rerr[SPAWN_ERRLEN], *line;
	ssize_t n;
	int r;

	/*
	 * gatekeeperd may refuse a peer at once (who it is) and close: the
	 * send then fails, but its reason is waiting to be read.
	 */
	if (send_request(sock, nsfd, request, path, err, errlen) == -1) {
		if ((n = read_reply(sock, path, &line, rerr,
		    sizeof(rerr))) == -1)
			return -1;
	} else if ((n = read_reply(sock, path, &line, err, errlen)) == -1)
		return -1;
	r = spawn_cage_reply(line, (size_t)n, c, err, errlen);
	free(line);
	return r;
}

int
spawn_ctl_attach(int sock, const char *id, pid_t pid, const char *path,
    char *err, size_t errlen)
{
	char req[128], *line;
	ssize_t n;
	int pidfd, r;

	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		gk_seterr(err, errlen, "pidfd_open: %s (Linux 5.3 or later is "
		    "needed to put the sandbox in its cgroup)",
		    strerror(errno));
		return -1;
	}
	snprintf(req, sizeof(req), "{\"op\":\"cage.attach\",\"id\":\"%s\"}\n",
	    id);
	r = send_request(sock, pidfd, req, path, err, errlen);
	close(pidfd);
	if (r == -1 || (n = read_reply(sock, path, &line, err, errlen)) == -1)
		return -1;
	r = spawn_cage_ack(line, (size_t)n, err, errlen);
	free(line);
	return r;
}

/* One credential to gatekeeperd and its reply; its value wiped and freed
 * as soon as the request is sent (or cannot be). */
static int
ctl_credential(int sock, struct spawn_cage *cage, struct spawn_cred *c,
    const char *path, char *err, size_t errlen)
{
	char *req, *line;
	size_t len;
	ssize_t n;
	int r;

	req = spawn_cred_request(cage->id, c, &len);
	explicit_bzero(c->value, c->len);
	free(c->value);
	c->value = NULL;
	if (req == NULL)
		return gk_seterr(err, errlen, "out of memory");
	r = send_request(sock, -1, req, path, err, errlen);
	explicit_bzero(req, len);
	free(req);
	if (r == -1 || (n = read_reply(sock, path, &line, err, errlen)) == -1)
		return -1;
	r = spawn_cred_reply(line, (size_t)n, c->name, cage->ca,
	    sizeof(cage->ca), err, errlen);
	free(line);
	return r;
}

int
spawn_ctl_credentials(int sock, struct spawn_cage *cage,
    struct spawn_cred *creds, size_t n, const char *path, char *err,
    size_t errlen)
{
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++)
		r = ctl_credential(sock, cage, &creds[i], path, err, errlen);
	for (i = 0; i < n; i++) {
		if (creds[i].value != NULL)
			explicit_bzero(creds[i].value, creds[i].len);
		free(creds[i].value);
		creds[i].value = NULL;
	}
	return r;
}
