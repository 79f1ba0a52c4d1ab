/*
 * dns_resolve: what the resolver answers. Source address -> cage ->
 * allowlist; allowed names from the shared cache or the upstream (one
 * upstream query per distinct question, however many cages ask); the
 * answer's addresses pinned to the asking cage until the capped TTL ends.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "dns/dns_int.h"
#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/state/gk_stats.h"

struct dns_waiter {
	struct dns_waiter	*next;
	uint64_t		 id;		/* the client's query's */
	uint64_t		 start_us;	/* the client's query came */
	struct dns_client	 client;
	char			 cage_id[GK_CAGE_ID_LEN + 1];
	struct dns_query	 q;
	dns_lookup_cb		 cb;		/* a proxy lookup, not a client */
	void			*cbarg;
	bool			 cancelled;
};

struct dns_pending {
	struct dns_pending	*hnext;
	struct dns_server	*srv;
	uint32_t		 hash;
	bool			 in_table;	/* still collecting waiters */
	bool			 sent;		/* asked upstream */
	struct dns_query	 q;		/* the question asked upstream */
	struct dns_waiter	*waiters;
	size_t			 nwaiters;
	struct event		*deadline;
};

static uint32_t
key_hash(const struct dns_query *q)
{
	return gk_hash_bytes(GK_HASH_INIT ^ q->qtype ^
	    ((uint32_t)q->qclass << 16), q->name, q->name_len);
}

static bool
key_eq(const struct dns_query *a, const struct dns_query *b)
{
	return a->qtype == b->qtype && a->qclass == b->qclass &&
	    a->name_len == b->name_len &&
	    memcmp(a->name, b->name, a->name_len) == 0;
}

/*
 * One query being handled, from dns_handle_query() down: its id (in
 * every log line about it), when it came, its verdict (counted once,
 * for the answer's latency by verdict), and what the answer line says.
 */
struct dns_handling {
	uint64_t		 id;
	uint64_t		 start_us;	/* gk_clock_us() */
	enum gk_dns_verdict	 verdict;	/* GK_DNSV__MAX: none yet */
	const struct gk_cage	*cage;		/* NULL: none (yet) */
	const struct dns_query	*q;		/* NULL: not parsed */
};

static void
count_verdict(struct dns_handling *h, enum gk_dns_verdict v)
{
	gk_stats.dns_queries[v]++;
	h->verdict = v;
}

/*
 * The answer's addresses, pinned to the cage for their capped TTL and the
 * grace after it (a client that keeps an answer longer than the TTL it
 * was handed, a JVM or a connection pool, may still connect).
 */
static void
pin_addrs(const struct dns_server *s, struct gk_cage *c, const char *name,
    const struct dns_addr *addrs, size_t n, time_t base, time_t now)
{
	uint32_t cap = s->ttl_cap;
	struct gk_addr a;
	time_t exp;
	size_t i;

	for (i = 0; i < n; i++) {
		exp = base + (time_t)(addrs[i].ttl < cap ? addrs[i].ttl : cap) +
		    (time_t)s->pin_grace;
		if (exp <= now)
			continue;
		gk_addr_from_bytes(&a, addrs[i].family, addrs[i].addr);
		gk_cage_pin(c, name, &a, exp);
	}
}

