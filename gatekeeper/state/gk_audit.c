/*
 * gk_audit: JSON-lines audit log, buffered and flushed by a timer.
 */
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_hash.h"
#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/cage/gk_limit.h"

#define AUDIT_FLUSH_MS		100
#define AUDIT_HIGH_WATER	(256 * 1024)	/* flush at once above */
#define AUDIT_MAX_BUFFERED	(16 * 1024 * 1024) /* drop (and count) above */
#define FOLD_SLOTS		512		/* recent (cage, name, type) */
#define FOLD_WINDOW_MS		1000
#define LIMIT_SLOTS		256		/* recent (cage, limit) */
#define LIMIT_EXAMPLES		3
#define LIMIT_EXAMPLE_MAX	96

struct fold {
	uint32_t		 hash;
	uint16_t		 qtype;
	bool			 used;
	uint64_t		 opened_ms;		/* monotonic */
	uint64_t		 repeated;
	char			 cage[GK_CAGE_ID_LEN + 1];
	char			 label[GK_CAGE_LABEL_MAX + 1];
	struct gk_addr		 client;
	char			 name[GK_NAME_MAX * 4 + 1];
};

/* A cage's refusals by one limit within a window (see gk_audit_limit). */
struct limit_fold {
	uint32_t		 hash;
	bool			 used;
	uint64_t		 opened_ms;
	uint64_t		 refused;	/* since the window's first */
	uint64_t		 value;
	const char		*limit;		/* a static name */
	char			 cage[GK_CAGE_ID_LEN + 1];
	char			 label[GK_CAGE_LABEL_MAX + 1];
	size_t			 nex;
	char			 ex[LIMIT_EXAMPLES][LIMIT_EXAMPLE_MAX];
};

struct gk_audit {
	struct event_base	*base;
	char			*path;		/* NULL: stdout */
	int			 fd;
	struct evbuffer		*buf;
	struct event		*flush_ev;
	struct event		*fold_ev;
	uint64_t		 dropped;
	char			 policy[72];	/* the host policy's version */
	uint32_t		 allowed_every;	/* conn.allow: 1 in N; 0 none */
	uint64_t		 allowed_seen;	/* allowed connections ended */
	struct fold		 folds[FOLD_SLOTS];
	struct limit_fold	 limits[LIMIT_SLOTS];
};

static void	fold_flush(struct gk_audit *a, bool all);
static void	limit_flush(struct gk_audit *a, bool all);

static int
audit_open_fd(const char *path)
{
	if (path == NULL)
		return STDOUT_FILENO;
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

static void
audit_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	gk_audit_flush(arg);
}

static void
fold_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	fold_flush(arg, false);
	limit_flush(arg, false);
}

struct gk_audit *
gk_audit_open(struct event_base *base, const char *path, char *err,
    size_t errlen)
{
	struct timeval fold_tv = { 0, FOLD_WINDOW_MS * 1000 / 4 };
	struct gk_audit *a;

	if (path == NULL)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		goto fail;
	a->base = base;
	a->fd = -1;
	if (strcmp(path, "-") != 0 && (a->path = strdup(path)) == NULL)
		goto fail;
	if ((a->fd = audit_open_fd(a->path)) == -1) {
		snprintf(err, errlen, "audit log %s: %s", path,
		    strerror(errno));
		goto fail;
	}
	if ((a->buf = evbuffer_new()) == NULL)
		goto fail;
	if (base != NULL &&
	    ((a->flush_ev = event_new(base, -1, 0, audit_flush_cb, a)) == NULL ||
	    (a->fold_ev = event_new(base, -1, EV_PERSIST, fold_cb, a)) == NULL ||
	    event_add(a->fold_ev, &fold_tv) == -1))
		goto fail;
	return a;
fail:
	if (err[0] == '\0')
		snprintf(err, errlen, "audit log %s: out of memory", path);
	gk_audit_close(a);
	return NULL;
}

void
gk_audit_close(struct gk_audit *a)
{
	if (a == NULL)
		return;
	if (a->buf != NULL) {
		fold_flush(a, true);
		limit_flush(a, true);
		gk_audit_flush(a);
	}
	if (a->fold_ev != NULL)
		event_free(a->fold_ev);
	if (a->flush_ev != NULL)
		event_free(a->flush_ev);
	if (a->buf != NULL)
		evbuffer_free(a->buf);
	if (a->fd != -1 && a->fd != STDOUT_FILENO)
		close(a->fd);
	free(a->path);
	free(a);
}

