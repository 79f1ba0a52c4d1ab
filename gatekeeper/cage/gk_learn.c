/*
 * gk_learn: the learning facet; its slot counts what learning allowed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_learn.h"
#include "gatekeeper/policy/gk_reqlearn.h"

struct learning {
	uint64_t	 allowed;	/* names, connections and requests let
					   through that the allowlist does not
					   allow */
};

int
gk_learn_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct learning *l;

	if (!s->learn)
		return 0;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(err, errlen, "cannot create the cage: out of memory");
		return -1;
	}
	gk_cage_facet_set(c, GK_FACET_LEARN, l);
	log_info("cage=%s action=learn: any public name is allowed, each one "
	    "told to its owner", gk_cage_id(c));
	return 0;
}

void
gk_learn_ended(const struct gk_cage *c, struct json_object *d)
{
	const struct learning *l = gk_cage_facet(c, GK_FACET_LEARN);

	if (l != NULL)
		json_object_object_add(d, "learned",
		    json_object_new_uint64(l->allowed));
}

void
gk_learn_end(struct gk_cage *c, const char *reason)
{
	(void)reason;
	free(gk_cage_facet(c, GK_FACET_LEARN));
	gk_cage_facet_set(c, GK_FACET_LEARN, NULL);
}

bool
gk_cage_learns(const struct gk_cage *c)
{
	return gk_cage_facet(c, GK_FACET_LEARN) != NULL;
}

bool
gk_learn_name(const struct gk_cage *c, const char *name, size_t len,
    uint16_t port)
{
	struct learning *l = gk_cage_facet(c, GK_FACET_LEARN);

	if (l == NULL)
		return false;
	l->allowed++;
	gk_events_learn(c, name, len, port);
	return true;
}

bool
gk_learn_request(const struct gk_cage *c, const char *host, uint16_t port,
    const char *method, size_t mlen, const char *target, size_t tlen,
    bool allowed)
{
	struct learning *l = gk_cage_facet(c, GK_FACET_LEARN);
	char path[GK_LEARN_PATH_MAX + 1], m[16];
	size_t at, n;

	if (l == NULL || mlen >= sizeof(m) ||
	    !gk_reqlearn_path(method, mlen, target, tlen, path,
	    sizeof(path)))
		return false;
	/* a placeholder's mark anywhere in the target: never recorded */
	if (gk_cred_leak(c, (const uint8_t *)target, tlen, &at, &n) != NULL)
		return false;
	memcpy(m, method, mlen);
	m[mlen] = '\0';
	if (!allowed)
		l->allowed++;
	gk_events_learn_request(c, host, port, m, path);
	return true;
}
