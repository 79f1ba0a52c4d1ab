/*
 * Unit tests for sni/sni_retry.c: the server's first handshake message
 * (a HelloRetryRequest or not: openssl s_server's answers captured in
 * tests/data/tls, and hand-built boundary cases) and the client's bytes
 * after a retry request (a change_cipher_spec record, then the second
 * ClientHello).
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

#define BUF_MAX		(SNI_MAX_WIRE + 4096)
#define SH_NEED		38	/* handshake header, version, random */

struct msg {
	uint8_t	b[BUF_MAX];
	size_t	n;
};

static const uint8_t hrr_random[32] = {
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
	0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
	0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};
static const uint8_t ccs[6] = { 20, 3, 3, 0, 1, 1 };

static struct msg m, m2;

/* Parse an exact-size copy (ASan sees any read past the end). */
static enum sni_srv_status
srv(const uint8_t *b, size_t n, struct sni_srv_result *r)
{
	enum sni_srv_status st;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	if (n > 0)
		memcpy(cp, b, n);
	st = sni_srv_parse(cp, n, r);
	free(cp);
	return st;
}

static enum sni_status
retry(const uint8_t *b, size_t n, struct sni_result *r)
{
	enum sni_status st;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	if (n > 0)
		memcpy(cp, b, n);
	st = sni_parse_retry(cp, n, r);
	free(cp);
	return st;
}

/* Every strict prefix says NEED_MORE, the whole says want. */
static void
srv_prefixes(const uint8_t *b, size_t n, enum sni_srv_status want,
    const char *what)
{
	struct sni_srv_result r;
	enum sni_srv_status st;
	size_t i;

	for (i = 0; i < n; i++) {
		st = srv(b, i, &r);
		if (st != SNI_SRV_NEED_MORE && st != want)
			fail_msg("%s: prefix %zu/%zu: %s, want need-more or %s",
			    what, i, n, sni_srv_strstatus(st),
			    sni_srv_strstatus(want));
	}
	st = srv(b, n, &r);
	if (st != want)
		fail_msg("%s: %s, want %s", what, sni_srv_strstatus(st),
		    sni_srv_strstatus(want));
}

/* A ServerHello's first SH_NEED handshake bytes with this random, in
 * records of at most rec payload bytes (the rest of the message left
 * out: only its start is read). */
static void
server_hello(const uint8_t *random, uint16_t version, size_t rec,
    struct msg *out)
{
	uint8_t hs[SH_NEED];
	size_t off = 0, k;

	hs[0] = 2;		/* server_hello, body length 0x46 */
	hs[1] = 0;
	hs[2] = 0;
	hs[3] = 0x46;
	hs[4] = (uint8_t)(version >> 8);
	hs[5] = (uint8_t)version;
	memcpy(hs + 6, random, 32);
	out->n = 0;
	while (off < SH_NEED) {
		k = SH_NEED - off < rec ? SH_NEED - off : rec;
		out->b[out->n++] = 22;
		out->b[out->n++] = 3;
		out->b[out->n++] = 3;
		out->b[out->n++] = (uint8_t)(k >> 8);
		out->b[out->n++] = (uint8_t)k;
		memcpy(out->b + out->n, hs + off, k);
		out->n += k;
		off += k;
	}
}

static void
test_srv_captured(void **state)
{
	static const struct {
		const char		*file;
		enum sni_srv_status	 st;
		uint16_t		 version;
	} caps[] = {
		{ "server_hrr", SNI_SRV_HRR, 0x0303 },
		{ "server_tls13", SNI_SRV_HELLO, 0x0303 },
		{ "server_tls12", SNI_SRV_HELLO, 0x0303 },
	};
	struct sni_srv_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
		m.n = test_tls_load(caps[i].file, m.b, sizeof(m.b));
		srv_prefixes(m.b, m.n, caps[i].st, caps[i].file);
		assert_int_equal(srv(m.b, m.n, &r), caps[i].st);
		assert_int_equal(r.nrecords, 1);
		assert_int_equal(r.legacy_version, caps[i].version);
		assert_int_equal(r.record_version, 0x0303);
		/* decided by the first SH_NEED handshake bytes */
		assert_int_equal(srv(m.b, SNI_REC_HDR + SH_NEED, &r),
		    caps[i].st);
		assert_int_equal(srv(m.b, SNI_REC_HDR + SH_NEED - 1, &r),
		    SNI_SRV_NEED_MORE);
	}
}

/* The random alone tells a retry request: any byte of it changed, a
 * ServerHello; split over records of every size, the same. */
