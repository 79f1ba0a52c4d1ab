/*
 * Unit tests for dns/dns_msg.c, upstream answers and cached replies: captured dig queries and dnsmasq answers
 * (tests/data/dns, see its README.md) plus hand-built boundary cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "dns/dns_msg.h"
#include "tests/dns_testutil.h"

/* ---- upstream answers ---- */

static const struct {
	const char	*file;
	uint8_t		 rcode;
	uint16_t	 an, ns;
	uint32_t	 min_ttl;
	size_t		 naddrs;
	int		 family;
	const char	*addr;
} captured_answers[] = {
	{ "a_web", 0, 1, 0, 300, 1, AF_INET, A_WEB },
	{ "aaaa_web", 0, 1, 0, 300, 1, AF_INET6, AAAA_WEB },
	{ "cname_chain", 0, 3, 0, 300, 1, AF_INET, A_WEB },
	{ "cname_chain_aaaa", 0, 3, 0, 300, 1, AF_INET6, AAAA_WEB },
	{ "cname_auth", 0, 1, 1, 300, 0 },
	{ "nxdomain", 3, 0, 1, 300, 0 },
	{ "nodata", 0, 0, 1, 300, 0 },
	{ "https", 0, 0, 1, 300, 0 },
	{ "any", 0, 2, 0, 300, 2, AF_INET, A_WEB },
	{ "txt_big", 0, 12, 0, 300, 0 },
	{ "noedns", 0, 1, 0, 300, 1, AF_INET, A_WEB },
	{ "mixed_case", 0, 1, 0, 300, 1, AF_INET, A_WEB },
};

static void
test_answer_captured(void **state)
{
	struct dns_answer a;
	struct dns_query q;
	struct msg m, r;
	size_t i, end;

	(void)state;
	for (i = 0; i < sizeof(captured_answers) / sizeof(*captured_answers);
	    i++) {
		load_query(captured_answers[i].file, &m, &q, DNS_OK);
		load_answer(captured_answers[i].file, &r, &q, &a);
		assert_int_equal(a.rcode, captured_answers[i].rcode);
		assert_false(a.tc);
		assert_int_equal(a.ancount, captured_answers[i].an);
		assert_int_equal(a.nscount, captured_answers[i].ns);
		assert_int_equal(a.min_ttl, captured_answers[i].min_ttl);
		assert_int_equal(a.naddrs, captured_answers[i].naddrs);
		assert_int_equal(a.rrs_off, DNS_HDR_LEN + q.qname_wire_len + 4);
		/* the upstream's OPT is all that follows the range */
		end = a.rrs_off + a.rrs_len;
		if (get16(r.b + 10) == 0) {
			assert_int_equal(end, r.n);
		} else {
			assert_int_equal(r.b[end], 0);
			assert_int_equal(get16(r.b + end + 1), DNS_T_OPT);
			assert_int_equal(end + 11 + get16(r.b + end + 9), r.n);
		}
		if (a.naddrs == 0)
			continue;
		assert_int_equal(a.addrs[0].family, captured_answers[i].family);
		assert_memory_equal(a.addrs[0].addr, captured_answers[i].addr,
		    a.addrs[0].family == AF_INET ? 4 : 16);
		assert_int_equal(a.addrs[0].ttl, 300);
	}
}

