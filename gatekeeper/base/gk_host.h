/*
 * gk_host: where a connection goes, as every part sees it: the SOCKS5
 * and HTTP parsers fill it, the policy checks it, the dial, the peek, the
 * logs and the audit read it. One struct, so nothing converts between
 * copies.
 */
#ifndef GK_HOST_H
#define GK_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "gatekeeper/base/gk_addr.h"

/* The longest name text kept: a SOCKS5 domain field (255 bytes), also
 * when it is refused (the refusal names it). An accepted name is at most
 * GK_NAME_MAX bytes. */
#define GK_HOST_MAX	255

struct gk_host {
	bool		 is_addr;
	struct gk_addr	 addr;			/* if is_addr */
	/* is_addr: the address's text; else the name, normalized by
	 * gk_name (lower case, no trailing dot); or a label for logs
	 * ("-" when there is no target yet, a pinned name for an
	 * address: proxy_target_label) */
	char		 name[GK_HOST_MAX + 1];
	uint16_t	 port;
};

#endif /* GK_HOST_H */
