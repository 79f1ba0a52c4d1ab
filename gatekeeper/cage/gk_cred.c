/*
 * gk_cred: the credentials facet; its slot holds the credentials, the
 * cage's authority and the leaves it issued.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_facet.h"

#define LEAVES_MAX	16	/* names served, kept for reuse */

struct cred {
	char			 name[GK_CRED_NAME_MAX + 1];
	uint8_t			*placeholder;	/* len bytes, then NUL */
	uint8_t			*secret;	/* len bytes, then NUL */
	size_t			 len;
	struct gk_allowlist	*hosts;
	char			**texts;	/* the patterns as given */
	size_t			 ntexts;
};

struct leaf {
	char	 host[GK_NAME_MAX + 1];
	X509	*cert;
};

struct creds {
	struct cred	 c[GK_CRED_MAX];
	size_t		 n;
	X509		*ca;
	EVP_PKEY	*ca_key;
	char		*ca_pem;
	char		**ca_names;	/* its permitted subtrees */
	size_t		 nca_names;
	EVP_PKEY	*leaf_key;	/* one key for the cage's leaves */
	struct leaf	 leaves[LEAVES_MAX];
	size_t		 nleaves, next_leaf;
	uint64_t	 uses;		/* requests a secret went into */
};

/* Does al hold request rules (patterns with a path)? */
static bool
has_rules(const struct gk_allowlist *al)
{
	size_t i;

	for (i = 0; al != NULL && i < gk_allowlist_len(al); i++)
		if (gk_allowlist_at(al, i)->path[0] != '\0')
			return true;
	return false;
}

static int	ca_renew(struct gk_cage *, struct creds *, char *, size_t);
static struct creds *creds_slot(struct gk_cage *);
static void	names_free(struct creds *);

/* A cage with request rules has its authority from the start (its
 * inspected hosts' leaves); the others get one with a credential. */
int
gk_cred_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct creds *k;

	if (!has_rules(s->allow))
		return 0;
	if ((k = creds_slot(c)) == NULL) {
		snprintf(err, errlen, "cannot create the cage: out of memory");
		return -1;
	}
	return ca_renew(c, k, err, errlen);
}

static void
cred_wipe(struct cred *k)
{
	size_t i;

	if (k->secret != NULL)
		OPENSSL_cleanse(k->secret, k->len);
	if (k->placeholder != NULL)
		OPENSSL_cleanse(k->placeholder, k->len);
	free(k->secret);
	free(k->placeholder);
	gk_allowlist_free(k->hosts);
	for (i = 0; i < k->ntexts; i++)
		free(k->texts[i]);
	free(k->texts);
	memset(k, 0, sizeof(*k));
}

static void
leaves_clear(struct creds *s)
{
	size_t i;

	for (i = 0; i < s->nleaves; i++)
		X509_free(s->leaves[i].cert);
	s->nleaves = s->next_leaf = 0;
}

void
gk_cred_ended(const struct gk_cage *c, struct json_object *d)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	if (s != NULL) {
		json_object_object_add(d, "credentials",
		    json_object_new_uint64(s->n));
		json_object_object_add(d, "credential_uses",
		    json_object_new_uint64(s->uses));
	}
}

void
gk_cred_end(struct gk_cage *c, const char *reason)
{
	struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	size_t i;

	(void)reason;
	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		cred_wipe(&s->c[i]);
	leaves_clear(s);
	X509_free(s->ca);
	EVP_PKEY_free(s->ca_key);	/* OpenSSL clears the key's memory */
	EVP_PKEY_free(s->leaf_key);
	free(s->ca_pem);
	names_free(s);
	free(s);
	gk_cage_facet_set(c, GK_FACET_CRED, NULL);
}

static void
names_free(struct creds *s)
{
	size_t i;

	for (i = 0; i < s->nca_names; i++)
		free(s->ca_names[i]);
	free(s->ca_names);
	s->ca_names = NULL;
	s->nca_names = 0;
}

/* The authority's names, for gk_cred_covers (none kept without memory:
 * then nothing is covered, and a new rule's host is refused). */
