/*
 * Unit tests for http_follow() (socks/http_follow.c): a plain HTTP
 * request stream followed head by head through Content-Length bodies,
 * chunked bodies, blank lines and a websocket Upgrade. Each stream is fed
 * at once, byte by byte, split in two at every byte and in pieces of 3
 * and 7 bytes, the way the relay would (bytes passed beyond those held
 * are skipped, never shown): the verdicts must be the same every time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "socks/parse/socks.h"

#define GET_A	"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"		/* 35 */
#define GET_EVIL "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"	/* 38 */
#define POST_CL	"POST /x HTTP/1.1\r\nHost: a.example\r\n" \
		"Content-Length: 5\r\n\r\n"				/* 56 */
#define POST_CH	"POST /x HTTP/1.1\r\nHost: a.example\r\n" \
		"Transfer-Encoding: chunked\r\n\r\n"			/* 65 */
#define WS	"GET /ws HTTP/1.1\r\nHost: a.example\r\nUpgrade: websocket" \
		"\r\nConnection: Upgrade\r\n\r\n"			/* 78 */
#define BLANK8	"\r\n\r\n\r\n\r\n"
#define BLANK32	BLANK8 BLANK8 BLANK8 BLANK8

#define TRACE_MAX	1024

/* What a run saw: the verdicts as text, and where it stopped. */
struct run {
	char		 trace[TRACE_MAX];
	struct http_follow f;
	size_t		 held;
	bool		 ended;		/* OPAQUE or INVALID */
};

static void
trace_add(struct run *r, enum http_follow_status st,
    const struct http_follow_out *o)
{
	size_t n = strlen(r->trace);
	char *p = r->trace + n;

	switch (st) {
	case HTTP_FOLLOW_HEAD:
		snprintf(p, TRACE_MAX - n, "%sH%llu:%s", n ? " " : "",
		    (unsigned long long)o->pass, o->st == HTTP_ABSENT ? "-" :
		    o->host.host.name);
		break;
	case HTTP_FOLLOW_PASS:
		snprintf(p, TRACE_MAX - n, "%sP%llu", n ? " " : "",
		    (unsigned long long)o->pass);
		break;
	case HTTP_FOLLOW_OPAQUE:
		snprintf(p, TRACE_MAX - n, "%sO", n ? " " : "");
		break;
	case HTTP_FOLLOW_INVALID:
		assert_non_null(o->why);
		snprintf(p, TRACE_MAX - n, "%sX", n ? " " : "");
		break;
	case HTTP_FOLLOW_NEED_MORE:
		break;
	}
}

/* Follow the held bytes as far as they go (from an exact-size copy). */
static void
step(struct run *r, uint8_t *held, size_t *hl, uint64_t *skip)
{
	struct http_follow_out o;
	enum http_follow_status st;
	struct http_follow before;
	uint8_t *cp;

	for (;;) {
		assert_non_null(cp = malloc(*hl == 0 ? 1 : *hl));
		memcpy(cp, held, *hl);
		before = r->f;
		st = http_follow(&r->f, *hl == 0 ? NULL : cp, *hl, &o);
		free(cp);
		if (st == HTTP_FOLLOW_NEED_MORE) {
			assert_memory_equal(&before, &r->f, sizeof(before));
			return;
		}
		trace_add(r, st, &o);
		if (st == HTTP_FOLLOW_OPAQUE || st == HTTP_FOLLOW_INVALID) {
			r->ended = true;
			return;
		}
		assert_true(o.pass >= 1);
		if (st == HTTP_FOLLOW_HEAD)
			assert_true(o.pass <= *hl);
		if (o.pass > *hl) {
			*skip = o.pass - *hl;
			*hl = 0;
			return;
		}
		memmove(held, held + o.pass, *hl - (size_t)o.pass);
		*hl -= (size_t)o.pass;
	}
}

/* Feed s[0..n): a first piece of `first` bytes, then pieces of `piece`
 * (0: all the rest at once). */
static void
drive(const uint8_t *s, size_t n, size_t first, size_t piece,
    struct run *r)
{
	uint8_t *held;
	size_t hl = 0, pos = 0, k;
	uint64_t skip = 0;

	memset(r, 0, sizeof(*r));
	http_follow_init(&r->f);
	assert_non_null(held = malloc(n + 1));
	step(r, held, &hl, &skip);
	while (pos < n && !r->ended) {
		k = pos == 0 && first != 0 ? first : piece;
		if (k == 0 || k > n - pos)
			k = n - pos;
		pos += k;
		if (skip >= k) {
			skip -= k;
			continue;
		}
		memcpy(held + hl, s + pos - k + skip, k - (size_t)skip);
		hl += k - (size_t)skip;
		skip = 0;
		step(r, held, &hl, &skip);
	}
	r->held = hl;
	free(held);
}

