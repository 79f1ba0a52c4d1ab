/*
 * gk_budget: the budget facet (gk_budget.h); its slot holds the cage's
 * budgets, the spec's first, then the daemon's default ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"

struct budget {
	struct gk_upload	 u;
	struct gk_allowlist	*hosts;		/* NULL: every host */
	uint64_t		 used;		/* sent and reserved */
	uint64_t		 refused;	/* grants refused */
};

struct budgets {
	size_t			 n;
	struct budget		 b[GK_UPLOADS_MAX * 2];
};

static int
budget_add(struct budgets *bs, const struct gk_upload *u, char *err,
    size_t errlen)
{
	struct budget *b = &bs->b[bs->n];
	const char *text = u->pattern;

	memset(b, 0, sizeof(*b));
	b->u = *u;
	if (!u->all && (b->hosts = gk_allowlist_new(&text, 1, err, errlen)) ==
	    NULL)
		return -1;
	bs->n++;
	return 0;
}

void
gk_budget_configure(struct gk_cage_table *t, const struct gk_budget_conf *conf)
{
	gk_cage_table_set_facet(t, GK_FACET_BUDGET, conf);
}

int
gk_budget_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	const struct gk_budget_conf *conf = gk_cage_facet_hooks(c,
	    GK_FACET_BUDGET);
	size_t nconf = conf != NULL ? conf->n : 0, i;
	struct budgets *bs;

	if (s->nuploads + nconf == 0)
		return 0;
	if (s->nuploads > GK_UPLOADS_MAX || nconf > GK_UPLOADS_MAX) {
		gk_seterr(err, errlen, "too many upload budgets (at most %d)",
		    GK_UPLOADS_MAX);
		return -1;
	}
	if ((bs = calloc(1, sizeof(*bs))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return -1;
	}
	gk_cage_facet_set(c, GK_FACET_BUDGET, bs);
	for (i = 0; i < s->nuploads + nconf; i++)
		if (budget_add(bs, i < s->nuploads ? &s->uploads[i] :
		    &conf->v[i - s->nuploads], err, errlen) == -1) {
			gk_budget_end(c, NULL);
			return -1;
		}
	return 0;
}

void
gk_budget_end(struct gk_cage *c, const char *reason)
{
	struct budgets *bs = gk_cage_facet(c, GK_FACET_BUDGET);
	size_t i;

	(void)reason;
	if (bs == NULL)
		return;
	for (i = 0; i < bs->n; i++)
		gk_allowlist_free(bs->b[i].hosts);
	free(bs);
	gk_cage_facet_set(c, GK_FACET_BUDGET, NULL);
}

/* The budgets of bs counting host:port, as a mask. */
static uint32_t
budget_mask(const struct budgets *bs, const char *host, uint16_t port)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; bs != NULL && i < bs->n; i++)
		if (bs->b[i].hosts == NULL || gk_allow_name(bs->b[i].hosts,
		    host, strlen(host), port))
			m |= 1u << i;
	return m;
}

bool
gk_budget_covers(const struct gk_cage *c, const char *host, uint16_t port)
{
	return c != NULL && budget_mask(gk_cage_facet(c, GK_FACET_BUDGET),
	    host, port) != 0;
}

/* The index of mask's budget with the least left (bs->n: none), and
 * what is left of it. */
static size_t
budget_least(const struct budgets *bs, uint32_t mask, uint64_t *left)
{
	size_t i, least = bs->n;
	uint64_t l;

	*left = UINT64_MAX;
	for (i = 0; i < bs->n; i++) {
		if (!(mask & (1u << i)))
			continue;
		l = bs->b[i].used < bs->b[i].u.bytes ? bs->b[i].u.bytes -
		    bs->b[i].used : 0;
		if (l < *left) {
			*left = l;
			least = i;
		}
	}
	return least;
}

static void
budget_why(const struct budget *b, char *why, size_t whylen)
{
	char text[GK_UPLOAD_TEXT];

	gk_upload_format(&b->u, text, sizeof(text));
	snprintf(why, whylen, "the upload budget %s is spent: %llu of %llu "
	    "bytes sent%s", text, (unsigned long long)b->used,
	    (unsigned long long)b->u.bytes, b->u.all ? " by the cage" : "");
}

bool
gk_budget_spent(const struct gk_cage *c, const char *host, uint16_t port,
    char *why, size_t whylen)
{
	const struct budgets *bs;
	uint64_t left;
	uint32_t m;
	size_t i;

	if (c == NULL || (bs = gk_cage_facet(c, GK_FACET_BUDGET)) == NULL ||
	    (m = budget_mask(bs, host, port)) == 0)
		return false;
	if ((i = budget_least(bs, m, &left)) == bs->n || left > 0)
		return false;
	budget_why(&bs->b[i], why, whylen);
	return true;
}

uint64_t
gk_budget_take(struct gk_cage *c, const char *host, uint16_t port,
    uint32_t *mask, char *why, size_t whylen)
{
	struct budgets *bs;
	uint64_t left, g;
	size_t i, least;

	if (c == NULL || (bs = gk_cage_facet(c, GK_FACET_BUDGET)) == NULL)
		return c == NULL ? 0 : UINT64_MAX;
	if (*mask == 0 && (*mask = budget_mask(bs, host, port)) == 0)
		return UINT64_MAX;
	if ((least = budget_least(bs, *mask, &left)) == bs->n)
		return UINT64_MAX;
	/* a full grant while there is room for four; then a quarter of
	 * what is left (whole when small), so that tunnels sending at
	 * once share the end of a budget */
	g = left > 4 * (uint64_t)GK_BUDGET_GRANT ? GK_BUDGET_GRANT :
	    left > 16384 ? left / 4 : left;
	if (g == 0) {
		bs->b[least].refused++;
		budget_why(&bs->b[least], why, whylen);
		return 0;
	}
	for (i = 0; i < bs->n; i++)
		if (*mask & (1u << i))
			bs->b[i].used += g;
	return g;
}

void
gk_budget_give(struct gk_cage *c, uint32_t mask, uint64_t n)
{
	struct budgets *bs;
	size_t i;

	if (c == NULL || (bs = gk_cage_facet(c, GK_FACET_BUDGET)) == NULL)
		return;
	for (i = 0; i < bs->n; i++)
		if (mask & (1u << i))
			bs->b[i].used -= n < bs->b[i].used ? n : bs->b[i].used;
}

struct json_object *
gk_budget_json(const struct gk_cage *c)
{
	const struct budgets *bs = gk_cage_facet(c, GK_FACET_BUDGET);
	struct json_object *a, *o;
	char text[GK_UPLOAD_TEXT];
	size_t i;

	if (bs == NULL)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < bs->n; i++) {
		o = json_object_new_object();
		gk_upload_format(&bs->b[i].u, text, sizeof(text));
		json_object_object_add(o, "budget", json_object_new_string(text));
		json_object_object_add(o, "bytes",
		    json_object_new_uint64(bs->b[i].u.bytes));
		json_object_object_add(o, "sent",
		    json_object_new_uint64(bs->b[i].used));
		json_object_object_add(o, "refused",
		    json_object_new_uint64(bs->b[i].refused));
		json_object_array_add(a, o);
	}
	return a;
}

void
gk_budget_ended(const struct gk_cage *c, struct json_object *d)
{
	struct json_object *a = gk_budget_json(c);

	if (a != NULL)
		json_object_object_add(d, "upload", a);
}
