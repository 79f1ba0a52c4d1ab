/*
 * The macOS backend's profile: SBPL text for `sandbox-exec -p PROFILE`.
 * Portable C (no Linux headers): it builds and is golden-tested on Linux.
 *
 * The profile allows by default and then denies, in this order (SBPL:
 * the last matching rule wins):
 *   - network (--net gated|none): everything, then, gated, the cage's
 *     gatekeeperd listeners on localhost again (the cage is named by the
 *     SOCKS5 user name: ALL_PROXY=socks5h://TOKEN@127.0.0.1:1080); and
 *     the system daemons that would look names up or fetch URLs for the
 *     program (mDNSResponder, LaunchServices, nsurlsessiond);
 *   - filesystem: the plan's mounts in mount order (parents first, so
 *     the most specific path wins, as on Linux): a read-only path denies
 *     writes below it, a writable one allows them again, a hidden one
 *     denies reads and writes. /tmp becomes the macOS temporary
 *     directories (/private/tmp, /private/var/folders); /dev allows
 *     writes to the terminal and null devices only; /proc has no macOS
 *     counterpart.
 * Strings are SBPL (TinyScheme) literals: '\' and '"' are escaped with a
 * backslash; control characters are refused rather than escaped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"

struct sbuf {
	char	*s;
	size_t	 n;
	size_t	 cap;
	bool	 nomem;
};

static void
sb_puts(struct sbuf *b, const char *s)
{
	size_t n = strlen(s), cap;
	char *ns;

	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		cap = b->cap == 0 ? 1024 : b->cap;
		while (cap < b->n + n + 1)
			cap *= 2;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->nomem = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n + 1);
	b->n += n;
}

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

char *
spawn_sbpl_string(const char *s)
{
	size_t i, j = 0, n = strlen(s);
	char *out;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return NULL;
	if ((out = malloc(2 * n + 3)) == NULL)
		return NULL;
	out[j++] = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' || s[i] == '"')
			out[j++] = '\\';
		out[j++] = s[i];
	}
	out[j++] = '"';
	out[j] = '\0';
	return out;
}

/* "(OP (subpath "P"))" with P quoted; -1 if P cannot be expressed. */
static int
rule(struct sbuf *b, const char *action, const char *filter, const char *p)
{
	char *q;

	if ((q = spawn_sbpl_string(p)) == NULL)
		return -1;
	sb_puts(b, action);
	sb_puts(b, " (");
	sb_puts(b, filter);
	sb_puts(b, " ");
	sb_puts(b, q);
	sb_puts(b, "))\n");
	free(q);
	return 0;
}

/* The port of "host:port" / "[v6]:port", or NULL. */
static const char *
endpoint_port(const char *ep)
{
	const char *c = strrchr(ep, ':');

	return c != NULL && c[1] != '\0' ? c + 1 : NULL;
}

static void
net_rules(struct sbuf *b, const struct spawn_plan *p)
{
	const char *ports[2];
	char line[128];
	size_t i;

	if (p->net == SPAWN_NET_HOST) {
		sb_puts(b, "; network: not isolated (--net host)\n");
		return;
	}
	sb_puts(b, "; network: none");
	if (p->net == SPAWN_NET_GATED)
		sb_puts(b, " but gatekeeperd's listeners on localhost");
	sb_puts(b, "\n(deny network*)\n");
	if (p->net == SPAWN_NET_GATED && p->cage != NULL) {
		ports[0] = endpoint_port(p->cage->socks);
		ports[1] = endpoint_port(p->cage->http);
		for (i = 0; i < 2; i++) {
			if (ports[i] == NULL || (i == 1 && ports[0] != NULL &&
			    strcmp(ports[0], ports[1]) == 0))
				continue;
			snprintf(line, sizeof(line), "(allow network-outbound "
			    "(remote ip \"localhost:%.8s\"))\n", ports[i]);
			sb_puts(b, line);
		}
	}
	sb_puts(b, "; no name lookups or downloads by system daemons\n"
	    "(deny mach-lookup\n"
	    "    (global-name \"com.apple.dnssd.service\")\n"
	    "    (global-name \"com.apple.coreservices.launchservicesd\")\n"
	    "    (global-name \"com.apple.nsurlsessiond\"))\n");
}

static int
mount_rule(struct sbuf *b, const struct spawn_mount *m)
{
	switch (m->kind) {
	case SPAWN_MNT_RO:
		return rule(b, "(deny file-write*", "subpath", m->path);
	case SPAWN_MNT_RW:
		return rule(b, "(allow file-write*", "subpath", m->path);
	case SPAWN_MNT_HIDE_DIR:
	case SPAWN_MNT_HIDE_FILE:
		return rule(b, "(deny file-read* file-write*", "subpath",
		    m->path);
	case SPAWN_MNT_TMPFS:
		if (strcmp(m->path, "/tmp") == 0) {
			sb_puts(b, "(allow file-write* (subpath \"/private/"
			    "tmp\") (subpath \"/private/var/folders\"))\n");
			return 0;
		}
		return rule(b, "(allow file-write*", "subpath", m->path);
	case SPAWN_MNT_DEV:
		sb_puts(b, "(allow file-write* (literal \"/dev/null\") "
		    "(literal \"/dev/zero\")\n    (literal \"/dev/tty\") "
		    "(literal \"/dev/dtracehelper\")\n"
		    "    (regex #\"^/dev/fd/\") (regex #\"^/dev/ttys[0-9]+$\"))"
		    "\n");
		return 0;
	case SPAWN_MNT_DEV_BIND:
	case SPAWN_MNT_PROC:
		return 0;
	}
	return 0;
}

/* A path for a message: control characters as '?', bounded. */
static void
shown(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' :
		    s[i];
	out[i] = '\0';
}

char *
spawn_sbpl_build(const struct spawn_plan *p, char *err, size_t errlen)
{
	struct sbuf b = { 0 };
	char show[256];
	size_t i;

	sb_puts(&b, "(version 1)\n"
	    "; gk-run profile for sandbox-exec: allow, then deny; the last "
	    "matching rule wins\n(allow default)\n");
	net_rules(&b, p);
	sb_puts(&b, "; filesystem, parents first: the most specific path "
	    "wins\n");
	for (i = 0; i < p->nmounts; i++) {
		if (mount_rule(&b, &p->mounts[i]) == -1) {
			shown(p->mounts[i].path, show, sizeof(show));
			seterr(err, errlen, "%s: a path with a control "
			    "character cannot be written into an SBPL "
			    "profile safely; rename it or leave it out",
			    show);
			free(b.s);
			return NULL;
		}
	}
	if (b.nomem) {
		seterr(err, errlen, "out of memory");
		free(b.s);
		return NULL;
	}
	return b.s;
}
