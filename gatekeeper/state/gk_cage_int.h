/*
 * gk_cage_int.h: what gk_cage.c (the table) and gk_pins.c (each cage's
 * pins) share.
 */
#ifndef GK_CAGE_INT_H
#define GK_CAGE_INT_H

#include <stddef.h>
#include <time.h>

#include "gatekeeper/state/gk_cage.h"

struct gk_cage_table {
	struct gk_cage	**by_src;
	struct gk_cage	**by_id;
	size_t		  nbuckets;	/* power of two, both tables */
	size_t		  count;
	gk_pin_sync_fn	  sync;
	void		 *sync_arg;
	const struct gk_hostpolicy *policy;	/* NULL: none */
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

#endif /* GK_CAGE_INT_H */
