/*
 * Tests for gk_addr: parsing with and without ports, presentation,
 * sockaddr conversion, equality and hashing, prefix matching.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_addr.h"

static void
test_parse(void **state)
{
	static const struct {
		const char	*in;
		int		 family;	/* 0: rejected */
		const char	*out;
	} cases[] = {
		{ "192.0.2.1", AF_INET, "192.0.2.1" },
		{ "0.0.0.0", AF_INET, "0.0.0.0" },
		{ "255.255.255.255", AF_INET, "255.255.255.255" },
		{ "::", AF_INET6, "::" },
		{ "::1", AF_INET6, "::1" },
		{ "2001:DB8:0:0:0:0:0:1", AF_INET6, "2001:db8::1" },
		{ "::ffff:192.0.2.1", AF_INET6, "::ffff:192.0.2.1" },
		{ "", 0, NULL },
		{ "192.0.2", 0, NULL },
		{ "192.0.2.256", 0, NULL },
		{ "01.2.3.4", 0, NULL },
		{ "192.0.2.1 ", 0, NULL },
		{ "[::1]", 0, NULL },
		{ "192.0.2.1:80", 0, NULL },
		{ "2001:db8::g", 0, NULL },
		{ "example.com", 0, NULL },
		{ "fe80::1%eth0", 0, NULL },
	};
	char buf[GK_ADDR_STRLEN];
	struct gk_addr a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].family == 0) {
			if (gk_addr_parse(cases[i].in, &a) != -1)
				fail_msg("'%s' parsed", cases[i].in);
			assert_int_equal(a.family, 0);
			continue;
		}
		assert_int_equal(gk_addr_parse(cases[i].in, &a), 0);
		assert_int_equal(a.family, cases[i].family);
		assert_string_equal(gk_addr_ntop(&a, buf, sizeof(buf)),
		    cases[i].out);
		assert_int_equal(gk_addr_len(&a),
		    cases[i].family == AF_INET ? 4 : 16);
	}
}

static void
test_parse_port(void **state)
{
	static const struct {
		const char	*in;
		int		 rc;
		const char	*addr;
		uint16_t	 port;	/* 7: untouched */
	} cases[] = {
		{ "192.0.2.1", 0, "192.0.2.1", 7 },
		{ "192.0.2.1:80", 0, "192.0.2.1", 80 },
		{ "192.0.2.1:1", 0, "192.0.2.1", 1 },
		{ "192.0.2.1:65535", 0, "192.0.2.1", 65535 },
		{ "[2001:db8::1]", 0, "2001:db8::1", 7 },
		{ "[2001:db8::1]:443", 0, "2001:db8::1", 443 },
		{ "2001:db8::1", 0, "2001:db8::1", 7 },
		{ "::1", 0, "::1", 7 },
		{ "192.0.2.1:0", -1, NULL, 0 },
		{ "192.0.2.1:65536", -1, NULL, 0 },
		{ "192.0.2.1:", -1, NULL, 0 },
		{ "192.0.2.1:-1", -1, NULL, 0 },
		{ "192.0.2.1:+1", -1, NULL, 0 },
		{ "192.0.2.1:8o", -1, NULL, 0 },
		{ "192.0.2.1:99999999999999999999", -1, NULL, 0 },
		{ "[2001:db8::1]:", -1, NULL, 0 },
		{ "[2001:db8::1]:0", -1, NULL, 0 },
		{ "[2001:db8::1]x", -1, NULL, 0 },
		{ "[2001:db8::1", -1, NULL, 0 },
		{ "[192.0.2.1]", -1, NULL, 0 },
		{ "[192.0.2.1]:80", -1, NULL, 0 },
		{ "[]", -1, NULL, 0 },
		{ "example.com:80", -1, NULL, 0 },
		{ "", -1, NULL, 0 },
		{ "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535", 0,
		    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535 },
		{ "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:065535", -1,
		    NULL, 0 },	/* longer than the parser's buffer */
	};
	char buf[GK_ADDR_STRLEN];
	struct gk_addr a;
	uint16_t port;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		port = 7;
		if (gk_addr_parse_port(cases[i].in, &a, &port) !=
		    cases[i].rc)
			fail_msg("'%s': want %d", cases[i].in, cases[i].rc);
		if (cases[i].rc != 0)
			continue;
		assert_string_equal(gk_addr_ntop(&a, buf, sizeof(buf)),
		    cases[i].addr);
		assert_int_equal(port, cases[i].port);
	}
}

static void
test_ntop_short(void **state)
{
	struct gk_addr a;
	char buf[4];

	(void)state;
	assert_int_equal(gk_addr_parse("192.0.2.1", &a), 0);
	buf[0] = 'x';
	assert_string_equal(gk_addr_ntop(&a, buf, sizeof(buf)), "");
}

