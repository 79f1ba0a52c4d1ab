/*
 * gk_cage: the cage table (by source address and by id, both chained hash
 * tables that double as they fill). Each cage's pins are gk_pins.c's.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/state/gk_ask.h"
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_cage_int.h"
#include "gatekeeper/state/gk_events.h"

#define TABLE_MIN_BUCKETS	64

/* ---- the cage table --------------------------------------------------- */

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
	gk_cage_lim_end(c);
	gk_ask_free(c);
	gk_events_free(c);
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
			cage_free(c);
		}
	}
	free(t->by_src);
	free(t->by_id);
	free(t);
}

size_t
gk_cage_count(const struct gk_cage_table *t)
{
	return t == NULL ? 0 : t->count;
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

struct gk_cage *
gk_cage_create(struct gk_cage_table *t, const struct gk_addr *source,
    const char *label, uid_t uid, struct gk_allowlist *allow,
    enum gk_cage_err *err)
{
	struct gk_cage *c;
	enum gk_cage_err e = GK_CAGE_E_OK;

	if (label == NULL)
		label = "";
	if (!label_ok(label))
		e = GK_CAGE_E_BAD_LABEL;
	else if (gk_cage_by_source(t, source) != NULL)
		e = GK_CAGE_E_SOURCE_IN_USE;
	else if (t->count >= GK_CAGE_MAX)
		e = GK_CAGE_E_TOO_MANY;
	else if ((c = calloc(1, sizeof(*c))) == NULL)
		e = GK_CAGE_E_NOMEM;
	else if (unique_id(t, c->id) == -1 ||
	    make_random(c->token, GK_CAGE_TOKEN_LEN) == -1) {
		free(c);
		e = GK_CAGE_E_NOMEM;
	}
	if (err != NULL)
		*err = e;
	if (e != GK_CAGE_E_OK)
		return NULL;
	memcpy(c->label, label, strlen(label) + 1);
	gk_cage_lim_init(&c->lim);
	c->uid = uid;
	c->table = t;
	c->source = *source;
	c->allow = allow;
	c->created = time(NULL);
	if (t->count >= t->nbuckets)
		table_grow(t);
	c->src_next = t->by_src[src_slot(t, source)];
	t->by_src[src_slot(t, source)] = c;
	c->id_next = t->by_id[id_slot(t, c->id)];
	t->by_id[id_slot(t, c->id)] = c;
	t->count++;
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
gk_cage_count_denied(struct gk_cage *c, enum gk_deny_kind k)
{
	c->denied[k]++;
	gk_stats_label_denied(c->label, k);
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
	if (!c->learn)
		return false;
	gk_events_learn(c, name, len, port);
	return true;
}

void
gk_cage_destroy(struct gk_cage_table *t, struct gk_cage *c)
{
	struct gk_cage **pp;

	if (c == NULL)
		return;
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
