/*
 * Fuzz spawn_nonet_answer (--net none's resolver): what the sandbox sends
 * to 127.0.0.1:53. An answer is a response with the query's id and an
 * error rcode, within a UDP packet's 512 bytes; a name told is a host
 * name, lower case, printable, never a reverse lookup.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "dns/dns_msg.h"
#include "spawner/spawn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[DNS_UDP_MIN];
	char name[DNS_NAME_TEXT_MAX];
	size_t n, i, len;

	n = spawn_nonet_answer(data, size, out, sizeof(out), name,
	    sizeof(name));
	len = strlen(name);
	assert(n == 0 || n >= DNS_HDR_LEN);
	assert(n <= sizeof(out));
	if (n > 0) {
		assert(size >= DNS_HDR_LEN);
		assert(out[0] == data[0] && out[1] == data[1]);
		assert(out[2] & 0x80);
		assert((out[3] & 0x0f) == DNS_RC_REFUSED ||
		    (out[3] & 0x0f) == DNS_RC_FORMERR ||
		    (out[3] & 0x0f) == DNS_RC_NOTIMP ||
		    (out[3] & 0x0f) == DNS_RC_SERVFAIL);
	} else
		assert(len == 0);
	for (i = 0; i < len; i++)
		assert((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '-' ||
		    name[i] == '_' || name[i] == '.');
	assert(len < 9 || strcmp(name + len - 9, ".ip6.arpa") != 0);
	assert(len < 13 || strcmp(name + len - 13, ".in-addr.arpa") != 0);
	return 0;
}
