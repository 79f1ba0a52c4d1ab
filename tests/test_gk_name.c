/*
 * Tests for gk_name: the one host-name rule (gk_name_parse), its
 * normalizing wrapper, the character class and the lower-casing helper.
 * Every boundary: labels of 63/64 bytes, names of 253/254 bytes with and
 * without the trailing dot, '-' and '_' in every position, empty labels,
 * upper case, non-ASCII and other bytes, all-digit last labels.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

struct name_case {
	const char		*in;
	size_t			 len;	/* 0: strlen(in) */
	enum gk_name_status	 st;
	const char		*out;	/* GK_NAME_OK: the text */
	size_t			 off, n;	/* otherwise: the span */
};

static const struct name_case cases[] = {
	/* real names */
	{ "example.com", 0, GK_NAME_OK, "example.com", 0, 0 },
	{ "api_x.example", 0, GK_NAME_OK, "api_x.example", 0, 0 },
	{ "_dmarc.example.com", 0, GK_NAME_OK, "_dmarc.example.com", 0, 0 },
	{ "_443._tcp.example.com", 0, GK_NAME_OK, "_443._tcp.example.com",
	    0, 0 },
	{ "xn--bcher-kva.example", 0, GK_NAME_OK, "xn--bcher-kva.example",
	    0, 0 },
	{ "localhost", 0, GK_NAME_OK, "localhost", 0, 0 },
	{ "123.example", 0, GK_NAME_OK, "123.example", 0, 0 },
	{ "1.2.3.4a", 0, GK_NAME_OK, "1.2.3.4a", 0, 0 },
	/* '-' and '_' anywhere: first, last, alone, doubled */
	{ "-a.example", 0, GK_NAME_OK, "-a.example", 0, 0 },
	{ "a-.example", 0, GK_NAME_OK, "a-.example", 0, 0 },
	{ "_a.example", 0, GK_NAME_OK, "_a.example", 0, 0 },
	{ "a_.example", 0, GK_NAME_OK, "a_.example", 0, 0 },
	{ "a.-", 0, GK_NAME_OK, "a.-", 0, 0 },
	{ "a._", 0, GK_NAME_OK, "a._", 0, 0 },
	{ "_", 0, GK_NAME_OK, "_", 0, 0 },
	{ "-", 0, GK_NAME_OK, "-", 0, 0 },
	{ "a--b__c.example", 0, GK_NAME_OK, "a--b__c.example", 0, 0 },
	{ "x.1-2", 0, GK_NAME_OK, "x.1-2", 0, 0 },
	{ "x.1_", 0, GK_NAME_OK, "x.1_", 0, 0 },
	/* upper case and the trailing dot */
	{ "WWW.Example.COM", 0, GK_NAME_OK, "www.example.com", 0, 0 },
	{ "API_X.Example.", 0, GK_NAME_OK, "api_x.example", 0, 0 },
	{ "XN--BCHER-KVA.EXAMPLE.", 0, GK_NAME_OK, "xn--bcher-kva.example",
	    0, 0 },
	{ "a.", 0, GK_NAME_OK, "a", 0, 0 },
	/* empty: the name, a label */
	{ "", 0, GK_NAME_EMPTY, NULL, 0, 0 },
	{ ".", 0, GK_NAME_EMPTY, NULL, 0, 0 },
	{ "..", 0, GK_NAME_EMPTY_LABEL, NULL, 0, 0 },
	{ ".a", 0, GK_NAME_EMPTY_LABEL, NULL, 0, 0 },
	{ "a..b", 0, GK_NAME_EMPTY_LABEL, NULL, 2, 0 },
	{ "a..", 0, GK_NAME_EMPTY_LABEL, NULL, 2, 0 },
	{ "a...", 0, GK_NAME_EMPTY_LABEL, NULL, 2, 0 },
	{ "ab.cd..", 0, GK_NAME_EMPTY_LABEL, NULL, 6, 0 },
	/* bytes a label cannot hold */
	{ "a b", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "*.example", 0, GK_NAME_BAD_CHAR, NULL, 0, 1 },
	{ "example.com:443", 0, GK_NAME_BAD_CHAR, NULL, 11, 1 },
	{ "a/b", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "a\\.b", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "a@b", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "[::1]", 0, GK_NAME_BAD_CHAR, NULL, 0, 1 },
	{ "2001:db8::1", 0, GK_NAME_BAD_CHAR, NULL, 4, 1 },
	{ "a\r\nb", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "a\x7f", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "a\0b", 3, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "ab\0", 3, GK_NAME_BAD_CHAR, NULL, 2, 1 },
	{ "a~b", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	/* non-ASCII */
	{ "\xc3\xa9.example", 0, GK_NAME_NON_ASCII, NULL, 0, 1 },
	{ "ex\xc3\xa4mple.com", 0, GK_NAME_NON_ASCII, NULL, 2, 1 },
	{ "a\x80", 0, GK_NAME_NON_ASCII, NULL, 1, 1 },
	{ "a\xff.", 0, GK_NAME_NON_ASCII, NULL, 1, 1 },
	/* the first problem from the left wins, then length, then digits */
	{ "a b..c", 0, GK_NAME_BAD_CHAR, NULL, 1, 1 },
	{ "a..b c", 0, GK_NAME_EMPTY_LABEL, NULL, 2, 0 },
	{ "1.2.3.4 ", 0, GK_NAME_BAD_CHAR, NULL, 7, 1 },
	/* IP literals and other all-digit last labels */
	{ "1.2.3.4", 0, GK_NAME_NUMERIC, NULL, 0, 7 },
	{ "1.2.3.4.", 0, GK_NAME_NUMERIC, NULL, 0, 7 },
	{ "192.0.2.300", 0, GK_NAME_NUMERIC, NULL, 0, 11 },
	{ "example.123", 0, GK_NAME_NUMERIC, NULL, 0, 11 },
	{ "123", 0, GK_NAME_NUMERIC, NULL, 0, 3 },
	{ "0", 0, GK_NAME_NUMERIC, NULL, 0, 1 },
	{ "0x7f.1", 0, GK_NAME_NUMERIC, NULL, 0, 6 },
	/* only len bytes are read */
	{ "ab.cd", 2, GK_NAME_OK, "ab", 0, 0 },
	{ "ab.cd", 3, GK_NAME_OK, "ab", 0, 0 },
	{ "1.2x", 3, GK_NAME_NUMERIC, NULL, 0, 3 },
};

static void
check(const char *what, const uint8_t *in, size_t len,
    enum gk_name_status st, const char *out, size_t off, size_t n)
{
	struct gk_name nm;
	enum gk_name_status got;

	memset(&nm, 0xa5, sizeof(nm));
	got = gk_name_parse(in, len, &nm);
	if (got != st)
		fail_msg("%s: %s, want %s", what, gk_name_strstatus(got),
		    gk_name_strstatus(st));
	if (st == GK_NAME_OK) {
		assert_string_equal(nm.text, out);
		assert_int_equal(nm.len, strlen(out));
		assert_int_equal(nm.err_off, 0);
		assert_int_equal(nm.err_len, 0);
		return;
	}
	assert_string_equal(nm.text, "");
	assert_int_equal(nm.len, 0);
	if (nm.err_off != off || nm.err_len != n)
		fail_msg("%s: span %zu+%zu, want %zu+%zu", what, nm.err_off,
		    nm.err_len, off, n);
}

static void
test_table(void **state)
{
	const struct name_case *c;
	char what[64];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		c = &cases[i];
		snprintf(what, sizeof(what), "case %zu", i);
		check(what, (const uint8_t *)c->in,
		    c->len != 0 ? c->len : strlen(c->in), c->st, c->out,
		    c->off, c->n);
	}
}

