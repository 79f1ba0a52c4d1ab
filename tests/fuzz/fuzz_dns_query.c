/*
 * Fuzz dns_query_parse. On success the name is printable and within the
 * limits, and every reply built from the query (empty, RFC 8482, cached
 * records, the upstream query) parses back with the same id and question;
 * a host name's lookup (dns_build_lookup) asks the same question.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "dns/dns_msg.h"
#include "gatekeeper/base/gk_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out[DNS_MAX_MSG], out2[DNS_MAX_MSG];

static unsigned int
get16(const uint8_t *p)
{
	return ((unsigned int)p[0] << 8) | p[1];
}

static void
check_name(const struct dns_query *q)
{
	struct gk_name nm;
	size_t i, pos = 0;

	assert(q->qname_wire_len >= 1);
	assert(q->name_len < DNS_NAME_TEXT_MAX);
	assert(strlen(q->name) == q->name_len);
	for (i = 0; i < q->name_len; i++) {
		assert(q->name[i] > 0x20 && q->name[i] < 0x7f);
		assert(q->name[i] < 'A' || q->name[i] > 'Z');
		assert(!q->name_host || q->name[i] != '\\');
	}
	/* a host name exactly when the shared rule says so, same text */
	assert(q->name_host == (gk_name_parse((const uint8_t *)q->name,
	    q->name_len, &nm) == GK_NAME_OK));
	assert(!q->name_host || strcmp(nm.text, q->name) == 0);
	assert(dns_name_skip(q->qname_wire, q->qname_wire_len, &pos));
	assert(pos == q->qname_wire_len);
}

/* A reply to q: response, same id, parses as an answer to q. */
static void
check_answer(const struct dns_query *q, const uint8_t *r, size_t n,
    size_t limit)
{
	struct dns_answer a;

	assert(n >= DNS_HDR_LEN && n <= limit);
	assert(get16(r) == q->id);
	assert(r[2] & 0x80);
	assert(dns_answer_parse(r, n, q, &a) == DNS_OK);
	assert(a.naddrs <= DNS_MAX_ADDRS);
	assert(a.rrs_off + a.rrs_len <= n);
}

static void
check_ok(const struct dns_query *q)
{
	struct dns_query q2;
	size_t n, n2, qend, limit;

	check_name(q);
	limit = dns_query_udp_limit(q);
	assert(limit >= DNS_UDP_MIN && limit <= DNS_EDNS_SIZE);
	n = dns_reply_empty(q, DNS_RC_NXDOMAIN, out, sizeof(out));
	check_answer(q, out, n, DNS_MAX_MSG);
	n = dns_reply_empty(q, DNS_RC_BADVERS, out, sizeof(out));
	assert(get16(out) == q->id);
	/* RFC 8482 reply, then its record replayed as a cached one */
	n = dns_reply_rfc8482(q, 3600, out, sizeof(out));
	check_answer(q, out, n, DNS_MAX_MSG);
	qend = DNS_HDR_LEN + q->qname_wire_len + 4;
	n2 = dns_reply_records(q, DNS_RC_NOERROR, out + qend,
	    n - qend - (q->edns ? 11 : 0), 1, 0, 60, 10, out2, sizeof(out2),
	    limit);
	check_answer(q, out2, n2, limit);
	/* upstream query round trip */
	n = dns_build_query(0x4242, q, out, sizeof(out));
	assert(dns_query_parse(out, n, &q2) == DNS_OK);
	assert(q2.id == 0x4242 && q2.qtype == q->qtype);
	assert(strcmp(q2.name, q->name) == 0);
	/* a host name's lookup, as the proxies' dial builds it, is the
	 * same question */
	if (q->name_host) {
		n = dns_build_lookup(q->name, q->qtype, out, sizeof(out));
		assert(n > 0);
		assert(dns_query_parse(out, n, &q2) == DNS_OK);
		assert(q2.name_host && q2.qtype == q->qtype);
		assert(strcmp(q2.name, q->name) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	size_t n;

	switch (dns_query_parse(data, size, &q)) {
	case DNS_DROP:
		assert(size < DNS_HDR_LEN || (data[2] & 0x80));
		break;
	case DNS_FORMERR:
	case DNS_NOTIMP:
		if (q.qname_wire_len > 0)
			check_name(&q);
		n = dns_reply_empty(&q, DNS_RC_FORMERR, out, sizeof(out));
		assert(n >= DNS_HDR_LEN && get16(out) == q.id);
		break;
	case DNS_OK:
		assert(q.opcode == 0);
		check_ok(&q);
		break;
	}
	return 0;
}
