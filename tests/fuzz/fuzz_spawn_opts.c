/*
 * Fuzz gk-run's option parser. The input is argv after argv[0], one
 * argument per NUL-terminated piece (at most 64). Invariants: a known
 * status; a message is one printable line; a parse that succeeds holds
 * only valid values (patterns re-parse, --env is KEY=VAL, the command
 * is there and NULL-terminated), and spawn_opts_finish() settles --net.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

#define MAXARGS	64

static void
check_message(const char *m)
{
	size_t i, n = strlen(m);

	CHECK(n > 0 && n < SPAWN_ERRLEN);
	for (i = 0; i < n; i++)
		CHECK(m[i] >= 0x20 && m[i] < 0x7f);
}

static void
check_run(struct spawn_opts *o, int argc, char **argv)
{
	struct gk_pattern p;
	char err[SPAWN_ERRLEN];
	size_t i;

	CHECK(o->ncmd >= 1 && o->ncmd < argc);
	CHECK(o->cmd == argv + (argc - o->ncmd));
	CHECK(o->cmd[o->ncmd] == NULL);
	CHECK(o->control != NULL && o->control[0] != '\0' &&
	    strlen(o->control) < 108);
	CHECK(o->timeout <= SPAWN_TIMEOUT_MAX);
	CHECK(o->net <= SPAWN_NET_HOST && o->fs <= SPAWN_FS_HOST);
	CHECK(o->seccomp <= SPAWN_SECCOMP_OFF);
	CHECK(o->platform <= SPAWN_PLATFORM_MACOS);
	for (i = 0; i < o->allow.n; i++)
		CHECK(gk_pattern_parse((const uint8_t *)o->allow.v[i],
		    strlen(o->allow.v[i]), &p) == GK_PAT_OK);
	for (i = 0; i < o->npaths; i++)
		CHECK(o->paths[i].path[0] != '\0');
	for (i = 0; i < o->nenv; i++)
		CHECK(spawn_env_valid(o->env[i]));
	for (i = 0; i < o->nallow_files; i++)
		CHECK(o->allow_files[i][0] != '\0');
	if (spawn_opts_finish(o, err, sizeof(err)) == 0)
		CHECK(o->net != SPAWN_NET_AUTO);
	else
		check_message(err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAXARGS + 2], err[SPAWN_ERRLEN], *buf;
	struct spawn_opts o;
	enum spawn_opt_status st;
	size_t pos = 0, n;
	int argc = 0;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	if (size > 0)
		memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = (char *)"gk-run";
	while (pos < size && argc <= MAXARGS) {
		n = strlen(buf + pos);
		argv[argc++] = buf + pos;
		pos += n + 1;
	}
	argv[argc] = NULL;
	err[0] = '\0';
	st = spawn_opts_parse(argc, argv, "/fuzz.sock", &o, err, sizeof(err));
	switch (st) {
	case SPAWN_OPT_RUN:
		check_run(&o, argc, argv);
		spawn_opts_clear(&o);
		break;
	case SPAWN_OPT_CACHE_DIR:
		CHECK(o.cache_dir && o.cmd == NULL);
		spawn_opts_clear(&o);
		break;
	case SPAWN_OPT_USAGE:
	case SPAWN_OPT_NOMEM:
		check_message(err);
		break;
	case SPAWN_OPT_HELP:
	case SPAWN_OPT_VERSION:
	case SPAWN_OPT_PRESETS:
		break;
	default:
		CHECK(!"unknown status");
	}
	free(buf);
	return 0;
}
