/*
 * ctl_conn: gatekeeperctl's connection to gatekeeperd's control socket:
 * connect, send a line, read lines. Every wait is bounded (a connect or
 * send by SO_SNDTIMEO, a read by poll) unless the caller asks to wait
 * for ever (denials --follow); a line longer than GK_CTL_LINE_MAX is an
 * error, never a bigger buffer.
 */
#ifndef CTL_CONN_H
#define CTL_CONN_H

#include <stddef.h>

#include "spawner/client/gk_client.h"

struct ctl_conn;

/*
 * Connect to the socket at path, waiting at most timeout_ms for
 * gatekeeperd to accept. NULL with a message for the person in err
 * (whether gatekeeperd runs; how to get access to its socket).
 */
struct ctl_conn	*ctl_conn_open(const char *path, int timeout_ms, char *err,
		    size_t errlen);
/* Send one whole line. 0, or -1 with err. */
int		 ctl_conn_send(struct ctl_conn *c, const char *line,
		    char *err, size_t errlen);
/*
 * The next line, without its newline: *line (not NUL-terminated) is
 * valid until the next call. timeout_ms < 0 waits for ever.
 */
enum gk_client_status ctl_conn_read_line(struct ctl_conn *c, int timeout_ms,
		    const char **line, size_t *len);
/* The same, with a message in err for any status but OK (0; else -1). */
int		 ctl_conn_read(struct ctl_conn *c, int timeout_ms,
		    const char **line, size_t *len, char *err, size_t errlen);
void		 ctl_conn_close(struct ctl_conn *c);

#endif /* CTL_CONN_H */
