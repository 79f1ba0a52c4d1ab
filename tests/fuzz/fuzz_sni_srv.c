/*
 * Fuzz sni_srv_parse. Invariants: NEED_MORE only below SNI_SRV_MAX_WIRE
 * bytes, and then for every prefix; every prefix of an input says
 * NEED_MORE or what the whole input says (the verdict does not depend on
 * how the server's bytes were split); OTHER from the first record's
 * header, HRR and HELLO only for a handshake record starting with a
 * server_hello; at most SNI_MAX_RECORDS records looked at; the verdict
 * is the same for the input with bytes appended.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sni/sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum sni_srv_status
parse_prefix(const uint8_t *data, size_t n, struct sni_srv_result *r)
{
	enum sni_srv_status st;
	uint8_t *cp;

	if ((cp = malloc(n == 0 ? 1 : n)) == NULL)
		abort();
	if (n > 0)
		memcpy(cp, data, n);
	st = sni_srv_parse(cp, n, r);
	free(cp);
	return st;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sni_srv_result r, r2;
	enum sni_srv_status st, p;
	uint8_t *more;
	size_t n;

	st = sni_srv_parse(data, size, &r);
	assert(r.nrecords <= SNI_MAX_RECORDS);
	switch (st) {
	case SNI_SRV_NEED_MORE:
		assert(size < SNI_SRV_MAX_WIRE);
		break;
	case SNI_SRV_OTHER:
		assert(size >= 1);
		break;
	case SNI_SRV_HRR:
	case SNI_SRV_HELLO:
		assert(size >= SNI_REC_HDR + 38 && data[0] == 22 &&
		    data[1] == 3 && data[SNI_REC_HDR] == 2);
		assert(r.nrecords >= 1);
		break;
	case SNI_SRV_INVALID:
		assert(size >= 2 && data[0] == 22 && data[1] == 3);
		break;
	}
	for (n = 0; n < size; n++) {
		p = parse_prefix(data, n, &r2);
		assert(p == SNI_SRV_NEED_MORE || p == st);
	}
	/* what follows the deciding bytes changes nothing */
	if (st != SNI_SRV_NEED_MORE) {
		if ((more = malloc(size + 16)) == NULL)
			abort();
		memcpy(more, data, size);
		memset(more + size, 0x16, 16);
		assert(sni_srv_parse(more, size + 16, &r2) == st);
		free(more);
	}
	assert(sni_srv_strstatus(st)[0] != '\0');
	return 0;
}