static size_t
deny_query(struct dns_server *s, struct dns_handling *h, struct gk_cage *c,
    const struct dns_client *cl, const struct dns_query *q, uint8_t *out,
    size_t outlen)
{
	const struct gk_hostpolicy *hp = gk_cage_policy(c);
	enum gk_deny_reason r = GK_REASON_NOT_ALLOWLISTED;
	char why[256];
	struct gk_name nm;
	enum gk_name_status st;

	if (q->name_host && gk_hostpolicy_denies_name(hp, q->name,
	    q->name_len, 0))
		r = GK_REASON_HOST_POLICY;
	count_verdict(h, GK_DNSV_DENIED);
	gk_stats.denied[GK_KIND_DNS][r]++;
	gk_cage_count(c, GK_TALLY_DENIED, GK_KIND_DNS);
	/* its owner (if told), its recent denials, who follows them */
	if (q->name_host)
		gk_events_deny(c, GK_KIND_DNS, q->name, 0, r, NULL);
	if (!gk_audit_dns_deny_fold(s->audit, c, q->name, q->qtype)) {
		if (r == GK_REASON_HOST_POLICY)
			snprintf(why, sizeof(why), "the host policy (version "
			    "%s) denies it for every cage", hp->version);
		else if (q->name_host)
			gk_allow_explain(gk_cage_allow(c), q->name,
			    q->name_len, 0, why,
			    sizeof(why));
		else {
			st = gk_name_parse((const uint8_t *)q->name,
			    q->name_len, &nm);
			snprintf(why, sizeof(why), "not a host name (%s)",
			    gk_name_strstatus(st));
		}
		gk_audit_dns_deny(s->audit, c, &cl->addr, q->name, q->qtype,
		    why);
	}
	return dns_reply_empty(q, DNS_RC_NXDOMAIN, out, outlen);
}

/*
 * A name that carries a credential's placeholder (gk_cred.h): refused
 * (REFUSED, allowed pattern or not: a wildcard must not carry it out),
 * counted, told and audited as a leak, the name redacted. 0: none.
 */
static size_t
deny_leak(struct dns_server *s, struct dns_handling *h, struct gk_cage *c,
    const struct dns_client *cl, const struct dns_query *q, uint8_t *out,
    size_t outlen)
{
	char red[GK_NAME_MAX + 64], why[GK_CRED_NAME_MAX + 64];
	const char *cred;

	if ((cred = gk_cred_leak(c, (const uint8_t *)q->name, q->name_len,
	    NULL, NULL)) == NULL)
		return 0;
	count_verdict(h, GK_DNSV_DENIED);
	gk_stats.denied[GK_KIND_DNS][GK_REASON_CREDENTIAL_LEAK]++;
	gk_cage_count(c, GK_TALLY_DENIED, GK_KIND_DNS);
	gk_cred_redact(c, q->name, red, sizeof(red));
	snprintf(why, sizeof(why), "credential %s's placeholder in a DNS "
	    "name", cred);
	gk_events_deny(c, GK_KIND_DNS, red, 0, GK_REASON_CREDENTIAL_LEAK,
	    why);
	gk_audit_dns_leak(s->audit, c, &cl->addr, red, q->qtype, why, cred);
	log_info("cage=%s action=deny reason=credential_leak credential=%s "
	    "name=%s", gk_cage_id(c), cred, red);
	return dns_reply_empty(q, DNS_RC_REFUSED, out, outlen);
}

/*
 * An asking cage's name outside its allowlist (gk_ask.h): an A query is
 * answered with the name's placeholder, pinned to the cage so that its
 * TCP there reaches the transparent proxy; any other type with no
 * records. Nothing is asked upstream. 0: not such a name (deny it).
 */
static size_t
answer_placeholder(struct dns_server *s, struct dns_handling *h,
    struct gk_cage *c, const struct dns_query *q, time_t now, uint8_t *out,
    size_t outlen)
{
	struct gk_addr a;

	if (!gk_cage_asks(c) || !q->name_host ||
	    gk_special_name_classify(q->name) != GK_SPECIAL_NONE ||
	    !gk_hostpolicy_may_ask(gk_cage_policy(c), q->name, q->name_len,
	    0))
		return 0;
	if (q->qtype != DNS_T_A) {
		count_verdict(h, GK_DNSV_PLACEHOLDER);
		return dns_reply_empty(q, DNS_RC_NOERROR, out, outlen);
	}
	if (gk_ask_placeholder(c, q->name, &a) == -1)
		return 0;
	count_verdict(h, GK_DNSV_PLACEHOLDER);
	gk_cage_pin(c, q->name, &a, now + GK_ASK_PLACEHOLDER_TTL +
	    (time_t)s->pin_grace);
	return dns_reply_a(q, a.bytes, GK_ASK_PLACEHOLDER_TTL, out, outlen);
}

