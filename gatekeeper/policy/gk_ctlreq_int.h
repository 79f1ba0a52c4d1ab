/*
 * gk_ctlreq_int.h: internals shared by gk_ctlreq.c (the fields of each
 * op), gk_ctlreq_scan.c (the JSON of a line, before its fields),
 * gk_ctlreq_table.c (the ops and the names) and gk_ctlreq_cred.c (the
 * values of cage.credential).
 */
#ifndef GK_CTLREQ_INT_H
#define GK_CTLREQ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_ctlreq.h"

struct json_object;

enum field {
	F_OP = 1 << 0,
	F_SOURCE = 1 << 1,
	F_ALLOW = 1 << 2,
	F_LABEL = 1 << 3,
	F_ID = 1 << 4,
	F_NETNS = 1 << 5,
	F_TRANSPARENT = 1 << 6,
	F_EVENTS = 1 << 7,
	F_LEARN = 1 << 8,
	F_LIMITS = 1 << 9,
	F_REATTACH = 1 << 10,
	F_ASK = 1 << 11,		/* create: a flag; decide: the id */
	F_ASK_TIMEOUT = 1 << 12,
	F_DECISION = 1 << 13,
	F_BY = 1 << 14,
	F_ADD = 1 << 15,
	F_REMOVE = 1 << 16,
	F_FOLLOW = 1 << 17,
	F_NAME = 1 << 18,		/* credential */
	F_PLACEHOLDER = 1 << 19,
	F_VALUE = 1 << 20,
	F_HOSTS = 1 << 21,
	F_MAX_UPLOAD = 1 << 22,
	F_COMMAND = 1 << 23,		/* create: for the audit */
	F_MOUNTS = 1 << 24,
	F_EXIT = 1 << 25,		/* destroy: how the command ended */
	F_SIGNAL = 1 << 26,
	F_REASON = 1 << 27,
};

/* A field's name in a request, and its bit. */
struct gk_ctl_field {
	const char	*name;
	enum field	 bit;
};
#define GK_CTL_NFIELDS	28	/* one per bit of enum field */
extern const struct gk_ctl_field gk_ctl_fields[GK_CTL_NFIELDS];

/* An op: its name, the fields it needs and allows, and how to write it. */
struct gk_ctl_op_spec {
	const char	*name;
	unsigned	 required;
	unsigned	 allowed;
	const char	*usage;
};
extern const struct gk_ctl_op_spec gk_ctl_op_specs[GK_CTL_OP__MAX];
/* The decisions' names, as requests spell them. */
extern const char *const gk_ctl_decision_names[GK_DECISION__MAX];
/* "cage.create, cage.update, ...": the ops' names, in the table's order,
 * into buf (cut to len). Returns buf. */
const char	*gk_ctlreq_known_ops(char *buf, size_t len);

/* JSON's whitespace. */
bool		 gk_ctlreq_is_space(uint8_t c);
/* What json-c lets through: NUL bytes, single quotes. GK_CTL_OK, or a
 * status with err. */
enum gk_ctl_status gk_ctlreq_prescan(const uint8_t *buf, size_t len,
		    char *err, size_t errlen);
/* A key given twice in the object obj parsed from buf. */
enum gk_ctl_status gk_ctlreq_check_dups(const uint8_t *buf, size_t len,
		    struct json_object *obj, char *err, size_t errlen);
/*
 * Feed the line to json-c; a bare number needs one more byte to end.
 * Returns false on a syntax error (err says where); JSON null is true
 * with *objp NULL. *end: where the value ended.
 */
bool		 gk_ctlreq_tokenize(const uint8_t *buf, size_t len,
		    struct json_object **objp, size_t *end, char *err,
		    size_t errlen);

/*
 * cage.credential's values (gk_ctlreq_cred.c), each GK_CTL_OK or a status
 * with err (which quotes the name, never the placeholder or the value):
 * the name into out->cred_name; the placeholder and the value, copied
 * into out (cred_len); out->hosts (already copied) counted and measured.
 */
enum gk_ctl_status gk_ctlreq_cred_name(const char *s, size_t n,
		    struct gk_ctlreq *out, char *err, size_t errlen);
enum gk_ctl_status gk_ctlreq_cred_pair(const char *ph, size_t phn,
		    const char *val, size_t valn, struct gk_ctlreq *out,
		    char *err, size_t errlen);
enum gk_ctl_status gk_ctlreq_cred_hosts(const struct gk_ctlreq *req,
		    char *err, size_t errlen);
/* create's "max_upload": ["10M","1M@*.example.com"] (gk_ctlreq_budget.c)
 * into out->uploads; GK_CTL_OK or a status with err. */
enum gk_ctl_status gk_ctlreq_uploads(struct json_object *v,
		    struct gk_ctlreq *out, char *err, size_t errlen);
/* Free the credential's strings (the value wiped first) and hosts. */
void		 gk_ctlreq_cred_clear(struct gk_ctlreq *req);

/*
 * gk_ctlreq_life.c: create's "command" and "mounts", destroy's "exit",
 * "signal" and "reason", into out (GK_CTL_OK, or a status with err);
 * gk_ctlreq_life_clear frees what they hold.
 */
enum gk_ctl_status gk_ctlreq_life(struct json_object *obj,
		    struct gk_ctlreq *out, char *err, size_t errlen);
void		 gk_ctlreq_life_clear(struct gk_ctlreq *req);

#endif /* GK_CTLREQ_INT_H */
