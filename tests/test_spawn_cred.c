/*
 * test_spawn_cred: --credential's pure half (spawn_cred.c, spawn_trust.c):
 * the option's text, the value's shape, the placeholder, the
 * cage.credential request and gatekeeperd's reply, the PEM checks, and
 * the trust bundles and their layout. No message may hold a byte of a
 * value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

/* A real certificate (EC P-256, self-signed), as gatekeeperd's PEM. */
#define CA_PEM								\
	"-----BEGIN CERTIFICATE-----\n"					\
	"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\n" \
	"HzEdMBsGA1UEAwwUZ2F0ZWtlZXBlciBjYWdlIHRlc3QwHhcNMjYxMjA2MTUyNDQw\n" \
	"WhcNMjYxMjA3MTUyNDQwWjAfMR0wGwYDVQQDDBRnYXRla2VlcGVyIGNhZ2UgdGVz\n" \
	"dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABI19S+YFUK89u7uheillsDwbnMP/\n" \
	"eEeyTthxB88IIVbLFtGNhvA9++JAtkqSUevLgaAM3nilGJtn+6HeSWa5uRCjUzBR\n" \
	"MB0GA1UdDgQWBBQJ+Dp7gkrSeaVdRVVfSaM8Ea4IGDAfBgNVHSMEGDAWgBQJ+Dp7\n" \
	"gkrSeaVdRVVfSaM8Ea4IGDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kA\n" \
	"MEYCIQCsFNEq/M3wd+Hp7gwa1YHD36/wESQ8UaIq223UhYdvBgIhANlpQshRKzGA\n" \
	"Pz8DqTGta/XwJ2mThqIxREUmZ45BOLRl\n"				\
	"-----END CERTIFICATE-----\n"

