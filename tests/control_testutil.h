/*
 * The fixture of the control socket tests (test_gk_control.c, the socket
 * and its connections; test_gk_control_peer.c, the peers refused at
 * accept; test_gk_control_netns.c, namespace cages): a real unix socket
 * in a temporary directory, the event loop run in bounded steps, clients
 * in this process, and a plumbing stand-in that records what it is asked.
 */
#ifndef CONTROL_TESTUTIL_H
#define CONTROL_TESTUTIL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_peer.h"

struct event_base;
struct gk_audit;
struct gk_cage_table;
struct gk_control;

struct fixture {
	char			 dir[64];
	char			 path[100];
	char			 audit_path[128];
	struct event_base	*base;
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	struct gk_control	*ctl;
};

/* A fresh socket at <tmpdir>/run/control.sock with an audit log. */
int		 setup(void **state);
int		 teardown(void **state);
/* Run the event loop n times without blocking. */
void		 spin(struct fixture *f, int n);
/* A connected client, accepted. */
int		 client(struct fixture *f);
void		 send_all(int fd, const char *s, size_t n);
/* Read one line (without "\n") into buf, running the loop meanwhile.
 * Returns its length, or -1 at EOF / after ~5 s. */
ssize_t		 read_line(struct fixture *f, int fd, char *buf, size_t len);
/* Send one request line, return the parsed reply (caller puts it). */
struct json_object *rpc(struct fixture *f, int fd, const char *req);
/* rpc() expecting an error that contains `want`. */
void		 rpc_err(struct fixture *f, int fd, const char *req,
		    const char *want);
/* The member at a dotted path ("cages.0.id"), or NULL. */
struct json_object *get(struct json_object *o, const char *path);
/* ... as a string ("" when absent). */
const char	*gets_(struct json_object *o, const char *path);
bool		 ok(struct json_object *o);
/* The audit log so far (flushed first). */
char		*audit_text(struct fixture *f);

/* Records what gk_control asked of the plumbing (the real one, nft/, is
 * exercised by the plumbing and end-to-end integration tests). */
struct plumb_rec {
	int		 ups, downs;
	ino_t		 ino;		/* of the fd up() was handed */
	struct gk_addr	 last_down;
	bool		 refuse;
	struct gk_ns_id	 caged;		/* peer_in_cage() says yes for it */
	bool		 transparent;	/* what the last up() was asked */
	bool		 open;
	int		 opens;		/* open() calls, and the last one's */
	struct gk_addr	 last_open;
};

extern struct plumb_rec prec;

/* Hand the recorder to f's control socket as its plumbing (prec
 * cleared; cage addresses from 10.143.0.0/16, gateway 10.143.0.1). */
void		 set_plumb(struct fixture *f);

#endif /* CONTROL_TESTUTIL_H */