static void
names_keep(struct creds *s, const char *const *names, size_t n)
{
	size_t i;

	names_free(s);
	if ((s->ca_names = calloc(n + 1, sizeof(*s->ca_names))) == NULL)
		return;
	for (i = 0; i < n; i++)
		if ((s->ca_names[s->nca_names] = strdup(names[i])) != NULL)
			s->nca_names++;
}

bool
gk_cred_covers(const struct gk_cage *c, const char *name)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	size_t i, n = strlen(name), m;

	for (i = 0; s != NULL && i < s->nca_names; i++) {
		m = strlen(s->ca_names[i]);
		if (strcmp(name, s->ca_names[i]) == 0 || (n > m + 1 &&
		    name[n - m - 1] == '.' && strcmp(name + n - m,
		    s->ca_names[i]) == 0))
			return true;
	}
	return false;
}

/* The bound names of every credential of s, plus k's: the constraints. */
static int
ca_renew(struct gk_cage *c, struct creds *s, char *err, size_t errlen)
{
	const char *names[GK_CRED_MAX * GK_CRED_HOSTS_MAX + 64];
	char cn[96];
	size_t i, j, n = 0;
	X509 *ca;
	EVP_PKEY *key;
	char *pem;

	const struct gk_allowlist *al = gk_cage_allow(c);
	const struct gk_pattern *p;

	for (i = 0; i < s->n; i++)
		for (j = 0; j < gk_allowlist_len(s->c[i].hosts); j++)
			names[n++] = gk_allowlist_at(s->c[i].hosts, j)->name;
	/* the hosts request rules inspect (as many as fit) */
	for (i = 0; al != NULL && i < gk_allowlist_len(al) &&
	    n < sizeof(names) / sizeof(names[0]); i++) {
		p = gk_allowlist_at(al, i);
		if (p->path[0] != '\0' && p->kind != GK_PAT_CIDR)
			names[n++] = p->name;
	}
	if (n == 0) {	/* no permitted subtree would permit every name */
		snprintf(err, errlen, "no host name for the cage's "
		    "certificate authority");
		return -1;
	}
	snprintf(cn, sizeof(cn), "gatekeeper cage %s", gk_cage_id(c));
	if (gk_cred_ca_make(cn, names, n, GK_CRED_CA_DAYS, &ca, &key, err,
	    errlen) == -1)
		return -1;
	if ((pem = gk_cred_pem(ca)) == NULL) {
		snprintf(err, errlen, "cannot write the cage's certificate "
		    "authority: out of memory");
		X509_free(ca);
		EVP_PKEY_free(key);
		return -1;
	}
	leaves_clear(s);
	X509_free(s->ca);
	EVP_PKEY_free(s->ca_key);
	free(s->ca_pem);
	names_keep(s, names, n);
	s->ca = ca;
	s->ca_key = key;
	s->ca_pem = pem;
	return 0;
}

/* The hosts of a new credential: names only, each a pattern. */
static int
cred_hosts(struct cred *k, const char *const *hosts, size_t n, char *err,
    size_t errlen)
{
	char text[GK_PATTERN_MAX + 8];
	size_t i;

	if (n == 0 || n > GK_CRED_HOSTS_MAX) {
		snprintf(err, errlen, "a credential is bound to 1 to %d host "
		    "patterns", GK_CRED_HOSTS_MAX);
		return -1;
	}
	if ((k->hosts = gk_allowlist_new(hosts, n, err, errlen)) == NULL)
		return -1;
	for (i = 0; i < gk_allowlist_len(k->hosts); i++)
		if (gk_allowlist_at(k->hosts, i)->kind == GK_PAT_CIDR) {
			gk_pattern_format(gk_allowlist_at(k->hosts, i), text,
			    sizeof(text));
			snprintf(err, errlen, "credential %s: '%s' is an "
			    "address range; a credential is bound to host "
			    "names (its TLS certificate names them)", k->name,
			    text);
			return -1;
		}
	if ((k->texts = calloc(n, sizeof(*k->texts))) == NULL)
		return -1;
	for (k->ntexts = 0; k->ntexts < n; k->ntexts++)
		if ((k->texts[k->ntexts] = strdup(hosts[k->ntexts])) == NULL)
			return -1;
	return 0;
}

