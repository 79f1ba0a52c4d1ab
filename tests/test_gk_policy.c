/*
 * Tests for gk_policy: the pattern grammar, error messages, allowlists,
 * name and address matching, and deny explanations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"

#define NPATS	6
#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

struct parse_case {
	const char		*in;
	enum gk_pat_status	 st;
	const char		*want;	/* canonical, or in message */
};

static const struct parse_case parse_cases[] = {
	/* names */
	{ "example.com", GK_PAT_OK, "example.com" },
	{ "EXAMPLE.Com", GK_PAT_OK, "example.com" },
	{ "example.com.", GK_PAT_OK, "example.com" },
	{ "localhost", GK_PAT_OK, "localhost" },
	{ "a-b_c.example", GK_PAT_OK, "a-b_c.example" },
	{ "API_X.github.com", GK_PAT_OK, "api_x.github.com" },
	{ "_dmarc.example.com", GK_PAT_OK, "_dmarc.example.com" },
	{ "*._tcp.example.com:443", GK_PAT_OK, "*._tcp.example.com:443" },
	{ "-a.b-", GK_PAT_OK, "-a.b-" },
	{ "xn--bcher-kva.example", GK_PAT_OK, "xn--bcher-kva.example" },
	{ "123.example.com", GK_PAT_OK, "123.example.com" },
	{ "github.io", GK_PAT_OK, "github.io" },
	{ "co.uk", GK_PAT_OK, "co.uk" },
	{ "*.example.com", GK_PAT_OK, "*.example.com" },
	{ "**.example.com", GK_PAT_OK, "*.example.com" },
	{ "*.EXAMPLE.com.", GK_PAT_OK, "*.example.com" },
	{ "*.github.com", GK_PAT_OK, "*.github.com" },
	{ "*.example.co.uk", GK_PAT_OK, "*.example.co.uk" },
	{ "*.foo.github.io", GK_PAT_OK, "*.foo.github.io" },
	{ "*.www.ck", GK_PAT_OK, "*.www.ck" },
	/* ports */
	{ "example.com:443", GK_PAT_OK, "example.com:443" },
	{ "example.com.:443", GK_PAT_OK, "example.com:443" },
	{ "*.github.com:443", GK_PAT_OK, "*.github.com:443" },
	{ "**.github.com:22", GK_PAT_OK, "*.github.com:22" },
	{ "example.com:1", GK_PAT_OK, "example.com:1" },
	{ "example.com:65535", GK_PAT_OK, "example.com:65535" },
	{ "example.com:0443", GK_PAT_OK, "example.com:443" },
	{ "example.com:0", GK_PAT_BAD_PORT, "port '0' is not a number" },
	{ "example.com:65536", GK_PAT_BAD_PORT, "port '65536'" },
	{ "example.com:", GK_PAT_BAD_PORT, "port ''" },
	{ "example.com:-1", GK_PAT_BAD_PORT, "port '-1'" },
	{ "example.com:8o", GK_PAT_BAD_PORT, "port '8o'" },
	{ "example.com:+80", GK_PAT_BAD_PORT, "port '+80'" },
	{ "example.com:100000", GK_PAT_BAD_PORT, "from 1 to 65535" },
	{ "example.com: 80", GK_PAT_BAD_PORT, "port ' 80'" },
	{ ":443", GK_PAT_EMPTY, "no host name or address before the port" },
	/* IPv4 */
	{ "192.0.2.1", GK_PAT_OK, "192.0.2.1" },
	{ "192.0.2.1/32", GK_PAT_OK, "192.0.2.1" },
	{ "192.0.2.1:8080", GK_PAT_OK, "192.0.2.1:8080" },
	{ "203.0.113.0/24", GK_PAT_OK, "203.0.113.0/24" },
	{ "203.0.113.0/24:443", GK_PAT_OK, "203.0.113.0/24:443" },
	{ "0.0.0.0/0", GK_PAT_OK, "0.0.0.0/0" },
	{ "10.0.0.0/8", GK_PAT_OK, "10.0.0.0/8" },
	{ "10.0.0.0/08", GK_PAT_OK, "10.0.0.0/8" },
	{ "10.1.0.0/8", GK_PAT_BAD_CIDR, "host bits are set; the network "
	    "is '10.0.0.0/8'" },
	{ "192.0.2.1/33", GK_PAT_BAD_CIDR, "prefix '33' is not a number "
	    "from 0 to 32" },
	{ "192.0.2.1/", GK_PAT_BAD_CIDR, "prefix ''" },
	{ "192.0.2.1/x", GK_PAT_BAD_CHAR, "'/' is not allowed" },
	{ "192.0.2.1/-1", GK_PAT_BAD_CHAR, "'/' is not allowed" },
	{ "192.0.2.1/1/2", GK_PAT_BAD_PATH, "an address cannot carry" },
	{ "192.0.2.256", GK_PAT_BAD_CIDR, "'192.0.2.256' is not a host name "
	    "nor a valid IPv4 address" },
	{ "10.0.0.300", GK_PAT_BAD_CIDR, "not a host name nor a valid IP" },
	{ "1.2.3", GK_PAT_BAD_CIDR, "'1.2.3' is not a host name nor a valid" },
	{ "01.2.3.4", GK_PAT_BAD_CIDR, "not a host name nor a valid IP" },
	{ "1.2.3.4.", GK_PAT_BAD_CIDR, "not a host name nor a valid IP" },
	{ "foo.123", GK_PAT_BAD_CIDR, "'foo.123' is not a host name nor" },
	{ "*.1.2.3", GK_PAT_BAD_CIDR, "'1.2.3' is not a host name nor" },
	{ "1.2.3.4/24", GK_PAT_BAD_CIDR, "network is '1.2.3.0/24'" },
	/* IPv6 */
	{ "[2001:db8::1]", GK_PAT_OK, "[2001:db8::1]" },
	{ "[2001:DB8::1]", GK_PAT_OK, "[2001:db8::1]" },
	{ "[2001:db8::1/128]", GK_PAT_OK, "[2001:db8::1]" },
	{ "[2001:db8::/32]", GK_PAT_OK, "[2001:db8::/32]" },
	{ "[2001:db8::/32]:443", GK_PAT_OK, "[2001:db8::/32]:443" },
	{ "[2001:db8::1]:53", GK_PAT_OK, "[2001:db8::1]:53" },
	{ "[::/0]", GK_PAT_OK, "[::/0]" },
	{ "[::ffff:192.0.2.1]", GK_PAT_OK, "[::ffff:192.0.2.1]" },
	{ "[2001:db8::1/129]", GK_PAT_BAD_CIDR, "prefix '129' is not a "
	    "number from 0 to 128" },
	{ "[2001:db8::1/64]", GK_PAT_BAD_CIDR, "network is '[2001:db8::/64]'" },
	{ "2001:db8::1", GK_PAT_BAD_CIDR, "must be in brackets" },
	{ "2001:db8::/32", GK_PAT_BAD_CIDR, "must be in brackets" },
	{ "::1", GK_PAT_BAD_CIDR, "must be in brackets" },
	{ "a:b:c", GK_PAT_BAD_CIDR, "must be in brackets" },
	{ "[2001:db8::]/32", GK_PAT_BAD_CIDR, "put the prefix inside" },
	{ "[2001:db8::1", GK_PAT_BAD_CIDR, "missing ']'" },
	{ "[192.0.2.1]", GK_PAT_BAD_CIDR, "brackets are for IPv6 only" },
	{ "[]", GK_PAT_BAD_CIDR, "'' is not a valid IPv6 address" },
	{ "[example.com]", GK_PAT_BAD_CIDR, "not a valid IPv6 address" },
	{ "[fe80::1%eth0]", GK_PAT_BAD_CIDR, "not a valid IPv6 address" },
	{ "[2001:db8::1]:0", GK_PAT_BAD_PORT, "port '0'" },
	{ "[2001:db8::1]:", GK_PAT_BAD_PORT, "port ''" },
	/* empty and long */
	{ "", GK_PAT_EMPTY, "the pattern is empty" },
	{ ".", GK_PAT_EMPTY_LABEL, "cannot start with a dot" },
	{ "a..b", GK_PAT_EMPTY_LABEL, "two dots in a row" },
	{ ".a", GK_PAT_EMPTY_LABEL, "cannot start with a dot" },
	{ "a..", GK_PAT_EMPTY_LABEL, "only one trailing dot" },
	{ "a.", GK_PAT_OK, "a" },
	{ "*..a", GK_PAT_EMPTY_LABEL, "cannot start with a dot" },
	/* characters */
	{ "b\xc3\xbc" "cher.example", GK_PAT_NON_ASCII, "invalid pattern "
	    "'b\\xc3\\xbccher.example': non-ASCII byte \\xc3; write "
	    "internationalized names in punycode (xn--" },
	{ "a b.com", GK_PAT_BAD_METHOD, "'a' is not a method" },
	{ "a.b c.com", GK_PAT_BAD_CHAR, "' ' is not allowed in a host name" },
	{ " example.com", GK_PAT_BAD_CHAR, "' ' is not allowed" },
	{ "example.com\n", GK_PAT_BAD_CHAR, "'\\x0a' is not allowed" },
	{ "ex!ample.com", GK_PAT_BAD_CHAR, "'!' is not allowed" },
	{ "ex\\ample.com", GK_PAT_BAD_CHAR, "'\\x5c' is not allowed" },
	{ "example.com/path", GK_PAT_OK, "example.com/path" },
	{ "https://example.com", GK_PAT_BAD_CHAR, "looks like a URL" },
	{ "ex'ample.com", GK_PAT_BAD_CHAR, "'\\x27' is not allowed" },
	/* wildcards */
	{ "*", GK_PAT_BARE_WILDCARD, "bare wildcard" },
	{ "**", GK_PAT_BARE_WILDCARD, "bare wildcard" },
	{ "*.", GK_PAT_BARE_WILDCARD, "bare wildcard" },
	{ "**.", GK_PAT_BARE_WILDCARD, "bare wildcard" },
	{ "*:443", GK_PAT_BARE_WILDCARD, "bare wildcard" },
	{ "*foo.com", GK_PAT_BAD_WILDCARD, "whole leading label" },
	{ "foo.*.com", GK_PAT_BAD_WILDCARD, "whole leading label" },
	{ "a*.b", GK_PAT_BAD_WILDCARD, "whole leading label" },
	{ "***.example.com", GK_PAT_BAD_WILDCARD, "whole leading label" },
	{ "*.*.example.com", GK_PAT_BAD_WILDCARD, "whole leading label" },
	{ "example.*", GK_PAT_BAD_WILDCARD, "whole leading label" },
	/* public suffixes */
	{ "*.com", GK_PAT_PUBLIC_SUFFIX, "com is a public suffix, where "
	    "anyone can register names; list the exact names you need (e.g. "
	    "'example.com' or '*.example.com')" },
	{ "*.co.uk", GK_PAT_PUBLIC_SUFFIX, "co.uk is a public suffix, where "
	    "anyone can register names; list the exact names you need (e.g. "
	    "'example.co.uk' or '*.example.co.uk')" },
	{ "**.CO.UK.", GK_PAT_PUBLIC_SUFFIX, "co.uk is a public suffix" },
	{ "*.github.io", GK_PAT_PUBLIC_SUFFIX, "github.io is a public" },
	{ "*.workers.dev", GK_PAT_PUBLIC_SUFFIX, "workers.dev is a public" },
	{ "*.github.io:443", GK_PAT_PUBLIC_SUFFIX, "github.io is a public" },
	{ "*.foo.bd", GK_PAT_PUBLIC_SUFFIX, "foo.bd is a public suffix" },
	{ "*.internal", GK_PAT_PUBLIC_SUFFIX, "internal is a public" },
};

