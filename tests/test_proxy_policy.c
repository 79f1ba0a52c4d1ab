/*
 * Unit tests for socks/proxy_policy.c: the connect-time policy
 * (proxy_allowed) and the deny counters (proxy_deny_record). No network,
 * no event loop (the fixture is proxy_testutil.c). The peek at the
 * client's first bytes is tested in test_proxy_peek.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "sni/sni.h"
#include "socks/proxy.h"
#include "tests/proxy_testutil.h"
#include "tests/testdata.h"

/* ---- proxy_allowed: names ---- */

static const struct {
	const char	*pats[NPAT];
	const char	*name;
	uint16_t	 port;
	bool		 ok;
	const char	*why_has;	/* !ok: a substring of o->why */
} name_cases[] = {
#define NAMES	{ "github.com", "*.example.com", \
		    "api.example.org:443", "*.example.net:8443" }
	/* exact, any port */
	{ NAMES, "github.com", 443, true, NULL },
	{ NAMES, "github.com", 22, true, NULL },
	{ NAMES, "github.com.", 443, true, NULL },
	/* an exact pattern does not cover names below it */
	{ NAMES, "api.github.com", 443, false, "github.com" },
	{ NAMES, "www.github.com", 80, false, "github.com" },
	/* wildcard: the apex and any depth below, any port */
	{ NAMES, "example.com", 443, true, NULL },
	{ NAMES, "raw.example.com", 443, true, NULL },
	{ NAMES, "a.b.c.example.com", 9418, true, NULL },
	{ NAMES, "example.com.evil.example", 443, false,
	    "evil.example" },
	{ NAMES, "xexample.com", 443, false, NULL },
	/* exact with a port */
	{ NAMES, "api.example.org", 443, true, NULL },
	{ NAMES, "api.example.org", 80, false, "443" },
	{ NAMES, "www.example.org", 443, false, NULL },
	/* wildcard with a port */
	{ NAMES, "example.net", 8443, true, NULL },
	{ NAMES, "x.y.example.net", 8443, true, NULL },
	{ NAMES, "x.example.net", 443, false, "8443" },
	/* nothing shares a domain */
	{ NAMES, "evil.example", 443, false, "evil.example" },
	{ NAMES, "localhost", 443, false, "localhost" },
	/* a name pattern never matches an IP literal given as a name */
	{ { NULL }, "github.com", 443, false, "empty" },
#undef NAMES
};

static void
test_allowed_names(void **state)
{
	struct proxy_outcome o;
	struct gk_host t;
	char what[128];
	size_t i;
	bool ok;

	(void)state;
	for (i = 0; i < sizeof(name_cases) / sizeof(*name_cases); i++) {
		snprintf(what, sizeof(what), "case %zu %s:%u", i,
		    name_cases[i].name, name_cases[i].port);
		cage_new(name_cases[i].pats, NULL);
		target(&t, name_cases[i].name, name_cases[i].port);
		memset(&o, 0xa5, sizeof(o));
		ok = proxy_allowed(&fx.ctx, fx.c, &t, &o);
		if (ok != name_cases[i].ok)
			fail_msg("%s: allowed %d, want %d (why: %s)", what, ok,
			    name_cases[i].ok, ok ? "" : o.why);
		if (!ok)
			check_deny(what, &o, GK_REASON_NOT_ALLOWLISTED,
			    name_cases[i].why_has);
		cage_free();
	}
}

/* ---- proxy_allowed: IP literals ---- */