/* The same PEM as a JSON string's text (newlines escaped). */
static char *
json_pem(const char *pem)
{
	struct json_object *s = json_object_new_string(pem);
	char *out = strdup(json_object_to_json_string_ext(s,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(s);
	assert_non_null(out);
	return out;
}

/* ---- the option ----------------------------------------------------- */

static void
test_parse(void **state)
{
	static const struct {
		const char	*arg;
		const char	*want;	/* NULL: parses */
		size_t		 nhosts;
	} cases[] = {
		{ "GITHUB_TOKEN@github.com", NULL, 1 },
		{ "GITHUB_TOKEN@github.com,api.github.com", NULL, 2 },
		{ "_x9@*.example.com:443", NULL, 1 },
		{ "T@**.example.com", NULL, 1 },
		{ "T", "takes NAME@HOSTPATTERN[,HOSTPATTERN...], never a "
		    "value" },
		{ "T=ghp_secretsecret@github.com", "never a value" },
		{ "@github.com", "the name before '@' is not a variable name" },
		{ "9T@github.com", "is not a variable name" },
		{ "A-B@github.com", "is not a variable name" },
		{ "T@", "--credential T: an empty host pattern" },
		{ "T@a.example,", "--credential T: an empty host pattern" },
		{ "T@,a.example", "an empty host pattern" },
		{ "T@a.example,,b.example", "an empty host pattern" },
		{ "T@*.com", "--credential T: invalid pattern '*.com': com is "
		    "a public suffix" },
		{ "T@foo bar", "invalid pattern 'foo bar'" },
		{ "T@203.0.113.0/24", "'203.0.113.0/24' is an address range; "
		    "a credential is bound to host names" },
		{ "T@[2001:db8::/32]", "is an address range" },
		{ "T@github.com/acme/**", "--credential T: "
		    "'github.com/acme/**' has a path; a credential is bound "
		    "to hosts" },
		{ "T@github.com@x", "invalid pattern" },
	};
	struct spawn_cred c;
	char err[SPAWN_ERRLEN];
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		r = spawn_cred_parse(cases[i].arg, &c, err, sizeof(err));
		if (cases[i].want == NULL) {
			if (r != 0)
				fail_msg("%s: %s", cases[i].arg, err);
			assert_int_equal(c.hosts.n, cases[i].nhosts);
			assert_null(c.value);
			spawn_cred_clear(&c);
			continue;
		}
		if (r != -1 || strstr(err, cases[i].want) == NULL)
			fail_msg("%s: %d '%s', expected '%s'", cases[i].arg, r,
			    err, cases[i].want);
		assert_int_equal(c.hosts.n, 0);
		/* a value typed here by mistake is never said */
		assert_null(strstr(err, "secretsecret"));
	}
	assert_int_equal(spawn_cred_parse("GH_TOKEN@github.com,*.github.com",
	    &c, err, sizeof(err)), 0);
	assert_string_equal(c.name, "GH_TOKEN");
	assert_string_equal(c.hosts.v[0], "github.com");
	assert_string_equal(c.hosts.v[1], "*.github.com");
	spawn_cred_clear(&c);
}

static void
test_parse_limits(void **state)
{
	char arg[8192], err[SPAWN_ERRLEN], name[SPAWN_CRED_NAME_MAX + 2];
	struct spawn_cred c;
	size_t i, n;

	(void)state;
	/* the name: 128 bytes, not 129 */
	memset(name, 'N', sizeof(name) - 1);
	name[SPAWN_CRED_NAME_MAX] = '\0';
	snprintf(arg, sizeof(arg), "%s@a.example", name);
	assert_int_equal(spawn_cred_parse(arg, &c, err, sizeof(err)), 0);
	assert_string_equal(c.name, name);
	spawn_cred_clear(&c);
	snprintf(arg, sizeof(arg), "%sN@a.example", name);
	assert_int_equal(spawn_cred_parse(arg, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at most 128 bytes"));
	/* 32 hosts, not 33 */
	for (n = 32; n <= 33; n++) {
		snprintf(arg, sizeof(arg), "T@");
		for (i = 0; i < n; i++)
			snprintf(arg + strlen(arg), sizeof(arg) - strlen(arg),
			    "%sh%zu.example", i == 0 ? "" : ",", i);
		if (n == 32) {
			assert_int_equal(spawn_cred_parse(arg, &c, err,
			    sizeof(err)), 0);
			assert_int_equal(c.hosts.n, 32);
			spawn_cred_clear(&c);
		} else {
			assert_int_equal(spawn_cred_parse(arg, &c, err,
			    sizeof(err)), -1);
			assert_string_equal(err, "--credential T: more than "
			    "32 host patterns");
		}
	}
}

/* ---- the value ------------------------------------------------------- */

static void
test_value(void **state)
{
	static const struct {
		const char	*v;
		const char	*want;	/* NULL: usable */
	} cases[] = {
		{ "12345678", NULL },
		{ "ghp_0123456789abcdefghijklmnopqrstuvwxyz", NULL },
		{ "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", NULL },
		{ "", "--credential T: T is empty in gk-run's environment" },
		{ "1234567", "T's value is shorter than 8 bytes; a credential "
		    "is 8 to 4096 bytes" },
		{ "has_sp ace", "holds a space, a line break or a byte that "
		    "is not printable ASCII" },
		{ "newline-at-end\n", "a trailing newline? T=$(cat FILE) "
		    "drops it" },
		{ "tab\there-x", "not printable ASCII" },
		{ "del\x7fhere-x", "not printable ASCII" },
		{ "high\xc3\xa9here", "not printable ASCII" },
	};
	char err[SPAWN_ERRLEN], *big;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (cases[i].want == NULL) {
			if (spawn_cred_value_check("T", cases[i].v, err,
			    sizeof(err)) != 0)
				fail_msg("'%s': %s", cases[i].v, err);
			continue;
		}
		assert_int_equal(spawn_cred_value_check("T", cases[i].v, err,
		    sizeof(err)), -1);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: '%s', expected '%s'", i, err,
			    cases[i].want);
		/* never a byte of the value */
		if (strlen(cases[i].v) >= 4)
			assert_null(strstr(err, cases[i].v + 3));
	}
	assert_int_equal(spawn_cred_value_check("GH_TOKEN", NULL, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "--credential GH_TOKEN: GH_TOKEN is not set "
	    "in gk-run's environment (set it for gk-run: GH_TOKEN=... gk-run "
	    "..., or export it)");
	/* 4096 bytes, not 4097 */
	big = malloc(SPAWN_CRED_VALUE_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', SPAWN_CRED_VALUE_MAX + 1);
	big[SPAWN_CRED_VALUE_MAX] = '\0';
	assert_int_equal(spawn_cred_value_check("T", big, err, sizeof(err)),
	    0);
	big[SPAWN_CRED_VALUE_MAX] = 'x';
	big[SPAWN_CRED_VALUE_MAX + 1] = '\0';
	assert_int_equal(spawn_cred_value_check("T", big, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "longer than 4096 bytes"));
	free(big);
}

/* ---- the placeholder ------------------------------------------------- */

struct fake_rand {
	const uint8_t	*bytes;	/* repeated; NULL: fail */
	size_t		 n;
	size_t		 pos;
	int		 calls;
};

static int
fake_rand(void *arg, uint8_t *buf, size_t len)
{
	struct fake_rand *r = arg;
	size_t i;

	r->calls++;
	if (r->bytes == NULL)
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = r->bytes[r->pos++ % r->n];
	return 0;
}

static bool
all_alnum(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static void
test_placeholder_shape(void **state)
{
	static const struct {
		const char	*value;
		size_t		 keep;
	} cases[] = {
		{ "ghp_0123456789abcdefghijklmnopqrstuvwxyz", 4 },
		{ "github_pat_11AAAAAAA0123456789abcdefghij", 11 },
		{ "glpat-abcdefghijklmnopqrst", 6 },
		{ "npm_abcdefghijklmnopqrstuvwxyz0123456789", 4 },
		{ "pypi-AgEIcHlwaS5vcmcCJDAwMDAw", 5 },
		{ "sk-ant-api03-abcdefghijklmnop", 7 },
		{ "sk-proj-abcdefghijklmnop", 8 },
		{ "sk-abcdefghijklmnop", 3 },
		{ "xoxb-123456789012-abcdefgh", 5 },
		{ "AKIAIOSFODNN7EXAMPLE", 4 },
		{ "hf_abcdefghijklmnop", 3 },
		{ "ghp_abc", 0 },		/* too short for the prefix */
		{ "ghp_abcd", 4 },		/* 4 bytes after it: kept */
		{ "plainsecretvalue", 0 },
		{ "GHP_uppercase-is-not", 0 },
	};
	static const uint8_t seq[] = { 0, 1, 61, 62, 123, 247, 248, 255, 7 };
	struct fake_rand r = { seq, sizeof(seq), 0, 0 };
	char out[128];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i].value);
		memset(out, '#', sizeof(out));
		assert_int_equal(spawn_cred_placeholder(cases[i].value, n, out,
		    fake_rand, &r), 0);
		assert_int_equal(strlen(out), n);
		assert_memory_equal(out, cases[i].value, cases[i].keep);
		if (!all_alnum(out + cases[i].keep, n - cases[i].keep))
			fail_msg("%s -> %s", cases[i].value, out);
		assert_true(strcmp(out, cases[i].value) != 0);
	}
	/* each byte mod 62, 248..255 skipped (no bias): 0 1 61 62 123 247
	 * 7 are A B 9 A 9 9 H */
	r.pos = 0;
	assert_int_equal(spawn_cred_placeholder("plainsecretvalue", 16, out,
	    fake_rand, &r), 0);
	assert_string_equal(out, "AB9A99HAB9A99HAB");
}

static void
test_placeholder_rand(void **state)
{
	static const uint8_t zero[] = { 0 }, high[] = { 255, 255, 255, 0 };
	struct fake_rand r = { NULL, 0, 0, 0 };
	char out[64];

	(void)state;
	/* no randomness: no placeholder, nothing of the value left */
	assert_int_equal(spawn_cred_placeholder("ghp_abcdefgh", 12, out,
	    fake_rand, &r), -1);
	assert_null(strstr(out, "abcdefgh"));
	/* the same as the value every time: given up after some tries */
	r = (struct fake_rand){ zero, 1, 0, 0 };
	assert_int_equal(spawn_cred_placeholder("AAAAAAAAAA", 10, out,
	    fake_rand, &r), -1);
	assert_true(r.calls >= 2 && r.calls <= 8);
	/* ... but a prefix kept with a different rest is fine */
	r = (struct fake_rand){ zero, 1, 0, 0 };
	assert_int_equal(spawn_cred_placeholder("ghp_abcdefgh", 12, out,
	    fake_rand, &r), 0);
	assert_string_equal(out, "ghp_AAAAAAAA");
	/* mostly rejected bytes: more calls, still the length */
	r = (struct fake_rand){ high, sizeof(high), 0, 0 };
	assert_int_equal(spawn_cred_placeholder("zzzzzzzzzzzzzzzzzzzz", 20,
	    out, fake_rand, &r), 0);
	assert_string_equal(out, "AAAAAAAAAAAAAAAAAAAA");
}

/* ---- the request ------------------------------------------------------ */

static void
test_request(void **state)
{
	struct spawn_cred c;
	struct json_object *o, *v;
	char err[SPAWN_ERRLEN], *line;
	size_t len;

	(void)state;
	assert_int_equal(spawn_cred_parse("GITHUB_TOKEN@github.com,"
	    "*.github.com", &c, err, sizeof(err)), 0);
	c.value = strdup("ghp_real\"quote\\back");
	c.placeholder = strdup("ghp_ABCDEFGHIJKLMNO");
	c.len = strlen(c.value);
	line = spawn_cred_request("abcd1234", &c, &len);
	assert_non_null(line);
	assert_int_equal(len, strlen(line));
	assert_string_equal(line, "{\"op\":\"cage.credential\",\"id\":"
	    "\"abcd1234\",\"name\":\"GITHUB_TOKEN\",\"placeholder\":"
	    "\"ghp_ABCDEFGHIJKLMNO\",\"value\":\"ghp_real\\\"quote\\\\back\","
	    "\"hosts\":[\"github.com\",\"*.github.com\"]}\n");
	/* and it is JSON that says the same */
	o = json_tokener_parse(line);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "value", &v));
	assert_string_equal(json_object_get_string(v), c.value);
	assert_true(json_object_object_get_ex(o, "hosts", &v));
	assert_int_equal(json_object_array_length(v), 2);
	json_object_put(o);
	free(line);
	spawn_cred_clear(&c);
	assert_null(c.value);
}