static bool
name_allowed(const struct gk_cage *c, const struct dns_query *q)
{
	return q->name_host &&
	    gk_cage_allows_name(c, q->name, q->name_len, 0);
}

static size_t
client_limit(const struct dns_client *cl, const struct dns_query *q)
{
	return cl->tcp != NULL ? DNS_MAX_MSG : dns_query_udp_limit(q);
}

/* ---- upstream queries in flight ---- */

static void
pending_unlink(struct dns_server *s, struct dns_pending *p)
{
	struct dns_pending **pp;

	if (!p->in_table)
		return;
	for (pp = &s->pending[p->hash % DNS_PENDING_BUCKETS]; *pp != NULL;
	    pp = &(*pp)->hnext)
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	p->in_table = false;
	s->npending--;
	evtimer_del(p->deadline);
}

static void
waiter_free(struct dns_waiter *w)
{
	if (w->client.tcp != NULL)
		dns_tcp_unref(w->client.tcp);
	free(w);
}

static void
lookup_fill(struct dns_lookup_result *res, uint8_t rcode,
    const struct dns_addr *addrs, size_t n)
{
	size_t i;

	res->rcode = rcode;
	res->naddrs = 0;
	for (i = 0; i < n && res->naddrs < DNS_LOOKUP_MAX; i++)
		gk_addr_from_bytes(&res->addrs[res->naddrs++], addrs[i].family,
		    addrs[i].addr);
}

static void
lookup_answer(struct dns_waiter *w, const struct dns_answer *a)
{
	struct dns_lookup_result res;

	if (a == NULL)
		lookup_fill(&res, DNS_RC_SERVFAIL, NULL, 0);
	else
		lookup_fill(&res, a->rcode, a->addrs, a->naddrs);
	w->cb(w->cbarg, &res);
}

/* Answer one waiter from an upstream message (or SERVFAIL if a==NULL). */
/* The cage a client waiter asked for, if it still lives. */
static struct gk_cage *
waiter_cage(struct dns_server *s, const struct dns_waiter *w)
{
	struct gk_cage *c = gk_cage_by_source(s->cages, &w->client.addr);

	return c != NULL && strcmp(gk_cage_id(c), w->cage_id) == 0 ? c : NULL;
}

static void
answer_waiter(struct dns_server *s, struct dns_waiter *w, const uint8_t *msg,
    const struct dns_answer *a, time_t now)
{
	uint8_t out[DNS_MAX_MSG];
	struct gk_cage *c;
	uint64_t took;
	size_t len;

	if (w->cb != NULL) {
		if (!w->cancelled)
			lookup_answer(w, a);
		return;
	}
	c = waiter_cage(s, w);
	if (c != NULL)
		gk_limit_upstream_done(c);
	if (c == NULL)
		len = dns_reply_empty(&w->q, DNS_RC_REFUSED, out, sizeof(out));
	else if (!name_allowed(c, &w->q))
		len = dns_reply_empty(&w->q, DNS_RC_NXDOMAIN, out, sizeof(out));
	else if (a == NULL)
		len = dns_reply_empty(&w->q, DNS_RC_SERVFAIL, out, sizeof(out));
	else {
		len = dns_reply_records(&w->q, a->rcode, msg + a->rrs_off,
		    a->rrs_len, a->ancount, a->nscount, s->ttl_cap, 0, out,
		    sizeof(out), client_limit(&w->client, &w->q));
		pin_addrs(s, c, w->q.name, a->addrs, a->naddrs, now, now);
	}
	if (len > 0)
		dns_send_reply(s, &w->client, out, len);
	took = gk_clock_us() - w->start_us;
	gk_hist_observe(&gk_stats.dns_answer[GK_DNSV_ALLOWED], took);
	log_debug("q=%llu upstream answer: %s, %llu us",
	    (unsigned long long)w->id, c == NULL ? "refused (cage gone)" :
	    a == NULL ? "servfail" : "answered", (unsigned long long)took);
}

