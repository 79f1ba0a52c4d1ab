/*
 * Unit tests for dns/dns_cache.c.
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

#include "dns/dns_cache.h"
#include "tests/testdata.h"

#define T0	1000

/* A fake upstream message: 21 bytes, records at 4..14. */
static const uint8_t msg[] = "0123456789abcdefghij";

static void
answer(struct dns_answer *a, uint8_t rcode, uint32_t min_ttl)
{
	memset(a, 0, sizeof(*a));
	a->rcode = rcode;
	a->ancount = 2;
	a->nscount = rcode == DNS_RC_NOERROR ? 0 : 1;
	a->rrs_off = 4;
	a->rrs_len = 10;
	a->min_ttl = min_ttl;
	a->naddrs = 1;
	a->addrs[0].family = AF_INET;
	memcpy(a->addrs[0].addr, "\12\0\0\5", 4);
	a->addrs[0].ttl = min_ttl + 5;
}

static int
put(struct dns_cache *c, const char *name, uint16_t qtype,
    const struct dns_answer *a, uint32_t cap, time_t now)
{
	return dns_cache_put(c, name, strlen(name), qtype, DNS_CLASS_IN, msg,
	    sizeof(msg), a, cap, now);
}

static const struct dns_cached *
get(struct dns_cache *c, const char *name, uint16_t qtype, uint32_t cap,
    time_t now)
{
	return dns_cache_get(c, name, strlen(name), qtype, DNS_CLASS_IN, cap,
	    now);
}

/* Lifetime = min(min_ttl, cap at put, cap at get). */
static void
test_cache_ttl(void **state)
{
	static const struct {
		uint32_t	min_ttl, cap_put, cap_get;
		time_t		expires;	/* first second it is gone */
	} cases[] = {
		{ 300, 3600, 3600, T0 + 300 },
		{ 300, 60, 3600, T0 + 300 },	/* cap raised again */
		{ 300, 60, 60, T0 + 60 },
		{ 10, 3600, 3600, T0 + 10 },
		{ 300, 3600, 30, T0 + 30 },	/* cap lowered after put */
		{ 300, 3600, 0, T0 },		/* cap 0: nothing served */
		{ 1, 1, 1, T0 + 1 },
	};
	const struct dns_cached *e;
	struct dns_cache *c;
	struct dns_answer a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		c = dns_cache_new(16);
		answer(&a, DNS_RC_NOERROR, cases[i].min_ttl);
		assert_int_equal(put(c, "web.test", DNS_T_A, &a,
		    cases[i].cap_put, T0), 0);
		e = get(c, "web.test", DNS_T_A, cases[i].cap_get,
		    cases[i].expires - 1);
		if (cases[i].expires > T0) {
			assert_non_null(e);
			assert_int_equal(e->expires, cases[i].expires);
			assert_int_equal(e->stored, T0);
		} else
			assert_null(e);
		assert_null(get(c, "web.test", DNS_T_A, cases[i].cap_get,
		    cases[i].expires));
		assert_null(get(c, "web.test", DNS_T_A, cases[i].cap_get,
		    T0 - 1));	/* clock before the store */
		dns_cache_free(c);
	}
}

static void
test_cache_content(void **state)
{
	const struct dns_cached *e;
	struct dns_cache *c;
	struct dns_answer a;
	uint8_t copy[sizeof(msg)];

	(void)state;
	c = dns_cache_new(16);
	memcpy(copy, msg, sizeof(copy));
	answer(&a, DNS_RC_NOERROR, 300);
	assert_int_equal(dns_cache_put(c, "web.test", 8, DNS_T_A,
	    DNS_CLASS_IN, copy, sizeof(copy), &a, 3600, T0), 0);
	memset(copy, 0, sizeof(copy));
	memset(a.addrs, 0, sizeof(a.addrs));
	e = get(c, "web.test", DNS_T_A, 3600, T0 + 1);
	assert_non_null(e);
	assert_int_equal(e->rcode, DNS_RC_NOERROR);
	assert_int_equal(e->ancount, 2);
	assert_int_equal(e->nscount, 0);
	assert_int_equal(e->rrs_len, 10);
	assert_memory_equal(e->rrs, msg + 4, 10);
	assert_int_equal(e->naddrs, 1);
	assert_int_equal(e->addrs[0].family, AF_INET);
	assert_memory_equal(e->addrs[0].addr, "\12\0\0\5", 4);
	assert_int_equal(e->addrs[0].ttl, 305);
	/* key: case-insensitive name, exact type and class */
	assert_non_null(get(c, "WEB.Test", DNS_T_A, 3600, T0));
	assert_null(get(c, "web.test", DNS_T_AAAA, 3600, T0));
	assert_null(dns_cache_get(c, "web.test", 8, DNS_T_A, 3, 3600, T0));
	assert_null(get(c, "web.tes", DNS_T_A, 3600, T0));
	assert_null(get(c, "web.testx", DNS_T_A, 3600, T0));
	answer(&a, DNS_RC_NOERROR, 300);
	assert_int_equal(put(c, "MiXed.Test", DNS_T_A, &a, 3600, T0), 0);
	assert_non_null(get(c, "mixed.test", DNS_T_A, 3600, T0));
	/* a put of the same key replaces it */
	answer(&a, DNS_RC_NXDOMAIN, 60);
	assert_int_equal(put(c, "WEB.TEST", DNS_T_A, &a, 3600, T0 + 5), 0);
	assert_int_equal(dns_cache_count(c), 2);
	e = get(c, "web.test", DNS_T_A, 3600, T0 + 6);
	assert_int_equal(e->rcode, DNS_RC_NXDOMAIN);
	assert_int_equal(e->stored, T0 + 5);
	dns_cache_flush(c);
	assert_int_equal(dns_cache_count(c), 0);
	assert_null(get(c, "web.test", DNS_T_A, 3600, T0 + 6));
	dns_cache_free(c);
	dns_cache_free(NULL);
}

