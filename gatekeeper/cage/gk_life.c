/*
 * gk_life: the life facet; its slot (made when there is a command or an
 * end to tell) holds the command as JSON and how it ended.
 */
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_life.h"

struct life {
	struct json_object	*command;	/* NULL: none told */
	int			 status;	/* -1: not said */
	char			 signal[16];	/* "": not said */
};

static struct life *
life_of(struct gk_cage *c)
{
	struct life *l;

	if ((l = gk_cage_facet(c, GK_FACET_LIFE)) != NULL)
		return l;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->status = -1;
	gk_cage_facet_set(c, GK_FACET_LIFE, l);
	return l;
}

int
gk_life_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct life *l;
	size_t i;

	if (s->ncommand == 0)
		return 0;
	if ((l = life_of(c)) == NULL ||
	    (l->command = json_object_new_array()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < s->ncommand; i++)
		json_object_array_add(l->command,
		    json_object_new_string(s->command[i]));
	return 0;
}

void
gk_life_said(struct gk_cage *c, int status, const char *signal)
{
	struct life *l;

	if ((l = life_of(c)) == NULL)
		return;
	l->status = status;
	snprintf(l->signal, sizeof(l->signal), "%s",
	    signal != NULL ? signal : "");
}

void
gk_life_ended(const struct gk_cage *c, struct json_object *d)
{
	const struct life *l = gk_cage_facet(c, GK_FACET_LIFE);

	if (l == NULL)
		return;
	if (l->command != NULL)
		json_object_object_add(d, "command",
		    json_object_get(l->command));
	if (l->signal[0] != '\0')
		json_object_object_add(d, "signal",
		    json_object_new_string(l->signal));
	else if (l->status >= 0)
		json_object_object_add(d, "exit",
		    json_object_new_int(l->status));
}

void
gk_life_end(struct gk_cage *c, const char *reason)
{
	struct life *l = gk_cage_facet(c, GK_FACET_LIFE);

	(void)reason;
	if (l == NULL)
		return;
	json_object_put(l->command);
	free(l);
	gk_cage_facet_set(c, GK_FACET_LIFE, NULL);
}
