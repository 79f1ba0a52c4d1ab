/*
 * Fuzz http_sniff and http_follow over a tunnel's client stream.
 *
 * http_sniff: every prefix says NEED_MORE or what the whole input says;
 * BLANKS only after HTTP_BLANK_MAX + 1 blank bytes, PROXY only for the v2
 * signature or "PROXY " after the blank bytes.
 *
 * http_follow, split-invariance: the stream fed at once, in pieces of
 * sizes drawn from the input, and byte by byte (inputs up to 2 KiB), the
 * way the relay does it (bytes passed beyond those held are skipped, not
 * shown), gives the same verdicts, the same pass counts and hosts, and
 * ends in the same state with the same bytes held. NEED_MORE leaves the
 * state alone; HEAD passes at least 1 and at most the held bytes; PASS
 * at least 1; hosts are printable, lower case.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "socks/parse/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EV		4096
#define BYTEWISE_MAX	2048

struct ev {
	enum http_follow_status	 st;
	uint64_t		 pass;
	enum http_status	 hst;
	char			 host[GK_HOST_MAX + 1];
};

struct run {
	struct ev		 ev[MAX_EV];
	size_t			 nev;
	struct http_follow	 f;
	size_t			 held;
	bool			 ended;
};

static struct run one, other;

static bool
is_blank(uint8_t c)
{
	return c == '\r' || c == '\n' || c == ' ' || c == '\t';
}

static void
check_host(const char *name)
{
	size_t i, n = strnlen(name, GK_HOST_MAX + 1);

	assert(n <= GK_HOST_MAX);
	for (i = 0; i < n; i++)
		assert(name[i] > 0x20 && name[i] < 0x7f &&
		    (name[i] < 'A' || name[i] > 'Z'));
}

static enum http_sniff
sniff_copy(const uint8_t *data, size_t n, struct http_sniff_result *r)
{
	enum http_sniff st;
	uint8_t *cp;

	if ((cp = malloc(n == 0 ? 1 : n)) == NULL)
		abort();
	if (n > 0)
		memcpy(cp, data, n);
	st = http_sniff(n == 0 ? NULL : cp, n, r);
	free(cp);
	return st;
}

static void
check_sniff(const uint8_t *data, size_t size)
{
	static const uint8_t sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
	    0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a };
	struct http_sniff_result r, r2;
	enum http_sniff st, p;
	size_t n, i, step;

	st = sniff_copy(data, size, &r);
	assert(r.blank <= HTTP_BLANK_MAX + 1 && r.blank <= size);
	for (i = 0; i < r.blank; i++)
		assert(is_blank(data[i]));
	if (st == HTTP_SNIFF_BLANKS)
		assert(r.blank == HTTP_BLANK_MAX + 1);
	if (st == HTTP_SNIFF_REQUEST || st == HTTP_SNIFF_OTHER)
		assert(r.blank < size && r.blank <= HTTP_BLANK_MAX);
	if (st == HTTP_SNIFF_PROXY)
		assert((size >= sizeof(sig) && memcmp(data, sig,
		    sizeof(sig)) == 0) || (size - r.blank >= 6 &&
		    strncasecmp((const char *)data + r.blank, "PROXY ", 6) ==
		    0));
	step = size <= 512 ? 1 : size / 128;
	for (n = 0; n < size; n += step) {
		p = sniff_copy(data, n, &r2);
		assert(p == HTTP_SNIFF_NEED_MORE || p == st);
	}
}

static void
record(struct run *r, enum http_follow_status st,
    const struct http_follow_out *o)
{
	struct ev *e;

	if (r->nev == MAX_EV)
		abort();	/* cannot be: each verdict takes a byte */
	e = &r->ev[r->nev++];
	e->st = st;
	e->pass = o->pass;
	e->hst = o->st;
	memcpy(e->host, o->host.host.name, sizeof(e->host));
}

/* Follow the held bytes as far as they go. */
static void
step(struct run *r, uint8_t *held, size_t *hl, uint64_t *skip)
{
	struct http_follow_out o;
	struct http_follow before;
	enum http_follow_status st;
	uint8_t *cp;

	for (;;) {
		if ((cp = malloc(*hl == 0 ? 1 : *hl)) == NULL)
			abort();
		memcpy(cp, held, *hl);
		before = r->f;
		st = http_follow(&r->f, *hl == 0 ? NULL : cp, *hl, &o);
		free(cp);
		if (st == HTTP_FOLLOW_NEED_MORE) {
			assert(memcmp(&before, &r->f, sizeof(before)) == 0);
			return;
		}
		record(r, st, &o);
		if (st == HTTP_FOLLOW_OPAQUE || st == HTTP_FOLLOW_INVALID) {
			assert(st == HTTP_FOLLOW_OPAQUE || o.why != NULL);
			r->ended = true;
			return;
		}
		assert(o.pass >= 1);
		if (st == HTTP_FOLLOW_HEAD) {
			assert(o.pass <= *hl);
			assert(o.st == HTTP_OK || o.st == HTTP_ABSENT);
			check_host(o.host.host.name);
		}
		if (o.pass > *hl) {
			*skip = o.pass - *hl;
			*hl = 0;
			return;
		}
		memmove(held, held + o.pass, *hl - (size_t)o.pass);
		*hl -= (size_t)o.pass;
	}
}

/* Piece sizes: 0 all at once, 1 byte by byte, else drawn from seed. */
static void
drive(const uint8_t *s, size_t n, unsigned mode, uint32_t seed,
    struct run *r)
{
	uint8_t *held;
	size_t hl = 0, pos = 0, k;
	uint64_t skip = 0;

	memset(r, 0, sizeof(*r));
	http_follow_init(&r->f);
	if ((held = malloc(n + 1)) == NULL)
		abort();
	step(r, held, &hl, &skip);
	while (pos < n && !r->ended) {
		seed = seed * 1103515245u + 12345u;
		k = mode == 0 ? n - pos : mode == 1 ? 1 :
		    1 + (seed >> 16) % 257;
		if (k > n - pos)
			k = n - pos;
		pos += k;
		if (skip >= k) {
			skip -= k;
			continue;
		}
		memcpy(held + hl, s + pos - k + skip, k - (size_t)skip);
		hl += k - (size_t)skip;
		skip = 0;
		step(r, held, &hl, &skip);
	}
	r->held = hl;
	free(held);
}

static void
same(const struct run *a, const struct run *b)
{
	size_t i;

	assert(a->nev == b->nev);
	for (i = 0; i < a->nev; i++) {
		assert(a->ev[i].st == b->ev[i].st);
		assert(a->ev[i].pass == b->ev[i].pass);
		if (a->ev[i].st == HTTP_FOLLOW_HEAD) {
			assert(a->ev[i].hst == b->ev[i].hst);
			assert(strcmp(a->ev[i].host, b->ev[i].host) == 0);
		}
	}
	assert(a->ended == b->ended);
	if (!a->ended) {
		assert(a->held == b->held);
		assert(memcmp(&a->f, &b->f, sizeof(a->f)) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t seed = 2166136261u;
	size_t i;

	check_sniff(data, size);
	for (i = 0; i < size && i < 64; i++)
		seed = (seed ^ data[i]) * 16777619u;
	drive(data, size, 0, 0, &one);
	drive(data, size, 2, seed, &other);
	same(&one, &other);
	drive(data, size, 2, seed ^ 0x9e3779b9u, &other);
	same(&one, &other);
	if (size <= BYTEWISE_MAX) {
		drive(data, size, 1, 0, &other);
		same(&one, &other);
	}
	return 0;
}
