/*
 * dns_upstream: the resolver's upstream client (c-ares on the daemon's
 * libevent loop): raw wire-format queries out, raw answers back.
 */
#ifndef DNS_UPSTREAM_H
#define DNS_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/state/gk_conf.h"

struct event_base;
struct dns_upstream;

/*
 * Called once per dns_upstream_send(): ok with the raw answer, or !ok
 * (timeout, network error, destruction) with abuf NULL.
 */
typedef void (*dns_upstream_cb)(void *arg, bool ok, const uint8_t *abuf,
    size_t alen);

/* n == 0: the servers in the host's /etc/resolv.conf. */
struct dns_upstream *dns_upstream_new(struct event_base *base,
		    const struct gk_upstream *ups, size_t n,
		    uint32_t timeout_ms, char *err, size_t errlen);
/* Outstanding callbacks run with ok == false before this returns. */
void		 dns_upstream_free(struct dns_upstream *u);
int		 dns_upstream_send(struct dns_upstream *u, const uint8_t *q,
		    size_t qlen, dns_upstream_cb cb, void *arg);
/* A comma-separated description of the servers in use, for logs. */
const char	*dns_upstream_describe(const struct dns_upstream *u);

#endif /* DNS_UPSTREAM_H */