static uint8_t *
dup_bytes(const uint8_t *p, size_t len)
{
	uint8_t *d = malloc(len + 1);

	if (d != NULL) {
		memcpy(d, p, len);
		d[len] = '\0';
	}
	return d;
}

/* A refusal that names the other credential, never a value. */
static int
cred_clash(const struct creds *s, const char *name, const uint8_t *ph,
    size_t len, char *err, size_t errlen)
{
	size_t i, m;

	for (i = 0; i < s->n; i++) {
		m = len < s->c[i].len ? len : s->c[i].len;
		if (strcmp(s->c[i].name, name) == 0) {
			snprintf(err, errlen, "credential %s is given already",
			    name);
			return -1;
		}
		if (m >= 16 && memcmp(s->c[i].placeholder + s->c[i].len - 16,
		    ph + len - 16, 16) == 0) {
			snprintf(err, errlen, "credential %s: its placeholder "
			    "ends as %s's does; placeholders must differ",
			    name, s->c[i].name);
			return -1;
		}
	}
	return 0;
}

static struct creds *
creds_slot(struct gk_cage *c)
{
	struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	if (s == NULL && (s = calloc(1, sizeof(*s))) != NULL)
		gk_cage_facet_set(c, GK_FACET_CRED, s);
	return s;
}

int
gk_cred_add(struct gk_cage *c, const char *name, const uint8_t *placeholder,
    const uint8_t *value, size_t len, const char *const *hosts,
    size_t nhosts, char *err, size_t errlen)
{
	struct creds *s;
	struct cred *k;

	if ((s = creds_slot(c)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (s->n >= GK_CRED_MAX) {
		snprintf(err, errlen, "a cage holds at most %d credentials",
		    GK_CRED_MAX);
		return -1;
	}
	if (cred_clash(s, name, placeholder, len, err, errlen) == -1)
		return -1;
	k = &s->c[s->n];
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->len = len;
	if ((k->placeholder = dup_bytes(placeholder, len)) == NULL ||
	    (k->secret = dup_bytes(value, len)) == NULL ||
	    cred_hosts(k, hosts, nhosts, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "out of memory");
		cred_wipe(k);
		return -1;
	}
	s->n++;
	if (ca_renew(c, s, err, errlen) == -1) {
		cred_wipe(&s->c[--s->n]);
		return -1;
	}
	log_info("cage=%s action=credential name=%s hosts=%zu", gk_cage_id(c),
	    name, nhosts);
	return 0;
}

size_t
gk_cred_count(const struct gk_cage *c)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	return s != NULL ? s->n : 0;
}

static bool
cred_binds(const struct cred *k, const char *host, size_t len)
{
	return host != NULL && gk_allow_name(k->hosts, host, len, 0);
}

bool
gk_cred_at(const struct gk_cage *c, size_t i, const char *host,
    struct gk_cred_view *v)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	if (s == NULL || i >= s->n)
		return false;
	v->name = s->c[i].name;
	v->placeholder = s->c[i].placeholder;
	v->secret = s->c[i].secret;
	v->len = s->c[i].len;
	v->bound = cred_binds(&s->c[i], host, host != NULL ? strlen(host) :
	    0);
	return true;
}

bool
gk_cred_bound(const struct gk_cage *c, const char *host, size_t len)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	size_t i;

	for (i = 0; s != NULL && i < s->n; i++)
		if (cred_binds(&s->c[i], host, len))
			return true;
	return false;
}

/* Where the mark (the last bytes) of k's placeholder is in buf, any
 * case: its offset, or SIZE_MAX. */
static size_t
mark_at(const struct cred *k, const uint8_t *buf, size_t len, size_t *m)
{
	const uint8_t *mark;
	size_t i;

	*m = k->len < GK_CRED_MARK ? k->len : GK_CRED_MARK;
	mark = k->placeholder + k->len - *m;
	for (i = 0; i + *m <= len; i++)
		if (strncasecmp((const char *)buf + i, (const char *)mark,
		    *m) == 0)
			return i;
	return SIZE_MAX;
}