/* "x.aaa...": a name of exactly n octets whose first label is `first`. */
static char *
make_name(size_t n, size_t first)
{
	char *s = malloc(n + 1);
	size_t i, lab = 0;

	assert_non_null(s);
	for (i = 0; i < n; i++) {
		if (lab == (i < first + 1 ? first : 63) && i + 1 < n) {
			s[i] = '.';
			lab = 0;
		} else {
			s[i] = 'a';
			lab++;
		}
	}
	s[n] = '\0';
	return s;
}

/* Quoted as is in messages: printable, no quote or backslash, short. */
static bool
plain(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '\\' ||
		    s[i] == '\'')
			return false;
	}
	return len <= 100;
}

static void
check_case(const char *in, size_t len, enum gk_pat_status st,
    const char *want)
{
	struct gk_pattern p, q;
	char txt[GK_PATTERN_MAX + 1], msg[1024], head[400];
	enum gk_pat_status got;
	size_t n;

	got = gk_pattern_parse((const uint8_t *)in, len, &p);
	n = gk_pattern_error((const uint8_t *)in, len, got, msg, sizeof(msg));
	assert_int_equal(strlen(msg), n);
	if (got != st)
		fail_msg("'%s': got %s, want %s (%s)", in,
		    gk_pat_strstatus(got), gk_pat_strstatus(st), msg);
	if (st == GK_PAT_OK) {
		n = gk_pattern_format(&p, txt, sizeof(txt));
		assert_int_equal(strlen(txt), n);
		assert_string_equal(txt, want);
		assert_int_equal(gk_pattern_parse((const uint8_t *)txt, n,
		    &q), GK_PAT_OK);
		assert_memory_equal(&p, &q, sizeof(p));
		return;
	}
	if (plain(in, len)) {
		snprintf(head, sizeof(head), "invalid pattern '%s': ", in);
		if (strncmp(msg, head, strlen(head)) != 0)
			fail_msg("'%s': message '%s'", in, msg);
	}
	if (strstr(msg, want) == NULL)
		fail_msg("'%s': message '%s' lacks '%s'", in, msg, want);
}

