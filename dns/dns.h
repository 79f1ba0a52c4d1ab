/*
 * dns: the allowlisting resolver (UDP and TCP on the gateway address).
 * The source address of a query names the cage; its allowlist decides.
 */
#ifndef DNS_H
#define DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"

struct event_base;
struct gk_cage_table;
struct gk_audit;
struct gk_upstream;

struct dns_server_conf {
	struct gk_addr			 listen;
	uint16_t			 port;
	const struct gk_upstream	*upstreams;	/* n == 0: resolv.conf */
	size_t				 nupstreams;
	uint32_t			 ttl_cap;
	uint32_t			 pin_grace;
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

/*
 * Name lookups for the proxies: the same cache and upstream queries as
 * the cages' own DNS (a question in flight is asked upstream once). No
 * policy is applied here and nothing is pinned; the caller decides.
 */
#define DNS_LOOKUP_MAX	16

struct dns_lookup_result {
	uint8_t		rcode;		/* DNS_RC_*; SERVFAIL on failure */
	size_t		naddrs;
	struct gk_addr	addrs[DNS_LOOKUP_MAX];
};

enum dns_lookup_status {
	DNS_LOOKUP_DONE,	/* answered from the cache: *res is filled */
	DNS_LOOKUP_PENDING,	/* cb runs later unless cancelled */
	DNS_LOOKUP_FAILED,	/* bad name or out of resources */
};

struct dns_waiter;
typedef void (*dns_lookup_cb)(void *arg, const struct dns_lookup_result *res);

/* The name's addresses of family (AF_INET: A, AF_INET6: AAAA). *handle
 * is set when PENDING. */
enum dns_lookup_status dns_lookup(struct dns_server *s, const char *name,
		    int family, dns_lookup_cb cb, void *arg,
		    struct dns_lookup_result *res, struct dns_waiter **handle);
/* The cache's answer alone (nothing asked upstream, no callback); false
 * when the cache has none or the name is not one. */
bool		 dns_lookup_cached(struct dns_server *s, const char *name,
		    int family, struct dns_lookup_result *res);
/* The callback will not run; call only before it has run. */
void		 dns_lookup_cancel(struct dns_waiter *w);

#endif /* DNS_H */
