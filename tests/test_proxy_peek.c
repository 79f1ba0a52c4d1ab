/*
 * Unit tests for proxy_peek() (socks/proxy_policy.c): the peek at a
 * tunnel's first client bytes over real ClientHello captures
 * (tests/data/tls), hand-built TLS records and plain HTTP heads and line
 * protocols. The fixture is proxy_testutil.c.
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
#include "socks/proxy.h"
#include "tests/proxy_testutil.h"

/* ---- proxy_peek: TLS ---- */

static const struct {
	const char		*file;
	const char		*pats[NPAT];
	struct pin_spec		 pins[NPIN];
	const char		*host;
	uint16_t		 port;
	enum relay_peek		 want;
	enum gk_deny_reason	 reason;
	const char		*why_has;
} tls_cases[] = {
#define EX	{ "*.example.test", "localhost", "140.82.112.0/20" }
#define NOPIN	{ { NULL, NULL, 0 } }
#define PIN(n, ttl)	{ { n, "185.199.108.153", ttl } }
#define OK	RELAY_PEEK_WATCH, 0, NULL	/* the server's answer next */
#define NO	RELAY_PEEK_DENY
	/* name targets: the SNI must be the requested name */
	{ "curl_h2", EX, NOPIN, "web.example.test", 443, OK },
	{ "curl_tls12", EX, NOPIN, "tls12.example.test", 443, OK },
	{ "openssl_sni", EX, NOPIN, "api.example.test", 443, OK },
	{ "openssl_mixed", EX, NOPIN, "mixed-1.example.test", 443, OK },
	{ "openssl_tls12", EX, NOPIN, "old.example.test", 443, OK },
	{ "openssl_frag", EX, NOPIN, "frag.example.test", 443, OK },
	{ "git_gnutls", EX, NOPIN, "git.example.test", 443, OK },
	{ "wget_gnutls", EX, NOPIN, "localhost", 443, OK },
	{ "python_ssl", EX, NOPIN, "py.example.test", 443, OK },
	{ "grease_synth", EX, NOPIN, "web.example.test", 443, OK },
	{ "curl_h2", EX, NOPIN, "api.example.test", 443, NO,
	    GK_REASON_SNI_MISMATCH, "web.example.test" },
	{ "openssl_sni", EX, NOPIN, "web.example.test", 443, NO,
	    GK_REASON_SNI_MISMATCH, "api.example.test" },
	{ "wget_gnutls", EX, NOPIN, "localhost.example.test", 443, NO,
	    GK_REASON_SNI_MISMATCH, NULL },
	{ "openssl_mixed", EX, NOPIN, "mixed-2.example.test", 443, NO,
	    GK_REASON_SNI_MISMATCH, NULL },
	/* ECH: the outer SNI decides */
	{ "ech_synth", EX, NOPIN, "web.example.test", 443, OK },
	{ "ech_synth", EX, NOPIN, "api.example.test", 443, NO,
	    GK_REASON_SNI_MISMATCH, "web.example.test" },
	/* no SNI: only a CIDR-allowed address target passes */
	{ "openssl_nosni", EX, NOPIN, "api.example.test", 443, NO,
	    GK_REASON_NO_SNI, "api.example.test" },
	{ "curl_ip", EX, NOPIN, "web.example.test", 443, NO,
	    GK_REASON_NO_SNI, NULL },
	{ "openssl_nosni", EX, NOPIN, "140.82.112.3", 443, OK },
	{ "curl_ip", EX, NOPIN, "140.82.112.3", 443, OK },
	{ "openssl_nosni", EX, PIN("web.example.test", 60),
	    "185.199.108.153", 443, NO, GK_REASON_NO_SNI, NULL },
	/* address targets: the SNI must be an allowed name pinned there */
	{ "curl_h2", EX, PIN("web.example.test", 60), "185.199.108.153", 443,
	    OK },
	{ "ech_synth", EX, PIN("web.example.test", 60), "185.199.108.153",
	    443, OK },
	{ "curl_h2", EX, PIN("api.example.test", 60), "185.199.108.153", 443,
	    NO, GK_REASON_SNI_MISMATCH, "185.199.108.153" },
	{ "curl_h2", EX, NOPIN, "185.199.108.153", 443, NO,
	    GK_REASON_SNI_MISMATCH, NULL },
	{ "curl_h2", EX, PIN("web.example.test", -5), "185.199.108.153",
	    443, NO, GK_REASON_SNI_MISMATCH, NULL },
	{ "curl_h2", { "*.example.test:8443" }, PIN("web.example.test", 60),
	    "185.199.108.153", 443, NO, GK_REASON_SNI_MISMATCH, NULL },
	{ "curl_h2", { "*.example.test:8443" }, PIN("web.example.test", 60),
	    "185.199.108.153", 8443, OK },
	/* SNI of a name not allowed, even if pinned there */
	{ "curl_h2", { "api.example.test" },
	    { { "api.example.test", "185.199.108.153", 60 } },
	    "185.199.108.153", 443, NO, GK_REASON_SNI_MISMATCH, NULL },
	/* a CIDR-allowed address: any SNI */
	{ "curl_h2", EX, NOPIN, "140.82.112.3", 443, OK },
	{ "openssl_sni", EX, NOPIN, "140.82.112.3", 443, OK },
#undef EX
#undef NOPIN
#undef PIN
#undef OK
#undef NO
};

