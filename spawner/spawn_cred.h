/*
 * spawn_cred: --credential NAME@HOSTPATTERN[,...], the pure half
 * (spawn_cred.c, spawn_trust.c; the I/O is in spawn_credio.c and
 * spawn_ctl.c): the option, the value's shape and its placeholder, the
 * cage.credential request and its reply, the settings files' secrets
 * bound the same way (spawn_filecred.c), and the trust bundles that make
 * the sandbox trust the cage's CA. No function here logs, and none puts
 * a byte of a value into a message.
 */
#ifndef SPAWN_CRED_H
#define SPAWN_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spawner/spawn.h"

#define SPAWN_CRED_MAX		32	/* --credential options in one run */
#define SPAWN_CRED_HOSTS_MAX	32	/* host patterns of one */
#define SPAWN_CRED_NAME_MAX	128	/* bytes of its variable's name */
#define SPAWN_CRED_VALUE_MIN	8	/* bytes of its value */
#define SPAWN_CRED_VALUE_MAX	4096

/*
 * --credential NAME@HOSTPATTERN[,HOSTPATTERN...]: NAME's value, taken
 * from gk-run's environment, goes to gatekeeperd (cage.credential) and
 * never into the sandbox, where NAME holds `placeholder`, of the same
 * length. gatekeeperd puts the value in the requests it carries to
 * `hosts` (which gk-run adds to the allowlist).
 */
struct spawn_cred {
	char		 name[SPAWN_CRED_NAME_MAX + 1];
	struct spawn_strv hosts;	/* name patterns, as given */
	char		*value;		/* malloc'd; wiped and freed once
					   gatekeeperd has it */
	char		*placeholder;	/* malloc'd, NUL-terminated */
	size_t		 len;		/* of value and of placeholder */
};

/* Parse NAME@HOSTPATTERN[,...] into c (hosts owned: spawn_cred_clear).
 * 0, or -1 with err naming what is wrong (c then holds nothing). */
int		 spawn_cred_parse(const char *arg, struct spawn_cred *c,
		    char *err, size_t errlen);
/* Wipe and free what c holds. */
void		 spawn_cred_clear(struct spawn_cred *c);
/* Is NAME's value (NULL: unset) usable: 8..4096 bytes of printable ASCII
 * without spaces (0x21..0x7e)? 0, or -1 with a message that names the
 * variable, never a byte of its value. */
int		 spawn_cred_value_check(const char *name, const char *value,
		    char *err, size_t errlen);
/* len random bytes (getrandom(2) in gk-run, a fixed source in tests);
 * 0, or -1. */
typedef int	(*spawn_rand_fn)(void *arg, uint8_t *buf, size_t len);
/*
 * The placeholder for value[0..len) into out (len + 1 bytes): the known
 * token prefix it starts with kept (spawn_scrub_prefix), the rest
 * [A-Za-z0-9] drawn from rnd without bias, never equal to the value.
 * 0, or -1 when rnd failed.
 */
int		 spawn_cred_placeholder(const char *value, size_t len,
		    char *out, spawn_rand_fn rnd, void *arg);
/*
 * The cage.credential request line for cage `id`, with its "\n":
 *   {"op":"cage.credential","id":ID,"name":NAME,"placeholder":P,
 *    "value":V,"hosts":[...]}
 * malloc'd in one piece that holds the value: the caller wipes
 * (explicit_bzero, *len bytes) and frees it. NULL: out of memory.
 */
char		*spawn_cred_request(const char *id, const struct spawn_cred *c,
		    size_t *len);
/*
 * gatekeeperd's reply to it: {"ok":true,"credential":{"name":NAME,...},
 * "ca":PEM}. 0 with the cage's CA (one PEM certificate, ending in a
 * newline) in ca (calen > SPAWN_CA_MAX); -1 with err: a refusal
 * ("gatekeeperd refused credential NAME: ...") or not understood.
 */
int		 spawn_cred_reply(const char *line, size_t len,
		    const char *name, char *ca, size_t calen, char *err,
		    size_t errlen);
/* Is s[0..n) one PEM certificate (BEGIN/END CERTIFICATE around base64
 * lines of DER), nothing else but a final newline? */
bool		 spawn_pem_cert(const char *s, size_t n);
/*
 * The PEM certificates of a CA bundle in[0..n) (CERTIFICATE and TRUSTED
 * CERTIFICATE blocks, each line ended with "\n"), appended to out;
 * everything else (comments, keys, other blocks) is left out. Returns
 * how many; out->nomem says when memory ran out.
 */
size_t		 spawn_pem_certs(const char *in, size_t n,
		    struct spawn_buf *out);

/*
 * The settings files' secrets bound to their hosts (spawn_filecred.c):
 * in a gated --fs sandbox run on Linux (unless --file-credentials off),
 * a secret that a file gk-run shows scrubbed binds to a host
 * (spawn_scrub_report) becomes a credential like --credential's, named
 * KIND_N (NPMRC_1, NETRC_2, ...): a random placeholder of its shape in
 * the file's view, the value to gatekeeperd for the hosts the file names
 * that the run's allowlist covers (the allowlist is never widened for
 * them). A secret gatekeeperd cannot carry, one for no covered host, or
 * one past the cage's SPAWN_CRED_MAX credentials keeps its fixed
 * placeholder, bound to nothing.
 */
