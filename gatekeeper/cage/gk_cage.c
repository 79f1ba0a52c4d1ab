/*
 * gk_cage: the cage, and the table of them (by source address and by id,
 * both chained hash tables that double as they fill). A cage begins from
 * a spec and ends with a reason, its facets (gk_facet.h) in between. Each
 * cage's pins are gk_pins.c's.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cage_int.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_learn.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/state/gk_audit.h"

#define TABLE_MIN_BUCKETS	64

/* ---- the cage table --------------------------------------------------- */

static void	facets_end(struct gk_cage *, size_t, const char *);

static uint32_t
id_hash(const char *id)
{
	return gk_hash_str(GK_HASH_INIT, id);
}

static size_t
src_slot(const struct gk_cage_table *t, const struct gk_addr *a)
{
	return gk_addr_hash(a) & (t->nbuckets - 1);
}

static size_t
id_slot(const struct gk_cage_table *t, const char *id)
{
	return id_hash(id) & (t->nbuckets - 1);
}

struct gk_cage_table *
gk_cage_table_new(void)
{
	struct gk_cage_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->nbuckets = TABLE_MIN_BUCKETS;
	t->by_src = calloc(t->nbuckets, sizeof(*t->by_src));
	t->by_id = calloc(t->nbuckets, sizeof(*t->by_id));
	if (t->by_src == NULL || t->by_id == NULL) {
		free(t->by_src);
		free(t->by_id);
		free(t);
		return NULL;
	}
	return t;
}

static void
cage_free(struct gk_cage *c)
{
	gk_allowlist_free(c->allow);
	gk_pins_free(c->pins);
	explicit_bzero(c->token, sizeof(c->token));
	free(c);
}

void
gk_cage_table_free(struct gk_cage_table *t)
{
	struct gk_cage *c, *next;
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		for (c = t->by_src[i]; c != NULL; c = next) {
			next = c->src_next;
			if (c->owner != NULL)
				LIST_REMOVE(c, owned);
			facets_end(c, GK_FACET__MAX, "shutdown");
			cage_free(c);
		}
	}
	free(t->by_src);
	free(t->by_id);
	free(t);
}

size_t
gk_cage_table_count(const struct gk_cage_table *t)
{
	return t == NULL ? 0 : t->count;
}

void
gk_cage_table_set_env(struct gk_cage_table *t, struct event_base *base,
    struct gk_audit *audit)
{
	t->base = base;
	t->audit = audit;
}

void
gk_cage_table_on_end(struct gk_cage_table *t, gk_cage_end_fn fn, void *arg)
{
	t->on_end = fn;
	t->on_end_arg = arg;
}

struct event_base *
gk_cage_base(const struct gk_cage *c)
{
	return c->table->base;
}

struct gk_audit *
gk_cage_audit(const struct gk_cage *c)
{
	return c->table->audit;
}

/* Double both tables; on allocation failure keep the old ones. */
static void
table_grow(struct gk_cage_table *t)
{
	struct gk_cage **src, **ids, *c, *next;
	size_t i, n = t->nbuckets * 2, old = t->nbuckets;

	src = calloc(n, sizeof(*src));
	ids = calloc(n, sizeof(*ids));
	if (src == NULL || ids == NULL) {
		free(src);
		free(ids);
		return;
	}
	t->nbuckets = n;
	for (i = 0; i < old; i++) {
		for (c = t->by_src[i]; c != NULL; c = next) {
			next = c->src_next;
			c->src_next = src[src_slot(t, &c->source)];
			src[src_slot(t, &c->source)] = c;
		}
		for (c = t->by_id[i]; c != NULL; c = next) {
			next = c->id_next;
			c->id_next = ids[id_slot(t, c->id)];
			ids[id_slot(t, c->id)] = c;
		}
	}
	free(t->by_src);
	free(t->by_id);
	t->by_src = src;
	t->by_id = ids;
}

static bool
label_ok(const char *label)
{
	size_t i;

	for (i = 0; label[i] != '\0'; i++) {
		if (i >= GK_CAGE_LABEL_MAX || label[i] < 0x20 ||
		    label[i] > 0x7e)
			return false;
	}
	return true;
}