static void
test_sockaddr(void **state)
{
	static const uint8_t v4[4] = { 192, 0, 2, 1 };
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct gk_addr a, b;

	(void)state;
	gk_addr_from_bytes(&a, AF_INET, v4);
	assert_int_equal(gk_addr_to_sockaddr(&a, 853, &ss), sizeof(*sin));
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 853);
	assert_memory_equal(&sin->sin_addr, v4, 4);
	assert_int_equal(gk_addr_from_sockaddr(&b, (struct sockaddr *)&ss),
	    0);
	assert_true(gk_addr_eq(&a, &b));

	assert_int_equal(gk_addr_parse("2001:db8::53", &a), 0);
	assert_int_equal(gk_addr_to_sockaddr(&a, 53, &ss), sizeof(*sin6));
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 53);
	assert_int_equal(gk_addr_from_sockaddr(&b, (struct sockaddr *)&ss),
	    0);
	assert_true(gk_addr_eq(&a, &b));
	assert_memory_equal(&a, &b, sizeof(a));

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	assert_int_equal(gk_addr_from_sockaddr(&b, (struct sockaddr *)&ss),
	    -1);
	assert_int_equal(b.family, 0);
}

static void
test_eq_hash(void **state)
{
	struct gk_addr a, b, c, d;

	(void)state;
	assert_int_equal(gk_addr_parse("192.0.2.1", &a), 0);
	assert_int_equal(gk_addr_parse("192.0.2.1", &b), 0);
	assert_int_equal(gk_addr_parse("192.0.2.2", &c), 0);
	assert_int_equal(gk_addr_parse("::ffff:192.0.2.1", &d), 0);
	assert_true(gk_addr_eq(&a, &b));
	assert_int_equal(gk_addr_hash(&a), gk_addr_hash(&b));
	assert_false(gk_addr_eq(&a, &c));
	assert_int_not_equal(gk_addr_hash(&a), gk_addr_hash(&c));
	assert_false(gk_addr_eq(&a, &d));	/* families never cross */
	assert_false(gk_addr_eq(&d, &a));
	assert_int_not_equal(gk_addr_hash(&a), gk_addr_hash(&d));
	assert_int_equal(gk_addr_parse("2001:db8::1", &a), 0);
	assert_int_equal(gk_addr_parse("2001:0db8:0::0001", &b), 0);
	assert_true(gk_addr_eq(&a, &b));
	assert_int_equal(gk_addr_hash(&a), gk_addr_hash(&b));
}

static void
test_in_prefix(void **state)
{
	static const struct {
		const char	*addr, *net;
		unsigned	 prefix;
		bool		 want;
	} cases[] = {
		{ "192.0.2.1", "0.0.0.0", 0, true },
		{ "192.0.2.1", "192.0.2.1", 32, true },
		{ "192.0.2.2", "192.0.2.1", 32, false },
		{ "192.0.2.1", "192.0.2.1", 33, false },
		{ "192.0.2.255", "192.0.2.0", 24, true },
		{ "192.0.3.0", "192.0.2.0", 24, false },
		{ "192.0.2.127", "192.0.2.0", 25, true },
		{ "192.0.2.128", "192.0.2.0", 25, false },
		{ "10.255.255.255", "10.0.0.0", 8, true },
		{ "11.0.0.0", "10.0.0.0", 7, true },
		{ "11.0.0.0", "10.0.0.0", 8, false },
		{ "12.0.0.0", "10.0.0.0", 7, false },
		{ "129.0.0.0", "128.0.0.0", 1, true },
		{ "127.0.0.1", "128.0.0.0", 1, false },
		{ "2001:db8::1", "::", 0, true },
		{ "2001:db8::1", "2001:db8::1", 128, true },
		{ "2001:db8::1", "2001:db8::1", 129, false },
		{ "2001:db8::1", "2001:db8::", 127, true },
		{ "2001:db8::2", "2001:db8::", 127, false },
		{ "2001:db8::1", "2001:db8::", 126, true },
		{ "2001:db8:8000::", "2001:db8::", 33, false },
		{ "2001:db8:7fff::", "2001:db8::", 33, true },
		{ "192.0.2.1", "::", 0, false },
		{ "::ffff:192.0.2.1", "192.0.2.0", 24, false },
	};
	struct gk_addr a, net;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(gk_addr_parse(cases[i].addr, &a), 0);
		assert_int_equal(gk_addr_parse(cases[i].net, &net), 0);
		if (gk_addr_in_prefix(&a, &net, cases[i].prefix) !=
		    cases[i].want)
			fail_msg("%s in %s/%u", cases[i].addr, cases[i].net,
			    cases[i].prefix);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_port),
		cmocka_unit_test(test_ntop_short),
		cmocka_unit_test(test_sockaddr),
		cmocka_unit_test(test_eq_hash),
		cmocka_unit_test(test_in_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
