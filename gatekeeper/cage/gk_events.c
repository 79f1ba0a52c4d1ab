/*
 * gk_events: deny events for a cage's owner, deduplicated per cage.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_events.h"

/* The distinct denials told so far: an open-addressing set of hashes
 * (0 is empty; twice the room, so probes stay short). */
struct seen {
	uint32_t	 n;
	bool		 full;
	uint32_t	 slot[2 * GK_EVENTS_DISTINCT];
};

struct gk_cage_events {
	struct seen	 deny;
	struct seen	 learn;
	struct seen	 fail;		/* upstream failures told */
};

/* A cage's recent distinct denials, for cage.show and denials. */
struct recent {
	int64_t		 ms;		/* the last one, gk_wall_ms() */
	uint64_t	 seq;		/* when last, in the cage's order */
	uint32_t	 hash;		/* deny_hash() */
	uint32_t	 count;
	uint16_t	 port;
	uint8_t		 kind;		/* enum gk_deny_kind */
	uint8_t		 reason;	/* enum gk_deny_reason */
	char		 host[GK_NAME_MAX + 1];
};

struct gk_cage_recent {
	struct recent	 r[GK_EVENTS_RECENT];
	size_t		 n;
	size_t		 next;		/* full: the slot a new one takes */
	uint64_t	 seq;
};

/* The events facet's slot. */
struct events {
	struct gk_cage_events	*ev;	/* NULL: its owner is told none */
	struct gk_cage_recent	*recent;	/* made at the first */
};

/* Connections following denials ("denials" with "follow"). */
static TAILQ_HEAD(, gk_events_watch) watchers =
    TAILQ_HEAD_INITIALIZER(watchers);

#define NSLOTS	(2 * GK_EVENTS_DISTINCT)
/* A watcher's line waits only with this much room to spare after it. */
#define WATCH_SPARE	64

/* Is h new? Then it is remembered (false when the set is full). */
static bool
seen_add(struct seen *e, uint32_t h, bool *full)
{
	size_t i = h % NSLOTS, probes;

	*full = false;
	for (probes = 0; probes < NSLOTS; probes++, i = (i + 1) % NSLOTS) {
		if (e->slot[i] == h)
			return false;
		if (e->slot[i] == 0)
			break;
	}
	if (e->n >= GK_EVENTS_DISTINCT) {
		*full = true;
		return false;
	}
	e->slot[i] = h;
	e->n++;
	return true;
}

static struct events *
slot(const struct gk_cage *c)
{
	return gk_cage_facet(c, GK_FACET_EVENTS);
}

/* c's set of what its owner was told; NULL: it is told nothing. */
static struct gk_cage_events *
ev_of(const struct gk_cage *c)
{
	struct events *e = slot(c);

	return e != NULL && gk_cage_owner(c) != NULL ? e->ev : NULL;
}

/* One line to c's owner (takes o). */
static void
tell_owner(const struct gk_cage *c, struct json_object *o)
{
	struct gk_cage_owner *ow = gk_cage_owner(c);

	if (ow == NULL || ow->sink.send == NULL) {
		json_object_put(o);
		return;
	}
	(void)ow->sink.send(&ow->sink, o, 0);
}

static struct json_object *
owner_event(const struct gk_cage *c, const char *event)
{
	struct json_object *o = json_object_new_object();
	char ts[GK_UTC_STAMP_LEN];

	gk_utc_stamp(ts, sizeof(ts));
	json_object_object_add(o, "event", json_object_new_string(event));
	json_object_object_add(o, "cage",
	    json_object_new_string(gk_cage_id(c)));
	json_object_object_add(o, "time", json_object_new_string(ts));
	return o;
}

/*
 * Is the event hashed to h new in set e? Then it is remembered. When e is
 * full, `more` (the "... .more" line) is told once and false returned.
 */
static bool
tell_once(const struct gk_cage *c, struct seen *e, uint32_t h,
    const char *more)
{
	bool full;

	if (seen_add(e, h != 0 ? h : 1, &full))
		return true;
	if (full && !e->full) {
		e->full = true;
		tell_owner(c, owner_event(c, more));
	}
	return false;
}