/* A random id, [a-z0-9]{8}, by rejection sampling (no modulo bias). */
static int
make_random(char *id, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t rnd[32];
	size_t i, k = 0;
	ssize_t n;

	while (k < len) {
		if ((n = getrandom(rnd, sizeof(rnd), 0)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("getrandom");
			return -1;
		}
		for (i = 0; i < (size_t)n && k < len; i++) {
			if (rnd[i] < 252)	/* 252 = 7 * 36 */
				id[k++] = alphabet[rnd[i] % 36];
		}
	}
	id[k] = '\0';
	return 0;
}

static int
unique_id(const struct gk_cage_table *t, char id[GK_CAGE_ID_LEN + 1])
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (make_random(id, GK_CAGE_ID_LEN) == -1)
			return -1;
		if (gk_cage_by_id(t, id) == NULL)
			return 0;
	}
	return -1;
}

/* A new cage as s says, not yet in the table nor begun. */
static struct gk_cage *
cage_new(struct gk_cage_table *t, const struct gk_cage_spec *s,
    enum gk_cage_err *e)
{
	const char *label = s->label != NULL ? s->label : "";
	struct gk_cage *c = NULL;

	if (!label_ok(label))
		*e = GK_CAGE_E_BAD_LABEL;
	else if (!s->netns && gk_cage_by_source(t, &s->source) != NULL)
		*e = GK_CAGE_E_SOURCE_IN_USE;
	else if (t->count >= GK_CAGE_MAX)
		*e = GK_CAGE_E_TOO_MANY;
	else if ((c = calloc(1, sizeof(*c))) == NULL)
		*e = GK_CAGE_E_NOMEM;
	else if (unique_id(t, c->id) == -1 ||
	    make_random(c->token, GK_CAGE_TOKEN_LEN) == -1) {
		free(c);
		c = NULL;
		*e = GK_CAGE_E_NOMEM;
	}
	if (c == NULL)
		return NULL;
	memcpy(c->label, label, strlen(label) + 1);
	c->uid = s->uid;
	c->table = t;
	c->source = s->source;
	c->created = time(NULL);
	return c;
}

static void
table_add(struct gk_cage_table *t, struct gk_cage *c)
{
	if (t->count >= t->nbuckets)
		table_grow(t);
	c->src_next = t->by_src[src_slot(t, &c->source)];
	t->by_src[src_slot(t, &c->source)] = c;
	c->id_next = t->by_id[id_slot(t, c->id)];
	t->by_id[id_slot(t, c->id)] = c;
	t->count++;
}

/* End the facets before `upto`, last first. */
static void
facets_end(struct gk_cage *c, size_t upto, const char *reason)
{
	while (upto-- > 0)
		if (gk_facets[upto].end != NULL)
			gk_facets[upto].end(c, reason);
}

struct gk_cage *
gk_cage_begin(struct gk_cage_table *t, const struct gk_cage_spec *s,
    enum gk_cage_err *e, char *err, size_t errlen)
{
	enum gk_cage_err ignored;
	struct gk_cage *c;
	size_t f;

	if (e == NULL)
		e = &ignored;
	*e = GK_CAGE_E_OK;
	if ((c = cage_new(t, s, e)) == NULL) {
		snprintf(err, errlen, "%s", gk_cage_strerror(*e));
		return NULL;
	}
	c->owner = s->owner;	/* the facets may tell it as they begin */
	c->allow = s->allow;
	for (f = 0; f < GK_FACET__MAX; f++) {
		if (gk_facets[f].begin == NULL ||
		    gk_facets[f].begin(c, s, err, errlen) == 0)
			continue;
		facets_end(c, f, "refused");
		c->allow = NULL;	/* the caller's still */
		cage_free(c);
		*e = GK_CAGE_E_FACET;
		return NULL;
	}
	table_add(t, c);
	if (c->owner != NULL)
		LIST_INSERT_HEAD(&c->owner->cages, c, owned);
	return c;
}

struct token_find {
	const char	*token;
	struct gk_cage	*found;
};

static void
token_cb(struct gk_cage *c, void *arg)
{
	struct token_find *f = arg;
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < GK_CAGE_TOKEN_LEN; i++)
		diff |= (unsigned char)(c->token[i] ^ f->token[i]);
	if (diff == 0)
		f->found = c;
}