const char *
gk_cred_leak(const struct gk_cage *c, const uint8_t *buf, size_t len,
    size_t *at, size_t *mlen)
{
	const struct creds *s = c != NULL ? gk_cage_facet(c, GK_FACET_CRED) :
	    NULL;
	size_t i, j, m;

	for (i = 0; s != NULL && i < s->n; i++) {
		if ((j = mark_at(&s->c[i], buf, len, &m)) == SIZE_MAX)
			continue;
		if (at != NULL)
			*at = j;
		if (mlen != NULL)
			*mlen = m;
		return s->c[i].name;
	}
	return NULL;
}

void
gk_cred_redact(const struct gk_cage *c, const char *in, char *out,
    size_t outlen)
{
	size_t len = strlen(in), at, m, o = 0, i = 0;
	const char *name;
	int n;

	if (outlen == 0)
		return;
	/* bounded: each turn moves i past a mark (m >= 1) or to the end */
	while (i < len && o + 1 < outlen) {
		name = gk_cred_leak(c, (const uint8_t *)in + i, len - i, &at,
		    &m);
		if (name == NULL)
			at = len - i;
		n = snprintf(out + o, outlen - o, "%.*s", (int)at, in + i);
		o += n > 0 ? (size_t)n : 0;
		i += at;
		if (name == NULL || o + 1 >= outlen)
			break;
		n = snprintf(out + o, outlen - o, "[%s]", name);
		o += n > 0 ? (size_t)n : 0;
		i += m;
	}
	if (o >= outlen)
		o = outlen - 1;
	out[o] = '\0';
}

void
gk_cred_used(const struct gk_cage *c, unsigned n)
{
	struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	if (s != NULL)
		s->uses += n;
}

const char *
gk_cred_ca_pem(const struct gk_cage *c)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);

	return s != NULL ? s->ca_pem : NULL;
}

int
gk_cred_leaf(struct gk_cage *c, const char *host, X509 **cert,
    EVP_PKEY **key)
{
	struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	struct leaf *l;
	size_t i;

	if (s == NULL || s->ca == NULL || (!gk_cred_bound(c, host,
	    strlen(host)) && !gk_allow_inspects(gk_cage_allow(c), host,
	    strlen(host), 0)))
		return -1;
	for (i = 0; i < s->nleaves; i++)
		if (strcmp(s->leaves[i].host, host) == 0)
			goto found;
	if (s->leaf_key == NULL && (s->leaf_key = gk_cred_key_make()) == NULL)
		return -1;
	if (s->nleaves < LEAVES_MAX)
		i = s->nleaves++;
	else {
		i = s->next_leaf;
		s->next_leaf = (s->next_leaf + 1) % LEAVES_MAX;
		X509_free(s->leaves[i].cert);
	}
	l = &s->leaves[i];
	snprintf(l->host, sizeof(l->host), "%s", host);
	if ((l->cert = gk_cred_leaf_make(s->ca, s->ca_key, s->leaf_key,
	    host)) == NULL) {
		s->leaves[i] = s->leaves[--s->nleaves];
		return -1;
	}
found:
	*cert = s->leaves[i].cert;
	*key = s->leaf_key;
	return 0;
}

static struct json_object *
cred_one(const struct cred *k)
{
	struct json_object *o = json_object_new_object();
	struct json_object *h = json_object_new_array();
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(k->name));
	for (i = 0; i < k->ntexts; i++)
		json_object_array_add(h, json_object_new_string(k->texts[i]));
	json_object_object_add(o, "hosts", h);
	return o;
}

struct json_object *
gk_cred_json(const struct gk_cage *c)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	struct json_object *a;
	size_t i;

	if (s == NULL || s->n == 0)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < s->n; i++)
		json_object_array_add(a, cred_one(&s->c[i]));
	return a;
}

struct json_object *
gk_cred_json_one(const struct gk_cage *c, const char *name)
{
	const struct creds *s = gk_cage_facet(c, GK_FACET_CRED);
	size_t i;

	for (i = 0; s != NULL && i < s->n; i++)
		if (strcmp(s->c[i].name, name) == 0)
			return cred_one(&s->c[i]);
	return NULL;
}