static void
test_parse_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(parse_cases); i++)
		check_case(parse_cases[i].in, strlen(parse_cases[i].in),
		    parse_cases[i].st, parse_cases[i].want);
}

static void
test_parse_lengths(void **state)
{
	static const struct {
		size_t			 n, first;
		const char		*prefix, *suffix;
		enum gk_pat_status	 st;
		const char		*msg;
	} cases[] = {
		{ 63, 63, "", ".com", GK_PAT_OK, NULL },
		{ 64, 64, "", ".com", GK_PAT_LABEL_TOO_LONG,
		    "is 64 characters long; the limit is 63" },
		{ 63, 63, "*.", ".com", GK_PAT_OK, NULL },
		{ 64, 64, "*.", ".com", GK_PAT_LABEL_TOO_LONG, "is 64" },
		{ 253, 61, "", "", GK_PAT_OK, NULL },
		{ 253, 61, "", ".", GK_PAT_OK, NULL },
		{ 253, 61, "**.", ":65535", GK_PAT_OK, NULL },
		{ 254, 62, "", "", GK_PAT_NAME_TOO_LONG,
		    "the name is 254 characters long; the limit is 253" },
		{ 254, 62, "", ".", GK_PAT_NAME_TOO_LONG, "is 254" },
		{ 254, 62, "*.", ":443", GK_PAT_NAME_TOO_LONG, "is 254" },
		{ 1024, 62, "", "", GK_PAT_NAME_TOO_LONG, "is 1024" },
		{ 1025, 63, "", "", GK_PAT_TOO_LONG,
		    "the pattern is 1025 characters long; the limit is 1024" },
		{ 4000, 63, "", "", GK_PAT_TOO_LONG, "is 4000 characters" },
	};
	char buf[5000], canon[GK_PATTERN_MAX + 1];
	size_t i;
	char *name;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		name = make_name(cases[i].n, cases[i].first);
		snprintf(buf, sizeof(buf), "%s%s%s", cases[i].prefix, name,
		    cases[i].suffix);
		snprintf(canon, sizeof(canon), "%s%s%s",
		    cases[i].prefix[0] != '\0' ? "*." : "", name,
		    strcmp(cases[i].suffix, ".") == 0 ? "" : cases[i].suffix);
		check_case(buf, strlen(buf), cases[i].st,
		    cases[i].st == GK_PAT_OK ? canon : cases[i].msg);
		free(name);
	}
}

