/*
 * Which environment variables stay outside the sandbox unless the user
 * passes them again with --env.
 *
 * The rule: a variable is dropped when it makes a program load code or
 * configuration that is not named on its command line (the dynamic
 * linker's LD_*, shell start-up files, interpreter start-up options and
 * module paths, git's config-by-environment and helper commands), when it
 * points at an agent on the host (ssh-agent, gpg-agent, the session bus),
 * or when glibc itself ignores it for setuid programs (its "unsecvars":
 * GCONV_PATH, LOCPATH, RES_OPTIONS, ...). With --fs sandbox TMPDIR goes
 * too: the sandbox has its own fresh /tmp, and a TMPDIR elsewhere would
 * be read-only or hidden there. Plain settings (PATH, HOME, LANG, TERM,
 * EDITOR, proxies) pass.
 *
 * Credentials stay out too (spawn_env_scrub), unless --pass-env names
 * them: an allowed host is an open channel for whatever the sandbox
 * holds. Credential-shaped names end in _TOKEN, _SECRET, _KEY,
 * _PASSWORD, _PASSWD, _PASS, _PWD, _CREDENTIAL(S), _AUTH or _APIKEY (any
 * case), and a list of well-known ones that do not (PGPASSWORD,
 * AWS_ACCESS_KEY_ID, ...). A URL's password in any other variable
 * (DATABASE_URL=postgres://u:SECRET@db/x, PIP_INDEX_URL) is replaced by
 * a placeholder of its shape, the rest of the URL kept. A --credential's
 * variable is gone from gk-run's environment before any of this
 * (spawn_credio.c); the sandbox gets its placeholder with --setenv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spawner/spawn.h"
#include "spawner/spawn_scrub.h"

static const char *const dropped_names[] = {
	/* shells */
	"BASH_ENV", "ENV", "PROMPT_COMMAND", "ZDOTDIR",
	/* interpreters */
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE",
	"PYTHONBREAKPOINT", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT",
	"PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "LUA_PATH",
	"LUA_CPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS",
	/* git runs these or reads config from them */
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_SSH", "GIT_SSH_COMMAND",
	"GIT_PROXY_COMMAND", "GIT_ASKPASS", "GIT_EXEC_PATH",
	"GIT_EXTERNAL_DIFF", "GIT_TEMPLATE_DIR", "SSH_ASKPASS",
	/* agents on the host */
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
	/* glibc's unsecvars (LD_* are covered by the prefix) */
	"GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
	"MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF",
	"RES_OPTIONS", "TZDIR",
	NULL,
};

static const char *const dropped_prefixes[] = {
	"LD_",			/* LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT... */
	"BASH_FUNC_",		/* exported shell functions */
	"GIT_CONFIG_KEY_",	/* git -c through the environment */
	"GIT_CONFIG_VALUE_",
	"LUA_INIT",		/* LUA_INIT, LUA_INIT_5_4 */
	NULL,
};

bool
spawn_env_dropped(const char *name, size_t len, bool fs_sandbox)
{
	size_t i, n;

	for (i = 0; dropped_prefixes[i] != NULL; i++) {
		n = strlen(dropped_prefixes[i]);
		if (len >= n && memcmp(name, dropped_prefixes[i], n) == 0)
			return true;
	}
	for (i = 0; dropped_names[i] != NULL; i++) {
		if (strlen(dropped_names[i]) == len &&
		    memcmp(name, dropped_names[i], len) == 0)
			return true;
	}
	return fs_sandbox && len == 6 && memcmp(name, "TMPDIR", 6) == 0;
}

bool
spawn_env_valid(const char *kv)
{
	size_t i;

	if (!((kv[0] >= 'A' && kv[0] <= 'Z') || (kv[0] >= 'a' &&
	    kv[0] <= 'z') || kv[0] == '_'))
		return false;
	for (i = 1; kv[i] != '\0' && kv[i] != '='; i++) {
		if (!((kv[i] >= 'A' && kv[i] <= 'Z') || (kv[i] >= 'a' &&
		    kv[i] <= 'z') || (kv[i] >= '0' && kv[i] <= '9') ||
		    kv[i] == '_'))
			return false;
	}
	return kv[i] == '=';
}

static const char *const secret_suffixes[] = {
	"_TOKEN", "_SECRET", "_KEY", "_PASSWORD", "_PASSWD", "_PASS", "_PWD",
	"_CREDENTIAL", "_CREDENTIALS", "_AUTH", "_APIKEY", "_SECRET_KEY",
	NULL,
};