static void
same(const char *what, const struct run *a, const struct run *b)
{
	if (strcmp(a->trace, b->trace) != 0)
		fail_msg("%s: \"%s\" != \"%s\"", what, a->trace, b->trace);
	assert_int_equal(a->ended, b->ended);
	if (!a->ended) {
		assert_int_equal(a->held, b->held);
		assert_memory_equal(&a->f, &b->f, sizeof(a->f));
	}
}

struct follow_case {
	const char	*in;
	size_t		 n;		/* 0: strlen(in) */
	const char	*trace;
	size_t		 held;		/* left held at the end */
};

static void
run_cases(const struct follow_case *c, size_t nc)
{
	struct run one, other;
	char what[64];
	size_t i, n, k;
	const uint8_t *s;

	for (i = 0; i < nc; i++) {
		s = (const uint8_t *)c[i].in;
		n = c[i].n != 0 ? c[i].n : strlen(c[i].in);
		drive(s, n, 0, 0, &one);
		if (strcmp(one.trace, c[i].trace) != 0)
			fail_msg("case %zu: \"%s\", want \"%s\"", i, one.trace,
			    c[i].trace);
		if (!one.ended && one.held != c[i].held)
			fail_msg("case %zu: %zu held, want %zu", i, one.held,
			    c[i].held);
		for (k = 1; k <= 7; k += k < 3 ? 1 : 4) {
			snprintf(what, sizeof(what), "case %zu, pieces of %zu",
			    i, k);
			drive(s, n, 0, k, &other);
			same(what, &one, &other);
		}
		for (k = 1; k < n; k++) {
			snprintf(what, sizeof(what), "case %zu, split at %zu",
			    i, k);
			drive(s, n, k, 0, &other);
			same(what, &one, &other);
		}
	}
}