/* A name of n bytes, labels of at most lab bytes, letters (and '_'). */
static void
make_name(char *s, size_t n, size_t lab, char fill)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = (i + 1) % (lab + 1) == 0 ? '.' :
		    fill != 0 ? fill : (char)('a' + i % 26);
	if (n > 0 && s[n - 1] == '.')
		s[n - 1] = 'z';
	s[n] = '\0';
}

static void
test_label_lengths(void **state)
{
	char s[300];

	(void)state;
	make_name(s, 63, 63, 0);
	strcat(s, ".example");
	check("label 63", (uint8_t *)s, strlen(s), GK_NAME_OK, s, 0, 0);
	make_name(s, 64, 64, 0);
	strcat(s, ".example");
	check("label 64", (uint8_t *)s, strlen(s),
	    GK_NAME_LABEL_TOO_LONG, NULL, 0, 64);
	memcpy(s, "x.", 2);
	make_name(s + 2, 63, 63, '_');
	check("last label 63 of '_'", (uint8_t *)s, strlen(s), GK_NAME_OK,
	    s, 0, 0);
	make_name(s + 2, 64, 64, '-');
	check("last label 64 of '-'", (uint8_t *)s, strlen(s),
	    GK_NAME_LABEL_TOO_LONG, NULL, 2, 64);
	strcat(s, ".");
	check("last label 64, dot", (uint8_t *)s, strlen(s),
	    GK_NAME_LABEL_TOO_LONG, NULL, 2, 64);
	make_name(s, 63, 63, 0);
	check("one label 63", (uint8_t *)s, 63, GK_NAME_OK, s, 0, 0);
	make_name(s, 64, 64, 0);
	check("one label 64", (uint8_t *)s, 64, GK_NAME_LABEL_TOO_LONG,
	    NULL, 0, 64);
	/* a long label is reported before a bad byte after it */
	make_name(s, 64, 64, 0);
	strcat(s, ".a b");
	check("label 64 then a space", (uint8_t *)s, strlen(s),
	    GK_NAME_LABEL_TOO_LONG, NULL, 0, 64);
}

