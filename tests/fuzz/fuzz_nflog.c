/*
 * Fuzz nft_nflog_parse over what the log group's socket could read.
 * Invariants: no read outside the buffer (the sanitizers); every refusal
 * reported has a message of its own (at most one per 48 bytes: a netlink
 * header, the nfgenmsg and an attribute with a 20-byte IPv4 header and
 * the ports); the same input parses the same way twice.
 */
#include <stdlib.h>
#include <string.h>

#include "nft/nft.h"
#include "tests/fuzz/fuzz_check.h"

struct seen {
	size_t			 n;
	uint32_t		 sum;
};

static void
take(void *arg, const struct nft_refusal *r)
{
	struct seen *s = arg;

	s->n++;
	s->sum = s->sum * 31 + r->ifindex + r->src.s_addr + r->dst.s_addr +
	    r->sport + r->dport;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a = { 0, 0 }, b = { 0, 0 };
	size_t n;

	n = nft_nflog_parse(data, size, take, &a);
	CHECK(n == a.n);
	CHECK(n <= size / (16 + 4 + 4 + 24) + 1);
	CHECK(nft_nflog_parse(data, size, take, &b) == n);
	CHECK(a.sum == b.sum);
	return 0;
}
