/*
 * Trust inside a cage with credentials, the pure half: which bundles the
 * sandbox gets and which variables name them (spawn.h, "credentials").
 *
 * gatekeeperd terminates TLS for the hosts a credential is bound to with
 * a certificate of the cage's own CA, so the sandbox must trust that CA
 * as well as what it trusted before (every other host keeps the opaque,
 * SNI-checked tunnel and the server's own certificate). Under
 * SPAWN_TRUST_DIR, on the sandbox's fresh /run:
 *
 *   ca.pem       the cage's CA alone (NODE_EXTRA_CA_CERTS when unset)
 *   bundle.pem   the system's certificates, then the CA; also shown over
 *                the system's bundle itself (for programs that read it
 *                by its path)
 *   VAR.pem      for a variable of spawn_trust_vars the user's
 *                environment sets: that file's certificates, then the CA
 *
 * Only the certificates of a host file go in (spawn_pem_certs): nothing
 * else of a file the user named ever reaches the sandbox.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

const char *const spawn_trust_vars[SPAWN_TRUST_VARS + 1] = {
	"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
	"GIT_SSL_CAINFO", "CARGO_HTTP_CAINFO", "NIX_SSL_CERT_FILE",
	"AWS_CA_BUNDLE", "DENO_CERT", "NODE_EXTRA_CA_CERTS", NULL,
};

#define FILE_CA		0	/* ca.pem */
#define FILE_BUNDLE	1	/* bundle.pem */
#define NODE_VAR	"NODE_EXTRA_CA_CERTS"

/* Take certs (owned) as file `name` (under SPAWN_TRUST_DIR, or an
 * absolute path); -1: out of memory (certs freed). */
static int
add_file(struct spawn_trust *t, const char *name, char *certs, size_t len,
    const char *from)
{
	struct spawn_trust_file *f = &t->file[t->n];
	int r;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->certs = certs;
	f->len = len;
	r = name[0] == '/' ? ((f->path = strdup(name)) == NULL ? -1 : 0) :
	    asprintf(&f->path, "%s/%s", SPAWN_TRUST_DIR, name);
	if (r == -1 || certs == NULL || (from != NULL &&
	    (f->from = strdup(from)) == NULL)) {
		if (r == -1)
			f->path = NULL;
		free(f->path);
		free(f->certs);
		free(f->from);
		memset(f, 0, sizeof(*f));
		return -1;
	}
	t->n++;
	return 0;
}

/* The certificates of host file `path` (malloc'd, *len bytes), read by
 * rd; NULL with err saying why and what `var` can do about it. */
static char *
read_certs(const char *var, const char *path, spawn_trust_read_fn rd,
    void *arg, size_t *len, char *err, size_t errlen)
{
	struct spawn_buf b = { 0 };
	char msg[SPAWN_ERRLEN], show[256];
	size_t n, count;
	char *raw;

	snprintf(msg, sizeof(msg), "out of memory");
	if ((raw = rd(arg, var != NULL ? var : "the system's CA bundle", path,
	    &n, msg, sizeof(msg))) == NULL) {
		if (var == NULL)
			gk_seterr(err, errlen, "--credential: %s", msg);
		else
			gk_seterr(err, errlen, "--credential: %s (the "
			    "sandbox's %s names that file with the cage's CA "
			    "added; fix it, or unset %s)", msg, var, var);
		return NULL;
	}
	count = spawn_pem_certs(raw, n, &b);
	free(raw);
	if (b.nomem || count == 0) {
		free(b.s);
		spawn_printable(path, show, sizeof(show));
		if (b.nomem)
			gk_seterr(err, errlen, "out of memory");
		else
			gk_seterr(err, errlen, "--credential: %s %s holds no "
			    "PEM certificate%s%s", var != NULL ? var :
			    "the system's CA bundle", show, var != NULL ?
			    "; unset " : "", var != NULL ? var : "");
		return NULL;
	}
	*len = b.n;
	return b.s;
}

/* The file the sandbox's `var` names: the bundle of the file val names
 * (one per file), or the default; NULL with err. */