void
gk_audit_set_policy(struct gk_audit *a, const char *version)
{
	if (a != NULL)
		snprintf(a->policy, sizeof(a->policy), "%s",
		    version != NULL ? version : "");
}

void
gk_audit_set_allowed(struct gk_audit *a, uint32_t every)
{
	if (a != NULL)
		a->allowed_every = every;
}

bool
gk_audit_allowed_take(struct gk_audit *a)
{
	if (a == NULL || a->allowed_every == 0)
		return false;
	return a->allowed_seen++ % a->allowed_every == 0;
}

int
gk_audit_reopen(struct gk_audit *a)
{
	int fd;

	if (a == NULL || a->path == NULL)
		return 0;
	gk_audit_flush(a);
	if ((fd = audit_open_fd(a->path)) == -1) {
		log_warn("audit log %s", a->path);
		return -1;
	}
	close(a->fd);
	a->fd = fd;
	return 0;
}

void
gk_audit_flush(struct gk_audit *a)
{
	int n;

	if (a == NULL)
		return;
	while (evbuffer_get_length(a->buf) > 0) {
		n = evbuffer_write(a->buf, a->fd);
		if (n > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		/* EAGAIN on a pipe, or a real error: keep what is left for
		 * the next flush, up to the cap. */
		if (n == -1 && errno != EAGAIN)
			log_warn("audit log write");
		break;
	}
}

static void
audit_schedule(struct gk_audit *a)
{
	struct timeval tv = { 0, AUDIT_FLUSH_MS * 1000 };
	size_t len = evbuffer_get_length(a->buf);

	if (a->flush_ev == NULL || len >= AUDIT_HIGH_WATER)
		gk_audit_flush(a);
	else if (!evtimer_pending(a->flush_ev, NULL))
		evtimer_add(a->flush_ev, &tv);
}

/* Append `s` as a JSON string (with quotes). */
static void
json_str(struct evbuffer *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char esc[7];
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *run = p;

	evbuffer_add(b, "\"", 1);
	for (; *p != '\0'; p++) {
		if (*p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x7f)
			continue;
		evbuffer_add(b, run, (size_t)(p - run));
		memcpy(esc, "\\u00", 4);
		esc[4] = hex[*p >> 4];
		esc[5] = hex[*p & 15];
		evbuffer_add(b, esc, 6);
		run = p + 1;
	}
	evbuffer_add(b, run, (size_t)(p - run));
	evbuffer_add(b, "\"", 1);
}

/* {"time":"...","event":"...","cage":"...","label":"..." -- no closing. */
static bool
audit_head(struct gk_audit *a, const char *event, const struct gk_cage *c)
{
	char ts[GK_UTC_STAMP_LEN];

	if (evbuffer_get_length(a->buf) > AUDIT_MAX_BUFFERED) {
		a->dropped++;
		return false;
	}
	gk_utc_stamp(ts, sizeof(ts));
	evbuffer_add_printf(a->buf, "{\"time\":\"%s\",\"event\":", ts);
	json_str(a->buf, event);
	if (a->policy[0] != '\0') {
		evbuffer_add(a->buf, ",\"policy\":", 10);
		json_str(a->buf, a->policy);
	}
	if (c != NULL) {
		evbuffer_add(a->buf, ",\"cage\":", 8);
		json_str(a->buf, gk_cage_id(c));
		evbuffer_add(a->buf, ",\"label\":", 9);
		json_str(a->buf, gk_cage_label(c));
	}
	return true;
}

void
gk_audit_event(struct gk_audit *a, const char *event, const struct gk_cage *c,
    struct json_object *details)
{
	const char *s;
	size_t n;

	if (a == NULL || !audit_head(a, event, c)) {
		json_object_put(details);
		return;
	}
	if (details != NULL && json_object_is_type(details, json_type_object)) {
		s = json_object_to_json_string_ext(details,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		n = strlen(s);
		/* merge: drop the braces of the details object */
		if (n > 2) {
			evbuffer_add(a->buf, ",", 1);
			evbuffer_add(a->buf, s + 1, n - 2);
		}
	}
	json_object_put(details);
	evbuffer_add(a->buf, "}\n", 2);
	audit_schedule(a);
}

static uint32_t
fold_hash(const char *cage, const char *name, uint16_t qtype)
{
	return gk_hash_str(gk_hash_str(GK_HASH_INIT ^ qtype, cage), name);
}

/* the line for a denial; repeated == 0: the first one, with why */
static void	deny_line_for(struct gk_audit *, const char *, const char *,
		    const struct gk_addr *, const char *, uint16_t,
		    const char *, uint64_t, const char *);

static void
deny_line(struct gk_audit *a, const char *cage, const char *label,
    const struct gk_addr *client, const char *name, uint16_t qtype,
    const char *why, uint64_t repeated)
{
	deny_line_for(a, cage, label, client, name, qtype, why, repeated,
	    NULL);
}

/* credential: a leak's (reason credential_leak), else NULL. */
static void
deny_line_for(struct gk_audit *a, const char *cage, const char *label,
    const struct gk_addr *client, const char *name, uint16_t qtype,
    const char *why, uint64_t repeated, const char *credential)
{
	char addr[GK_ADDR_STRLEN];

	if (!audit_head(a, "dns.deny", NULL))
		return;
	evbuffer_add(a->buf, ",\"cage\":", 8);
	json_str(a->buf, cage);
	evbuffer_add(a->buf, ",\"label\":", 9);
	json_str(a->buf, label);
	evbuffer_add(a->buf, ",\"client\":", 10);
	json_str(a->buf, gk_addr_ntop(client, addr, sizeof(addr)));
	evbuffer_add(a->buf, ",\"name\":", 8);
	json_str(a->buf, name);
	evbuffer_add_printf(a->buf, ",\"qtype\":%u,\"reason\":\"%s\"",
	    qtype, credential != NULL ? "credential_leak" :
	    "not_allowlisted");
	if (credential != NULL) {
		evbuffer_add(a->buf, ",\"credential\":", 14);
		json_str(a->buf, credential);
	}
	if (why != NULL) {
		evbuffer_add(a->buf, ",\"why\":", 7);
		json_str(a->buf, why);
	}
	if (repeated > 0)
		evbuffer_add_printf(a->buf, ",\"repeated\":%llu",
		    (unsigned long long)repeated);
	evbuffer_add(a->buf, "}\n", 2);
	audit_schedule(a);
}

void
gk_audit_dns_leak(struct gk_audit *a, struct gk_cage *c,
    const struct gk_addr *client, const char *name, uint16_t qtype,
    const char *why, const char *credential)
{
	if (a == NULL || !gk_limit_audit_ok(c, "dns.deny", name))
		return;
	deny_line_for(a, gk_cage_id(c), gk_cage_label(c), client, name,
	    qtype, why, 0, credential);
}

/* Write the repeat counts of windows that are over (or of all). */
static void
fold_flush(struct gk_audit *a, bool all)
{
	uint64_t now = gk_now_ms();
	struct fold *f;
	size_t i;

	for (i = 0; i < FOLD_SLOTS; i++) {
		f = &a->folds[i];
		if (!f->used || (!all && now - f->opened_ms < FOLD_WINDOW_MS))
			continue;
		if (f->repeated > 0)
			deny_line(a, f->cage, f->label, &f->client, f->name,
			    f->qtype, NULL, f->repeated);
		f->used = false;
	}
}

static bool
fold_match(const struct fold *f, uint32_t h, const struct gk_cage *c,
    const char *name, uint16_t qtype)
{
	return f->used && f->hash == h && f->qtype == qtype &&
	    strcmp(f->cage, gk_cage_id(c)) == 0 && strcmp(f->name, name) == 0;
}

bool
gk_audit_dns_deny_fold(struct gk_audit *a, const struct gk_cage *c,
    const char *name, uint16_t qtype)
{
	uint32_t h;
	struct fold *f;

	if (a == NULL)
		return true;
	h = fold_hash(gk_cage_id(c), name, qtype);
	f = &a->folds[h % FOLD_SLOTS];
	if (!fold_match(f, h, c, name, qtype) ||
	    gk_now_ms() - f->opened_ms >= FOLD_WINDOW_MS)
		return false;
	f->repeated++;
	return true;
}

void
gk_audit_dns_deny(struct gk_audit *a, struct gk_cage *c,
    const struct gk_addr *client, const char *name, uint16_t qtype,
    const char *why)
{
	uint32_t h;
	struct fold *f;

	if (a == NULL || !gk_limit_audit_ok(c, "dns.deny", name))
		return;
	h = fold_hash(gk_cage_id(c), name, qtype);
	f = &a->folds[h % FOLD_SLOTS];
	/* the slot's earlier window ends here: write its count first */
	if (f->used && f->repeated > 0)
		deny_line(a, f->cage, f->label, &f->client, f->name, f->qtype,
		    NULL, f->repeated);
	deny_line(a, gk_cage_id(c), gk_cage_label(c), client, name, qtype,
	    why, 0);
	if (strlen(name) >= sizeof(f->name)) {
		f->used = false;
		return;
	}
	f->used = true;
	f->hash = h;
	f->qtype = qtype;
	f->opened_ms = gk_now_ms();
	f->repeated = 0;
	memcpy(f->cage, gk_cage_id(c), sizeof(f->cage));
	memcpy(f->label, gk_cage_label(c), sizeof(f->label));
	f->client = *client;
	memcpy(f->name, name, strlen(name) + 1);
}

/* ---- limits ----------------------------------------------------------- */

/* one cage.limit line: the first refusal of a window, or the rest */
static void
limit_line(struct gk_audit *a, const char *cage, const char *label,
    const char *limit, uint64_t value, uint64_t refused,
    char ex[][LIMIT_EXAMPLE_MAX], size_t nex)
{
	size_t i;

	if (!audit_head(a, "cage.limit", NULL))
		return;
	evbuffer_add(a->buf, ",\"cage\":", 8);
	json_str(a->buf, cage);
	evbuffer_add(a->buf, ",\"label\":", 9);
	json_str(a->buf, label);
	evbuffer_add(a->buf, ",\"limit\":", 9);
	json_str(a->buf, limit);
	evbuffer_add_printf(a->buf, ",\"value\":%llu,\"refused\":%llu",
	    (unsigned long long)value, (unsigned long long)refused);
	if (nex > 0) {
		evbuffer_add(a->buf, ",\"examples\":[", 13);
		for (i = 0; i < nex; i++) {
			if (i > 0)
				evbuffer_add(a->buf, ",", 1);
			json_str(a->buf, ex[i]);
		}
		evbuffer_add(a->buf, "]", 1);
	}
	evbuffer_add(a->buf, "}\n", 2);
	audit_schedule(a);
}

static void
limit_fold_out(struct gk_audit *a, struct limit_fold *f)
{
	if (f->used && f->refused > 0)
		limit_line(a, f->cage, f->label, f->limit, f->value,
		    f->refused, f->ex, f->nex);
	f->used = false;
}

static void
limit_flush(struct gk_audit *a, bool all)
{
	uint64_t now = gk_now_ms();
	size_t i;

	for (i = 0; i < LIMIT_SLOTS; i++)
		if (a->limits[i].used &&
		    (all || now - a->limits[i].opened_ms >= FOLD_WINDOW_MS))
			limit_fold_out(a, &a->limits[i]);
}

static void
limit_example(struct limit_fold *f, const char *example)
{
	if (example == NULL || f->nex >= LIMIT_EXAMPLES)
		return;
	snprintf(f->ex[f->nex++], LIMIT_EXAMPLE_MAX, "%s", example);
}

void
gk_audit_limit(struct gk_audit *a, const struct gk_cage *c,
    const char *limit, uint64_t value, const char *example)
{
	char ex[1][LIMIT_EXAMPLE_MAX];
	struct limit_fold *f;
	uint32_t h;

	if (a == NULL)
		return;
	h = gk_hash_str(gk_hash_str(GK_HASH_INIT, gk_cage_id(c)), limit);
	f = &a->limits[h % LIMIT_SLOTS];
	if (f->used && f->hash == h && f->limit == limit &&
	    strcmp(f->cage, gk_cage_id(c)) == 0 &&
	    gk_now_ms() - f->opened_ms < FOLD_WINDOW_MS) {
		f->refused++;
		f->value = value;
		limit_example(f, example);
		return;
	}
	limit_fold_out(a, f);
	if (example != NULL)
		snprintf(ex[0], sizeof(ex[0]), "%s", example);
	limit_line(a, gk_cage_id(c), gk_cage_label(c), limit, value, 1, ex,
	    example != NULL ? 1 : 0);
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->hash = h;
	f->opened_ms = gk_now_ms();
	f->limit = limit;
	f->value = value;
	memcpy(f->cage, gk_cage_id(c), sizeof(f->cage));
	memcpy(f->label, gk_cage_label(c), sizeof(f->label));
}