static void
test_srv_random(void **state)
{
	uint8_t rnd[32];
	size_t i, rec;
	char what[64];

	(void)state;
	for (rec = 1; rec <= SH_NEED; rec++) {
		server_hello(hrr_random, 0x0303, rec, &m);
		snprintf(what, sizeof(what), "hrr in records of %zu", rec);
		if ((SH_NEED + rec - 1) / rec <= SNI_MAX_RECORDS)
			srv_prefixes(m.b, m.n, SNI_SRV_HRR, what);
		else
			srv_prefixes(m.b, m.n, SNI_SRV_INVALID, what);
	}
	for (i = 0; i < 32; i++) {
		memcpy(rnd, hrr_random, 32);
		rnd[i] ^= 0x01;
		server_hello(rnd, 0x0303, SH_NEED, &m);
		srv_prefixes(m.b, m.n, SNI_SRV_HELLO, "random changed");
	}
	/* a TLS 1.0 ServerHello: the random decides, not the version */
	server_hello(hrr_random, 0x0301, SH_NEED, &m);
	srv_prefixes(m.b, m.n, SNI_SRV_HRR, "hrr random, version 3.1");
	memset(rnd, 0, sizeof(rnd));
	server_hello(rnd, 0x0301, SH_NEED, &m);
	srv_prefixes(m.b, m.n, SNI_SRV_HELLO, "tls 1.0 server hello");
}

/* No ServerHello first: decided by the first byte that says so. */
static void
test_srv_other(void **state)
{
	static const struct {
		const char		*what;
		const char		*bytes;
		size_t			 n;
		enum sni_srv_status	 st;
	} cases[] = {
#define C(w, b, st)	{ w, b, sizeof(b) - 1, st }
		C("alert", "\x15\x03\x03\x00\x02\x02\x28", SNI_SRV_OTHER),
		C("change_cipher_spec", "\x14\x03\x03\x00\x01\x01",
		    SNI_SRV_OTHER),
		C("application_data", "\x17\x03\x03\x00\x01\x00",
		    SNI_SRV_OTHER),
		C("plain text", "HTTP/1.1 400 Bad Request\r\n", SNI_SRV_OTHER),
		C("SSH banner", "SSH-2.0-OpenSSH_9.2\r\n", SNI_SRV_OTHER),
		C("handshake, major 2", "\x16\x02\x00\x00\x01\x02",
		    SNI_SRV_OTHER),
		C("hello_request first", "\x16\x03\x03\x00\x04\x00\x00\x00\x00",
		    SNI_SRV_OTHER),
		C("certificate first", "\x16\x03\x03\x00\x04\x0b\x00\x00\x00",
		    SNI_SRV_OTHER),
		C("empty handshake record", "\x16\x03\x03\x00\x00",
		    SNI_SRV_INVALID),
		C("record too long", "\x16\x03\x03\x40\x01\x02",
		    SNI_SRV_INVALID),
		C("server_hello, then an alert record",
		    "\x16\x03\x03\x00\x01\x02\x15\x03\x03\x00\x02\x02\x28",
		    SNI_SRV_INVALID),
		C("server_hello, then a record of major 2",
		    "\x16\x03\x03\x00\x01\x02\x16\x02\x03\x00\x01\x00",
		    SNI_SRV_INVALID),
		C("server_hello, then an empty record",
		    "\x16\x03\x03\x00\x01\x02\x16\x03\x03\x00\x00",
		    SNI_SRV_INVALID),
#undef C
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		srv_prefixes((const uint8_t *)cases[i].bytes, cases[i].n,
		    cases[i].st, cases[i].what);
}

/* At most SNI_MAX_RECORDS records; SNI_SRV_MAX_WIRE bytes decide. */
static void
test_srv_records(void **state)
{
	struct sni_srv_result r;
	size_t i;

	(void)state;
	/* 1-byte records: the 9th is one too many, told by its type and
	 * version bytes */
	server_hello(hrr_random, 0x0303, 1, &m);
	assert_int_equal(srv(m.b, 8 * (SNI_REC_HDR + 1) + 1, &r),
	    SNI_SRV_NEED_MORE);
	assert_int_equal(r.nrecords, 8);
	assert_int_equal(srv(m.b, 8 * (SNI_REC_HDR + 1) + 2, &r),
	    SNI_SRV_INVALID);
	/* 5-byte records: 8 of them hold all SH_NEED bytes (40 >= 38) */
	server_hello(hrr_random, 0x0303, 5, &m);
	assert_int_equal(srv(m.b, m.n, &r), SNI_SRV_HRR);
	assert_int_equal(r.nrecords, 8);
	assert_true(m.n <= SNI_SRV_MAX_WIRE);
	/* no input of SNI_SRV_MAX_WIRE bytes is still undecided */
	for (i = 1; i <= SH_NEED; i++) {
		server_hello(hrr_random, 0x0303, i, &m);
		memset(m.b + m.n, 0x16, BUF_MAX - m.n);
		assert_int_not_equal(srv(m.b, SNI_SRV_MAX_WIRE, &r),
		    SNI_SRV_NEED_MORE);
	}
	assert_int_equal(srv(m.b, 0, &r), SNI_SRV_NEED_MORE);
	assert_string_equal(sni_srv_strstatus(SNI_SRV_HRR),
	    "hello-retry-request");
}

/* The second hello, with and without the change_cipher_spec record. */
static void
test_retry_hello(void **state)
{
	static const struct {
		const char	*file;
		enum sni_status	 st;
		const char	*name;
	} caps[] = {
		{ "openssl_sni", SNI_OK, "api.example.test" },
		{ "openssl_nosni", SNI_ABSENT, "" },
		{ "openssl_frag", SNI_OK, "frag.example.test" },
		{ "openssl_mixed", SNI_OK, "mixed-1.example.test" },
	};
	struct sni_result r;
	enum sni_status st;
	size_t i, n, ccs_n;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
		m.n = test_tls_load(caps[i].file, m.b, sizeof(m.b));
		for (ccs_n = 0; ccs_n <= sizeof(ccs); ccs_n += sizeof(ccs)) {
			memcpy(m2.b, ccs, ccs_n);
			memcpy(m2.b + ccs_n, m.b, m.n);
			m2.n = ccs_n + m.n;
			assert_int_equal(retry(m2.b, m2.n, &r), caps[i].st);
			assert_string_equal(r.name, caps[i].name);
			assert_int_equal(r.consumed, m2.n);
			/* truncated anywhere: NEED_MORE */
			for (n = 0; n < m2.n; n++) {
				st = retry(m2.b, n, &r);
				if (st != SNI_NEED_MORE)
					fail_msg("%s ccs %zu: prefix %zu: %s",
					    caps[i].file, ccs_n, n,
					    sni_strstatus(st));
			}
		}
	}
}