static void
test_peek_tls(void **state)
{
	static struct capture cap;
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	char what[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tls_cases) / sizeof(*tls_cases); i++) {
		snprintf(what, sizeof(what), "case %zu %s to %s:%u", i,
		    tls_cases[i].file, tls_cases[i].host, tls_cases[i].port);
		load(tls_cases[i].file, &cap);
		cage_new(tls_cases[i].pats, tls_cases[i].pins);
		target(&t, tls_cases[i].host, tls_cases[i].port);
		rp = peek_n(&t, cap.b, cap.n, false, &o);
		if (rp != tls_cases[i].want)
			fail_msg("%s: %s, want %s (why: %s)", what,
			    peek_name(rp), peek_name(tls_cases[i].want),
			    rp == RELAY_PEEK_DENY ? o.why : "");
		if (rp == RELAY_PEEK_DENY)
			check_deny(what, &o, tls_cases[i].reason,
			    tls_cases[i].why_has);
		/* eof after a complete hello changes nothing */
		assert_int_equal(peek_n(&t, cap.b, cap.n, true, &o), rp);
		cage_free();
	}
}

/* Every strict prefix of every capture: MORE, and DENY at eof. */
static void
test_peek_tls_prefixes(void **state)
{
	static const struct {
		const char	*file;
		const char	*host;
	} caps[] = {
		{ "curl_h2", "web.example.test" },
		{ "curl_tls12", "tls12.example.test" },
		{ "curl_ip", "140.82.112.3" },
		{ "openssl_sni", "api.example.test" },
		{ "openssl_nosni", "140.82.112.3" },
		{ "openssl_mixed", "mixed-1.example.test" },
		{ "openssl_tls12", "old.example.test" },
		{ "openssl_frag", "frag.example.test" },
		{ "git_gnutls", "git.example.test" },
		{ "wget_gnutls", "localhost" },
		{ "python_ssl", "py.example.test" },
		{ "grease_synth", "web.example.test" },
		{ "ech_synth", "web.example.test" },
	};
	static const char *const pats[NPAT] = { "*.example.test",
	    "localhost", "140.82.112.0/20" };
	static struct capture cap;
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	size_t i, n;

	(void)state;
	cage_new(pats, NULL);
	for (i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
		load(caps[i].file, &cap);
		target(&t, caps[i].host, 443);
		assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
		    RELAY_PEEK_WATCH);
		for (n = 0; n < cap.n; n++) {
			rp = peek_n(&t, cap.b, n, false, &o);
			if (rp != RELAY_PEEK_MORE)
				fail_msg("%s: prefix %zu/%zu: %s, want MORE",
				    caps[i].file, n, cap.n, peek_name(rp));
			rp = peek_n(&t, cap.b, n, true, &o);
			/* nothing sent at all (a client that only listened)
			 * is no denial; ending inside a hello is */
			if (rp != (n == 0 ? RELAY_PEEK_ALLOW : RELAY_PEEK_DENY))
				fail_msg("%s: prefix %zu/%zu at eof: %s",
				    caps[i].file, n, cap.n, peek_name(rp));
			if (n > 0)
				check_deny(caps[i].file, &o,
				    GK_REASON_MALFORMED, "ended inside");
		}
	}
	cage_free();
}

