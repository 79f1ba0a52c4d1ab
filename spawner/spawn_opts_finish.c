/*
 * spawn_opts_finish: gk-run's options checked together, once all are
 * parsed (spawn_opts_parse() reads them one by one), and their release.
 */
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_rlimits.h"
#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

/* --ask and what goes with it: gated, not learning, answered. */
static int
ask_finish(struct spawn_opts *o, char *err, size_t errlen)
{
	const char *alone = o->ask_timeout != 0 ? "--ask-timeout" :
	    o->ask_save != NULL ? "--ask-save" : o->decisions_fd != -1 ?
	    "--decisions-fd" : NULL;

	if (!o->ask && alone != NULL) {
		gk_seterr(err, errlen, "%s goes with --ask (ask before "
		    "denying); add --ask", alone);
		return -1;
	}
	if (!o->ask)
		return 0;
	if (o->net != SPAWN_NET_GATED) {
		gk_seterr(err, errlen, "--ask applies to gated runs (with "
		    "--allow or --net gated): gatekeeperd holds the connection "
		    "while gk-run asks; --net %s has no gatekeeperd",
		    spawn_net_name(o->net));
		return -1;
	}
	if (o->learn != NULL) {
		gk_seterr(err, errlen, "--ask and --learn exclude each other: "
		    "a learning cage reaches every public name without asking");
		return -1;
	}
	if (o->decisions_fd != -1 && o->events_fd == -1) {
		gk_seterr(err, errlen, "--decisions-fd needs --events-fd: the "
		    "supervisor reads the questions there");
		return -1;
	}
	if (o->ask_timeout == 0)
		o->ask_timeout = SPAWN_ASK_TIMEOUT_DEFAULT;
	return 0;
}

/* NAME is also given with --pass-env or --env? */
static const char *
cred_clash(const struct spawn_opts *o, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < o->npass_env; i++)
		if (strcmp(o->pass_env[i], name) == 0)
			return "--pass-env";
	for (i = 0; i < o->nenv; i++)
		if (strncmp(o->env[i], name, n) == 0 && o->env[i][n] == '=')
			return "--env";
	return NULL;
}

/* --credential: a gated Linux sandbox, NAME set by nothing else. */
static int
cred_finish(const struct spawn_opts *o, char *err, size_t errlen)
{
	const char *other;
	size_t i;

	if (o->ncreds == 0)
		return 0;
	if (o->platform == SPAWN_PLATFORM_MACOS)
		return gk_seterr(err, errlen, "--credential is not supported "
		    "on macOS (--platform macos): gk-run cannot show the "
		    "cage's CA to the sandbox there");
	if (o->net != SPAWN_NET_AUTO && o->net != SPAWN_NET_GATED)
		return gk_seterr(err, errlen, "--credential needs a gated "
		    "run: gatekeeperd holds the value; --net %s has no "
		    "gatekeeperd", spawn_net_name(o->net));
	if (o->fs == SPAWN_FS_HOST)
		return gk_seterr(err, errlen, "--credential needs --fs "
		    "sandbox: the cage's CA is shown in a fresh %s, and --fs "
		    "host has the host's /run (gk-run writes no file on the "
		    "host)",
		    SPAWN_TRUST_DIR);
	for (i = 0; i < o->ncreds; i++)
		if ((other = cred_clash(o, o->creds[i].name)) != NULL)
			return gk_seterr(err, errlen, "--credential %s and "
			    "%s %s: %s stays outside with --credential (a "
			    "placeholder inside) or goes in with %s; give one",
			    o->creds[i].name, other, o->creds[i].name,
			    o->creds[i].name, other);
	return 0;
}

int
spawn_opts_finish(struct spawn_opts *o, char *err, size_t errlen)
{
	bool gated;

	if (o->allow.nomem) {
		gk_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (o->cache_dir)
		return gk_seterr(err, errlen, "--cache-dir prints where the "
		    "tool caches are and runs nothing: drop the command");
	if (cred_finish(o, err, errlen) == -1)
		return -1;
	if (o->allow.n > GK_ALLOWLIST_MAX) {
		gk_seterr(err, errlen, "%zu patterns; at most %d are "
		    "allowed", o->allow.n, GK_ALLOWLIST_MAX);
		return -1;
	}
	gated = o->allow.n > 0 || o->nallow_files > 0 || o->npresets > 0 ||
	    o->learn != NULL;
	if (o->net == SPAWN_NET_AUTO)
		o->net = gated ? SPAWN_NET_GATED : SPAWN_NET_NONE;
	else if (gated && o->net != SPAWN_NET_GATED) {
		gk_seterr(err, errlen, "--net %s ignores the allowlist; "
		    "drop --net %s to run gated, or drop the --allow patterns",
		    spawn_net_name(o->net), spawn_net_name(o->net));
		return -1;
	}
	if (o->transparent != -1 && o->net != SPAWN_NET_GATED) {
		gk_seterr(err, errlen, "--transparent applies to gated runs "
		    "(with --allow); --net %s has no proxy to redirect to",
		    spawn_net_name(o->net));
		return -1;
	}
	if (o->transparent == -1)
		o->transparent = 1;
	if ((gk_rlimits_any(&o->limits) || o->limits_best_effort != -1) &&
	    o->net != SPAWN_NET_GATED) {
		gk_seterr(err, errlen, "--memory, --pids, --cpus and --limits "
		    "apply to gated runs (with --allow): gatekeeperd makes the "
		    "cage's cgroup");
		return -1;
	}
	if (o->limits_best_effort == -1)
		o->limits_best_effort = 0;
	if (o->max_upload.n > 0 && (o->net != SPAWN_NET_GATED ||
	    o->platform == SPAWN_PLATFORM_MACOS))
		return gk_seterr(err, errlen, "--max-upload applies to gated "
		    "Linux runs (with --allow): gatekeeperd counts what the "
		    "cage sends");
	return ask_finish(o, err, errlen);
}

void
spawn_opts_clear(struct spawn_opts *o)
{
	size_t i;

	if (o == NULL)
		return;
	spawn_strv_clear(&o->allow);
	spawn_strv_clear(&o->max_upload);
	free(o->allow_files);
	free(o->presets);
	free(o->paths);
	free(o->env);
	free(o->pass_env);
	for (i = 0; i < o->ncreds; i++)
		spawn_cred_clear(&o->creds[i]);
	free(o->creds);
	memset(o, 0, sizeof(*o));
}
