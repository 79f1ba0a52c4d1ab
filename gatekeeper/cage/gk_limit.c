/*
 * gk_limit: per-cage budgets, the cage's list of holdings and the
 * daemon's descriptor budget.
 */
#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/state/gk_audit.h"

struct gk_limits	gk_limits;
struct gk_fd_budget	gk_fds = { .limit = 1024, .reserve = 128 };

static struct gk_audit	*limit_audit;

static const enum gk_limit_kind hold_limit[GK_HOLD__MAX] = {
	[GK_HOLD_HANDSHAKE] = GK_LIM_HANDSHAKES,
	[GK_HOLD_TUNNEL] = GK_LIM_TUNNELS,
	[GK_HOLD_DNS_TCP] = GK_LIM_DNS_TCP,
};

void
gk_limit_configure(const struct gk_limits *l, struct gk_audit *audit)
{
	gk_limits = *l;
	limit_audit = audit;
}

uint64_t
gk_limit_fds_init(uint64_t *raised_from)
{
	struct rlimit rl;
	uint64_t r;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		rl.rlim_cur = rl.rlim_max = 1024;
	*raised_from = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	gk_fds.limit = rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX :
	    (uint64_t)rl.rlim_cur;
	r = gk_fds.limit / 8;
	if (r > GK_LIMIT_RESERVE_MAX)
		r = GK_LIMIT_RESERVE_MAX;
	if (r < GK_LIMIT_RESERVE_MIN)
		r = GK_LIMIT_RESERVE_MIN;
	gk_fds.reserve = r < gk_fds.limit ? r : gk_fds.limit;
	return gk_fds.limit;
}

uint32_t
gk_limit_control_conns(uint32_t configured)
{
	uint64_t n;

	if (configured != 0)
		return configured;
	n = gk_fds.limit > gk_fds.reserve ? (gk_fds.limit - gk_fds.reserve) /
	    2 : 0;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	return n > 0 ? (uint32_t)n : 1;
}

/*
 * Sources that are no cage's (a SOCKS5 client before its token names the
 * cage; a DNS client the resolver refuses) share one budget of their own.
 */
static struct gk_cage_lim anon = {
	.holds = TAILQ_HEAD_INITIALIZER(anon.holds),
};

static struct gk_cage_lim *
lim_of(const struct gk_cage *c)
{
	struct gk_cage_lim *L;

	if (c == NULL || (L = gk_cage_facet(c, GK_FACET_LIMITS)) == NULL)
		return &anon;
	return L;
}

