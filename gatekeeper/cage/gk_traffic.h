/*
 * gk_traffic: what passed, per cage and per destination, the traffic
 * facet (gk_facet.h): each tunnel's bytes up (cage to world) and down,
 * added to its host and port as it ends; at most GK_TRAFFIC_HOSTS
 * destinations, the rest together as "other". cage.show lists it, and the
 * cage.destroy audit line carries it with the cage's duration, so "what
 * did this job send, and where" has one answer. Tunnels still open when
 * the cage ends are in its line: the cage's end ends its connections
 * (gk_limit_release) before the line is written.
 */
#ifndef GK_TRAFFIC_H
#define GK_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#define GK_TRAFFIC_HOSTS	64

struct gk_cage;
struct gk_cage_spec;
struct json_object;

int		 gk_traffic_begin(struct gk_cage *c, const struct gk_cage_spec *s,
		    char *err, size_t errlen);
void		 gk_traffic_ended(const struct gk_cage *c, struct json_object *d);
void		 gk_traffic_end(struct gk_cage *c, const char *reason);

/* A tunnel of c to host:port ended having moved up and down bytes. c
 * may be NULL (its cage is gone: nothing to add to). */
void		 gk_traffic_add(struct gk_cage *c, const char *host,
		    uint16_t port, uint64_t up, uint64_t down);
/* {"up","down","connections","hosts":[{"host","port","up","down",
 * "connections"}],"other":{...} (when some were folded)} */
struct json_object *gk_traffic_json(const struct gk_cage *c);

#endif /* GK_TRAFFIC_H */
