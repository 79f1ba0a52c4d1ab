/*
 * gk_control_int.h: internals shared by gk_control.c and gk_ctlsock.c.
 */
#ifndef GK_CONTROL_INT_H
#define GK_CONTROL_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gatekeeper/base/gk_peer.h"
#include "gatekeeper/policy/gk_proto.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/faces/gk_control.h"

struct gk_cage;
struct gk_cage_table;
struct gk_audit;
struct gk_listen;

#define CTL_ERRLEN	1024

/*
 * Bind and listen on the control socket at `path` (mkdir -p its parent,
 * replace a stale socket, refuse a live one or a non-socket). Returns the
 * listening fd (non-blocking, close-on-exec) and the socket's dev/ino, or
 * -1 with a message in err.
 */
int	gk_ctlsock_bind(const char *path, dev_t *dev, ino_t *ino, char *err,
	    size_t errlen);

enum ctlconn_state {
	CTL_ST_READY,		/* reading requests */
	CTL_ST_WAITING,		/* a request's answer waits on another */
	CTL_ST_FLUSHING,	/* no more requests: flush replies, close */
};

struct ctlconn {
	TAILQ_ENTRY(ctlconn)	 entry;
	struct gk_control	*ctl;
	struct bufferevent	*bev;	/* writes only; reads are rev's */
	struct event		*rev;	/* recvmsg: data and SCM_RIGHTS */
	struct evbuffer		*in;	/* bytes read, not yet handled */
	uint64_t		 id;
	uint64_t		 in_off;	/* stream offset of input start */
	int			 nsfd;		/* passed fd, or -1 */
	uint64_t		 nsfd_off;	/* stream offset it came with */
	enum ctlconn_state	 state;
	bool			 eof;	/* the peer stopped sending */
	uid_t			 uid;
	pid_t			 pid;
	struct gk_cage_owner	 owner;	/* of the cages created here */
	struct gk_events_watch	 watch;	/* following denials */
};

/* A cage that ended lately (gk_ctlended.c): its summary, a while. */
#define CTL_ENDED_MAX	64		/* cages kept */
#define CTL_ENDED_SEC	600		/* each for at most this long */

struct ctl_ended {
	char			 id[GK_CAGE_ID_LEN + 1];
	uid_t			 uid;
	time_t			 when;		/* gk_now() as it ended */
	struct json_object	*summary;	/* NULL: an empty slot */
};

/*
 * A peer refused past control-connections: its reply line was written,
 * and the socket stays open until its request comes (or EOF, or
 * CTL_REFUSED_SEC), so that the peer's send does not fail with EPIPE
 * before it can read why.
 */
struct ctl_refused {
	TAILQ_ENTRY(ctl_refused) entry;
	struct gk_control	*ctl;
	struct event		*ev;
	int			 fd;
};
#define CTL_REFUSED_MAX	64	/* beyond: closed at once */
#define CTL_REFUSED_SEC	2

struct gk_control {
	struct event_base	*base;
	struct gk_listen	*listen;	/* no cap: we refuse ourselves */
	char			*path;
	dev_t			 dev;	/* of the socket we bound */
	ino_t			 ino;
	struct gk_ns_id		 userns;	/* peers must share it */
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	struct gk_ctl_reload	 reload;	/* fn NULL: no reload op */
	TAILQ_HEAD(, ctlconn)	 conns;
	size_t			 nconns;
	uint32_t		 conns_max;	/* control-connections */
	TAILQ_HEAD(, ctl_refused) refused;	/* told, not yet closed */
	size_t			 nrefused;
	uint64_t		 refused_log_ms; /* last refusal logged */
	uint64_t		 refused_quiet;	/* refused since, unlogged */
	uint64_t		 next_id;
	struct ctl_ended	 ended[CTL_ENDED_MAX];	/* a ring */
	size_t			 ended_next;
};

/* A request's answer comes later (from the loop): no other request is
 * read until ctlconn_resume() (after which the next loop turn goes on
 * with cc's requests). */
void	ctlconn_wait(struct ctlconn *cc);
void	ctlconn_resume(struct ctlconn *cc);

/* gk_ctlallow.c */
struct gk_allowlist;
struct gk_cage;
struct gk_ctlreq;
/* The allowlist of req's "allow" patterns, within the host policy; NULL
 * when refused (cc was answered why). */
struct gk_allowlist *ctl_make_allow(struct ctlconn *cc,
	    const struct gk_ctlreq *req);
/* Cage c's allowlist with req's "add" and "remove" applied; NULL when
 * refused (cc was answered why). */
struct gk_allowlist *ctl_edit_allow(struct ctlconn *cc,
	    const struct gk_ctlreq *req, const struct gk_cage *c);

/* gk_ctlops.c: requests and replies */
void	ctl_handle_line(struct ctlconn *cc, const uint8_t *line, size_t len);
void	ctl_reply_error(struct ctlconn *cc, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* With "code": CTL_NOT_PERMITTED or CTL_NO_SUCH_CAGE. */
#define CTL_NOT_PERMITTED	"not_permitted"
#define CTL_NO_SUCH_CAGE	"no_such_cage"
void	ctl_reply_coded(struct ctlconn *cc, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* gk_ctlended.c: recently ended cages. */
struct gk_ctlreq;
/* The cage table's end hook (gk_cage_table_on_end; arg: the control):
 * c's summary is kept. */
void	ctl_ended_keep(const struct gk_cage *c, const char *reason,
	    void *arg);
void	ctl_ended_clear(struct gk_control *ctl);
/* req->id names no live cage: answer cage.show (denials: the denials op)
 * from an ended cage's summary ("ended": seconds ago), or not permitted;
 * false: no ended cage has that id (nothing answered). */
bool	ctl_ended_reply(struct ctlconn *cc, const struct gk_ctlreq *req,
	    bool denials);
/* The recent denials of the ended cages uid may see, appended to arr. */
void	ctl_ended_denials(struct gk_control *ctl, uid_t uid,
	    struct json_object *arr);

#endif /* GK_CONTROL_INT_H */
