/*
 * gk_pins: each cage's pins, the addresses its DNS answers allowed it (a
 * hash table on the address plus a min-heap on the deadline, for expiry
 * and eviction), and their sync to the kernel's set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cage_int.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/policy/gk_policy.h"

#define PINS_MIN_BUCKETS	16

/* ---- pins: heap ------------------------------------------------------- */

static void
heap_set(struct gk_pinset *ps, size_t i, struct pin *p)
{
	ps->heap[i] = p;
	p->heap_idx = i;
}

static void
heap_up(struct gk_pinset *ps, size_t i)
{
	struct pin *p = ps->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (ps->heap[parent]->expires <= p->expires)
			break;
		heap_set(ps, i, ps->heap[parent]);
		i = parent;
	}
	heap_set(ps, i, p);
}

static void
heap_down(struct gk_pinset *ps, size_t i)
{
	struct pin *p = ps->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= ps->count)
			break;
		if (child + 1 < ps->count &&
		    ps->heap[child + 1]->expires < ps->heap[child]->expires)
			child++;
		if (p->expires <= ps->heap[child]->expires)
			break;
		heap_set(ps, i, ps->heap[child]);
		i = child;
	}
	heap_set(ps, i, p);
}

/* Take the top off the heap; it stays in its hash chain. */
static void
heap_remove_top(struct gk_pinset *ps)
{
	struct pin *last = ps->heap[--ps->count];

	if (ps->count > 0) {
		heap_set(ps, 0, last);
		heap_down(ps, 0);
	}
}

/* ---- pins: hash on the address ---------------------------------------- */

static size_t
pin_slot(const struct gk_pinset *ps, const struct gk_addr *a)
{
	return gk_addr_hash(a) & (ps->nbuckets - 1);
}

static void
pins_rehash(struct gk_pinset *ps, struct pin **nb, size_t n)
{
	size_t i, s;

	free(ps->buckets);
	ps->buckets = nb;
	ps->nbuckets = n;
	for (i = 0; i < ps->count; i++) {
		s = pin_slot(ps, &ps->heap[i]->addr);
		ps->heap[i]->next = nb[s];
		nb[s] = ps->heap[i];
	}
}

/* Make room for one more pin; -1 on allocation failure. */
static int
pins_reserve(struct gk_pinset *ps)
{
	struct pin **nh, **nb;
	size_t n;

	if (ps->count == ps->cap) {
		n = ps->cap == 0 ? PINS_MIN_BUCKETS : ps->cap * 2;
		if ((nh = reallocarray(ps->heap, n, sizeof(*nh))) == NULL)
			return -1;
		ps->heap = nh;
		ps->cap = n;
	}
	if (ps->buckets == NULL || ps->count >= ps->nbuckets) {
		n = ps->buckets == NULL ? PINS_MIN_BUCKETS : ps->nbuckets * 2;
		if ((nb = calloc(n, sizeof(*nb))) == NULL)
			return ps->buckets == NULL ? -1 : 0;
		pins_rehash(ps, nb, n);
	}
	return 0;
}

void
gk_pins_free(struct gk_pinset *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->count; i++)
		free(ps->heap[i]);
	free(ps->heap);
	free(ps->buckets);
	free(ps);
}