static void
test_heads(void **state)
{
	static const struct follow_case c[] = {
		{ GET_A, 0, "H35:a.example", 0 },
		{ GET_A GET_EVIL, 0, "H35:a.example H38:evil.example", 0 },
		{ "\r\n" GET_A, 0, "H37:a.example", 0 },
		{ "\n\n \t" GET_A, 0, "H39:a.example", 0 },
		{ GET_A "\r\n" GET_EVIL, 0, "H35:a.example H40:evil.example",
		    0 },
		{ BLANK32 GET_A, 0, "H67:a.example", 0 },
		{ BLANK32 "\n" GET_A, 0, "X", 0 },
		{ GET_A BLANK32, 0, "H35:a.example", 32 },
		{ GET_A BLANK32 "\n", 0, "H35:a.example X", 0 },
		{ GET_A "GE", 0, "H35:a.example", 2 },
		{ "GET / HTTP/1.0\r\n\r\n", 0, "H18:-", 0 },
		{ "GET / HTTP/1.1\r\nHost: a.example", 0, "", 31 },
		{ "", 0, "", 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* Heads that cannot be followed, or are no HTTP/1.x request at all. */
static void
test_refused(void **state)
{
	static const struct follow_case c[] = {
		{ "GET /\r\n", 0, "X", 0 },
		{ "GET / HTTP/1.1\n\n", 0, "X", 0 },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, "X", 0 },
		{ "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443"
		    "\r\n\r\n", 0, "X", 0 },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\nUpgrade: h2c\r\n"
		    "HTTP2-Settings: AAMAAABkAAQAAP__\r\nConnection: Upgrade, "
		    "HTTP2-Settings\r\n\r\n", 0, "X", 0 },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\nUpgrade: TLS/1.2\r\n"
		    "Connection: Upgrade\r\n\r\n", 0, "X", 0 },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\nUpgrade: websocket, "
		    "h2c\r\n\r\n", 0, "X", 0 },
		{ "POST / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 1\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 0, "X", 0 },
		{ "POST / HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: "
		    "gzip\r\n\r\n", 0, "X", 0 },
		{ "GET http://evil.example/ HTTP/1.1\r\nHost: a.example\r\n"
		    "\r\n", 0, "X", 0 },
		{ GET_A "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b\r\n\r\n",
		    0, "H35:a.example X", 0 },
		{ GET_A "NICK gk\r\n", 0, "H35:a.example X", 0 },
		{ GET_A "\x16\x03\x01\x00\x05", 5 + 35, "H35:a.example X", 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

static void
test_bodies(void **state)
{
	static const struct follow_case c[] = {
		{ POST_CL "hello" GET_EVIL, 0,
		    "H56:a.example P5 H38:evil.example", 0 },
		{ POST_CL "hel", 0, "H56:a.example P5", 0 },
		{ POST_CL, 0, "H56:a.example P5", 0 },
		{ "POST / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 0\r\n"
		    "\r\n" GET_EVIL, 0, "H55:a.example H38:evil.example", 0 },
		/* the body is passed unlooked at, whatever it holds */
		{ POST_CL "GET /" GET_EVIL, 0,
		    "H56:a.example P5 H38:evil.example", 0 },
		{ POST_CH "5\r\nhello\r\n3;ext=\"v\"\r\nabc\r\n0\r\n"
		    "X-Trailer: 1\r\n\r\n" GET_EVIL, 0, "H65:a.example P3 P5 "
		    "P2 P11 P3 P2 P3 P16 H38:evil.example", 0 },
		{ POST_CH "0\r\n\r\n" GET_A, 0,
		    "H65:a.example P3 P2 H35:a.example", 0 },
		{ POST_CH "5 ;x\r\nhello\r\n0\r\n\r\n", 0,
		    "H65:a.example P6 P5 P2 P3 P2", 0 },
		{ POST_CH "A\r\n0123456789\r\n0\r\n\r\n", 0,
		    "H65:a.example P3 P10 P2 P3 P2", 0 },
		{ POST_CH "0000000000000001\r\nx\r\n0\r\n\r\n", 0,
		    "H65:a.example P18 P1 P2 P3 P2", 0 },
		{ POST_CH "5\r\nhel", 0, "H65:a.example P3 P5", 0 },
		{ POST_CH "5\r\nhello\r", 0, "H65:a.example P3 P5", 1 },
		{ POST_CH "0\r\nX-T: 1\r\n", 0, "H65:a.example P3", 8 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* Chunked framing that is not what it must be. */
static void
test_chunk_errors(void **state)
{
	static const struct follow_case c[] = {
		{ POST_CH "5\r\nhelloX", 0, "H65:a.example P3 P5 X", 0 },
		{ POST_CH "5\r\nhello\n", 0, "H65:a.example P3 P5 X", 0 },
		{ POST_CH "5\r\nhello\r\r", 0, "H65:a.example P3 P5 X", 0 },
		{ POST_CH "5\nhello", 0, "H65:a.example X", 0 },
		{ POST_CH "5\r\r", 0, "H65:a.example X", 0 },
		{ POST_CH "g\r\n", 0, "H65:a.example X", 0 },
		{ POST_CH "\r\n", 0, "H65:a.example X", 0 },
		{ POST_CH "0x5\r\n", 0, "H65:a.example X", 0 },
		{ POST_CH "11111111111111111\r\n", 0, "H65:a.example X", 0 },
		{ POST_CH "5;a\x01\r\n", 0, "H65:a.example X", 0 },
		{ POST_CH "0\r\nX-T 1\r\n\r\n", 0, "H65:a.example P3 X", 0 },
		{ POST_CH "0\r\n: 1\r\n\r\n", 0, "H65:a.example P3 X", 0 },
		{ POST_CH "0\r\nX-T: 1\n\r\n", 0, "H65:a.example P3 X", 0 },
		{ POST_CH "0\r\n\r\x00", 5 + 65, "H65:a.example P3 X", 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* After a websocket Upgrade: frames (opaque) or the next request. */
static void
test_upgrade(void **state)
{
	static const struct follow_case c[] = {
		{ WS "\x81\x85\x01\x02\x03\x04hello", 78 + 11,
		    "H78:a.example O", 0 },
		{ WS "\x88\x80\x00\x00\x00\x00", 78 + 6, "H78:a.example O", 0 },
		{ WS "\x01\x81", 78 + 2, "H78:a.example O", 0 },
		{ WS GET_EVIL, 0, "H78:a.example H38:evil.example", 0 },
		{ WS "\r\n" GET_EVIL, 0, "H78:a.example H40:evil.example", 0 },
		{ WS " " GET_EVIL, 0, "H78:a.example H39:evil.example", 0 },
		{ WS, 0, "H78:a.example", 0 },
		{ WS GET_A "\x81\x80", 78 + 35 + 2,
		    "H78:a.example H35:a.example X", 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* A body larger than anything held: passed in one verdict. */
static void
test_large_body(void **state)
{
	static const char head[] = "PUT /big HTTP/1.1\r\nHost: a.example\r\n"
	    "Content-Length: 18446744073709551615\r\n\r\n";
	struct http_follow_out o;
	struct http_follow f;

	(void)state;
	http_follow_init(&f);
	assert_int_equal(http_follow(&f, (const uint8_t *)head,
	    sizeof(head) - 1, &o), HTTP_FOLLOW_INVALID);	/* 20 digits */
	http_follow_init(&f);
	f.state = HTTP_FOLLOW_ST_BODY;
	f.left = UINT64_MAX;
	assert_int_equal(http_follow(&f, NULL, 0, &o), HTTP_FOLLOW_PASS);
	assert_true(o.pass == UINT64_MAX);
	assert_int_equal(f.state, HTTP_FOLLOW_ST_HEAD);
	f.state = HTTP_FOLLOW_ST_OPAQUE;
	assert_int_equal(http_follow(&f, (const uint8_t *)"x", 1, &o),
	    HTTP_FOLLOW_OPAQUE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heads),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_chunk_errors),
		cmocka_unit_test(test_upgrade),
		cmocka_unit_test(test_large_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
