/*
 * Unit tests for dns/dns_msg.c: captured dig queries and dnsmasq answers
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

/* ---- queries ---- */

static const struct {
	const char	*file;
	uint16_t	 qtype;
	const char	*name;
	bool		 edns;
	uint16_t	 udp;
	uint8_t		 version;
	size_t		 limit;
} captured_queries[] = {
	{ "a_web", DNS_T_A, "web.example.test", true, 1232, 0, 1232 },
	{ "aaaa_web", DNS_T_AAAA, "web.example.test", true, 1232, 0, 1232 },
	{ "nxdomain", DNS_T_A, "nope.example.test", true, 1232, 0, 1232 },
	{ "noedns", DNS_T_A, "web.example.test", false, 0, 0, 512 },
	{ "edns512", DNS_T_A, "web.example.test", true, 512, 0, 512 },
	{ "edns4096", DNS_T_A, "web.example.test", true, 4096, 0, 1232 },
	{ "edns_v1", DNS_T_A, "web.example.test", true, 1232, 1, 1232 },
	{ "mixed_case", DNS_T_A, "web.example.test", true, 1232, 0, 1232 },
	{ "any", DNS_T_ANY, "web.example.test", true, 1232, 0, 1232 },
	{ "https", DNS_T_HTTPS, "web.example.test", true, 1232, 0, 1232 },
	{ "txt_big", 16, "big.example.test", true, 4096, 0, 1232 },
	{ "opcode_status", DNS_T_A, "web.example.test", true, 0, 0, 512 },
};

static void
test_query_captured(void **state)
{
	struct dns_query q;
	struct msg m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(captured_queries) / sizeof(*captured_queries);
	    i++) {
		load_query(captured_queries[i].file, &m, &q,
		    i == 11 ? DNS_NOTIMP : DNS_OK);
		assert_int_equal(q.id, get16(m.b));
		assert_int_equal(q.qtype, captured_queries[i].qtype);
		assert_int_equal(q.qclass, DNS_CLASS_IN);
		assert_string_equal(q.name, captured_queries[i].name);
		assert_int_equal(q.name_len, strlen(q.name));
		assert_true(q.name_host);
		assert_memory_equal(q.qname_wire, m.b + 12, q.qname_wire_len);
		if (q.opcode != 0)
			continue;
		assert_int_equal(q.edns, captured_queries[i].edns);
		assert_int_equal(q.edns_udp_size, captured_queries[i].udp);
		assert_int_equal(q.edns_version, captured_queries[i].version);
		assert_int_equal(dns_query_udp_limit(&q),
		    captured_queries[i].limit);
	}
	load_query("mixed_case", &m, &q, DNS_OK);
	assert_memory_equal(q.qname_wire, "\003WeB\007ExAmPle\004TeSt", 18);
	load_query("opcode_status", &m, &q, DNS_NOTIMP);
	assert_int_equal(q.opcode, 2);
}

/* Every strict prefix of a real query is DROP (< 12 bytes) or FORMERR. */
static void
test_query_truncated(void **state)
{
	static const char *files[] = { "a_web", "noedns", "edns512",
	    "txt_big", "mixed_case" };
	struct dns_query q;
	struct msg m;
	uint8_t *cut;
	size_t f, n;

	(void)state;
	for (f = 0; f < sizeof(files) / sizeof(*files); f++) {
		load_query(files[f], &m, &q, DNS_OK);
		for (n = 0; n < m.n; n++) {
			cut = malloc(n + 1);
			memcpy(cut, m.b, n);
			assert_int_equal(dns_query_parse(cut, n, &q),
			    n < DNS_HDR_LEN ? DNS_DROP : DNS_FORMERR);
			free(cut);
		}
	}
}