static void
test_error_text(void **state)
{
	static const uint8_t nul[] = { 'a', '\0', 'b' };
	char msg[512], big[1100];
	struct gk_pattern p;
	size_t n;

	(void)state;
	/* NUL inside the buffer: rejected and escaped */
	assert_int_equal(gk_pattern_parse(nul, sizeof(nul), &p),
	    GK_PAT_BAD_CHAR);
	gk_pattern_error(nul, sizeof(nul), GK_PAT_BAD_CHAR, msg, sizeof(msg));
	assert_non_null(strstr(msg, "invalid pattern 'a\\x00b': '\\x00'"));
	/* long text is cut with "..." */
	memset(big, 'a', sizeof(big));
	gk_pattern_error((const uint8_t *)big, sizeof(big), GK_PAT_TOO_LONG,
	    msg, sizeof(msg));
	assert_non_null(strstr(msg, "aaa...': the pattern is 1100"));
	assert_true(strlen(msg) < 200);
	/* tiny buffers: truncated, NUL-terminated */
	n = gk_pattern_error((const uint8_t *)"*.com", 5,
	    GK_PAT_PUBLIC_SUFFIX, msg, 10);
	assert_int_equal(n, 9);
	assert_string_equal(msg, "invalid p");
	msg[0] = 'x';
	assert_int_equal(gk_pattern_error((const uint8_t *)"*", 1,
	    GK_PAT_BARE_WILDCARD, msg, 1), 0);
	assert_int_equal(msg[0], '\0');
	assert_int_equal(gk_pattern_error(NULL, 0, GK_PAT_EMPTY, NULL, 0), 0);
	/* a status that does not belong to the text: no details */
	gk_pattern_error((const uint8_t *)"x.com", 5, GK_PAT_BAD_PORT, msg,
	    sizeof(msg));
	assert_string_equal(msg, "invalid pattern 'x.com': bad port");
	assert_string_equal(gk_pat_strstatus(GK_PAT_PUBLIC_SUFFIX),
	    "public suffix");
	assert_string_equal(gk_pat_strstatus((enum gk_pat_status)99),
	    "unknown");
}

