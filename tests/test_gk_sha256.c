/*
 * SHA-256 (gk_sha256.c) against FIPS 180-4's examples and NIST's test
 * vectors, in one call and fed in pieces of every size, and against
 * OpenSSL's for lengths around the block and padding edges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "gatekeeper/base/gk_sha256.h"

static void
hex(const uint8_t *d, char *out)
{
	int i;

	for (i = 0; i < GK_SHA256_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void
check(const char *msg, size_t len, const char *want)
{
	uint8_t md[GK_SHA256_LEN];
	char got[2 * GK_SHA256_LEN + 1];
	struct gk_sha256 s;
	size_t step, i;

	gk_sha256(msg, len, md);
	hex(md, got);
	assert_string_equal(got, want);
	for (step = 1; step <= 130 && step <= len; step++) {
		gk_sha256_init(&s);
		for (i = 0; i < len; i += step)
			gk_sha256_update(&s, msg + i, len - i < step ?
			    len - i : step);
		gk_sha256_final(&s, md);
		hex(md, got);
		assert_string_equal(got, want);
	}
}

static void
test_vectors(void **state)
{
	char *million;

	(void)state;
	check("", 0,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check("abc", 3,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112,
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	assert_non_null(million = malloc(1000000));
	memset(million, 'a', 1000000);
	check(million, 1000000,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

/* Every length from 0 to 300 (each padding case), as OpenSSL says. */
static void
test_lengths(void **state)
{
	uint8_t buf[300], a[GK_SHA256_LEN], b[EVP_MAX_MD_SIZE];
	unsigned int blen;
	size_t n;

	(void)state;
	for (n = 0; n < sizeof(buf); n++)
		buf[n] = (uint8_t)(n * 7 + 3);
	for (n = 0; n <= sizeof(buf); n++) {
		gk_sha256(buf, n, a);
		assert_int_equal(EVP_Digest(buf, n, b, &blen, EVP_sha256(),
		    NULL), 1);
		assert_int_equal(blen, GK_SHA256_LEN);
		assert_memory_equal(a, b, GK_SHA256_LEN);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
