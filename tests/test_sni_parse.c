/*
 * Unit tests for sni/sni_parse.c: real ClientHellos captured from curl,
 * openssl, git and wget (GnuTLS) and python3 (tests/data/tls, see its
 * README.md), their synthetic GREASE and ECH variants, and hand-built
 * boundary cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sni/sni.h"
#include "tests/testdata.h"

#define BUF_MAX	(SNI_MAX_WIRE + 4096)

struct msg {
	uint8_t	b[BUF_MAX];
	size_t	n;
};

static const struct {
	const char	*file;
	enum sni_status	 st;
	const char	*name;
	unsigned int	 nrec;
	bool		 ech, grease;
} captures[] = {
	{ "curl_h2", SNI_OK, "web.example.test", 1, false, false },
	{ "curl_tls12", SNI_OK, "tls12.example.test", 1, false, false },
	{ "curl_ip", SNI_ABSENT, "", 1, false, false },
	{ "openssl_sni", SNI_OK, "api.example.test", 1, false, false },
	{ "openssl_nosni", SNI_ABSENT, "", 1, false, false },
	{ "openssl_mixed", SNI_OK, "mixed-1.example.test", 1, false, false },
	{ "openssl_tls12", SNI_OK, "old.example.test", 1, false, false },
	{ "openssl_frag", SNI_OK, "frag.example.test", 4, false, false },
	{ "git_gnutls", SNI_OK, "git.example.test", 1, false, false },
	{ "wget_gnutls", SNI_OK, "localhost", 1, false, false },
	{ "python_ssl", SNI_OK, "py.example.test", 1, false, false },
	{ "grease_synth", SNI_OK, "web.example.test", 1, false, true },
	{ "ech_synth", SNI_OK, "web.example.test", 1, true, false },
};
#define NCAPTURES	(sizeof(captures) / sizeof(*captures))

static struct msg m, m2;

/* Parse the first n bytes from an exact-size copy, so ASan sees overreads. */
static enum sni_status
parse_n(const uint8_t *b, size_t n, struct sni_result *r)
{
	enum sni_status st;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	memcpy(cp, b, n);
	st = sni_parse(n == 0 ? NULL : cp, n, r);
	free(cp);
	return st;
}

static enum sni_status
parse(const struct msg *mm, struct sni_result *r)
{
	return parse_n(mm->b, mm->n, r);
}

/* Handshake message (header + body) of a well-formed capture. */
static size_t
unframe(const struct msg *in, uint8_t *hs)
{
	size_t pos = 0, n = 0, rlen;

	while (pos + SNI_REC_HDR <= in->n) {
		rlen = ((size_t)in->b[pos + 3] << 8) | in->b[pos + 4];
		memcpy(hs + n, in->b + pos + SNI_REC_HDR, rlen);
		n += rlen;
		pos += SNI_REC_HDR + rlen;
	}
	return n;
}

/* Frame hs into records; sizes[i] bytes in record i, the last takes the
 * rest (sizes ends with 0). */
static void
frame(const uint8_t *hs, size_t n, const size_t *sizes, struct msg *out)
{
	size_t off = 0, k;

	out->n = 0;
	while (off < n) {
		k = *sizes != 0 ? *sizes++ : n - off;
		if (k > n - off)
			k = n - off;
		out->b[out->n++] = 0x16;
		out->b[out->n++] = 0x03;
		out->b[out->n++] = 0x01;
		out->b[out->n++] = (uint8_t)(k >> 8);
		out->b[out->n++] = (uint8_t)k;
		memcpy(out->b + out->n, hs + off, k);
		out->n += k;
		off += k;
	}
}

static void
check_capture(size_t i, const struct msg *mm, enum sni_status st,
    const struct sni_result *r)
{
	if (st != captures[i].st)
		fail_msg("%s: %s", captures[i].file, sni_strstatus(st));
	assert_string_equal(r->name, captures[i].name);
	assert_int_equal(r->name_len, strlen(captures[i].name));
	assert_int_equal(r->consumed, mm->n);
	assert_int_equal(r->legacy_version, 0x0303);
	assert_int_equal(r->ech, captures[i].ech);
	assert_int_equal(r->grease, captures[i].grease);
}