/* A denial's hash: the owner's set of what was told, the recent ones. */
static uint32_t
deny_hash(const char *host, uint16_t port, enum gk_deny_reason reason)
{
	return gk_hash_str(GK_HASH_INIT ^ port ^ ((uint32_t)reason << 16),
	    host);
}

/*
 * Remember the denial (hashed to h by deny_hash) among c's recent ones: a repeat updates its entry
 * in place, a new one takes the slot of the one first remembered (a ring;
 * no copying on the denial path).
 */
static void
remember(struct gk_cage *c, uint32_t h, enum gk_deny_kind kind,
    const char *host, uint16_t port, enum gk_deny_reason reason)
{
	struct events *e = slot(c);
	struct gk_cage_recent *rc;
	struct recent *r;
	size_t i;

	if (e == NULL || ((rc = e->recent) == NULL &&
	    (rc = e->recent = calloc(1, sizeof(*rc))) == NULL))
		return;
	for (i = 0; i < rc->n; i++) {
		r = &rc->r[i];
		if (r->hash == h && r->port == port && r->kind == kind &&
		    r->reason == reason && strcmp(r->host, host) == 0)
			break;
	}
	if (i == rc->n) {
		if (rc->n < GK_EVENTS_RECENT)
			i = rc->n++;
		else {
			i = rc->next;
			rc->next = (rc->next + 1) % GK_EVENTS_RECENT;
		}
		r = &rc->r[i];
		snprintf(r->host, sizeof(r->host), "%s", host);
		r->hash = h;
		r->port = port;
		r->kind = (uint8_t)kind;
		r->reason = (uint8_t)reason;
		r->count = 0;
	}
	r = &rc->r[i];
	r->ms = gk_wall_ms();
	r->seq = ++rc->seq;
	r->count++;
}

/* What a denial line says of the denial itself. */
static void
deny_members(struct json_object *o, enum gk_deny_kind kind,
    const char *host, uint16_t port, enum gk_deny_reason reason)
{
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(kind)));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "reason",
	    json_object_new_string(gk_deny_reason_name(reason)));
}

static struct json_object *
denial_json(const struct gk_cage *c, const char *event, int64_t ms,
    enum gk_deny_kind kind, const char *host, uint16_t port,
    enum gk_deny_reason reason)
{
	struct json_object *o = json_object_new_object();
	char ts[GK_UTC_STAMP_LEN];

	gk_utc_stamp_at(ts, sizeof(ts), ms);
	if (event != NULL)
		json_object_object_add(o, "event",
		    json_object_new_string(event));
	json_object_object_add(o, "cage",
	    json_object_new_string(gk_cage_id(c)));
	json_object_object_add(o, "label",
	    json_object_new_string(gk_cage_label(c)));
	json_object_object_add(o, "time", json_object_new_string(ts));
	deny_members(o, kind, host, port, reason);
	return o;
}

static int
by_last(const void *x, const void *y)
{
	const struct recent *a = *(const struct recent *const *)x;
	const struct recent *b = *(const struct recent *const *)y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void
gk_events_recent_json(const struct gk_cage *c, struct json_object *arr)
{
	const struct recent *v[GK_EVENTS_RECENT];
	struct json_object *o;
	const struct gk_cage_recent *rc = slot(c) != NULL ? slot(c)->recent :
	    NULL;
	size_t i, n = rc != NULL ? rc->n : 0;

	for (i = 0; i < n; i++)
		v[i] = &rc->r[i];
	qsort(v, n, sizeof(v[0]), by_last);	/* oldest last one first */
	for (i = 0; i < n; i++) {
		o = denial_json(c, NULL, v[i]->ms, v[i]->kind, v[i]->host,
		    v[i]->port, v[i]->reason);
		json_object_object_add(o, "count",
		    json_object_new_int64(v[i]->count));
		json_object_array_add(arr, o);
	}
}

/* May this watcher see cage c's events? */
static bool
watches(const struct gk_events_watch *w, const struct gk_cage *c)
{
	return (w->uid == 0 || w->uid == gk_cage_uid(c)) &&
	    (w->id[0] == '\0' || strcmp(w->id, gk_cage_id(c)) == 0);
}

/* A line for a watcher, after a note of what was dropped before it. */
static void
watch_send(struct gk_events_watch *w, struct json_object *o)
{
	struct json_object *d;

	if (w->dropped > 0) {
		d = json_object_new_object();
		json_object_object_add(d, "event",
		    json_object_new_string("deny.dropped"));
		json_object_object_add(d, "count",
		    json_object_new_uint64(w->dropped));
		/* room for it and the line: else both wait for later */
		if (!w->sink->send(w->sink, d, WATCH_SPARE +
		    strlen(json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)))) {
			w->dropped++;
			json_object_put(o);
			return;
		}
		w->dropped = 0;
	}
	if (!w->sink->send(w->sink, o, WATCH_SPARE))
		w->dropped++;
}