/* Only one change_cipher_spec record, of one byte 1, before it. */
static void
test_retry_ccs(void **state)
{
	static const struct {
		const char	*what;
		const char	*bytes;
		size_t		 n;
		enum sni_status	 st;
	} cases[] = {
#define C(w, b, st)	{ w, b, sizeof(b) - 1, st }
		C("ccs of 2 bytes", "\x14\x03\x03\x00\x02\x01\x01",
		    SNI_INVALID),
		C("ccs payload 2", "\x14\x03\x03\x00\x01\x02", SNI_INVALID),
		C("ccs major 2", "\x14\x02\x03\x00\x01\x01", SNI_INVALID),
		C("two ccs", "\x14\x03\x03\x00\x01\x01\x14\x03\x03\x00\x01\x01",
		    SNI_NOT_HELLO),
		C("ccs, then an alert",
		    "\x14\x03\x03\x00\x01\x01\x15\x03\x03\x00\x02\x01\x00",
		    SNI_NOT_HELLO),
		C("an alert", "\x15\x03\x03\x00\x02\x01\x00", SNI_NOT_HELLO),
		C("application data", "\x17\x03\x03\x00\x01\x00",
		    SNI_NOT_HELLO),
		C("ccs, then plain text", "\x14\x03\x01\x00\x01\x01GET /",
		    SNI_NOT_TLS),
#undef C
	};
	struct sni_result r;
	enum sni_status st;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		for (n = 0; n < cases[i].n; n++) {
			st = retry((const uint8_t *)cases[i].bytes, n, &r);
			if (st != SNI_NEED_MORE && st != cases[i].st)
				fail_msg("%s: prefix %zu: %s", cases[i].what,
				    n, sni_strstatus(st));
		}
		st = retry((const uint8_t *)cases[i].bytes, cases[i].n, &r);
		if (st != cases[i].st)
			fail_msg("%s: %s, want %s", cases[i].what,
			    sni_strstatus(st), sni_strstatus(cases[i].st));
		assert_string_equal(r.name, "");
		assert_int_equal(r.consumed, 0);
	}
	/* the ccs's minor version is not looked at */
	m.n = test_tls_load("openssl_sni", m.b, sizeof(m.b));
	memcpy(m2.b, "\x14\x03\x01\x00\x01\x01", 6);
	memcpy(m2.b + 6, m.b, m.n);
	assert_int_equal(retry(m2.b, m.n + 6, &r), SNI_OK);
	assert_int_equal(retry(m2.b, 0, &r), SNI_NEED_MORE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srv_captured),
		cmocka_unit_test(test_srv_random),
		cmocka_unit_test(test_srv_other),
		cmocka_unit_test(test_srv_records),
		cmocka_unit_test(test_retry_hello),
		cmocka_unit_test(test_retry_ccs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