/* Each capture parses; every strict prefix is NEED_MORE. */
static void
test_captured(void **state)
{
	struct sni_result r;
	size_t i, n;

	(void)state;
	for (i = 0; i < NCAPTURES; i++) {
		m.n = test_tls_load(captures[i].file, m.b, sizeof(m.b));
		for (n = 0; n < m.n; n++)
			if (parse_n(m.b, n, &r) != SNI_NEED_MORE)
				fail_msg("%s: prefix %zu", captures[i].file, n);
		assert_string_equal(r.name, "");
		assert_int_equal(r.consumed, 0);
		check_capture(i, &m, parse(&m, &r), &r);
		assert_int_equal(r.nrecords, captures[i].nrec);
		assert_int_equal(r.record_version, 0x0301);
	}
}

/* Re-framed into 2..8 handshake records, the handshake header itself split;
 * the 5-record framing is also checked at every prefix. */
static void
test_captured_reframed(void **state)
{
	static const size_t layouts[][9] = {
		{ 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 }, { 5, 0 }, { 100, 0 },
		{ 1, 1, 1, 1, 0 }, { 3, 40, 0 },
		{ 1, 1, 1, 1, 1, 1, 1, 0 },
		{ 64, 64, 64, 64, 64, 64, 64, 0 },
		{ 2, 50, 1, 200, 7, 0 },
	};
	static uint8_t hs[SNI_MAX_WIRE];
	struct sni_result r;
	size_t i, l, n, hsn;

	(void)state;
	for (i = 0; i < NCAPTURES; i++) {
		m.n = test_tls_load(captures[i].file, m.b, sizeof(m.b));
		hsn = unframe(&m, hs);
		for (l = 0; l < sizeof(layouts) / sizeof(*layouts); l++) {
			frame(hs, hsn, layouts[l], &m2);
			check_capture(i, &m2, parse(&m2, &r), &r);
			assert_true(r.nrecords >= 2 && r.nrecords <= 8);
		}
		for (n = 0; n < m2.n; n++)
			assert_int_equal(parse_n(m2.b, n, &r), SNI_NEED_MORE);
	}
}

/* Bytes after the hello's records (CCS, early data) are not looked at. */
static void
test_captured_trailing(void **state)
{
	static const uint8_t ccs[] = { 0x14, 0x03, 0x03, 0x00, 0x01, 0x01,
	    0x17, 0x03, 0x03, 0x00, 0x10, 'x' };
	struct sni_result r;
	size_t i, n;

	(void)state;
	for (i = 0; i < NCAPTURES; i++) {
		m.n = test_tls_load(captures[i].file, m.b, sizeof(m.b));
		n = m.n;
		memcpy(m.b + m.n, ccs, sizeof(ccs));
		m.n += sizeof(ccs);
		assert_int_equal(parse(&m, &r), captures[i].st);
		assert_int_equal(r.consumed, n);
		m.n = n;
		m.b[m.n++] = 0x16;	/* a further, partial record */
		assert_int_equal(parse(&m, &r), captures[i].st);
		assert_int_equal(r.consumed, n);
	}
}

/* Raw inputs: n == 0 means strlen(in). */
struct raw_case {
	const char	*in;
	size_t		 n;
	enum sni_status	 st;
};

static void
run_raw(const struct raw_case *c, size_t ncases, const char *what)
{
	struct sni_result r;
	size_t i, n;

	for (i = 0; i < ncases; i++) {
		n = c[i].n != 0 ? c[i].n : strlen(c[i].in);
		if (parse_n((const uint8_t *)c[i].in, n, &r) != c[i].st)
			fail_msg("%s case %zu", what, i);
		assert_int_equal(r.consumed, 0);
		assert_string_equal(r.name, "");
	}
}

/* ---- hand-built hellos ---- */

static void
put(struct msg *mm, const void *p, size_t n)
{
	assert_true(n <= sizeof(mm->b) - mm->n);
	memcpy(mm->b + mm->n, p, n);
	mm->n += n;
}

static void
put16(struct msg *mm, size_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(mm, b, 2);
}

static void
ext(struct msg *e, unsigned int type, const void *data, size_t n)
{
	put16(e, type);
	put16(e, n);
	put(e, data, n);
}

