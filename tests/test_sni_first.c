/*
 * Unit tests for sni/sni_parse.c, first bytes: what is not TLS at all,
 * an SSLv2-format ClientHello and TLS records other than a handshake, each
 * told apart from the fewest bytes that decide it (every shorter prefix
 * says NEED_MORE). The hellos themselves are in test_sni_parse.c.
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

static struct msg m;

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

static void
test_not_tls(void **state)
{
	static const struct raw_case cases[] = {
		{ "GET / HTTP/1.1\r\nHost: a.b\r\n\r\n", 0, SNI_NOT_TLS },
		{ "CONNECT a.example:443 HTTP/1.1\r\n\r\n", 0, SNI_NOT_TLS },
		{ "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", 0, SNI_NOT_TLS },
		{ "\x00", 1, SNI_NOT_TLS },
		{ "\x13\x03", 2, SNI_NOT_TLS },	/* below 20 */
		{ "\x19\x03", 2, SNI_NOT_TLS },	/* above 24 */
		{ "\x15\x02", 2, SNI_NOT_TLS },	/* alert-ish, major 2 */
		{ "\x17\x04\x03", 3, SNI_NOT_TLS },
		{ "\x80\x2e\x02", 3, SNI_NOT_TLS },	/* SSLv2, not a hello */
		{ "\xff\xff\x00\x01", 4, SNI_NOT_TLS },
		{ "\x15", 1, SNI_NEED_MORE },	/* 20..24: the version tells */
		{ "\x14", 1, SNI_NEED_MORE },
		{ "\x18", 1, SNI_NEED_MORE },
		{ "\x80", 1, SNI_NEED_MORE },	/* high bit: msg_type decides */
		{ "\x80\x2e", 2, SNI_NEED_MORE },
		{ "\x16", 1, SNI_NEED_MORE },
		{ "\x16\x03", 2, SNI_NEED_MORE },
		{ "\x16\x03\x00\x00", 4, SNI_NEED_MORE },
		{ "", 0, SNI_NEED_MORE },
	};
	struct sni_result r;

	(void)state;
	run_raw(cases, sizeof(cases) / sizeof(*cases), "not-tls");
	assert_int_equal(sni_parse(NULL, 0, &r), SNI_NEED_MORE);
}

/*
 * An SSLv2-format ClientHello (RFC 5246 E.2, RFC 6101 E.2), as TLS 1.0
 * clients of the 2000s sent it (OpenSSL 0.9.8 by default). No client on
 * Debian 12 can send one (OpenSSL 3 and GnuTLS dropped it; s_client has
 * no -ssl2), so it is built here from the RFC's layout.
 */
static const uint8_t ssl2_hello[] = {
	0x80, 0x2e,		/* 2-byte header: high bit, msg_length 46 */
	0x01,			/* msg_type CLIENT-HELLO */
	0x03, 0x01,		/* version: TLS 1.0 */
	0x00, 0x15,		/* cipher_spec_length: 7 specs of 3 bytes */
	0x00, 0x00,		/* session_id_length */
	0x00, 0x10,		/* challenge_length */
	0x00, 0x00, 0x39, 0x00, 0x00, 0x38, 0x00, 0x00, 0x35, 0x00, 0x00,
	0x33, 0x00, 0x00, 0x32, 0x00, 0x00, 0x2f, 0x00, 0x00, 0xff,
	0x5a, 0x17, 0x33, 0x0e, 0xc1, 0x42, 0x9d, 0x01, 0x6e, 0xb8, 0x04,
	0x2c, 0x91, 0x7f, 0x20, 0xd3,	/* challenge */
};

/* Told apart after 3 bytes; every shorter prefix waits. */
static void
test_ssl2_hello(void **state)
{
	static const struct raw_case cases[] = {
		{ "\x80\x2e\x01", 3, SNI_SSL2 },
		{ "\xff\xff\x01", 3, SNI_SSL2 },
		{ "\x80\x00\x01\x00\x02", 5, SNI_SSL2 },	/* SSL 2.0 */
		{ "\x81\x00\x01\x03\x03", 5, SNI_SSL2 },	/* long */
		{ "\x80\x2e\x04", 3, SNI_NOT_TLS },	/* SERVER-HELLO */
		{ "\x80\x2e\x00", 3, SNI_NOT_TLS },
	};
	struct sni_result r;
	size_t n;

	(void)state;
	assert_int_equal(sizeof(ssl2_hello), 2 + 0x2e);
	for (n = 0; n <= sizeof(ssl2_hello); n++) {
		if (parse_n(ssl2_hello, n, &r) != (n < 3 ? SNI_NEED_MORE :
		    SNI_SSL2))
			fail_msg("sslv2 hello, prefix %zu", n);
		assert_int_equal(r.consumed, 0);
		assert_string_equal(r.name, "");
	}
	run_raw(cases, sizeof(cases) / sizeof(*cases), "sslv2");
}

/*
 * A TLS record other than a handshake first: some servers skip a warning
 * alert or a change_cipher_spec before the hello, so what follows it
 * would go unchecked. Told apart after 2 bytes.
 */
static void
test_not_hello(void **state)
{
	static const struct raw_case cases[] = {
		{ "\x15\x03", 2, SNI_NOT_HELLO },
		{ "\x15\x03\x03\x00\x02\x01\x00", 7, SNI_NOT_HELLO },
		{ "\x14\x03\x01\x00\x01\x01", 6, SNI_NOT_HELLO },
		{ "\x17\x03\x03\x00\x10", 5, SNI_NOT_HELLO },
		{ "\x18\x03\x02", 3, SNI_NOT_HELLO },
		{ "\x14\x03", 2, SNI_NOT_HELLO },
		/* a handshake record of another major version */
		{ "\x16\x02", 2, SNI_NOT_HELLO },
		{ "\x16\x04\x01", 3, SNI_NOT_HELLO },
		{ "\x16\x00\x00\x00\x10", 5, SNI_NOT_HELLO },
	};
	struct sni_result r;
	size_t i, n;

	(void)state;
	run_raw(cases, sizeof(cases) / sizeof(*cases), "not-hello");
	/* a warning alert, then a real hello: the alert decides */
	m.n = test_tls_load("curl_h2", m.b, sizeof(m.b));
	memmove(m.b + 7, m.b, m.n);
	memcpy(m.b, "\x15\x03\x03\x00\x02\x01\x5a", 7);
	m.n += 7;
	for (n = 0; n <= m.n; n += n < 16 ? 1 : 97) {
		if (parse_n(m.b, n, &r) != (n < 2 ? SNI_NEED_MORE :
		    SNI_NOT_HELLO))
			fail_msg("alert then hello, prefix %zu", n);
	}
	assert_int_equal(parse_n(m.b, m.n, &r), SNI_NOT_HELLO);
	assert_int_equal(r.consumed, 0);
	/* the other record types in front of the same hello */
	for (i = 20; i <= 24; i++) {
		if (i == 22)
			continue;
		m.b[0] = (uint8_t)i;
		assert_int_equal(parse_n(m.b, m.n, &r), SNI_NOT_HELLO);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(test_ssl2_hello),
		cmocka_unit_test(test_not_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
