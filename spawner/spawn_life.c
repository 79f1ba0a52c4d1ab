/*
 * A cage's life as gk-run tells it to gatekeeperd, for the audit log:
 * at cage.create what runs in it (the command, the mounts named on the
 * command line), at the end how the command ended (cage.destroy with
 * "exit" or "signal", and "reason" when a limit ended it). Pure.
 *
 * The command is told as run, bounded (GK_CTL_CMD_MAX arguments of
 * GK_CTL_ARG_MAX bytes, printable ASCII: any other byte is '?'), with
 * what could be a secret taken out: an argument holding a --credential's
 * value is "<credential NAME>", and a URL's password is "***".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/policy/gk_ctlreq.h"
#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

static const char *const path_modes[] = {
	[SPAWN_PATH_RO] = "ro",
	[SPAWN_PATH_RW] = "rw",
	[SPAWN_PATH_HIDE] = "hide",
	[SPAWN_PATH_SOCKET] = "socket",
};

/* "scheme://user:PASSWORD@host/...": the password as "***" into out. */
static bool
url_unpass(const char *arg, char *out, size_t len)
{
	const char *auth, *colon, *at;
	size_t n;

	if ((auth = strstr(arg, "://")) == NULL)
		return false;
	auth += 3;
	n = strcspn(auth, "/?#");
	if ((at = memchr(auth, '@', n)) == NULL ||
	    (colon = memchr(auth, ':', (size_t)(at - auth))) == NULL)
		return false;
	snprintf(out, len, "%.*s***%s", (int)(colon + 1 - arg), arg, at);
	return true;
}

/* One argument as told: a secret taken out, printable, cut. */
static void
arg_told(const char *arg, const struct spawn_cred *creds, size_t ncreds,
    char *out, size_t len)
{
	char tmp[GK_CTL_ARG_MAX * 4];
	size_t i;

	for (i = 0; i < ncreds; i++) {
		if (creds[i].value != NULL && creds[i].len > 0 &&
		    strstr(arg, creds[i].value) != NULL) {
			snprintf(out, len, "<credential %s>", creds[i].name);
			return;
		}
	}
	if (url_unpass(arg, tmp, sizeof(tmp)))
		arg = tmp;
	gk_printable(arg, out, len);
}

static struct json_object *
command_json(char *const cmd[], int ncmd, const struct spawn_cred *creds,
    size_t ncreds)
{
	struct json_object *a = json_object_new_array();
	char buf[GK_CTL_ARG_MAX + 1];
	int i;

	for (i = 0; i < ncmd; i++) {
		if (i == GK_CTL_CMD_MAX - 1 && ncmd > GK_CTL_CMD_MAX) {
			snprintf(buf, sizeof(buf), "... (%d more)", ncmd - i);
			json_object_array_add(a, json_object_new_string(buf));
			break;
		}
		arg_told(cmd[i], creds, ncreds, buf, sizeof(buf));
		json_object_array_add(a, json_object_new_string(buf));
	}
	return a;
}

struct json_object *
spawn_life_describe(char *const cmd[], int ncmd,
    const struct spawn_optpath *paths, size_t npaths,
    const struct spawn_cred *creds, size_t ncreds)
{
	struct json_object *o = json_object_new_object(), *m;
	char buf[GK_CTL_MOUNT_MAX + 1], path[GK_CTL_MOUNT_MAX - 6];
	size_t i;

	json_object_object_add(o, "command", command_json(cmd, ncmd, creds,
	    ncreds));
	if (npaths == 0)
		return o;
	m = json_object_new_array();
	for (i = 0; i < npaths && i < GK_CTL_MOUNTS_MAX; i++) {
		gk_printable(paths[i].path, path, sizeof(path));
		snprintf(buf, sizeof(buf), "%s:%s", path_modes[paths[i].kind],
		    path[0] != '\0' ? path : ".");
		json_object_array_add(m, json_object_new_string(buf));
	}
	json_object_object_add(o, "mounts", m);
	return o;
}

/* "SIGKILL", "SIGRTMIN+3", as gatekeeperd takes them. */
static void
signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev != NULL)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "SIG%d", sig);
}

char *
spawn_life_end_request(const char *id, int status, bool walltime, bool oom)
{
	struct json_object *o = json_object_new_object();
	char sig[32], *line = NULL;
	const char *s;
	bool killed = status > 128 && status - 128 < NSIG;

	json_object_object_add(o, "op", json_object_new_string("cage.destroy"));
	json_object_object_add(o, "id", json_object_new_string(id));
	if (killed) {	/* 128+N: killed by signal N, as the shell says */
		signal_name(status - 128, sig, sizeof(sig));
		json_object_object_add(o, "signal", json_object_new_string(sig));
	} else
		json_object_object_add(o, "exit",
		    json_object_new_int(status & 0xff));
	if (walltime)
		json_object_object_add(o, "reason",
		    json_object_new_string("walltime"));
	else if (oom && killed && status - 128 == SIGKILL)
		json_object_object_add(o, "reason",
		    json_object_new_string("memory"));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (s != NULL && (line = malloc(strlen(s) + 2)) != NULL)
		snprintf(line, strlen(s) + 2, "%s\n", s);
	json_object_put(o);
	return line;
}
