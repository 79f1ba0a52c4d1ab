/*
 * spawn_filecred: the secrets of the settings files gk-run shows scrubbed
 * (spawn_scrubview.c), bound to the hosts their files name (spawn_cred.h,
 * "settings files"). Each becomes a credential as --credential's do: a
 * random placeholder of its shape (spawn_cred_placeholder) written in
 * the file's view instead of the fixed fill, and its value sent to
 * gatekeeperd after cage.create (spawn_ctl_credentials, the same path).
 *
 * Only hosts the run's allowlist covers are bound: a credential for a
 * host the cage cannot reach would be pointless, and would widen the
 * names its CA may sign for. Pure but for the random bytes (fc->rnd) and
 * the lazy PSL load of the pattern parser; nothing here logs or puts a
 * byte of a value into a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"
#include "spawner/spawn_scrub.h"

void
spawn_filecreds_init(struct spawn_filecreds *fc,
    const struct spawn_strv *allow, const struct spawn_cred *creds,
    size_t ncreds, spawn_rand_fn rnd, void *arg)
{
	memset(fc, 0, sizeof(*fc));
	fc->allow = allow;
	fc->creds = creds;
	fc->ncreds = ncreds;
	fc->rnd = rnd;
	fc->rnd_arg = arg;
}

/* Can gatekeeperd carry v[0, n) (spawn_cred_value_check's rule)? */
static bool
value_ok(const char *v, size_t n)
{
	size_t i;

	if (n < SPAWN_CRED_VALUE_MIN || n > SPAWN_CRED_VALUE_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return false;
	return true;
}

static bool
name_taken(const struct spawn_filecreds *fc, const char *name)
{
	size_t i;

	for (i = 0; i < fc->ncreds; i++)
		if (strcmp(fc->creds[i].name, name) == 0)
			return true;
	for (i = 0; i < fc->n; i++)
		if (strcmp(fc->c[i].name, name) == 0)
			return true;
	return false;
}

/* KIND_N, the first N no credential has (at most 2 * SPAWN_CRED_MAX
 * names are taken: the loop ends). */
static void
cred_name(const struct spawn_filecreds *fc, const char *kind, char *out,
    size_t len)
{
	unsigned int k;

	for (k = 1;; k++) {
		snprintf(out, len, "%s_%u", kind, k);
		if (!name_taken(fc, out))
			return;
	}
}

/* Does the run's allowlist cover host on port? 1, 0, or -1: no memory. */
static int
covered(struct spawn_filecreds *fc, const char *host, uint16_t port)
{
	char err[512];

	if (fc->al == NULL && (fc->al = gk_allowlist_new(
	    (const char *const *)fc->allow->v, fc->allow->n, err,
	    sizeof(err))) == NULL)
		return -1;
	return gk_allow_name(fc->al, host, strlen(host), port) ? 1 : 0;
}

/* One reported secret: 1 bound, 0 not (its fixed placeholder stays),
 * -1 out of memory. */
static int
bind_one(struct spawn_filecreds *fc, const char *kind, const char *orig,
    char *view, const struct spawn_scrub_bind *bd)
{
	struct spawn_cred *c = &fc->c[fc->n];
	size_t h;
	int r;

	if (fc->ncreds + fc->n >= SPAWN_CRED_MAX ||
	    !value_ok(orig + bd->off, bd->len))
		return 0;
	memset(c, 0, sizeof(*c));
	for (h = 0; h < bd->nhosts; h++)
		if ((r = covered(fc, bd->host[h], bd->port)) == -1 ||
		    (r == 1 && spawn_strv_push(&c->hosts, bd->host[h]) == -1))
			goto nomem;
	c->len = bd->len;
	if (c->hosts.n == 0) {
		spawn_cred_clear(c);
		return 0;
	}
	if ((c->value = malloc(c->len + 1)) == NULL ||
	    (c->placeholder = malloc(c->len + 1)) == NULL)
		goto nomem;
	memcpy(c->value, orig + bd->off, c->len);
	c->value[c->len] = '\0';
	if (spawn_cred_placeholder(c->value, c->len, c->placeholder, fc->rnd,
	    fc->rnd_arg) == -1) {
		spawn_cred_clear(c);	/* no random bytes: left unbound */
		return 0;
	}
	cred_name(fc, kind, c->name, sizeof(c->name));
	memcpy(view + bd->off, c->placeholder, c->len);
	fc->n++;
	return 1;
nomem:
	spawn_cred_clear(c);
	return -1;
}

/* Host j of credential i was named by one of credentials first..i? */
static bool
seen_before(const struct spawn_filecreds *fc, size_t first, size_t i,
    size_t j)
{
	const char *h = fc->c[i].hosts.v[j];
	size_t k, m;

	for (k = first; k <= i; k++)
		for (m = 0; m < (k < i ? fc->c[k].hosts.n : j); m++)
			if (strcmp(fc->c[k].hosts.v[m], h) == 0)
				return true;
	return false;
}

/* "FILE (HOST, HOST)": the hosts of credentials first.. on, once each. */
static int
note(struct spawn_filecreds *fc, const char *file, size_t first)
{
	struct spawn_buf b = { 0 };
	size_t i, j, count = 0;
	int r;

	spawn_buf_puts(&b, file);
	spawn_buf_puts(&b, " (");
	for (i = first; i < fc->n; i++)
		for (j = 0; j < fc->c[i].hosts.n; j++) {
			if (seen_before(fc, first, i, j))
				continue;
			if (count++ > 0)
				spawn_buf_puts(&b, ", ");
			spawn_buf_puts(&b, fc->c[i].hosts.v[j]);
		}
	spawn_buf_puts(&b, ")");
	r = b.nomem ? -1 : spawn_strv_push(&fc->notes, b.s);
	free(b.s);
	return r;
}

int
spawn_filecreds_bind(struct spawn_filecreds *fc, const char *file,
    const char *kind, const char *orig, char *view,
    const struct spawn_scrub_binds *b)
{
	size_t i, first = fc->n;

	for (i = 0; i < b->n; i++)
		if (bind_one(fc, kind, orig, view, &b->b[i]) == -1)
			return -1;
	return fc->n > first ? note(fc, file, first) : 0;
}

bool
spawn_filecreds_note(const struct spawn_filecreds *fc, char *buf,
    size_t len)
{
	size_t i, n = 0;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; i < fc->notes.n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i > 0 ?
		    ", " : "", fc->notes.v[i]);
	return fc->notes.n > 0;
}

void
spawn_filecreds_clear(struct spawn_filecreds *fc)
{
	size_t i;

	for (i = 0; i < fc->n; i++)
		spawn_cred_clear(&fc->c[i]);
	fc->n = 0;
	spawn_strv_clear(&fc->notes);
	gk_allowlist_free(fc->al);
	fc->al = NULL;
}
