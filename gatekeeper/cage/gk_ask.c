/*
 * gk_ask: questions, their waiting connections, and placeholders.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/state/gk_audit.h"

/* 198.18.0.0/15; placeholders count up from 198.18.0.1. */
#define NET_FIRST	((198u << 24) | (18u << 16))
#define NET_MASK	0xfffe0000u
#define GK_PATTERN_TEXT_MAX	(GK_NAME_MAX + 64)	/* "*.name:port", CIDR */

struct gk_ask_wait {
	TAILQ_ENTRY(gk_ask_wait) entry;
	struct question		*q;
	gk_ask_cb		 cb;
	void			*arg;
};

struct question {
	TAILQ_ENTRY(question)	 entry;
	struct gk_ask		*ask;
	uint64_t		 id;
	char			 host[GK_NAME_MAX + 1];
	uint16_t		 port;
	enum gk_deny_kind	 kind;
	uint64_t		 asked_ms;	/* gk_clock_ms() */
	uint32_t		 held;		/* connections, ever */
	struct event		*timer;
	TAILQ_HEAD(, gk_ask_wait) waits;
};

struct denied {
	uint32_t	 hash;
	uint16_t	 port;
	char		*host;
};

struct placeholder {
	uint32_t	 hash;
	char		*name;		/* NULL: unused */
};

struct gk_ask {
	struct gk_cage		*cage;
	struct event_base	*base;
	struct gk_audit		*audit;
	uint32_t		 timeout;
	TAILQ_HEAD(, question)	 questions;
	size_t			 nquestions;
	struct denied		 denied[GK_ASK_DENIED_MAX];
	size_t			 ndenied;
	struct placeholder	*ph;		/* GK_ASK_PLACEHOLDERS */
	size_t			 ph_next;	/* the next to (re)use */
};

/* Question ids: unique in the daemon's run, never 0. */
static uint64_t next_id = 1;

static struct gk_ask *
ask_of(const struct gk_cage *c)
{
	return gk_cage_facet(c, GK_FACET_ASK);
}

bool
gk_cage_asks(const struct gk_cage *c)
{
	return ask_of(c) != NULL;
}

int
gk_ask_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct gk_ask *a;

	if (!s->ask)
		return 0;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->ph = calloc(GK_ASK_PLACEHOLDERS, sizeof(*a->ph))) == NULL) {
		free(a);
		snprintf(err, errlen, "cannot create the cage: out of memory");
		return -1;
	}
	a->cage = c;
	a->base = gk_cage_base(c);
	a->audit = gk_cage_audit(c);
	a->timeout = s->ask_timeout;
	TAILQ_INIT(&a->questions);
	gk_cage_facet_set(c, GK_FACET_ASK, a);
	log_info("cage=%s action=ask: names outside its allowlist are held "
	    "and its owner asked (%u s)", gk_cage_id(c), a->timeout);
	return 0;
}

static void
question_free(struct question *q)
{
	struct gk_ask_wait *w;

	while ((w = TAILQ_FIRST(&q->waits)) != NULL) {
		TAILQ_REMOVE(&q->waits, w, entry);
		free(w);
	}
	if (q->timer != NULL)
		event_free(q->timer);
	free(q);
}

void
gk_ask_end(struct gk_cage *c, const char *reason)
{
	struct gk_ask *a = ask_of(c);
	struct question *q;
	size_t i;

	(void)reason;
	if (a == NULL)
		return;
	while ((q = TAILQ_FIRST(&a->questions)) != NULL) {
		TAILQ_REMOVE(&a->questions, q, entry);
		question_free(q);
	}
	for (i = 0; i < a->ndenied; i++)
		free(a->denied[i].host);
	for (i = 0; i < GK_ASK_PLACEHOLDERS; i++)
		free(a->ph[i].name);
	free(a->ph);
	free(a);
	gk_cage_facet_set(c, GK_FACET_ASK, NULL);
}

/* ---- placeholders ------------------------------------------------------ */

/* An IPv4 address as a number, host order. */
static uint32_t
v4(const struct gk_addr *a)
{
	return ((uint32_t)a->bytes[0] << 24) | ((uint32_t)a->bytes[1] << 16) |
	    ((uint32_t)a->bytes[2] << 8) | a->bytes[3];
}

bool
gk_ask_net(const struct gk_addr *a)
{
	return a->family == AF_INET && (v4(a) & NET_MASK) == NET_FIRST;
}

/* Placeholder i's address. */
static void
ph_addr(size_t i, struct gk_addr *out)
{
	uint32_t v = NET_FIRST + 1 + (uint32_t)i;
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };

	gk_addr_from_bytes(out, AF_INET, b);
}

