/*
 * nft_testutil: what the nft_rules tests share: the configuration they
 * build rulesets for (gateway 10.143.0.1, cages 10.143.0.0/16, default
 * proxy ports).
 */
#ifndef NFT_TESTUTIL_H
#define NFT_TESTUTIL_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "nft/nft_int.h"

static inline struct nft_conf
nft_test_conf(uint16_t dns, uint16_t tport)
{
	struct nft_conf c;

	memset(&c, 0, sizeof(c));
	inet_pton(AF_INET, "10.143.0.1", &c.gateway);
	inet_pton(AF_INET, "10.143.0.0", &c.subnet);
	c.prefix = 16;
	c.dns_port = dns;
	c.socks_port = 1080;
	c.http_port = 3128;
	c.transparent_port = tport;
	return c;
}

#endif /* NFT_TESTUTIL_H */
