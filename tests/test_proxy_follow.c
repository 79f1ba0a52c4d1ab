/*
 * Unit tests for proxy_peek() (socks/proxy_peek.c) on a plain HTTP
 * connection, call after call, the way the relay drives it: what it
 * passes goes (beyond the held bytes: unexamined), what follows is shown
 * again. Every request's Host is checked, on keep-alive connections and
 * pipelined in one write, behind Content-Length and chunked bodies; a
 * websocket connection is let go once it switched. Each stream is fed at
 * once, at the request boundary, and in pieces of 1, 7 and 4096 bytes.
 * The fixture is proxy_testutil.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"
#include "tests/proxy_testutil.h"

#define GOOD	"GET / HTTP/1.1\r\nHost: github.com\r\nAccept: */*\r\n\r\n"
#define GOOD2	"GET /b HTTP/1.1\r\nHost: GitHub.com:80\r\n\r\n"
#define EVIL	"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
#define POST	"POST /p HTTP/1.1\r\nHost: github.com\r\n"
#define CHUNKED	POST "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n" \
		"1a;x=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Sum: 1\r\n\r\n"
#define POST7	POST "Content-Length: 7\r\n\r\na=1&b=2"
#define POST38	POST "Content-Length: 38\r\n\r\n" EVIL
#define POSTCH	POST "Transfer-Encoding: chunked\r\n\r\n"
#define WS	"GET /ws HTTP/1.1\r\nHost: github.com\r\nUpgrade: " \
		"websocket\r\nConnection: Upgrade\r\n\r\n"

static const char *const pats[NPAT] = { "github.com", "evil.example" };

/* What a relay driving the peek saw. */
struct sim {
	enum relay_peek		 end;	/* DENY, ALLOW, or how it stopped */
	struct proxy_outcome	 o;	/* of the DENY */
	size_t			 passed;	/* bytes that went */
	size_t			 calls;
};

/* Show the held bytes until the peek waits, passes beyond them, or
 * decides for good. */
static void
sim_show(const struct gk_host *t, struct proxy_peek_state *ps,
    uint8_t *held, size_t *hl, uint64_t *skip, bool eof, struct sim *r)
{
	for (;;) {
		r->calls++;
		r->end = peek_st(t, ps, held, *hl, eof, &r->o);
		switch (r->end) {
		case RELAY_PEEK_MORE:
			return;
		case RELAY_PEEK_ALLOW:
		case RELAY_PEEK_DENY:
		case RELAY_PEEK_WATCH:		/* (TLS only) */
		case RELAY_PEEK_TAKE:		/* (TLS only) */
			return;
		case RELAY_PEEK_PASS:
			break;
		}
		if (peek_pass > *hl) {
			r->passed += *hl;
			*skip = peek_pass - *hl;
			*hl = 0;
			return;
		}
		r->passed += (size_t)peek_pass;
		*hl -= (size_t)peek_pass;
		memmove(held, held + peek_pass, *hl);
		if (*hl == 0 && !eof)
			return;
	}
}

/* Feed s[0..n): a first piece of `first` bytes (0: piece), then pieces
 * of `piece` (0: the rest); then the client's end if eof. */
static void
sim_run(const struct gk_host *t, const void *s, size_t n, size_t first,
    size_t piece, bool eof, struct sim *r)
{
	struct proxy_peek_state ps;
	const uint8_t *b = s;
	uint8_t *held;
	size_t hl = 0, pos = 0, k, take;
	uint64_t skip = 0;

	memset(r, 0, sizeof(*r));
	proxy_peek_init(&ps);
	assert_non_null(held = malloc(n + 1));
	r->end = RELAY_PEEK_MORE;
	while (pos < n && (r->end == RELAY_PEEK_MORE ||
	    r->end == RELAY_PEEK_PASS)) {
		k = pos == 0 && first != 0 ? first : piece;
		if (k == 0 || k > n - pos)
			k = n - pos;
		take = skip < k ? (size_t)skip : k;	/* passed unseen */
		r->passed += take;
		skip -= take;
		memcpy(held + hl, b + pos + take, k - take);
		hl += k - take;
		pos += k;
		if (hl > 0)
			sim_show(t, &ps, held, &hl, &skip, false, r);
	}
	if (r->end == RELAY_PEEK_ALLOW)
		r->passed += hl + (n - pos);
	else if (eof && skip == 0 && (r->end == RELAY_PEEK_MORE ||
	    r->end == RELAY_PEEK_PASS)) {
		sim_show(t, &ps, held, &hl, &skip, true, r);
		if (r->end == RELAY_PEEK_ALLOW)
			r->passed += hl;
	}
	free(held);
}