int
gk_ask_placeholder(struct gk_cage *c, const char *name, struct gk_addr *out)
{
	struct gk_ask *a = ask_of(c);
	uint32_t h = gk_hash_str(GK_HASH_INIT, name);
	struct placeholder *p;
	char *copy;
	size_t i;

	if (a == NULL)
		return -1;
	for (i = 0; i < GK_ASK_PLACEHOLDERS && a->ph[i].name != NULL; i++) {
		if (a->ph[i].hash == h && strcmp(a->ph[i].name, name) == 0) {
			ph_addr(i, out);
			return 0;
		}
	}
	if ((copy = strdup(name)) == NULL)
		return -1;
	i = a->ph_next;
	a->ph_next = (a->ph_next + 1) % GK_ASK_PLACEHOLDERS;
	p = &a->ph[i];
	free(p->name);
	p->name = copy;
	p->hash = h;
	ph_addr(i, out);
	return 0;
}

const char *
gk_ask_placeholder_name(const struct gk_cage *c, const struct gk_addr *a)
{
	uint32_t v;

	if (ask_of(c) == NULL || !gk_ask_net(a))
		return NULL;
	v = v4(a) - (NET_FIRST + 1);
	if (v >= GK_ASK_PLACEHOLDERS)
		return NULL;
	return ask_of(c)->ph[v].name;
}

/* ---- denied for the cage's life ---------------------------------------- */

static uint32_t
hp_hash(const char *host, uint16_t port)
{
	return gk_hash_str(GK_HASH_INIT ^ port, host);
}

static bool
is_denied(const struct gk_ask *a, const char *host, uint16_t port)
{
	uint32_t h = hp_hash(host, port);
	size_t i;

	for (i = 0; i < a->ndenied; i++)
		if (a->denied[i].hash == h && a->denied[i].port == port &&
		    strcmp(a->denied[i].host, host) == 0)
			return true;
	return false;
}

/* Past GK_ASK_DENIED_MAX a denied host:port is asked about again. */
static void
add_denied(struct gk_ask *a, const char *host, uint16_t port)
{
	struct denied *d;

	if (a->ndenied == GK_ASK_DENIED_MAX || is_denied(a, host, port))
		return;
	d = &a->denied[a->ndenied];
	if ((d->host = strdup(host)) == NULL)
		return;
	d->hash = hp_hash(host, port);
	d->port = port;
	a->ndenied++;
}

/* ---- questions ---------------------------------------------------------- */

/* host:port joins the cage's allowlist (run, save). */
static int
allow_more(struct gk_cage *c, const char *host, uint16_t port)
{
	char pat[GK_PATTERN_TEXT_MAX], err[256];
	const char *add[1] = { pat };
	struct gk_allowlist *al;

	snprintf(pat, sizeof(pat), "%s:%u", host, port);
	if ((al = gk_allowlist_edit(gk_cage_allow(c), NULL, NULL, add, 1, err,
	    sizeof(err))) == NULL) {
		log_warnx("cage=%s host=%s port=%u: cannot add it to the "
		    "allowlist: %s", gk_cage_id(c), host, port, err);
		return -1;
	}
	gk_cage_set_allow(c, al);
	return 0;
}

static void
audit_ask(const struct question *q, enum gk_decision d, const char *by,
    uint64_t waited)
{
	struct gk_ask *a = q->ask;
	json_object *o;

	log_info("cage=%s ask=%llu host=%s port=%u kind=%s decision=%s by=%s "
	    "waited_ms=%llu connections=%u", gk_cage_id(a->cage),
	    (unsigned long long)q->id, q->host, q->port,
	    gk_deny_kind_name(q->kind), gk_decision_name(d), by,
	    (unsigned long long)waited, q->held);
	if (a->audit == NULL)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "ask", json_object_new_int64(
	    (int64_t)q->id));
	json_object_object_add(o, "kind", json_object_new_string(
	    gk_deny_kind_name(q->kind)));
	json_object_object_add(o, "host", json_object_new_string(q->host));
	json_object_object_add(o, "port", json_object_new_int(q->port));
	json_object_object_add(o, "decision", json_object_new_string(
	    gk_decision_name(d)));
	json_object_object_add(o, "by", json_object_new_string(by));
	json_object_object_add(o, "waited_ms", json_object_new_int64(
	    (int64_t)waited));
	json_object_object_add(o, "connections", json_object_new_int64(
	    q->held));
	gk_audit_event(a->audit, "proxy.ask", a->cage, o);
}

/*
 * The question ends: counted, told, audited; run and save widen the
 * allowlist, deny remembers host:port; then each waiting connection
 * learns d (each waiter is gone before its callback runs).
 */
