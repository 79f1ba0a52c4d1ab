/*
 * ops.h: the control socket's ops, one file each (gatekeeper/faces/ops/),
 * and what they share with the dispatcher (gk_ctlops.c, whose op table has
 * one row per op). An op turns a request into a cage spec and begins or
 * ends a cage, or reads; it never writes a cage's fields.
 *
 * Each handler gets the request and the descriptor that came with it (a
 * network namespace for cage.create, a pidfd for cage.attach; -1
 * otherwise, and the handler does not keep it), and answers exactly once
 * (or calls ctlconn_wait and answers from the loop).
 */
#ifndef GK_OPS_H
#define GK_OPS_H

#include <stdbool.h>

struct ctlconn;
struct gk_cage;
struct gk_ctlreq;
struct json_object;

typedef void op_fn(struct ctlconn *, const struct gk_ctlreq *, int);

op_fn	op_create;	/* op_create.c */
op_fn	op_update;	/* op_update.c */
op_fn	op_destroy;	/* op_destroy.c */
op_fn	op_list;	/* op_list.c */
op_fn	op_show;	/* op_show.c */
op_fn	op_attach;	/* op_attach.c */
op_fn	op_decide;	/* op_decide.c */
op_fn	op_denials;	/* op_denials.c */
op_fn	op_pending;	/* op_denials.c */
op_fn	op_stats;	/* op_stats.c */
op_fn	op_reload;	/* op_reload.c */
op_fn	op_credential;	/* op_credential.c */

/* gk_ctlops.c: {"ok":true} with `key`: v (key NULL: nothing more). */
void	 ctl_reply_ok(struct ctlconn *cc, const char *key,
	    struct json_object *v);
/* {"ok":true} with each of fields' members (fields is taken). */
void	 ctl_reply_merge(struct ctlconn *cc, struct json_object *fields);
/* The cage named by req->id if this peer may see and manage it; else
 * answered why, NULL. */
struct gk_cage *ctl_find_managed(struct ctlconn *cc,
	    const struct gk_ctlreq *req);
/* The audit and log lines of a cage's create or update by cc: its
 * allowlist (the first GK_CTL_ALLOW_SHOWN patterns, and "patterns", how
 * many), and each member of `more` (taken; NULL: none). */
void	 ctl_audit_change(struct ctlconn *cc, const char *event,
	    const struct gk_cage *c, bool reattach, struct json_object *more);

#endif /* GK_OPS_H */