/* What is stored: NOERROR and NXDOMAIN with a lifetime; nothing else. */
static void
test_cache_negative(void **state)
{
	static const struct {
		uint8_t		rcode;
		uint32_t	min_ttl, cap;
		bool		tc;
		int		ret;
	} cases[] = {
		{ DNS_RC_NOERROR, 300, 3600, false, 0 },
		{ DNS_RC_NXDOMAIN, 300, 3600, false, 0 },
		{ DNS_RC_NOERROR, 0, 3600, false, -1 },	/* no SOA */
		{ DNS_RC_NOERROR, 300, 0, false, -1 },	/* cap 0 */
		{ DNS_RC_NOERROR, 300, 3600, true, -1 },	/* TC */
		{ DNS_RC_SERVFAIL, 300, 3600, false, -1 },
		{ DNS_RC_REFUSED, 300, 3600, false, -1 },
		{ DNS_RC_FORMERR, 300, 3600, false, -1 },
		{ DNS_RC_NOTIMP, 300, 3600, false, -1 },
	};
	const struct dns_cached *e;
	struct dns_cache *c;
	struct dns_answer a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		c = dns_cache_new(4);
		answer(&a, cases[i].rcode, cases[i].min_ttl);
		a.tc = cases[i].tc;
		if (cases[i].rcode == DNS_RC_NXDOMAIN) {
			a.ancount = 0;
			a.naddrs = 0;
		}
		assert_int_equal(put(c, "x.test", DNS_T_A, &a, cases[i].cap,
		    T0), cases[i].ret);
		assert_int_equal(dns_cache_count(c), cases[i].ret == 0);
		e = get(c, "x.test", DNS_T_A, 3600, T0);
		if (cases[i].ret != 0) {
			assert_null(e);
		} else {
			assert_non_null(e);
			assert_int_equal(e->rcode, cases[i].rcode);
			assert_int_equal(e->nscount, a.nscount);
			assert_int_equal(e->naddrs, a.naddrs);
		}
		dns_cache_free(c);
	}
	/* the record range must lie inside the message */
	c = dns_cache_new(4);
	answer(&a, DNS_RC_NOERROR, 300);
	a.rrs_len = sizeof(msg) - 3;
	assert_int_equal(put(c, "x.test", DNS_T_A, &a, 3600, T0), -1);
	dns_cache_free(c);
	/* max_entries 0 stores nothing */
	c = dns_cache_new(0);
	answer(&a, DNS_RC_NOERROR, 300);
	assert_int_equal(put(c, "x.test", DNS_T_A, &a, 3600, T0), -1);
	dns_cache_free(c);
}

/* Bounded: the oldest-inserted entry goes first. */
static void
test_cache_evict(void **state)
{
	static const size_t maxes[] = { 1, 3, 100, 1000 };
	struct dns_cache *c;
	struct dns_answer a;
	char name[64];
	size_t m, i, n, max;

	(void)state;
	answer(&a, DNS_RC_NOERROR, 300);
	for (m = 0; m < sizeof(maxes) / sizeof(*maxes); m++) {
		max = maxes[m];
		n = max * 5 + 3;
		c = dns_cache_new(max);
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "h%zu.test", i);
			assert_int_equal(put(c, name, DNS_T_A, &a, 3600,
			    T0), 0);
			assert_int_equal(dns_cache_count(c),
			    i + 1 < max ? i + 1 : max);
		}
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "h%zu.test", i);
			if (i < n - max)
				assert_null(get(c, name, DNS_T_A, 3600, T0));
			else
				assert_non_null(get(c, name, DNS_T_A, 3600,
				    T0));
		}
		dns_cache_free(c);
	}
	/* re-storing a key does not evict another one */
	c = dns_cache_new(2);
	assert_int_equal(put(c, "a.test", DNS_T_A, &a, 3600, T0), 0);
	assert_int_equal(put(c, "b.test", DNS_T_A, &a, 3600, T0), 0);
	assert_int_equal(put(c, "a.test", DNS_T_A, &a, 3600, T0), 0);
	assert_non_null(get(c, "b.test", DNS_T_A, 3600, T0));
	/* and counts as new: b is now the oldest */
	assert_int_equal(put(c, "c.test", DNS_T_A, &a, 3600, T0), 0);
	assert_null(get(c, "b.test", DNS_T_A, 3600, T0));
	assert_non_null(get(c, "a.test", DNS_T_A, 3600, T0));
	assert_non_null(get(c, "c.test", DNS_T_A, 3600, T0));
	dns_cache_free(c);
}

