/*
 * gk_cred_ca: a cage's certificate authority and its leaves (OpenSSL).
 *
 * The authority: EC P-256, a random 64-bit serial, valid from an hour ago
 * (clocks drift) for GK_CRED_CA_DAYS, basicConstraints CA:TRUE with
 * pathlen 0, keyUsage keyCertSign, and nameConstraints (critical)
 * permitting only the DNS subtrees of the bound names and excluding every
 * IPv4 and IPv6 address: a client that honours them (OpenSSL, GnuTLS,
 * NSS, Go, rustls, node) takes nothing else from it, whatever the key
 * signed. A leaf: one name (its subjectAltName), serverAuth, no longer
 * valid than its authority.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "gatekeeper/cage/gk_cred.h"

#define SKEW_SEC	3600	/* valid from this long ago */
#define CONSTRAINTS_MAX	(GK_CRED_MAX * GK_CRED_HOSTS_MAX * 270 + 128)

static void
ssl_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[160];

	ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s: %s", what, e != 0 ? buf : "failed");
	ERR_clear_error();
}

EVP_PKEY *
gk_cred_key_make(void)
{
	return EVP_EC_gen("P-256");
}

static int
cert_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int rv;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	rv = X509_add_ext(x, e, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(e);
	return rv;
}

/* A certificate with key's public half, subject CN=cn, serial, times. */
static X509 *
cert_base(EVP_PKEY *key, const char *cn, long from, long secs)
{
	X509 *x;
	X509_NAME *n;
	BIGNUM *bn = BN_new();

	if ((x = X509_new()) == NULL || bn == NULL ||
	    X509_set_version(x, X509_VERSION_3) != 1 ||
	    BN_rand(bn, 63, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1 ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL ||
	    X509_gmtime_adj(X509_getm_notBefore(x), from) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), secs) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    (n = X509_get_subject_name(x)) == NULL ||
	    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
	    (const unsigned char *)"gatekeeper", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8,
	    (const unsigned char *)cn, -1, -1, 0) != 1) {
		BN_free(bn);
		X509_free(x);
		return NULL;
	}
	BN_free(bn);
	return x;
}

/* "critical,permitted;DNS:a.example,...,excluded;IP:..." */
static char *
constraints(const char *const *names, size_t n)
{
	size_t len = 0, i;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + sizeof("permitted;DNS:,");
	len += 128;
	if (len > CONSTRAINTS_MAX || (s = malloc(len)) == NULL)
		return NULL;
	snprintf(s, len, "critical,");
	for (i = 0; i < n; i++) {
		strcat(s, "permitted;DNS:");
		strcat(s, names[i]);
		strcat(s, ",");
	}
	strcat(s, "excluded;IP:0.0.0.0/0.0.0.0,excluded;IP:::/::");
	return s;
}

int
gk_cred_ca_make(const char *cn, const char *const *names, size_t n,
    unsigned days, X509 **cert, EVP_PKEY **key, char *err, size_t errlen)
{
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	char *nc = NULL;

	if ((k = gk_cred_key_make()) == NULL ||
	    (x = cert_base(k, cn, -SKEW_SEC, (long)days * 86400)) == NULL ||
	    X509_set_issuer_name(x, X509_get_subject_name(x)) != 1 ||
	    (nc = constraints(names, n)) == NULL ||
	    cert_ext(x, x, NID_basic_constraints,
	    "critical,CA:TRUE,pathlen:0") == -1 ||
	    cert_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ==
	    -1 ||
	    cert_ext(x, x, NID_subject_key_identifier, "hash") == -1 ||
	    cert_ext(x, x, NID_name_constraints, nc) == -1 ||
	    X509_sign(x, k, EVP_sha256()) == 0) {
		ssl_err(err, errlen, "cannot make the cage's certificate "
		    "authority");
		free(nc);
		X509_free(x);
		EVP_PKEY_free(k);
		return -1;
	}
	free(nc);
	*cert = x;
	*key = k;
	return 0;
}

/* Seconds from now to ca's end (at least one). */
static long
ca_left(X509 *ca)
{
	int days = 0, secs = 0;

	if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(ca)) != 1)
		return 1;
	if (days < 0 || (days == 0 && secs <= 0))
		return 1;
	return (long)days * 86400 + secs;
}

X509 *
gk_cred_leaf_make(X509 *ca, EVP_PKEY *cakey, EVP_PKEY *key,
    const char *host)
{
	char san[300];
	X509 *x;

	if (strlen(host) > 253)
		return NULL;
	snprintf(san, sizeof(san), "DNS:%s", host);
	if ((x = cert_base(key, host, -SKEW_SEC, ca_left(ca))) == NULL)
		return NULL;
	if (X509_set_issuer_name(x, X509_get_subject_name(ca)) != 1 ||
	    cert_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ==
	    -1 ||
	    cert_ext(x, ca, NID_key_usage, "critical,digitalSignature") ==
	    -1 ||
	    cert_ext(x, ca, NID_ext_key_usage, "serverAuth") == -1 ||
	    cert_ext(x, ca, NID_subject_alt_name, san) == -1 ||
	    cert_ext(x, ca, NID_authority_key_identifier, "keyid:always") ==
	    -1 ||
	    X509_sign(x, cakey, EVP_sha256()) == 0) {
		ERR_clear_error();
		X509_free(x);
		return NULL;
	}
	return x;
}

char *
gk_cred_pem(X509 *cert)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p, *s = NULL;
	long n;

	if (b == NULL)
		return NULL;
	if (PEM_write_bio_X509(b, cert) == 1 &&
	    (n = BIO_get_mem_data(b, &p)) > 0 &&
	    (s = malloc((size_t)n + 1)) != NULL) {
		memcpy(s, p, (size_t)n);
		s[n] = '\0';
	}
	BIO_free(b);
	return s;
}