static const char *const secret_names[] = {
	"PGPASSWORD", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "DOCKER_AUTH_CONFIG",
	"GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET",
	"ARM_CLIENT_SECRET", "ARM_ACCESS_KEY", "HF_TOKEN", "GITHUB_PAT",
	"GH_ENTERPRISE_TOKEN", "GITLAB_PAT", "CI_JOB_JWT",
	"SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL", "NPM_CONFIG__AUTH",
	"NPM_CONFIG__AUTHTOKEN", "VAULT_TOKEN", "CONSUL_HTTP_TOKEN",
	"REDISCLI_AUTH", "MYSQL_PWD",
	NULL,
};

bool
spawn_env_secret(const char *name, size_t len)
{
	size_t i, n;

	for (i = 0; secret_names[i] != NULL; i++)
		if (strlen(secret_names[i]) == len &&
		    strncasecmp(name, secret_names[i], len) == 0)
			return true;
	for (i = 0; secret_suffixes[i] != NULL; i++) {
		n = strlen(secret_suffixes[i]);
		if (len > n && strncasecmp(name + len - n, secret_suffixes[i],
		    n) == 0)
			return true;
	}
	return false;
}

/* Is name[0..len) one of pass[]? */
static bool
passed(const char *name, size_t len, const char *const *pass, size_t npass)
{
	size_t i;

	for (i = 0; i < npass; i++)
		if (strlen(pass[i]) == len && memcmp(pass[i], name, len) == 0)
			return true;
	return false;
}

/* Add name[0, len) to a space-separated note; " ..." when out of room. */
static void
note_add(char *note, size_t notelen, const char *name, size_t len)
{
	size_t used = strnlen(note, notelen);
	int w;

	if (used + 4 >= notelen)	/* full already */
		return;
	w = snprintf(note + used, notelen - used, "%s%.*s",
	    used > 0 ? " " : "", (int)len, name);
	if (w < 0 || (size_t)w >= notelen - used)
		snprintf(note + (used + 5 > notelen ? notelen - 5 : used), 5,
		    " ...");
}

/* kv with the passwords of the URLs in its value replaced (a new
 * string), or NULL when it has none (or no memory: then kept out). */
static char *
url_scrubbed(const char *kv, size_t klen, bool *nomem)
{
	char *copy;
	int n;

	*nomem = false;
	if (strstr(kv + klen, "://") == NULL)
		return NULL;
	if ((copy = strdup(kv)) == NULL) {
		*nomem = true;
		return NULL;
	}
	n = spawn_scrub(SPAWN_SCRUB_GITCRED, copy + klen + 1,
	    strlen(copy + klen + 1));
	if (n > 0)
		return copy;
	free(copy);
	return NULL;
}

char **
spawn_env_scrub(char *const *envp, const char *const *pass, size_t npass,
    struct spawn_env_notes *notes)
{
	size_t i, n = 0, len;
	const char *eq;
	char **out, *u;
	bool nomem;

	memset(notes, 0, sizeof(*notes));
	for (i = 0; envp[i] != NULL; i++)
		;
	if ((out = calloc(i + 1, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; envp[i] != NULL; i++) {
		if ((eq = strchr(envp[i], '=')) == NULL)
			continue;
		len = (size_t)(eq - envp[i]);
		if (passed(envp[i], len, pass, npass))
			out[n++] = envp[i];
		else if (spawn_env_secret(envp[i], len))
			note_add(notes->out, sizeof(notes->out), envp[i], len);
		else if ((u = url_scrubbed(envp[i], len, &nomem)) != NULL) {
			out[n++] = u;
			note_add(notes->urls, sizeof(notes->urls), envp[i], len);
		} else if (nomem)
			note_add(notes->out, sizeof(notes->out), envp[i], len);
		else
			out[n++] = envp[i];
	}
	return out;
}

char **
spawn_env_bwrap(char *const *envp, bool fs_sandbox)
{
	char **env, *eq;
	size_t i, n = 0;

	for (i = 0; envp[i] != NULL; i++)
		;
	if ((env = calloc(i + 1, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; envp[i] != NULL; i++) {
		eq = strchr(envp[i], '=');
		if (eq == NULL || !spawn_env_dropped(envp[i],
		    (size_t)(eq - envp[i]), fs_sandbox))
			env[n++] = envp[i];
	}
	return env;
}