static const struct {
	const char	*what;
	unsigned int	 flags, qd, an, ns;
	enum dns_status	 st;
} header_cases[] = {
	{ "plain", 0x0100, 1, 0, 0, DNS_OK },
	{ "response", 0x8100, 1, 0, 0, DNS_DROP },
	{ "qdcount 0", 0x0100, 0, 0, 0, DNS_FORMERR },
	{ "qdcount 2", 0x0100, 2, 0, 0, DNS_FORMERR },
	{ "ancount 1", 0x0100, 1, 1, 0, DNS_FORMERR },
	{ "nscount 1", 0x0100, 1, 0, 1, DNS_FORMERR },
	{ "opcode iquery", 0x0900, 1, 0, 0, DNS_NOTIMP },
	{ "opcode status", 0x1000, 1, 0, 0, DNS_NOTIMP },
	{ "opcode notify", 0x2000, 1, 0, 0, DNS_NOTIMP },
	{ "opcode update", 0x2800, 1, 0, 0, DNS_NOTIMP },
	{ "opcode 15", 0x7800, 1, 0, 0, DNS_NOTIMP },
};

static void
test_query_header(void **state)
{
	struct dns_query q;
	struct msg m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(header_cases) / sizeof(*header_cases); i++) {
		putq(&m, header_cases[i].flags, header_cases[i].qd, 0,
		    "example.test", NULL, 0);
		m.b[7] = (uint8_t)header_cases[i].an;
		m.b[9] = (uint8_t)header_cases[i].ns;
		if (dns_query_parse(m.b, m.n, &q) != header_cases[i].st)
			fail_msg("%s", header_cases[i].what);
		assert_int_equal(q.id, 0x1234);
	}
	assert_int_equal(dns_query_parse(m.b, 11, &q), DNS_DROP);
	assert_int_equal(dns_query_parse(NULL, 0, &q), DNS_DROP);
	/* trailing garbage */
	putq(&m, 0x0100, 1, 1, "example.test", NULL, 0);
	putopt(&m, 1232, 0);
	m.b[m.n++] = 0;
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_FORMERR);
	assert_string_equal(q.name, "example.test");
}

static void
test_query_edns(void **state)
{
	static const struct {
		unsigned int	size;
		size_t		limit;
	} sizes[] = { { 0, 512 }, { 100, 512 }, { 511, 512 }, { 512, 512 },
	    { 513, 513 }, { 1000, 1000 }, { 1232, 1232 }, { 1233, 1232 },
	    { 4096, 1232 }, { 65535, 1232 } };
	struct dns_query q;
	struct msg m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		putq(&m, 0x0100, 1, 1, "a.test", NULL, 0);
		putopt(&m, sizes[i].size, 0);
		assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
		assert_true(q.edns);
		assert_int_equal(dns_query_udp_limit(&q), sizes[i].limit);
	}
	/* options must tile the rdata: option code 10, length 8, 8 bytes */
	m.b[m.n - 1] = 12;
	putraw(&m, "\0\12\0\10abcdefgh", 12);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	m.b[m.n - 9] = 9;	/* option length beyond the rdata */
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_FORMERR);
	assert_false(q.edns);
	/* two OPT records */
	putq(&m, 0x0100, 1, 2, "a.test", NULL, 0);
	putopt(&m, 1232, 0);
	putopt(&m, 1232, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_FORMERR);
	/* OPT with a non-root owner */
	putq(&m, 0x0100, 1, 1, "a.test", NULL, 0);
	putrr(&m, "a.test", DNS_T_OPT, 0, "", 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_FORMERR);
	/* another additional record is ignored */
	putq(&m, 0x0100, 1, 1, "a.test", NULL, 0);
	putrr(&m, "a.test", 250, 0, "xy", 2);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	assert_false(q.edns);
}

