/*
 * gk_client: gatekeeperd's control socket, client side (gk_client.h).
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_time.h"
#include "spawner/client/gk_client.h"

struct gk_client {
	int		 fd;
	char		*buf;		/* GK_CLIENT_BUF bytes */
	size_t		 len;		/* bytes in buf */
	size_t		 used;		/* of them, lines handed out */
};

bool
gk_client_frame(char *buf, size_t *len, size_t *used, const char **line,
    size_t *linelen)
{
	char *nl;

	if (*used > 0) {
		memmove(buf, buf + *used, *len - *used);
		*len -= *used;
		*used = 0;
	}
	if ((nl = memchr(buf, '\n', *len)) == NULL)
		return false;
	*line = buf;
	*linelen = (size_t)(nl - buf);
	*used = *linelen + 1;
	return true;
}

void
gk_client_pass_fd(struct msghdr *mh, union gk_cmsg_fd *cm, int fd)
{
	struct cmsghdr *c;

	memset(cm, 0, sizeof(*cm));
	mh->msg_control = cm->buf;
	mh->msg_controllen = sizeof(cm->buf);
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

struct gk_client *
gk_client_adopt(int fd)
{
	struct gk_client *c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->buf = malloc(GK_CLIENT_BUF)) == NULL) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	return c;
}

struct gk_client *
gk_client_open(const char *path, int timeout_ms)
{
	struct sockaddr_un sun;
	struct gk_client *c;
	struct timeval tv;
	int e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((c = gk_client_adopt(-1)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 ||
	    connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		e = errno;
		if (c->fd != -1)
			close(c->fd);
		free(c->buf);
		free(c);
		errno = e;
		return NULL;
	}
	return c;
}

int
gk_client_send(struct gk_client *c, const char *line, int pass_fd)
{
	size_t len = strlen(line), off = 0;
	union gk_cmsg_fd cm;
	struct msghdr msg;
	struct iovec iov;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (pass_fd != -1)
		gk_client_pass_fd(&msg, &cm, pass_fd);
	while (off < len) {
		iov.iov_base = (char *)line + off;
		iov.iov_len = len - off;
		if ((n = sendmsg(c->fd, &msg, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
		/* the descriptor travels with the first byte only */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
	}
	return 0;
}

enum gk_client_status
gk_client_read_line(struct gk_client *c, int timeout_ms, const char **line,
    size_t *len)
{
	uint64_t deadline = gk_clock_ms() + (uint64_t)(timeout_ms < 0 ? 0 :
	    timeout_ms);
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int r;

	while (!gk_client_frame(c->buf, &c->len, &c->used, line, len)) {
		if (c->len >= GK_CLIENT_BUF)
			return GK_CLIENT_TOO_LONG;
		r = poll(&pfd, 1, timeout_ms < 0 ? -1 :
		    gk_ms_left(deadline, INT32_MAX));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return GK_CLIENT_ERROR;
		if (r == 0)
			return GK_CLIENT_TIMEOUT;
		n = read(c->fd, c->buf + c->len, GK_CLIENT_BUF - c->len);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1)
			return GK_CLIENT_ERROR;
		if (n == 0)
			return GK_CLIENT_CLOSED;
		c->len += (size_t)n;
	}
	return GK_CLIENT_OK;
}

size_t
gk_client_pending(const struct gk_client *c)
{
	return c->len - c->used;
}

int
gk_client_fd(const struct gk_client *c)
{
	return c->fd;
}

int
gk_client_release(struct gk_client *c)
{
	int fd = c->fd;

	free(c->buf);
	free(c);
	return fd;
}

void
gk_client_close(struct gk_client *c)
{
	if (c != NULL)
		close(gk_client_release(c));
}