/* ---- the reply -------------------------------------------------------- */

static char *
reply_with_ca(const char *pre, const char *ca_json, const char *post)
{
	char *s;

	assert_true(asprintf(&s, "%s%s%s", pre, ca_json, post) != -1);
	return s;
}

static void
test_reply_ok(void **state)
{
	char err[SPAWN_ERRLEN], ca[SPAWN_CA_MAX + 1], *pem, *line, *cut;

	(void)state;
	pem = json_pem(CA_PEM);
	line = reply_with_ca("{\"ok\":true,\"credential\":{\"name\":"
	    "\"GITHUB_TOKEN\",\"hosts\":[\"github.com\"]},\"ca\":", pem, "}\n");
	assert_int_equal(spawn_cred_reply(line, strlen(line), "GITHUB_TOKEN",
	    ca, sizeof(ca), err, sizeof(err)), 0);
	assert_string_equal(ca, CA_PEM);
	free(line);
	/* without "credential", and a CA without its last newline */
	cut = strdup(CA_PEM);
	cut[strlen(cut) - 1] = '\0';
	free(pem);
	pem = json_pem(cut);
	line = reply_with_ca("{\"ok\":true,\"ca\":", pem, ",\"more\":[1]}");
	assert_int_equal(spawn_cred_reply(line, strlen(line), "T", ca,
	    sizeof(ca), err, sizeof(err)), 0);
	assert_string_equal(ca, CA_PEM);
	/* no room for it */
	assert_int_equal(spawn_cred_reply(line, strlen(line), "T", ca,
	    strlen(CA_PEM), err, sizeof(err)), -1);
	free(line);
	free(cut);
	free(pem);
}

