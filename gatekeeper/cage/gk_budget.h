/*
 * gk_budget: a cage's upload budgets, the budget facet (gk_facet.h):
 * bytes the cage may send upstream, in total and to the hosts a pattern
 * matches (gk_upload.h), from its spec and from gatekeeperd's default
 * for every cage (each applies; the tighter one bites first).
 *
 * A tunnel reserves bytes before it sends them (gk_budget_take, at most
 * GK_BUDGET_GRANT at a time, less as a budget runs out) and gives back
 * what it did not send when it ends (gk_budget_give), so a budget is
 * never exceeded, even by tunnels sending at once. A spent budget
 * refuses new connections to its hosts (gk_budget_spent) and cuts each
 * tunnel to them as it tries to send more. cage.show and the
 * cage.destroy audit line carry each budget with what was sent.
 */
#ifndef GK_BUDGET_H
#define GK_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_upload.h"

#define GK_BUDGET_GRANT		(256 * 1024)

struct gk_cage;
struct gk_cage_spec;
struct gk_cage_table;
struct json_object;

/* The default every cage of t gets (the daemon's max-upload), as the
 * table's hooks for this facet; the caller keeps the array. */
struct gk_budget_conf {
	const struct gk_upload	*v;
	size_t			 n;
};

/* New cages of t get conf's budgets too (the caller keeps conf). */
void		 gk_budget_configure(struct gk_cage_table *t,
		    const struct gk_budget_conf *conf);

int		 gk_budget_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_budget_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_budget_end(struct gk_cage *c, const char *reason);

/* Does a budget of c (NULL: no) count bytes to host:port? */
bool		 gk_budget_covers(const struct gk_cage *c, const char *host,
		    uint16_t port);
/* Is a budget of c counting host:port spent? why: which, with figures. */
bool		 gk_budget_spent(const struct gk_cage *c, const char *host,
		    uint16_t port, char *why, size_t whylen);
/*
 * Reserve bytes for a tunnel to host:port: how many it may send (0: a
 * budget is spent, why says which, with its figures). *mask: the
 * budgets the tunnel is counted in, set at its first call (0) and kept
 * for the others and for gk_budget_give.
 */
uint64_t	 gk_budget_take(struct gk_cage *c, const char *host,
		    uint16_t port, uint32_t *mask, char *why, size_t whylen);
/* A tunnel ended having reserved n bytes more than it sent. */
void		 gk_budget_give(struct gk_cage *c, uint32_t mask, uint64_t n);
/* [{"budget":"1M@*.example.com","bytes":1048576,"sent":N,"refused":K}]
 * (NULL: c has none) */
struct json_object *gk_budget_json(const struct gk_cage *c);

#endif /* GK_BUDGET_H */
