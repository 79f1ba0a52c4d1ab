/*
 * The bwrap command line for a plan, and its shell rendering for
 * --dry-run. Pure: the plan carries every path (resolved) and every fd
 * number (real ones for a run, placeholders for --dry-run).
 *
 *   bwrap --unshare-user --unshare-ipc --unshare-pid --unshare-uts
 *     --unshare-cgroup [--unshare-net: none, unless gk-run's child made
 *     the namespace] --die-with-parent --new-session
 *     --cap-drop ALL  <mounts, parents first (a file gk-run keeps
 *     read-only: --ro-bind-fd FD PATH); after --proc /proc,
 *     --ro-bind /proc/sys /proc/sys>  [--ro-bind-data FD
 *     /etc/resolv.conf]  [--perms 0444 --ro-bind-data FD TRUST-FILE...]
 *     [--remount-ro HIDDEN-DIR...]  --chdir CWD  [--unsetenv K...]
 *     [--setenv K V...: proxies, credentials' placeholders, trust
 *     bundles, then --env's] [--seccomp FD]
 *     [--json-status-fd FD] -- COMMAND [ARG...]
 * Where gk-run's child made the view (spawn_view.c), its mounts are
 * --bind / / (the view, whole), --dev-bind /dev /dev (its /dev, devices
 * usable), --proc /proc and its --ro-bind /proc/sys, no --remount-ro.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

static void
push2(struct spawn_strv *a, const char *opt, const char *v)
{
	spawn_strv_push(a, opt);
	spawn_strv_push(a, v);
}

static void
push3(struct spawn_strv *a, const char *opt, const char *v1, const char *v2)
{
	spawn_strv_push(a, opt);
	spawn_strv_push(a, v1);
	spawn_strv_push(a, v2);
}

static void
push_fd(struct spawn_strv *a, const char *opt, int fd, const char *dest)
{
	spawn_strv_push(a, opt);
	spawn_strv_pushf(a, "%d", fd);
	if (dest != NULL)
		spawn_strv_push(a, dest);
}

static void
mount_args(struct spawn_strv *a, const struct spawn_mount *m)
{
	switch (m->kind) {
	case SPAWN_MNT_RO:
		if (m->fd != -1)
			push_fd(a, "--ro-bind-fd", m->fd, m->path);
		else
			push3(a, "--ro-bind", m->path, m->path);
		break;
	case SPAWN_MNT_RW:
		push3(a, "--bind", m->path, m->path);
		break;
	case SPAWN_MNT_HIDE_DIR:
	case SPAWN_MNT_TMPFS:
		push2(a, "--tmpfs", m->path);
		break;
	case SPAWN_MNT_HIDE_FILE:
	case SPAWN_MNT_DATA:
		push_fd(a, "--ro-bind-data", m->fd, m->path);
		break;
	case SPAWN_MNT_DEV:
		push2(a, "--dev", m->path);
		break;
	case SPAWN_MNT_BIND:
		push3(a, "--bind", m->src, m->path);
		break;
	case SPAWN_MNT_SYNTH:
		push2(a, "--tmpfs", m->path);
		break;
	case SPAWN_MNT_SYMLINK:
		push3(a, "--symlink", m->src, m->path);
		break;
	case SPAWN_MNT_DEV_BIND:
		push3(a, "--dev-bind", m->path, m->path);
		break;
	case SPAWN_MNT_PROC:
		/*
		 * /proc/sys read-only: uid 0 inside owns the namespaces'
		 * sysctls (net.*, kernel.hostname, ...) and may write them
		 * with no capability at all; bwrap covers /proc/sys only
		 * when the directory itself is writable, which it is not.
		 */
		push2(a, "--proc", m->path);
		spawn_strv_push(a, "--ro-bind");
		spawn_strv_pushf(a, "%s/sys", m->path);
		spawn_strv_pushf(a, "%s/sys", m->path);
		break;
	}
}

static bool
env_given(const struct spawn_plan *p, const char *kv, size_t klen)
{
	size_t i;

	for (i = 0; i < p->nenvset; i++)
		if (strncmp(p->envset[i], kv, klen) == 0 &&
		    p->envset[i][klen] == '=')
			return true;
	return false;
}

static bool
env_has(char *const *envp, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return true;
	return false;
}

