/*
 * The fixture of the proxy policy tests (test_proxy_policy.c, connect-time
 * decisions and deny records; test_proxy_peek.c, the peek at the client's
 * first bytes): a cage table with one cage at a time, a proxy_ctx without
 * event base or resolver, ctx->host filled by hand, captures from
 * tests/data/tls.
 */
#ifndef PROXY_TESTUTIL_H
#define PROXY_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_cage.h"
#include "socks/proxy.h"

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

extern struct fx fx;

struct capture {
	uint8_t	b[CAPTURE_MAX];
	size_t	n;
};

struct gk_addr	 addr(const char *s);
struct gk_allowlist *allowlist(const char *const *pats);
/* A name or IP-literal target. */
void		 target(struct gk_host *t, const char *host,
		    uint16_t port);
/* A fresh cage in the fixture's table with these patterns and pins. */
struct gk_cage	*cage_new(const char *const *pats,
		    const struct pin_spec *pins);
void		 cage_free(void);
int		 setup(void **state);
int		 teardown(void **state);
/* tests/data/tls/<name>.bin */
void		 load(const char *name, struct capture *cap);
/* The last peek's *pass (0 unless it said PASS). */
extern uint64_t	 peek_pass;
/* Peek at the first n bytes from an exact-size copy (ASan sees
 * overreads): with state ps, or (peek_n) as the first bytes of a
 * tunnel. */
enum relay_peek	 peek_st(const struct gk_host *t,
		    struct proxy_peek_state *ps, const uint8_t *b, size_t n,
		    bool eof, struct proxy_outcome *o);
enum relay_peek	 peek_n(const struct gk_host *t, const uint8_t *b,
		    size_t n, bool eof, struct proxy_outcome *o);
/* Everything of n bytes may go: ALLOW, or PASS of n or more. */
bool		 peek_allows(enum relay_peek rp, size_t n);
const char	*peek_name(enum relay_peek rp);
/* A deny outcome carries the reason, a why naming what was checked
 * (containing why_has unless NULL), -1. */
void		 check_deny(const char *what, const struct proxy_outcome *o,
		    enum gk_deny_reason reason, const char *why_has);

#endif /* PROXY_TESTUTIL_H */
