/*
 * Tests for gk_hostpolicy: the policy file's grammar and its errors, the
 * version (given or computed), deny matching for names and addresses on
 * lookups and connections, the bound (within, outside).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_hostpolicy.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* The header's example. */
static const char example[] =
    "version 2026-11-25.1          # optional: what gatekeeper_policy_info\n"
    "                              # and audit lines report\n"
    "deny  *.evil.example          # no cage may reach these, whatever it\n"
    "deny  169.254.0.0/16          # asks for (deny wins)\n"
    "allow *.github.com            # optional: the bound; a cage may ask\n"
    "allow registry.npmjs.org:443  # only for patterns within it\n";

static int
parse_str(const char *s, struct gk_hostpolicy *p, char *err, size_t errlen)
{
	return gk_hostpolicy_parse((const uint8_t *)s, strlen(s), "p", p, err,
	    errlen);
}

static void
fmt_at(const struct gk_allowlist *al, size_t i, char *buf, size_t len)
{
	const struct gk_pattern *pat = gk_allowlist_at(al, i);

	assert_non_null(pat);
	gk_pattern_format(pat, buf, len);
}

static void
parse_pat(const char *s, struct gk_pattern *pat)
{
	assert_int_equal(gk_pattern_parse((const uint8_t *)s, strlen(s), pat),
	    GK_PAT_OK);
}