static void
test_format_truncation(void **state)
{
	struct gk_pattern p;
	char buf[8];

	(void)state;
	assert_int_equal(gk_pattern_parse((const uint8_t *)"*.github.com:443",
	    16, &p), GK_PAT_OK);
	assert_int_equal(gk_pattern_format(&p, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "*.githu");
	assert_int_equal(gk_pattern_format(&p, NULL, 0), 0);
	assert_int_equal(p.kind, GK_PAT_WILDCARD);
	assert_string_equal(p.name, "github.com");
	assert_int_equal(p.port, 443);
}

static void
test_psl_fail_closed(void **state)
{
	struct gk_pattern p;
	char msg[512];

	(void)state;
	assert_int_equal(gk_policy_psl_load("/nonexistent/psl.dat"), -1);
	assert_int_equal(gk_pattern_parse((const uint8_t *)"*.example.com",
	    13, &p), GK_PAT_PUBLIC_SUFFIX);
	gk_pattern_error((const uint8_t *)"*.example.com", 13,
	    GK_PAT_PUBLIC_SUFFIX, msg, sizeof(msg));
	assert_non_null(strstr(msg, "invalid pattern '*.example.com': the "
	    "public suffix list could not be loaded"));
	/* exact names and addresses do not need the list */
	assert_int_equal(gk_pattern_parse((const uint8_t *)"example.com", 11,
	    &p), GK_PAT_OK);
	assert_int_equal(gk_pattern_parse((const uint8_t *)"10.0.0.0/8", 10,
	    &p), GK_PAT_OK);
	assert_int_equal(gk_policy_psl_load(NULL), 0);
	assert_int_equal(gk_pattern_parse((const uint8_t *)"*.example.com",
	    13, &p), GK_PAT_OK);
	assert_int_equal(gk_policy_psl_load(
	    "/usr/share/publicsuffix/public_suffix_list.dat"), 0);
	assert_int_equal(gk_pattern_parse((const uint8_t *)"*.co.uk", 7, &p),
	    GK_PAT_PUBLIC_SUFFIX);
	assert_int_equal(gk_policy_psl_load(NULL), 0);
}

static void
test_name_normalize(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;	/* NULL: invalid */
	} cases[] = {
		{ "Example.COM", "example.com" },
		{ "example.com.", "example.com" },
		{ "a", "a" },
		{ "_dmarc.example.com", "_dmarc.example.com" },
		{ "", NULL }, { ".", NULL }, { "a..", NULL }, { ".a", NULL },
		{ "a..b", NULL }, { "a b", NULL }, { "a\\.b", NULL },
		{ "*.example.com", NULL }, { "ex\xc3\xa4mple.com", NULL },
		{ "192.0.2.1", NULL }, { "2001:db8::1", NULL },
		{ "[2001:db8::1]", NULL }, { "1.2.3", NULL },
		{ "example.com:443", NULL }, { "example.com/", NULL },
	};
	char out[GK_NAME_MAX + 1], *name;
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		n = gk_name_normalize(cases[i].in, strlen(cases[i].in), out);
		if (cases[i].out == NULL) {
			if (n != -1)
				fail_msg("'%s' normalized", cases[i].in);
			continue;
		}
		assert_int_equal(n, strlen(cases[i].out));
		assert_string_equal(out, cases[i].out);
	}
	assert_int_equal(gk_name_normalize("a\0b", 3, out), -1);
	assert_int_equal(gk_name_normalize("ab.c", 2, out), 2);
	name = make_name(253, 61);
	assert_int_equal(gk_name_normalize(name, 253, out), 253);
	free(name);
	name = make_name(254, 62);
	assert_int_equal(gk_name_normalize(name, 254, out), -1);
	free(name);
}

static struct gk_allowlist *
mklist(const char *const *pats)
{
	struct gk_allowlist *al;
	char err[512];
	size_t n = 0;

	while (n < NPATS && pats[n] != NULL)
		n++;
	al = gk_allowlist_new(pats, n, err, sizeof(err));
	if (al == NULL)
		fail_msg("allowlist: %s", err);
	return al;
}

static const struct {
	const char	*pats[NPATS];
	const char	*name;
	uint16_t	 port;
	bool		 want;
} name_cases[] = {
	{ { "example.com" }, "example.com", 0, true },
	{ { "example.com" }, "example.com", 443, true },
	{ { "example.com" }, "EXAMPLE.COM", 0, true },
	{ { "example.com" }, "example.com.", 0, true },
	{ { "example.com." }, "Example.Com.", 80, true },
	{ { "example.com" }, "www.example.com", 0, false },
	{ { "example.com" }, "example.co", 0, false },
	{ { "example.com" }, "xexample.com", 0, false },
	{ { "*.example.com" }, "example.com", 0, true },
	{ { "*.example.com" }, "www.example.com", 0, true },
	{ { "*.example.com" }, "a.b.c.example.com", 443, true },
	{ { "**.example.com" }, "a.b.example.com", 0, true },
	{ { "*.example.com" }, "badexample.com", 0, false },
	{ { "*.example.com" }, ".example.com", 0, false },
	{ { "*.example.com" }, "example.com.evil", 0, false },
	{ { "*.example.com" }, "com", 0, false },
	{ { "*.example.com" }, "WWW.Example.COM.", 0, true },
	{ { "*.github.com:443" }, "api.github.com", 443, true },
	{ { "*.github.com:443" }, "api.github.com", 80, false },
	{ { "*.github.com:443" }, "api.github.com", 0, true },
	{ { "example.com:443", "example.com:80" }, "example.com", 80,
	    true },
	{ { "example.com:443", "example.com:80" }, "example.com", 22,
	    false },
	{ { "example.com:443", "*.example.com" }, "example.com", 22,
	    true },
	{ { "a.com", "b.com", "*.c.com" }, "x.c.com", 1, true },
	{ { "a.com", "b.com", "*.c.com" }, "d.com", 1, false },
	/* never: IP literals and non-LDH names */
	{ { "*.example.com", "192.0.2.0/24" }, "192.0.2.1", 0, false },
	{ { "1.com" }, "1.com", 0, true },
	{ { "*.example.com" }, "a b.example.com", 0, false },
	{ { "*.example.com" }, "a\\.example.com", 0, false },
	{ { "*.example.com" }, "a\\046example.com", 0, false },
	{ { "*.example.com" }, "*.example.com", 0, false },
	{ { "*.example.com" }, "x..example.com", 0, false },
	{ { "*.example.com" }, "x.example.com..", 0, false },
	{ { "*.example.com" }, "", 0, false },
	{ { "*.example.com" }, "\xc3\xa4.example.com", 0, false },
	{ { "*.example.com" }, "x.example.com:443", 0, false },
	{ { NULL }, "example.com", 0, false },
};

