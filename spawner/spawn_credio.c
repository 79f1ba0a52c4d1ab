/*
 * --credential, the I/O half: the values from gk-run's environment (and
 * out of it at once), their placeholders from getrandom(2), the trust
 * bundles read from the host, and their data fds for bwrap.
 *
 * A value lives in one malloc'd buffer from here until gatekeeperd has
 * it (spawn_ctl_credentials wipes it then); the environment's copy is
 * wiped and the variable unset as soon as it is copied, so neither the
 * sandbox's environment (built from gk-run's, spawn_env_scrub) nor
 * /proc/PID/environ holds it afterwards.
 *
 * The settings files' secrets bound to their hosts (spawn_filecred.c)
 * take the same way from the plan on: placeholders from getrandom(2),
 * the trust files, cage.credential after --credential's.
 */
#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn_int.h"

extern char **environ;

/* Wipe the value of every NAME=... in the environment, then unset it. */
static void
env_wipe(const char *name)
{
	size_t i, n = strlen(name);
	char *v;

	for (i = 0; environ != NULL && environ[i] != NULL; i++) {
		if (strncmp(environ[i], name, n) != 0 || environ[i][n] != '=')
			continue;
		v = environ[i] + n + 1;
		explicit_bzero(v, strlen(v));
	}
	(void)unsetenv(name);
}