struct gk_cage *
gk_cage_by_token(const struct gk_cage_table *t, const char *token)
{
	struct token_find f = { token, NULL };

	if (strlen(token) != GK_CAGE_TOKEN_LEN)
		return NULL;
	gk_cage_foreach(t, token_cb, &f);
	return f.found;
}

void
gk_cage_count(struct gk_cage *c, enum gk_cage_tally what,
    enum gk_deny_kind k)
{
	switch (what) {
	case GK_TALLY_DNS_QUERY:
		c->dns_queries++;
		break;
	case GK_TALLY_CONNECTION:
		c->connections++;
		break;
	case GK_TALLY_DENIED:
		c->denied[k]++;
		gk_stats_label_denied(c->label, k);
		break;
	}
}

uint64_t
gk_cage_counted(const struct gk_cage *c, enum gk_cage_tally what,
    enum gk_deny_kind k)
{
	switch (what) {
	case GK_TALLY_DNS_QUERY:
		return c->dns_queries;
	case GK_TALLY_CONNECTION:
		return c->connections;
	case GK_TALLY_DENIED:
		return c->denied[k];
	}
	return 0;
}

void
gk_cage_table_set_policy(struct gk_cage_table *t,
    const struct gk_hostpolicy *p)
{
	t->policy = p;
}

const struct gk_hostpolicy *
gk_cage_table_policy(const struct gk_cage_table *t)
{
	return t->policy;
}

const struct gk_hostpolicy *
gk_cage_policy(const struct gk_cage *c)
{
	return c->table != NULL ? c->table->policy : NULL;
}

bool
gk_cage_allows_name(const struct gk_cage *c, const char *name, size_t len,
    uint16_t port)
{
	/* the host policy's denials win over any allowlist */
	if (gk_hostpolicy_denies_name(gk_cage_policy(c), name, len, port))
		return false;
	if (gk_allow_name(c->allow, name, len, port))
		return true;
	return gk_learn_name(c, name, len, port);
}

static void
table_remove(struct gk_cage_table *t, struct gk_cage *c)
{
	struct gk_cage **pp;

	for (pp = &t->by_src[src_slot(t, &c->source)]; *pp != NULL;
	    pp = &(*pp)->src_next) {
		if (*pp == c) {
			*pp = c->src_next;
			break;
		}
	}
	for (pp = &t->by_id[id_slot(t, c->id)]; *pp != NULL;
	    pp = &(*pp)->id_next) {
		if (*pp == c) {
			*pp = c->id_next;
			break;
		}
	}
	t->count--;
}

/* The cage.destroy audit line: the reason, and what facets add. */
static void
audit_end(const struct gk_cage *c, const char *reason)
{
	struct json_object *d = json_object_new_object();
	size_t f;

	json_object_object_add(d, "reason", json_object_new_string(reason));
	for (f = 0; f < GK_FACET__MAX; f++)
		if (gk_facets[f].ended != NULL)
			gk_facets[f].ended(c, d);
	gk_audit_event(c->table->audit, "cage.destroy", c, d);
}

void
gk_cage_end(struct gk_cage *c, const char *reason)
{
	char addr[GK_ADDR_STRLEN];

	if (c == NULL)
		return;
	/* its connections end first, so that their bytes are in the line */
	gk_limit_release(c);
	audit_end(c, reason);
	log_info("cage=%s label=\"%s\" source=%s action=destroy reason=\"%s\"",
	    c->id, c->label, gk_addr_ntop(&c->source, addr, sizeof(addr)),
	    reason);
	gk_events_cage_end(c);
	if (c->table->on_end != NULL)
		c->table->on_end(c, reason, c->table->on_end_arg);
	gk_pins_unsync(c, gk_now());	/* before its link goes */
	if (c->owner != NULL) {
		LIST_REMOVE(c, owned);
		c->owner = NULL;
	}
	facets_end(c, GK_FACET__MAX, reason);
	table_remove(c->table, c);
	cage_free(c);
}

