/*
 * test_gk_cred: a cage's credentials and its certificate authority
 * (gk_cred.h): the authority's name constraints hold in OpenSSL's own
 * verification (a leaf for a bound name verifies, one for another name
 * does not, even signed by the same key), leaves are issued for bound
 * names only, marks are found in any case and redacted, and bad
 * credentials are refused with nothing changed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_learn.h"
#include "tests/cage_testutil.h"

#define PH	"ghp_gkAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
#define SECRET	"ghp_realsecretrealsecretrealsecret00000000"

static struct gk_cage_table *table;
static struct gk_cage *cage;

static int
setup(void **state)
{
	(void)state;
	table = gk_cage_table_new();
	assert_non_null(table);
	cage = gk_test_cage_one(table, "10.9.0.2", "example.com", "cred");
	assert_non_null(cage);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	gk_cage_end(cage, "test");
	gk_cage_table_free(table);
	return 0;
}

static int
add(const char *name, const char *ph, const char *val,
    const char *const *hosts, size_t n, char *err, size_t errlen)
{
	assert_int_equal(strlen(ph), strlen(val));
	err[0] = '\0';
	return gk_cred_add(cage, name, (const uint8_t *)ph,
	    (const uint8_t *)val, strlen(val), hosts, n, err, errlen);
}

/* Does leaf verify for host against ca alone? The X509_V_ code. */
static int
verify(X509 *ca, X509 *leaf, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc;

	X509_STORE_add_cert(st, ca);
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	X509_VERIFY_PARAM_set_purpose(X509_STORE_CTX_get0_param(ctx),
	    X509_PURPOSE_SSL_SERVER);
	rc = X509_verify_cert(ctx) == 1 ? X509_V_OK :
	    X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return rc;
}

static X509 *
ca_of_cage(void)
{
	const char *pem = gk_cred_ca_pem(cage);
	BIO *b;
	X509 *x;

	assert_non_null(pem);
	b = BIO_new_mem_buf(pem, -1);
	x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_non_null(x);
	return x;
}

static void
test_leaf_verifies(void **state)
{
	const char *hosts[] = { "api.example.com", "*.github.com" };
	X509 *ca, *leaf;
	EVP_PKEY *key;
	char err[256];

	(void)state;
	assert_int_equal(gk_cred_count(cage), 0);
	assert_null(gk_cred_ca_pem(cage));
	assert_int_equal(add("GH_TOKEN", PH, SECRET, hosts, 2, err,
	    sizeof(err)), 0);
	assert_int_equal(gk_cred_count(cage), 1);
	ca = ca_of_cage();
	assert_true(gk_cred_bound(cage, "api.example.com", 15));
	assert_true(gk_cred_bound(cage, "codeload.github.com", 19));
	assert_false(gk_cred_bound(cage, "example.com", 11));
	assert_int_equal(gk_cred_leaf(cage, "codeload.github.com", &leaf,
	    &key), 0);
	assert_int_equal(verify(ca, leaf, "codeload.github.com"), X509_V_OK);
	assert_int_not_equal(verify(ca, leaf, "api.example.com"), X509_V_OK);
	assert_int_equal(gk_cred_leaf(cage, "api.example.com", &leaf, &key),
	    0);
	assert_int_equal(verify(ca, leaf, "api.example.com"), X509_V_OK);
	/* not bound: no leaf */
	assert_int_equal(gk_cred_leaf(cage, "evil.example", &leaf, &key), -1);
	X509_free(ca);
}

/* The constraints hold whatever the key signs. */
static void
test_constraints(void **state)
{
	const char *names[] = { "github.com" };
	X509 *ca, *leaf;
	EVP_PKEY *cakey, *key;
	char err[256];

	(void)state;
	assert_int_equal(gk_cred_ca_make("t", names, 1, 1, &ca, &cakey, err,
	    sizeof(err)), 0);
	key = gk_cred_key_make();
	leaf = gk_cred_leaf_make(ca, cakey, key, "api.github.com");
	assert_int_equal(verify(ca, leaf, "api.github.com"), X509_V_OK);
	X509_free(leaf);
	leaf = gk_cred_leaf_make(ca, cakey, key, "bank.example");
	assert_int_equal(verify(ca, leaf, "bank.example"),
	    X509_V_ERR_PERMITTED_VIOLATION);
	X509_free(leaf);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	EVP_PKEY_free(key);
}

