/*
 * Unit tests for socks/proxy_policy.c: the connect-time policy
 * (proxy_allowed), the peek at the client's first bytes (proxy_peek) over
 * real ClientHello captures (tests/data/tls) and plain HTTP heads, and the
 * deny counters (proxy_deny_record). No network, no event loop: the
 * proxy_ctx has no base and no resolver, ctx->host is filled by hand.
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

#include "gk_cage.h"
#include "gk_log.h"
#include "gk_special.h"
#include "proxy.h"
#include "sni.h"
#include "gk_time.h"
#include "testdata.h"

#define NPAT		4	/* patterns per case (NULL-terminated) */
#define NPIN		3	/* pins per case */
#define CAPTURE_MAX	8192

#define HOST_V4		"93.184.216.34"		/* "this host" */
#define HOST_V6		"2606:2800:220:1:248:1893:25c8:1946"
#define CAGE_SRC	"10.143.0.2"

/* A pin made before the check: name -> addr until now + ttl (ttl < 0:
 * already expired). */
struct pin_spec {
	const char	*name;
	const char	*addr;
	int		 ttl;
};

struct fx {
	struct gk_cage_table	*t;
	struct gk_cage		*c;
	struct gk_hostaddrs	 host;
	struct proxy_ctx	 ctx;
	struct proxy_who	 who;
};

static struct fx fx;

struct capture {
	uint8_t	b[CAPTURE_MAX];
	size_t	n;
};

static struct gk_addr
addr(const char *s)
{
	struct gk_addr a;

	if (gk_addr_parse(s, &a) != 0)
		fail_msg("bad address %s", s);
	return a;
}

static void
target(struct proxy_target *t, const char *host, uint16_t port)
{
	memset(t, 0, sizeof(*t));
	t->port = port;
	if (gk_addr_parse(host, &t->addr) == 0) {
		t->is_addr = true;
		snprintf(t->name, sizeof(t->name), "%s", host);
		return;
	}
	if (gk_name_normalize(host, strlen(host), t->name) < 0)
		fail_msg("bad name %s", host);
}

static struct gk_allowlist *
allowlist(const char *const *pats)
{
	struct gk_allowlist *al;
	char err[256];
	size_t n = 0;

	while (n < NPAT && pats[n] != NULL)
		n++;
	al = gk_allowlist_new(pats, n, err, sizeof(err));
	if (al == NULL)
		fail_msg("allowlist: %s", err);
	return al;
}

/* A fresh cage in the fixture's table with these patterns and pins. */
static struct gk_cage *
cage_new(const char *const *pats, const struct pin_spec *pins)
{
	struct gk_addr src = addr(CAGE_SRC), a;
	enum gk_cage_err e;
	time_t now = gk_now();
	size_t i;

	fx.c = gk_cage_create(fx.t, &src, "test", 1000, allowlist(pats), &e);
	if (fx.c == NULL)
		fail_msg("gk_cage_create: %s", gk_cage_strerror(e));
	for (i = 0; pins != NULL && i < NPIN && pins[i].name != NULL; i++) {
		a = addr(pins[i].addr);
		assert_int_equal(gk_cage_pin(fx.c, pins[i].name, &a,
		    now + pins[i].ttl), 0);
	}
	memset(&fx.who, 0, sizeof(fx.who));
	fx.who.source = src;
	snprintf(fx.who.id, sizeof(fx.who.id), "%s", fx.c->id);
	fx.who.kind = GK_KIND_SOCKS;
	fx.who.proto = GK_PROTO_SOCKS;
	return fx.c;
}

static void
cage_free(void)
{
	gk_cage_destroy(fx.t, fx.c);
	fx.c = NULL;
}

static int
setup(void **state)
{
	struct gk_addr a;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	if ((fx.t = gk_cage_table_new()) == NULL)
		return -1;
	gk_hostaddrs_init(&fx.host);
	a = addr(HOST_V4);
	gk_hostaddrs_add(&fx.host, &a);
	a = addr(HOST_V6);
	gk_hostaddrs_add(&fx.host, &a);
	fx.ctx.cages = fx.t;
	fx.ctx.host = &fx.host;
	fx.ctx.audit = NULL;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	gk_cage_table_free(fx.t);
	memset(&fx, 0, sizeof(fx));
	return 0;
}

static void
load(const char *name, struct capture *cap)
{
	char file[256];

	snprintf(file, sizeof(file), "%s.bin", name);
	cap->n = test_data_load("tls", file, cap->b, sizeof(cap->b));
	assert_true(cap->n > SNI_REC_HDR);
}

/* Peek at the first n bytes from an exact-size copy (ASan sees overreads). */
static enum relay_peek
peek_n(const struct proxy_target *t, const uint8_t *b, size_t n, bool eof,
    struct proxy_outcome *o)
{
	enum relay_peek rp;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	if (n > 0)
		memcpy(cp, b, n);
	memset(o, 0xa5, sizeof(*o));
	rp = proxy_peek(&fx.ctx, &fx.who, t, cp, n, eof, o);
	free(cp);
	return rp;
}

static const char *
peek_name(enum relay_peek rp)
{
	switch (rp) {
	case RELAY_PEEK_MORE:
		return "MORE";
	case RELAY_PEEK_ALLOW:
		return "ALLOW";
	case RELAY_PEEK_DENY:
		return "DENY";
	}
	return "?";
}