/* A server_name extension with one host_name. */
static void
ext_sni(struct msg *e, const char *name, size_t n)
{
	put16(e, 0);
	put16(e, n + 5);
	put16(e, n + 3);
	put(e, "", 1);
	put16(e, n);
	put(e, name, n);
}

/* ClientHello body: version, random, a sid-byte session id, ncs bytes of
 * cipher suites, ncm compression methods, then the extension block (if e
 * != NULL). */
static void
hello_body_x(struct msg *b, unsigned int version, size_t sid, size_t ncs,
    size_t ncm, const struct msg *e)
{
	static const uint8_t suites[] = { 0x13, 0x01, 0xc0, 0x2f, 0x00, 0x9c };
	uint8_t fill[256];
	size_t i;

	memset(fill, 0x5a, sizeof(fill));
	b->n = 0;
	put16(b, version);
	put(b, fill, 32);
	put(b, (uint8_t[]){ (uint8_t)sid }, 1);
	put(b, fill, sid);
	put16(b, ncs);
	for (i = 0; i < ncs; i++)
		put(b, suites + i % sizeof(suites), 1);
	put(b, (uint8_t[]){ (uint8_t)ncm }, 1);
	memset(fill, 0, sizeof(fill));
	put(b, fill, ncm);
	if (e != NULL) {
		put16(b, e->n);
		put(b, e->b, e->n);
	}
}

static void
hello_body(struct msg *b, const struct msg *e)
{
	hello_body_x(b, 0x0303, 32, 4, 1, e);
}

/* Wrap a body as a handshake message in records of at most rec bytes. */
static void
wrap(const struct msg *body, size_t rec, struct msg *out)
{
	static uint8_t hs[SNI_MAX_WIRE + 8];
	size_t sizes[2 * SNI_MAX_RECORDS], i;

	hs[0] = 1;
	hs[1] = (uint8_t)(body->n >> 16);
	hs[2] = (uint8_t)(body->n >> 8);
	hs[3] = (uint8_t)body->n;
	memcpy(hs + 4, body->b, body->n);
	for (i = 0; i < sizeof(sizes) / sizeof(*sizes) - 1; i++)
		sizes[i] = rec;
	sizes[i] = 0;
	frame(hs, body->n + 4, sizes, out);
}

static enum sni_status
parse_exts(const struct msg *e, struct sni_result *r)
{
	static struct msg body;

	hello_body(&body, e);
	wrap(&body, 16384, &m2);
	return parse(&m2, r);
}

static enum sni_status
parse_name(const char *name, size_t n, struct sni_result *r)
{
	static struct msg e;

	e.n = 0;
	ext(&e, 0x000b, "\x01\x00", 2);
	ext_sni(&e, name, n);
	ext(&e, 0x002b, "\x02\x03\x04", 3);
	return parse_exts(&e, r);
}

static void
test_names(void **state)
{
	static const struct {
		const char	*in, *out;
	} cases[] = {
		{ "a", "a" }, { "A.B", "a.b" }, { "x.", "x" },
		{ "WWW.Example.COM.", "www.example.com" },
		{ "xn--bcher-kva.example", "xn--bcher-kva.example" },
		{ "a-1.b-2", "a-1.b-2" },
		/* gk_name.h's rule, as for patterns and DNS names: '_' is
		 * a name byte, an IP literal is no name (RFC 6066 3) */
		{ "a_b.example", "a_b.example" },
		{ "API_X.Example.", "api_x.example" },
		{ "_dmarc.example.com", "_dmarc.example.com" },
		{ "-a_.b-", "-a_.b-" },
		{ "1.2.3.4", NULL }, { "example.123", NULL },
		{ "1.2.3.4.", NULL },
		{ "x..", NULL }, { ".", NULL }, { "..", NULL }, { ".x", NULL },
		{ "a..b", NULL }, { "a b", NULL },
		{ "*.example", NULL }, { "a/b", NULL }, { "a:443", NULL },
		{ "\xc3\xa9.example", NULL }, { "a\x7f", NULL },
		{ "a\r\nb", NULL }, { "[::1]", NULL }, { "a@b", NULL },
	};
	struct sni_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		if (parse_name(cases[i].in, strlen(cases[i].in), &r) !=
		    (cases[i].out != NULL ? SNI_OK : SNI_INVALID))
			fail_msg("name %zu: %s", i, cases[i].in);
		assert_string_equal(r.name,
		    cases[i].out != NULL ? cases[i].out : "");
	}
	assert_int_equal(parse_name("", 0, &r), SNI_INVALID);
	assert_int_equal(parse_name("a\0b", 3, &r), SNI_INVALID);
	assert_int_equal(parse_name("ab\0", 3, &r), SNI_INVALID);
}

