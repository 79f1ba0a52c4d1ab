/*
 * gatekeeperctl's connection: the shared client (spawner/client/
 * gk_client.h: connect and sends bounded by SO_SNDTIMEO, reads by
 * poll(), lines split in one buffer) and the messages for the person.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_proto.h"
#include "spawner/client/gk_client.h"
#include "spawner/ctl/ctl_conn.h"
#include "spawner/ctl/ctl_reply.h"

#define PATH_SHOW	128

struct ctl_conn {
	struct gk_client	*cl;
	char			 path[PATH_SHOW];	/* printable */
};

struct ctl_conn *
ctl_conn_open(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct ctl_conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	gk_printable(path, c->path, sizeof(c->path));
	if ((c->cl = gk_client_open(path, timeout_ms)) == NULL) {
		gk_client_open_error(errno, c->path, timeout_ms, err, errlen);
		free(c);
		return NULL;
	}
	return c;
}

int
ctl_conn_send(struct ctl_conn *c, const char *line, char *err, size_t errlen)
{
	if (gk_client_send(c->cl, line, -1) == -1)
		return gk_seterr(err, errlen, "cannot send the request to "
		    "gatekeeperd (socket %s): %s", c->path,
		    errno == EAGAIN ? "timed out" : strerror(errno));
	return 0;
}

enum gk_client_status
ctl_conn_read_line(struct ctl_conn *c, int timeout_ms, const char **line,
    size_t *len)
{
	return gk_client_read_line(c->cl, timeout_ms, line, len);
}

int
ctl_conn_read(struct ctl_conn *c, int timeout_ms, const char **line,
    size_t *len, char *err, size_t errlen)
{
	switch (ctl_conn_read_line(c, timeout_ms, line, len)) {
	case GK_CLIENT_OK:
		return 0;
	case GK_CLIENT_TIMEOUT:
		return gk_seterr(err, errlen, "gatekeeperd did not answer "
		    "within %d s (socket %s; is it stuck? see journalctl -u "
		    "gatekeeperd, or give --timeout)", timeout_ms / 1000,
		    c->path);
	case GK_CLIENT_CLOSED:
		return gk_seterr(err, errlen, "gatekeeperd closed the "
		    "connection%s (socket %s; see journalctl -u gatekeeperd)",
		    gk_client_pending(c->cl) > 0 ? " in the middle of a line" :
		    "", c->path);
	case GK_CLIENT_TOO_LONG:
		return gk_seterr(err, errlen, "gatekeeperd sent a line over "
		    "%d bytes (socket %s)", GK_CTL_LINE_MAX, c->path);
	case GK_CLIENT_ERROR:
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
	gk_client_close(c->cl);
	free(c);
}
