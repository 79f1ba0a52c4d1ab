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
 */
#include <string.h>

#include "spawner/spawn.h"

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
