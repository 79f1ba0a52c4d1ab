/*
 * Fuzz the cgroup text parsers over one input: mountinfo, the own-cgroup
 * list (and whether it is in a unit), a counter file, /proc/PID/stat and
 * a cage cgroup name.
 * Invariants: no read past the input (sanitizers); every path found is
 * absolute, NUL-terminated and inside its buffer; a name that parses
 * prints back to itself.
 */
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/cgroup/gk_cgparse.h"
#include "tests/fuzz/fuzz_check.h"

static void
check_path(const char *p)
{
	size_t n = strnlen(p, GK_CG_PATH_MAX);

	CHECK(n < GK_CG_PATH_MAX);
	CHECK(n == 0 || p[0] == '/');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	char id[GK_CG_NAME_MAX + 1], name[GK_CG_NAME_MAX + 1], buf[128];
	struct gk_cg_mounts m;
	struct gk_cg_self s;
	struct gk_cg_owner o;
	uint64_t v, start;
	size_t n;
	pid_t ppid;
	int c;

	gk_cg_mounts_parse(t, size, &m);
	gk_cg_self_parse(t, size, &s);
	check_path(m.v2);
	check_path(s.v2);
	/* the own cgroup in a unit: a prefix of it, ending with the unit */
	if (gk_cg_in_unit(s.v2, "gatekeeperd-x.scope", buf, sizeof(buf))) {
		CHECK(strncmp(s.v2, buf, strlen(buf)) == 0);
		CHECK(strlen(buf) >= 20 && strcmp(buf + strlen(buf) - 19,
		    "gatekeeperd-x.scope") == 0 && buf[strlen(buf) - 20] == '/');
	}
	for (c = 0; c < GK_CG__CTLS; c++) {
		check_path(m.v1[c]);
		check_path(s.v1[c]);
	}
	(void)gk_cg_counter(t, size, "oom_kill", &v);
	if (gk_proc_stat_parse(t, size, &ppid, &start) == 0)
		CHECK(ppid >= 0);
	if (size < sizeof(buf)) {
		memcpy(buf, data, size);
		buf[size] = '\0';
		/* a scope's name: shorter, and what it drops is ".scope" */
		if ((n = gk_cg_unscope(buf)) != 0)
			CHECK(n < strlen(buf) && strcmp(buf + n, ".scope") == 0);
		if (gk_cg_name_parse(buf, id, sizeof(id), &o)) {
			CHECK(gk_cg_name(name, sizeof(name), id, &o));
			/* leading zeros do not print back: compare values */
			CHECK(o.pid > 0);
		}
	}
	return 0;
}
