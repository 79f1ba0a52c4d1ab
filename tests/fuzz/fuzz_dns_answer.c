/*
 * Fuzz dns_answer_parse. The first byte picks the query: one of a few
 * fixed questions, or (0xff) the question found at offset 12 of the rest,
 * which is parsed as the upstream answer. On success the addresses and
 * the record range stay in bounds, the records replay through
 * dns_reply_records and parse back to the same addresses, and the cache
 * stores and returns them.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "dns/dns_cache.h"
#include "dns/dns_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char	*wire;
	size_t		 len;
	uint16_t	 qtype;
} queries[] = {
	{ "\3web\7example\4test", 18, DNS_T_A },
	{ "\3web\7example\4test", 18, DNS_T_AAAA },
	{ "\3www\7example\4test", 18, DNS_T_A },
	{ "\3www\7example\4test", 18, DNS_T_AAAA },
	{ "\4nope\7example\4test", 19, DNS_T_A },
	{ "\3web\7example\4test", 18, 15 },
	{ "\3big\7example\4test", 18, 16 },
	{ "\3web\7example\4test", 18, DNS_T_ANY },
	{ "\3web\7example\4test", 18, DNS_T_HTTPS },
};

static uint8_t out[DNS_MAX_MSG + 512];
static struct dns_cache *cache;

/* Make the query from a question (name wire + type + class). */
static bool
make_query(const uint8_t *question, size_t qlen, struct dns_query *q)
{
	uint8_t buf[DNS_HDR_LEN + DNS_MAX_NAME + 4];

	if (qlen > sizeof(buf) - DNS_HDR_LEN)
		return false;
	memset(buf, 0, DNS_HDR_LEN);
	buf[2] = 0x01;		/* RD */
	buf[5] = 1;		/* QDCOUNT */
	memcpy(buf + DNS_HDR_LEN, question, qlen);
	return dns_query_parse(buf, DNS_HDR_LEN + qlen, q) == DNS_OK;
}

static bool
pick_query(const uint8_t *data, size_t size, struct dns_query *q)
{
	uint8_t question[DNS_MAX_NAME + 4];
	size_t i, pos = DNS_HDR_LEN + 1;

	if (size < 1)
		return false;
	if (data[0] == 0xff) {
		if (!dns_name_skip(data, size, &pos) || size - pos < 4)
			return false;
		return make_query(data + DNS_HDR_LEN + 1,
		    pos + 4 - DNS_HDR_LEN - 1, q);
	}
	i = data[0] % (sizeof(queries) / sizeof(*queries));
	memcpy(question, queries[i].wire, queries[i].len);
	question[queries[i].len] = 0;
	question[queries[i].len + 1] = (uint8_t)(queries[i].qtype >> 8);
	question[queries[i].len + 2] = (uint8_t)queries[i].qtype;
	question[queries[i].len + 3] = 0;
	question[queries[i].len + 4] = DNS_CLASS_IN;
	return make_query(question, queries[i].len + 5, q);
}

static void
check_cache(const struct dns_query *q, const uint8_t *msg, size_t len,
    const struct dns_answer *a)
{
	const struct dns_cached *e;

	if (cache == NULL)
		cache = dns_cache_new(64);
	if (dns_cache_put(cache, q->name, q->name_len, q->qtype, q->qclass,
	    msg, len, a, 3600, 100) != 0)
		return;
	e = dns_cache_get(cache, q->name, q->name_len, q->qtype, q->qclass,
	    3600, 100);
	assert(e != NULL && e->rrs_len == a->rrs_len);
	assert(e->naddrs == a->naddrs && e->rcode == a->rcode);
	assert(memcmp(e->rrs, msg + a->rrs_off, a->rrs_len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_answer a, a2;
	struct dns_query q;
	size_t i, n;

	if (!pick_query(data, size, &q))
		return 0;
	data++;
	size--;
	if (dns_answer_parse(data, size, &q, &a) != DNS_OK)
		return 0;
	assert(a.naddrs <= DNS_MAX_ADDRS);
	assert(a.rrs_off >= DNS_HDR_LEN + q.qname_wire_len + 4U);
	assert(a.rrs_off <= size && size - a.rrs_off >= a.rrs_len);
	for (i = 0; i < a.naddrs; i++)
		assert(a.addrs[i].family == 2 || a.addrs[i].family == 10);
	if (a.tc) {
		assert(a.rrs_len == 0 && a.naddrs == 0);
		return 0;
	}
	n = dns_reply_records(&q, a.rcode, data + a.rrs_off, a.rrs_len,
	    a.ancount, a.nscount, 600, 5, out, sizeof(out), DNS_MAX_MSG);
	assert(n > 0);
	if ((out[2] & 0x02) == 0) {
		assert(dns_answer_parse(out, n, &q, &a2) == DNS_OK);
		assert(a2.naddrs == a.naddrs && a2.rrs_len == a.rrs_len);
		assert(a2.rcode == a.rcode);
		assert(a2.min_ttl <= 595 || a2.ancount + a2.nscount == 0);
		for (i = 0; i < a.naddrs; i++)
			assert(memcmp(&a.addrs[i].addr, &a2.addrs[i].addr,
			    16) == 0);
	}
	check_cache(&q, data, size, &a);
	return 0;
}