/* Names: labels 63/64, names 255/256, escapes, pointers. */
static void
test_query_names(void **state)
{
	static const struct {
		const char	*what;
		const uint8_t	*wire;
		size_t		 len;
		enum dns_status	 st;
		const char	*text;
		bool		 host;		/* gk_name_parse() accepts it */
	} cases[] = {
		{ "root", (const uint8_t *)"\0", 1, DNS_OK, "", false },
		{ "upper", (const uint8_t *)"\3AbC\0", 5, DNS_OK, "abc", true },
		{ "underscore", (const uint8_t *)"\5API_x\7example\0", 15,
		    DNS_OK, "api_x.example", true },
		{ "underscore label", (const uint8_t *)"\6_dmarc\1x\0", 10,
		    DNS_OK, "_dmarc.x", true },
		{ "hyphen ends", (const uint8_t *)"\2-a\2b-\0", 7, DNS_OK,
		    "-a.b-", true },
		{ "numeric", (const uint8_t *)"\0011\0012\0013\0014\0", 9,
		    DNS_OK, "1.2.3.4", false },
		{ "numeric last", (const uint8_t *)"\1a\00299\0", 6, DNS_OK,
		    "a.99", false },
		{ "dot in label", (const uint8_t *)"\3a.b\0", 5, DNS_OK,
		    "a\\046b", false },
		{ "nul and space", (const uint8_t *)"\3\0 \\\0", 5, DNS_OK,
		    "\\000\\032\\092", false },
		{ "high byte", (const uint8_t *)"\2\377_\0", 4, DNS_OK,
		    "\\255_", false },
		{ "label 0x40", (const uint8_t *)"\100", 1, DNS_FORMERR },
		{ "label 0x80", (const uint8_t *)"\200", 1, DNS_FORMERR },
		{ "pointer to header", (const uint8_t *)"\300\2", 2,
		    DNS_FORMERR },
		{ "pointer to self", (const uint8_t *)"\300\14", 2,
		    DNS_FORMERR },
		{ "label then pointer", (const uint8_t *)"\1a\300\14", 4,
		    DNS_FORMERR },
		{ "unterminated", (const uint8_t *)"\1a", 2, DNS_FORMERR },
	};
	struct dns_query q;
	struct msg m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		putq(&m, 0, 1, 0, NULL, cases[i].wire, cases[i].len);
		if (dns_query_parse(m.b, m.n, &q) != cases[i].st)
			fail_msg("%s", cases[i].what);
		if (cases[i].st != DNS_OK)
			continue;
		assert_string_equal(q.name, cases[i].text);
		assert_int_equal(q.name_host, cases[i].host);
		assert_int_equal(q.qname_wire_len, cases[i].len);
	}
}

/* A name of `total` wire bytes made of labels of at most `lab` bytes. */
static size_t
long_name(uint8_t *w, size_t total, size_t lab)
{
	size_t n = 0, l;

	while (total - n > 1) {
		l = total - n - 1 - 1;	/* room for length byte and root */
		if (l > lab)
			l = lab;
		if (l == 0)
			l = 1;
		w[n] = (uint8_t)l;
		memset(w + n + 1, 'x', l);
		n += l + 1;
	}
	w[n++] = 0;
	return n;
}

static void
test_query_lengths(void **state)
{
	static const struct {
		size_t		total, lab;
		enum dns_status	st;
	} cases[] = {
		{ 65, 63, DNS_OK },		/* one 63-byte label */
		{ 66, 64, DNS_FORMERR },	/* one 64-byte label */
		{ 254, 63, DNS_OK },
		{ 255, 63, DNS_OK },
		{ 256, 63, DNS_FORMERR },
		{ 300, 63, DNS_FORMERR },
	};
	uint8_t w[512];
	struct dns_query q;
	struct msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		n = long_name(w, cases[i].total, cases[i].lab);
		assert_int_equal(n, cases[i].total);
		putq(&m, 0, 1, 0, NULL, w, n);
		assert_int_equal(dns_query_parse(m.b, m.n, &q), cases[i].st);
		if (cases[i].st == DNS_OK) {
			assert_int_equal(q.qname_wire_len, n);
			assert_int_equal(q.name_len, n - 2);
		}
	}
}