/* A deny outcome carries the reason, a why naming what was checked, -1. */
static void
check_deny(const char *what, const struct proxy_outcome *o,
    enum gk_deny_reason reason, const char *why_has)
{
	if (o->res != PROXY_DENIED || o->reason != reason)
		fail_msg("%s: res %d reason %s, want denied %s (why: %s)",
		    what, o->res, gk_deny_reason_name(o->reason),
		    gk_deny_reason_name(reason), o->why);
	assert_int_equal(o->fd, -1);
	assert_non_null(memchr(o->why, '\0', sizeof(o->why)));
	assert_true(o->why[0] != '\0');
	if (why_has != NULL && strstr(o->why, why_has) == NULL)
		fail_msg("%s: why \"%s\" lacks \"%s\"", what, o->why, why_has);
}

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
	struct proxy_target t;
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
	struct proxy_target t;
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
	struct proxy_target t;

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
	struct proxy_target t;
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
#define OK	RELAY_PEEK_ALLOW, 0, NULL
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
	struct proxy_target t;
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
	struct proxy_target t;
	enum relay_peek rp;
	size_t i, n;

	(void)state;
	cage_new(pats, NULL);
	for (i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
		load(caps[i].file, &cap);
		target(&t, caps[i].host, 443);
		assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
		    RELAY_PEEK_ALLOW);
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
	struct proxy_target t;

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
	struct proxy_target t;
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
	struct proxy_target t;
	enum relay_peek rp;
	char what[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(http_cases) / sizeof(*http_cases); i++) {
		snprintf(what, sizeof(what), "case %zu to %s:%u", i,
		    http_cases[i].host, http_cases[i].port);
		cage_new(http_cases[i].pats, http_cases[i].pins);
		target(&t, http_cases[i].host, http_cases[i].port);
		rp = peek_n(&t, (const uint8_t *)http_cases[i].bytes,
		    bytes_len(http_cases[i].bytes), http_cases[i].eof, &o);
		if (rp != http_cases[i].want)
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
	struct proxy_target t;
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
	assert_int_equal(peek_n(&t, (const uint8_t *)head, sizeof(head) - 1,
	    false, &o), RELAY_PEEK_ALLOW);
	/* an SSH banner is never denied while it arrives */
	for (n = 1; n <= sizeof(ssh) - 1; n++) {
		rp = peek_n(&t, (const uint8_t *)ssh, n, false, &o);
		if (rp == RELAY_PEEK_DENY)
			fail_msg("ssh prefix %zu: DENY (%s)", n, o.why);
	}
	cage_free();
}

/*
 * Regression (peek_http once denied these as malformed HTTP): a line-based
 * protocol whose first line is "WORD SP ..." without an HTTP version (IRC,
 * Redis inline commands, memcached text) is not HTTP and goes by host and
 * port, like an SSH banner. Such bytes carry no Host to front with.
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
	};
	static const char *const pats[NPAT] = { "irc.example.org" };
	struct proxy_outcome o;
	struct proxy_target t;
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
	struct proxy_target t;
	struct proxy_who old;

	(void)state;
	load("curl_h2", &cap);
	cage_new(pats, NULL);
	target(&t, "web.example.test", 443);
	assert_ptr_equal(proxy_cage(&fx.ctx, &fx.who), fx.c);
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_ALLOW);
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
	assert_string_not_equal(fx.c->id, old.id);
	fx.who = old;
	assert_null(proxy_cage(&fx.ctx, &fx.who));
	assert_int_equal(peek_n(&t, cap.b, cap.n, false, &o),
	    RELAY_PEEK_DENY);
	check_deny("replaced", &o, GK_REASON_UNKNOWN_SOURCE, NULL);
	cage_free();
}

/* ---- proxy_deny_record ---- */

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
	uint64_t cage_before[GK_KIND__MAX], cage_want[GK_KIND__MAX];
	struct proxy_outcome o;
	struct proxy_target t;
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
			memcpy(cage_before, fx.c->denied, sizeof(cage_before));
			proxy_deny_record(&fx.ctx, &fx.who, &t, &o);
			want = before;
			want.denied[cases[i].kind][cases[i].reason]++;
			want.connections[cases[i].proto][GK_CONNV_DENIED]++;
			memcpy(cage_want, cage_before, sizeof(cage_want));
			cage_want[cases[i].kind]++;
			assert_memory_equal(&gk_stats, &want, sizeof(want));
			assert_memory_equal(fx.c->denied, cage_want,
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

/* A deny for a cage that is gone: the global counters only. */
static void
test_deny_record_cage_gone(void **state)
{
	static const char *const pats[NPAT] = { "github.com" };
	struct gk_stats before, want;
	struct proxy_outcome o;
	struct proxy_target t;
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
		cmocka_unit_test_setup_teardown(test_peek_tls, setup,
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
		cmocka_unit_test_setup_teardown(test_peek_line_protocols,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_peek_cage_gone, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deny_record, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deny_record_cage_gone,
		    setup, teardown),
	};

	log_init("test_proxy_policy", getenv("GK_DEBUG") != NULL ?
	    LOG_LVL_DEBUG : LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
