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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"

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
rule(struct spawn_buf *b, const char *action, const char *filter, const char *p)
{
	char *q;

	if ((q = spawn_sbpl_string(p)) == NULL)
		return -1;
	spawn_buf_puts(b, action);
	spawn_buf_puts(b, " (");
	spawn_buf_puts(b, filter);
	spawn_buf_puts(b, " ");
	spawn_buf_puts(b, q);
	spawn_buf_puts(b, "))\n");
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
net_rules(struct spawn_buf *b, const struct spawn_plan *p)
{
	const char *ports[2];
	char line[128];
	size_t i;

	if (p->net == SPAWN_NET_HOST) {
		spawn_buf_puts(b, "; network: not isolated (--net host)\n");
		return;
	}
	spawn_buf_puts(b, "; network: none");
	if (p->net == SPAWN_NET_GATED)
		spawn_buf_puts(b, " but gatekeeperd's listeners on localhost");
	spawn_buf_puts(b, "\n(deny network*)\n");
	if (p->net == SPAWN_NET_GATED && p->cage != NULL) {
		ports[0] = endpoint_port(p->cage->socks);
		ports[1] = endpoint_port(p->cage->http);
		for (i = 0; i < 2; i++) {
			if (ports[i] == NULL || (i == 1 && ports[0] != NULL &&
			    strcmp(ports[0], ports[1]) == 0))
				continue;
			snprintf(line, sizeof(line), "(allow network-outbound "
			    "(remote ip \"localhost:%.8s\"))\n", ports[i]);
			spawn_buf_puts(b, line);
		}
	}
	spawn_buf_puts(b, "; no name lookups or downloads by system daemons\n"
	    "(deny mach-lookup\n"
	    "    (global-name \"com.apple.dnssd.service\")\n"
	    "    (global-name \"com.apple.coreservices.launchservicesd\")\n"
	    "    (global-name \"com.apple.nsurlsessiond\"))\n");
}

static int
mount_rule(struct spawn_buf *b, const struct spawn_mount *m)
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
			spawn_buf_puts(b, "(allow file-write* (subpath "
			    "\"/private/tmp\") (subpath "
			    "\"/private/var/folders\"))\n");
			return 0;
		}
		return rule(b, "(allow file-write*", "subpath", m->path);
	case SPAWN_MNT_DEV:
		spawn_buf_puts(b, "(allow file-write* (literal \"/dev/null\") "
		    "(literal \"/dev/zero\")\n    (literal \"/dev/tty\") "
		    "(literal \"/dev/dtracehelper\")\n"
		    "    (regex #\"^/dev/fd/\") (regex #\"^/dev/ttys[0-9]+$\"))"
		    "\n");
		return 0;
	case SPAWN_MNT_BIND:	/* not planned for macOS: no bind mounts */
		return rule(b, "(allow file-write*", "subpath", m->path);
	case SPAWN_MNT_DEV_BIND:
	case SPAWN_MNT_PROC:
	case SPAWN_MNT_SYNTH:
	case SPAWN_MNT_SYMLINK:
	case SPAWN_MNT_DATA:
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
	struct spawn_buf b = { 0 };
	char show[256];
	size_t i;

	/* sandbox-exec has no way to show the cage's CA to the program */
	if (p->ncredenv > 0 || p->trust != NULL) {
		gk_seterr(err, errlen, "--credential is not supported on "
		    "macOS: sandbox-exec cannot show the cage's CA to the "
		    "sandbox");
		return NULL;
	}
	spawn_buf_puts(&b, "(version 1)\n"
	    "; gk-run profile for sandbox-exec: allow, then deny; the last "
	    "matching rule wins\n(allow default)\n");
	net_rules(&b, p);
	spawn_buf_puts(&b, "; filesystem, parents first: the most specific "
	    "path wins\n");
	for (i = 0; i < p->nmounts; i++) {
		if (mount_rule(&b, &p->mounts[i]) == -1) {
			shown(p->mounts[i].path, show, sizeof(show));
			gk_seterr(err, errlen, "%s: a path with a control "
			    "character cannot be written into an SBPL "
			    "profile safely; rename it or leave it out",
			    show);
			free(b.s);
			return NULL;
		}
	}
	if (b.nomem) {
		gk_seterr(err, errlen, "out of memory");
		free(b.s);
		return NULL;
	}
	return b.s;
}
