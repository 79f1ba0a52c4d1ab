/*
 * gk_facet: what a cage has besides its identity, allowlist and pins.
 * Each per-cage facility is a facet: its own file, its own slot in every
 * cage (gk_cage_facet), and one row of the facet table (gk_facets.c).
 * gk_cage_begin runs the facets' begins in the table's order, and
 * gk_cage_end their ends in reverse, so a facet may use those before it
 * in both: its processes are killed first (their last limit events
 * counted and told), then what it holds ends (a held connection lets go
 * of its question; a brokered one of its credentials), then its
 * questions, its credentials (wiped), its owner's channel, and its
 * network: nothing of a cage outlives its network but the record of its
 * command (gk_life.h), which ends last. (Before any of that, and before
 * the cage.destroy line, gk_cage_end ends the connections it holds, so
 * that their bytes are in the line.)
 *
 * A new per-cage facility is one new file (its begin and end) and one
 * row in gk_facets.c, with its id here.
 */
#ifndef GK_FACET_H
#define GK_FACET_H

#include <stddef.h>

struct gk_cage;
struct gk_cage_spec;
struct gk_cage_table;
struct json_object;

enum gk_facet_id {
	GK_FACET_LIFE,		/* its command, how it ended (gk_life.h) */
	GK_FACET_PLUMB,		/* its network: veth, nftables (netns) */
	GK_FACET_EVENTS,	/* events to its owner (gk_events.h) */
	GK_FACET_CRED,		/* its credentials, its authority */
	GK_FACET_TRAFFIC,	/* what passed, per destination */
	GK_FACET_BUDGET,	/* what it may send (gk_budget.h) */
	GK_FACET_LEARN,		/* any name, its owner told (gk_learn.h) */
	GK_FACET_ASK,		/* questions to its owner (gk_ask.h) */
	GK_FACET_LIMITS,	/* budgets and what it holds (gk_limit.h) */
	GK_FACET_CONTAIN,	/* its processes: a cgroup with limits */
	GK_FACET__MAX,
};

struct gk_facet {
	const char	*name;
	/*
	 * The cage c begins as s says: 0, or -1 with the words for the one
	 * who asked in err (then the facets before it end). A facet with
	 * nothing to do for s leaves its slot NULL. May be NULL.
	 */
	int	(*begin)(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
	/* What the cage.destroy audit line says of it, added to d, before
	 * any facet ends. May be NULL. */
	void	(*ended)(const struct gk_cage *c, struct json_object *d);
	/* The cage ends: whatever it began goes, its slot with it. Runs
	 * for every facet whose begin succeeded. May be NULL. */
	void	(*end)(struct gk_cage *c, const char *reason);
};

/* The table, one row per facet, in begin order (gk_facets.c). */
extern const struct gk_facet gk_facets[GK_FACET__MAX];

/* A facet's slot in c: what its begin put there (NULL: nothing). */
void	*gk_cage_facet(const struct gk_cage *c, enum gk_facet_id f);
void	 gk_cage_facet_set(struct gk_cage *c, enum gk_facet_id f, void *p);
/* What the daemon gave a facet for every cage of t (its hooks), or
 * NULL; the table keeps the pointer, the caller the thing. */
void	 gk_cage_table_set_facet(struct gk_cage_table *t, enum gk_facet_id f,
	    const void *hooks);
const void *gk_cage_table_facet(const struct gk_cage_table *t,
	    enum gk_facet_id f);
/* The address a namespace cage's plumbing gave it: in its begin only
 * (before the cage is in the table). */
struct gk_addr;
void	 gk_cage_set_source(struct gk_cage *c, const struct gk_addr *a);
/* The same, from one of t's cages. */
const void *gk_cage_facet_hooks(const struct gk_cage *c, enum gk_facet_id f);

#endif /* GK_FACET_H */