/* Build a name of n bytes with labels of at most lab bytes. */
static void
long_name(char *s, size_t n, size_t lab)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = (i + 1) % (lab + 1) == 0 ? '.' : (char)('a' + i % 26);
	if (n > 0 && s[n - 1] == '.')
		s[n - 1] = 'z';
	s[n] = '\0';
}

static void
test_name_lengths(void **state)
{
	struct sni_result r;
	char s[600];

	(void)state;
	long_name(s, 253, 63);
	assert_int_equal(parse_name(s, 253, &r), SNI_OK);
	assert_int_equal(r.name_len, 253);
	assert_string_equal(r.name, s);
	s[253] = '.';
	assert_int_equal(parse_name(s, 254, &r), SNI_OK);	/* dot gone */
	assert_int_equal(r.name_len, 253);
	long_name(s, 254, 63);
	assert_int_equal(parse_name(s, 254, &r), SNI_INVALID);
	assert_string_equal(r.name, "");
	s[254] = '.';
	assert_int_equal(parse_name(s, 255, &r), SNI_INVALID);
	long_name(s, 500, 63);
	assert_int_equal(parse_name(s, 500, &r), SNI_INVALID);
	/* label of 63 then 64 bytes */
	long_name(s, 63, 63);
	strcat(s, ".example");
	assert_int_equal(parse_name(s, strlen(s), &r), SNI_OK);
	long_name(s, 64, 64);
	strcat(s, ".example");
	assert_int_equal(parse_name(s, strlen(s), &r), SNI_INVALID);
	long_name(s, 64, 64);
	assert_int_equal(parse_name(s, 64, &r), SNI_INVALID);
}

/* The 75-byte prefix of hello_body() ends after the compression methods. */
#define BODY_NO_EXT	75

static void
test_hello_truncated(void **state)
{
	static struct msg e, body, cut;
	struct sni_result r;
	size_t n;

	(void)state;
	e.n = 0;
	ext(&e, 0x000a, "\x00\x02\x00\x1d", 4);
	ext_sni(&e, "cut.example", 11);
	ext(&e, 0x0010, "\x00\x03\x02h2", 5);
	hello_body(&body, &e);
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_OK);
	assert_string_equal(r.name, "cut.example");
	/* every shorter body, lengths of records and handshake kept true */
	for (n = 0; n < body.n; n++) {
		memcpy(cut.b, body.b, n);
		cut.n = n;
		wrap(&cut, 16384, &m2);
		if (parse(&m2, &r) !=
		    (n == BODY_NO_EXT ? SNI_ABSENT : SNI_INVALID))
			fail_msg("body cut at %zu", n);
		assert_string_equal(r.name, "");
	}
}

static void
test_hello_fields(void **state)
{
	static const struct {
		unsigned int	 version;
		size_t		 sid, ncs, ncm;
		enum sni_status	 st;
	} cases[] = {
		{ 0x0303, 32, 4, 1, SNI_OK },
		{ 0x0303, 0, 2, 1, SNI_OK },
		{ 0x0300, 1, 6, 2, SNI_OK },
		{ 0x0304, 31, 200, 255, SNI_OK },
		{ 0x0303, 33, 4, 1, SNI_INVALID },
		{ 0x0303, 255, 4, 1, SNI_INVALID },
		{ 0x0303, 32, 0, 1, SNI_INVALID },
		{ 0x0303, 32, 3, 1, SNI_INVALID },
		{ 0x0303, 32, 1, 1, SNI_INVALID },
		{ 0x0303, 32, 4, 0, SNI_INVALID },
		{ 0x0203, 32, 4, 1, SNI_INVALID },
		{ 0x0403, 32, 4, 1, SNI_INVALID },
		{ 0x0002, 32, 4, 1, SNI_INVALID },
	};
	static struct msg e, body;
	struct sni_result r;
	size_t i;

	(void)state;
	e.n = 0;
	ext_sni(&e, "f.example", 9);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		hello_body_x(&body, cases[i].version, cases[i].sid,
		    cases[i].ncs, cases[i].ncm, &e);
		wrap(&body, 16384, &m2);
		if (parse(&m2, &r) != cases[i].st)
			fail_msg("field case %zu", i);
		if (cases[i].st == SNI_OK)
			assert_int_equal(r.legacy_version, cases[i].version);
	}
}