static const char *
var_file(struct spawn_trust *t, const char *var, const char *val,
    spawn_trust_read_fn rd, void *arg, char *err, size_t errlen)
{
	char name[64], *certs;
	size_t k, len;

	if (val == NULL || val[0] == '\0')
		return t->file[strcmp(var, NODE_VAR) == 0 ? FILE_CA :
		    FILE_BUNDLE].path;
	for (k = FILE_BUNDLE; k < t->n; k++)
		if (t->file[k].from != NULL && strcmp(t->file[k].from,
		    val) == 0)
			return t->file[k].path;
	if (t->n == SPAWN_TRUST_FILES_MAX) {
		gk_seterr(err, errlen, "--credential: too many CA bundles");
		return NULL;
	}
	if ((certs = read_certs(var, val, rd, arg, &len, err, errlen)) ==
	    NULL)
		return NULL;
	snprintf(name, sizeof(name), "%s.pem", var);
	if (add_file(t, name, certs, len, val) == -1) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	return t->file[t->n - 1].path;
}

int
spawn_trust_layout(struct spawn_trust *t, const char *system,
    const char *overlay, const char *const vals[], spawn_trust_read_fn rd,
    void *arg, char *err, size_t errlen)
{
	const char *path;
	char *certs;
	size_t i, len;

	memset(t, 0, sizeof(*t));
	if (add_file(t, "ca.pem", strdup(""), 0, NULL) == -1)
		goto nomem;
	if ((certs = read_certs(NULL, system, rd, arg, &len, err,
	    errlen)) == NULL)
		goto fail;
	if (add_file(t, "bundle.pem", certs, len, system) == -1 ||
	    (overlay != NULL && add_file(t, overlay, strndup(certs, len), len,
	    system) == -1))
		goto nomem;
	for (i = 0; spawn_trust_vars[i] != NULL; i++) {
		if ((path = var_file(t, spawn_trust_vars[i], vals[i], rd, arg,
		    err, errlen)) == NULL)
			goto fail;
		spawn_strv_pushf(&t->env, "%s=%s", spawn_trust_vars[i], path);
	}
	if (!t->env.nomem)
		return 0;
nomem:
	gk_seterr(err, errlen, "out of memory");
fail:
	spawn_trust_clear(t);
	return -1;
}

/* The mount that decides what p shows at `path`: the deepest over it. */
static const struct spawn_mount *
covering(const struct spawn_plan *p, const char *path)
{
	const struct spawn_mount *best = NULL;
	size_t i;

	for (i = 0; i < p->nmounts; i++)
		if (spawn_path_under(path, p->mounts[i].path) &&
		    (best == NULL || spawn_path_depth(p->mounts[i].path) >=
		    spawn_path_depth(best->path)))
			best = &p->mounts[i];
	return best;
}

bool
spawn_trust_dir_ok(const struct spawn_plan *p)
{
	const struct spawn_mount *m = covering(p, SPAWN_TRUST_DIR);

	return m != NULL && (m->kind == SPAWN_MNT_TMPFS ||
	    m->kind == SPAWN_MNT_SYNTH);
}

int
spawn_trust_dry_text(struct spawn_trust *t)
{
	size_t i;
	char *s;

	for (i = 0; i < t->n; i++) {
		if (asprintf(&s, "# gk-run --dry-run: %s%s%sthe cage's CA "
		    "from gatekeeperd\n", t->file[i].from != NULL ? "the "
		    "certificates of " : "", t->file[i].from != NULL ?
		    t->file[i].from : "", t->file[i].from != NULL ? ", then " :
		    "") == -1)
			return -1;
		free(t->file[i].certs);
		t->file[i].certs = s;
		t->file[i].len = strlen(s);
	}
	return 0;
}

void
spawn_trust_clear(struct spawn_trust *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->file[i].path);
		free(t->file[i].certs);
		free(t->file[i].from);
	}
	spawn_strv_clear(&t->env);
	memset(t, 0, sizeof(*t));
}