static void
pending_finish(struct dns_pending *p, const uint8_t *msg,
    const struct dns_answer *a)
{
	struct dns_server *s = p->srv;
	struct dns_waiter *w, *next;
	time_t now = gk_now();
	struct gk_cage *c;

	for (w = p->waiters; w != NULL; w = next) {
		next = w->next;
		if (!s->stopping)
			answer_waiter(s, w, msg, a, now);
		else if (w->cb == NULL && (c = waiter_cage(s, w)) != NULL)
			gk_limit_upstream_done(c);
		waiter_free(w);
	}
	p->waiters = NULL;
	p->nwaiters = 0;
}

static void
pending_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_pending *p = arg;

	(void)fd;
	(void)what;
	/* Answer SERVFAIL now; the upstream query stays alive (its late
	 * answer still fills the cache) and frees p when it ends. */
	gk_stats.dns_upstream_errors++;
	log_debug("upstream timeout for %s type %u", p->q.name, p->q.qtype);
	pending_unlink(p->srv, p);
	pending_finish(p, NULL, NULL);
}

static void
upstream_cb(void *arg, bool ok, const uint8_t *abuf, size_t alen)
{
	struct dns_pending *p = arg;
	struct dns_server *s = p->srv;
	struct dns_answer *a = NULL, ans;
	bool was_waiting = p->in_table;

	if (ok && dns_answer_parse(abuf, alen, &p->q, &ans) == DNS_OK) {
		if (ans.rcode == DNS_RC_NOERROR || ans.rcode == DNS_RC_NXDOMAIN)
			a = &ans;
	}
	if (a != NULL && s->cache != NULL && !s->stopping)
		dns_cache_put(s->cache, p->q.name, p->q.name_len, p->q.qtype,
		    p->q.qclass, abuf, alen, a, s->ttl_cap, gk_now());
	if (a == NULL && was_waiting)
		gk_stats.dns_upstream_errors++;
	pending_unlink(s, p);
	pending_finish(p, abuf, a);
	event_free(p->deadline);
	free(p);
}

static struct dns_pending *
pending_find(struct dns_server *s, const struct dns_query *q, uint32_t h)
{
	struct dns_pending *p;

	for (p = s->pending[h % DNS_PENDING_BUCKETS]; p != NULL; p = p->hnext)
		if (p->hash == h && key_eq(&p->q, q))
			return p;
	return NULL;
}

