/*
 * gk_learn: the learning facet; its slot counts what learning allowed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_learn.h"

struct learning {
	uint64_t	 allowed;	/* names and connections let through */
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