static void
test_match_name(void **state)
{
	__typeof__(&name_cases[0]) c;
	struct gk_allowlist *al;
	size_t i;
	bool got;

	(void)state;
	for (i = 0; i < NITEMS(name_cases); i++) {
		c = &name_cases[i];
		al = mklist(c->pats);
		got = gk_allow_name(al, c->name, strlen(c->name), c->port);
		if (got != c->want)
			fail_msg("case %zu: '%s' port %u: got %d", i, c->name,
			    c->port, got);
		gk_allowlist_free(al);
	}
	assert_false(gk_allow_name(NULL, "example.com", 11, 0));
	al = mklist((const char *const[]){ "example.com", NULL });
	assert_false(gk_allow_name(al, "example.com\0x", 13, 0));
	assert_true(gk_allow_name(al, "example.comx", 11, 0));
	assert_false(gk_allow_name(al, NULL, 0, 0));
	gk_allowlist_free(al);
}

static const struct {
	const char	*pats[NPATS];
	const char	*addr;
	uint16_t	 port;
	bool		 want, cidr;
} addr_cases[] = {
	{ { "192.0.2.1" }, "192.0.2.1", 0, true, true },
	{ { "192.0.2.1" }, "192.0.2.2", 0, false, false },
	{ { "203.0.113.0/24" }, "203.0.113.0", 80, true, true },
	{ { "203.0.113.0/24" }, "203.0.113.255", 80, true, true },
	{ { "203.0.113.0/24" }, "203.0.114.0", 80, false, false },
	{ { "203.0.113.0/24" }, "203.0.112.255", 80, false, false },
	{ { "203.0.113.0/25" }, "203.0.113.127", 1, true, true },
	{ { "203.0.113.0/25" }, "203.0.113.128", 1, false, false },
	{ { "0.0.0.0/0" }, "198.51.100.7", 9, true, true },
	{ { "0.0.0.0/0" }, "2001:db8::1", 9, false, false },
	{ { "[::/0]" }, "192.0.2.1", 9, false, false },
	{ { "[::/0]" }, "::1", 9, true, true },
	{ { "[2001:db8::/32]" }, "2001:db8:ffff::1", 0, true, true },
	{ { "[2001:db8::/32]" }, "2001:db9::", 0, false, false },
	{ { "[2001:db8::1]" }, "2001:db8::1", 0, true, true },
	{ { "[2001:db8::1]" }, "2001:db8::2", 0, false, false },
	{ { "[2001:db8::/127]" }, "2001:db8::1", 0, true, true },
	{ { "[2001:db8::/127]" }, "2001:db8::2", 0, false, false },
	{ { "[::ffff:192.0.2.1]" }, "192.0.2.1", 0, false, false },
	{ { "[::ffff:192.0.2.1]" }, "::ffff:192.0.2.1", 0, true,
	    true },
	/* ports */
	{ { "192.0.2.0/24:443" }, "192.0.2.9", 443, true, true },
	{ { "192.0.2.0/24:443" }, "192.0.2.9", 80, false, true },
	{ { "192.0.2.0/24:443" }, "192.0.2.9", 0, true, true },
	{ { "[2001:db8::/32]:53" }, "2001:db8::5", 53, true, true },
	{ { "[2001:db8::/32]:53" }, "2001:db8::5", 54, false, true },
	{ { "192.0.2.0/24:443", "192.0.2.0/24:80" }, "192.0.2.9", 80,
	    true, true },
	/* name patterns never match addresses */
	{ { "*.example.com", "example.com" }, "192.0.2.1", 0, false,
	    false },
	{ { NULL }, "192.0.2.1", 0, false, false },
};

