/*
 * Unit tests for proxy_peek() (socks/proxy_peek.c), the prefixes servers
 * tolerate before a request line or a hello: blank bytes (CR, LF, SP,
 * HTAB: 0, 1, max - 1, max, max + 1 of each kind), PROXY protocol
 * headers, what is not a valid HTTP/1.x request once HTTP is expected
 * (port 80, or first bytes that start like a request: HTTP/0.9, the
 * HTTP/2 preface, CONNECT, h2c, bare LF), and blank bytes before TLS.
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
#include "sni/sni.h"
#include "socks/parse/socks.h"
#include "socks/proxy.h"
#include "tests/proxy_testutil.h"

#define EVIL	"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
#define GOOD	"GET / HTTP/1.1\r\nHost: github.com\r\n\r\n"
#define S(x)	x, sizeof(x) - 1

static const char *const pats[NPAT] = { "github.com", "evil.example" };

/* The verdict for b on github.com:port: allowed (all of it), or denied
 * with reason (and why containing why_has, seen if not NULL). */
static void
expect(const char *what, uint16_t port, const void *b, size_t n, bool ok,
    enum gk_deny_reason reason, const char *why_has, const char *seen)
{
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;

	target(&t, "github.com", port);
	rp = peek_n(&t, b, n, false, &o);
	if (ok) {
		if (!peek_allows(rp, n))
			fail_msg("%s (port %u): %s, want all allowed (%s)",
			    what, port, peek_name(rp),
			    rp == RELAY_PEEK_DENY ? o.why : "");
		return;
	}
	if (rp != RELAY_PEEK_DENY)
		fail_msg("%s (port %u): %s, want DENY", what, port,
		    peek_name(rp));
	check_deny(what, &o, reason, why_has);
	if (seen != NULL)
		assert_string_equal(o.seen, seen);
}

/*
 * Blank bytes before a request are skipped as servers skip them, and the
 * request behind them is checked: a foreign Host is host_mismatch, the
 * right one passes; beyond the bound nothing is looked at: malformed.
 * On port 80 and on any other port (a server may listen anywhere).
 */
static void
test_blank_lines(void **state)
{
	static const char *const kinds[] = { "\r\n", "\n", " ", "\t",
	    "\r\n\t \n" };
	static const size_t counts[] = { 0, 1, HTTP_BLANK_MAX - 1,
	    HTTP_BLANK_MAX, HTTP_BLANK_MAX + 1 };
	static const uint16_t ports[] = { 80, 8080 };
	char buf[256], what[96];
	size_t k, c, p, i, kl, n;

	(void)state;
	cage_new(pats, NULL);
	for (k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
		kl = strlen(kinds[k]);
		for (c = 0; c < sizeof(counts) / sizeof(*counts); c++) {
			for (i = 0; i < counts[c]; i++)
				buf[i] = kinds[k][i % kl];
			for (p = 0; p < 2; p++) {
				snprintf(what, sizeof(what), "kind %zu x%zu, "
				    "evil", k, counts[c]);
				memcpy(buf + i, EVIL, sizeof(EVIL) - 1);
				n = i + sizeof(EVIL) - 1;
				if (counts[c] > HTTP_BLANK_MAX)
					expect(what, ports[p], buf, n, false,
					    GK_REASON_MALFORMED, "blank", NULL);
				else
					expect(what, ports[p], buf, n, false,
					    GK_REASON_HOST_MISMATCH, NULL,
					    "evil.example");
				snprintf(what, sizeof(what), "kind %zu x%zu, "
				    "good", k, counts[c]);
				memcpy(buf + i, GOOD, sizeof(GOOD) - 1);
				n = i + sizeof(GOOD) - 1;
				expect(what, ports[p], buf, n,
				    counts[c] <= HTTP_BLANK_MAX,
				    GK_REASON_MALFORMED, "blank", NULL);
			}
		}
	}
	cage_free();
}

/* Blank bytes alone wait; at eof they are no request. */
static void
test_blank_only(void **state)
{
	static const char crlf[] = "\r\n\r\n\r\n";
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "github.com", 80);
	assert_int_equal(peek_n(&t, (const uint8_t *)crlf, 6, false, &o),
	    RELAY_PEEK_MORE);
	assert_int_equal(peek_n(&t, (const uint8_t *)crlf, 6, true, &o),
	    RELAY_PEEK_DENY);
	check_deny("blank at eof", &o, GK_REASON_MALFORMED, "ended");
	cage_free();
}