static const struct {
	const char		*pats[NPAT];
	struct pin_spec		 pins[NPIN];
	const char		*reallow[NPAT];	/* set_allow after pins */
	const char		*ip;
	uint16_t		 port;
	bool			 ok;
	enum gk_deny_reason	 reason;
	const char		*why_has;
} addr_cases[] = {
#define GH	{ "*.github.com" }
#define GH443	{ "*.github.com:443" }
#define PIN(n, a, ttl)	{ { n, a, ttl } }
#define NOPIN	{ { NULL, NULL, 0 } }
#define KEEP	{ NULL }
#define ALLOW	true, 0, NULL
	/* CIDR, v4 and v6, with and without a port */
	{ { "140.82.112.0/20" }, NOPIN, KEEP, "140.82.112.3", 443, ALLOW },
	{ { "140.82.112.0/20" }, NOPIN, KEEP, "140.82.127.255", 22, ALLOW },
	{ { "140.82.112.0/20:443" }, NOPIN, KEEP, "140.82.112.3", 443,
	    ALLOW },
	{ { "140.82.112.0/20:443" }, NOPIN, KEEP, "140.82.112.3", 22, false,
	    GK_REASON_NOT_ALLOWLISTED, "port 22" },
	{ { "140.82.112.3" }, NOPIN, KEEP, "140.82.112.3", 80, ALLOW },
	{ { "140.82.112.3" }, NOPIN, KEEP, "140.82.112.4", 80, false,
	    GK_REASON_IP_NOT_PINNED, "140.82.112.4" },
	{ { "140.82.112.0/20" }, NOPIN, KEEP, "140.82.128.1", 443, false,
	    GK_REASON_IP_NOT_PINNED, "connect by name" },
	{ { "[2606:50c0::/32]" }, NOPIN, KEEP, "2606:50c0:8000::153", 443,
	    ALLOW },
	{ { "[2606:50c0::/32]:443" }, NOPIN, KEEP, "2606:50c0:8000::153",
	    443, ALLOW },
	{ { "[2606:50c0::/32]:443" }, NOPIN, KEEP, "2606:50c0:8000::153",
	    80, false, GK_REASON_NOT_ALLOWLISTED, "port 80" },
	{ { "[2606:50c0::/32]" }, NOPIN, KEEP, "2606:50c1::1", 443, false,
	    GK_REASON_IP_NOT_PINNED, NULL },
	/* a v4 CIDR does not cover a v6 address and vice versa */
	{ { "140.82.112.0/20" }, NOPIN, KEEP, "2606:50c0:8000::153", 443,
	    false, GK_REASON_IP_NOT_PINNED, NULL },
	/* names only: the address must be pinned by the cage's DNS */
	{ GH, NOPIN, KEEP, "140.82.112.3", 443, false,
	    GK_REASON_IP_NOT_PINNED, "140.82.112.3" },
	{ GH, PIN("api.github.com", "140.82.112.3", 60), KEEP,
	    "140.82.112.3", 443, ALLOW },
	{ GH, PIN("api.github.com", "140.82.112.3", 60), KEEP,
	    "140.82.112.3", 22, ALLOW },
	{ GH, PIN("api.github.com", "2606:50c0:8000::153", 60), KEEP,
	    "2606:50c0:8000::153", 443, ALLOW },
	{ GH, PIN("api.github.com", "140.82.112.4", 60), KEEP,
	    "140.82.112.3", 443, false, GK_REASON_IP_NOT_PINNED, NULL },
	/* expired */
	{ GH, PIN("api.github.com", "140.82.112.3", -5), KEEP,
	    "140.82.112.3", 443, false, GK_REASON_IP_NOT_PINNED, NULL },
	{ GH, PIN("api.github.com", "140.82.112.3", 0), KEEP,
	    "140.82.112.3", 443, false, GK_REASON_IP_NOT_PINNED, NULL },
	/* pinned under a name the cage no longer allows */
	{ GH, PIN("api.github.com", "140.82.112.3", 60), { "example.org" },
	    "140.82.112.3", 443, false, GK_REASON_IP_NOT_PINNED, NULL },
	/* ... or still allows, on another port */
	{ GH, PIN("api.github.com", "140.82.112.3", 60), GH443,
	    "140.82.112.3", 443, ALLOW },
	{ GH, PIN("api.github.com", "140.82.112.3", 60), GH443,
	    "140.82.112.3", 22, false, GK_REASON_NOT_ALLOWLISTED,
	    "resolved by this cage" },
	/* pinned, but the name is allowed only on 443 */
	{ GH443, PIN("api.github.com", "140.82.112.3", 60), KEEP,
	    "140.82.112.3", 443, ALLOW },
	{ GH443, PIN("api.github.com", "140.82.112.3", 60), KEEP,
	    "140.82.112.3", 22, false, GK_REASON_NOT_ALLOWLISTED, "port 22" },
	/* one of two names pinned to the address allows the port */
	{ { "*.github.com:443", "ssh.example.org:22" },
	    { { "api.github.com", "140.82.112.3", 60 },
	    { "ssh.example.org", "140.82.112.3", 60 } }, KEEP,
	    "140.82.112.3", 22, ALLOW },
	/* special addresses: denied even when pinned ... */
	{ GH, PIN("api.github.com", "127.0.0.1", 60), KEEP, "127.0.0.1", 443,
	    false, GK_REASON_SPECIAL_RANGE, "loopback" },
	{ GH, PIN("api.github.com", "169.254.169.254", 60), KEEP,
	    "169.254.169.254", 80, false, GK_REASON_SPECIAL_RANGE, NULL },
	{ GH, PIN("api.github.com", "10.0.0.1", 60), KEEP, "10.0.0.1", 443,
	    false, GK_REASON_SPECIAL_RANGE, "private" },
	{ GH, PIN("api.github.com", "::ffff:127.0.0.1", 60), KEEP,
	    "::ffff:127.0.0.1", 443, false, GK_REASON_SPECIAL_RANGE,
	    "loopback" },
	{ GH, PIN("api.github.com", "::1", 60), KEEP, "::1", 443, false,
	    GK_REASON_SPECIAL_RANGE, "loopback" },
	{ GH, PIN("api.github.com", "fd00::1", 60), KEEP, "fd00::1", 443,
	    false, GK_REASON_SPECIAL_RANGE, NULL },
	{ GH, PIN("api.github.com", "0.0.0.0", 60), KEEP, "0.0.0.0", 443,
	    false, GK_REASON_SPECIAL_RANGE, NULL },
	{ GH, PIN("api.github.com", HOST_V4, 60), KEEP, HOST_V4, 443, false,
	    GK_REASON_SPECIAL_RANGE, "host" },
	{ GH, PIN("api.github.com", HOST_V6, 60), KEEP, HOST_V6, 443, false,
	    GK_REASON_SPECIAL_RANGE, "host" },
	/* ... and not covered by a wider CIDR that does not name them */
	{ { "140.82.112.0/20" }, NOPIN, KEEP, "10.0.0.1", 443, false,
	    GK_REASON_SPECIAL_RANGE, "CIDR" },
	/* ... but allowed when a CIDR names them */
	{ { "10.0.0.0/8" }, PIN("api.github.com", "10.0.0.1", 60), KEEP,
	    "10.0.0.1", 443, ALLOW },
	{ { "10.0.0.0/8:443" }, NOPIN, KEEP, "10.0.0.1", 443, ALLOW },
	{ { "10.0.0.0/8:443" }, NOPIN, KEEP, "10.0.0.1", 22, false,
	    GK_REASON_NOT_ALLOWLISTED, "port 22" },
	{ { "127.0.0.0/8" }, NOPIN, KEEP, "127.0.0.1", 8080, ALLOW },
	{ { "169.254.169.254" }, NOPIN, KEEP, "169.254.169.254", 80, ALLOW },
	{ { HOST_V4 }, NOPIN, KEEP, HOST_V4, 443, ALLOW },
	{ { "[" HOST_V6 "]" }, NOPIN, KEEP, HOST_V6, 443, ALLOW },
	{ { "[fd00::/8]" }, NOPIN, KEEP, "fd00::1", 443, ALLOW },
#undef GH
#undef GH443
#undef PIN
#undef NOPIN
#undef KEEP
#undef ALLOW
};

