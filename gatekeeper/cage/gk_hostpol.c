/*
 * gk_hostpol: reading the host policy file; narrowing live cages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_hostpol.h"


int
gk_hostpol_load(const char *path, bool named, struct gk_hostpolicy *out,
    char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len = 0;
	ssize_t n;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (strcmp(path, "off") == 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && !named)
			return 0;
		gk_seterr(err, errlen, "policy %s: %s", path, strerror(errno));
		return -1;
	}
	if ((buf = malloc(GK_HOSTPOLICY_MAX + 1)) == NULL) {
		close(fd);
		gk_seterr(err, errlen, "policy %s: out of memory", path);
		return -1;
	}
	while (len <= GK_HOSTPOLICY_MAX &&
	    (n = read(fd, buf + len, GK_HOSTPOLICY_MAX + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			gk_seterr(err, errlen, "policy %s: %s", path,
			    strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	rc = gk_hostpolicy_parse(buf, len, path, out, err, errlen) == 0 ? 1 :
	    -1;
	free(buf);
	return rc;
}

struct narrow {
	const struct gk_hostpolicy	*p;
	struct gk_audit			*audit;
	size_t				 changed;
};

/* Patterns outside the bound go. */
static bool
outside(const struct gk_pattern *pat, void *arg)
{
	return !gk_hostpolicy_within(arg, pat);
}

static void
narrow_one(struct gk_cage *c, void *arg)
{
	struct narrow *nw = arg;
	char removed[1024], err[256];
	struct gk_allowlist *al;
	json_object *d;

	if (gk_hostpolicy_outside(nw->p, gk_cage_allow(c), removed,
	    sizeof(removed)) == 0)
		return;
	if ((al = gk_allowlist_edit(gk_cage_allow(c), outside,
	    (void *)nw->p, NULL,
	    0, err, sizeof(err))) == NULL) {
		/* out of memory: the cage is left whole, and says so */
		log_warnx("cage=%s: cannot narrow its allowlist to the host "
		    "policy (version %s): %s; still allowed: %s", gk_cage_id(c),
		    nw->p->version, err, removed);
		return;
	}
	gk_cage_set_allow(c, al);
	nw->changed++;
	log_info("cage=%s action=update reason=policy: the host policy "
	    "(version %s) bounds it; removed %s", gk_cage_id(c), nw->p->version,
	    removed);
	d = json_object_new_object();
	json_object_object_add(d, "reason", json_object_new_string("policy"));
	json_object_object_add(d, "removed", json_object_new_string(removed));
	gk_audit_event(nw->audit, "cage.update", c, d);
}

size_t
gk_hostpol_narrow(struct gk_cage_table *t, const struct gk_hostpolicy *p,
    struct gk_audit *a)
{
	struct narrow nw = { p, a, 0 };

	if (p == NULL || p->bound == NULL)
		return 0;
	gk_cage_foreach(t, narrow_one, &nw);
	return nw.changed;
}