static void
test_refusals(void **state)
{
	const char *ok[] = { "registry.npmjs.org" };
	const char *cidr[] = { "10.0.0.0/8" };
	const char *bad[] = { "*.com" };
	char err[256];

	(void)state;
	assert_int_equal(add("NPM_TOKEN", "npm_gkAAAAAAAAAAAAAAAAAAAAAAAA",
	    "npm_realrealrealrealrealrealre", ok, 1, err, sizeof(err)), 0);
	assert_int_equal(add("NPM_TOKEN", "npm_gkBBBBBBBBBBBBBBBBBBBBBBBB",
	    "npm_realrealrealrealrealrealre", ok, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "given already"));
	assert_int_equal(add("OTHER", "npm_gkAAAAAAAAAAAAAAAAAAAAAAAA",
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", ok, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "placeholders must differ"));
	assert_int_equal(add("NET", "abcdefghijklmnopqrst",
	    "ABCDEFGHIJKLMNOPQRST", cidr, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "address range"));
	assert_int_equal(add("WILD", "abcdefghijklmnopqrst",
	    "ABCDEFGHIJKLMNOPQRST", bad, 1, err, sizeof(err)), -1);
	assert_int_equal(add("NONE", "abcdefghijklmnopqrst",
	    "ABCDEFGHIJKLMNOPQRST", ok, 0, err, sizeof(err)), -1);
	/* nothing of them stayed; no error names a value */
	assert_int_equal(gk_cred_count(cage), 1);
	assert_null(strstr(err, "ABCDEFGH"));
}

static void
test_leak_and_redact(void **state)
{
	const char *hosts[] = { "api.example.com" };
	const char *name;
	char err[256], out[128], q[128];
	size_t at = 0, m = 0;

	(void)state;
	assert_int_equal(add("API_KEY", "sk-gk0123456789abcdefXYZW",
	    "sk-real0123456789abcdefgh", hosts, 1, err, sizeof(err)), 0);
	/* the mark: the last 16 bytes, any case, anywhere */
	snprintf(q, sizeof(q), "x%s.evil.example", "56789ABCDEFXYZW");
	assert_null(gk_cred_leak(cage, (const uint8_t *)q, strlen(q), NULL,
	    NULL));
	snprintf(q, sizeof(q), "a%s.evil.example", "456789ABCDEFXYZW");
	name = gk_cred_leak(cage, (const uint8_t *)q, strlen(q), &at, &m);
	assert_string_equal(name, "API_KEY");
	assert_int_equal(at, 1);
	assert_int_equal(m, 16);
	gk_cred_redact(cage, q, out, sizeof(out));
	assert_string_equal(out, "a[API_KEY].evil.example");
	gk_cred_redact(cage, "plain.example", out, sizeof(out));
	assert_string_equal(out, "plain.example");
	gk_cred_redact(cage, q, out, 6);
	assert_int_equal(strlen(out), 5);
	assert_null(gk_cred_leak(NULL, (const uint8_t *)q, strlen(q), NULL,
	    NULL));
}

/* A cage with request rules has its authority from its start, for the
 * hosts its rules name (and no leaf for another). */
static void
test_rules_authority(void **state)
{
	const char *pats[] = { "GET,HEAD github.com/acme/**", "example.org" };
	struct gk_allowlist *al;
	struct gk_cage_table *t;
	struct gk_cage *c;
	struct gk_addr a;
	enum gk_cage_err e;
	X509 *leaf;
	EVP_PKEY *key;
	char err[256];

	(void)state;
	t = gk_cage_table_new();
	al = gk_allowlist_new(pats, 2, err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_addr_parse("10.9.0.3", &a), 0);
	c = gk_test_cage(t, &a, "rules", 0, al, &e);
	assert_non_null(c);
	assert_non_null(gk_cred_ca_pem(c));
	assert_int_equal(gk_cred_count(c), 0);
	assert_true(gk_cred_covers(c, "github.com"));
	assert_true(gk_cred_covers(c, "api.github.com"));
	assert_false(gk_cred_covers(c, "example.org"));
	assert_false(gk_cred_covers(c, "xgithub.com"));
	assert_int_equal(gk_cred_leaf(c, "github.com", &leaf, &key), 0);
	assert_int_equal(gk_cred_leaf(c, "example.org", &leaf, &key), -1);
	gk_cage_end(c, "test");
	gk_cage_table_free(t);
}

/* A learning cage never learns a request whose target holds one of its
 * placeholders (in the path or the query). */
static void
test_learn_no_placeholder(void **state)
{
	const char *pats[] = { "github.com/**" }, *hosts[] = { "github.com" };
	struct gk_cage_spec s;
	struct gk_cage *c;
	enum gk_cage_err e;
	char err[256];

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(gk_addr_parse("10.9.0.4", &s.source), 0);
	s.allow = gk_allowlist_new(pats, 1, err, sizeof(err));
	s.nsfd = -1;
	s.learn = true;
	assert_non_null(c = gk_cage_begin(table, &s, &e, err, sizeof(err)));
	assert_int_equal(gk_cred_add(c, "GH_TOKEN", (const uint8_t *)PH,
	    (const uint8_t *)SECRET, strlen(SECRET), hosts, 1, err,
	    sizeof(err)), 0);
	assert_true(gk_learn_request(c, "github.com", 443, "GET", 3,
	    "/acme/x", 7, false));
	assert_false(gk_learn_request(c, "github.com", 443, "GET", 3,
	    "/t/" PH "/x", strlen("/t/" PH "/x"), false));
	assert_false(gk_learn_request(c, "github.com", 443, "GET", 3,
	    "/a?token=" PH, strlen("/a?token=" PH), true));
	gk_cage_end(c, "test");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_leaf_verifies, setup,
		    teardown),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test_setup_teardown(test_refusals, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leak_and_redact, setup,
		    teardown),
		cmocka_unit_test(test_rules_authority),
		cmocka_unit_test_setup_teardown(test_learn_no_placeholder,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
