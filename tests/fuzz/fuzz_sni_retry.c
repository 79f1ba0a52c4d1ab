/*
 * Fuzz sni_parse_retry. Invariants: the name is "" unless SNI_OK, and then
 * a host name gk_name_parse() takes as it stands; consumed <= size, set
 * only for a complete hello, and it is sni_parse()'s consumed plus the
 * 6-byte change_cipher_spec record when one came first; without one the
 * verdict is sni_parse()'s; every prefix of an input says NEED_MORE or
 * what the whole input says.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"
#include "sni/sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CCS_LEN	6

static enum sni_status
parse_prefix(const uint8_t *data, size_t n, struct sni_result *r)
{
	enum sni_status st;
	uint8_t *cp;

	if ((cp = malloc(n == 0 ? 1 : n)) == NULL)
		abort();
	if (n > 0)
		memcpy(cp, data, n);
	st = sni_parse_retry(cp, n, r);
	free(cp);
	return st;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sni_result r, r2;
	struct gk_name nm;
	enum sni_status st, p;
	size_t n, step, skip;

	st = sni_parse_retry(data, size, &r);
	if (st != SNI_OK)
		assert(r.name[0] == '\0' && r.name_len == 0);
	else
		assert(strlen(r.name) == r.name_len &&
		    gk_name_parse((const uint8_t *)r.name, r.name_len, &nm) ==
		    GK_NAME_OK && strcmp(nm.text, r.name) == 0);
	if (st != SNI_OK && st != SNI_ABSENT)
		assert(r.consumed == 0);
	assert(r.consumed <= size);
	skip = size >= 1 && data[0] == 20 ? CCS_LEN : 0;
	if (st == SNI_NEED_MORE)
		assert(size < SNI_MAX_WIRE + CCS_LEN);
	if (skip == 0 || (size >= CCS_LEN && data[1] == 3 && data[3] == 0 &&
	    data[4] == 1 && data[5] == 1)) {
		/* what follows the change_cipher_spec record, as sni_parse */
		assert(sni_parse(data + skip, size - skip, &r2) == st);
		if (st == SNI_OK || st == SNI_ABSENT)
			assert(r.consumed == r2.consumed + skip);
	} else
		assert(st == SNI_INVALID || st == SNI_NEED_MORE);
	if (st != SNI_NEED_MORE) {
		step = size <= 256 ? 1 : size / 64;
		for (n = 0; n < size; n += n < 16 ? 1 : step) {
			p = parse_prefix(data, n, &r2);
			assert(p == SNI_NEED_MORE || p == st);
		}
	}
	return 0;
}