void
gk_events_watch(struct gk_events_watch *w, struct gk_line_sink *sink,
    uid_t uid, const char *id)
{
	w->sink = sink;
	w->uid = uid;
	snprintf(w->id, sizeof(w->id), "%s", id);
	if (!w->on)
		TAILQ_INSERT_TAIL(&watchers, w, entry);
	w->on = true;
}

void
gk_events_unwatch(struct gk_events_watch *w)
{
	if (w->on)
		TAILQ_REMOVE(&watchers, w, entry);
	w->on = false;
}

void
gk_events_cage_end(const struct gk_cage *c)
{
	struct gk_events_watch *w;
	struct json_object *o;

	TAILQ_FOREACH(w, &watchers, entry) {
		if (!watches(w, c))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "event",
		    json_object_new_string("cage.end"));
		json_object_object_add(o, "cage",
	    json_object_new_string(gk_cage_id(c)));
		json_object_object_add(o, "label",
		    json_object_new_string(gk_cage_label(c)));
		watch_send(w, o);
	}
}

void
gk_events_owner_end(const struct gk_cage *c, uid_t by)
{
	char why[64];

	snprintf(why, sizeof(why), "destroyed by uid %u", (unsigned)by);
	gk_events_owner_told(c, why);
}

void
gk_events_owner_told(const struct gk_cage *c, const char *why)
{
	struct json_object *o;

	if (gk_cage_owner(c) == NULL)
		return;
	o = owner_event(c, "cage.end");
	json_object_object_add(o, "reason", json_object_new_string(why));
	tell_owner(c, o);
}

void
gk_events_deny(struct gk_cage *c, enum gk_deny_kind kind, const char *host,
    uint16_t port, enum gk_deny_reason reason, const char *why)
{
	struct gk_cage_events *ev;
	struct gk_events_watch *w;
	struct json_object *o;
	uint32_t h;

	if (c == NULL)
		return;
	h = deny_hash(host, port, reason);
	remember(c, h, kind, host, port, reason);
	TAILQ_FOREACH(w, &watchers, entry) {
		if (!watches(w, c))
			continue;
		o = denial_json(c, "deny", gk_wall_ms(), kind, host, port,
		    reason);
		if (why != NULL && why[0] != '\0')
			json_object_object_add(o, "why",
			    json_object_new_string(why));
		watch_send(w, o);
	}
	if ((ev = ev_of(c)) == NULL || !tell_once(c, &ev->deny, h,
	    "deny.more"))
		return;
	o = owner_event(c, "deny");
	deny_members(o, kind, host, port, reason);
	if (why != NULL && why[0] != '\0')
		json_object_object_add(o, "why", json_object_new_string(why));
	tell_owner(c, o);
}

void
gk_events_unreachable(const struct gk_cage *c, enum gk_deny_kind kind,
    const char *host, uint16_t port, const char *failure, const char *why)
{
	struct gk_cage_events *ev;
	struct json_object *o;

	if (c == NULL || (ev = ev_of(c)) == NULL || !tell_once(c, &ev->fail,
	    gk_hash_str(GK_HASH_INIT ^ port ^ 0x3c3c0000u, host),
	    "unreachable.more"))
		return;
	o = owner_event(c, "unreachable");
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(kind)));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "failure", json_object_new_string(failure));
	json_object_object_add(o, "why", json_object_new_string(why));
	tell_owner(c, o);
}