/* PROXY protocol v1 and v2, on any port; their prefixes wait. */
static void
test_proxy_protocol(void **state)
{
	static const char v1[] = "PROXY TCP4 192.0.2.1 192.0.2.10 50000 80"
	    "\r\n" EVIL;
	static const char v1_blank[] = "\r\nPROXY TCP4 192.0.2.1 "
	    "192.0.2.10 50000 80\r\n" EVIL;
	static const uint8_t v2[] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
	    0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c, 0xc0,
	    0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x0a, 0xc3, 0x50, 0x00, 0x50,
	    'G', 'E', 'T', ' ', '/', ' ' };
	static const uint16_t ports[] = { 80, 443, 22, 5432, 8080 };
	struct proxy_outcome o;
	struct gk_host t;
	size_t p, n;

	(void)state;
	cage_new(pats, NULL);
	for (p = 0; p < sizeof(ports) / sizeof(*ports); p++) {
		expect("PROXY v1", ports[p], v1, sizeof(v1) - 1, false,
		    GK_REASON_MALFORMED, "PROXY", NULL);
		expect("PROXY v1, header only", ports[p], v1, 6, false,
		    GK_REASON_MALFORMED, "PROXY", NULL);
		expect("PROXY v1 after a blank line", ports[p], v1_blank,
		    sizeof(v1_blank) - 1, false, GK_REASON_MALFORMED, "PROXY",
		    NULL);
		expect("PROXY v2", ports[p], v2, sizeof(v2), false,
		    GK_REASON_MALFORMED, "PROXY", NULL);
		expect("PROXY v2, signature only", ports[p], v2, 12, false,
		    GK_REASON_MALFORMED, "PROXY", NULL);
		target(&t, "github.com", ports[p]);
		for (n = 1; n < 12; n++)
			assert_int_equal(peek_n(&t, v2, n, false, &o),
			    RELAY_PEEK_MORE);
		for (n = 1; n < 6; n++)
			assert_int_equal(peek_n(&t, (const uint8_t *)v1, n,
			    false, &o), RELAY_PEEK_MORE);
	}
	cage_free();
}

/* Once HTTP is expected, only a valid HTTP/1.x request head goes. */
static void
test_http_expected(void **state)
{
	static const struct {
		const char	*what;
		const char	*b;
		bool		 port80_only;	/* elsewhere: a line protocol */
	} bad[] = {
		{ "HTTP/0.9", "GET /\r\n", false },
		{ "HTTP/0.9, lower case", "get /index.html\r\n", false },
		{ "HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false },
		{ "CONNECT inside a tunnel", "CONNECT evil.example:443 "
		    "HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", false },
		{ "CONNECT to the same host", "CONNECT github.com:80 "
		    "HTTP/1.1\r\nHost: github.com:80\r\n\r\n", false },
		{ "h2c upgrade", "GET / HTTP/1.1\r\nHost: github.com\r\n"
		    "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
		    "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n", false },
		{ "TLS upgrade", "GET / HTTP/1.1\r\nHost: github.com\r\n"
		    "Upgrade: TLS/1.2\r\nConnection: Upgrade\r\n\r\n", false },
		{ "bare LF", "GET / HTTP/1.1\nHost: evil.example\n\n", false },
		{ "tabs", "GET\t/\tHTTP/1.1\r\nHost: evil.example\r\n\r\n",
		    false },
		{ "version in lower case", "GET / http/1.1\r\nHost: "
		    "evil.example\r\n\r\n", false },
		{ "VT between words", "GET\v/\vHTTP/1.1\r\nHost: "
		    "evil.example\r\n\r\n", false },
		{ "SSH banner", "SSH-2.0-OpenSSH_9.2\r\n", true },
		{ "SMTP", "EHLO x\r\n", true },
		{ "binary", "\x01\x02\x03\x04", true },
		{ "a response", "HTTP/1.1 200 OK\r\n\r\n", true },
	};
	static const uint16_t ports[] = { 80, 8080, 6667 };
	size_t i, p;

	(void)state;
	cage_new(pats, NULL);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		for (p = 0; p < sizeof(ports) / sizeof(*ports); p++)
			expect(bad[i].what, ports[p], bad[i].b,
			    strlen(bad[i].b), bad[i].port80_only &&
			    ports[p] != 80, GK_REASON_MALFORMED, NULL, NULL);
	}
	/* any method with a version starts like a request anywhere */
	expect("FOO on an IRC port", 6667, S("FOO / HTTP/1.1\r\nHost: "
	    "evil.example\r\n\r\n"), false, GK_REASON_HOST_MISMATCH, NULL,
	    "evil.example");
	expect("get, lower case", 6667, S("get / HTTP/1.1\r\nHost: "
	    "evil.example\r\n\r\n"), false, GK_REASON_HOST_MISMATCH, NULL,
	    "evil.example");
	expect("websocket upgrade", 80, S("GET /ws HTTP/1.1\r\nHost: "
	    "github.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	    "\r\n"), true, 0, NULL, NULL);
	cage_free();
}

/* Blank bytes before a TLS record: malformed, also on port 443. */
static void
test_blank_tls(void **state)
{
	static struct capture cap;
	static uint8_t b[CAPTURE_MAX + 2];
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	cage_new(pats, NULL);
	load("curl_h2", &cap);
	memcpy(b, "\r\n", 2);
	memcpy(b + 2, cap.b, cap.n);
	expect("CRLF, hello", 443, b, cap.n + 2, false, GK_REASON_MALFORMED,
	    "TLS", NULL);
	expect("CRLF, hello", 8443, b, cap.n + 2, false, GK_REASON_MALFORMED,
	    "TLS", NULL);
	expect("CRLF, alert", 443, "\r\n\x15\x03\x03\x00\x02\x01\x00", 9,
	    false, GK_REASON_MALFORMED, "TLS", NULL);
	target(&t, "github.com", 443);
	assert_int_equal(peek_n(&t, b, 3, false, &o), RELAY_PEEK_MORE);
	cage_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blank_lines, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_blank_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_proxy_protocol, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_expected, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_blank_tls, setup,
		    teardown),
	};

	log_init("test_proxy_first", getenv("GK_DEBUG") != NULL ?
	    LOG_LVL_DEBUG : LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