static struct pin *
pin_find(const struct gk_pinset *ps, const struct gk_addr *a,
    const char *name)
{
	struct pin *p;

	if (ps == NULL || ps->count == 0)
		return NULL;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL; p = p->next) {
		if (gk_addr_eq(&p->addr, a) && strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

/* Unlink p from its chain and the heap, and free it. */
static void
pin_remove(struct gk_pinset *ps, struct pin *p)
{
	struct pin **pp, *last;
	size_t i = p->heap_idx;

	for (pp = &ps->buckets[pin_slot(ps, &p->addr)]; *pp != NULL;
	    pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	last = ps->heap[--ps->count];
	if (i < ps->count) {
		heap_set(ps, i, last);
		heap_up(ps, i);
		heap_down(ps, last->heap_idx);
	}
	free(p);
}

void
gk_cage_table_pin_sync(struct gk_cage_table *t, gk_pin_sync_fn fn, void *arg)
{
	t->sync = fn;
	t->sync_arg = arg;
}

/*
 * Tell the kernel about `p`'s address if its latest pin reaches past
 * what the kernel keeps it for: until that pin expires, no longer. Every
 * pin of an address sits in one chain.
 */
static void
pin_sync(struct gk_cage *c, struct pin *p)
{
	const struct gk_cage_table *t = c->table;
	const struct pin *q;
	time_t latest = 0, told = 0;

	if (t == NULL || t->sync == NULL || gk_cage_plumb_link(c) == 0)
		return;
	for (q = c->pins->buckets[pin_slot(c->pins, &p->addr)]; q != NULL;
	    q = q->next) {
		if (!gk_addr_eq(&q->addr, &p->addr))
			continue;
		if (q->expires > latest)
			latest = q->expires;
		if (q->synced > told)
			told = q->synced;
	}
	if (told != 0 && latest <= told)
		return;
	if (t->sync(t->sync_arg, c, &p->addr, latest) == 0)
		p->synced = latest;
}

/* What the kernel was told of p's address: the latest of its chain. */
static time_t
told_of(const struct gk_pinset *ps, const struct pin *p)
{
	const struct pin *q;
	time_t told = 0;

	for (q = ps->buckets[pin_slot(ps, &p->addr)]; q != NULL; q = q->next)
		if (gk_addr_eq(&q->addr, &p->addr) && q->synced > told)
			told = q->synced;
	return told;
}

void
gk_pins_unsync(struct gk_cage *c, time_t now)
{
	const struct gk_cage_table *t = c->table;
	struct gk_pinset *ps = c->pins;
	struct pin *p;
	size_t i;

	if (ps == NULL || t == NULL || t->sync == NULL ||
	    gk_cage_plumb_link(c) == 0)
		return;
	/* each address once (its pin told last), if the kernel has it a
	 * while yet: one that lapses meanwhile goes by itself */
	for (i = 0; i < ps->count; i++) {
		p = ps->heap[i];
		if (p->synced > now + 1 && p->synced == told_of(ps, p))
			(void)t->sync(t->sync_arg, c, &p->addr, 0);
	}
}

int
gk_cage_pin(struct gk_cage *c, const char *name, const struct gk_addr *a,
    time_t expires)
{
	struct gk_pinset *ps;
	struct pin *p;
	size_t len, s;

	len = strlen(name);
	if (len == 0 || len > GK_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	if ((p = pin_find(c->pins, a, name)) != NULL) {
		if (expires > p->expires) {
			p->expires = expires;
			heap_down(c->pins, p->heap_idx);
			pin_sync(c, p);
		}
		return 0;
	}
	if (c->pins == NULL && (c->pins = calloc(1, sizeof(*ps))) == NULL)
		return -1;
	ps = c->pins;
	if (ps->count >= GK_CAGE_PINS_MAX)
		pin_remove(ps, ps->heap[0]);
	if (pins_reserve(ps) == -1 ||
	    (p = calloc(1, sizeof(*p) + len + 1)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(p->name, name, len + 1);
	p->addr = *a;
	p->expires = expires;
	s = pin_slot(ps, a);
	p->next = ps->buckets[s];
	ps->buckets[s] = p;
	ps->heap[ps->count] = p;
	p->heap_idx = ps->count++;
	heap_up(ps, p->heap_idx);
	pin_sync(c, p);
	return 0;
}

bool
gk_cage_pinned_name(const struct gk_cage *c, const struct gk_addr *a,
    const char *name, time_t now)
{
	const struct pin *p;

	p = pin_find(c->pins, a, name);
	return p != NULL && p->expires > now;
}

size_t
gk_cage_pin_names(const struct gk_cage *c, const struct gk_addr *a,
    time_t now, const char **names, size_t max)
{
	const struct gk_pinset *ps = c->pins;
	const struct pin *p;
	size_t n = 0;

	if (ps == NULL || ps->count == 0)
		return 0;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL && n < max;
	    p = p->next) {
		if (p->expires > now && gk_addr_eq(&p->addr, a))
			names[n++] = p->name;
	}
	return n;
}

void
gk_cage_pin_foreach(const struct gk_cage *c, time_t now,
    void (*cb)(const char *, const struct gk_addr *, time_t, void *),
    void *arg)
{
	const struct gk_pinset *ps = c->pins;
	size_t i;

	for (i = 0; ps != NULL && i < ps->count; i++)
		if (ps->heap[i]->expires > now)
			cb(ps->heap[i]->name, &ps->heap[i]->addr,
			    ps->heap[i]->expires, arg);
}

size_t
gk_cage_pin_count(const struct gk_cage *c)
{
	return c->pins == NULL ? 0 : c->pins->count;
}

void
gk_cage_pin_keep(struct gk_cage *c, const struct gk_addr *a, time_t until)
{
	struct gk_pinset *ps = c->pins;
	struct pin *p, *last = NULL;

	if (ps == NULL || ps->count == 0)
		return;
	for (p = ps->buckets[pin_slot(ps, a)]; p != NULL; p = p->next) {
		if (!gk_addr_eq(&p->addr, a) || p->expires >= until)
			continue;
		p->expires = until;
		heap_down(ps, p->heap_idx);
		last = p;
	}
	if (last != NULL)
		pin_sync(c, last);
}

size_t
gk_cage_expire(struct gk_cage *c, time_t now)
{
	time_t keep_until = now + GK_PIN_INUSE_KEEP;
	struct gk_pinset *ps = c->pins;
	struct gk_addr *used = NULL;
	struct pin *p, **kept = NULL;
	size_t n = 0, nused = 0, nkept = 0, i;
	bool looked = false;

	while (ps != NULL && ps->count > 0 &&
	    ps->heap[0]->expires <= now + GK_PIN_INUSE_AHEAD) {
		p = ps->heap[0];
		if (!looked) {
			used = gk_limit_hold_dsts(c, &nused);
			looked = true;
		}
		if (used == NULL && p->expires > now)
			break;		/* nothing in use: only expiry */
		if (used != NULL && keep_until > p->expires &&
		    bsearch(&p->addr, used, nused, sizeof(*used),
		    gk_addr_cmp) != NULL) {
			/* in use: kept, and the kernel told */
			p->expires = keep_until;
			heap_down(ps, 0);
			pin_sync(c, p);
			continue;
		}
		if (p->expires <= now) {
			pin_remove(ps, p);
			n++;
			continue;
		}
		/* due soon, not in use: out of the way until the loop ends */
		if (kept == NULL && (kept = calloc(ps->count,
		    sizeof(*kept))) == NULL)
			break;
		kept[nkept++] = p;
		heap_remove_top(ps);
	}
	for (i = 0; i < nkept; i++) {
		ps->heap[ps->count] = kept[i];
		kept[i]->heap_idx = ps->count++;
		heap_up(ps, kept[i]->heap_idx);
	}
	free(kept);
	free(used);
	return n;
}

void
gk_cage_set_allow(struct gk_cage *c, struct gk_allowlist *al)
{
	struct gk_pinset *ps = c->pins;
	struct pin *p;
	size_t i, kept = 0;

	gk_allowlist_free(c->allow);
	c->allow = al;
	if (ps == NULL || ps->count == 0)
		return;
	/* Compact the survivors, then rebuild the chains and the heap. */
	for (i = 0; i < ps->count; i++) {
		p = ps->heap[i];
		if (gk_allow_name(al, p->name, strlen(p->name), 0))
			ps->heap[kept++] = p;
		else
			free(p);
	}
	ps->count = kept;
	memset(ps->buckets, 0, ps->nbuckets * sizeof(*ps->buckets));
	for (i = 0; i < kept; i++) {
		p = ps->heap[i];
		p->heap_idx = i;
		p->next = ps->buckets[pin_slot(ps, &p->addr)];
		ps->buckets[pin_slot(ps, &p->addr)] = p;
	}
	for (i = kept / 2; i > 0; i--)
		heap_down(ps, i - 1);
}
