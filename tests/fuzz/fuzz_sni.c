/*
 * Fuzz sni_parse. Invariants: the name is "" unless SNI_OK, and then it is
 * NUL-terminated, lowercase labels of 1..63 letters, digits, '-', '_', at
 * most 253 bytes, and a host name by gk_name_parse() as it stands;
 * consumed <= size and is set exactly for a complete hello; NEED_MORE only
 * below SNI_MAX_WIRE bytes and for every prefix of a NEED_MORE input; a
 * complete hello parses the same from its own records alone (one byte
 * short: NEED_MORE) and when re-framed into other handshake records;
 * every prefix of an input says NEED_MORE or what the whole input says
 * (so the verdict does not depend on how the bytes were split); SSLv2
 * hellos and other TLS records are told by their first bytes alone.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"
#include "sni/sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t hs[SNI_MAX_WIRE], wire[SNI_MAX_WIRE];

static void
check_name(const struct sni_result *r)
{
	struct gk_name nm;
	size_t i, label = 0;
	char c;

	assert(r->name_len >= 1 && r->name_len <= SNI_MAX_NAME);
	assert(strlen(r->name) == r->name_len);
	for (i = 0; i < r->name_len; i++) {
		c = r->name[i];
		if (c == '.') {
			assert(label > 0);
			label = 0;
			continue;
		}
		assert((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_');
		assert(++label <= 63);
	}
	assert(label > 0);
	assert(gk_name_parse((const uint8_t *)r->name, r->name_len, &nm) ==
	    GK_NAME_OK && strcmp(nm.text, r->name) == 0);
	assert(sni_matches(r, r->name, r->name_len));
}

/* Parse an exact-size copy of the first n bytes. */
static enum sni_status
parse_prefix(const uint8_t *data, size_t n, struct sni_result *r)
{
	enum sni_status st;
	uint8_t *cp;

	if ((cp = malloc(n == 0 ? 1 : n)) == NULL)
		abort();
	if (n > 0)
		memcpy(cp, data, n);
	st = sni_parse(cp, n, r);
	free(cp);
	return st;
}

/* Re-frame a complete hello's handshake message into records of chunk
 * bytes; the result must not change. */
static void
check_reframe(const uint8_t *data, const struct sni_result *r,
    enum sni_status want)
{
	struct sni_result r2;
	size_t pos = 0, n = 0, rlen, chunk, off = 0, k, w = 0;

	while (pos < r->consumed) {
		rlen = ((size_t)data[pos + 3] << 8) | data[pos + 4];
		memcpy(hs + n, data + pos + SNI_REC_HDR, rlen);
		n += rlen;
		pos += SNI_REC_HDR + rlen;
	}
	chunk = (n + SNI_MAX_RECORDS - 1) / SNI_MAX_RECORDS;
	chunk += n % 5;		/* vary the split a little */
	for (off = 0; off < n; off += k) {
		k = n - off < chunk ? n - off : chunk;
		wire[w++] = 0x16;
		wire[w++] = 0x03;
		wire[w++] = 0x03;
		wire[w++] = (uint8_t)(k >> 8);
		wire[w++] = (uint8_t)k;
		memcpy(wire + w, hs + off, k);
		w += k;
	}
	assert(sni_parse(wire, w, &r2) == want);
	assert(r2.consumed == w && strcmp(r2.name, r->name) == 0);
	assert(r2.ech == r->ech && r2.grease == r->grease);
	assert(r2.legacy_version == r->legacy_version);
}

static void
check_complete(const uint8_t *data, size_t size, const struct sni_result *r,
    enum sni_status st)
{
	struct sni_result r2;

	assert(r->consumed >= 9 && r->consumed <= size);
	assert(r->nrecords >= 1 && r->nrecords <= SNI_MAX_RECORDS);
	assert(data[0] == 0x16 && data[1] == 3);
	if (st == SNI_OK)
		check_name(r);
	assert(parse_prefix(data, r->consumed, &r2) == st);
	assert(r2.consumed == r->consumed && strcmp(r2.name, r->name) == 0);
	assert(parse_prefix(data, r->consumed - 1, &r2) == SNI_NEED_MORE);
	check_reframe(data, r, st);
}

/* Every prefix (a sample of them for long inputs): NEED_MORE or st. */
static void
check_prefixes(const uint8_t *data, size_t size, enum sni_status st)
{
	struct sni_result r;
	enum sni_status p;
	size_t n, step;

	step = size <= 256 ? 1 : size / 64;
	for (n = 0; n < size; n += n < 16 ? 1 : step) {
		p = parse_prefix(data, n, &r);
		assert(p == SNI_NEED_MORE || p == st);
	}
}

static bool
is_ssl2_hello(const uint8_t *data, size_t size)
{
	return size >= 3 && (data[0] & 0x80) && data[2] == 1;
}

/* A TLS record type first and a major version 3, but not a handshake;
 * or a handshake with another major version. */
static bool
is_not_hello(const uint8_t *data, size_t size)
{
	return size >= 2 && data[0] >= 20 && data[0] <= 24 &&
	    (data[0] == 22) != (data[1] == 3);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sni_result r, r2;
	enum sni_status st;

	st = sni_parse(data, size, &r);
	if (st != SNI_OK)
		assert(r.name[0] == '\0' && r.name_len == 0);
	if (st != SNI_OK && st != SNI_ABSENT)
		assert(r.consumed == 0);
	assert(r.nrecords <= SNI_MAX_RECORDS);
	switch (st) {
	case SNI_NEED_MORE:
		assert(size < SNI_MAX_WIRE);
		assert(parse_prefix(data, size / 2, &r2) == SNI_NEED_MORE);
		break;
	case SNI_NOT_TLS:
		assert(size >= 1 && data[0] != 0x16);
		assert(!is_ssl2_hello(data, size) && !is_not_hello(data, size));
		if (data[0] & 0x80)
			assert(size >= 3);
		else if (data[0] >= 20 && data[0] <= 24)
			assert(size >= 2);
		break;
	case SNI_SSL2:
		assert(is_ssl2_hello(data, size));
		break;
	case SNI_NOT_HELLO:
		assert(is_not_hello(data, size));
		break;
	case SNI_OK:
	case SNI_ABSENT:
		check_complete(data, size, &r, st);
		break;
	case SNI_INVALID:
	case SNI_TOO_LONG:
		assert(size >= 5 && data[0] == 0x16 && data[1] == 3);
		break;
	}
	if (st != SNI_NEED_MORE)
		check_prefixes(data, size, st);
	return 0;
}