/* Malformed TLS: denied at once, not waited on. */
static void
test_peek_tls_malformed(void **state)
{
	static const char *const pats[NPAT] = { "*.example.test",
	    "140.82.112.0/20" };
	static const uint8_t empty_rec[] = { 0x16, 0x03, 0x01, 0x00, 0x00 };
	static const uint8_t not_hello[] = { 0x16, 0x03, 0x01, 0x00, 0x04,
	    0x02, 0x00, 0x00, 0x00 };
	static struct capture cap;
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "web.example.test", 443);
	assert_int_equal(peek_n(&t, empty_rec, sizeof(empty_rec), false, &o),
	    RELAY_PEEK_DENY);
	check_deny("empty record", &o, GK_REASON_MALFORMED, "malformed");
	assert_int_equal(peek_n(&t, not_hello, sizeof(not_hello), false, &o),
	    RELAY_PEEK_DENY);
	check_deny("server hello", &o, GK_REASON_MALFORMED, NULL);
	/* a real hello with one stray byte after its extensions (record
	 * and handshake lengths grown to hold it) */
	load("curl_h2", &cap);
	assert_true(cap.b[4] < 0xff && cap.b[8] < 0xff);
	cap.b[4]++;
	cap.b[8]++;
	cap.b[cap.n++] = 0;
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("stray byte", &o, GK_REASON_MALFORMED, NULL);
	cage_free();
}

/*
 * An SSLv2-format ClientHello (RFC 5246 E.2; built by hand, no Debian 12
 * client sends one) carries no server name: refused like a hello without
 * SNI, decided after 3 bytes. Other TLS records first (a warning alert
 * before a hello is skipped by some servers), or a handshake record of
 * another version: malformed, whatever follows.
 */