/* Answers that are not for the query, and every truncation. */
static void
test_answer_mismatch(void **state)
{
	static const struct {
		const char	*query, *answer;
		enum dns_status	 st;
	} cases[] = {
		{ "aaaa_web", "a_web", DNS_DROP },	/* other type */
		{ "nxdomain", "a_web", DNS_DROP },	/* other name */
		{ "a_web", "a_web", DNS_OK },
		{ "a_web", "mixed_case", DNS_OK },	/* case-insensitive */
		{ "mixed_case", "a_web", DNS_OK },
	};
	struct dns_answer a;
	struct dns_query q;
	struct msg m, r;
	char name[128];
	enum dns_status st;
	uint8_t *cut;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		load_query(cases[i].query, &m, &q, DNS_OK);
		snprintf(name, sizeof(name), "%s.answer.bin", cases[i].answer);
		load(name, &r);
		assert_int_equal(dns_answer_parse(r.b, r.n, &q, &a),
		    cases[i].st);
	}
	/* a query is not an answer */
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_DROP);
	/* truncated at every byte: never OK before the additional section */
	load_query("cname_chain", &m, &q, DNS_OK);
	load("cname_chain.answer.bin", &r);
	for (n = 0; n < r.n; n++) {
		cut = malloc(n + 1);
		memcpy(cut, r.b, n);
		st = dns_answer_parse(cut, n, &q, &a);
		assert_int_equal(st, n < DNS_HDR_LEN ? DNS_DROP :
		    n < r.n - 11 ? DNS_FORMERR : DNS_OK);
		free(cut);
	}
	/* TC: records not parsed */
	r.b[2] |= 0x02;
	assert_int_equal(dns_answer_parse(r.b, r.n, &q, &a), DNS_OK);
	assert_true(a.tc);
	assert_int_equal(a.rrs_len, 0);
	assert_int_equal(a.naddrs, 0);
}

static void
answer_start(struct msg *m, struct dns_query *q, const char *qname,
    unsigned int rcode, unsigned int an, unsigned int ns)
{
	putq(m, 0x0100, 1, 0, qname, NULL, 0);
	assert_int_equal(dns_query_parse(m->b, m->n, q), DNS_OK);
	m->b[2] |= 0x80;
	m->b[3] = (uint8_t)(0x80 | rcode);
	m->b[7] = (uint8_t)an;
	m->b[9] = (uint8_t)ns;
}

/* Only the qname and CNAME targets reached from it give addresses. */
static void
test_answer_chain(void **state)
{
	struct dns_answer a;
	struct dns_query q;
	struct msg m;
	char owner[32], target[32];
	int i;

	(void)state;
	answer_start(&m, &q, "Web.Test", 0, 7, 0);
	putrr(&m, "alias.test", DNS_T_A, 50, "\12\0\0\2", 4);
	putrr(&m, "evil.test", DNS_T_A, 60, "\6\6\6\6", 4);
	putrr_name(&m, "alias.test", DNS_T_CNAME, 70, "final.test");
	putrr_name(&m, "evil.test", DNS_T_CNAME, 70, "evil2.test");
	putrr(&m, "evil2.test", DNS_T_AAAA, 60, "0123456789abcdef", 16);
	putrr(&m, "FINAL.test", DNS_T_A, 40, "\12\0\0\3", 4);
	putrr_name(&m, "web.test", DNS_T_CNAME, 80, "ALIAS.test");
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, 2);
	assert_memory_equal(a.addrs[0].addr, "\12\0\0\2", 4);
	assert_int_equal(a.addrs[0].ttl, 50);
	assert_memory_equal(a.addrs[1].addr, "\12\0\0\3", 4);
	assert_int_equal(a.min_ttl, 40);
	/* a loop terminates */
	answer_start(&m, &q, "a.test", 0, 3, 0);
	putrr_name(&m, "a.test", DNS_T_CNAME, 70, "b.test");
	putrr_name(&m, "b.test", DNS_T_CNAME, 70, "a.test");
	putrr(&m, "b.test", DNS_T_A, 60, "\1\2\3\4", 4);
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, 1);
	/* a chain longer than the bound, listed backwards */
	answer_start(&m, &q, "c0.test", 0, 41, 0);
	putrr(&m, "c40.test", DNS_T_A, 60, "\1\2\3\4", 4);
	for (i = 39; i >= 0; i--) {
		snprintf(owner, sizeof(owner), "c%d.test", i);
		snprintf(target, sizeof(target), "c%d.test", i + 1);
		putrr_name(&m, owner, DNS_T_CNAME, 70, target);
	}
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, 0);
	/* bad A rdata length */
	answer_start(&m, &q, "a.test", 0, 1, 0);
	putrr(&m, "a.test", DNS_T_A, 60, "\1\2\3", 3);
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_FORMERR);
}

