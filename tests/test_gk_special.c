/*
 * Tests for gk_special: every range boundary, metadata endpoints, IPv6
 * forms embedding IPv4, documentation ranges, host addresses and the
 * /proc/net/route and /proc/net/ipv6_route parsers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/policy/gk_special.h"

#define NITEMS(x)	(sizeof(x) / sizeof((x)[0]))

struct class_case {
	const char	*addr;
	enum gk_special	 cls;
};

#define NONE	GK_SPECIAL_NONE
#define LOOP	GK_SPECIAL_LOOPBACK
#define UNSPEC	GK_SPECIAL_UNSPECIFIED
#define LLOCAL	GK_SPECIAL_LINK_LOCAL
#define MCAST	GK_SPECIAL_MULTICAST
#define BCAST	GK_SPECIAL_BROADCAST
#define META	GK_SPECIAL_METADATA
#define PRIV	GK_SPECIAL_PRIVATE
#define RESV	GK_SPECIAL_RESERVED
#define HOST	GK_SPECIAL_HOST

static void
addr(const char *s, struct gk_addr *a)
{
	if (gk_addr_parse(s, a) == -1)
		fail_msg("bad test address '%s'", s);
}

static void
run_cases(const struct class_case *c, size_t n, const struct gk_hostaddrs *h)
{
	struct gk_addr a;
	enum gk_special got;
	size_t i;

	for (i = 0; i < n; i++) {
		addr(c[i].addr, &a);
		got = gk_special_classify(&a, h);
		if (got != c[i].cls)
			fail_msg("%s: got %s, want %s", c[i].addr,
			    gk_special_name(got), gk_special_name(c[i].cls));
	}
}

static void
test_ipv4_boundaries(void **state)
{
	static const struct class_case cases[] = {
		{ "0.0.0.0", UNSPEC }, { "0.255.255.255", UNSPEC },
		{ "1.0.0.0", NONE },
		{ "9.255.255.255", NONE }, { "10.0.0.0", PRIV },
		{ "10.255.255.255", PRIV }, { "11.0.0.0", NONE },
		{ "100.63.255.255", NONE }, { "100.64.0.0", PRIV },
		{ "100.127.255.255", PRIV }, { "100.128.0.0", NONE },
		{ "126.255.255.255", NONE }, { "127.0.0.0", LOOP },
		{ "127.0.0.1", LOOP }, { "127.255.255.255", LOOP },
		{ "128.0.0.0", NONE },
		{ "169.253.255.255", NONE }, { "169.254.0.0", LLOCAL },
		{ "169.254.255.255", LLOCAL }, { "169.255.0.0", NONE },
		{ "172.15.255.255", NONE }, { "172.16.0.0", PRIV },
		{ "172.31.255.255", PRIV }, { "172.32.0.0", NONE },
		{ "191.255.255.255", NONE }, { "192.0.0.0", RESV },
		{ "192.0.0.255", RESV }, { "192.0.1.0", NONE },
		{ "192.167.255.255", NONE }, { "192.168.0.0", PRIV },
		{ "192.168.255.255", PRIV }, { "192.169.0.0", NONE },
		{ "198.17.255.255", NONE }, { "198.18.0.0", RESV },
		{ "198.19.255.255", RESV }, { "198.20.0.0", NONE },
		{ "223.255.255.255", NONE }, { "224.0.0.0", MCAST },
		{ "239.255.255.255", MCAST }, { "240.0.0.0", RESV },
		{ "255.255.255.254", RESV }, { "255.255.255.255", BCAST },
		{ "8.8.8.8", NONE }, { "1.1.1.1", NONE },
	};

	(void)state;
	run_cases(cases, NITEMS(cases), NULL);
}

static void
test_ipv6_boundaries(void **state)
{
	static const struct class_case cases[] = {
		{ "::", UNSPEC }, { "::1", LOOP },
		{ "::1:0:0:0", RESV },		/* ::/8, no embedding */
		{ "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "ff::", RESV },
		{ "ff00::", MCAST }, { "ff02::1", MCAST },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", MCAST },
		{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "fe80::", LLOCAL }, { "fe80::1", LLOCAL },
		{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", LLOCAL },
		{ "fec0::", RESV },
		{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "fc00::", PRIV }, { "fd00::2", PRIV },
		{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PRIV },
		{ "100::", RESV }, { "100::ffff:ffff:ffff:ffff", RESV },
		{ "100:0:0:1::", RESV },	/* outside 2000::/3 anyway */
		{ "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "2000::", NONE },
		{ "2001:1::1", RESV }, { "2001:2::", RESV },
		{ "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", RESV },
		{ "2001:200::", NONE },
		{ "2001:4860:4860::8888", NONE },
		{ "2606:4700::1111", NONE }, { "2a00:1450::1", NONE },
		{ "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NONE },
		{ "4000::", RESV }, { "5f00::1", RESV }, { "64:ff9a::", RESV },
	};

	(void)state;
	run_cases(cases, NITEMS(cases), NULL);
}

static void
test_metadata(void **state)
{
	static const struct class_case cases[] = {
		{ "169.254.169.254", META }, { "169.254.169.253", LLOCAL },
		{ "169.254.169.255", LLOCAL },
		{ "169.254.170.2", META }, { "169.254.170.3", LLOCAL },
		{ "100.100.100.200", META }, { "100.100.100.201", PRIV },
		{ "168.63.129.16", META }, { "168.63.129.17", NONE },
		{ "192.0.0.192", META }, { "192.0.0.193", RESV },
		{ "fd00:ec2::254", META }, { "fd00:ec2::255", PRIV },
		{ "fd20:ce::254", META }, { "fd20:ce::253", PRIV },
		{ "::ffff:169.254.169.254", META },
		{ "64:ff9b::a9fe:a9fe", META },
		{ "2002:a9fe:a9fe::", META }, { "2002:a9fe:1::", LLOCAL },
		{ "2002:a93f:8110::", NONE },
		{ "2002:a83f:8110::", META },		/* 168.63.129.16 */
	};

	(void)state;
	run_cases(cases, NITEMS(cases), NULL);
}

static void
test_embedded(void **state)
{
	static const struct class_case cases[] = {
		/* IPv4-mapped ::ffff:0:0/96 */
		{ "::ffff:127.0.0.1", LOOP }, { "::ffff:8.8.8.8", NONE },
		{ "::ffff:10.1.2.3", PRIV }, { "::ffff:0.0.0.0", UNSPEC },
		{ "::ffff:255.255.255.255", BCAST },
		/* IPv4-compatible ::/96 (deprecated) */
		{ "::127.0.0.1", LOOP }, { "::8.8.8.8", NONE },
		{ "::2", UNSPEC }, { "::192.168.1.1", PRIV },
		/* NAT64 / SIIT 64:ff9b::/96 */
		{ "64:ff9b::127.0.0.1", LOOP }, { "64:ff9b::8.8.8.8", NONE },
		{ "64:ff9b::1:8.8.8.8", RESV },		/* outside the /96 */
		/* local-use NAT64 64:ff9b:1::/48 */
		{ "64:ff9b:1::10.0.0.1", PRIV },
		{ "64:ff9b:1:ffff:ffff:ffff:808:808", NONE },
		{ "64:ff9b:2::8.8.8.8", RESV },
		/* 6to4 2002::/16, IPv4 in bits 16..47 */
		{ "2002:7f00:1::", LOOP }, { "2002:c0a8:101::1", PRIV },
		{ "2002:808:808::1", NONE }, { "2002:e000:1::", MCAST },
		/* Teredo 2001::/32: server in bits 32..63, client inverted */
		{ "2001:0:808:808:0:0:80ff:fffe", LOOP },	/* client */
		{ "2001:0:808:808::f7f7:f7f7", NONE },
		{ "2001:0:a00:1::f7f7:f7f7", PRIV },		/* server */
		{ "2001:0:a9fe:a9fe::f7f7:f7f7", META },	/* server */
		{ "2001:0:808:808::5601:5601", META },		/* client */
		{ "2001:1::f7f7:f7f7", RESV },			/* not Teredo */
	};

	(void)state;
	run_cases(cases, NITEMS(cases), NULL);
}

/* Deliberately not special: the tests' fake internet lives here. */
static void
test_documentation(void **state)
{
	static const struct class_case cases[] = {
		{ "192.0.2.0", NONE }, { "192.0.2.255", NONE },
		{ "198.51.100.0", NONE }, { "198.51.100.255", NONE },
		{ "203.0.113.0", NONE }, { "203.0.113.255", NONE },
		{ "2001:db8::", NONE }, { "2001:db8::1", NONE },
		{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", NONE },
		{ "::ffff:192.0.2.1", NONE }, { "64:ff9b::203.0.113.9", NONE },
	};

	(void)state;
	run_cases(cases, NITEMS(cases), NULL);
}

static void
test_names(void **state)
{
	static const struct {
		enum gk_special	 cls;
		const char	*name;
	} cases[] = {
		{ NONE, "none" }, { LOOP, "loopback" },
		{ UNSPEC, "unspecified" }, { LLOCAL, "link_local" },
		{ MCAST, "multicast" }, { BCAST, "broadcast" },
		{ META, "metadata" }, { PRIV, "private" },
		{ RESV, "reserved" }, { HOST, "host" },
		{ (enum gk_special)GK_SPECIAL_COUNT, "unknown" },
		{ (enum gk_special)-1, "unknown" },
	};
	size_t i;

	(void)state;
	assert_int_equal(GK_SPECIAL_COUNT, 10);
	for (i = 0; i < NITEMS(cases); i++)
		assert_string_equal(gk_special_name(cases[i].cls),
		    cases[i].name);
	/* for people: each class says what it is */
	assert_non_null(strstr(gk_special_what(META),
	    "cloud metadata service"));
	assert_non_null(strstr(gk_special_what(PRIV), "private"));
	assert_non_null(strstr(gk_special_what(LOOP), "loopback"));
	for (i = 0; i < GK_SPECIAL_COUNT; i++)
		assert_true(strlen(gk_special_what((enum gk_special)i)) > 8);
	assert_string_equal(gk_special_what((enum gk_special)-1),
	    "a special address");
}

static void
test_bad_family(void **state)
{
	struct gk_addr a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(gk_special_classify(&a, NULL), RESV);
	a.family = AF_UNIX;
	assert_int_equal(gk_special_classify(&a, NULL), RESV);
}

static void
fill_hand(struct gk_hostaddrs *h)
{
	static const char *const mine[] = {
		"127.0.0.1", "198.51.100.7", "10.0.0.5", "2001:db8:1::7",
		"fe80::1", "203.0.113.1",
	};
	struct gk_addr a;
	size_t i;

	gk_hostaddrs_init(h);
	for (i = 0; i < NITEMS(mine); i++) {
		addr(mine[i], &a);
		assert_int_equal(gk_hostaddrs_add(h, &a), 0);
		assert_int_equal(gk_hostaddrs_add(h, &a), 0);	/* dup */
	}
	assert_int_equal(h->n, NITEMS(mine));
}

static void
test_host_by_hand(void **state)
{
	static const struct class_case cases[] = {
		{ "127.0.0.1", LOOP },		/* the range's name wins */
		{ "10.0.0.5", PRIV }, { "fe80::1", LLOCAL },
		{ "198.51.100.7", HOST }, { "198.51.100.8", NONE },
		{ "203.0.113.1", HOST }, { "2001:db8:1::7", HOST },
		{ "2001:db8:1::8", NONE },
		{ "::ffff:198.51.100.7", HOST },
		{ "64:ff9b::198.51.100.7", HOST },
		{ "2002:c633:6407::1", HOST },		/* 6to4 */
		{ "2001:0:cb00:7101::39cc:9bf8", HOST },	/* Teredo */
		{ "2001:0:808:808::39cc:9bf8", HOST },
		{ "8.8.8.8", NONE },
	};
	struct gk_hostaddrs h;

	(void)state;
	fill_hand(&h);
	run_cases(cases, NITEMS(cases), &h);
}

static void
test_host_full(void **state)
{
	struct gk_hostaddrs h;
	struct gk_addr a;
	uint8_t b[4] = { 198, 51, 0, 0 };
	size_t i;

	(void)state;
	gk_hostaddrs_init(&h);
	for (i = 0; i < GK_HOSTADDRS_MAX; i++) {
		b[2] = (uint8_t)(i >> 8);
		b[3] = (uint8_t)i;
		gk_addr_from_bytes(&a, AF_INET, b);
		assert_int_equal(gk_hostaddrs_add(&h, &a), 0);
	}
	assert_int_equal(gk_hostaddrs_add(&h, &a), 0);	/* present */
	b[2] = 0xff;
	gk_addr_from_bytes(&a, AF_INET, b);
	assert_int_equal(gk_hostaddrs_add(&h, &a), -1);
	assert_false(gk_hostaddrs_has(&h, &a));
	assert_int_equal(h.n, GK_HOSTADDRS_MAX);
}

/* /proc/net/route prints each __be32 as a native u32: little-endian. */
static const char route4_sample[] =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask"
    "\t\tMTU\tWindow\tIRTT                                           \n"
    "eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0"
    "                                                               \n"
    "eth0\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0"
    "                                                               \n"
    "wlan0\t00000000\t0100000A\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
    "wlan0\t0000000A\t00000000\t0001\t0\t0\t600\t000000FF\t0\t0\t0\n"
    "eth0\t0000A8C0\tFE02A8C0\t0003\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    "eth1\t00000000\t0101A8C0\t0002\t0\t0\t50\t00000000\t0\t0\t0\n"
    "docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0";

static const char route6_sample[] =
    "20010db8000100000000000000000000 40 "
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 "
    "00000001     eth0\n"
    "fe800000000000000000000000000000 40 "
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000002 00000000 "
    "00000001     eth0\n"
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00 "
    "fe80000000000000021122fffe334455 00000400 00000002 00000000 "
    "00000003     eth0\n"
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00 "
    "20010db8000100000000000000000001 00000400 00000001 00000000 "
    "00000003    wlan0\n"
    "00000000000000000000000000000001 80 "
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000000 00000002 00000000 "
    "80200001       lo\n"
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 ffffffff 00000001 00000000 "
    "00200200       lo\n"
    "00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00 "
    "fe800000000000000000000000000099 00000400 00000000 00000000 "
    "00000002    eth1\n";

static void
assert_hostaddrs(const struct gk_hostaddrs *h, const char *const *want,
    size_t n)
{
	struct gk_addr a;
	size_t i;

	if (h->n != n)
		fail_msg("got %zu addresses, want %zu", h->n, n);
	for (i = 0; i < n; i++) {
		addr(want[i], &a);
		if (!gk_hostaddrs_has(h, &a))
			fail_msg("%s missing", want[i]);
	}
}

static void
test_parse_route4(void **state)
{
	static const char *const want[] = {
		"192.168.2.1", "10.0.0.1", "192.168.2.254",
	};
	struct gk_hostaddrs h;

	(void)state;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	skip();
#endif
	gk_hostaddrs_init(&h);
	assert_int_equal(gk_hostaddrs_parse_route4(route4_sample,
	    strlen(route4_sample), &h), GK_HOSTADDRS_OK);
	assert_hostaddrs(&h, want, NITEMS(want));
	assert_int_equal(gk_hostaddrs_parse_route4("", 0, &h),
	    GK_HOSTADDRS_OK);
	assert_int_equal(h.n, NITEMS(want));
}

static void
test_parse_route6(void **state)
{
	static const char *const want[] = {
		"fe80::211:22ff:fe33:4455", "2001:db8:1::1",
	};
	struct gk_hostaddrs h;

	(void)state;
	gk_hostaddrs_init(&h);
	assert_int_equal(gk_hostaddrs_parse_route6(route6_sample,
	    strlen(route6_sample), &h), GK_HOSTADDRS_OK);
	assert_hostaddrs(&h, want, NITEMS(want));
}

struct route_case {
	int		 v6;
	const char	*text;
	enum gk_hostaddrs_status st;
	const char	*gw;	/* NULL: nothing added */
};

static const struct route_case route_cases[] = {
	{ 0, "", GK_HOSTADDRS_OK, NULL },
	{ 0, "\n\n  \t\n", GK_HOSTADDRS_OK, NULL },
	{ 0, "Iface\tDestination\tGateway", GK_HOSTADDRS_OK, NULL },
	{ 0, "e\t0\t0102A8C0\t3\t0\t0\t0\t0", GK_HOSTADDRS_OK,
	    "192.168.2.1" },
	{ 0, "e 00000000 0102a8c0 0003 0 0 0 00000000\n",
	    GK_HOSTADDRS_OK, "192.168.2.1" },
	{ 0, "e\t0\t0102A8C0\t3\t0\t0\t0", GK_HOSTADDRS_INVALID,
	    NULL },		/* no mask */
	{ 0, "e\t0\t0102A8C0\t1\t0\t0\t0\t0", GK_HOSTADDRS_OK,
	    NULL },		/* no RTF_GATEWAY */
	{ 0, "e\t0\t0102A8C0\t2\t0\t0\t0\t0", GK_HOSTADDRS_OK,
	    NULL },		/* not up */
	{ 0, "e\t0\t00000000\t3\t0\t0\t0\t0", GK_HOSTADDRS_OK,
	    NULL },		/* zero gateway */
	{ 0, "e\t0\t10102A8C0\t3\t0\t0\t0\t0", GK_HOSTADDRS_INVALID,
	    NULL },		/* 9 digits */
	{ 0, "e\t0\t0102A8CG\t3\t0\t0\t0\t0", GK_HOSTADDRS_INVALID,
	    NULL },
	{ 0, "junk\ne\t0\t0102A8C0\t3\t0\t0\t0\t0\n",
	    GK_HOSTADDRS_INVALID, "192.168.2.1" },
	{ 1, "", GK_HOSTADDRS_OK, NULL },
	{ 1, "00000000000000000000000000000000 00 "
	    "00000000000000000000000000000000 00 "
	    "fe800000000000000000000000000001 00000400 00000001 "
	    "00000000 00000003 eth0", GK_HOSTADDRS_OK, "fe80::1" },
	{ 1, "00000000000000000000000000000000 00 "
	    "00000000000000000000000000000000 00 "
	    "fe80000000000000000000000000001 00000400 00000001 "
	    "00000000 00000003 eth0", GK_HOSTADDRS_INVALID, NULL },
	{ 1, "00000000000000000000000000000000 00 "
	    "00000000000000000000000000000000 00 "
	    "fe800000000000000000000000000001 00000400 00000001 "
	    "00000000", GK_HOSTADDRS_INVALID, NULL },
	{ 1, "Iface", GK_HOSTADDRS_INVALID, NULL },
};

static void
test_parse_route_lines(void **state)
{
	const struct route_case *c;
	struct gk_hostaddrs h;
	enum gk_hostaddrs_status st;
	size_t i, len;

	(void)state;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	skip();
#endif
	for (i = 0; i < NITEMS(route_cases); i++) {
		c = &route_cases[i];
		gk_hostaddrs_init(&h);
		len = strlen(c->text);
		st = c->v6 ? gk_hostaddrs_parse_route6(c->text, len, &h) :
		    gk_hostaddrs_parse_route4(c->text, len, &h);
		if (st != c->st)
			fail_msg("case %zu: status %d", i, (int)st);
		assert_hostaddrs(&h, &c->gw, c->gw != NULL);
	}
}

/* The text is not NUL-terminated: len bounds every read. */
static void
test_parse_route_bounded(void **state)
{
	static const char line[] = "e\t0\t0102A8C0\t3\t0\t0\t0\t0";
	struct gk_hostaddrs h;
	size_t len;

	(void)state;
	for (len = 0; len < sizeof(line) - 1; len++) {
		gk_hostaddrs_init(&h);
		(void)gk_hostaddrs_parse_route4(line, len, &h);
		assert_int_equal(h.n, 0);
		(void)gk_hostaddrs_parse_route6(route6_sample, len, &h);
		assert_int_equal(h.n, 0);
	}
}

static void
test_parse_route_full(void **state)
{
	char line[64];
	struct gk_hostaddrs h;
	size_t i;

	(void)state;
	gk_hostaddrs_init(&h);
	for (i = 0; i < GK_HOSTADDRS_MAX; i++) {
		snprintf(line, sizeof(line), "e\t0\t%08zX\t3\t0\t0\t0\t0\n",
		    i + 1);
		assert_int_equal(gk_hostaddrs_parse_route4(line,
		    strlen(line), &h), GK_HOSTADDRS_OK);
	}
	assert_int_equal(gk_hostaddrs_parse_route4(line, strlen(line), &h),
	    GK_HOSTADDRS_OK);		/* already present */
	snprintf(line, sizeof(line), "e\t0\t%08X\t3\t0\t0\t0\t0\n", 0xffffu);
	assert_int_equal(gk_hostaddrs_parse_route4(line, strlen(line), &h),
	    GK_HOSTADDRS_FULL);
}

static void
test_load(void **state)
{
	static struct gk_hostaddrs h;
	struct gk_addr lo;
	size_t i;

	(void)state;
	if (gk_hostaddrs_load(&h) == -1)
		fail_msg("gk_hostaddrs_load: %s", strerror(errno));
	assert_true(h.n <= GK_HOSTADDRS_MAX);
	for (i = 0; i < h.n; i++)
		assert_true(h.addrs[i].family == AF_INET ||
		    h.addrs[i].family == AF_INET6);
	addr("127.0.0.1", &lo);
	if (!gk_hostaddrs_has(&h, &lo))
		print_message("note: 127.0.0.1 not found (lo down?)\n");
	/* Whatever is loaded, loopback keeps its own name. */
	assert_int_equal(gk_special_classify(&lo, &h), LOOP);
}

static void
test_special_names(void **state)
{
	static const struct {
		const char	*name;
		enum gk_special	 want;
	} cases[] = {
		{ "localhost", GK_SPECIAL_LOOPBACK },
		{ "a.b.localhost", GK_SPECIAL_LOOPBACK },
		{ "notlocalhost", GK_SPECIAL_NONE },
		{ "localhost.example.com", GK_SPECIAL_NONE },
		{ "printer.local", GK_SPECIAL_LINK_LOCAL },
		{ "metadata.google.internal", GK_SPECIAL_PRIVATE },
		{ "internal", GK_SPECIAL_PRIVATE },
		{ "nas.home.arpa", GK_SPECIAL_PRIVATE },
		{ "home.arpa.example.org", GK_SPECIAL_NONE },
		{ "1.0.0.127.in-addr.arpa", GK_SPECIAL_RESERVED },
		{ "x.ip6.arpa", GK_SPECIAL_RESERVED },
		{ "arpa", GK_SPECIAL_NONE },
		{ "abc.onion", GK_SPECIAL_RESERVED },
		{ "a.invalid", GK_SPECIAL_RESERVED },
		{ "example.org", GK_SPECIAL_NONE },
		{ "xlocal", GK_SPECIAL_NONE },
		{ "", GK_SPECIAL_NONE },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (gk_special_name_classify(cases[i].name) != cases[i].want)
			fail_msg("%s: got %s, want %s", cases[i].name,
			    gk_special_name(gk_special_name_classify(
			    cases[i].name)), gk_special_name(cases[i].want));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_boundaries),
		cmocka_unit_test(test_ipv6_boundaries),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_embedded),
		cmocka_unit_test(test_documentation),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bad_family),
		cmocka_unit_test(test_host_by_hand),
		cmocka_unit_test(test_host_full),
		cmocka_unit_test(test_parse_route4),
		cmocka_unit_test(test_parse_route6),
		cmocka_unit_test(test_parse_route_lines),
		cmocka_unit_test(test_parse_route_bounded),
		cmocka_unit_test(test_parse_route_full),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_special_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
