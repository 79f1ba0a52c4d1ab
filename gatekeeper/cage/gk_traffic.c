/*
 * gk_traffic: the traffic facet; its slot (made at the first tunnel's
 * end) holds the totals and one row per destination.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_traffic.h"

struct row {
	char		 host[GK_NAME_MAX + 1];
	uint16_t	 port;
	uint64_t	 up, down, conns;
};

struct traffic {
	struct row	*rows;		/* n of them, up to GK_TRAFFIC_HOSTS */
	size_t		 n, cap;
	struct row	 other;		/* destinations past the last row */
	struct row	 all;
};

int
gk_traffic_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	(void)c;
	(void)s;
	(void)err;
	(void)errlen;
	return 0;	/* a cage that moved nothing costs nothing */
}

static void
row_add(struct row *r, uint64_t up, uint64_t down)
{
	r->up += up;
	r->down += down;
	r->conns++;
}

/* The row of host:port, made when there is room; NULL: "other". */
static struct row *
row_of(struct traffic *t, const char *host, uint16_t port)
{
	struct row *nr;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->rows[i].port == port && strcmp(t->rows[i].host,
		    host) == 0)
			return &t->rows[i];
	if (t->n == GK_TRAFFIC_HOSTS)
		return NULL;
	if (t->n == t->cap) {
		if ((nr = realloc(t->rows, (t->cap ? t->cap * 2 : 4) *
		    sizeof(*nr))) == NULL)
			return NULL;
		t->rows = nr;
		t->cap = t->cap ? t->cap * 2 : 4;
	}
	nr = &t->rows[t->n++];
	memset(nr, 0, sizeof(*nr));
	snprintf(nr->host, sizeof(nr->host), "%s", host);
	nr->port = port;
	return nr;
}

void
gk_traffic_add(struct gk_cage *c, const char *host, uint16_t port,
    uint64_t up, uint64_t down)
{
	struct traffic *t;
	struct row *r;

	if (c == NULL)
		return;
	if ((t = gk_cage_facet(c, GK_FACET_TRAFFIC)) == NULL) {
		if ((t = calloc(1, sizeof(*t))) == NULL)
			return;
		gk_cage_facet_set(c, GK_FACET_TRAFFIC, t);
	}
	row_add(&t->all, up, down);
	row_add((r = row_of(t, host, port)) != NULL ? r : &t->other, up,
	    down);
}

static struct json_object *
row_json(const struct row *r, bool named)
{
	struct json_object *o = json_object_new_object();

	if (named) {
		json_object_object_add(o, "host",
		    json_object_new_string(r->host));
		json_object_object_add(o, "port", json_object_new_int(r->port));
	}
	json_object_object_add(o, "up", json_object_new_uint64(r->up));
	json_object_object_add(o, "down", json_object_new_uint64(r->down));
	json_object_object_add(o, "connections",
	    json_object_new_uint64(r->conns));
	return o;
}

struct json_object *
gk_traffic_json(const struct gk_cage *c)
{
	const struct traffic *t = gk_cage_facet(c, GK_FACET_TRAFFIC);
	static const struct row none;
	struct json_object *o, *a;
	size_t i;

	o = row_json(t != NULL ? &t->all : &none, false);
	a = json_object_new_array();
	for (i = 0; t != NULL && i < t->n; i++)
		json_object_array_add(a, row_json(&t->rows[i], true));
	json_object_object_add(o, "hosts", a);
	if (t != NULL && t->other.conns > 0)
		json_object_object_add(o, "other", row_json(&t->other, false));
	return o;
}

void
gk_traffic_ended(const struct gk_cage *c, struct json_object *d)
{
	time_t now = time(NULL), made = gk_cage_created(c);

	json_object_object_add(d, "seconds", json_object_new_int64(
	    now > made ? (int64_t)(now - made) : 0));
	json_object_object_add(d, "traffic", gk_traffic_json(c));
}

void
gk_traffic_end(struct gk_cage *c, const char *reason)
{
	struct traffic *t = gk_cage_facet(c, GK_FACET_TRAFFIC);

	(void)reason;
	if (t == NULL)
		return;
	free(t->rows);
	free(t);
	gk_cage_facet_set(c, GK_FACET_TRAFFIC, NULL);
}