static size_t
load(const char *c, const char *kind, uint8_t *buf, size_t len)
{
	char name[256];

	snprintf(name, sizeof(name), "%s.%s.bin", c, kind);
	return test_data_load("dns", name, buf, len);
}

/* Every record of the reply carries `ttl`. */
static void
check_ttls(const uint8_t *out, size_t n, const struct dns_answer *a,
    uint32_t ttl)
{
	size_t k, pos = a->rrs_off;
	const uint8_t *p;

	for (k = 0; k < (size_t)a->ancount + a->nscount; k++) {
		assert_true(dns_name_skip(out, n, &pos));
		p = out + pos + 4;
		assert_int_equal(((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3]), ttl);
		pos += 10 + (size_t)((p[4] << 8) | p[5]);
	}
	assert_int_equal(pos, a->rrs_off + a->rrs_len);
}

/*
 * The hit path on captured answers: store, look up later, replay with
 * dns_reply_records under the cap at lookup and the entry's age; every
 * TTL is min(ttl, cap) - age.
 */
static void
test_cache_replay(void **state)
{
	static const struct {
		const char	*query, *answer;
		uint32_t	 cap_put, cap_get;
		time_t		 age;
		uint32_t	 ttl;		/* 0: expired, no hit */
	} cases[] = {
		{ "a_web", "a_web", 3600, 3600, 0, 300 },
		{ "a_web", "a_web", 3600, 100, 30, 70 },
		{ "a_web", "a_web", 100, 3600, 0, 300 },
		{ "a_web", "a_web", 3600, 3600, 299, 1 },
		{ "a_web", "a_web", 3600, 3600, 300, 0 },
		{ "mixed_case", "a_web", 3600, 3600, 10, 290 },
		{ "cname_chain", "cname_chain", 60, 60, 20, 40 },
		{ "nxdomain", "nxdomain", 3600, 3600, 100, 200 },
		{ "nodata", "nodata", 3600, 50, 0, 50 },
	};
	uint8_t msg_[4096], qb[512], out[4096];
	struct dns_answer a, a2;
	const struct dns_cached *e;
	struct dns_query q;
	struct dns_cache *c;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		c = dns_cache_new(8);
		n = load(cases[i].query, "query", qb, sizeof(qb));
		assert_int_equal(dns_query_parse(qb, n, &q), DNS_OK);
		n = load(cases[i].answer, "answer", msg_, sizeof(msg_));
		assert_int_equal(dns_answer_parse(msg_, n, &q, &a), DNS_OK);
		assert_int_equal(dns_cache_put(c, q.name, q.name_len, q.qtype,
		    q.qclass, msg_, n, &a, cases[i].cap_put, T0), 0);
		memset(msg_, 0, sizeof(msg_));
		e = dns_cache_get(c, q.name, q.name_len, q.qtype, q.qclass,
		    cases[i].cap_get, T0 + cases[i].age);
		if (cases[i].ttl == 0) {
			assert_null(e);
			dns_cache_free(c);
			continue;
		}
		assert_non_null(e);
		n = dns_reply_records(&q, e->rcode, e->rrs, e->rrs_len,
		    e->ancount, e->nscount, cases[i].cap_get,
		    (uint32_t)cases[i].age, out, sizeof(out), 1232);
		assert_int_equal(dns_answer_parse(out, n, &q, &a2), DNS_OK);
		assert_int_equal(a2.rcode, a.rcode);
		assert_int_equal(a2.naddrs, a.naddrs);
		assert_int_equal(a2.min_ttl, cases[i].ttl);
		check_ttls(out, n, &a2, cases[i].ttl);
		dns_cache_free(c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_ttl),
		cmocka_unit_test(test_cache_content),
		cmocka_unit_test(test_cache_negative),
		cmocka_unit_test(test_cache_evict),
		cmocka_unit_test(test_cache_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