static void
test_example(void **state)
{
	struct gk_hostpolicy p;
	char err[512] = "", text[GK_PATTERN_MAX + 1];

	(void)state;
	assert_int_equal(parse_str(example, &p, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(p.version, "2026-11-25.1");
	assert_int_equal(gk_allowlist_len(p.deny), 2);
	fmt_at(p.deny, 0, text, sizeof(text));
	assert_string_equal(text, "*.evil.example");
	fmt_at(p.deny, 1, text, sizeof(text));
	assert_string_equal(text, "169.254.0.0/16");
	assert_non_null(p.bound);
	assert_int_equal(gk_allowlist_len(p.bound), 2);
	fmt_at(p.bound, 0, text, sizeof(text));
	assert_string_equal(text, "*.github.com");
	fmt_at(p.bound, 1, text, sizeof(text));
	assert_string_equal(text, "registry.npmjs.org:443");
	gk_hostpolicy_clear(&p);
	assert_null(p.deny);
	assert_null(p.bound);
	assert_string_equal(p.version, "");
	gk_hostpolicy_clear(&p);	/* twice: a zeroed struct */
	gk_hostpolicy_clear(NULL);
}

static void
test_layout(void **state)
{
	static const char text[] =
	    "\t deny\tA.Example.   \r\n"
	    "#deny b.example\n"
	    "   # indented comment\n"
	    "\n"
	    "deny c.example# not a comment: part of the pattern? no\n";
	static const char ok[] =
	    "\t deny\tA.Example.   \r\n"
	    "#deny b.example\n"
	    "   # indented comment\n"
	    "\r\n"
	    "version a#b\n"
	    "deny c.example:22\t#comment";
	struct gk_hostpolicy p;
	char err[512], buf[64];

	(void)state;
	/* '#' glued to a token is part of it */
	assert_int_equal(parse_str(text, &p, err, sizeof(err)), -1);
	assert_string_equal(err, "p:5: 'deny' takes one argument; 'not' "
	    "follows 'c.example#' (one directive per line)");
	assert_null(p.deny);

	assert_int_equal(parse_str(ok, &p, err, sizeof(err)), 0);
	assert_string_equal(p.version, "a#b");
	assert_int_equal(gk_allowlist_len(p.deny), 2);
	fmt_at(p.deny, 0, buf, sizeof(buf));
	assert_string_equal(buf, "a.example");
	fmt_at(p.deny, 1, buf, sizeof(buf));
	assert_string_equal(buf, "c.example:22");
	assert_null(p.bound);
	gk_hostpolicy_clear(&p);
}

static void
test_version_digest(void **state)
{
	/* printf 'deny *.evil.example\n' | sha256sum: 705ed5ed9458... */
	static const char one[] = "deny *.evil.example\n";
	/* the same with CRLF: f784d05c6d67... (the bytes as given) */
	static const char crlf[] = "deny *.evil.example\r\n";
	char v64[GK_HOSTPOLICY_VERSION_MAX + 16], err[512];
	struct gk_hostpolicy p;

	(void)state;
	assert_int_equal(parse_str(one, &p, err, sizeof(err)), 0);
	assert_string_equal(p.version, "sha256:705ed5ed9458");
	gk_hostpolicy_clear(&p);
	assert_int_equal(parse_str(crlf, &p, err, sizeof(err)), 0);
	assert_string_equal(p.version, "sha256:f784d05c6d67");
	gk_hostpolicy_clear(&p);

	/* empty: nothing denied, no bound, sha256 of no bytes */
	assert_int_equal(gk_hostpolicy_parse((const uint8_t *)"", 0, "p", &p,
	    err, sizeof(err)), 0);
	assert_non_null(p.deny);
	assert_int_equal(gk_allowlist_len(p.deny), 0);
	assert_null(p.bound);
	assert_string_equal(p.version, "sha256:e3b0c44298fc");
	gk_hostpolicy_clear(&p);
	assert_int_equal(gk_hostpolicy_parse(NULL, 0, NULL, &p, err,
	    sizeof(err)), 0);
	assert_string_equal(p.version, "sha256:e3b0c44298fc");
	gk_hostpolicy_clear(&p);

	/* the longest version, and one byte */
	memset(v64, 'v', sizeof(v64));
	memcpy(v64, "version ", 8);
	v64[8 + GK_HOSTPOLICY_VERSION_MAX] = '\0';
	assert_int_equal(parse_str(v64, &p, err, sizeof(err)), 0);
	assert_int_equal(strlen(p.version), GK_HOSTPOLICY_VERSION_MAX);
	assert_memory_equal(p.version, v64 + 8, GK_HOSTPOLICY_VERSION_MAX);
	gk_hostpolicy_clear(&p);
	assert_int_equal(parse_str("version 1 # v\n", &p, err, sizeof(err)),
	    0);
	assert_string_equal(p.version, "1");
	gk_hostpolicy_clear(&p);
}

struct err_case {
	const char	*in;
	const char	*want;	/* the whole message */
};

static const struct err_case err_cases[] = {
	{ "deny a.example\npermit b.example\n", "p:2: unknown directive "
	    "'permit'; use deny PATTERN, allow PATTERN or version STRING" },
	{ "DENY a.example", "p:1: unknown directive 'DENY'; use deny "
	    "PATTERN, allow PATTERN or version STRING" },
	{ "deny#x a.example", "p:1: unknown directive 'deny#x'; use deny "
	    "PATTERN, allow PATTERN or version STRING" },
	{ "\n\x01\xff'x\\ a", "p:2: unknown directive '\\x01\\xff\\x27x\\x5c'; "
	    "use deny PATTERN, allow PATTERN or version STRING" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "p:1: unknown directive 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "...'; use deny PATTERN, allow PATTERN or version STRING" },
	{ "deny *.com", "p:1: invalid pattern '*.com': com is a public "
	    "suffix, where anyone can register names; list the exact names "
	    "you need (e.g. 'example.com' or '*.example.com')" },
	{ "allow a.example\nallow 10.1.0.0/8\n", "p:2: invalid pattern "
	    "'10.1.0.0/8': host bits are set; the network is '10.0.0.0/8'" },
	{ "deny a.example:0", "p:1: invalid pattern 'a.example:0': port '0' "
	    "is not a number from 1 to 65535" },
	{ "deny a.example/admin/x", "p:1: a host policy names hosts; a "
	    "request rule (a pattern with a path) belongs in a cage's "
	    "allowlist" },
	{ "allow a.example:443/x", "p:1: a host policy names hosts; a "
	    "request rule (a pattern with a path) belongs in a cage's "
	    "allowlist" },
	{ "deny", "p:1: 'deny' needs a PATTERN, as in '*.example.com'" },
	{ "allow   # nothing", "p:1: 'allow' needs a PATTERN, as in "
	    "'*.example.com'" },
	{ "version\n", "p:1: 'version' needs a STRING, as in "
	    "'version 2026-11-25.1'" },
	{ "allow a.example b.example", "p:1: 'allow' takes one argument; "
	    "'b.example' follows 'a.example' (one directive per line)" },
	{ "version 1 2", "p:1: 'version' takes one argument; '2' follows "
	    "'1' (one directive per line)" },
	{ "version 1\n\nversion 1\n", "p:3: a second version line (the "
	    "first is line 1)" },
	{ "version caf\xc3\xa9", "p:1: version 'caf\\xc3\\xa9' is not "
	    "printable ASCII" },
	{ "version \x7f", "p:1: version '\\x7f' is not printable ASCII" },
	{ "version 12345678901234567890123456789012345678901234567890"
	    "123456789012345", "p:1: the version is 65 characters long; the "
	    "limit is 64" },
};

static void
test_errors(void **state)
{
	struct gk_hostpolicy p;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(err_cases); i++) {
		memset(&p, 0xa5, sizeof(p));
		assert_int_equal(parse_str(err_cases[i].in, &p, err,
		    sizeof(err)), -1);
		assert_string_equal(err, err_cases[i].want);
		assert_null(p.deny);
		assert_null(p.bound);
		assert_string_equal(p.version, "");
	}
	/* a cut message stays terminated; no buffer at all is fine */
	assert_int_equal(parse_str("bad", &p, err, 8), -1);
	assert_string_equal(err, "p:1: un");
	assert_int_equal(parse_str("bad", &p, NULL, 0), -1);
}

static void
test_errors_bytes(void **state)
{
	static const uint8_t nul[] = "deny a.example\n# x\nde\0ny b\n";
	struct gk_hostpolicy p;
	static char big[GK_HOSTPOLICY_MAX + 2];
	char err[512];
	size_t i, n;

	(void)state;
	assert_int_equal(gk_hostpolicy_parse(nul, sizeof(nul) - 1, "/etc/p",
	    &p, err, sizeof(err)), -1);
	assert_string_equal(err, "/etc/p:3: a NUL byte in the line; is it "
	    "really a policy file?");
	assert_null(p.deny);

	/* lines: 1024 bytes are fine, 1025 are not */
	memset(big, '#', 1025);
	memcpy(big + 1025, "\n", 2);
	assert_int_equal(parse_str(big + 1, &p, err, sizeof(err)), 0);
	gk_hostpolicy_clear(&p);
	assert_int_equal(parse_str(big, &p, err, sizeof(err)), -1);
	assert_string_equal(err, "p:1: the line is 1025 bytes long; the "
	    "limit is 1024");

	/* the file: GK_HOSTPOLICY_MAX bytes are fine, one more is not */
	for (i = 0; i < GK_HOSTPOLICY_MAX; i++)
		big[i] = i % 64 == 63 ? '\n' : '#';
	assert_int_equal(gk_hostpolicy_parse((uint8_t *)big,
	    GK_HOSTPOLICY_MAX, "p", &p, err, sizeof(err)), 0);
	assert_int_equal(strncmp(p.version, "sha256:", 7), 0);
	gk_hostpolicy_clear(&p);
	big[GK_HOSTPOLICY_MAX] = '\n';
	assert_int_equal(gk_hostpolicy_parse((uint8_t *)big,
	    GK_HOSTPOLICY_MAX + 1, "p", &p, err, sizeof(err)), -1);
	assert_string_equal(err, "p: larger than 262144 bytes; is it really "
	    "a policy file?");

	/* GK_ALLOWLIST_MAX deny patterns, then one more */
	for (i = 0, n = 0; i <= GK_ALLOWLIST_MAX; i++)
		n += (size_t)snprintf(big + n, GK_HOSTPOLICY_MAX - n,
		    "deny h%zu.example\n", i);
	assert_int_equal(gk_hostpolicy_parse((uint8_t *)big, n, "p", &p, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "p:4097: more than 4096 deny patterns");
	n -= strlen("deny h4096.example\n");
	assert_int_equal(gk_hostpolicy_parse((uint8_t *)big, n, "p", &p, err,
	    sizeof(err)), 0);
	assert_int_equal(gk_allowlist_len(p.deny), GK_ALLOWLIST_MAX);
	gk_hostpolicy_clear(&p);
}

static void
test_denies_name(void **state)
{
	static const char text[] =
	    "deny *.evil.example\n"
	    "deny bad.example\n"
	    "deny *.ssh.example:22\n"
	    "deny mail.example:25\n";
	struct gk_hostpolicy p;
	char err[512];

	(void)state;
	assert_int_equal(parse_str(text, &p, err, sizeof(err)), 0);
#define DN(s, port)	gk_hostpolicy_denies_name(&p, s, strlen(s), port)
	/* a wildcard covers the zone itself and every name below it */
	assert_true(DN("evil.example", 0));
	assert_true(DN("a.evil.example", 443));
	assert_true(DN("a.b.evil.example", 0));
	assert_false(DN("notevil.example", 0));
	assert_false(DN("example", 0));
	/* exact covers only itself */
	assert_true(DN("bad.example", 0));
	assert_true(DN("bad.example", 80));
	assert_false(DN("x.bad.example", 0));
	/* case and a trailing dot do not matter */
	assert_true(DN("BAD.Example.", 0));
	assert_true(DN("X.EVIL.example.", 443));
	/* a port-bound deny: connections on that port only, never lookups */
	assert_true(DN("git.ssh.example", 22));
	assert_true(DN("ssh.example", 22));
	assert_false(DN("git.ssh.example", 443));
	assert_false(DN("git.ssh.example", 0));
	assert_true(DN("mail.example", 25));
	assert_false(DN("mail.example", 587));
	assert_false(DN("mail.example", 0));
	/* what is not a host name is never matched */
	assert_false(DN("bad.example..", 0));
	assert_false(DN("*.evil.example", 0));
	assert_false(DN("", 0));
	assert_false(gk_hostpolicy_denies_name(&p, NULL, 0, 0));
	assert_false(gk_hostpolicy_denies_name(NULL, "bad.example", 11, 0));
	/* len, not the NUL, ends the name */
	assert_true(gk_hostpolicy_denies_name(&p, "bad.example.org", 11, 0));
#undef DN
	gk_hostpolicy_clear(&p);
}

static void
test_denies_addr(void **state)
{
	static const char text[] =
	    "deny 169.254.0.0/16\n"
	    "deny 192.0.2.7:25\n"
	    "deny [2001:db8::/32]\n"
	    "deny ip.example\n";
	struct gk_hostpolicy p;
	struct gk_addr a;
	char err[512];

	(void)state;
	assert_int_equal(parse_str(text, &p, err, sizeof(err)), 0);
#define DA(s, port)	(gk_addr_parse(s, &a) == 0 && \
	    gk_hostpolicy_denies_addr(&p, &a, port))
	assert_true(DA("169.254.169.254", 0));
	assert_true(DA("169.254.0.0", 443));
	assert_false(DA("169.255.0.1", 0));
	assert_true(DA("192.0.2.7", 25));
	assert_false(DA("192.0.2.7", 0));
	assert_false(DA("192.0.2.7", 26));
	assert_false(DA("192.0.2.8", 25));
	assert_true(DA("2001:db8::1", 0));
	assert_true(DA("2001:db8:ffff::", 53));
	assert_false(DA("2001:db9::1", 0));
	/* the other family never matches */
	assert_false(DA("::ffff:169.254.0.1", 0));
#undef DA
	assert_false(gk_hostpolicy_denies_addr(&p, NULL, 0));
	assert_int_equal(gk_addr_parse("169.254.1.1", &a), 0);
	assert_false(gk_hostpolicy_denies_addr(NULL, &a, 0));
	/* a name pattern never matches an address, nor a CIDR a name */
	assert_false(gk_hostpolicy_denies_name(&p, "169.254.1.1", 11, 0));
	gk_hostpolicy_clear(&p);
}

struct within_case {
	const char	*pat;
	bool		 within;
};

static const struct within_case within_cases[] = {
	/* exact b: that name only, never a wildcard */
	{ "exact.example", true },
	{ "exact.example:8080", true },
	{ "EXACT.example.", true },
	{ "x.exact.example", false },
	{ "*.exact.example", false },
	/* wildcard b: the zone, names and wildcards below it */
	{ "zone.example", true },
	{ "a.zone.example", true },
	{ "a.b.zone.example:22", true },
	{ "*.zone.example", true },
	{ "*.sub.zone.example:443", true },
	{ "xzone.example", false },
	{ "*.zone2.example", false },	/* wider than the bound */
	{ "zone2.example", false },
	{ "*.deep.zone2.example", true },
	/* a port-bound b: that port only; pat on every port is not within */
	{ "registry.npmjs.org:443", true },
	{ "registry.npmjs.org", false },
	{ "registry.npmjs.org:80", false },
	{ "*.ports.example:443", true },
	{ "a.ports.example:443", true },
	{ "ports.example:443", true },
	{ "*.ports.example", false },
	{ "a.ports.example:8443", false },
	/* CIDRs: same family, a prefix at least as long, inside */
	{ "10.0.0.0/8", true },
	{ "10.1.0.0/16", true },
	{ "10.1.2.3:443", true },
	{ "10.0.0.0/7", false },
	{ "11.0.0.1", false },
	{ "0.0.0.0/0", false },
	{ "198.51.100.0/24:53", true },
	{ "198.51.100.1", false },
	{ "198.51.100.0/25:53", true },
	{ "198.51.100.0/23:53", false },
	{ "[2001:db8:1::/48]", true },
	{ "[2001:db8::/31]", false },
	{ "[::ffff:10.0.0.1]", false },
	/* names and CIDRs never cover each other */
	{ "192.0.2.1", false },
	{ "net.example", false },
};

static void
test_within(void **state)
{
	static const char text[] =
	    "allow exact.example\n"
	    "allow *.zone.example\n"
	    "allow *.deep.zone2.example\n"
	    "allow registry.npmjs.org:443\n"
	    "allow *.ports.example:443\n"
	    "allow 10.0.0.0/8\n"
	    "allow 198.51.100.0/24:53\n"
	    "allow [2001:db8::/32]\n"
	    "allow 192.0.2.1.example\n"
	    "deny 192.0.2.0/24\n";
	struct gk_hostpolicy p, none;
	struct gk_pattern pat;
	char err[512];
	size_t i;

	(void)state;
	assert_int_equal(parse_str(text, &p, err, sizeof(err)), 0);
	for (i = 0; i < NITEMS(within_cases); i++) {
		parse_pat(within_cases[i].pat, &pat);
		if (gk_hostpolicy_within(&p, &pat) != within_cases[i].within)
			fail_msg("within(%s) should be %d", within_cases[i].pat,
			    within_cases[i].within);
	}
	assert_false(gk_hostpolicy_within(&p, NULL));

	/* no bound: everything is within */
	parse_pat("0.0.0.0/0", &pat);
	assert_true(gk_hostpolicy_within(NULL, &pat));
	assert_int_equal(parse_str("deny a.example\n", &none, err,
	    sizeof(err)), 0);
	assert_null(none.bound);
	assert_true(gk_hostpolicy_within(&none, &pat));
	gk_hostpolicy_clear(&none);
	gk_hostpolicy_clear(&p);
}

static void
test_outside(void **state)
{
	static const char *const pats[] = {
		"a.zone.example", "*.other.example", "registry.npmjs.org",
		"10.9.0.0/16", "[2001:db8::1]:443", "registry.npmjs.org:443",
	};
	struct gk_hostpolicy p;
	struct gk_allowlist *al, *in;
	char err[512], buf[256], small[20];

	(void)state;
	assert_int_equal(parse_str("allow *.zone.example\nallow 10.0.0.0/8\n"
	    "allow registry.npmjs.org:443\n", &p, err, sizeof(err)), 0);
	al = gk_allowlist_new(pats, NITEMS(pats), err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_hostpolicy_outside(&p, al, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "*.other.example, registry.npmjs.org, "
	    "[2001:db8::1]:443");
	/* cut to fit, the count unchanged */
	assert_int_equal(gk_hostpolicy_outside(&p, al, small, sizeof(small)),
	    3);
	assert_string_equal(small, "*.other.example, re");
	assert_int_equal(gk_hostpolicy_outside(&p, al, NULL, 0), 3);

	/* all within, no bound, no list: 0 and "" */
	in = gk_allowlist_new(pats, 1, err, sizeof(err));
	assert_non_null(in);
	strcpy(buf, "junk");
	assert_int_equal(gk_hostpolicy_outside(&p, in, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	strcpy(buf, "junk");
	assert_int_equal(gk_hostpolicy_outside(NULL, al, buf, sizeof(buf)),
	    0);
	assert_string_equal(buf, "");
	strcpy(buf, "junk");
	assert_int_equal(gk_hostpolicy_outside(&p, NULL, buf, sizeof(buf)),
	    0);
	assert_string_equal(buf, "");
	gk_allowlist_free(in);
	gk_allowlist_free(al);
	gk_hostpolicy_clear(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_version_digest),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_errors_bytes),
		cmocka_unit_test(test_denies_name),
		cmocka_unit_test(test_denies_addr),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_outside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