static void
test_match_addr(void **state)
{
	__typeof__(&addr_cases[0]) c;
	struct gk_allowlist *al;
	struct gk_addr a;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(addr_cases); i++) {
		c = &addr_cases[i];
		al = mklist(c->pats);
		assert_int_equal(gk_addr_parse(c->addr, &a), 0);
		if (gk_allow_addr(al, &a, c->port) != c->want ||
		    gk_allow_addr_cidr(al, &a) != c->cidr)
			fail_msg("case %zu: %s port %u", i, c->addr, c->port);
		gk_allowlist_free(al);
	}
	assert_false(gk_allow_addr(NULL, &a, 0));
	assert_false(gk_allow_addr_cidr(NULL, &a));
}

static const struct {
	const char	*pats[NPATS];
	const char	*name;
	uint16_t	 port;
	const char	*want;
} explain_cases[] = {
	{ { NULL }, "example.com", 0, "the allowlist is empty" },
	{ { "github.com" }, "api.github.com", 443, "closest pattern "
	    "'github.com' is exact; '*.github.com' would cover "
	    "api.github.com" },
	{ { "github.com:443" }, "api.github.com", 443, "closest "
	    "pattern 'github.com:443' is exact; '*.github.com:443' "
	    "would cover api.github.com" },
	{ { "*.github.com:443" }, "api.github.com", 22,
	    "'*.github.com' covers the name but only on port 443" },
	{ { "example.org", "*.github.com:443" }, "API.github.com.", 80,
	    "'*.github.com' covers the name but only on port 443" },
	{ { "github.com", "example.org" }, "evil.example", 0,
	    "no pattern shares a domain with 'evil.example'" },
	{ { "github.com" }, "evil.com", 0,
	    "no pattern shares a domain with 'evil.com'" },
	{ { "192.0.2.0/24" }, "example.com", 0,
	    "no pattern shares a domain with 'example.com'" },
	{ { "*.api.github.com" }, "github.com", 0, "closest pattern "
	    "'*.api.github.com' covers only names under "
	    "api.github.com; add 'github.com' to allow it" },
	{ { "www.github.com" }, "api.github.com", 0, "closest pattern "
	    "'www.github.com' does not cover api.github.com; add "
	    "'api.github.com' to allow it" },
	{ { "x.com", "a.github.com", "b.c.github.com" },
	    "d.c.github.com", 0, "closest pattern 'b.c.github.com'" },
	{ { "localhost" }, "foo.localhost", 0,
	    "closest pattern 'localhost' is exact" },
	{ { "*.github.com" }, "api.github.com", 443,
	    "'*.github.com' allows api.github.com" },
	{ { "*.example.com" }, "192.0.2.1", 0, "'192.0.2.1' is not a "
	    "host name (and name patterns never match IP literals)" },
	{ { "*.example.com" }, "a\tb", 0, "'a\\x09b' is not a host "
	    "name" },
};

static void
test_explain(void **state)
{
	__typeof__(&explain_cases[0]) c;
	struct gk_allowlist *al;
	char buf[512];
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(explain_cases); i++) {
		c = &explain_cases[i];
		al = mklist(c->pats);
		n = gk_allow_explain(al, c->name, strlen(c->name), c->port, buf,
		    sizeof(buf));
		assert_int_equal(n, strlen(buf));
		if (strncmp(buf, c->want, strlen(c->want)) != 0)
			fail_msg("case %zu: got \"%s\"", i, buf);
		/* truncated output stays NUL-terminated */
		n = gk_allow_explain(al, c->name, strlen(c->name), c->port, buf,
		    12);
		assert_true(n <= 11);
		assert_int_equal(strlen(buf), n);
		gk_allowlist_free(al);
	}
	assert_int_equal(gk_allow_explain(NULL, "x", 1, 0, buf, sizeof(buf)),
	    strlen("the allowlist is empty"));
	assert_int_equal(gk_allow_explain(NULL, "x", 1, 0, NULL, 0), 0);
}

static void
test_allowlist(void **state)
{
	static const char *const dups[] = {
		"example.com", "EXAMPLE.com.", "*.example.com",
		"**.Example.Com", "example.com:443", "10.0.0.0/8",
		"10.0.0.0/08", "[2001:db8::1]", "[2001:DB8::1/128]",
		"192.0.2.1", "192.0.2.1/32",
	};
	static const char *const bad[] = { "ok.example", "*.com", "x.org" };
	struct gk_allowlist *al;
	char err[512];

	(void)state;
	al = gk_allowlist_new(dups, 11, err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_allowlist_len(al), 6);
	assert_string_equal(gk_allowlist_at(al, 0)->name, "example.com");
	assert_int_equal(gk_allowlist_at(al, 1)->kind, GK_PAT_WILDCARD);
	assert_int_equal(gk_allowlist_at(al, 2)->port, 443);
	assert_int_equal(gk_allowlist_at(al, 3)->kind, GK_PAT_CIDR);
	assert_null(gk_allowlist_at(al, 6));
	gk_allowlist_free(al);

	al = gk_allowlist_new(NULL, 0, err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_allowlist_len(al), 0);
	assert_null(gk_allowlist_at(al, 0));
	assert_false(gk_allow_name(al, "example.com", 11, 0));
	gk_allowlist_free(al);
	gk_allowlist_free(NULL);
	assert_int_equal(gk_allowlist_len(NULL), 0);

	assert_null(gk_allowlist_new(bad, 3, err, sizeof(err)));
	assert_non_null(strstr(err, "invalid pattern '*.com': com is a "
	    "public suffix"));
}