static void
finish(struct question *q, enum gk_decision d, const char *by)
{
	struct gk_ask *a = q->ask;
	TAILQ_HEAD(, gk_ask_wait) waits;
	struct gk_ask_wait *w;
	gk_ask_cb cb;
	void *arg;
	uint64_t waited = gk_clock_ms() - q->asked_ms;

	TAILQ_REMOVE(&a->questions, q, entry);
	a->nquestions--;
	gk_stats.asks[d]++;
	if ((d == GK_DECISION_RUN || d == GK_DECISION_SAVE) &&
	    allow_more(a->cage, q->host, q->port) == -1)
		d = GK_DECISION_ONCE;	/* they go on all the same */
	if (d == GK_DECISION_DENY)
		add_denied(a, q->host, q->port);
	gk_events_ask_done(a->cage, q->id, q->host, q->port,
	    gk_decision_name(d), by);
	audit_ask(q, d, by, waited);
	TAILQ_INIT(&waits);
	TAILQ_CONCAT(&waits, &q->waits, entry);
	question_free(q);
	while ((w = TAILQ_FIRST(&waits)) != NULL) {
		TAILQ_REMOVE(&waits, w, entry);
		cb = w->cb;
		arg = w->arg;
		free(w);
		cb(arg, d);
	}
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	finish(arg, GK_DECISION_TIMEOUT, "gatekeeperd");
}

static struct question *
question_new(struct gk_ask *a, const char *host, uint16_t port,
    enum gk_deny_kind kind)
{
	struct timeval tv = { (time_t)a->timeout, 0 };
	struct question *q;

	if (a->nquestions >= GK_ASK_QUESTIONS_MAX ||
	    (q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->ask = a;
	q->id = next_id++;
	snprintf(q->host, sizeof(q->host), "%s", host);
	q->port = port;
	q->kind = kind;
	q->asked_ms = gk_clock_ms();
	TAILQ_INIT(&q->waits);
	if ((q->timer = evtimer_new(a->base, timeout_cb, q)) == NULL ||
	    evtimer_add(q->timer, &tv) == -1) {
		question_free(q);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&a->questions, q, entry);
	a->nquestions++;
	gk_events_ask(a->cage, q->id, host, port, kind, a->timeout);
	return q;
}

enum gk_ask_status
gk_ask_hold(struct gk_cage *c, const char *host, uint16_t port,
    enum gk_deny_kind kind, gk_ask_cb cb, void *arg, struct gk_ask_wait **w)
{
	struct gk_ask *a = ask_of(c);
	struct question *q;

	*w = NULL;
	if (a == NULL)
		return GK_ASK_FULL;
	if (is_denied(a, host, port))
		return GK_ASK_DENIED;
	TAILQ_FOREACH(q, &a->questions, entry)
		if (q->port == port && strcmp(q->host, host) == 0)
			break;
	if (q == NULL && (q = question_new(a, host, port, kind)) == NULL)
		return GK_ASK_FULL;
	if ((*w = calloc(1, sizeof(**w))) == NULL)
		return GK_ASK_FULL;	/* the question stays asked */
	(*w)->q = q;
	(*w)->cb = cb;
	(*w)->arg = arg;
	q->held++;
	TAILQ_INSERT_TAIL(&q->waits, *w, entry);
	return GK_ASK_HELD;
}

void
gk_ask_cancel(struct gk_ask_wait *w)
{
	if (w == NULL)
		return;
	TAILQ_REMOVE(&w->q->waits, w, entry);
	free(w);
}

int
gk_ask_decide(struct gk_cage *c, uint64_t id, enum gk_decision d,
    const char *by, char *err, size_t errlen)
{
	struct question *q = NULL;

	if (ask_of(c) != NULL)
		TAILQ_FOREACH(q, &ask_of(c)->questions, entry)
			if (q->id == id)
				break;
	if (q == NULL) {
		snprintf(err, errlen, "cage %s has no open question %llu%s",
		    gk_cage_id(c), (unsigned long long)id, ask_of(c) == NULL ?
		    " (it does not ask: create it with \"ask\":true)" :
		    " (answered already, or it timed out)");
		return -1;
	}
	if (d == GK_DECISION_TIMEOUT) {
		snprintf(err, errlen, "\"timeout\" is not an answer; once, "
		    "run, save or deny");
		return -1;
	}
	finish(q, d, by);
	return 0;
}

size_t
gk_ask_open(const struct gk_cage *c)
{
	return ask_of(c) != NULL ? ask_of(c)->nquestions : 0;
}

void
gk_ask_foreach(const struct gk_cage *c,
    void (*cb)(const struct gk_ask_info *, void *), void *arg)
{
	const struct question *q;
	struct gk_ask_info info;
	uint64_t now = gk_clock_ms(), age;

	if (ask_of(c) == NULL)
		return;
	TAILQ_FOREACH(q, &ask_of(c)->questions, entry) {
		age = now > q->asked_ms ? now - q->asked_ms : 0;
		info.id = q->id;
		info.host = q->host;
		info.port = q->port;
		info.kind = q->kind;
		info.age_ms = age;
		info.left_ms = (uint64_t)ask_of(c)->timeout * 1000 > age ?
		    (uint64_t)ask_of(c)->timeout * 1000 - age : 0;
		info.held = q->held;
		cb(&info, arg);
	}
}

uint32_t
gk_ask_timeout(const struct gk_cage *c)
{
	return ask_of(c) != NULL ? ask_of(c)->timeout : 0;
}