/* Compression in expand/skip: backward only, hop cap, no loops. */
static void
test_name_expand(void **state)
{
	char text[DNS_NAME_TEXT_MAX];
	struct msg m;
	size_t pos, used, i;

	(void)state;
	puthdr(&m, 0, 0, 0, 0, 0);
	putname(&m, "a.test");		/* at 12 */
	putraw(&m, "\1b\300\14", 4);	/* at 20: b.a.test */
	pos = 20;
	assert_true(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	assert_string_equal(text, "b.a.test");
	assert_int_equal(pos, 24);
	pos = 20;
	assert_true(dns_name_skip(m.b, m.n, &pos));
	assert_int_equal(pos, 24);
	/* forward pointer, pointer to self */
	putraw(&m, "\300\32\1c\0", 5);	/* at 24: -> 26 (forward) */
	pos = 24;
	assert_false(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	putraw(&m, "\300\35", 2);	/* at 29: -> 29 (self) */
	pos = 29;
	assert_false(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	/* a label covering a later pointer back to it: 31 "\2" 32 "\300\37"
	 * ... 34 "\300\37" loops 31 -> 34 -> 31 */
	putraw(&m, "\2\300\37\300\37", 5);
	pos = 34;
	assert_false(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	/* truncated pointer */
	pos = m.n - 1;
	assert_false(dns_name_skip(m.b, m.n, &pos));
	/* chain of pointers: 64 hops are fine, 65 are not */
	puthdr(&m, 0, 0, 0, 0, 0);
	putname(&m, "z");		/* at 12 */
	put16(&m, 0xc000 | 12);		/* at 15 */
	for (i = 1; i < 70; i++)
		put16(&m, (unsigned int)(0xc000 | (15 + 2 * (i - 1))));
	pos = 15 + 2 * 63;
	assert_true(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	assert_string_equal(text, "z");
	pos = 15 + 2 * 64;
	assert_false(dns_name_expand(m.b, m.n, &pos, text, sizeof(text),
	    &used));
	/* output too small */
	pos = 12;
	assert_false(dns_name_expand(m.b, m.n, &pos, text, 1, &used));
}

/* ---- replies ---- */


static void
test_reply_empty(void **state)
{
	static const struct {
		const char	*file;
		uint8_t		 rcode;
		unsigned int	 ar, ext;
	} cases[] = {
		{ "nxdomain", DNS_RC_NXDOMAIN, 1, 0 },
		{ "noedns", DNS_RC_REFUSED, 0, 0 },
		{ "https", DNS_RC_NOERROR, 1, 0 },
		{ "a_web", DNS_RC_SERVFAIL, 1, 0 },
		{ "edns_v1", DNS_RC_BADVERS, 1, 1 },
		{ "noedns", DNS_RC_BADVERS, 0, 0 },	/* -> SERVFAIL */
	};
	struct dns_query q;
	struct dns_answer a;
	uint8_t out[512];
	struct msg m;
	size_t i, n, qend;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		load_query(cases[i].file, &m, &q, DNS_OK);
		n = dns_reply_empty(&q, cases[i].rcode, out, sizeof(out));
		qend = DNS_HDR_LEN + q.qname_wire_len + 4;
		assert_int_equal(n, qend + 11 * cases[i].ar);
		check_reply(&q, out, n, cases[i].rcode > 15 && !q.edns ?
		    DNS_RC_SERVFAIL : (cases[i].rcode & 15), 0, cases[i].ar);
		assert_memory_equal(out + 12, m.b + 12, qend - 12);
		if (cases[i].ar) {
			assert_int_equal(get16(out + qend + 1), DNS_T_OPT);
			assert_int_equal(get16(out + qend + 3), DNS_EDNS_SIZE);
			assert_int_equal(out[qend + 5], cases[i].ext);
			assert_int_equal(out[qend + 6], 0);	/* version */
		}
		assert_int_equal(dns_answer_parse(out, n, &q, &a), DNS_OK);
		assert_int_equal(a.naddrs, 0);
		assert_int_equal(dns_reply_empty(&q, 0, out, n - 1), 0);
	}
	/* QDCOUNT 2: FORMERR without a question */
	puthdr(&m, 0x0100, 2, 0, 0, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_FORMERR);
	n = dns_reply_empty(&q, DNS_RC_FORMERR, out, sizeof(out));
	assert_int_equal(n, DNS_HDR_LEN);
	check_reply(&q, out, n, DNS_RC_FORMERR, 0, 0);
	assert_int_equal(get16(out + 4), 0);
	/* NOTIMP echoes opcode and question */
	load_query("opcode_status", &m, &q, DNS_NOTIMP);
	n = dns_reply_empty(&q, DNS_RC_NOTIMP, out, sizeof(out));
	check_reply(&q, out, n, DNS_RC_NOTIMP, 0, 0);
	assert_int_equal(get16(out + 4), 1);
}

static void
test_reply_rfc8482(void **state)
{
	struct dns_query q;
	struct dns_answer a;
	uint8_t out[512];
	struct msg m;
	size_t n, p;

	(void)state;
	load_query("any", &m, &q, DNS_OK);
	n = dns_reply_rfc8482(&q, 3600, out, sizeof(out));
	check_reply(&q, out, n, DNS_RC_NOERROR, 1, 1);
	p = DNS_HDR_LEN + q.qname_wire_len + 4;
	assert_int_equal(get16(out + p), 0xc00c);
	assert_int_equal(get16(out + p + 2), DNS_T_HINFO);
	assert_int_equal(get16(out + p + 4), DNS_CLASS_IN);
	assert_int_equal(get32(out + p + 6), 3600);
	assert_int_equal(get16(out + p + 10), 9);
	assert_memory_equal(out + p + 12, "\7RFC8482\0", 9);
	assert_int_equal(n, p + 21 + 11);
	assert_int_equal(dns_answer_parse(out, n, &q, &a), DNS_OK);
	assert_int_equal(a.ancount, 1);
	assert_int_equal(a.min_ttl, 3600);
	assert_int_equal(dns_reply_rfc8482(&q, 1, out, n - 1), 0);
}

static void
test_reply_a(void **state)
{
	static const uint8_t ph[4] = { 198, 18, 0, 7 };
	struct dns_query q;
	struct dns_answer a;
	uint8_t out[512];
	struct msg m;
	size_t n;

	(void)state;
	load_query("a_web", &m, &q, DNS_OK);
	n = dns_reply_a(&q, ph, 5, out, sizeof(out));
	check_reply(&q, out, n, DNS_RC_NOERROR, 1, q.edns ? 1 : 0);
	assert_int_equal(dns_answer_parse(out, n, &q, &a), DNS_OK);
	assert_int_equal(a.ancount, 1);
	assert_int_equal(a.min_ttl, 5);
	assert_int_equal(a.naddrs, 1);
	assert_int_equal(a.addrs[0].family, AF_INET);
	assert_memory_equal(a.addrs[0].addr, ph, 4);
	assert_int_equal(dns_reply_a(&q, ph, 5, out, n - 1), 0);
	/* without EDNS: no OPT */
	load_query("noedns", &m, &q, DNS_OK);
	n = dns_reply_a(&q, ph, 5, out, sizeof(out));
	check_reply(&q, out, n, DNS_RC_NOERROR, 1, 0);
	assert_int_equal(n, DNS_HDR_LEN + q.qname_wire_len + 4 + 16);
}

static void
test_build_query(void **state)
{
	static const char *files[] = { "a_web", "noedns", "mixed_case",
	    "https" };
	struct dns_query q, q2;
	uint8_t out[512];
	struct msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		load_query(files[i], &m, &q, DNS_OK);
		n = dns_build_query(0xbeef, &q, out, sizeof(out));
		assert_int_equal(n, DNS_HDR_LEN + q.qname_wire_len + 4 + 11);
		assert_int_equal(dns_query_parse(out, n, &q2), DNS_OK);
		assert_int_equal(q2.id, 0xbeef);
		assert_int_equal(q2.flags, 0x0100);
		assert_string_equal(q2.name, q.name);
		assert_memory_equal(q2.qname_wire, q.qname_wire,
		    q.qname_wire_len);
		assert_int_equal(q2.qtype, q.qtype);
		assert_true(q2.edns);
		assert_int_equal(q2.edns_udp_size, DNS_EDNS_SIZE);
		assert_int_equal(dns_build_query(1, &q, out, n - 1), 0);
	}
}

/* dns_build_lookup: what the proxies' dial asks the resolver, built by
 * the codec and read back by its own parser. */
static void
test_build_lookup(void **state)
{
	uint8_t msg[DNS_HDR_LEN + DNS_MAX_NAME + 4], small[20];
	char name[300], label[70];
	struct dns_query q;
	size_t len, i;

	(void)state;
	len = dns_build_lookup("api_x.github.com", DNS_T_AAAA, msg,
	    sizeof(msg));
	assert_int_equal(len, DNS_HDR_LEN + 18 + 4);
	assert_int_equal(dns_query_parse(msg, len, &q), DNS_OK);
	assert_string_equal(q.name, "api_x.github.com");
	assert_true(q.name_host);
	assert_int_equal(q.qtype, DNS_T_AAAA);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_int_equal(msg[2] & 0x01, 0x01);		/* RD */
	assert_int_equal(msg[0] | msg[1], 0);		/* id 0 */

	/* empty labels, a label over 63 bytes: nothing built */
	assert_int_equal(dns_build_lookup("a..b", DNS_T_A, msg, sizeof(msg)),
	    0);
	assert_int_equal(dns_build_lookup(".a", DNS_T_A, msg, sizeof(msg)),
	    0);
	memset(label, 'x', 64);
	label[64] = '\0';
	assert_int_equal(dns_build_lookup(label, DNS_T_A, msg, sizeof(msg)),
	    0);
	label[63] = '\0';
	assert_int_not_equal(dns_build_lookup(label, DNS_T_A, msg,
	    sizeof(msg)), 0);

	/* 253 bytes of text is a 255-byte wire name; 255 of text is not */
	for (i = 0; i < 253; i++)
		name[i] = i % 2 == 0 ? 'a' : '.';
	name[253] = '\0';
	len = dns_build_lookup(name, DNS_T_A, msg, sizeof(msg));
	assert_int_equal(len, DNS_HDR_LEN + DNS_MAX_NAME + 4);
	assert_int_equal(dns_query_parse(msg, len, &q), DNS_OK);
	assert_string_equal(q.name, name);
	name[253] = '.';
	name[254] = 'a';
	name[255] = '\0';
	assert_int_equal(dns_build_lookup(name, DNS_T_A, msg, sizeof(msg)),
	    0);

	/* an output buffer too small: 0, nothing written past it */
	memset(small, 0xee, sizeof(small));
	assert_int_equal(dns_build_lookup("example.test", DNS_T_A, small,
	    sizeof(small) - 1), 0);
	assert_int_equal(small[sizeof(small) - 1], 0xee);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_captured),
		cmocka_unit_test(test_build_lookup),
		cmocka_unit_test(test_query_truncated),
		cmocka_unit_test(test_query_header),
		cmocka_unit_test(test_query_edns),
		cmocka_unit_test(test_query_names),
		cmocka_unit_test(test_query_lengths),
		cmocka_unit_test(test_name_expand),
		cmocka_unit_test(test_reply_empty),
		cmocka_unit_test(test_reply_rfc8482),
		cmocka_unit_test(test_reply_a),
		cmocka_unit_test(test_build_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