static void
test_peek_tls_not_hello(void **state)
{
	static const char *const pats[NPAT] = { "*.example.test",
	    "140.82.112.0/20" };
	static const uint8_t ssl2[] = { 0x80, 0x2e, 0x01, 0x03, 0x01, 0x00,
	    0x15, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x39, 0x00, 0x00, 0x38,
	    0x00, 0x00, 0x35, 0x00, 0x00, 0x33, 0x00, 0x00, 0x32, 0x00, 0x00,
	    0x2f, 0x00, 0x00, 0xff, 0x5a, 0x17, 0x33, 0x0e, 0xc1, 0x42, 0x9d,
	    0x01, 0x6e, 0xb8, 0x04, 0x2c, 0x91, 0x7f, 0x20, 0xd3 };
	static const struct {
		const char	*what;
		const char	*bytes;
		size_t		 n;
	} recs[] = {
		{ "warning alert", "\x15\x03\x03\x00\x02\x01\x00", 7 },
		{ "change_cipher_spec", "\x14\x03\x01\x00\x01\x01", 6 },
		{ "application data", "\x17\x03\x03\x00\x02xy", 7 },
		{ "heartbeat", "\x18\x03\x03", 3 },
		{ "alert, 2 bytes", "\x15\x03", 2 },
		{ "handshake, major 2", "\x16\x02\x00\x00\x10", 5 },
	};
	static struct capture cap;
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	size_t i, n;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "web.example.test", 443);
	for (n = 0; n <= sizeof(ssl2); n++) {
		rp = peek_n(&t, ssl2, n, false, &o);
		if (rp != (n < 3 ? RELAY_PEEK_MORE : RELAY_PEEK_DENY))
			fail_msg("sslv2 prefix %zu: %s", n, peek_name(rp));
		if (n >= 3)
			check_deny("sslv2", &o, GK_REASON_NO_SNI, "SSLv2");
	}
	/* ending after 1 or 2 of its bytes is no hello either */
	assert_int_equal(peek_n(&t, ssl2, 2, true, &o), RELAY_PEEK_DENY);
	check_deny("sslv2 cut", &o, GK_REASON_MALFORMED, NULL);
	/* like any hello without a server name, a CIDR allows it */
	target(&t, "140.82.112.3", 443);
	assert_int_equal(peek_n(&t, ssl2, sizeof(ssl2), false, &o),
	    RELAY_PEEK_ALLOW);
	target(&t, "web.example.test", 443);
	load("curl_h2", &cap);
	for (i = 0; i < sizeof(recs) / sizeof(*recs); i++) {
		assert_int_equal(peek_n(&t, (const uint8_t *)recs[i].bytes,
		    recs[i].n, false, &o), RELAY_PEEK_DENY);
		check_deny(recs[i].what, &o, GK_REASON_MALFORMED, "TLS record");
		assert_int_equal(peek_n(&t, (const uint8_t *)recs[i].bytes, 1,
		    false, &o), RELAY_PEEK_MORE);
	}
	/* an alert in front of a hello that would pass on its own */
	memmove(cap.b + 7, cap.b, cap.n);
	memcpy(cap.b, recs[0].bytes, 7);
	cap.n += 7;
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("alert, then hello", &o, GK_REASON_MALFORMED, NULL);
	cage_free();
}

/* ---- proxy_peek: plain HTTP and other bytes ---- */