static void
test_no_sni(void **state)
{
	static struct msg e, body;
	struct sni_result r;

	(void)state;
	hello_body(&body, NULL);		/* no extension block */
	assert_int_equal(body.n, BODY_NO_EXT);
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_ABSENT);
	assert_int_equal(r.consumed, m2.n);
	e.n = 0;				/* empty extension block */
	assert_int_equal(parse_exts(&e, &r), SNI_ABSENT);
	ext(&e, 0x0017, "", 0);
	ext(&e, 0x0010, "\x00\x03\x02h2", 5);
	ext(&e, 0x0a1a, "", 0);			/* not GREASE */
	assert_int_equal(parse_exts(&e, &r), SNI_ABSENT);
	assert_false(r.ech || r.grease);
	ext(&e, 0xfe0d, "\x00\x00\x01\x00\x01\x07\x00\x00\x00\x00", 10);
	assert_int_equal(parse_exts(&e, &r), SNI_ABSENT);
	assert_true(r.ech);
	assert_int_equal(r.consumed, m2.n);
}

/* Extension block framing, duplicates, GREASE and ECH. */
static void
test_extensions(void **state)
{
	static struct msg e, body;
	struct sni_result r;

	(void)state;
	e.n = 0;
	ext(&e, 0x0a0a, "", 0);
	ext_sni(&e, "e.example", 9);
	ext(&e, 0xfe0d, "", 0);
	ext(&e, 0xfafa, "\x00", 1);
	assert_int_equal(parse_exts(&e, &r), SNI_OK);
	assert_true(r.grease && r.ech);
	/* block length one more and one less than the extensions */
	hello_body(&body, &e);
	body.b[BODY_NO_EXT + 1]++;
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_INVALID);
	body.b[BODY_NO_EXT + 1] -= 2;
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_INVALID);
	/* last extension longer than the block; stray bytes at the end */
	e.n -= 1;
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	e.n -= 4;
	put(&e, "\x00\x17\x00", 3);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	e.n -= 3;
	put(&e, "\x00", 1);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	/* duplicates */
	e.n = 0;
	ext_sni(&e, "d.example", 9);
	ext(&e, 0x0017, "", 0);
	ext(&e, 0x0a0a, "", 0);
	ext(&e, 0x1a1a, "", 0);
	assert_int_equal(parse_exts(&e, &r), SNI_OK);
	ext(&e, 0x0a0a, "", 0);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	assert_string_equal(r.name, "");
	e.n -= 4;
	ext(&e, 0x0017, "", 0);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	e.n -= 4;
	ext_sni(&e, "d.example", 9);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
	e.n -= 18;
	ext_sni(&e, "other.example", 13);
	assert_int_equal(parse_exts(&e, &r), SNI_INVALID);
}