void
gk_events_learn(const struct gk_cage *c, const char *name, size_t len,
    uint16_t port)
{
	struct gk_cage_events *ev = ev_of(c);
	char host[GK_NAME_MAX + 1];
	struct json_object *o;

	if (ev == NULL || len >= sizeof(host))
		return;
	memcpy(host, name, len);
	host[len] = '\0';
	if (!tell_once(c, &ev->learn, gk_hash_str(GK_HASH_INIT ^ port ^
	    0x5a5a0000u, host), "learn.more"))
		return;
	o = owner_event(c, "learn");
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	tell_owner(c, o);
}

void
gk_events_learn_request(const struct gk_cage *c, const char *host,
    uint16_t port, const char *method, const char *path)
{
	struct gk_cage_events *ev = ev_of(c);
	struct json_object *o;
	uint32_t h;

	if (ev == NULL)
		return;
	h = gk_hash_str(gk_hash_str(gk_hash_str(GK_HASH_INIT ^ port ^
	    0xa5a50000u, host), method), path);
	if (!tell_once(c, &ev->learn, h, "learn.more"))
		return;
	o = owner_event(c, "learn.request");
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "path", json_object_new_string(path));
	tell_owner(c, o);
}

void
gk_events_limit(const struct gk_cage *c, const char *limit, uint64_t value,
    uint64_t count)
{
	struct json_object *o;

	if (ev_of(c) == NULL || count == 0)
		return;
	o = owner_event(c, "limit");
	json_object_object_add(o, "limit", json_object_new_string(limit));
	json_object_object_add(o, "value", json_object_new_int64(
	    (int64_t)value));
	json_object_object_add(o, "count", json_object_new_int64(
	    (int64_t)count));
	tell_owner(c, o);
}

/* The members an ask line and its ask.done share. */
static struct json_object *
ask_line(const struct gk_cage *c, const char *event, uint64_t id,
    const char *host, uint16_t port)
{
	struct json_object *o = owner_event(c, event);
	char ids[24];

	snprintf(ids, sizeof(ids), "%llu", (unsigned long long)id);
	json_object_object_add(o, "id", json_object_new_string(ids));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	return o;
}

void
gk_events_ask(const struct gk_cage *c, uint64_t id, const char *host,
    uint16_t port, enum gk_deny_kind kind, uint32_t timeout)
{
	struct json_object *o;

	if (ev_of(c) == NULL)
		return;
	o = ask_line(c, "ask", id, host, port);
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(kind)));
	json_object_object_add(o, "timeout", json_object_new_int64(timeout));
	tell_owner(c, o);
}

void
gk_events_ask_done(const struct gk_cage *c, uint64_t id, const char *host,
    uint16_t port, const char *decision, const char *by)
{
	struct json_object *o;

	if (ev_of(c) == NULL)
		return;
	o = ask_line(c, "ask.done", id, host, port);
	json_object_object_add(o, "decision",
	    json_object_new_string(decision));
	json_object_object_add(o, "by", json_object_new_string(by));
	tell_owner(c, o);
}

int
gk_events_begin(struct gk_cage *c, const struct gk_cage_spec *s, char *err,
    size_t errlen)
{
	struct events *e;

	if ((e = calloc(1, sizeof(*e))) == NULL ||
	    ((s->events || s->learn || s->ask) &&
	    (e->ev = calloc(1, sizeof(*e->ev))) == NULL)) {
		free(e);
		snprintf(err, errlen, "cannot create the cage: out of memory");
		return -1;
	}
	gk_cage_facet_set(c, GK_FACET_EVENTS, e);
	return 0;
}

void
gk_events_end(struct gk_cage *c, const char *reason)
{
	struct events *e = slot(c);

	(void)reason;
	if (e == NULL)
		return;
	gk_cage_facet_set(c, GK_FACET_EVENTS, NULL);
	free(e->ev);
	free(e->recent);
	free(e);
}
