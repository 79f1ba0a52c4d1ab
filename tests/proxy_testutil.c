/*
 * proxy_testutil: the fixture of the proxy policy and peek tests.
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

#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"
#include "sni/sni.h"
#include "socks/proxy.h"
#include "tests/proxy_testutil.h"
#include "tests/testdata.h"

struct fx fx;

struct gk_addr
addr(const char *s)
{
	struct gk_addr a;

	if (gk_addr_parse(s, &a) != 0)
		fail_msg("bad address %s", s);
	return a;
}

void
target(struct gk_host *t, const char *host, uint16_t port)
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

struct gk_allowlist *
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
struct gk_cage *
cage_new(const char *const *pats, const struct pin_spec *pins)
{
	struct gk_addr src = addr(CAGE_SRC), a;
	enum gk_cage_err e;
	time_t now = gk_now();
	size_t i;

	fx.c = gk_test_cage(fx.t, &src, "test", 1000, allowlist(pats), &e);
	if (fx.c == NULL)
		fail_msg("gk_test_cage: %s", gk_cage_strerror(e));
	for (i = 0; pins != NULL && i < NPIN && pins[i].name != NULL; i++) {
		a = addr(pins[i].addr);
		assert_int_equal(gk_cage_pin(fx.c, pins[i].name, &a,
		    now + pins[i].ttl), 0);
	}
	memset(&fx.who, 0, sizeof(fx.who));
	fx.who.source = src;
	snprintf(fx.who.id, sizeof(fx.who.id), "%s", gk_cage_id(fx.c));
	fx.who.kind = GK_KIND_SOCKS;
	fx.who.proto = GK_PROTO_SOCKS;
	return fx.c;
}

void
cage_free(void)
{
	gk_cage_end(fx.c, "test");
	fx.c = NULL;
}

int
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

int
teardown(void **state)
{
	(void)state;
	gk_cage_table_free(fx.t);
	memset(&fx, 0, sizeof(fx));
	return 0;
}

void
load(const char *name, struct capture *cap)
{
	char file[256];

	snprintf(file, sizeof(file), "%s.bin", name);
	cap->n = test_data_load("tls", file, cap->b, sizeof(cap->b));
	assert_true(cap->n > SNI_REC_HDR);
}

uint64_t peek_pass;

enum relay_peek
peek_st(const struct gk_host *t, struct proxy_peek_state *ps,
    const uint8_t *b, size_t n, bool eof, struct proxy_outcome *o)
{
	enum relay_peek rp;
	uint8_t *cp;

	cp = malloc(n == 0 ? 1 : n);
	assert_non_null(cp);
	if (n > 0)
		memcpy(cp, b, n);
	memset(o, 0xa5, sizeof(*o));
	peek_pass = 0xa5a5;
	rp = proxy_peek(&fx.ctx, &fx.who, t, ps, cp, n, eof, &peek_pass, o);
	free(cp);
	if (rp == RELAY_PEEK_PASS || rp == RELAY_PEEK_WATCH)
		assert_true(peek_pass >= 1);
	else
		assert_int_equal(peek_pass, 0);
	return rp;
}

enum relay_peek
peek_n(const struct gk_host *t, const uint8_t *b, size_t n, bool eof,
    struct proxy_outcome *o)
{
	struct proxy_peek_state ps;

	proxy_peek_init(&ps);
	return peek_st(t, &ps, b, n, eof, o);
}

bool
peek_allows(enum relay_peek rp, size_t n)
{
	return rp == RELAY_PEEK_ALLOW || rp == RELAY_PEEK_WATCH ||
	    rp == RELAY_PEEK_TAKE || (rp == RELAY_PEEK_PASS && peek_pass >= n);
}

const char *
peek_name(enum relay_peek rp)
{
	switch (rp) {
	case RELAY_PEEK_MORE:
		return "MORE";
	case RELAY_PEEK_ALLOW:
		return "ALLOW";
	case RELAY_PEEK_DENY:
		return "DENY";
	case RELAY_PEEK_PASS:
		return "PASS";
	case RELAY_PEEK_WATCH:
		return "WATCH";
	case RELAY_PEEK_TAKE:
		return "TAKE";
	}
	return "?";
}

/* A deny outcome carries the reason, a why naming what was checked, -1. */
void
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