static void
test_allowed_addrs(void **state)
{
	struct proxy_outcome o;
	struct gk_host t;
	char what[128];
	size_t i;
	bool ok;

	(void)state;
	for (i = 0; i < sizeof(addr_cases) / sizeof(*addr_cases); i++) {
		snprintf(what, sizeof(what), "case %zu %s port %u", i,
		    addr_cases[i].ip, addr_cases[i].port);
		cage_new(addr_cases[i].pats, addr_cases[i].pins);
		if (addr_cases[i].reallow[0] != NULL)
			gk_cage_set_allow(fx.c,
			    allowlist(addr_cases[i].reallow));
		target(&t, addr_cases[i].ip, addr_cases[i].port);
		assert_true(t.is_addr);
		memset(&o, 0xa5, sizeof(o));
		ok = proxy_allowed(&fx.ctx, fx.c, &t, &o);
		if (ok != addr_cases[i].ok)
			fail_msg("%s: allowed %d, want %d (why: %s)", what, ok,
			    addr_cases[i].ok, ok ? "" : o.why);
		if (!ok)
			check_deny(what, &o, addr_cases[i].reason,
			    addr_cases[i].why_has);
		cage_free();
	}
}

/*
 * The host addresses come from ctx->host only: without them the same
 * address is ordinary public unicast and its pin allows it.
 */