struct gk_allowlist;
struct spawn_scrub_binds;

struct spawn_filecreds {
	struct spawn_cred	 c[SPAWN_CRED_MAX];	/* bound, in order */
	size_t			 n;
	const struct spawn_strv	*allow;		/* the run's allowlist */
	const struct spawn_cred	*creds;		/* --credential's: their
						   names are taken */
	size_t			 ncreds;
	spawn_rand_fn		 rnd;		/* for the placeholders */
	void			*rnd_arg;
	struct gk_allowlist	*al;		/* allow's, made on first use */
	struct spawn_strv	 notes;		/* "~/.npmrc (HOST, ...)" */
};

void		 spawn_filecreds_init(struct spawn_filecreds *fc,
		    const struct spawn_strv *allow,
		    const struct spawn_cred *creds, size_t ncreds,
		    spawn_rand_fn rnd, void *arg);
/*
 * Bind what b reports of one file, `file` as the user knows it
 * ("~/.npmrc"), its credentials named `kind`_N: the values from orig
 * (the file's bytes before spawn_scrub_report), each bound one's
 * placeholder written over the fixed one in view (the same bytes after
 * it). 0, or -1: out of memory.
 */
int		 spawn_filecreds_bind(struct spawn_filecreds *fc,
		    const char *file, const char *kind, const char *orig,
		    char *view, const struct spawn_scrub_binds *b);
/* What is bound, by file and host, never a value ("~/.npmrc
 * (registry.npmjs.org), ~/.netrc (github.com)"); false: nothing. */
bool		 spawn_filecreds_note(const struct spawn_filecreds *fc,
		    char *buf, size_t len);
/* Wipe and free what fc holds; nothing is bound then (the views keep
 * their placeholders, bound to nothing). */
void		 spawn_filecreds_clear(struct spawn_filecreds *fc);

/*
 * Trust inside a cage with credentials (spawn_trust.c): bundles of
 * certificates shown read-only under SPAWN_TRUST_DIR (and over the
 * system's bundle), each a host file's certificates and then the cage's
 * CA, and the variables that name them.
 */
#define SPAWN_TRUST_DIR		"/run/gatekeeper-trust"
#define SPAWN_TRUST_MAX		4194304	/* bytes of a host bundle read */
#define SPAWN_TRUST_FILES_MAX	16

struct spawn_plan;

struct spawn_trust_file {
	char		*path;		/* inside (owned) */
	char		*certs;		/* PEM certificates it starts with,
					   owned; "" for the CA alone */
	size_t		 len;
	char		*from;		/* their host file (owned), or NULL */
	int		 fd;		/* its data fd once the CA is known;
					   -1 before */
};

struct spawn_trust {
	struct spawn_trust_file	 file[SPAWN_TRUST_FILES_MAX];
	size_t			 n;
	struct spawn_strv	 env;	/* "VAR=PATH" to set inside */
};

/* The variables that name a CA bundle, NULL-terminated; the last one,
 * NODE_EXTRA_CA_CERTS, adds to the built-in roots instead. */
#define SPAWN_TRUST_VARS	10
extern const char *const spawn_trust_vars[SPAWN_TRUST_VARS + 1];
/*
 * Read a host file for spawn_trust_layout (`what` names it in messages):
 * its bytes, NUL-terminated (malloc'd, *len without the NUL), or NULL
 * with a message in err.
 */
typedef char	*(*spawn_trust_read_fn)(void *arg, const char *what,
		    const char *path, size_t *len, char *err, size_t errlen);
/*
 * The files and variables of t for a sandbox: ca.pem (the CA alone);
 * bundle.pem (the certificates of `system`, the host's bundle, then the
 * CA) and, with `overlay` (a path inside), the same there; for each
 * variable of spawn_trust_vars that the user's environment sets to a
 * file (vals[i]; NULL or "": unset), a bundle of its certificates and
 * the CA, one per file, else bundle.pem (NODE_EXTRA_CA_CERTS: ca.pem).
 * The files' fds are -1. 0, or -1 with err (a file unreadable or with
 * no certificate; t then holds nothing).
 */
int		 spawn_trust_layout(struct spawn_trust *t, const char *system,
		    const char *overlay, const char *const vals[],
		    spawn_trust_read_fn rd, void *arg, char *err,
		    size_t errlen);
/* --dry-run: each file's text becomes one line saying what it would
 * hold. 0, or -1: out of memory. */
int		 spawn_trust_dry_text(struct spawn_trust *t);
/* A bundle: certs[0..len), then the CA (malloc'd, *outlen bytes); NULL:
 * out of memory. */
char		*spawn_trust_bundle(const char *certs, size_t len,
		    const char *ca, size_t *outlen);
/* The bwrap mount of SPAWN_TRUST_DIR must land on a fresh tmpfs (never
 * on a host directory): true when the plan's mount over it is one. */
bool		 spawn_trust_dir_ok(const struct spawn_plan *p);
void		 spawn_trust_clear(struct spawn_trust *t);

#endif /* SPAWN_CRED_H */
