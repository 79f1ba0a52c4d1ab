/*
 * gk_cred: a cage's credentials, the credentials facet (gk_facet.h).
 *
 * Its owner gives each one over the control socket (cage.credential): a
 * name, the secret, the placeholder of the same length the sandbox holds
 * instead, and the host patterns it belongs to. They live in gatekeeperd's
 * memory for the cage's life and are wiped when it ends. The first one
 * makes the cage a certificate authority of its own (gk_cred_ca.c): an
 * EC P-256 key that never leaves the process and a certificate limited by
 * X.509 name constraints to the bound names, which the owner puts into
 * the sandbox's trust; the broker (socks/proxy_broker.c) serves a leaf of
 * it for a bound name and puts the secret into the requests it carries
 * there. Every credential added makes a new authority (its constraints
 * name all bound hosts): the owner uses the last one it was given.
 *
 * A cage whose allowlist has request rules (patterns with a path) gets its
 * authority as it begins, for the hosts they inspect (and its
 * credentials' after): the broker ends their TLS to check each request.
 *
 * Nothing here logs or audits a secret or a placeholder: only names.
 */
#ifndef GK_CRED_H
#define GK_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GK_CRED_MAX		32	/* credentials in one cage */
#define GK_CRED_HOSTS_MAX	32	/* host patterns of one */
#define GK_CRED_NAME_MAX	128
#define GK_CRED_VALUE_MIN	8
#define GK_CRED_VALUE_MAX	4096
#define GK_CRED_CA_DAYS		7	/* the authority's and leaves' life */
#define GK_CRED_MARK		16	/* a placeholder's last bytes: its mark */

struct gk_cage;
struct gk_cage_spec;
struct json_object;

typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;

int		 gk_cred_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_cred_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_cred_end(struct gk_cage *c, const char *reason);

/*
 * Add a credential to c (its slot made on the first): value and
 * placeholder are len bytes each; hosts are name patterns (no CIDR). The
 * authority is made anew. 0, or -1 with a message for the one who asked
 * in err (nothing changed then).
 */
int		 gk_cred_add(struct gk_cage *c, const char *name,
		    const uint8_t *placeholder, const uint8_t *value,
		    size_t len, const char *const *hosts, size_t nhosts,
		    char *err, size_t errlen);
/* c's credentials: how many (0: none, no authority). */
size_t		 gk_cred_count(const struct gk_cage *c);

struct gk_cred_view {
	const char	*name;
	const uint8_t	*placeholder;
	const uint8_t	*secret;
	size_t		 len;
	bool		 bound;		/* to the host asked about */
};
/* The i-th credential, bound or not to `host` (NULL: not). */
bool		 gk_cred_at(const struct gk_cage *c, size_t i,
		    const char *host, struct gk_cred_view *v);
/* Is some credential of c bound to host? */
bool		 gk_cred_bound(const struct gk_cage *c, const char *host,
		    size_t len);
/*
 * A leak: the mark of one of c's placeholders in buf[0, len) (ASCII case
 * aside): a DNS name, a TLS server name, a proxy target, a plain-HTTP
 * request head. The credential's name (and where the mark is, and its
 * length, for redacting), or NULL. c may be NULL.
 */
const char	*gk_cred_leak(const struct gk_cage *c, const uint8_t *buf,
		    size_t len, size_t *at, size_t *mlen);
/* in, each mark in it replaced by "[NAME]": what logs and the audit
 * say of a leaking name (never a placeholder's bytes). */
void		 gk_cred_redact(const struct gk_cage *c, const char *in,
		    char *out, size_t outlen);
/* n more requests carried c's secrets (the cage.destroy line). */
void		 gk_cred_used(const struct gk_cage *c, unsigned n);
/* Does c's authority cover name (a subtree its constraints permit)? A
 * request rule for a host it does not cover cannot be inspected. */
bool		 gk_cred_covers(const struct gk_cage *c, const char *name);
/* The authority's certificate, PEM (NULL without credentials). */
const char	*gk_cred_ca_pem(const struct gk_cage *c);
/* A leaf for host, issued by c's authority (kept for reuse): the
 * certificate and its key, both c's (the caller takes no reference);
 * -1 when c has none or host is neither bound nor inspected. */
int		 gk_cred_leaf(struct gk_cage *c, const char *host,
		    X509 **cert, EVP_PKEY **key);
/* The credentials as JSON for cage.show: [{"name","hosts"}], never a
 * value; NULL without any. */
struct json_object *gk_cred_json(const struct gk_cage *c);
/* One credential's reply: {"name","hosts"}. */
struct json_object *gk_cred_json_one(const struct gk_cage *c,
		    const char *name);

/* gk_cred_ca.c: an authority for names (permitted DNS subtrees: each of
 * names[]; no IP addresses), valid `days`. 0, or -1 (OpenSSL's error
 * in err). */
int		 gk_cred_ca_make(const char *cn, const char *const *names,
		    size_t n, unsigned days, X509 **cert, EVP_PKEY **key,
		    char *err, size_t errlen);
/* A server leaf for host signed by ca/cakey, with key's public half,
 * valid no longer than ca. NULL on error. */
X509		*gk_cred_leaf_make(X509 *ca, EVP_PKEY *cakey, EVP_PKEY *key,
		    const char *host);
/* A new EC P-256 key, or NULL. */
EVP_PKEY	*gk_cred_key_make(void);
/* PEM text of cert (malloc'd, NUL-terminated), or NULL. */
char		*gk_cred_pem(X509 *cert);

#endif /* GK_CRED_H */