static void
test_allowed_host_addrs_from_ctx(void **state)
{
	static const char *const pats[NPAT] = { "*.github.com" };
	static const struct pin_spec pins[NPIN] = {
		{ "api.github.com", HOST_V4, 60 },
	};
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	cage_new(pats, pins);
	target(&t, HOST_V4, 443);
	assert_false(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	check_deny("with host", &o, GK_REASON_SPECIAL_RANGE, NULL);
	fx.ctx.host = NULL;
	assert_true(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	cage_free();
}

/*
 * Regression (pinned_allowed once looked at only 8 names): a CDN address
 * shared by more than 8 pinned names, one of which is the only name
 * allowed on the target port, must be allowed on that port. Which 8 are seen
 * depends on pin order; here the allowed name was pinned first.
 */
static void
test_allowed_many_pinned_names(void **state)
{
	static const char *const pats[NPAT] = { "*.cdn.example.org:443",
	    "git.example.org:22" };
	struct proxy_outcome o;
	struct gk_host t;
	struct gk_addr a = addr("151.101.1.1");
	char name[64];
	time_t now = gk_now();
	int i;

	(void)state;
	cage_new(pats, NULL);
	assert_int_equal(gk_cage_pin(fx.c, "git.example.org", &a, now + 60),
	    0);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "n%d.cdn.example.org", i);
		assert_int_equal(gk_cage_pin(fx.c, name, &a, now + 60), 0);
	}
	assert_true(gk_cage_pinned_name(fx.c, &a, "git.example.org", now));
	target(&t, "151.101.1.1", 443);
	assert_true(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	target(&t, "151.101.1.1", 22);
	if (!proxy_allowed(&fx.ctx, fx.c, &t, &o))
		fail_msg("git.example.org:22 is allowed and pinned to "
		    "151.101.1.1, yet port 22 is denied: %s", o.why);
	cage_free();
}

/* What gk_stats holds for a cage label's series of kind k (0: none). */
static uint64_t
label_count(const char *label, enum gk_deny_kind k)
{
	size_t i;

	for (i = 0; i < gk_stats.nlabels; i++)
		if (strcmp(gk_stats.labels[i].label, label) == 0)
			return gk_stats.labels[i].denied[k];
	return 0;
}

/* want's label series are gk_stats' own: they are checked apart. */
static void
same_labels(struct gk_stats *want)
{
	memcpy(want->labels, gk_stats.labels, sizeof(want->labels));
	want->nlabels = gk_stats.nlabels;
	memcpy(want->label_other, gk_stats.label_other,
	    sizeof(want->label_other));
}

/* ---- proxy_deny_record ---- */

/* The cage's denials by kind. */
static void
denied_of(const struct gk_cage *c, uint64_t v[GK_KIND__MAX])
{
	int k;

	for (k = 0; k < GK_KIND__MAX; k++)
		v[k] = gk_cage_counted(c, GK_TALLY_DENIED, k);
}

static void
test_deny_record(void **state)
{
	static const char *const pats[NPAT] = { "github.com" };
	static const struct {
		enum gk_deny_kind	 kind;
		enum gk_proto		 proto;
		enum gk_deny_reason	 reason;
	} cases[] = {
		{ GK_KIND_SOCKS, GK_PROTO_SOCKS, GK_REASON_NOT_ALLOWLISTED },
		{ GK_KIND_SOCKS, GK_PROTO_SOCKS, GK_REASON_SNI_MISMATCH },
		{ GK_KIND_HTTP, GK_PROTO_HTTP, GK_REASON_HOST_MISMATCH },
		{ GK_KIND_HTTP, GK_PROTO_HTTP, GK_REASON_IP_NOT_PINNED },
		{ GK_KIND_TRANSPARENT, GK_PROTO_TRANSPARENT,
		    GK_REASON_NO_SNI },
		{ GK_KIND_SOCKS, GK_PROTO_SOCKS, GK_REASON_SPECIAL_RANGE },
		{ GK_KIND_SOCKS, GK_PROTO_SOCKS,
		    GK_REASON_UNSUPPORTED_COMMAND },
	};
	struct gk_stats before, want;
	uint64_t cage_before[GK_KIND__MAX], cage_want[GK_KIND__MAX], lab;
	uint64_t cage_now[GK_KIND__MAX];
	struct proxy_outcome o;
	struct gk_host t;
	size_t i;
	int rep;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "evil.example", 443);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		for (rep = 1; rep <= 2; rep++) {
			fx.who.kind = cases[i].kind;
			fx.who.proto = cases[i].proto;
			memset(&o, 0, sizeof(o));
			o.res = PROXY_DENIED;
			o.fd = -1;
			o.reason = cases[i].reason;
			snprintf(o.why, sizeof(o.why), "case %zu", i);
			before = gk_stats;
			denied_of(fx.c, cage_before);
			lab = label_count(gk_cage_label(fx.c), cases[i].kind);
			proxy_deny_record(&fx.ctx, &fx.who, &t, &o);
			want = before;
			want.denied[cases[i].kind][cases[i].reason]++;
			want.connections[cases[i].proto][GK_CONNV_DENIED]++;
			memcpy(cage_want, cage_before, sizeof(cage_want));
			cage_want[cases[i].kind]++;
			assert_int_equal(label_count(gk_cage_label(fx.c),
			    cases[i].kind), lab + 1);
			same_labels(&want);
			assert_memory_equal(&gk_stats, &want, sizeof(want));
			denied_of(fx.c, cage_now);
			assert_memory_equal(cage_now, cage_want,
			    sizeof(cage_want));
		}
	}
	/* the outcome of a real check records the same way */
	fx.who.kind = GK_KIND_SOCKS;
	fx.who.proto = GK_PROTO_SOCKS;
	assert_false(proxy_allowed(&fx.ctx, fx.c, &t, &o));
	before = gk_stats;
	proxy_deny_record(&fx.ctx, &fx.who, &t, &o);
	assert_int_equal(gk_stats.denied[GK_KIND_SOCKS]
	    [GK_REASON_NOT_ALLOWLISTED],
	    before.denied[GK_KIND_SOCKS][GK_REASON_NOT_ALLOWLISTED] + 1);
	cage_free();
}