static struct dns_waiter *
waiter_new(struct dns_pending *p, const struct dns_query *q)
{
	struct dns_waiter *w;

	if (p->nwaiters >= DNS_WAITERS_MAX || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->q = *q;
	w->next = p->waiters;
	p->waiters = w;
	p->nwaiters++;
	return w;
}

static int
pending_add_waiter(struct dns_pending *p, const struct dns_handling *h,
    const struct dns_client *cl, const struct gk_cage *c,
    const struct dns_query *q)
{
	struct dns_waiter *w;

	if ((w = waiter_new(p, q)) == NULL)
		return -1;
	w->id = h->id;
	w->start_us = h->start_us;
	w->client = *cl;
	if (cl->tcp != NULL)
		dns_tcp_ref(cl->tcp);
	memcpy(w->cage_id, gk_cage_id(c), sizeof(w->cage_id));
	return 0;
}

static struct dns_waiter *
pending_add_lookup(struct dns_pending *p, const struct dns_query *q,
    dns_lookup_cb cb, void *arg)
{
	struct dns_waiter *w;

	if ((w = waiter_new(p, q)) == NULL)
		return NULL;
	w->cb = cb;
	w->cbarg = arg;
	return w;
}

/* The query in flight for q, or a new one not sent yet. */
static struct dns_pending *
forward_start(struct dns_server *s, const struct dns_query *q)
{
	struct dns_pending *p;
	uint32_t h = key_hash(q);

	if ((p = pending_find(s, q, h)) != NULL)
		return p;
	if (s->npending >= DNS_PENDING_MAX || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->srv = s;
	p->hash = h;
	p->q = *q;
	if ((p->deadline = evtimer_new(s->base, pending_deadline_cb, p)) == NULL) {
		free(p);
		return NULL;
	}
	p->hnext = s->pending[h % DNS_PENDING_BUCKETS];
	s->pending[h % DNS_PENDING_BUCKETS] = p;
	p->in_table = true;
	s->npending++;
	return p;
}

/* Send a new query upstream (once); if it has no waiters, drop it. */
static void
forward_send(struct dns_server *s, struct dns_pending *p)
{
	uint8_t qbuf[DNS_HDR_LEN + DNS_MAX_NAME + 4 + 11];
	struct timeval tv;
	size_t qlen;

	if (p->sent)
		return;
	if (p->waiters == NULL) {
		pending_unlink(s, p);
		event_free(p->deadline);
		free(p);
		return;
	}
	p->sent = true;
	tv.tv_sec = s->timeout_ms / 1000;
	tv.tv_usec = (suseconds_t)(s->timeout_ms % 1000) * 1000;
	evtimer_add(p->deadline, &tv);
	qlen = dns_build_query(s->next_id++, &p->q, qbuf, sizeof(qbuf));
	/* may call upstream_cb (and free p) before it returns */
	if (qlen == 0 ||
	    dns_upstream_send(s->up, qbuf, qlen, upstream_cb, p) == -1)
		upstream_cb(p, false, NULL, 0);
}

/*
 * Returns 0 if the client will be answered later, -1 to SERVFAIL now
 * (out of resources, or over the cage's upstream budget).
 */
static int
forward(struct dns_server *s, struct dns_handling *h,
    const struct dns_client *cl, struct gk_cage *c, const struct dns_query *q)
{
	struct dns_pending *p;
	int rc;

	if (!gk_limit_upstream(c, gk_now_ms(), q->name))
		return -1;
	if ((p = forward_start(s, q)) == NULL) {
		gk_limit_upstream_done(c);
		return -1;
	}
	if ((rc = pending_add_waiter(p, h, cl, c, q)) == -1)
		gk_limit_upstream_done(c);
	forward_send(s, p);
	return rc;
}

void
dns_pending_free_all(struct dns_server *s)
{
	struct dns_pending *p;
	size_t i;

	for (i = 0; i < DNS_PENDING_BUCKETS; i++)
		while ((p = s->pending[i]) != NULL) {
			pending_unlink(s, p);
			pending_finish(p, NULL, NULL);
		}
}

/* ---- the decision ---- */

static size_t
answer_allowed(struct dns_server *s, struct dns_handling *h,
    const struct dns_client *cl, struct gk_cage *c, const struct dns_query *q,
    time_t now, uint8_t *out, size_t outlen)
{
	const struct dns_cached *e;

	count_verdict(h, GK_DNSV_ALLOWED);
	if (s->cache != NULL && (e = dns_cache_get(s->cache, q->name,
	    q->name_len, q->qtype, q->qclass, s->ttl_cap, now)) != NULL) {
		gk_stats.dns_cache_hits++;
		pin_addrs(s, c, q->name, e->addrs, e->naddrs, e->stored, now);
		/* TTLs as when fresh (capped), not counted down by the
		 * entry's age: that would tell a cage how long ago another
		 * one asked. A client may so keep a record up to one capped
		 * TTL past the cache's own expiry. */
		return dns_reply_records(q, e->rcode, e->rrs, e->rrs_len,
		    e->ancount, e->nscount, s->ttl_cap, 0, out, outlen,
		    client_limit(cl, q));
	}
	gk_stats.dns_cache_misses++;
	if (forward(s, h, cl, c, q) == 0)
		return 0;
	gk_stats.dns_upstream_errors++;
	return dns_reply_empty(q, DNS_RC_SERVFAIL, out, outlen);
}

static size_t
answer_bad(struct dns_handling *h, enum dns_status st,
    const struct dns_query *q, uint8_t *out, size_t outlen)
{
	if (st == DNS_NOTIMP) {
		count_verdict(h, GK_DNSV_NOTIMP);
		return dns_reply_empty(q, DNS_RC_NOTIMP, out, outlen);
	}
	count_verdict(h, GK_DNSV_MALFORMED);
	if (st == DNS_FORMERR)
		return dns_reply_empty(q, DNS_RC_FORMERR, out, outlen);
	return 0;
}

static size_t
handle_query(struct dns_server *s, struct dns_handling *h,
    const struct dns_client *cl, const uint8_t *buf, size_t len,
    struct dns_query *q, time_t now, uint8_t *out, size_t outlen)
{
	struct gk_cage *c;
	enum dns_status st;
	size_t n;

	/* over the cage's rate: UDP is dropped before anything else (a
	 * flood costs a lookup and a drop), TCP refused */
	if ((c = gk_cage_by_source(s->cages, &cl->addr)) != NULL &&
	    !gk_limit_dns_query(c, gk_now_ms())) {
		if (cl->tcp == NULL ||
		    dns_query_parse(buf, len, q) != DNS_OK)
			return 0;
		return dns_reply_empty(q, DNS_RC_REFUSED, out, outlen);
	}
	h->cage = c;
	if ((st = dns_query_parse(buf, len, q)) != DNS_OK)
		return answer_bad(h, st, q, out, outlen);
	h->q = q;
	if (c == NULL) {
		count_verdict(h, GK_DNSV_REFUSED);
		gk_stats.denied[GK_KIND_DNS][GK_REASON_UNKNOWN_SOURCE]++;
		return dns_reply_empty(q, DNS_RC_REFUSED, out, outlen);
	}
	gk_cage_count(c, GK_TALLY_DNS_QUERY, 0);
	if (q->edns && q->edns_version > 0) {
		count_verdict(h, GK_DNSV_MALFORMED);
		return dns_reply_empty(q, DNS_RC_BADVERS, out, outlen);
	}
	if (q->qclass != DNS_CLASS_IN) {
		count_verdict(h, GK_DNSV_REFUSED);
		return dns_reply_empty(q, DNS_RC_REFUSED, out, outlen);
	}
	if ((n = deny_leak(s, h, c, cl, q, out, outlen)) > 0)
		return n;
	if (!name_allowed(c, q)) {
		if ((n = answer_placeholder(s, h, c, q, now, out, outlen)) > 0)
			return n;
		return deny_query(s, h, c, cl, q, out, outlen);
	}
	switch (q->qtype) {
	case DNS_T_HTTPS:
	case DNS_T_SVCB:
		/* no ECH keys (or alt endpoints) reach a cage */
		count_verdict(h, GK_DNSV_FILTERED);
		return dns_reply_empty(q, DNS_RC_NOERROR, out, outlen);
	case DNS_T_ANY:
		count_verdict(h, GK_DNSV_ALLOWED);
		return dns_reply_rfc8482(q, s->ttl_cap, out, outlen);
	case 251:	/* IXFR */
	case 252:	/* AXFR */
		count_verdict(h, GK_DNSV_NOTIMP);
		return dns_reply_empty(q, DNS_RC_NOTIMP, out, outlen);
	default:
		return answer_allowed(s, h, cl, c, q, now, out, outlen);
	}
}

/*
 * The answer's latency, by verdict: now for an answer made at once, when
 * it comes for one asked upstream (answer_waiter). A query dropped
 * unanswered (over the cage's rate, unparsable) is not observed. One
 * debug line per query, with its id: what was asked, by which cage, the
 * verdict and (answered now) the time it took; a query asked upstream
 * has its answer line when the answer comes.
 */
size_t
dns_handle_query(struct dns_server *s, const struct dns_client *cl,
    const uint8_t *buf, size_t len, time_t now, uint8_t *out, size_t outlen)
{
	struct dns_handling h = { .id = ++s->next_query_id,
	    .start_us = gk_clock_us(), .verdict = GK_DNSV__MAX };
	struct dns_query q;
	char name[DNS_NAME_TEXT_MAX + 64];
	uint64_t took;
	size_t n;

	n = handle_query(s, &h, cl, buf, len, &q, now, out, outlen);
	if (h.verdict == GK_DNSV__MAX)
		return n;
	took = gk_clock_us() - h.start_us;
	if (n > 0)
		gk_hist_observe(&gk_stats.dns_answer[h.verdict], took);
	if (log_getlevel() < LOG_LVL_DEBUG)
		return n;
	/* a name carrying a placeholder's bytes is logged redacted */
	if (h.q != NULL && h.cage != NULL && gk_cred_count(h.cage) > 0)
		gk_cred_redact(h.cage, h.q->name, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", h.q != NULL ? h.q->name :
		    "-");
	log_debug("q=%llu cage=%s name=%s qtype=%u verdict=%s %s",
	    (unsigned long long)h.id, h.cage != NULL ? gk_cage_id(h.cage) : "-",
	    name, h.q != NULL ? h.q->qtype : 0,
	    gk_dns_verdict_name(h.verdict), n > 0 ? "answered" :
	    "asked upstream");
	return n;
}

/* ---- lookups for the proxies ---- */

/* A query message for name/qtype, parsed into q. */
static int
lookup_query(const char *name, uint16_t qtype, struct dns_query *q)
{
	uint8_t msg[DNS_HDR_LEN + DNS_MAX_NAME + 4];
	size_t len;

	if ((len = dns_build_lookup(name, qtype, msg, sizeof(msg))) == 0 ||
	    dns_query_parse(msg, len, q) != DNS_OK || !q->name_host)
		return -1;
	return 0;
}

/* The cache's answer for q (counted as a hit); false when it has none. */
static bool
lookup_cache(struct dns_server *s, const struct dns_query *q,
    struct dns_lookup_result *res)
{
	const struct dns_cached *e;

	if (s->cache == NULL || (e = dns_cache_get(s->cache, q->name,
	    q->name_len, q->qtype, q->qclass, s->ttl_cap, gk_now())) == NULL)
		return false;
	gk_stats.dns_cache_hits++;
	lookup_fill(res, e->rcode, e->addrs, e->naddrs);
	return true;
}

bool
dns_lookup_cached(struct dns_server *s, const char *name, int family,
    struct dns_lookup_result *res)
{
	uint16_t qtype = family == AF_INET6 ? DNS_T_AAAA : DNS_T_A;
	struct dns_query q;

	return (family == AF_INET || family == AF_INET6) &&
	    lookup_query(name, qtype, &q) == 0 && lookup_cache(s, &q, res);
}

enum dns_lookup_status
dns_lookup(struct dns_server *s, const char *name, int family,
    dns_lookup_cb cb, void *arg, struct dns_lookup_result *res,
    struct dns_waiter **handle)
{
	uint16_t qtype = family == AF_INET6 ? DNS_T_AAAA : DNS_T_A;
	struct dns_pending *p;
	struct dns_query q;

	*handle = NULL;
	if ((family != AF_INET && family != AF_INET6) ||
	    lookup_query(name, qtype, &q) == -1)
		return DNS_LOOKUP_FAILED;
	if (lookup_cache(s, &q, res))
		return DNS_LOOKUP_DONE;
	gk_stats.dns_cache_misses++;
	if ((p = forward_start(s, &q)) == NULL)
		return DNS_LOOKUP_FAILED;
	if ((*handle = pending_add_lookup(p, &q, cb, arg)) == NULL)
		return DNS_LOOKUP_FAILED;
	forward_send(s, p);
	return DNS_LOOKUP_PENDING;
}

void
dns_lookup_cancel(struct dns_waiter *w)
{
	if (w != NULL)
		w->cancelled = true;
}
