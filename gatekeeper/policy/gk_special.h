/*
 * gk_special: addresses a proxy must never connect to unless a cage's
 * allowlist names them explicitly by CIDR (loopback, link-local, cloud
 * metadata, private ranges, this host's own addresses and gateways...).
 * A hostname that resolves to one of them is a DNS-rebinding attempt.
 *
 * gk_special_classify() is pure. struct gk_hostaddrs holds this host's
 * interface addresses and gateways; gk_hostaddrs_load() fills it (I/O),
 * the /proc route parsers are pure and work on text.
 */
#ifndef GK_SPECIAL_H
#define GK_SPECIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "gatekeeper/base/gk_addr.h"

enum gk_special {
	GK_SPECIAL_NONE,	/* ordinary public unicast */
	GK_SPECIAL_LOOPBACK,
	GK_SPECIAL_UNSPECIFIED,	/* 0.0.0.0/8, :: */
	GK_SPECIAL_LINK_LOCAL,
	GK_SPECIAL_MULTICAST,
	GK_SPECIAL_BROADCAST,
	GK_SPECIAL_METADATA,	/* cloud instance metadata endpoints */
	GK_SPECIAL_PRIVATE,	/* RFC 1918, CGNAT, ULA */
	GK_SPECIAL_RESERVED,	/* IETF reserved, unallocated, bad family */
	GK_SPECIAL_HOST,	/* this host's own address or a gateway */
};
#define GK_SPECIAL_COUNT	(GK_SPECIAL_HOST + 1)

#define GK_HOSTADDRS_MAX	256

struct gk_hostaddrs {
	size_t		 n;
	struct gk_addr	 addrs[GK_HOSTADDRS_MAX];
};

enum gk_hostaddrs_status {
	GK_HOSTADDRS_OK,
	GK_HOSTADDRS_INVALID,	/* a malformed line (the others still count) */
	GK_HOSTADDRS_FULL,	/* more than GK_HOSTADDRS_MAX addresses */
};

/* "none", "loopback", "link_local", ...; "unknown" out of range. */
const char	*gk_special_name(enum gk_special c);
/* The same for people, to follow "X is" ("the cloud metadata service
 * (it hands out the machine's credentials)", "a private network address
 * (...)"). */
const char	*gk_special_what(enum gk_special c);
/* host may be NULL. IPv6 forms embedding IPv4 take the IPv4's class. */
enum gk_special	 gk_special_classify(const struct gk_addr *a,
		    const struct gk_hostaddrs *host);

/*
 * Names that lead to special addresses by definition, without a lookup
 * (an asking cage never asks about them): localhost and below it
 * (loopback, RFC 6761), .local (link-local, mDNS), .internal and
 * .home.arpa (private networks, where cloud metadata names live too),
 * .arpa's reverse zones, .onion and .invalid (reserved). name is a
 * normalized host name (lower case, no trailing dot).
 */
enum gk_special	 gk_special_name_classify(const char *name);

void		 gk_hostaddrs_init(struct gk_hostaddrs *h);
/* 0 (also when already present) or -1 when full. */
int		 gk_hostaddrs_add(struct gk_hostaddrs *h,
		    const struct gk_addr *a);
bool		 gk_hostaddrs_has(const struct gk_hostaddrs *h,
		    const struct gk_addr *a);
/* Add the gateway of every up gateway route (not only default ones). */
enum gk_hostaddrs_status gk_hostaddrs_parse_route4(const char *text,
		    size_t len, struct gk_hostaddrs *h);
/* The same for /proc/net/ipv6_route text, every routing table. */
enum gk_hostaddrs_status gk_hostaddrs_parse_route6(const char *text,
		    size_t len, struct gk_hostaddrs *h);
/*
 * Reset h, then add every interface address (getifaddrs) and gateway.
 * 0, or -1 with errno (ENOBUFS: full, EINVAL: unparsable /proc line);
 * on -1 h still holds everything that was found.
 */
int		 gk_hostaddrs_load(struct gk_hostaddrs *h);

#endif /* GK_SPECIAL_H */