static void
test_reply_bad(void **state)
{
	static const struct {
		const char	*line;
		const char	*want;
	} cases[] = {
		{ "{\"ok\":false,\"error\":\"credential GITHUB_TOKEN: its "
		    "placeholder ends as X's does\"}", "gatekeeperd refused "
		    "credential GITHUB_TOKEN: credential GITHUB_TOKEN: its "
		    "placeholder ends as X's does" },
		{ "{\"ok\":false}", "gatekeeperd refused credential "
		    "GITHUB_TOKEN and gave no reason" },
		{ "{\"ok\":false,\"error\":\"bad\\u0007\\nthing\"}",
		    "refused credential GITHUB_TOKEN: bad??thing" },
		{ "", "does not understand (an empty line)" },
		{ "not json", "(not JSON)" },
		{ "{\"ok\":true,\"ca\":\"x\"} trailing", "(not JSON)" },
		{ "{\"ok\":true,\"ca\":\"x\"", "(not JSON)" },
		{ "[1,2]", "(no \"ok\")" },
		{ "{\"ok\":1,\"ca\":\"x\"}", "(no \"ok\")" },
		{ "{\"ok\":true}", "(no \"ca\")" },
		{ "{\"ok\":true,\"ca\":null}", "(no \"ca\")" },
		{ "{\"ok\":true,\"ca\":42}", "(no \"ca\")" },
		{ "{\"ok\":true,\"ca\":\"\"}", "is not one PEM certificate" },
		{ "{\"ok\":true,\"ca\":\"-----BEGIN CERTIFICATE-----\\n"
		    "-----END CERTIFICATE-----\\n\"}", "not one PEM" },
		{ "{\"ok\":true,\"credential\":{\"name\":\"OTHER\"},"
		    "\"ca\":\"x\"}", "its \"credential\" is not the one asked "
		    "for" },
		{ "{\"ok\":true,\"credential\":[],\"ca\":\"x\"}",
		    "is not the one asked for" },
		{ "{\"ok\":true,\"credential\":{\"name\":7},\"ca\":\"x\"}",
		    "is not the one asked for" },
	};
	char err[SPAWN_ERRLEN], ca[SPAWN_CA_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		strcpy(ca, "untouched");
		assert_int_equal(spawn_cred_reply(cases[i].line,
		    strlen(cases[i].line), "GITHUB_TOKEN", ca, sizeof(ca), err,
		    sizeof(err)), -1);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: '%s', expected '%s'", i, err,
			    cases[i].want);
		assert_string_equal(ca, "untouched");
		assert_null(strchr(err, '\n'));
	}
}