const char *
gk_cage_strerror(enum gk_cage_err e)
{
	switch (e) {
	case GK_CAGE_E_OK:
		return "ok";
	case GK_CAGE_E_SOURCE_IN_USE:
		return "source address already in use by another cage";
	case GK_CAGE_E_TOO_MANY:
		return "too many cages";
	case GK_CAGE_E_BAD_LABEL:
		return "label must be at most 64 printable ASCII characters";
	case GK_CAGE_E_NOMEM:
		return "out of memory";
	case GK_CAGE_E_FACET:
		return "refused";
	}
	return "unknown error";
}

struct gk_cage *
gk_cage_by_source(const struct gk_cage_table *t, const struct gk_addr *source)
{
	struct gk_cage *c;

	for (c = t->by_src[src_slot(t, source)]; c != NULL; c = c->src_next) {
		if (gk_addr_eq(&c->source, source))
			return c;
	}
	return NULL;
}

struct gk_cage *
gk_cage_by_id(const struct gk_cage_table *t, const char *id)
{
	struct gk_cage *c;

	for (c = t->by_id[id_slot(t, id)]; c != NULL; c = c->id_next) {
		if (strcmp(c->id, id) == 0)
			return c;
	}
	return NULL;
}

void
gk_cage_foreach(const struct gk_cage_table *t,
    void (*cb)(struct gk_cage *, void *), void *arg)
{
	struct gk_cage *c;
	size_t i;

	for (i = 0; i < t->nbuckets; i++) {
		for (c = t->by_src[i]; c != NULL; c = c->src_next)
			cb(c, arg);
	}
}

/* ---- what a cage is ---------------------------------------------------- */

const char *
gk_cage_id(const struct gk_cage *c)
{
	return c->id;
}

const char *
gk_cage_label(const struct gk_cage *c)
{
	return c->label;
}

const char *
gk_cage_token(const struct gk_cage *c)
{
	return c->token;
}

uid_t
gk_cage_uid(const struct gk_cage *c)
{
	return c->uid;
}

const struct gk_addr *
gk_cage_source(const struct gk_cage *c)
{
	return &c->source;
}

const struct gk_allowlist *
gk_cage_allow(const struct gk_cage *c)
{
	return c->allow;
}

time_t
gk_cage_created(const struct gk_cage *c)
{
	return c->created;
}

void
gk_cage_set_source(struct gk_cage *c, const struct gk_addr *a)
{
	c->source = *a;
}

/* ---- facets' slots ------------------------------------------------------ */

void *
gk_cage_facet(const struct gk_cage *c, enum gk_facet_id f)
{
	return c->facet[f];
}

void
gk_cage_facet_set(struct gk_cage *c, enum gk_facet_id f, void *p)
{
	c->facet[f] = p;
}

void
gk_cage_table_set_facet(struct gk_cage_table *t, enum gk_facet_id f,
    const void *hooks)
{
	t->facet[f] = hooks;
}

const void *
gk_cage_table_facet(const struct gk_cage_table *t, enum gk_facet_id f)
{
	return t->facet[f];
}

const void *
gk_cage_facet_hooks(const struct gk_cage *c, enum gk_facet_id f)
{
	return c->table->facet[f];
}

/* ---- owners ------------------------------------------------------------- */

struct gk_cage_owner *
gk_cage_owner(const struct gk_cage *c)
{
	return c->owner;
}

void
gk_cage_owner_init(struct gk_cage_owner *o, uid_t uid, pid_t pid,
    bool (*send)(struct gk_line_sink *, struct json_object *, size_t))
{
	memset(o, 0, sizeof(*o));
	LIST_INIT(&o->cages);
	o->uid = uid;
	o->pid = pid;
	o->sink.send = send;
}

void
gk_cage_owner_end(struct gk_cage_owner *o, const char *reason)
{
	struct gk_cage *c;

	while ((c = LIST_FIRST(&o->cages)) != NULL)
		gk_cage_end(c, reason);	/* takes it off the list */
}

void
gk_cage_owner_foreach(struct gk_cage_owner *o,
    void (*cb)(struct gk_cage *, void *), void *arg)
{
	struct gk_cage *c;

	LIST_FOREACH(c, &o->cages, owned)
		cb(c, arg);
}
