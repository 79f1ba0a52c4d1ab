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
#include "gatekeeper/state/gk_cage.h"
#include "gatekeeper/state/gk_control_int.h"
#include "gatekeeper/state/gk_events.h"

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

/* Connections following denials ("denials" with "follow"). */
static TAILQ_HEAD(, ctlconn) watchers = TAILQ_HEAD_INITIALIZER(watchers);

#define NSLOTS	(2 * GK_EVENTS_DISTINCT)

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

/*
 * Send one line to the owner now if nothing waits before it (so it is in
 * gk-run's socket before the denied client hears its refusal, which is
 * sent after this), else queue it; dropped when too much waits already.
 */
static void
send_line(struct ctlconn *cc, struct json_object *o)
{
	struct evbuffer *out;
	struct iovec iov[2];
	struct msghdr mh;
	const char *s;
	size_t len, done = 0;
	ssize_t n;

	if (cc->bev == NULL || cc->state != CTL_ST_READY) {
		json_object_put(o);
		return;
	}
	out = bufferevent_get_output(cc->bev);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	if (evbuffer_get_length(out) + len + 1 >= GK_EVENTS_BUFFERED) {
		json_object_put(o);
		return;
	}
	if (evbuffer_get_length(out) == 0) {
		iov[0].iov_base = (void *)(uintptr_t)s;
		iov[0].iov_len = len;
		iov[1].iov_base = (void *)(uintptr_t)"\n";
		iov[1].iov_len = 1;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = 2;
		n = sendmsg(bufferevent_getfd(cc->bev), &mh,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			done = (size_t)n;
	}
	if (done < len)
		bufferevent_write(cc->bev, s + done, len - done);
	if (done < len + 1)
		bufferevent_write(cc->bev, "\n", 1);
	json_object_put(o);
}

static struct json_object *
owner_event(const struct gk_cage *c, const char *event)
{
	struct json_object *o = json_object_new_object();
	char ts[GK_UTC_STAMP_LEN];

	gk_utc_stamp(ts, sizeof(ts));
	json_object_object_add(o, "event", json_object_new_string(event));
	json_object_object_add(o, "cage", json_object_new_string(c->id));
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
		send_line(c->owner, owner_event(c, more));
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
	struct gk_cage_recent *rc = c->recent;
	struct recent *r;
	size_t i;

	if (rc == NULL && (rc = c->recent = calloc(1, sizeof(*rc))) == NULL)
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
	json_object_object_add(o, "cage", json_object_new_string(c->id));
	json_object_object_add(o, "label", json_object_new_string(c->label));
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
	size_t i, n = c->recent != NULL ? c->recent->n : 0;

	for (i = 0; i < n; i++)
		v[i] = &c->recent->r[i];
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
watches(const struct ctlconn *cc, const struct gk_cage *c)
{
	return (cc->uid == 0 || cc->uid == c->uid) &&
	    (cc->watch_id[0] == '\0' || strcmp(cc->watch_id, c->id) == 0);
}

/* A line for a watcher, after a note of what was dropped before it. */
static void
watch_send(struct ctlconn *cc, struct json_object *o)
{
	struct evbuffer *out;
	struct json_object *d;
	size_t len;

	if (cc->bev == NULL || cc->state != CTL_ST_READY) {
		json_object_put(o);
		return;
	}
	out = bufferevent_get_output(cc->bev);
	len = strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
	if (evbuffer_get_length(out) + len + 64 >= GK_EVENTS_BUFFERED) {
		cc->watch_dropped++;
		json_object_put(o);
		return;
	}
	if (cc->watch_dropped > 0) {
		d = json_object_new_object();
		json_object_object_add(d, "event",
		    json_object_new_string("deny.dropped"));
		json_object_object_add(d, "count",
		    json_object_new_uint64(cc->watch_dropped));
		cc->watch_dropped = 0;
		send_line(cc, d);
	}
	send_line(cc, o);
}

void
gk_events_watch(struct ctlconn *cc, const char *id)
{
	snprintf(cc->watch_id, sizeof(cc->watch_id), "%s", id);
	if (!cc->watching)
		TAILQ_INSERT_TAIL(&watchers, cc, watch_entry);
	cc->watching = true;
}

void
gk_events_unwatch(struct ctlconn *cc)
{
	if (cc->watching)
		TAILQ_REMOVE(&watchers, cc, watch_entry);
	cc->watching = false;
}

void
gk_events_cage_end(const struct gk_cage *c)
{
	struct json_object *o;
	struct ctlconn *cc;

	TAILQ_FOREACH(cc, &watchers, watch_entry) {
		if (!watches(cc, c))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "event",
		    json_object_new_string("cage.end"));
		json_object_object_add(o, "cage", json_object_new_string(c->id));
		json_object_object_add(o, "label",
		    json_object_new_string(c->label));
		watch_send(cc, o);
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

	if (c->owner == NULL)
		return;
	o = owner_event(c, "cage.end");
	json_object_object_add(o, "reason", json_object_new_string(why));
	send_line(c->owner, o);
}

void
gk_events_deny(struct gk_cage *c, enum gk_deny_kind kind, const char *host,
    uint16_t port, enum gk_deny_reason reason, const char *why)
{
	struct json_object *o;
	struct ctlconn *cc;
	uint32_t h;

	if (c == NULL)
		return;
	h = deny_hash(host, port, reason);
	remember(c, h, kind, host, port, reason);
	TAILQ_FOREACH(cc, &watchers, watch_entry) {
		if (!watches(cc, c))
			continue;
		o = denial_json(c, "deny", gk_wall_ms(), kind, host, port,
		    reason);
		if (why != NULL && why[0] != '\0')
			json_object_object_add(o, "why",
			    json_object_new_string(why));
		watch_send(cc, o);
	}
	if (!c->events || c->owner == NULL || c->ev == NULL ||
	    !tell_once(c, &c->ev->deny, h, "deny.more"))
		return;
	o = owner_event(c, "deny");
	deny_members(o, kind, host, port, reason);
	if (why != NULL && why[0] != '\0')
		json_object_object_add(o, "why", json_object_new_string(why));
	send_line(c->owner, o);
}

void
gk_events_learn(const struct gk_cage *c, const char *name, size_t len,
    uint16_t port)
{
	char host[GK_NAME_MAX + 1];
	struct json_object *o;

	if (c->owner == NULL || c->ev == NULL || len >= sizeof(host))
		return;
	memcpy(host, name, len);
	host[len] = '\0';
	if (!tell_once(c, &c->ev->learn, gk_hash_str(GK_HASH_INIT ^ port ^
	    0x5a5a0000u, host), "learn.more"))
		return;
	o = owner_event(c, "learn");
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	send_line(c->owner, o);
}

void
gk_events_limit(const struct gk_cage *c, const char *limit, uint64_t value,
    uint64_t count)
{
	struct json_object *o;

	if (c->owner == NULL || c->ev == NULL || count == 0)
		return;
	o = owner_event(c, "limit");
	json_object_object_add(o, "limit", json_object_new_string(limit));
	json_object_object_add(o, "value", json_object_new_int64(
	    (int64_t)value));
	json_object_object_add(o, "count", json_object_new_int64(
	    (int64_t)count));
	send_line(c->owner, o);
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

	if (c->owner == NULL || c->ev == NULL)
		return;
	o = ask_line(c, "ask", id, host, port);
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(kind)));
	json_object_object_add(o, "timeout", json_object_new_int64(timeout));
	send_line(c->owner, o);
}

void
gk_events_ask_done(const struct gk_cage *c, uint64_t id, const char *host,
    uint16_t port, const char *decision, const char *by)
{
	struct json_object *o;

	if (c->owner == NULL || c->ev == NULL)
		return;
	o = ask_line(c, "ask.done", id, host, port);
	json_object_object_add(o, "decision",
	    json_object_new_string(decision));
	json_object_object_add(o, "by", json_object_new_string(by));
	send_line(c->owner, o);
}

int
gk_events_enable(struct gk_cage *c)
{
	if (c->ev == NULL && (c->ev = calloc(1, sizeof(*c->ev))) == NULL)
		return -1;
	return 0;
}

void
gk_events_free(struct gk_cage *c)
{
	free(c->ev);
	c->ev = NULL;
	free(c->recent);
	c->recent = NULL;
}
