/*
 * gk_metrics: Prometheus text exposition on GET /metrics (libevent http).
 */
#ifndef GK_METRICS_H
#define GK_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"

struct event_base;
struct evbuffer;
struct gk_cage_table;
struct gk_metrics;

struct gk_metrics *gk_metrics_new(struct event_base *base,
		    const struct gk_addr *addr, uint16_t port,
		    const struct gk_cage_table *cages, char *err,
		    size_t errlen);
void		 gk_metrics_free(struct gk_metrics *m);
/* The whole exposition, appended to out. */
void		 gk_metrics_render(struct evbuffer *out,
		    const struct gk_cage_table *cages);

#endif /* GK_METRICS_H */