struct follow_case {
	const char		*what;
	const char		*s;
	size_t			 boundary;	/* where the first request
						   ends (0: none) */
	bool			 eof;
	enum relay_peek		 end;	/* ALLOW also: all passed */
	enum gk_deny_reason	 reason;
	const char		*why_has;
};

static void
run_case(const struct follow_case *c, uint16_t port)
{
	static const size_t pieces[] = { 0, 1, 7, 4096 };
	struct gk_host t;
	struct sim r;
	size_t n = strlen(c->s), i;
	char what[160];

	target(&t, "github.com", port);
	for (i = 0; i <= sizeof(pieces) / sizeof(*pieces); i++) {
		if (i == sizeof(pieces) / sizeof(*pieces))
			sim_run(&t, c->s, n, c->boundary, 0, c->eof, &r);
		else
			sim_run(&t, c->s, n, 0, pieces[i], c->eof, &r);
		snprintf(what, sizeof(what), "%s (port %u, %s %zu)", c->what,
		    port, i < 4 ? "pieces of" : "split at", i < 4 ?
		    pieces[i] : c->boundary);
		if (c->end == RELAY_PEEK_DENY) {
			if (r.end != RELAY_PEEK_DENY)
				fail_msg("%s: %s, want DENY", what,
				    peek_name(r.end));
			check_deny(what, &r.o, c->reason, c->why_has);
			/* the first request went only if shown alone */
			assert_true(r.passed <= c->boundary);
			continue;
		}
		if (r.end == RELAY_PEEK_DENY)
			fail_msg("%s: DENY (%s)", what, r.o.why);
		if (c->end == RELAY_PEEK_ALLOW || !c->eof)
			assert_int_equal(r.passed, n);
		if (c->eof)
			assert_int_equal(r.end, c->end);
	}
}

static void
run_cases(const struct follow_case *c, size_t nc)
{
	size_t i;

	cage_new(pats, NULL);
	for (i = 0; i < nc; i++) {
		run_case(&c[i], 80);
		run_case(&c[i], 8080);
	}
	cage_free();
}

#define L(x)	(sizeof(x) - 1)
#define NO	RELAY_PEEK_DENY
#define OK	RELAY_PEEK_PASS, 0, NULL	/* all passed, no end seen */

