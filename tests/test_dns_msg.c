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

#include "dns_msg.h"

#define MSG_MAX		4096
#define A_WEB		"\12\0\0\5"
#define AAAA_WEB	"\375\0\0\0\0\0\0\0\0\0\0\0\0\0\0\5"

struct msg {
	uint8_t	b[MSG_MAX];
	size_t	n;
};

static void
load(const char *name, struct msg *m)
{
	const char *src = getenv("GK_SRCDIR");
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/dns/%s",
	    src != NULL ? src : ".", name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	m->n = fread(m->b, 1, sizeof(m->b), f);
	fclose(f);
	assert_true(m->n > 0 && m->n < sizeof(m->b));
}

static void
load_query(const char *c, struct msg *m, struct dns_query *q,
    enum dns_status want)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.query.bin", c);
	load(name, m);
	assert_int_equal(dns_query_parse(m->b, m->n, q), want);
}

/* Load <c>.answer.bin; it parses as an answer to q. */
static void
load_answer(const char *c, struct msg *m, const struct dns_query *q,
    struct dns_answer *a)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.answer.bin", c);
	load(name, m);
	assert_int_equal(dns_answer_parse(m->b, m->n, q, a), DNS_OK);
}

/* Message builder for hand-made cases. */
static void
put16(struct msg *m, unsigned int v)
{
	m->b[m->n++] = (uint8_t)(v >> 8);
	m->b[m->n++] = (uint8_t)v;
}

static void
put32(struct msg *m, uint32_t v)
{
	put16(m, v >> 16);
	put16(m, v & 0xffff);
}

static void
putraw(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Dotted name, uncompressed; "" is the root. */
static void
putname(struct msg *m, const char *s)
{
	const char *dot;
	size_t l;

	while (*s != '\0') {
		dot = strchr(s, '.');
		l = dot != NULL ? (size_t)(dot - s) : strlen(s);
		m->b[m->n++] = (uint8_t)l;
		putraw(m, s, l);
		s += l + (dot != NULL);
	}
	m->b[m->n++] = 0;
}

static void
puthdr(struct msg *m, unsigned int flags, unsigned int qd, unsigned int an,
    unsigned int ns, unsigned int ar)
{
	m->n = 0;
	put16(m, 0x1234);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

static void
putrr(struct msg *m, const char *owner, unsigned int type, uint32_t ttl,
    const void *rdata, size_t rdlen)
{
	putname(m, owner);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
	put32(m, ttl);
	put16(m, (unsigned int)rdlen);
	putraw(m, rdata, rdlen);
}

static void
putrr_name(struct msg *m, const char *owner, unsigned int type, uint32_t ttl,
    const char *target)
{
	struct msg t = { .n = 0 };

	putname(&t, target);
	putrr(m, owner, type, ttl, t.b, t.n);
}

static void
putopt(struct msg *m, unsigned int size, unsigned int version)
{
	m->b[m->n++] = 0;
	put16(m, DNS_T_OPT);
	put16(m, size);
	put32(m, version << 16);
	put16(m, 0);
}

/* Header and question `name`/A/IN; `name` NULL: raw wire `w`/`wl`. */
static void
putq(struct msg *m, unsigned int flags, unsigned int qd, unsigned int ar,
    const char *name, const void *w, size_t wl)
{
	puthdr(m, flags, qd, 0, 0, ar);
	if (name != NULL)
		putname(m, name);
	else
		putraw(m, w, wl);
	put16(m, DNS_T_A);
	put16(m, DNS_CLASS_IN);
}

static unsigned int
get16(const uint8_t *p)
{
	return ((unsigned int)p[0] << 8) | p[1];
}

static uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)get16(p) << 16) | get16(p + 2);
}

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
		assert_true(q.name_ldh);
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
		bool		 ldh;
	} cases[] = {
		{ "root", (const uint8_t *)"\0", 1, DNS_OK, "", true },
		{ "upper", (const uint8_t *)"\3AbC\0", 5, DNS_OK, "abc", true },
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
		assert_int_equal(q.name_ldh, cases[i].ldh);
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

/* Check a reply's header against the query; return the flags. */
static unsigned int
check_reply(const struct dns_query *q, const uint8_t *r, size_t n,
    unsigned int rcode, unsigned int an, unsigned int ar)
{
	unsigned int flags = get16(r + 2);

	assert_true(n >= DNS_HDR_LEN);
	assert_int_equal(get16(r), q->id);
	assert_true(flags & 0x8000);
	assert_int_equal((flags >> 11) & 15, q->opcode);
	assert_int_equal(flags & 0x0100, q->flags & 0x0100);
	assert_true(flags & 0x0080);
	assert_int_equal(flags & 15, rcode);
	assert_int_equal(get16(r + 6), an);
	assert_int_equal(get16(r + 10), ar);
	return flags;
}

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
		cmocka_unit_test(test_query_captured),
		cmocka_unit_test(test_query_truncated),
		cmocka_unit_test(test_query_header),
		cmocka_unit_test(test_query_edns),
		cmocka_unit_test(test_query_names),
		cmocka_unit_test(test_query_lengths),
		cmocka_unit_test(test_name_expand),
		cmocka_unit_test(test_reply_empty),
		cmocka_unit_test(test_reply_rfc8482),
		cmocka_unit_test(test_build_query),
		cmocka_unit_test(test_answer_captured),
		cmocka_unit_test(test_answer_mismatch),
		cmocka_unit_test(test_answer_chain),
		cmocka_unit_test(test_answer_negative),
		cmocka_unit_test(test_reply_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
