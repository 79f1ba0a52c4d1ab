/*
 * gk_client: the client side of gatekeeperd's control socket, shared by
 * its two clients, gk-run and gatekeeperctl: connect (bounded by
 * SO_SNDTIMEO: a unix connect waits on a full backlog for that long),
 * send a line (a descriptor may ride with its first byte), and read
 * lines, each wait bounded by poll() unless the caller asks to wait for
 * ever. Lines are split in one buffer of GK_CTL_LINE_MAX + 1 bytes by
 * gk_client_frame(), pure; a longer line is an error, never a bigger
 * buffer. Messages for people are the callers': these functions say
 * what happened (errno, a status); but for a connect that failed, both
 * callers print the one message gk_client_open_msg() makes.
 */
#ifndef GK_CLIENT_H
#define GK_CLIENT_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/policy/gk_proto.h"

#define GK_CLIENT_BUF	(GK_CTL_LINE_MAX + 1)	/* a line and its newline */

struct gk_client;

/* Room for one descriptor passed with SCM_RIGHTS. */
union gk_cmsg_fd {
	struct cmsghdr	 hdr;
	char		 buf[CMSG_SPACE(sizeof(int))];
};
/* Point mh's control data at cm, holding fd as SCM_RIGHTS (also for the
 * other sockets of the clients: gk-run's start channel). */
void		 gk_client_pass_fd(struct msghdr *mh, union gk_cmsg_fd *cm,
		    int fd);

enum gk_client_status {
	GK_CLIENT_OK,
	GK_CLIENT_TIMEOUT,	/* nothing (whole) within the time */
	GK_CLIENT_CLOSED,	/* gatekeeperd closed the connection */
	GK_CLIENT_TOO_LONG,	/* a line over GK_CTL_LINE_MAX bytes */
	GK_CLIENT_ERROR,	/* errno says */
};

/*
 * The next whole line of buf[*used..*len) (buf: GK_CLIENT_BUF bytes):
 * what was handed out before is dropped first (the rest moved to the
 * front), then a line found is handed out, *line (not NUL-terminated,
 * without its newline, valid until the next call) and *linelen, and
 * counted in *used. false: no whole line yet. Pure.
 */
bool		 gk_client_frame(char *buf, size_t *len, size_t *used,
		    const char **line, size_t *linelen);

/* Connect to the socket at path, waiting at most timeout_ms for it to
 * accept. NULL with errno (ENAMETOOLONG: path does not fit). */
struct gk_client *gk_client_open(const char *path, int timeout_ms);
/*
 * What a failed gk_client_open() (its errno e) means and what to type
 * about it, into msg: "cannot reach gatekeeperd at PATH ...", for both
 * clients. `systemd`: systemd runs this host (the advice to start
 * gatekeeperd fits it); `user`: the name for usermod's line (NULL:
 * "USER"). Pure.
 */
void		 gk_client_open_msg(int e, const char *path, int timeout_ms,
		    bool systemd, const char *user, char *msg, size_t len);
/* Whether systemd runs the host whose root is `root` ("": this one), as
 * sd_booted() tells it: ROOT/run/systemd/system is a directory. */
bool		 gk_client_systemd(const char *root);
/* gk_client_open_msg() for this host and this process's user. */
void		 gk_client_open_error(int e, const char *path,
		    int timeout_ms, char *msg, size_t len);
/* A client on fd, a socket already connected (NULL: out of memory). */
struct gk_client *gk_client_adopt(int fd);
/* Send one whole line, with pass_fd (SCM_RIGHTS) on its first byte
 * unless it is -1. 0, or -1 with errno (EAGAIN: timed out). */
int		 gk_client_send(struct gk_client *c, const char *line,
		    int pass_fd);
/* The next line (see gk_client_frame); timeout_ms < 0 waits for ever. */
enum gk_client_status gk_client_read_line(struct gk_client *c,
		    int timeout_ms, const char **line, size_t *len);
/* Bytes of an unfinished line in the buffer (for a message on CLOSED). */
size_t		 gk_client_pending(const struct gk_client *c);
/* The socket (the caller may poll it, or keep it: gk_client_release). */
int		 gk_client_fd(const struct gk_client *c);
/* Free c and close its socket. */
void		 gk_client_close(struct gk_client *c);
/* Free c but keep its socket open: returned. */
int		 gk_client_release(struct gk_client *c);

#endif /* GK_CLIENT_H */
