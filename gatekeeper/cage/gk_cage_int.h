/*
 * gk_cage_int.h: the cage itself, what gk_cage.c (the table, begin and
 * end) and gk_pins.c (each cage's pins) share. No other file includes it
 * (tests/check_layers.py): the rest of gatekeeperd sees a cage through
 * gk_cage.h and its facets' slots (gk_facet.h).
 */
#ifndef GK_CAGE_INT_H
#define GK_CAGE_INT_H

#include <stddef.h>
#include <time.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"

struct gk_cage {
	char		 id[GK_CAGE_ID_LEN + 1];
	char		 label[GK_CAGE_LABEL_MAX + 1];
	char		 token[GK_CAGE_TOKEN_LEN + 1];
	uid_t		 uid;
	struct gk_addr	 source;
	struct gk_allowlist *allow;		/* owned */
	time_t		 created;		/* wall clock, for display */

	uint64_t	 denied[GK_KIND__MAX];
	uint64_t	 dns_queries;
	uint64_t	 connections;

	struct gk_cage_owner *owner;
	LIST_ENTRY(gk_cage) owned;		/* in owner->cages */
	void		*facet[GK_FACET__MAX];	/* each facet's slot */

	struct gk_cage_table *table;
	struct gk_pinset *pins;
	struct gk_cage	*src_next;
	struct gk_cage	*id_next;
};

struct gk_cage_table {
	struct gk_cage	**by_src;
	struct gk_cage	**by_id;
	size_t		  nbuckets;	/* power of two, both tables */
	size_t		  count;
	gk_pin_sync_fn	  sync;
	void		 *sync_arg;
	const struct gk_hostpolicy *policy;	/* NULL: none */
	const void	 *facet[GK_FACET__MAX];	/* their hooks */
	struct event_base *base;
	struct gk_audit	 *audit;
	gk_cage_end_fn	  on_end;	/* NULL: none */
	void		 *on_end_arg;
};

struct pin {
	struct pin	*next;		/* hash chain */
	size_t		 heap_idx;
	struct gk_addr	 addr;
	time_t		 expires;
	time_t		 synced;	/* the kernel keeps addr until then
					 * (0: not told through this pin) */
	char		 name[];	/* NUL-terminated */
};

struct gk_pinset {
	struct pin	**buckets;
	size_t		  nbuckets;	/* power of two */
	struct pin	**heap;		/* min-heap on expires */
	size_t		  count;
	size_t		  cap;		/* of heap */
};

/* Free a cage's pins (NULL: none). */
void	gk_pins_free(struct gk_pinset *ps);
/* The cage ends: the kernel forgets the addresses it was told of (the
 * table's sync hook, `until` 0). */
void	gk_pins_unsync(struct gk_cage *c, time_t now);

#endif /* GK_CAGE_INT_H */