/* server_name extension_data (RFC 6066 §3) framing. */
static void
test_server_name_ext(void **state)
{
	static const struct {
		const char	*data;
		size_t		 n;
		enum sni_status	 st;
	} cases[] = {
		{ "\x00\x06\x00\x00\x03" "abc", 8, SNI_OK },
		{ "", 0, SNI_INVALID },
		{ "\x00", 1, SNI_INVALID },
		{ "\x00\x00", 2, SNI_INVALID },
		{ "\x00\x07\x00\x00\x03" "abc", 8, SNI_INVALID },
		{ "\x00\x05\x00\x00\x03" "abc", 8, SNI_INVALID },
		{ "\x00\x07\x00\x00\x03" "abcX", 9, SNI_INVALID },
		{ "\x00\x06\x00\x00\x04" "abc", 8, SNI_INVALID },
		{ "\x00\x06\x00\x00\x02" "abc", 8, SNI_INVALID },
		{ "\x00\x06\x01\x00\x03" "abc", 8, SNI_INVALID },
		{ "\x00\x06\xff\x00\x03" "abc", 8, SNI_INVALID },
		{ "\x00\x03\x00\x00\x00", 5, SNI_INVALID },
		{ "\x00\x02\x00\x00", 4, SNI_INVALID },
		{ "\x00\x01\x00", 3, SNI_INVALID },
		{ "\x00\x0c\x00\x00\x03" "abc\x00\x00\x03" "def", 14,
		    SNI_INVALID },
		{ "\x00\x0c\x00\x00\x03" "abc\x00\x00\x03" "abc", 14,
		    SNI_INVALID },
		{ "\x00\x0c\x00\x00\x03" "abc\x01\x00\x03" "def", 14,
		    SNI_INVALID },
	};
	static struct msg e;
	struct sni_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		e.n = 0;
		ext(&e, 0x0017, "", 0);
		ext(&e, 0x0000, cases[i].data, cases[i].n);
		if (parse_exts(&e, &r) != cases[i].st)
			fail_msg("server_name case %zu", i);
		assert_string_equal(r.name, cases[i].st == SNI_OK ? "abc" : "");
	}
}

/* Record layer: lengths, types, versions, the handshake header, bounds. */
static void
test_records(void **state)
{
	static const struct raw_case cases[] = {
		{ "\x16\x03\x01\x00\x00", 5, SNI_INVALID },
		{ "\x16\x03\x01\x40\x01", 5, SNI_INVALID },
		{ "\x16\x03\x01\xff\xff\x01", 6, SNI_INVALID },
		{ "\x16\x03\x01\x40\x00", 5, SNI_NEED_MORE },
		{ "\x16\x03\x01\x00\x10\x02", 6, SNI_INVALID },
		{ "\x16\x03\x01\x00\x10\x00", 6, SNI_INVALID },
		{ "\x16\x03\x01\x00\x10\x01\x00\x00", 8, SNI_NEED_MORE },
		{ "\x16\x03\x01\x00\x10\x01\x00\x00\x0b", 9, SNI_INVALID },
		{ "\x16\x03\x01\x00\x10\x01\x00\x00\x0c", 9, SNI_NEED_MORE },
		{ "\x16\x03\x01\x00\x10\x01\x00\x40\x00", 9, SNI_NEED_MORE },
		{ "\x16\x03\x01\x00\x10\x01\x00\x40\x01", 9, SNI_TOO_LONG },
		{ "\x16\x03\x01\x00\x10\x01\xff\xff\xff", 9, SNI_TOO_LONG },
		/* handshake header split over records */
		{ "\x16\x03\x01\x00\x01\x01\x16\x03\x01\x00\x03\x01\x00\x00",
		    14, SNI_TOO_LONG },
		{ "\x16\x03\x01\x00\x02\x01\x00\x16\x03\x01\x00\x05\x00\x02",
		    14, SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x02", 6, SNI_INVALID },
		/* what follows the first record */
		{ "\x16\x03\x01\x00\x01\x01\x17", 7, SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x01\x14\x03\x03", 9, SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x01\x15\x03\x03", 9, SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x01\x16\x02", 8, SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x01\x16\x03\x01\x00\x00", 11,
		    SNI_INVALID },
		{ "\x16\x03\x01\x00\x01\x01\x16\x03\x01\x00", 10,
		    SNI_NEED_MORE },
	};
	(void)state;
	run_raw(cases, sizeof(cases) / sizeof(*cases), "record");
}

/* The hello must fill its records exactly, in at most 8 of them. */
static void
test_record_bounds(void **state)
{
	static const size_t nine[] = { 1, 1, 1, 1, 1, 1, 1, 1, 0 };
	static uint8_t hs[SNI_MAX_WIRE];
	struct sni_result r;
	size_t hsn, n;

	(void)state;
	m.n = test_tls_load("curl_h2", m.b, sizeof(m.b));
	m.b[4]++;			/* record one byte longer */
	m.b[m.n++] = 0;
	assert_int_equal(parse(&m, &r), SNI_INVALID);
	m.n = 9;			/* known from the headers alone */
	assert_int_equal(parse(&m, &r), SNI_INVALID);
	m.n = test_tls_load("openssl_frag", m.b, sizeof(m.b));
	hsn = unframe(&m, hs);
	frame(hs, hsn, nine, &m2);
	for (n = 0; n < m2.n; n++)
		assert_int_equal(parse_n(m2.b, n, &r),
		    n < 8 * 6 ? SNI_NEED_MORE : SNI_TOO_LONG);
	assert_int_equal(r.nrecords, 8);
	/* last record shortened: the hello is not complete after 4 */
	m.b[m.n - 229]--;
	m.n--;
	assert_int_equal(parse(&m, &r), SNI_NEED_MORE);
}

/* A padding extension brings the body to exactly SNI_MAX_HELLO bytes. */
static void
test_max_hello(void **state)
{
	static uint8_t pad[SNI_MAX_HELLO];
	static struct msg e, body;
	struct sni_result r;
	size_t n;

	(void)state;
	e.n = 0;
	ext_sni(&e, "max.example", 11);
	n = SNI_MAX_HELLO - BODY_NO_EXT - 2 - e.n - 4;
	ext(&e, 0x0015, pad, n);
	hello_body(&body, &e);
	assert_int_equal(body.n, SNI_MAX_HELLO);
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_OK);
	assert_int_equal(r.nrecords, 2);
	wrap(&body, (SNI_MAX_HELLO + 4 + 7) / 8, &m2);
	assert_int_equal(m2.n, SNI_MAX_WIRE);
	assert_int_equal(parse(&m2, &r), SNI_OK);
	assert_int_equal(r.nrecords, 8);
	assert_int_equal(r.consumed, SNI_MAX_WIRE);
	assert_string_equal(r.name, "max.example");
	e.n -= n + 4;
	ext(&e, 0x0015, pad, n + 1);
	hello_body(&body, &e);
	wrap(&body, 16384, &m2);
	assert_int_equal(parse(&m2, &r), SNI_TOO_LONG);
	assert_int_equal(parse_n(m2.b, 9, &r), SNI_TOO_LONG);
	assert_string_equal(r.name, "");
}

