/*
 * gk_proto: what gatekeeperd and gk-run must agree on about the control
 * protocol (README.md, "Control socket") and gatekeeperd's defaults: the
 * one description both build from, so they cannot drift apart.
 */
#ifndef GK_PROTO_H
#define GK_PROTO_H

/* A numeric default as text, for --help and usage tables. */
#define GK_STR_(x)		#x
#define GK_STR(x)		GK_STR_(x)

/* The control socket and who may use it. */
#define GK_CONTROL_PATH_DEFAULT	"/run/gatekeeper/control.sock"
/* the unit's LogsDirectory=: where an operator's audit log goes (and
 * what every sandbox has hidden) */
#define GK_AUDIT_DIR_DEFAULT	"/var/log/gatekeeper"
#define GK_CONTROL_GROUP	"gatekeeper"
#define GK_CTL_LINE_MAX		65536	/* bytes in one request or reply */

/* What a cage is called. */
#define GK_CAGE_ID_LEN		8	/* [a-z0-9] */
#define GK_CAGE_LABEL_MAX	64	/* bytes, printable ASCII */
#define GK_CAGE_TOKEN_LEN	24	/* [a-z0-9]: SOCKS5/HTTP user name */

/* Where a namespace cage's gateway listens, unless configured. */
#define GK_GATEWAY_DEFAULT	"10.143.0.1"
#define GK_CAGE_SUBNET_DEFAULT	"10.143.0.0/16"
#define GK_DNS_PORT_DEFAULT	53
#define GK_SOCKS_PORT_DEFAULT	1080
#define GK_HTTP_PORT_DEFAULT	3128
#define GK_TRANSPARENT_PORT_DEFAULT 15001

/*
 * A cage that asks before it denies ("ask": true): how long a question
 * waits for its answer (cage.decide) unless "ask_timeout" says, and the
 * answers. Seconds.
 */
#define GK_ASK_TIMEOUT_DEFAULT	60
#define GK_ASK_TIMEOUT_MAX	3600

enum gk_decision {
	GK_DECISION_ONCE,	/* the connections waiting on it go on */
	GK_DECISION_RUN,	/* host:port joins the cage's allowlist */
	GK_DECISION_SAVE,	/* the same; the owner also keeps it */
	GK_DECISION_DENY,	/* host:port refused for the cage's life */
	GK_DECISION_TIMEOUT,	/* nobody answered in time: refused */
	GK_DECISION__MAX
};

#endif /* GK_PROTO_H */