static void
test_name_lengths(void **state)
{
	char s[600], want[300];

	(void)state;
	make_name(s, 253, 63, 0);
	check("253", (uint8_t *)s, 253, GK_NAME_OK, s, 0, 0);
	memcpy(want, s, 254);
	s[253] = '.';
	s[254] = '\0';
	check("253 and the dot", (uint8_t *)s, 254, GK_NAME_OK, want, 0, 0);
	make_name(s, 254, 63, 0);
	check("254", (uint8_t *)s, 254, GK_NAME_TOO_LONG, NULL, 0, 254);
	s[254] = '.';
	check("254 and the dot", (uint8_t *)s, 255, GK_NAME_TOO_LONG, NULL,
	    0, 254);
	make_name(s, 500, 63, 0);
	check("500", (uint8_t *)s, 500, GK_NAME_TOO_LONG, NULL, 0, 500);
	make_name(s, 253, 1, 0);	/* "a.c.e...": 127 labels of 1 */
	check("253 in one-byte labels", (uint8_t *)s, 253, GK_NAME_OK, s,
	    0, 0);
	/* too long with a bad byte: the byte is reported */
	make_name(s, 300, 63, 0);
	s[280] = '*';
	check("300 with a '*'", (uint8_t *)s, 300, GK_NAME_BAD_CHAR, NULL,
	    280, 1);
	/* too long and numeric: the length is reported */
	make_name(s, 260, 63, 0);	/* the last label: s[256, 260) */
	memcpy(s + 256, "1234", 4);
	check("260, numeric", (uint8_t *)s, 260, GK_NAME_TOO_LONG, NULL, 0,
	    260);
}

/* Every byte value, alone, between letters and as a whole label. */
static void
test_every_byte(void **state)
{
	uint8_t s[3];
	struct gk_name nm;
	enum gk_name_status st;
	unsigned int c;
	bool in_class;

	(void)state;
	for (c = 0; c < 256; c++) {
		in_class = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_';
		assert_int_equal(gk_name_char((uint8_t)c), in_class);
		assert_int_equal(gk_lower((uint8_t)c),
		    c >= 'A' && c <= 'Z' ? c + 32 : c);
		s[0] = 'a';
		s[1] = (uint8_t)c;
		s[2] = 'b';
		st = gk_name_parse(s, 3, &nm);
		if (in_class || c == '.') {
			assert_int_equal(st, GK_NAME_OK);
			assert_int_equal(nm.text[1], gk_lower((uint8_t)c));
		} else
			assert_int_equal(st, c >= 0x80 ? GK_NAME_NON_ASCII :
			    GK_NAME_BAD_CHAR);
	}
}

static void
test_normalize(void **state)
{
	char out[GK_NAME_MAX + 1], s[300];

	(void)state;
	assert_int_equal(gk_name_normalize("API_X.Example.", 14, out), 13);
	assert_string_equal(out, "api_x.example");
	assert_int_equal(gk_name_normalize(NULL, 3, out), -1);
	assert_int_equal(gk_name_normalize("", 0, out), -1);
	assert_int_equal(gk_name_normalize("1.2.3.4", 7, out), -1);
	assert_int_equal(gk_name_normalize("a b", 3, out), -1);
	make_name(s, 253, 63, 0);
	s[253] = '.';
	assert_int_equal(gk_name_normalize(s, 254, out), 253);
	s[254] = '.';
	assert_int_equal(gk_name_normalize(s, 255, out), -1);
}

static void
test_strstatus(void **state)
{
	const char *a, *b;
	int i, j;

	(void)state;
	for (i = GK_NAME_OK; i <= GK_NAME_NUMERIC; i++) {
		a = gk_name_strstatus((enum gk_name_status)i);
		assert_string_not_equal(a, "unknown");
		for (j = GK_NAME_OK; j < i; j++) {
			b = gk_name_strstatus((enum gk_name_status)j);
			assert_string_not_equal(a, b);
		}
	}
	assert_string_equal(gk_name_strstatus(
	    (enum gk_name_status)(GK_NAME_NUMERIC + 1)), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_label_lengths),
		cmocka_unit_test(test_name_lengths),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_strstatus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
