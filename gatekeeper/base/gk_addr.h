/*
 * gk_addr: IPv4/IPv6 addresses as plain values (no sockaddr juggling).
 */
#ifndef GK_ADDR_H
#define GK_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define GK_ADDR_STRLEN	46	/* INET6_ADDRSTRLEN */

struct gk_addr {
	sa_family_t	family;		/* AF_INET or AF_INET6 */
	uint8_t		bytes[16];	/* IPv4 uses the first 4, rest zero */
};

/* Parse a bare IPv4 or IPv6 literal (no brackets, no port). 0 or -1. */
int		 gk_addr_parse(const char *s, struct gk_addr *out);
/* Parse "IP", "IP:PORT", "[IPv6]" or "[IPv6]:PORT"; *port untouched if none. */
int		 gk_addr_parse_port(const char *s, struct gk_addr *out,
		    uint16_t *port);
const char	*gk_addr_ntop(const struct gk_addr *a, char *buf, size_t len);
void		 gk_addr_from_bytes(struct gk_addr *a, int family,
		    const void *bytes);
int		 gk_addr_from_sockaddr(struct gk_addr *a,
		    const struct sockaddr *sa);
/* Fill a sockaddr_storage; returns its length. */
socklen_t	 gk_addr_to_sockaddr(const struct gk_addr *a, uint16_t port,
		    struct sockaddr_storage *ss);
bool		 gk_addr_eq(const struct gk_addr *a, const struct gk_addr *b);
uint32_t	 gk_addr_hash(const struct gk_addr *a);
/* A total order on addresses, for qsort and bsearch (two gk_addr *). */
int		 gk_addr_cmp(const void *a, const void *b);
size_t		 gk_addr_len(const struct gk_addr *a);	/* 4 or 16 */
bool		 gk_addr_in_prefix(const struct gk_addr *a,
		    const struct gk_addr *net, unsigned prefix);

#endif /* GK_ADDR_H */
