/*
 * Unit tests for the transparent proxy's decisions (socks/proxy_policy.c
 * as transparent_session.c uses it): the original destination is an
 * address target; it passes by CIDR or by a pin to a name allowed on the
 * port, that name labels it, and the client's first bytes (a real
 * ClientHello capture from tests/data/tls, a plain HTTP head) must name an
 * allowed name pinned to that same address. No network, no event loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"
#include "gatekeeper/state/gk_stats.h"
#include "socks/proxy.h"
#include "tests/testdata.h"

#define CAGE_SRC	"10.143.0.2"
#define GH		"192.0.2.10"	/* github.com and web.example.test */
#define OTHER		"203.0.113.66"	/* never resolved by the cage */

struct fx {
	struct gk_cage_table	*t;
	struct gk_cage		*c;
	struct gk_hostaddrs	 host;
	struct proxy_ctx	 ctx;
	struct proxy_who	 who;
};

static struct fx fx;

static struct gk_addr
addr(const char *s)
{
	struct gk_addr a;

	if (gk_addr_parse(s, &a) != 0)
		fail_msg("bad address %s", s);
	return a;
}

/* A cage with these patterns; web.example.test and github.com are pinned
 * to GH (as the cage's own DNS answers would have done). */
static int
setup(void **state)
{
	const char *pats[] = { "*.example.test:443", "github.com:22",
	    "github.com:443", "198.51.100.0/24" };
	struct gk_allowlist *al;
	struct gk_addr src = addr(CAGE_SRC), a = addr(GH);
	enum gk_cage_err e;
	char err[256];

	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.t = gk_cage_table_new();
	gk_hostaddrs_init(&fx.host);
	fx.ctx.cages = fx.t;
	fx.ctx.host = &fx.host;
	if ((al = gk_allowlist_new(pats, 4, err, sizeof(err))) == NULL)
		fail_msg("allowlist: %s", err);
	fx.c = gk_test_cage(fx.t, &src, "tp", 1000, al, &e);
	assert_non_null(fx.c);
	assert_int_equal(gk_cage_pin(fx.c, "web.example.test", &a,
	    gk_now() + 60), 0);
	assert_int_equal(gk_cage_pin(fx.c, "github.com", &a, gk_now() + 60),
	    0);
	fx.who.source = src;
	snprintf(fx.who.id, sizeof(fx.who.id), "%s", gk_cage_id(fx.c));
	fx.who.kind = GK_KIND_TRANSPARENT;
	fx.who.proto = GK_PROTO_TRANSPARENT;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	gk_cage_table_free(fx.t);
	return 0;
}

/* The target transparent_session.c builds from SO_ORIGINAL_DST. */
static void
orig_dst(struct gk_host *t, const char *a, uint16_t port)
{
	memset(t, 0, sizeof(*t));
	t->is_addr = true;
	t->addr = addr(a);
	t->port = port;
	proxy_target_label(fx.c, t);
}

static void
test_label(void **state)
{
	struct gk_host t;

	(void)state;
	/* an allowed name on the port comes first */
	orig_dst(&t, GH, 22);
	assert_string_equal(t.name, "github.com");
	orig_dst(&t, GH, 443);
	assert_true(strcmp(t.name, "github.com") == 0 ||
	    strcmp(t.name, "web.example.test") == 0);
	/* pinned, no name allowed on this port: still named */
	orig_dst(&t, GH, 8080);
	assert_true(strcmp(t.name, "github.com") == 0 ||
	    strcmp(t.name, "web.example.test") == 0);
	/* never resolved: the address itself */
	orig_dst(&t, OTHER, 443);
	assert_string_equal(t.name, OTHER);
	/* no cage: the address */
	memset(&t, 0, sizeof(t));
	t.addr = addr(GH);
	t.is_addr = true;
	proxy_target_label(NULL, &t);
	assert_string_equal(t.name, GH);
}

static void
test_connect_policy(void **state)
{
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	orig_dst(&t, GH, 22);		/* ssh to github.com:22 */
	assert_true(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	orig_dst(&t, GH, 443);
	assert_true(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	orig_dst(&t, GH, 25);		/* pinned, but no name on port 25 */
	assert_false(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	assert_int_equal(o.reason, GK_REASON_NOT_ALLOWLISTED);
	assert_non_null(strstr(o.why, "port 25"));
	orig_dst(&t, OTHER, 443);	/* a raw IP the cage never resolved */
	assert_false(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	assert_int_equal(o.reason, GK_REASON_IP_NOT_PINNED);
	orig_dst(&t, "198.51.100.7", 5432);	/* by CIDR */
	assert_true(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	orig_dst(&t, "127.0.0.1", 443);	/* special, however it came */
	assert_false(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	assert_int_equal(o.reason, GK_REASON_SPECIAL_RANGE);
}

static uint64_t pass;

/* The first bytes of a tunnel. */
static enum relay_peek
peek(const struct gk_host *t, const void *buf, size_t len,
    struct proxy_outcome *o)
{
	struct proxy_peek_state ps;

	proxy_peek_init(&ps);
	return proxy_peek(&fx.ctx, &fx.who, t, &ps, buf, len, false, &pass,
	    o);
}

static void
test_peek(void **state)
{
	static uint8_t hello[8192];
	static const char get_ok[] = "GET / HTTP/1.1\r\nHost: github.com"
	    "\r\n\r\n";
	static const char get_evil[] = "GET / HTTP/1.1\r\nHost: evil.example"
	    "\r\n\r\n";
	struct proxy_outcome o;
	struct gk_host t;
	size_t n;

	(void)state;
	/* curl's ClientHello names web.example.test, pinned to GH */
	n = test_data_load("tls", "curl_h2.bin", hello, sizeof(hello));
	orig_dst(&t, GH, 443);
	assert_int_equal(peek(&t, hello, n, &o), RELAY_PEEK_WATCH);
	/* the same ClientHello to another address: the SNI is not pinned
	 * there (the name fronting for another host) */
	orig_dst(&t, "192.0.2.11", 443);
	assert_int_equal(peek(&t, hello, n, &o), RELAY_PEEK_DENY);
	assert_int_equal(o.reason, GK_REASON_SNI_MISMATCH);
	assert_string_equal(o.seen, "web.example.test");
	/* an SNI of a name not allowed, to a pinned address */
	n = test_data_load("tls", "openssl_tls12.bin", hello, sizeof(hello));
	orig_dst(&t, GH, 443);
	assert_int_equal(peek(&t, hello, n, &o), RELAY_PEEK_DENY);
	assert_int_equal(o.reason, GK_REASON_SNI_MISMATCH);
	/* plain HTTP: the Host must be an allowed name pinned there; the
	 * request passes, and the next one is looked at too */
	orig_dst(&t, GH, 443);
	assert_int_equal(peek(&t, get_ok, sizeof(get_ok) - 1, &o),
	    RELAY_PEEK_PASS);
	assert_int_equal(pass, sizeof(get_ok) - 1);
	assert_int_equal(peek(&t, get_evil, sizeof(get_evil) - 1, &o),
	    RELAY_PEEK_DENY);
	assert_int_equal(o.reason, GK_REASON_HOST_MISMATCH);
	/* server-first (ssh): nothing from the client yet, nothing decided */
	orig_dst(&t, GH, 22);
	assert_int_equal(peek(&t, "", 0, &o), RELAY_PEEK_MORE);
	assert_int_equal(peek(&t, "SSH-2.0-OpenSSH_9.2\r\n", 21, &o),
	    RELAY_PEEK_ALLOW);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_label, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_policy, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_peek, setup, teardown),
	};

	log_init("test_proxy_transparent", LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