static const struct {
	const char		*pats[NPAT];
	struct pin_spec		 pins[NPIN];
	const char		*host;
	uint16_t		 port;
	const char		*bytes;
	bool			 eof;
	enum relay_peek		 want;
	enum gk_deny_reason	 reason;
	const char		*why_has;
} http_cases[] = {
#define GHP	{ "github.com", "*.example.test", "140.82.112.0/20" }
#define NOPIN	{ { NULL, NULL, 0 } }
#define PIN(n)	{ { n, "185.199.108.153", 60 } }
#define OK	RELAY_PEEK_ALLOW, 0, NULL
#define MORE	RELAY_PEEK_MORE, 0, NULL
#define NO	RELAY_PEEK_DENY
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: github.com\r\n\r\n", false, OK },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: github.com:80\r\n\r\n", false, OK },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: GitHub.COM.\r\n\r\n", false, OK },
	{ GHP, NOPIN, "github.com", 80,
	    "POST /x HTTP/1.1\r\nUser-Agent: t\r\nHost: github.com\r\n"
	    "Content-Length: 3\r\n\r\nabc", false, OK },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, "evil.example" },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: api.github.com\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, "api.github.com" },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: 140.82.112.3\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, NULL },
	/* absolute-form target wins; disagreeing with Host is malformed */
	{ GHP, NOPIN, "github.com", 80,
	    "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n"
	    "\r\n", false, NO, GK_REASON_HOST_MISMATCH, NULL },
	{ GHP, NOPIN, "github.com", 80,
	    "GET http://evil.example/ HTTP/1.1\r\nHost: github.com\r\n\r\n",
	    false, NO, GK_REASON_MALFORMED, NULL },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: github.com\r\nHost: evil.example\r\n"
	    "\r\n", false, NO, GK_REASON_MALFORMED, NULL },
	/* prefixes wait; at eof they are denied */
	{ GHP, NOPIN, "github.com", 80, "G", false, MORE },
	{ GHP, NOPIN, "github.com", 80, "GET / HTTP/1.1\r\nHost: github.com",
	    false, MORE },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: github.com\r\n", false, MORE },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.1\r\nHost: github.com\r\n", true, NO,
	    GK_REASON_MALFORMED, "malformed" },
	/* HTTP/1.0 without Host: nothing to compare */
	{ GHP, NOPIN, "github.com", 80, "GET / HTTP/1.0\r\n\r\n", false, OK },
	/* HTTP/1.1 must carry Host (RFC 9112 3.2) */
	{ GHP, NOPIN, "github.com", 80, "GET / HTTP/1.1\r\n\r\n", false, NO,
	    GK_REASON_MALFORMED, "malformed" },
	{ GHP, NOPIN, "github.com", 80,
	    "OPTIONS * HTTP/1.1\r\nHost: github.com\r\n\r\n", false, OK },
	{ GHP, NOPIN, "github.com", 80,
	    "GET / HTTP/1.0\r\nHost: evil.example\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, NULL },
	/* address targets: a Host name must be allowed and pinned there */
	{ GHP, NOPIN, "140.82.112.3", 80,
	    "GET / HTTP/1.1\r\nHost: anything.example\r\n\r\n", false, OK },
	{ GHP, PIN("web.example.test"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: web.example.test\r\n\r\n", false, OK },
	{ GHP, PIN("web.example.test"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, "api.example.test" },
	{ GHP, PIN("web.example.test"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: 185.199.108.153\r\n\r\n", false, OK },
	{ GHP, PIN("web.example.test"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: 185.199.108.154:80\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, NULL },
	{ GHP, PIN("api.example.test"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: web.example.test\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, NULL },
	{ GHP, PIN("evil.example"), "185.199.108.153", 80,
	    "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", false, NO,
	    GK_REASON_HOST_MISMATCH, NULL },
	{ GHP, NOPIN, "2606:50c0:8000::153", 80,
	    "GET / HTTP/1.1\r\nHost: [2606:50c0:8000::153]:80\r\n\r\n",
	    false, OK },
	{ GHP, NOPIN, "2606:50c0:8000::153", 80,
	    "GET / HTTP/1.1\r\nHost: [2606:50c0:8000::154]\r\n\r\n", false,
	    NO, GK_REASON_HOST_MISMATCH, NULL },
	/* not TLS, not HTTP: nothing to check */
	{ GHP, NOPIN, "github.com", 22, "SSH-2.0-OpenSSH_9.2\r\n", false, OK },
	{ GHP, NOPIN, "github.com", 22, "SSH-2.0-OpenSSH_9.2", false, MORE },
	{ GHP, NOPIN, "github.com", 5432, "\x00\x00\x00\x08\x04\xd2\x16\x2f",
	    false, OK },
#undef GHP
#undef NOPIN
#undef PIN
#undef OK
#undef MORE
#undef NO
};

static size_t
bytes_len(const char *s)
{
	/* the PostgreSQL SSLRequest above starts with NULs */
	return s[0] == '\0' ? 8 : strlen(s);
}

static void
test_peek_http(void **state)
{
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	char what[160];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(http_cases) / sizeof(*http_cases); i++) {
		snprintf(what, sizeof(what), "case %zu to %s:%u", i,
		    http_cases[i].host, http_cases[i].port);
		cage_new(http_cases[i].pats, http_cases[i].pins);
		target(&t, http_cases[i].host, http_cases[i].port);
		n = bytes_len(http_cases[i].bytes);
		rp = peek_n(&t, (const uint8_t *)http_cases[i].bytes, n,
		    http_cases[i].eof, &o);
		/* ALLOW: all of it may go (a request passes, and what
		 * follows it on the connection is looked at in turn) */
		if (http_cases[i].want == RELAY_PEEK_ALLOW ? !peek_allows(rp,
		    n) : rp != http_cases[i].want)
			fail_msg("%s: %s, want %s (why: %s)", what,
			    peek_name(rp), peek_name(http_cases[i].want),
			    rp == RELAY_PEEK_DENY ? o.why : "");
		if (rp == RELAY_PEEK_DENY)
			check_deny(what, &o, http_cases[i].reason,
			    http_cases[i].why_has);
		cage_free();
	}
}

/* Every strict prefix of an allowed head waits; at eof it is denied. */
static void
test_peek_http_prefixes(void **state)
{
	static const char *const pats[NPAT] = { "github.com" };
	static const char head[] = "GET /a?b=c HTTP/1.1\r\nHost: github.com"
	    "\r\nAccept: */*\r\n\r\n";
	static const char ssh[] = "SSH-2.0-OpenSSH_9.2\r\n";
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	size_t n;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "github.com", 80);
	for (n = 0; n < sizeof(head) - 1; n++) {
		rp = peek_n(&t, (const uint8_t *)head, n, false, &o);
		if (rp != RELAY_PEEK_MORE)
			fail_msg("http prefix %zu: %s", n, peek_name(rp));
		rp = peek_n(&t, (const uint8_t *)head, n, true, &o);
		if (rp != (n == 0 ? RELAY_PEEK_ALLOW : RELAY_PEEK_DENY))
			fail_msg("http prefix %zu at eof: %s", n,
			    peek_name(rp));
		if (n > 0)
			check_deny("http prefix at eof", &o,
			    GK_REASON_MALFORMED, NULL);
	}
	assert_true(peek_allows(peek_n(&t, (const uint8_t *)head,
	    sizeof(head) - 1, false, &o), sizeof(head) - 1));
	/* an SSH banner is never denied while it arrives (on its port) */
	target(&t, "github.com", 22);
	for (n = 1; n <= sizeof(ssh) - 1; n++) {
		rp = peek_n(&t, (const uint8_t *)ssh, n, false, &o);
		if (rp == RELAY_PEEK_DENY)
			fail_msg("ssh prefix %zu: DENY (%s)", n, o.why);
	}
	assert_int_equal(rp, RELAY_PEEK_ALLOW);
	/* on port 80 only HTTP (or TLS) goes, once that is clear */
	target(&t, "github.com", 80);
	assert_int_equal(peek_n(&t, (const uint8_t *)ssh, 20, false, &o),
	    RELAY_PEEK_MORE);
	assert_int_equal(peek_n(&t, (const uint8_t *)ssh, 21, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("ssh to port 80", &o, GK_REASON_MALFORMED, "port 80");
	cage_free();
}

/*
 * Regression (peek_http once denied these as malformed HTTP): a line-based
 * protocol whose first line is "WORD SP ..." without an HTTP version (IRC,
 * Redis inline commands, memcached text, SMTP, FTP, IMAP, POP3, NNTP,
 * RTSP, STOMP) is not HTTP and goes by host and port, like an SSH banner.
 * Such bytes carry no Host to front with; a method name only counts with
 * a request target ("GET /", the HTTP/0.9 form).
 */
static void
test_peek_line_protocols(void **state)
{
	static const struct {
		const char	*proto;
		uint16_t	 port;
		const char	*bytes;
	} cases[] = {
		{ "irc", 6667, "NICK gk\r\nUSER gk 0 * :gk\r\n" },
		{ "redis", 6379, "AUTH secret\r\n" },
		{ "memcached", 11211, "get k\r\n" },
		{ "smtp", 25, "EHLO client.example\r\n" },
		{ "smtp, blank line first", 587, "\r\nEHLO x\r\n" },
		{ "ftp", 21, "USER anonymous\r\n" },
		{ "imap", 143, "a1 LOGIN user pass\r\n" },
		{ "pop3", 110, "USER u\r\n" },
		{ "nntp", 119, "HEAD 1234\r\n" },
		{ "rtsp", 554, "OPTIONS rtsp://cam.example/ RTSP/1.0\r\n"
		    "CSeq: 1\r\n\r\n" },
		{ "stomp", 61613, "CONNECT\naccept-version:1.2\n\n" },
		{ "redis inline", 6379, "GET key\r\n" },
	};
	static const char *const pats[NPAT] = { "irc.example.org" };
	struct proxy_outcome o;
	struct gk_host t;
	enum relay_peek rp;
	size_t i;
	int bad = 0;

	(void)state;
	cage_new(pats, NULL);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		target(&t, "irc.example.org", cases[i].port);
		rp = peek_n(&t, (const uint8_t *)cases[i].bytes,
		    strlen(cases[i].bytes), false, &o);
		if (rp != RELAY_PEEK_ALLOW) {
			print_error("%s to an allowed host: %s (%s)\n",
			    cases[i].proto, peek_name(rp), o.why);
			bad++;
		}
	}
	cage_free();
	assert_int_equal(bad, 0);
}

/* The cage went away (or its source now names another cage). */
static void
test_peek_cage_gone(void **state)
{
	static const char *const pats[NPAT] = { "*.example.test" };
	static const char get[] = "GET / HTTP/1.1\r\nHost: web.example.test"
	    "\r\n\r\n";
	static struct capture cap;
	struct proxy_outcome o;
	struct gk_host t;
	struct proxy_who old;

	(void)state;
	load("curl_h2", &cap);
	cage_new(pats, NULL);
	target(&t, "web.example.test", 443);
	assert_ptr_equal(proxy_cage(&fx.ctx, &fx.who), fx.c);
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_WATCH);
	old = fx.who;
	cage_free();
	assert_null(proxy_cage(&fx.ctx, &old));
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("gone, tls", &o, GK_REASON_UNKNOWN_SOURCE, NULL);
	assert_int_equal(peek_n(&t, (const uint8_t *)get, sizeof(get) - 1,
	    false, &o), RELAY_PEEK_DENY);
	check_deny("gone, http", &o, GK_REASON_UNKNOWN_SOURCE, NULL);
	assert_int_equal(peek_n(&t, cap.b, 3, false, &o), RELAY_PEEK_DENY);
	/* a new cage on the same source address is not the old one */
	cage_new(pats, NULL);
	assert_string_not_equal(gk_cage_id(fx.c), old.id);
	fx.who = old;
	assert_null(proxy_cage(&fx.ctx, &fx.who));
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("replaced", &o, GK_REASON_UNKNOWN_SOURCE, NULL);
	cage_free();
}

/* A hello passed: the server's answer decides whether a second one is
 * looked at; after a HelloRetryRequest it must name the same server. */
static void
test_peek_tls_retry(void **state)
{
	static const char *const pats[NPAT] = { "*.example.test",
	    "140.82.112.0/20" };
	static struct capture ch, other, nosni, hrr, sh13, sh12, two;
	static const uint8_t ccs[6] = { 20, 3, 3, 0, 1, 1 };
	struct proxy_peek_state ps;
	struct proxy_outcome o;
	struct gk_host t;
	size_t n;

	(void)state;
	load("curl_h2", &ch);		/* web.example.test */
	load("openssl_sni", &other);	/* api.example.test */
	load("openssl_nosni", &nosni);
	load("server_hrr", &hrr);
	load("server_tls13", &sh13);
	load("server_tls12", &sh12);
	cage_new(pats, NULL);
	target(&t, "web.example.test", 443);

	/* a retry request; the second hello for the same name passes,
	 * after a change_cipher_spec record or not */
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_int_equal(peek_pass, ch.n);
	/* told by the record header, handshake header, version, random */
	for (n = 0; n < SNI_REC_HDR + 38; n++)
		assert_false(proxy_peek_watch(&ps, hrr.b, n, false));
	assert_true(proxy_peek_watch(&ps, hrr.b, n, false));
	assert_int_equal(ps.tls, PROXY_TLS_RETRY);
	assert_int_equal(peek_st(&t, &ps, NULL, 0, false, &o),
	    RELAY_PEEK_MORE);
	assert_int_equal(peek_st(&t, &ps, ccs, 3, false, &o),
	    RELAY_PEEK_MORE);
	memcpy(two.b, ccs, sizeof(ccs));
	memcpy(two.b + sizeof(ccs), ch.b, ch.n);
	two.n = sizeof(ccs) + ch.n;
	for (n = 0; n < two.n; n++)
		assert_int_equal(peek_st(&t, &ps, two.b, n, false, &o),
		    RELAY_PEEK_MORE);
	assert_int_equal(peek_st(&t, &ps, two.b, two.n, false, &o),
	    RELAY_PEEK_ALLOW);
	assert_int_equal(ps.tls, PROXY_TLS_DONE);
	assert_int_equal(peek_st(&t, &ps, other.b, other.n, false, &o),
	    RELAY_PEEK_ALLOW);	/* encrypted by now: not looked at */

	/* another name, or none, after the retry request: cut */
	memcpy(two.b + sizeof(ccs), other.b, other.n);
	two.n = sizeof(ccs) + other.n;
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, two.b, two.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("retry, other name", &o, GK_REASON_SNI_MISMATCH,
	    "api.example.test");
	assert_string_equal(o.seen, "api.example.test");
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, other.b, other.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("retry, other name, no ccs", &o, GK_REASON_SNI_MISMATCH,
	    "HelloRetryRequest");
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, nosni.b, nosni.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("retry, no name", &o, GK_REASON_SNI_MISMATCH, "(none)");
	/* unreadable, or the client ends inside it */
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, ccs, sizeof(ccs), true, &o),
	    RELAY_PEEK_DENY);
	check_deny("retry, ended", &o, GK_REASON_MALFORMED,
	    "HelloRetryRequest");
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, (const uint8_t *)"\x15\x03\x03"
	    "\x00\x02\x01\x00", 7, false, &o), RELAY_PEEK_DENY);
	check_deny("retry, alert", &o, GK_REASON_MALFORMED, NULL);

	/* a first hello without a name (a CIDR): the second has none */
	target(&t, "140.82.112.3", 443);
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, nosni.b, nosni.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, nosni.b, nosni.n, false, &o),
	    RELAY_PEEK_ALLOW);
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, nosni.b, nosni.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, hrr.b, hrr.n, false));
	assert_int_equal(peek_st(&t, &ps, other.b, other.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("retry, a name after none", &o, GK_REASON_SNI_MISMATCH,
	    "(none)");
	target(&t, "web.example.test", 443);

	/* any other answer ends the looking: the next bytes pass */
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, sh13.b, sh13.n, false));
	assert_int_equal(ps.tls, PROXY_TLS_DONE);
	assert_int_equal(peek_st(&t, &ps, NULL, 0, false, &o),
	    RELAY_PEEK_ALLOW);
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, sh12.b, sh12.n, false));
	assert_int_equal(peek_st(&t, &ps, other.b, other.n, false, &o),
	    RELAY_PEEK_ALLOW);
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, (const uint8_t *)"\x15\x03\x03",
	    3, false));	/* an alert */
	assert_int_equal(peek_st(&t, &ps, other.b, other.n, false, &o),
	    RELAY_PEEK_ALLOW);
	/* the server ended before it could ask */
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_false(proxy_peek_watch(&ps, hrr.b, 20, false));
	assert_true(proxy_peek_watch(&ps, hrr.b, 20, true));
	assert_int_equal(ps.tls, PROXY_TLS_DONE);
	/* an answer that cannot be read: cut */
	proxy_peek_init(&ps);
	assert_int_equal(peek_st(&t, &ps, ch.b, ch.n, false, &o),
	    RELAY_PEEK_WATCH);
	assert_true(proxy_peek_watch(&ps, (const uint8_t *)"\x16\x03\x03"
	    "\x00\x00", 5, false));
	assert_int_equal(peek_st(&t, &ps, NULL, 0, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("server unreadable", &o, GK_REASON_MALFORMED, "server");
	cage_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_peek_tls, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_tls_retry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_tls_prefixes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_tls_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_tls_not_hello, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_http, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_http_prefixes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_line_protocols, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek_cage_gone, setup,
		    teardown),
	};

	log_init("test_proxy_peek", getenv("GK_DEBUG") != NULL ?
	    LOG_LVL_DEBUG : LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