static int
rand_bytes(void *arg, uint8_t *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	(void)arg;
	while (done < len) {
		n = getrandom(buf + done, len - done, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* The settings files' secrets bound this run (o->fcreds). */
static struct spawn_filecreds filecreds;

int
spawn_creds_load(struct spawn_opts *o, char *err, size_t errlen)
{
	struct spawn_cred *c;
	const char *v;
	size_t i;

	for (i = 0; i < o->ncreds; i++) {
		c = &o->creds[i];
		v = getenv(c->name);
		if (spawn_cred_value_check(c->name, v, err, errlen) == -1)
			return -1;
		c->len = strlen(v);
		if ((c->value = malloc(c->len + 1)) == NULL ||
		    (c->placeholder = malloc(c->len + 1)) == NULL)
			return gk_seterr(err, errlen, "out of memory");
		memcpy(c->value, v, c->len + 1);
		env_wipe(c->name);
		if (spawn_cred_placeholder(c->value, c->len, c->placeholder,
		    rand_bytes, NULL) == -1)
			return gk_seterr(err, errlen, "--credential %s: no "
			    "random bytes for its placeholder (getrandom: %s)",
			    c->name, strerror(errno));
	}
	if (o->file_creds == 1 && o->net == SPAWN_NET_GATED &&
	    o->fs == SPAWN_FS_SANDBOX && o->platform == SPAWN_PLATFORM_LINUX) {
		spawn_filecreds_init(&filecreds, &o->allow, o->creds,
		    o->ncreds, rand_bytes, NULL);
		o->fcreds = &filecreds;
	}
	return 0;
}

/* spawn_trust_read_fn for the host: a regular file reached without a
 * link (spawn_hostfile_open), at most SPAWN_TRUST_MAX bytes. */
static char *
read_host(void *arg, const char *what, const char *path, size_t *len,
    char *err, size_t errlen)
{
	struct spawn_hostfile h;
	uint8_t *buf = NULL;
	char show[256];
	int fd;

	(void)arg;
	if (spawn_hostfile_open(&h, what, path, false, err, errlen) == -1)
		return NULL;
	spawn_printable(path, show, sizeof(show));
	if ((fd = spawn_hostfile_reopen(&h, O_RDONLY | O_NONBLOCK)) == -1)
		gk_seterr(err, errlen, "%s %s: %s", what, show,
		    strerror(errno));
	else if ((buf = spawn_fd_slurp(fd, SPAWN_TRUST_MAX, len)) == NULL)
		gk_seterr(err, errlen, "%s %s: %s", what, show, errno ==
		    EFBIG ? "larger than 4 MiB; is it a CA bundle?" :
		    strerror(errno));
	else
		buf[*len] = '\0';	/* spawn_fd_slurp leaves room */
	if (fd != -1)
		close(fd);
	spawn_hostfile_close(&h);
	return (char *)buf;
}

/* Where distributions keep the system's bundle of trusted certificates
 * (Debian and Ubuntu, Arch; Fedora and RHEL; openSUSE; Alpine). */
static const char *const system_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/ssl/cert.pem",
	NULL,
};

/*
 * The layout for this host (spawn_trust_layout): the system's bundle by
 * its real path (a root-owned place), shown over itself when the sandbox
 * sees it; a variable that names it, through links or not, shares
 * bundle.pem, and any other file is read without following a link.
 */
static int
trust_prepare(struct spawn_trust *t, const struct spawn_plan *p, char *err,
    size_t errlen)
{
	const char *vals[SPAWN_TRUST_VARS], *v;
	char *sys = NULL, *real;
	size_t i;
	int r;

	for (i = 0; sys == NULL && system_bundles[i] != NULL; i++)
		sys = realpath(system_bundles[i], NULL);
	if (sys == NULL)
		return gk_seterr(err, errlen, "--credential: this host has no "
		    "bundle of trusted certificates (%s, ...) to add the "
		    "cage's CA to; install the ca-certificates package",
		    system_bundles[0]);
	for (i = 0; spawn_trust_vars[i] != NULL; i++) {
		vals[i] = v = getenv(spawn_trust_vars[i]);
		if (v != NULL && v[0] != '\0' &&
		    (real = realpath(v, NULL)) != NULL) {
			if (strcmp(real, sys) == 0)
				vals[i] = sys;
			free(real);
		}
	}
	r = spawn_trust_layout(t, sys, spawn_path_visible(p, sys) ? sys :
	    NULL, vals, read_host, NULL, err, errlen);
	free(sys);
	return r;
}

/* The trust files of a run with credentials (the host's bundles read
 * now; with --dry-run, words for them) into p. 0, or -1 with err. */
static int
trust_plan(const struct spawn_opts *o, struct spawn_plan *p,
    struct spawn_trust *trust, char *err, size_t errlen)
{
	if (!spawn_trust_dir_ok(p))
		return gk_seterr(err, errlen, "--credential (or a request "
		    "rule): %s would not be "
		    "on a fresh tmpfs in this sandbox (is /run given with --ro "
		    "or --rw?), and gk-run writes no file on the host for the "
		    "cage's CA", SPAWN_TRUST_DIR);
	if (trust_prepare(trust, p, err, errlen) == -1)
		return -1;
	if (o->dry_run && spawn_trust_dry_text(trust) == -1)
		return gk_seterr(err, errlen, "out of memory");
	p->trust = trust;
	return 0;
}

/* The settings files' credentials, said by file and host. Alone (no
 * --credential), they need the trust files too; where the sandbox cannot
 * have them, they stay unbound, as before: nothing fails that did not. */
static void
filecreds_plan(const struct spawn_opts *o, struct spawn_plan *p,
    struct spawn_trust *trust)
{
	struct spawn_filecreds *fc = o->fcreds;
	static const char opt[] = "--credential: ";
	char err[SPAWN_ERRLEN], note[1024];

	if (fc == NULL || fc->n == 0)
		return;
	if (p->trust == NULL && trust_plan(o, p, trust, err,
	    sizeof(err)) == -1) {
		spawn_filecreds_clear(fc);
		if (!o->quiet)
			fprintf(stderr, "gk-run: the settings files' secrets "
			    "stay unbound (placeholders only): %s\n", err +
			    (strncmp(err, opt, sizeof(opt) - 1) == 0 ?
			    sizeof(opt) - 1 : 0));
		return;
	}
	if (spawn_filecreds_note(fc, note, sizeof(note)) && !o->quiet)
		fprintf(stderr, "gk-run: credentials from %s go on the wire "
		    "for their hosts only\n", note);
}

/* Request rules (patterns with a path) make the cage's CA too: its
 * inspected hosts' TLS is ended by gatekeeperd. */
static bool
has_rules(const struct spawn_strv *allow)
{
	struct gk_pattern pat;
	size_t i;

	for (i = 0; i < allow->n; i++)
		if (gk_pattern_parse((const uint8_t *)allow->v[i],
		    strlen(allow->v[i]), &pat) == GK_PAT_OK &&
		    pat.path[0] != '\0')
			return true;
	return false;
}

int
spawn_creds_plan(const struct spawn_opts *o, struct spawn_plan *p,
    char *err, size_t errlen)
{
	static struct spawn_strv env;
	static struct spawn_trust trust;
	size_t i;

	if (o->ncreds > 0 || has_rules(&o->allow)) {
		for (i = 0; i < o->ncreds; i++)
			spawn_strv_pushf(&env, "%s=%s", o->creds[i].name,
			    o->creds[i].placeholder);
		if (env.nomem)
			return gk_seterr(err, errlen, "out of memory");
		p->credenv = env.v;
		p->ncredenv = env.n;
		if (trust_plan(o, p, &trust, err, errlen) == -1)
			return -1;
	}
	filecreds_plan(o, p, &trust);
	return 0;
}

int
spawn_filecreds_send(int sock, struct spawn_cage *cage,
    struct spawn_filecreds *fc, const char *path, char *err, size_t errlen)
{
	size_t n;

	if (fc == NULL || fc->n == 0 || spawn_ctl_credentials(sock, cage,
	    fc->c, fc->n, path, err, errlen) == 0)
		return 0;
	n = strlen(err);
	if (n < errlen)
		snprintf(err + n, errlen - n, " (a secret of a settings file "
		    "bound to its host; --file-credentials off leaves them "
		    "unbound)");
	return -1;
}

int
spawn_trust_fds(struct spawn_trust *t, const char *ca, struct spawn_fds *f,
    char *err, size_t errlen)
{
	size_t i, n;
	char *b;
	int fd;

	if (ca[0] == '\0')
		return gk_seterr(err, errlen, "gatekeeperd gave no CA for the "
		    "cage's credentials");
	for (i = 0; i < t->n; i++) {
		b = spawn_trust_bundle(t->file[i].certs, t->file[i].len, ca,
		    &n);
		fd = b != NULL ? spawn_memfd_data("gk-run-trust", b, n) : -1;
		free(b);
		if (fd == -1)
			return gk_seterr(err, errlen, "cannot pass %s to the "
			    "sandbox (memfd_create: %s)", t->file[i].path,
			    strerror(errno));
		if (spawn_fds_add(f, fd, NULL, 0, false) == -1) {
			close(fd);
			return gk_seterr(err, errlen, "too many files for the "
			    "sandbox (at most %d)", SPAWN_DATA_FDS_MAX);
		}
		t->file[i].fd = fd;
	}
	return 0;
}

int
spawn_trust_dry_fds(struct spawn_trust *t, struct spawn_fds *f, int *next)
{
	size_t i;

	for (i = 0; t != NULL && i < t->n; i++) {
		if (spawn_fds_add(f, *next, (const uint8_t *)t->file[i].certs,
		    t->file[i].len, false) == -1)
			return -1;
		t->file[i].fd = (*next)++;
	}
	return 0;
}
