/*
 * --net none's answers (spawn_nonet.c): every query REFUSED, at once,
 * with its id and question; the name told only when it is a host name
 * (never a reverse lookup, never bytes that are no name); no answer to
 * what is not a query.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns/dns_msg.h"
#include "spawner/spawn.h"

static void
test_refused(void **state)
{
	uint8_t q[512], a[DNS_UDP_MIN];
	char name[DNS_NAME_TEXT_MAX];
	size_t qn, n;

	(void)state;
	qn = dns_build_lookup("Registry.npmjs.org", DNS_T_AAAA, q, sizeof(q));
	assert_true(qn > 0);
	q[0] = 0xbe;
	q[1] = 0xef;
	n = spawn_nonet_answer(q, qn, a, sizeof(a), name, sizeof(name));
	/* the header: same id, a response, RD kept, REFUSED; the question */
	assert_int_equal(n, qn);
	assert_int_equal(a[0], 0xbe);
	assert_int_equal(a[1], 0xef);
	assert_true(a[2] & 0x80);
	assert_true(a[2] & 0x01);
	assert_int_equal(a[3] & 0x0f, DNS_RC_REFUSED);
	assert_int_equal(a[5], 1);	/* QDCOUNT */
	assert_int_equal(a[7] | a[9] | a[11], 0);
	assert_memory_equal(a + DNS_HDR_LEN, q + DNS_HDR_LEN,
	    qn - DNS_HDR_LEN);
	assert_string_equal(name, "registry.npmjs.org");
	/* too small a name buffer: nothing told, still answered */
	n = spawn_nonet_answer(q, qn, a, sizeof(a), name, 5);
	assert_int_equal(n, qn);
	assert_string_equal(name, "");
}

static void
test_not_told(void **state)
{
	static const char *const names[] = {
		"1.0.0.127.in-addr.arpa",
		"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
		    "0.ip6.arpa",
		"a b.example",	/* no host name */
	};
	uint8_t q[512], a[DNS_UDP_MIN];
	char name[DNS_NAME_TEXT_MAX];
	size_t i, qn, n;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* PTR (12) for the reverse lookups */
		qn = dns_build_lookup(names[i], i < 2 ? 12 : DNS_T_A, q,
		    sizeof(q));
		assert_true(qn > 0);
		n = spawn_nonet_answer(q, qn, a, sizeof(a), name,
		    sizeof(name));
		assert_int_equal(n, qn);
		assert_int_equal(a[3] & 0x0f, DNS_RC_REFUSED);
		assert_string_equal(name, "");
	}
}

static void
test_not_a_query(void **state)
{
	uint8_t q[512] = { 0 }, a[DNS_UDP_MIN];
	char name[DNS_NAME_TEXT_MAX] = "x";
	size_t qn;

	(void)state;
	/* short, or a response: no answer */
	assert_int_equal(spawn_nonet_answer(q, 0, a, sizeof(a), name,
	    sizeof(name)), 0);
	assert_string_equal(name, "");
	qn = dns_build_lookup("example.org", DNS_T_A, q, sizeof(q));
	assert_int_equal(spawn_nonet_answer(q, 11, a, sizeof(a), name,
	    sizeof(name)), 0);
	q[2] |= 0x80;
	assert_int_equal(spawn_nonet_answer(q, qn, a, sizeof(a), name,
	    sizeof(name)), 0);
	/* two questions: FORMERR, nothing told */
	q[2] &= 0x7f;
	q[5] = 2;
	assert_true(spawn_nonet_answer(q, qn, a, sizeof(a), name,
	    sizeof(name)) >= DNS_HDR_LEN);
	assert_int_equal(a[3] & 0x0f, DNS_RC_FORMERR);
	assert_string_equal(name, "");
	/* another opcode: NOTIMP */
	q[5] = 1;
	q[2] = (uint8_t)((q[2] & 0x87) | (2 << 3));
	assert_true(spawn_nonet_answer(q, qn, a, sizeof(a), name,
	    sizeof(name)) >= DNS_HDR_LEN);
	assert_int_equal(a[3] & 0x0f, DNS_RC_NOTIMP);
	assert_string_equal(name, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_not_told),
		cmocka_unit_test(test_not_a_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
