/*
 * The control socket, client side: a blocking unix stream socket whose
 * connect and sends are bounded by SO_SNDTIMEO (a unix connect waits on
 * a full backlog for that long, then fails with EAGAIN), and whose reads
 * wait in poll() first. Lines are split in one buffer of
 * GK_CTL_LINE_MAX + 1 bytes.
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/ctl/ctl_conn.h"
#include "gatekeeper/ctl/ctl_reply.h"

#define CONN_BUF	(GK_CTL_LINE_MAX + 1)	/* a line and its newline */
#define PATH_SHOW	128

struct ctl_conn {
	int		 fd;
	char		 path[PATH_SHOW];	/* printable, for messages */
	char		*buf;			/* CONN_BUF bytes */
	size_t		 len;			/* bytes in buf */
	size_t		 used;			/* of them, lines handed out */
};

static void
connect_error(int e, const char *path, int timeout_ms, char *err,
    size_t errlen)
{
	switch (e) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTDIR:
		gk_seterr(err, errlen, "is gatekeeperd running? (socket %s: "
		    "%s)", path, strerror(e));
		break;
	case EACCES:
	case EPERM:
		gk_seterr(err, errlen, "no access to gatekeeperd's socket %s "
		    "(%s): be root or in group " GK_CONTROL_GROUP " (usermod "
		    "-aG " GK_CONTROL_GROUP " USER, then log in again)", path,
		    strerror(e));
		break;
	case EAGAIN:
		gk_seterr(err, errlen, "gatekeeperd did not accept the "
		    "connection within %d s (socket %s; is it stuck? see "
		    "journalctl -u gatekeeperd)", timeout_ms / 1000, path);
		break;
	default:
		gk_seterr(err, errlen, "cannot connect to gatekeeperd (socket "
		    "%s: %s)", path, strerror(e));
		break;
	}
}

struct ctl_conn *
ctl_conn_open(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct timeval tv;
	struct ctl_conn *c;
	int e;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->buf = malloc(CONN_BUF)) == NULL) {
		free(c);
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	gk_printable(path, c->path, sizeof(c->path));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		connect_error(ENAMETOOLONG, c->path, timeout_ms, err, errlen);
		goto fail;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 ||
	    connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		e = errno;
		if (c->fd != -1)
			close(c->fd);
		connect_error(e, c->path, timeout_ms, err, errlen);
		goto fail;
	}
	return c;
fail:
	free(c->buf);
	free(c);
	return NULL;
}

int
ctl_conn_send(struct ctl_conn *c, const char *line, char *err, size_t errlen)
{
	size_t len = strlen(line), off = 0;
	ssize_t n;

	while (off < len) {
		n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return gk_seterr(err, errlen, "cannot send the request "
			    "to gatekeeperd (socket %s): %s", c->path,
			    errno == EAGAIN ? "timed out" : strerror(errno));
		off += (size_t)n;
	}
	return 0;
}

/* A whole line in the buffer: hand it out. */
static bool
take_line(struct ctl_conn *c, const char **line, size_t *len)
{
	char *nl;

	if (c->used > 0) {
		memmove(c->buf, c->buf + c->used, c->len - c->used);
		c->len -= c->used;
		c->used = 0;
	}
	if ((nl = memchr(c->buf, '\n', c->len)) == NULL)
		return false;
	*line = c->buf;
	*len = (size_t)(nl - c->buf);
	c->used = *len + 1;
	return true;
}

enum ctl_conn_status
ctl_conn_read_line(struct ctl_conn *c, int timeout_ms, const char **line,
    size_t *len)
{
	uint64_t deadline = gk_clock_ms() + (uint64_t)(timeout_ms < 0 ? 0 :
	    timeout_ms);
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int r;

	while (!take_line(c, line, len)) {
		if (c->len >= CONN_BUF)
			return CTL_CONN_TOO_LONG;
		r = poll(&pfd, 1, timeout_ms < 0 ? -1 :
		    gk_ms_left(deadline, INT32_MAX));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return CTL_CONN_ERROR;
		if (r == 0)
			return CTL_CONN_TIMEOUT;
		n = read(c->fd, c->buf + c->len, CONN_BUF - c->len);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1)
			return CTL_CONN_ERROR;
		if (n == 0)
			return CTL_CONN_CLOSED;
		c->len += (size_t)n;
	}
	return CTL_CONN_OK;
}

int
ctl_conn_read(struct ctl_conn *c, int timeout_ms, const char **line,
    size_t *len, char *err, size_t errlen)
{
	switch (ctl_conn_read_line(c, timeout_ms, line, len)) {
	case CTL_CONN_OK:
		return 0;
	case CTL_CONN_TIMEOUT:
		return gk_seterr(err, errlen, "gatekeeperd did not answer "
		    "within %d s (socket %s; is it stuck? see journalctl -u "
		    "gatekeeperd, or give --timeout)", timeout_ms / 1000,
		    c->path);
	case CTL_CONN_CLOSED:
		return gk_seterr(err, errlen, "gatekeeperd closed the "
		    "connection%s (socket %s; see journalctl -u gatekeeperd)",
		    c->len > 0 ? " in the middle of a line" : "", c->path);
	case CTL_CONN_TOO_LONG:
		return gk_seterr(err, errlen, "gatekeeperd sent a line over "
		    "%d bytes (socket %s)", GK_CTL_LINE_MAX, c->path);
	case CTL_CONN_ERROR:
		break;
	}
	return gk_seterr(err, errlen, "cannot read gatekeeperd's reply "
	    "(socket %s): %s", c->path, strerror(errno));
}

void
ctl_conn_close(struct ctl_conn *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	free(c->buf);
	free(c);
}