static void
proxy_args(struct spawn_strv *a, const struct spawn_cage *c)
{
	static const char *const http_vars[] = {
		"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", NULL,
	};
	char v[SPAWN_ENDPOINT_MAX + 16];
	size_t i;

	snprintf(v, sizeof(v), "http://%s", c->http);
	for (i = 0; http_vars[i] != NULL; i++)
		push3(a, "--setenv", http_vars[i], v);
	snprintf(v, sizeof(v), "socks5h://%s", c->socks);
	push3(a, "--setenv", "ALL_PROXY", v);
	push3(a, "--setenv", "all_proxy", v);
	push3(a, "--setenv", "NO_PROXY", "localhost,127.0.0.1,::1");
	push3(a, "--setenv", "no_proxy", "localhost,127.0.0.1,::1");
}

/*
 * A run without a network: package managers that retry a failed fetch
 * (npm ten and sixty seconds apart, pip five times) are told not to, so
 * that they fail at once, as the lookup does; unless the environment or
 * --env says otherwise.
 */
static void
offline_args(struct spawn_strv *a, const struct spawn_plan *p)
{
	static const char *const retries[] = { "npm_config_fetch_retries",
	    "PIP_RETRIES", NULL };
	size_t i;

	for (i = 0; retries[i] != NULL; i++)
		if (!env_given(p, retries[i], strlen(retries[i])) &&
		    !env_has(p->envp, retries[i]))
			push3(a, "--setenv", retries[i], "0");
}

/* --setenv KEY VAL for "KEY=VAL". */
static void
setenv_kv(struct spawn_strv *a, const char *kv)
{
	const char *eq = strchr(kv, '=');

	spawn_strv_push(a, "--setenv");
	spawn_strv_pushn(a, kv, (size_t)(eq - kv));
	spawn_strv_push(a, eq + 1);
}

static void
env_args(struct spawn_strv *a, const struct spawn_plan *p)
{
	const char *eq;
	size_t i, klen;

	for (i = 0; p->envp != NULL && p->envp[i] != NULL; i++) {
		if ((eq = strchr(p->envp[i], '=')) == NULL)
			continue;
		klen = (size_t)(eq - p->envp[i]);
		if (spawn_env_dropped(p->envp[i], klen,
		    p->fs == SPAWN_FS_SANDBOX) &&
		    !env_given(p, p->envp[i], klen)) {
			spawn_strv_push(a, "--unsetenv");
			spawn_strv_pushn(a, p->envp[i], klen);
		}
	}
	if (p->net == SPAWN_NET_GATED && p->cage != NULL)
		proxy_args(a, p->cage);
	if (p->net == SPAWN_NET_NONE)
		offline_args(a, p);
	if (p->apt_config != NULL && !env_given(p, "APT_CONFIG", 10) &&
	    !env_has(p->envp, "APT_CONFIG"))
		push3(a, "--setenv", "APT_CONFIG", p->apt_config);
	/* gk-run's own settings, before --env's (which win) */
	for (i = 0; i < p->ncredenv; i++)
		setenv_kv(a, p->credenv[i]);
	for (i = 0; p->trust != NULL && i < p->trust->env.n; i++)
		setenv_kv(a, p->trust->env.v[i]);
	for (i = 0; i < p->nenvset; i++)
		setenv_kv(a, p->envset[i]);
}

