/*
 * dns: the allowlisting resolver (UDP and TCP on the gateway address).
 * The source address of a query names the cage; its allowlist decides.
 */
#ifndef DNS_H
#define DNS_H

#include <stddef.h>
#include <stdint.h>

#include "gk_addr.h"
#include "gk_conf.h"

struct event_base;
struct gk_cage_table;
struct gk_audit;

struct dns_server_conf {
	struct gk_addr			 listen;
	uint16_t			 port;
	const struct gk_upstream	*upstreams;	/* n == 0: resolv.conf */
	size_t				 nupstreams;
	uint32_t			 ttl_cap;
	uint32_t			 timeout_ms;
	size_t				 cache_size;
};

struct dns_server;

struct dns_server *dns_server_new(struct event_base *base,
		    const struct dns_server_conf *sc,
		    struct gk_cage_table *cages, struct gk_audit *audit,
		    char *err, size_t errlen);
/* SIGHUP: new upstreams, TTL cap, timeout, cache size; cages untouched. */
int		 dns_server_reload(struct dns_server *s,
		    const struct dns_server_conf *sc, char *err,
		    size_t errlen);
void		 dns_server_free(struct dns_server *s);
const char	*dns_server_upstreams(const struct dns_server *s);
size_t		 dns_server_cache_entries(const struct dns_server *s);

#endif /* DNS_H */