/* Negative TTL: min(SOA TTL, SOA MINIMUM); none without an SOA. */
static void
test_answer_negative(void **state)
{
	static const struct {
		unsigned int	rcode, an;
		bool		soa;
		uint32_t	ttl, minimum, want;
	} cases[] = {
		{ 3, 0, true, 900, 60, 60 },
		{ 3, 0, true, 30, 600, 30 },
		{ 0, 0, true, 900, 120, 120 },		/* NODATA */
		{ 3, 0, false, 0, 0, 0 },
		{ 0, 0, false, 0, 0, 0 },
		{ 2, 0, false, 0, 0, 0 },		/* SERVFAIL */
		{ 3, 1, true, 900, 100, 50 },		/* CNAME, 50 */
	};
	struct dns_answer a;
	struct dns_query q;
	struct msg m, rd;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		answer_start(&m, &q, "x.test", cases[i].rcode, cases[i].an,
		    cases[i].soa);
		if (cases[i].an)
			putrr_name(&m, "x.test", DNS_T_CNAME, 50, "y.test");
		rd.n = 0;
		putname(&rd, "ns.test");
		putname(&rd, "host.test");
		put32(&rd, 1);
		put32(&rd, 2);
		put32(&rd, 3);
		put32(&rd, 4);
		put32(&rd, cases[i].minimum);
		if (cases[i].soa)
			putrr(&m, "test", DNS_T_SOA, cases[i].ttl, rd.b, rd.n);
		assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_OK);
		assert_int_equal(a.rcode, cases[i].rcode);
		assert_int_equal(a.min_ttl, cases[i].want);
	}
	/* SOA rdata one byte short */
	m.b[m.n - rd.n - 1]--;
	m.n--;
	assert_int_equal(dns_answer_parse(m.b, m.n, &q, &a), DNS_FORMERR);
}

/* Records replayed: TC over the limit, counts checked, client's case.
 * TTL cap and age through the cache: test_dns_cache.c. */
static void
test_reply_records(void **state)
{
	static const struct {
		const char	*query, *answer;
		size_t		 limit;
		bool		 tc;
	} cases[] = {
		{ "mixed_case", "a_web", 512, false },
		{ "cname_chain", "cname_chain", 512, false },
		{ "txt_big", "txt_big", 1232, true },
		{ "txt_big", "txt_big", 65535, false },
		{ "a_web", "a_web", 60, true },
	};
	struct dns_answer a, a2;
	struct dns_query q;
	struct msg m, r;
	uint8_t out[MSG_MAX];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		load_query(cases[i].query, &m, &q, DNS_OK);
		load_answer(cases[i].answer, &r, &q, &a);
		n = dns_reply_records(&q, a.rcode, r.b + a.rrs_off, a.rrs_len,
		    a.ancount, a.nscount, 3600, 0, out, sizeof(out),
		    cases[i].limit);
		assert_true(n > 0 && n <= cases[i].limit);
		assert_int_equal((check_reply(&q, out, n, a.rcode,
		    cases[i].tc ? 0 : a.ancount, q.edns) & 0x0200) != 0,
		    cases[i].tc);
		assert_memory_equal(out + 12, m.b + 12, q.qname_wire_len);
		assert_int_equal(dns_answer_parse(out, n, &q, &a2), DNS_OK);
		assert_int_equal(a2.naddrs, cases[i].tc ? 0 : a.naddrs);
		assert_int_equal(a2.rrs_len, cases[i].tc ? 0 : a.rrs_len);
		assert_int_equal(dns_reply_records(&q, a.rcode,
		    r.b + a.rrs_off, a.rrs_len, a.ancount, a.nscount, 1, 0,
		    out, n - 1, 65535), 0);
	}
	/* records that do not match the counts */
	assert_int_equal(dns_reply_records(&q, 0, r.b + a.rrs_off, a.rrs_len,
	    a.ancount + 1, 0, 1, 0, out, sizeof(out), 65535), 0);
	assert_int_equal(dns_reply_records(&q, 0, r.b + a.rrs_off,
	    a.rrs_len - 1, a.ancount, 0, 1, 0, out, sizeof(out), 65535), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_captured),
		cmocka_unit_test(test_answer_mismatch),
		cmocka_unit_test(test_answer_chain),
		cmocka_unit_test(test_answer_negative),
		cmocka_unit_test(test_reply_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
