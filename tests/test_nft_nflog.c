/*
 * Tests for nft_nflog_parse: the refused SYNs in what the log group's
 * socket reads, as nfnetlink_log frames them (built here with libmnl):
 * the link, addresses and ports; IP options; several messages in one
 * read; anything not an IPv4 TCP segment with its ports, or truncated
 * anywhere, skipped without reading past the buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <libmnl/libmnl.h>

#include "nft/nft.h"

struct got {
	struct nft_refusal	 r[8];
	size_t			 n;
};

static void
take(void *arg, const struct nft_refusal *r)
{
	struct got *g = arg;

	assert_true(g->n < 8);
	g->r[g->n++] = *r;
}

/* An IPv4 TCP SYN 10.143.0.2:40000 -> dst:port, with optlen bytes of IP
 * options (a multiple of 4). Returns its length. */
static size_t
syn(uint8_t *p, const char *dst, uint16_t port, size_t optlen, uint8_t proto)
{
	size_t ihl = 20 + optlen;

	memset(p, 0, ihl + 20);
	p[0] = (uint8_t)(0x40 | ihl / 4);
	p[2] = (uint8_t)((ihl + 20) >> 8);
	p[3] = (uint8_t)(ihl + 20);
	p[8] = 64;
	p[9] = proto;
	inet_pton(AF_INET, "10.143.0.2", p + 12);
	inet_pton(AF_INET, dst, p + 16);
	if (optlen > 0)
		memset(p + 20, 1, optlen);	/* NOPs */
	p[ihl] = 40000 >> 8;
	p[ihl + 1] = 40000 & 0xff;
	p[ihl + 2] = (uint8_t)(port >> 8);
	p[ihl + 3] = (uint8_t)port;
	p[ihl + 13] = 0x02;
	return ihl + 20;
}

/* One NFULNL_MSG_PACKET at buf: header, in-device, prefix, payload. */
static size_t
packet(char *buf, uint32_t ifindex, const uint8_t *pl, size_t len)
{
	struct nfulnl_msg_packet_hdr ph = { htons(0x0800), 2, 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;

	nlh->nlmsg_type = NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_INET;
	g->res_id = htons(NFT_LOG_GROUP);
	mnl_attr_put(nlh, NFULA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put_u32(nlh, NFULA_IFINDEX_INDEV, htonl(ifindex));
	mnl_attr_put_strz(nlh, NFULA_PREFIX, "");
	mnl_attr_put(nlh, NFULA_PAYLOAD, len, pl);
	return nlh->nlmsg_len;
}

static void
test_one(void **state)
{
	char buf[512];
	uint8_t pl[128];
	struct got g = { .n = 0 };
	char a[INET_ADDRSTRLEN];
	size_t n;

	(void)state;
	n = packet(buf, 17, pl, syn(pl, "203.0.113.66", 443, 0, 6));
	assert_int_equal(nft_nflog_parse((uint8_t *)buf, n, take, &g), 1);
	assert_int_equal(g.r[0].ifindex, 17);
	assert_string_equal(inet_ntop(AF_INET, &g.r[0].src, a, sizeof(a)),
	    "10.143.0.2");
	assert_string_equal(inet_ntop(AF_INET, &g.r[0].dst, a, sizeof(a)),
	    "203.0.113.66");
	assert_int_equal(g.r[0].sport, 40000);
	assert_int_equal(g.r[0].dport, 443);
}

/* Options move the ports; a snap of just the ports is enough. */
static void
test_options_and_snap(void **state)
{
	char buf[512];
	uint8_t pl[128];
	struct got g = { .n = 0 };
	size_t n, len;

	(void)state;
	len = syn(pl, "192.0.2.10", 22, 40, 6);
	n = packet(buf, 3, pl, 60 + 4);
	assert_int_equal(nft_nflog_parse((uint8_t *)buf, n, take, &g), 1);
	assert_int_equal(g.r[0].dport, 22);
	assert_true(len > 64);
	/* one byte short of the destination port: skipped */
	n = packet(buf, 3, pl, 60 + 3);
	assert_int_equal(nft_nflog_parse((uint8_t *)buf, n, take, &g), 0);
}

/* Several messages in one read, and what is skipped between them. */
static void
test_several(void **state)
{
	char buf[2048];
	uint8_t pl[128];
	struct got g = { .n = 0 };
	size_t n = 0;

	(void)state;
	n += packet(buf + n, 5, pl, syn(pl, "198.51.100.1", 80, 0, 6));
	n += packet(buf + n, 5, pl, syn(pl, "198.51.100.2", 53, 0, 17));
	pl[0] = 0x60;	/* IPv6 */
	n += packet(buf + n, 5, pl, 40);
	n += packet(buf + n, 5, pl, syn(pl, "198.51.100.3", 8080, 0, 6));
	pl[6] = 0x00;
	pl[7] = 0x10;	/* a later fragment: no ports */
	n += packet(buf + n, 5, pl, 40);
	assert_int_equal(nft_nflog_parse((uint8_t *)buf, n, take, &g), 2);
	assert_int_equal(g.r[0].dport, 80);
	assert_int_equal(g.r[1].dport, 8080);
}

/* Every truncation of a read, and corrupted lengths: no more than what is
 * whole, and nothing read past the buffer (an exact-size copy; ASan). */
static void
test_truncated(void **state)
{
	char buf[1024];
	uint8_t pl[128], *cp;
	struct got g;
	size_t n = 0, k, i;

	(void)state;
	n += packet(buf + n, 9, pl, syn(pl, "203.0.113.1", 443, 4, 6));
	k = n;
	n += packet(buf + n, 9, pl, syn(pl, "203.0.113.2", 443, 0, 6));
	for (i = 0; i <= n; i++) {
		assert_non_null(cp = malloc(i == 0 ? 1 : i));
		memcpy(cp, buf, i);
		g.n = 0;
		nft_nflog_parse(cp, i, take, &g);
		assert_int_equal(g.n, i < k ? 0 : i < n ? 1 : 2);
		free(cp);
	}
	for (i = 0; i < n; i++) {
		assert_non_null(cp = malloc(n));
		memcpy(cp, buf, n);
		cp[i] ^= 0xff;
		g.n = 0;
		nft_nflog_parse(cp, n, take, &g);
		assert_true(g.n <= 2);
		free(cp);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_options_and_snap),
		cmocka_unit_test(test_several),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