int
spawn_bwrap_build(const struct spawn_plan *p, struct spawn_strv *a)
{
	size_t i;
	int k;

	spawn_strv_push(a, "bwrap");
	spawn_strv_push(a, "--unshare-user");
	spawn_strv_push(a, "--unshare-ipc");
	spawn_strv_push(a, "--unshare-pid");
	spawn_strv_push(a, "--unshare-uts");
	spawn_strv_push(a, "--unshare-cgroup");
	if (p->net == SPAWN_NET_NONE && !p->own_netns)
		spawn_strv_push(a, "--unshare-net");
	spawn_strv_push(a, "--die-with-parent");
	spawn_strv_push(a, "--new-session");
	push2(a, "--cap-drop", "ALL");
	for (i = 0; i < p->nmounts; i++)
		if (!p->view)
			mount_args(a, &p->mounts[i]);
		else if (i == 0)
			push3(a, "--bind", "/", "/");	/* the view, whole */
		else if (p->mounts[i].kind == SPAWN_MNT_DEV)
			push3(a, "--dev-bind", p->mounts[i].path,
			    p->mounts[i].path);		/* the view's */
		else if (p->mounts[i].kind == SPAWN_MNT_PROC)
			mount_args(a, &p->mounts[i]);
	if (p->net != SPAWN_NET_HOST && p->resolv_fd != -1)
		push_fd(a, "--ro-bind-data", p->resolv_fd, "/etc/resolv.conf");
	/* readable by every user inside, as a system bundle is */
	for (i = 0; p->trust != NULL && i < p->trust->n; i++) {
		if (p->trust->file[i].fd == -1)
			continue;
		push2(a, "--perms", "0444");
		push_fd(a, "--ro-bind-data", p->trust->file[i].fd,
		    p->trust->file[i].path);
	}
	for (i = 0; !p->view && i < p->nmounts; i++)
		if (p->mounts[i].kind == SPAWN_MNT_HIDE_DIR)
			push2(a, "--remount-ro", p->mounts[i].path);
	push2(a, "--chdir", p->cwd);
	env_args(a, p);
	if (p->seccomp_fd != -1)
		push_fd(a, "--seccomp", p->seccomp_fd, NULL);
	if (p->status_fd != -1)
		push_fd(a, "--json-status-fd", p->status_fd, NULL);
	if (p->block_fd > 0)
		push_fd(a, "--block-fd", p->block_fd, NULL);
	spawn_strv_push(a, "--");
	for (k = 0; k < p->ncmd; k++)
		spawn_strv_push(a, p->cmd[k]);
	return a->nomem ? -1 : 0;
}

/* ---- shell rendering --------------------------------------------------- */

static bool
shell_safe(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_@%+=:,./-", *s) !=
		    NULL))
			return false;
	}
	return true;
}

static void
sb_quote(struct spawn_buf *b, const char *s)
{
	const char *q;

	if (shell_safe(s)) {
		spawn_buf_puts(b, s);
		return;
	}
	spawn_buf_putn(b, "'", 1);
	while ((q = strchr(s, '\'')) != NULL) {
		spawn_buf_putn(b, s, (size_t)(q - s));
		spawn_buf_puts(b, "'\\''");
		s = q + 1;
	}
	spawn_buf_puts(b, s);
	spawn_buf_putn(b, "'", 1);
}

int
spawn_shell_quote(const char *s, struct spawn_strv *out)
{
	struct spawn_buf b = { 0 };
	int r;

	sb_quote(&b, s);
	if (b.nomem) {
		free(b.s);
		out->nomem = true;
		return -1;
	}
	r = spawn_strv_push(out, b.s);
	free(b.s);
	return r;
}

/* Bytes as a printf(1) format inside single quotes. */
static void
sb_printf_data(struct spawn_buf *b, const uint8_t *d, size_t len)
{
	char esc[8];
	size_t i;

	spawn_buf_puts(b, "printf '");
	for (i = 0; i < len; i++) {
		if (d[i] == '\n')
			spawn_buf_puts(b, "\\n");
		else if (d[i] == '%')
			spawn_buf_puts(b, "%%");
		else if (d[i] >= 0x20 && d[i] < 0x7f && d[i] != '\\' &&
		    d[i] != '\'' && !(i == 0 && d[i] == '-'))
			spawn_buf_putn(b, (const char *)&d[i], 1);
		else {
			snprintf(esc, sizeof(esc), "\\%03o", d[i]);
			spawn_buf_puts(b, esc);
		}
	}
	spawn_buf_puts(b, "'");
}

char *
spawn_shell_render(const struct spawn_strv *a, const struct spawn_fdsrc *fds,
    size_t nfds)
{
	struct spawn_buf b = { 0 };
	char num[32];
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (i > 0)
			spawn_buf_putn(&b, " ", 1);
		sb_quote(&b, a->v[i]);
	}
	for (i = 0; i < nfds; i++) {
		snprintf(num, sizeof(num), " %d", fds[i].fd);
		spawn_buf_puts(&b, num);
		if (fds[i].out)
			spawn_buf_puts(&b, ">/dev/null");
		else if (fds[i].path != NULL) {
			spawn_buf_putn(&b, "<", 1);
			sb_quote(&b, fds[i].path);
		}
		else if (fds[i].data == NULL || fds[i].len == 0)
			spawn_buf_puts(&b, "</dev/null");
		else {
			spawn_buf_puts(&b, "< <(");
			sb_printf_data(&b, fds[i].data, fds[i].len);
			spawn_buf_puts(&b, ")");
		}
	}
	if (b.nomem || b.s == NULL) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