/* Replies whose CA is not exactly one certificate. */
static void
test_reply_ca_shapes(void **state)
{
	char err[SPAWN_ERRLEN], ca[SPAWN_CA_MAX + 1], *two, *pem, *line;
	char *big;
	size_t n;

	(void)state;
	assert_true(asprintf(&two, "%s%s", CA_PEM, CA_PEM) != -1);
	pem = json_pem(two);
	line = reply_with_ca("{\"ok\":true,\"ca\":", pem, "}");
	assert_int_equal(spawn_cred_reply(line, strlen(line), "T", ca,
	    sizeof(ca), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not one PEM certificate"));
	free(line);
	free(pem);
	free(two);
	/* over SPAWN_CA_MAX: refused even if it were one */
	n = SPAWN_CA_MAX + 64;
	big = malloc(n + 1);
	assert_non_null(big);
	memset(big, 'A', n);
	big[n] = '\0';
	line = reply_with_ca("{\"ok\":true,\"ca\":\"", big, "\"}");
	assert_int_equal(spawn_cred_reply(line, strlen(line), "T", ca,
	    sizeof(ca), err, sizeof(err)), -1);
	free(line);
	free(big);
}

static void
test_pem_cert(void **state)
{
	static const char *const bad[] = {
		"",
		"-----BEGIN CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		/* not DER's SEQUENCE first */
		"-----BEGIN CERTIFICATE-----\n"
		"AIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\n"
		"-----END CERTIFICATE-----\n",
		/* a key is no certificate */
		"-----BEGIN PRIVATE KEY-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\n"
		"-----END PRIVATE KEY-----\n",
		/* padding in the middle, a bad character, an empty line */
		"-----BEGIN CERTIFICATE-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZI==j0EAwIw\n"
		"-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAw.w\n"
		"-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\n"
		"\n-----END CERTIFICATE-----\n",
		/* a line over 76 characters */
		"-----BEGIN CERTIFICATE-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIwMIIB"
		"lDCCATmgAwIB\n-----END CERTIFICATE-----\n",
		/* not a whole number of base64 quanta */
		"-----BEGIN CERTIFICATE-----\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIwM\n"
		"-----END CERTIFICATE-----\n",
		/* CRLF */
		"-----BEGIN CERTIFICATE-----\r\n"
		"MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\r\n"
		"-----END CERTIFICATE-----\r\n",
		/* something after it */
		CA_PEM "x",
		CA_PEM "\n",
	};
	size_t i;

	(void)state;
	assert_true(spawn_pem_cert(CA_PEM, strlen(CA_PEM)));
	assert_true(spawn_pem_cert(CA_PEM, strlen(CA_PEM) - 1));
	/* cut anywhere: not a certificate */
	for (i = 1; i < strlen(CA_PEM) - 1; i++)
		if (spawn_pem_cert(CA_PEM, i))
			fail_msg("accepted the first %zu bytes", i);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (spawn_pem_cert(bad[i], strlen(bad[i])))
			fail_msg("case %zu accepted", i);
}

/* ---- bundles ---------------------------------------------------------- */

#define KEY_PEM								\
	"-----BEGIN PRIVATE KEY-----\n"					\
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSECRETSECRETSECR\n" \
	"-----END PRIVATE KEY-----\n"

static void
test_pem_certs(void **state)
{
	const char *in =
	    "# A bundle with comments, a key, a trusted certificate\n"
	    "Some Root CA\n============\n" CA_PEM "\n" KEY_PEM
	    "  -----BEGIN TRUSTED CERTIFICATE-----  \r\n"
	    "MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\r\n"
	    "-----END TRUSTED CERTIFICATE-----\r\n"
	    /* cut short by another block: dropped, the next one kept */
	    "-----BEGIN CERTIFICATE-----\nMIIB\n" CA_PEM
	    /* not ended: dropped */
	    "-----BEGIN CERTIFICATE-----\nMIIBlDCC\n";
	struct spawn_buf b = { 0 };

	(void)state;
	assert_int_equal(spawn_pem_certs(in, strlen(in), &b), 3);
	assert_false(b.nomem);
	assert_string_equal(b.s, CA_PEM
	    "-----BEGIN TRUSTED CERTIFICATE-----\n"
	    "MIIBlDCCATmgAwIBAgIUXuJPkin8WY2iC1BhPL4B1wxdB3gwCgYIKoZIzj0EAwIw\n"
	    "-----END TRUSTED CERTIFICATE-----\n" CA_PEM);
	assert_null(strstr(b.s, "SECRET"));
	free(b.s);
	/* nothing, or no certificate at all */
	b = (struct spawn_buf){ 0 };
	assert_int_equal(spawn_pem_certs("", 0, &b), 0);
	assert_int_equal(spawn_pem_certs(KEY_PEM, strlen(KEY_PEM), &b), 0);
	assert_null(b.s);
	/* no final newline */
	assert_int_equal(spawn_pem_certs(CA_PEM, strlen(CA_PEM) - 1, &b), 1);
	assert_string_equal(b.s, CA_PEM);
	free(b.s);
}

static void
test_bundle(void **state)
{
	size_t n;
	char *b;

	(void)state;
	b = spawn_trust_bundle("", 0, CA_PEM, &n);
	assert_string_equal(b, CA_PEM);
	assert_int_equal(n, strlen(CA_PEM));
	free(b);
	b = spawn_trust_bundle(CA_PEM, strlen(CA_PEM), CA_PEM, &n);
	assert_int_equal(n, 2 * strlen(CA_PEM));
	assert_memory_equal(b + strlen(CA_PEM), CA_PEM, strlen(CA_PEM));
	free(b);
	/* a last line without its newline gets one */
	b = spawn_trust_bundle("abc", 3, "CA\n", &n);
	assert_string_equal(b, "abc\nCA\n");
	assert_int_equal(n, 7);
	free(b);
}

/* ---- the layout ------------------------------------------------------- */

struct fake_fs {
	int	 reads;
	char	 last_what[64];
};

/* /sys.pem and /corp.pem hold the CA, /key.pem a key, /nofile is not. */
static char *
fake_read(void *arg, const char *what, const char *path, size_t *len,
    char *err, size_t errlen)
{
	struct fake_fs *fs = arg;
	const char *text;

	fs->reads++;
	snprintf(fs->last_what, sizeof(fs->last_what), "%s", what);
	if (strcmp(path, "/sys.pem") == 0 || strcmp(path, "/corp.pem") == 0)
		text = CA_PEM;
	else if (strcmp(path, "/key.pem") == 0)
		text = KEY_PEM;
	else {
		snprintf(err, errlen, "%s %s: No such file or directory",
		    what, path);
		return NULL;
	}
	*len = strlen(text);
	return strdup(text);
}

/* The value t sets for var. */
static const char *
env_of(const struct spawn_trust *t, const char *var)
{
	size_t i, n = strlen(var);

	for (i = 0; i < t->env.n; i++)
		if (strncmp(t->env.v[i], var, n) == 0 &&
		    t->env.v[i][n] == '=')
			return t->env.v[i] + n + 1;
	return NULL;
}

static void
test_layout_default(void **state)
{
	const char *vals[SPAWN_TRUST_VARS] = { NULL };
	struct fake_fs fs = { 0 };
	struct spawn_trust t;
	char err[SPAWN_ERRLEN];
	size_t i;

	(void)state;
	assert_int_equal(spawn_trust_layout(&t, "/sys.pem", "/sys.pem", vals,
	    fake_read, &fs, err, sizeof(err)), 0);
	assert_int_equal(fs.reads, 1);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.file[0].path, "/run/gatekeeper-trust/ca.pem");
	assert_int_equal(t.file[0].len, 0);
	assert_null(t.file[0].from);
	assert_string_equal(t.file[1].path,
	    "/run/gatekeeper-trust/bundle.pem");
	assert_string_equal(t.file[1].certs, CA_PEM);
	assert_string_equal(t.file[1].from, "/sys.pem");
	assert_string_equal(t.file[2].path, "/sys.pem");
	assert_string_equal(t.file[2].certs, CA_PEM);
	for (i = 0; i < t.n; i++)
		assert_int_equal(t.file[i].fd, -1);
	assert_int_equal(t.env.n, SPAWN_TRUST_VARS);
	for (i = 0; i + 1 < SPAWN_TRUST_VARS; i++)
		assert_string_equal(env_of(&t, spawn_trust_vars[i]),
		    "/run/gatekeeper-trust/bundle.pem");
	assert_string_equal(env_of(&t, "NODE_EXTRA_CA_CERTS"),
	    "/run/gatekeeper-trust/ca.pem");
	assert_non_null(env_of(&t, "DENO_CERT"));
	assert_non_null(env_of(&t, "CARGO_HTTP_CAINFO"));
	spawn_trust_clear(&t);
	/* the system's bundle hidden: no overlay */
	assert_int_equal(spawn_trust_layout(&t, "/sys.pem", NULL, vals,
	    fake_read, &fs, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	/* --dry-run: words instead of certificates */
	assert_int_equal(spawn_trust_dry_text(&t), 0);
	assert_string_equal(t.file[0].certs, "# gk-run --dry-run: the cage's "
	    "CA from gatekeeperd\n");
	assert_string_equal(t.file[1].certs, "# gk-run --dry-run: the "
	    "certificates of /sys.pem, then the cage's CA from gatekeeperd\n");
	assert_int_equal(t.file[1].len, strlen(t.file[1].certs));
	spawn_trust_clear(&t);
}

static void
test_layout_user(void **state)
{
	const char *vals[SPAWN_TRUST_VARS] = { NULL };
	struct fake_fs fs = { 0 };
	struct spawn_trust t;
	char err[SPAWN_ERRLEN];

	(void)state;
	vals[0] = "/corp.pem";		/* SSL_CERT_FILE */
	vals[2] = "/corp.pem";		/* REQUESTS_CA_BUNDLE: the same */
	vals[4] = "/sys.pem";		/* GIT_SSL_CAINFO: the system's */
	vals[5] = "";			/* CARGO_HTTP_CAINFO: as unset */
	vals[9] = "/corp.pem";		/* NODE_EXTRA_CA_CERTS */
	assert_int_equal(spawn_trust_layout(&t, "/sys.pem", "/sys.pem", vals,
	    fake_read, &fs, err, sizeof(err)), 0);
	assert_int_equal(fs.reads, 2);	/* the system's, corp.pem once */
	assert_int_equal(t.n, 4);
	assert_string_equal(t.file[3].path,
	    "/run/gatekeeper-trust/SSL_CERT_FILE.pem");
	assert_string_equal(t.file[3].from, "/corp.pem");
	assert_string_equal(env_of(&t, "SSL_CERT_FILE"),
	    "/run/gatekeeper-trust/SSL_CERT_FILE.pem");
	assert_string_equal(env_of(&t, "REQUESTS_CA_BUNDLE"),
	    "/run/gatekeeper-trust/SSL_CERT_FILE.pem");
	assert_string_equal(env_of(&t, "NODE_EXTRA_CA_CERTS"),
	    "/run/gatekeeper-trust/SSL_CERT_FILE.pem");
	assert_string_equal(env_of(&t, "GIT_SSL_CAINFO"),
	    "/run/gatekeeper-trust/bundle.pem");
	assert_string_equal(env_of(&t, "CARGO_HTTP_CAINFO"),
	    "/run/gatekeeper-trust/bundle.pem");
	assert_string_equal(env_of(&t, "CURL_CA_BUNDLE"),
	    "/run/gatekeeper-trust/bundle.pem");
	spawn_trust_clear(&t);
}

static void
test_layout_errors(void **state)
{
	const char *vals[SPAWN_TRUST_VARS] = { NULL };
	struct fake_fs fs = { 0 };
	struct spawn_trust t;
	char err[SPAWN_ERRLEN];

	(void)state;
	vals[1] = "/nofile";		/* CURL_CA_BUNDLE */
	assert_int_equal(spawn_trust_layout(&t, "/sys.pem", "/sys.pem", vals,
	    fake_read, &fs, err, sizeof(err)), -1);
	assert_string_equal(err, "--credential: CURL_CA_BUNDLE /nofile: No "
	    "such file or directory (the sandbox's CURL_CA_BUNDLE names that "
	    "file with the cage's CA added; fix it, or unset "
	    "CURL_CA_BUNDLE)");
	assert_int_equal(t.n, 0);
	assert_int_equal(t.env.n, 0);
	vals[1] = "/key.pem";		/* no certificate: refused */
	assert_int_equal(spawn_trust_layout(&t, "/sys.pem", NULL, vals,
	    fake_read, &fs, err, sizeof(err)), -1);
	assert_string_equal(err, "--credential: CURL_CA_BUNDLE /key.pem "
	    "holds no PEM certificate; unset CURL_CA_BUNDLE");
	vals[1] = NULL;
	assert_int_equal(spawn_trust_layout(&t, "/nofile", NULL, vals,
	    fake_read, &fs, err, sizeof(err)), -1);
	assert_string_equal(err, "--credential: the system's CA bundle "
	    "/nofile: No such file or directory");
	assert_int_equal(spawn_trust_layout(&t, "/key.pem", NULL, vals,
	    fake_read, &fs, err, sizeof(err)), -1);
	assert_string_equal(err, "--credential: the system's CA bundle "
	    "/key.pem holds no PEM certificate");
}

/* SPAWN_TRUST_DIR must be on a fresh tmpfs inside. */
static void
test_trust_dir(void **state)
{
	struct spawn_mount m[4] = {
		{ .kind = SPAWN_MNT_RO, .path = (char *)"/" },
		{ .kind = SPAWN_MNT_TMPFS, .path = (char *)"/run" },
		{ .kind = SPAWN_MNT_HIDE_DIR, .path = (char *)"/run/gatekeeper" },
		{ .kind = SPAWN_MNT_RW, .path = (char *)"/run/gatekeeper-x" },
	};
	struct spawn_plan p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.mounts = m;
	p.nmounts = 4;
	assert_true(spawn_trust_dir_ok(&p));
	m[1].kind = SPAWN_MNT_RW;		/* --rw /run */
	assert_false(spawn_trust_dir_ok(&p));
	m[1].kind = SPAWN_MNT_SYNTH;
	assert_true(spawn_trust_dir_ok(&p));
	p.nmounts = 1;				/* the host's /run, read-only */
	assert_false(spawn_trust_dir_ok(&p));
	p.nmounts = 0;
	assert_false(spawn_trust_dir_ok(&p));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_placeholder_shape),
		cmocka_unit_test(test_placeholder_rand),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_reply_ok),
		cmocka_unit_test(test_reply_bad),
		cmocka_unit_test(test_reply_ca_shapes),
		cmocka_unit_test(test_pem_cert),
		cmocka_unit_test(test_pem_certs),
		cmocka_unit_test(test_bundle),
		cmocka_unit_test(test_layout_default),
		cmocka_unit_test(test_layout_user),
		cmocka_unit_test(test_layout_errors),
		cmocka_unit_test(test_trust_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
