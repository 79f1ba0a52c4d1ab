/*
 * dns_cache: the resolver's shared answer cache, keyed by (lower-case
 * name, type, class). Entries live at most `cap` seconds whatever the
 * upstream TTL said; the cap is applied at lookup too, so lowering it
 * (SIGHUP) takes effect at once. Bounded: the oldest entries are evicted.
 * Times are monotonic seconds supplied by the caller.
 */
#ifndef DNS_CACHE_H
#define DNS_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dns/dns_msg.h"

struct dns_cached {
	uint8_t		 rcode;
	uint16_t	 ancount, nscount;
	const uint8_t	*rrs;		/* see dns_reply_records() */
	size_t		 rrs_len;
	time_t		 stored;
	time_t		 expires;	/* already capped */
	size_t		 naddrs;
	const struct dns_addr *addrs;	/* TTLs as received */
};

struct dns_cache;

struct dns_cache *dns_cache_new(size_t max_entries);
void		 dns_cache_free(struct dns_cache *c);
size_t		 dns_cache_count(const struct dns_cache *c);

/* NULL when absent or expired at `now` under `cap`. The result is valid
 * until the next put or flush. */
const struct dns_cached *dns_cache_get(struct dns_cache *c, const char *name,
		    size_t name_len, uint16_t qtype, uint16_t qclass,
		    uint32_t cap, time_t now);

/*
 * Store an upstream answer (msg/len as received, `a` from
 * dns_answer_parse). Lifetime is min(a->min_ttl, cap) seconds; a
 * lifetime of 0 is not stored. Returns 0, or -1 if not stored.
 */
int		 dns_cache_put(struct dns_cache *c, const char *name,
		    size_t name_len, uint16_t qtype, uint16_t qclass,
		    const uint8_t *msg, size_t len, const struct dns_answer *a,
		    uint32_t cap, time_t now);

void		 dns_cache_flush(struct dns_cache *c);

#endif /* DNS_CACHE_H */
