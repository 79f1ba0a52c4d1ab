/*
 * dns_int.h: the resolver core shared by dns_server.c (sockets) and
 * dns_resolve.c (answers). The upstream client is dns_upstream.h.
 */
#ifndef DNS_INT_H
#define DNS_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dns/dns.h"
#include "dns/dns_cache.h"
#include "dns/dns_msg.h"
#include "dns/dns_upstream.h"
#include "gatekeeper/base/gk_addr.h"

#define DNS_UDP_BATCH		32	/* datagrams per recvmmsg */
#define DNS_UDP_ROUNDS		4	/* batches per wake-up */
#define DNS_UDP_INMAX		4096	/* larger queries are FORMERR */
#define DNS_UDP_OUTMAX		1500	/* >= DNS_EDNS_SIZE */
#define DNS_PENDING_MAX		10000	/* distinct upstream queries */
#define DNS_WAITERS_MAX		256	/* clients waiting on one query */
#define DNS_TCP_MAX		4096	/* TCP clients (each cage: its own
					   cap, gk_limit) */
#define DNS_TCP_IDLE_SEC	10
#define DNS_TCP_OUT_HIGH	(256 * 1024)
#define DNS_PENDING_BUCKETS	4096

struct dns_tcp;

/* Where a reply goes. */
struct dns_client {
	struct gk_addr		 addr;
	struct sockaddr_storage	 ss;		/* UDP peer */
	socklen_t		 sslen;
	struct dns_tcp		*tcp;		/* NULL: UDP */
};

struct dns_pending;
struct gk_listen;

struct dns_server {
	struct event_base	*base;
	struct gk_cage_table	*cages;
	struct gk_audit		*audit;
	struct dns_upstream	*up;
	struct dns_cache	*cache;
	uint32_t		 ttl_cap;
	uint32_t		 pin_grace;	/* seconds after the TTL */
	uint32_t		 timeout_ms;
	size_t			 cache_size;
	bool			 stopping;

	int			 udp_fd;
	struct event		*udp_ev;
	struct gk_listen	*tcp_listen;	/* counts the TCP clients */
	TAILQ_HEAD(, dns_tcp)	 tcp_conns;
	struct event		*expire_ev;

	struct dns_pending	*pending[DNS_PENDING_BUCKETS];
	size_t			 npending;
	uint16_t		 next_id;
	uint64_t		 next_query_id;	/* a client query's, for the
						   log (dns_handle_query) */
};

/* dns_resolve.c */
/*
 * Handle one query; write an immediate reply into out and return its
 * length, or return 0 when there is nothing to send now (dropped, or
 * waiting on the upstream: dns_send_reply() is called later).
 */
size_t		 dns_handle_query(struct dns_server *s,
		    const struct dns_client *cl, const uint8_t *buf,
		    size_t len, time_t now, uint8_t *out, size_t outlen);
void		 dns_pending_free_all(struct dns_server *s);

/* dns_server.c */
void		 dns_send_reply(struct dns_server *s,
		    const struct dns_client *cl, const uint8_t *msg,
		    size_t len);
void		 dns_tcp_ref(struct dns_tcp *t);
void		 dns_tcp_unref(struct dns_tcp *t);

#endif /* DNS_INT_H */