/* Keep-alive and pipelining: every request is checked. */
static void
test_keepalive(void **state)
{
	static const struct follow_case c[] = {
		{ "two requests", GOOD GOOD2, L(GOOD), false, OK },
		{ "two requests, blank line between", GOOD "\r\n" GOOD2,
		    L(GOOD), false, OK },
		{ "a foreign Host second", GOOD EVIL, L(GOOD), false, NO,
		    GK_REASON_HOST_MISMATCH, "request 2" },
		{ "a foreign Host third", GOOD GOOD2 EVIL, L(GOOD GOOD2),
		    false, NO, GK_REASON_HOST_MISMATCH, "request 3" },
		{ "a foreign Host after a blank line", GOOD "\r\n" EVIL,
		    L(GOOD), false, NO, GK_REASON_HOST_MISMATCH, "evil" },
		{ "after 33 blank bytes", GOOD "\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
		    "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\n" GOOD2, L(GOOD),
		    false, NO, GK_REASON_MALFORMED, "blank" },
		{ "a line protocol second", GOOD "NICK gk\r\n", L(GOOD),
		    false, NO, GK_REASON_MALFORMED, "request 2" },
		{ "HTTP/2 preface second", GOOD "PRI * HTTP/2.0\r\n\r\nSM\r\n"
		    "\r\n", L(GOOD), false, NO, GK_REASON_MALFORMED, NULL },
		{ "CONNECT second", GOOD "CONNECT evil.example:443 HTTP/1.1"
		    "\r\n\r\n", L(GOOD), false, NO, GK_REASON_MALFORMED,
		    "CONNECT" },
		{ "HTTP/1.0 without Host, then foreign", "GET / HTTP/1.0\r\n"
		    "\r\n" EVIL, 18, false, NO, GK_REASON_HOST_MISMATCH,
		    NULL },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* Bodies pass unlooked at; the request after them is checked. */
static void
test_bodies(void **state)
{
	static const struct follow_case c[] = {
		{ "POST with a body, then good", POST7 GOOD, L(POST7), false,
		    OK },
		{ "POST with a body, then foreign", POST7 EVIL, L(POST7),
		    false, NO, GK_REASON_HOST_MISMATCH, "request 2" },
		{ "a body holding a request", POST38 GOOD, L(POST38), false,
		    OK },
		{ "chunked, then good", CHUNKED GOOD, L(CHUNKED), false, OK },
		{ "chunked, then foreign", CHUNKED EVIL, L(CHUNKED), false, NO,
		    GK_REASON_HOST_MISMATCH, "evil.example" },
		{ "chunk data longer than its size", POSTCH "5\r\nhello" EVIL,
		    L(POSTCH "5\r\nhello"), false, NO, GK_REASON_MALFORMED,
		    "chunk" },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* A websocket connection: once frames come, nothing more to look at. */
static void
test_websocket(void **state)
{
	static const struct follow_case c[] = {
		{ "upgrade, frames", WS "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d"
		    "\x51\x58" EVIL, L(WS), false, RELAY_PEEK_ALLOW, 0, NULL },
		{ "upgrade refused, foreign next", WS EVIL, L(WS), false, NO,
		    GK_REASON_HOST_MISMATCH, "request 2" },
		{ "upgrade refused, good next", WS GOOD, L(WS), false, OK },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* The client's end: between requests fine, inside one malformed. */
static void
test_eof(void **state)
{
	static const struct follow_case c[] = {
		{ "end after two", GOOD GOOD2, L(GOOD), true,
		    RELAY_PEEK_ALLOW, 0, NULL },
		{ "end after a blank line", GOOD "\r\n", L(GOOD), true,
		    RELAY_PEEK_ALLOW, 0, NULL },
		{ "end inside a head", GOOD "GET / HT", L(GOOD), true, NO,
		    GK_REASON_MALFORMED, "ended inside" },
		{ "end inside a chunk-size line", POSTCH "5", L(POSTCH), true,
		    NO, GK_REASON_MALFORMED, "ended inside" },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(*c));
}

/* A body far larger than the hold: passed in one verdict, spliced. */
static void
test_large_body(void **state)
{
	static char s[300000];
	struct gk_host t;
	struct sim r;
	size_t n, body = 250000, h, i;
	static const size_t pieces[] = { 0, 4096, 65536 };

	(void)state;
	cage_new(pats, NULL);
	target(&t, "github.com", 80);
	h = (size_t)snprintf(s, sizeof(s), "PUT /big HTTP/1.1\r\nHost: "
	    "github.com\r\nContent-Length: %zu\r\n\r\n", body);
	memset(s + h, 'G', body);
	for (i = 0; i < 2; i++) {
		n = h + body;
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%s",
		    i == 0 ? GOOD : EVIL);
		sim_run(&t, s, n, 0, pieces[i + 1], false, &r);
		if (i == 0) {
			assert_int_equal(r.end, RELAY_PEEK_PASS);
			assert_int_equal(r.passed, n);
		} else {
			assert_int_equal(r.end, RELAY_PEEK_DENY);
			assert_int_equal(r.passed, h + body);
			check_deny("after a large body", &r.o,
			    GK_REASON_HOST_MISMATCH, "request 2");
		}
		/* the body was never shown: few calls */
		assert_true(r.calls < 50);
	}
	cage_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keepalive, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bodies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_websocket, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_body, setup,
		    teardown),
	};

	log_init("test_proxy_follow", getenv("GK_DEBUG") != NULL ?
	    LOG_LVL_DEBUG : LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
