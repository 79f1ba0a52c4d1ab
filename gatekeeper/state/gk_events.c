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
event_new(const struct gk_cage *c, const char *event)
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
		send_line(c->owner, event_new(c, more));
	}
	return false;
}

void
gk_events_deny(struct gk_cage *c, enum gk_deny_kind kind, const char *host,
    uint16_t port, enum gk_deny_reason reason, const char *why)
{
	struct json_object *o;

	if (c == NULL || !c->events || c->owner == NULL || c->ev == NULL ||
	    !tell_once(c, &c->ev->deny, gk_hash_str(GK_HASH_INIT ^ port ^
	    ((uint32_t)reason << 16), host), "deny.more"))
		return;
	o = event_new(c, "deny");
	json_object_object_add(o, "kind",
	    json_object_new_string(gk_deny_kind_name(kind)));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "reason",
	    json_object_new_string(gk_deny_reason_name(reason)));
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
	o = event_new(c, "learn");
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
	o = event_new(c, "limit");
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
	struct json_object *o = event_new(c, event);
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
}