int
gk_limit_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct gk_cage_lim *L;

	(void)s;
	if ((L = calloc(1, sizeof(*L))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	TAILQ_INIT(&L->holds);
	gk_cage_facet_set(c, GK_FACET_LIMITS, L);
	return 0;
}

uint64_t
gk_limit_hit_count(const struct gk_cage *c, enum gk_limit_kind k)
{
	return lim_of(c)->hits[k];
}

const struct gk_cage_lim *
gk_limit_of(const struct gk_cage *c)
{
	return lim_of(c);
}

void
gk_limit_ended(const struct gk_cage *c, struct json_object *d)
{
	struct json_object *o = json_object_new_object();
	int l;

	for (l = 0; l < GK_LIM__MAX; l++)
		if (gk_limit_hit_count(c, l) > 0)
			json_object_object_add(o, gk_limit_kind_name(l),
			    json_object_new_int64((int64_t)
			    gk_limit_hit_count(c, l)));
	json_object_object_add(d, "limits", o);
}

/* ---- limit events ----------------------------------------------------- */

uint64_t
gk_limit_value(enum gk_limit_kind k)
{
	uint64_t budget = gk_fds.limit - gk_fds.reserve;

	switch (k) {
	case GK_LIM_DNS_RATE:
		return gk_limits.dns_rate;
	case GK_LIM_DNS_UPSTREAM:
		return gk_limits.dns_upstream;
	case GK_LIM_DNS_UPSTREAM_RATE:
		return gk_limits.dns_upstream_rate;
	case GK_LIM_DNS_TCP:
		return gk_limits.dns_tcp;
	case GK_LIM_HANDSHAKES:
		return gk_limits.handshakes;
	case GK_LIM_TUNNELS:
		return gk_limits.tunnels;
	case GK_LIM_DESCRIPTORS:
		return budget / (gk_fds.holders > 2 ? gk_fds.holders : 2);
	case GK_LIM_AUDIT:
		return gk_limits.audit_rate;
	case GK_LIM_MEMORY:		/* per cage: gk_limit_hits() */
	case GK_LIM_PIDS:
	case GK_LIM__MAX:
		break;
	}
	return 0;
}

void
gk_limit_hit(struct gk_cage *c, enum gk_limit_kind k, const char *example)
{
	gk_stats.limit_events[k]++;
	if (c == NULL)
		return;
	lim_of(c)->hits[k]++;
	gk_audit_limit(limit_audit, c, gk_limit_kind_name(k),
	    gk_limit_value(k), example);
}

void
gk_limit_hits(struct gk_cage *c, enum gk_limit_kind k, uint64_t n,
    uint64_t value, const char *example)
{
	if (n == 0)
		return;
	gk_stats.limit_events[k] += n;
	lim_of(c)->hits[k] += n;
	gk_audit_limit(limit_audit, c, gk_limit_kind_name(k), value, example);
}

/* ---- rates ------------------------------------------------------------ */

/* Take one token from a bucket filled at `rate` per second up to `rate`. */
static bool
bucket_take(struct gk_bucket *b, uint32_t rate, uint64_t now_ms)
{
	uint64_t add;

	if (rate == 0)
		return true;
	if (b->last_ms == 0 || now_ms < b->last_ms) {
		b->last_ms = now_ms;
		b->tokens = rate;
	}
	add = (now_ms - b->last_ms) * rate / 1000;
	if (add > 0) {
		if (b->tokens + add >= rate) {
			b->tokens = rate;
			b->last_ms = now_ms;
		} else {
			b->tokens += (uint32_t)add;
			/* keep the fraction: advance by what was added */
			b->last_ms += add * 1000 / rate;
		}
	}
	if (b->tokens == 0)
		return false;
	b->tokens--;
	return true;
}

bool
gk_limit_dns_query(struct gk_cage *c, uint64_t now_ms)
{
	if (bucket_take(&lim_of(c)->dns, gk_limits.dns_rate, now_ms))
		return true;
	gk_limit_hit(c, GK_LIM_DNS_RATE, NULL);
	return false;
}

bool
gk_limit_upstream(struct gk_cage *c, uint64_t now_ms, const char *name)
{
	if (gk_limits.dns_upstream != 0 &&
	    lim_of(c)->upstream >= gk_limits.dns_upstream) {
		gk_limit_hit(c, GK_LIM_DNS_UPSTREAM, name);
		return false;
	}
	if (!bucket_take(&lim_of(c)->up_rate, gk_limits.dns_upstream_rate,
	    now_ms)) {
		gk_limit_hit(c, GK_LIM_DNS_UPSTREAM_RATE, name);
		return false;
	}
	lim_of(c)->upstream++;
	return true;
}

void
gk_limit_upstream_done(struct gk_cage *c)
{
	if (lim_of(c)->upstream > 0)
		lim_of(c)->upstream--;
}

bool
gk_limit_audit_line(struct gk_cage *c, uint64_t now_ms)
{
	uint64_t sec = now_ms / 1000;

	if (lim_of(c)->audit_sec != sec) {
		lim_of(c)->audit_sec = sec;
		lim_of(c)->audit_lines = 0;
	}
	if (gk_limits.audit_rate != 0 &&
	    lim_of(c)->audit_lines >= gk_limits.audit_rate)
		return false;
	lim_of(c)->audit_lines++;
	return true;
}

bool
gk_limit_audit_ok(struct gk_cage *c, const char *event, const char *what)
{
	char ex[128];

	if (c == NULL || gk_limit_audit_line(c, gk_now_ms()))
		return true;
	snprintf(ex, sizeof(ex), "%s %s", event, what);
	gk_limit_hit(c, GK_LIM_AUDIT, ex);
	return false;
}

/* ---- descriptors ------------------------------------------------------ */

/*
 * May L (NULL: the daemon only) charge `n` more, the daemon `total` more?
 * Never past the budget; once half of it is in use, a holder only up to
 * its share.
 */
static bool
fds_ok(const struct gk_cage_lim *L, uint64_t total, uint64_t n)
{
	uint64_t budget = gk_fds.limit - gk_fds.reserve, holders, share;

	if (gk_fds.held + total > budget)
		return false;
	if (L == NULL || gk_fds.held + total <= budget / 2)
		return true;
	holders = gk_fds.holders + (L->fds == 0 ? 1 : 0);
	share = budget / (holders > 2 ? holders : 2);
	return L->fds + n <= share;
}

static void
fds_charge(struct gk_cage_lim *L, uint32_t n)
{
	gk_fds.held += n;
	if (L == NULL || n == 0)
		return;
	if (L->fds == 0)
		gk_fds.holders++;
	L->fds += n;
}

/* Only L's part; the daemon's is gk_limit_fds_give(). */
static void
fds_uncharge(struct gk_cage_lim *L, uint32_t n)
{
	if (L == NULL || n == 0 || L->fds == 0)
		return;
	L->fds = L->fds > n ? L->fds - n : 0;
	if (L->fds == 0 && gk_fds.holders > 0)
		gk_fds.holders--;
}

bool
gk_limit_fds_take(uint32_t n)
{
	if (!fds_ok(NULL, n, n))
		return false;
	gk_fds.held += n;
	return true;
}

void
gk_limit_fds_give(uint32_t n)
{
	gk_fds.held = gk_fds.held > n ? gk_fds.held - n : 0;
}

/* ---- holdings --------------------------------------------------------- */

/* The budget h is counted in now (NULL: none, its cage ended). */
static struct gk_cage_lim *
hold_lim(const struct gk_hold *h)
{
	return h->held ? lim_of(h->cage) : NULL;
}

static enum gk_limit_kind
hold_check(const struct gk_hold *h, struct gk_cage *c, enum gk_hold_kind k,
    uint32_t fds)
{
	uint32_t cap = (uint32_t)gk_limit_value(hold_limit[k]), have, more;
	struct gk_cage_lim *L = lim_of(c);
	bool same = hold_lim(h) == L;

	have = L->held[k] - (same && h->kind == k ? 1 : 0);
	if (cap != 0 && have >= cap)
		return hold_limit[k];
	more = fds > h->fds ? fds - h->fds : 0;
	if (!fds_ok(L, more, same ? more : fds))
		return GK_LIM_DESCRIPTORS;
	return GK_LIM__MAX;
}

/* Give back what h holds in its budget (not the daemon's descriptors). */
static void
hold_unlink(struct gk_hold *h)
{
	struct gk_cage_lim *L = hold_lim(h);

	if (L != NULL) {
		TAILQ_REMOVE(&L->holds, h, entry);
		if (L->held[h->kind] > 0)
			L->held[h->kind]--;
		fds_uncharge(L, h->fds);
	}
	h->held = false;
	h->cage = NULL;
}

static void
hold_link(struct gk_hold *h, struct gk_cage *c, enum gk_hold_kind k,
    uint32_t fds)
{
	struct gk_cage_lim *L = lim_of(c);

	h->cage = c;
	h->kind = k;
	h->held = true;
	h->fds = fds;
	TAILQ_INSERT_TAIL(&L->holds, h, entry);
	L->held[k]++;
	fds_charge(L, fds);
}

enum gk_limit_kind
gk_hold_take(struct gk_hold *h, struct gk_cage *c, enum gk_hold_kind k,
    uint32_t fds, gk_hold_end_cb end)
{
	enum gk_limit_kind lim;

	memset(h, 0, sizeof(*h));
	if ((lim = hold_check(h, c, k, fds)) != GK_LIM__MAX) {
		gk_limit_hit(c, lim, NULL);
		return lim;
	}
	h->end = end;
	hold_link(h, c, k, fds);
	return GK_LIM__MAX;
}

enum gk_limit_kind
gk_hold_move(struct gk_hold *h, struct gk_cage *c, enum gk_hold_kind k,
    uint32_t fds)
{
	enum gk_limit_kind lim;

	if ((lim = hold_check(h, c, k, fds)) != GK_LIM__MAX) {
		gk_limit_hit(c, lim, NULL);
		return lim;
	}
	hold_unlink(h);
	gk_limit_fds_give(h->fds);
	hold_link(h, c, k, fds);
	return GK_LIM__MAX;
}

enum gk_limit_kind
gk_hold_transfer(struct gk_hold *from, struct gk_hold *to,
    enum gk_hold_kind k, uint32_t fds, gk_hold_end_cb end)
{
	struct gk_cage *c = from->held ? from->cage : NULL;
	enum gk_limit_kind lim;

	memset(to, 0, sizeof(*to));
	if (!from->held)	/* its cage ended meanwhile */
		return gk_hold_take(to, NULL, k, fds, end);
	if ((lim = hold_check(from, c, k, fds)) != GK_LIM__MAX) {
		gk_limit_hit(c, lim, NULL);
		return lim;
	}
	gk_hold_drop(from);
	to->end = end;
	hold_link(to, c, k, fds);
	return GK_LIM__MAX;
}

bool
gk_limit_hold_room(struct gk_cage *c, enum gk_hold_kind k)
{
	uint32_t cap = (uint32_t)gk_limit_value(hold_limit[k]);

	if (cap == 0 || lim_of(c)->held[k] < cap)
		return true;
	gk_limit_hit(c, hold_limit[k], NULL);
	return false;
}

bool
gk_hold_fds(struct gk_hold *h, int delta)
{
	struct gk_cage_lim *L = hold_lim(h);
	uint32_t n;

	if (delta < 0) {
		n = (uint32_t)-delta < h->fds ? (uint32_t)-delta : h->fds;
		h->fds -= n;
		gk_limit_fds_give(n);
		fds_uncharge(L, n);
		return true;
	}
	if (!fds_ok(L, (uint32_t)delta, (uint32_t)delta)) {
		gk_limit_hit(h->held ? h->cage : NULL, GK_LIM_DESCRIPTORS,
		    NULL);
		return false;
	}
	h->fds += (uint32_t)delta;
	fds_charge(L, (uint32_t)delta);
	return true;
}

void
gk_hold_drop(struct gk_hold *h)
{
	hold_unlink(h);
	gk_limit_fds_give(h->fds);
	h->fds = 0;
	h->end = NULL;
}

void
gk_limit_release(struct gk_cage *c)
{
	struct gk_cage_lim *L = gk_cage_facet(c, GK_FACET_LIMITS);
	struct gk_hold *h;
	gk_hold_end_cb end;
	size_t bound;

	if (L == NULL)
		return;
	/* each end unlinks its holding first: the list shrinks each turn */
	bound = (size_t)L->held[0] + L->held[1] + L->held[2] + 1;
	while ((h = TAILQ_FIRST(&L->holds)) != NULL && bound-- > 0) {
		hold_unlink(h);
		if ((end = h->end) != NULL)
			end(h);
	}
	if (h != NULL)
		log_warn("cage=%s: holdings left at its end", gk_cage_id(c));
}

void
gk_limit_end(struct gk_cage *c, const char *reason)
{
	struct gk_cage_lim *L = gk_cage_facet(c, GK_FACET_LIMITS);

	(void)reason;
	if (L == NULL)
		return;
	gk_limit_release(c);
	gk_cage_facet_set(c, GK_FACET_LIMITS, NULL);
	free(L);
}

struct gk_addr *
gk_limit_hold_dsts(struct gk_cage *c, size_t *n)
{
	struct gk_cage_lim *L = lim_of(c);
	struct gk_addr *v;
	struct gk_hold *h;
	size_t k = 0, max = 0;

	TAILQ_FOREACH(h, &L->holds, entry)
		max += h->dst.family != 0;
	*n = 0;
	if (c == NULL || max == 0 || (v = calloc(max, sizeof(*v))) == NULL)
		return NULL;
	TAILQ_FOREACH(h, &L->holds, entry)
		if (h->dst.family != 0 && k < max)
			v[k++] = h->dst;
	qsort(v, k, sizeof(*v), gk_addr_cmp);
	*n = k;
	return v;
}