static bool
drop_cidr(const struct gk_pattern *p, void *arg)
{
	(*(int *)arg)++;
	return p->kind == GK_PAT_CIDR;
}

/* A copy, less what drop() says, plus more; the original untouched. */
static void
test_allowlist_edit(void **state)
{
	static const char *const base[] = { "a.example", "10.0.0.0/8",
	    "*.b.example:443" };
	static const char *const more[] = { "A.example.", "c.example" };
	static const char *const bad[] = { "d.example", "*.com" };
	struct gk_allowlist *al, *na;
	char err[512], text[64];
	int calls = 0;

	(void)state;
	al = gk_allowlist_new(base, 3, err, sizeof(err));
	assert_non_null(al);
	na = gk_allowlist_edit(al, drop_cidr, &calls, more, 2, err,
	    sizeof(err));
	assert_non_null(na);
	assert_int_equal(calls, 3);
	assert_int_equal(gk_allowlist_len(al), 3);
	/* a.example merged with its duplicate; the CIDR gone; c added */
	assert_int_equal(gk_allowlist_len(na), 3);
	gk_pattern_format(gk_allowlist_at(na, 1), text, sizeof(text));
	assert_string_equal(text, "*.b.example:443");
	gk_pattern_format(gk_allowlist_at(na, 2), text, sizeof(text));
	assert_string_equal(text, "c.example");
	assert_true(gk_pattern_equal(gk_allowlist_at(na, 0),
	    gk_allowlist_at(al, 0)));
	assert_false(gk_pattern_equal(gk_allowlist_at(na, 1),
	    gk_allowlist_at(al, 1)));
	gk_allowlist_free(na);

	/* no drop, nothing added: an equal copy */
	na = gk_allowlist_edit(al, NULL, NULL, NULL, 0, err, sizeof(err));
	assert_non_null(na);
	assert_int_equal(gk_allowlist_len(na), 3);
	gk_allowlist_free(na);

	/* a bad added pattern: NULL, the message, al unchanged */
	assert_null(gk_allowlist_edit(al, NULL, NULL, bad, 2, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "invalid pattern '*.com'"));
	assert_int_equal(gk_allowlist_len(al), 3);
	gk_allowlist_free(al);
}

/* The cap counts distinct patterns. */
static void
test_allowlist_cap(void **state)
{
	struct gk_allowlist *al;
	const char **many;
	char err[512];
	size_t i;

	(void)state;
	many = calloc(GK_ALLOWLIST_MAX + 1, sizeof(*many));
	assert_non_null(many);
	for (i = 0; i <= GK_ALLOWLIST_MAX; i++) {
		many[i] = malloc(32);
		snprintf((char *)many[i], 32, "h%zu.example", i);
	}
	al = gk_allowlist_new(many, GK_ALLOWLIST_MAX, err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_allowlist_len(al), GK_ALLOWLIST_MAX);
	assert_true(gk_allow_name(al, "h4095.example", 13, 0));
	gk_allowlist_free(al);
	assert_null(gk_allowlist_new(many, GK_ALLOWLIST_MAX + 1, err,
	    sizeof(err)));
	assert_string_equal(err, "too many patterns: the limit is 4096");
	for (i = 0; i <= GK_ALLOWLIST_MAX; i++)
		free((char *)many[i]);
	for (i = 0; i <= GK_ALLOWLIST_MAX; i++)
		many[i] = "same.example";
	al = gk_allowlist_new(many, GK_ALLOWLIST_MAX + 1, err, sizeof(err));
	assert_non_null(al);
	assert_int_equal(gk_allowlist_len(al), 1);
	gk_allowlist_free(al);
	free(many);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_lengths),
		cmocka_unit_test(test_error_text),
		cmocka_unit_test(test_format_truncation),
		cmocka_unit_test(test_psl_fail_closed),
		cmocka_unit_test(test_name_normalize),
		cmocka_unit_test(test_match_name),
		cmocka_unit_test(test_match_addr),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_allowlist_cap),
		cmocka_unit_test(test_allowlist_edit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