/* A later request of a connection counted allowed: the denial is
 * counted (global and the cage's) and audited, the connection is not
 * counted again. */
static void
test_deny_count(void **state)
{
	static const char *const pats[NPAT] = { "github.com" };
	uint64_t cage_before, lab;
	struct gk_stats before, want;
	struct proxy_outcome o;
	struct gk_host t;

	(void)state;
	cage_new(pats, NULL);
	target(&t, "github.com", 80);
	fx.who.kind = GK_KIND_TRANSPARENT;
	fx.who.proto = GK_PROTO_TRANSPARENT;
	memset(&o, 0, sizeof(o));
	o.res = PROXY_DENIED;
	o.reason = GK_REASON_HOST_MISMATCH;
	snprintf(o.why, sizeof(o.why), "request 2");
	before = gk_stats;
	cage_before = gk_cage_counted(fx.c, GK_TALLY_DENIED,
	    GK_KIND_TRANSPARENT);
	lab = label_count(gk_cage_label(fx.c), GK_KIND_TRANSPARENT);
	proxy_deny_count(&fx.ctx, &fx.who, &t, &o);
	want = before;
	want.denied[GK_KIND_TRANSPARENT][GK_REASON_HOST_MISMATCH]++;
	assert_int_equal(label_count(gk_cage_label(fx.c), GK_KIND_TRANSPARENT),
	    lab + 1);
	same_labels(&want);
	assert_memory_equal(&gk_stats, &want, sizeof(want));
	assert_int_equal(gk_cage_counted(fx.c, GK_TALLY_DENIED,
	    GK_KIND_TRANSPARENT), cage_before + 1);
	cage_free();
}

/* A deny for a cage that is gone: the global counters only. */
static void
test_deny_record_cage_gone(void **state)
{
	static const char *const pats[NPAT] = { "github.com" };
	struct gk_stats before, want;
	struct proxy_outcome o;
	struct gk_host t;
	struct proxy_who who;

	(void)state;
	cage_new(pats, NULL);
	who = fx.who;
	who.kind = GK_KIND_HTTP;
	who.proto = GK_PROTO_HTTP;
	cage_free();
	target(&t, "github.com", 80);
	memset(&o, 0, sizeof(o));
	assert_int_equal(peek_n(&t, (const uint8_t *)"x", 1, false, &o),
	    RELAY_PEEK_DENY);
	before = gk_stats;
	proxy_deny_record(&fx.ctx, &who, &t, &o);
	want = before;
	want.denied[GK_KIND_HTTP][GK_REASON_UNKNOWN_SOURCE]++;
	want.connections[GK_PROTO_HTTP][GK_CONNV_DENIED]++;
	assert_memory_equal(&gk_stats, &want, sizeof(want));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed_names, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_allowed_addrs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_allowed_host_addrs_from_ctx, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_allowed_many_pinned_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny_record, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deny_count, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deny_record_cage_gone,
		    setup, teardown),
	};

	log_init("test_proxy_policy", getenv("GK_DEBUG") != NULL ?
	    LOG_LVL_DEBUG : LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