static void
test_matches_strstatus(void **state)
{
	struct sni_result r;

	(void)state;
	m.n = test_tls_load("openssl_mixed", m.b, sizeof(m.b));
	assert_int_equal(parse(&m, &r), SNI_OK);
	assert_true(sni_matches(&r, "mixed-1.example.test", 20));
	assert_true(sni_matches(&r, "MIXED-1.example.TEST.", 21));
	assert_false(sni_matches(&r, "mixed-1.example.test..", 22));
	assert_false(sni_matches(&r, "mixed-1.example.tes", 19));
	assert_false(sni_matches(&r, "xmixed-1.example.test", 21));
	assert_false(sni_matches(&r, "mixed-1.example.tesx", 20));
	assert_false(sni_matches(&r, "", 0));
	m.n = test_tls_load("openssl_nosni", m.b, sizeof(m.b));
	assert_int_equal(parse(&m, &r), SNI_ABSENT);
	assert_false(sni_matches(&r, "", 0));
	assert_false(sni_matches(&r, ".", 1));
	assert_string_equal(sni_strstatus(SNI_NEED_MORE), "need-more");
	assert_string_equal(sni_strstatus(SNI_OK), "ok");
	assert_string_equal(sni_strstatus(SNI_ABSENT), "no-sni");
	assert_string_equal(sni_strstatus(SNI_NOT_TLS), "not-tls");
	assert_string_equal(sni_strstatus(SNI_INVALID), "invalid-tls");
	assert_string_equal(sni_strstatus(SNI_TOO_LONG), "tls-too-long");
	assert_string_equal(sni_strstatus(SNI_SSL2), "sslv2-hello");
	assert_string_equal(sni_strstatus(SNI_NOT_HELLO), "tls-not-hello");
	assert_string_equal(sni_strstatus((enum sni_status)99), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured),
		cmocka_unit_test(test_captured_reframed),
		cmocka_unit_test(test_captured_trailing),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_name_lengths),
		cmocka_unit_test(test_hello_truncated),
		cmocka_unit_test(test_hello_fields),
		cmocka_unit_test(test_no_sni),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_server_name_ext),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_record_bounds),
		cmocka_unit_test(test_max_hello),
		cmocka_unit_test(test_matches_strstatus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
