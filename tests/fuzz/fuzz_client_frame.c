/*
 * Fuzz the control-socket client's line framing (spawner/client,
 * gk_client_frame): the input arrives in chunks (sizes from its first
 * byte) into the buffer of GK_CLIENT_BUF bytes, as reads would bring it.
 * Invariants: a line handed out has no newline; the lines, each with
 * its newline, are exactly the input's bytes up to its last newline
 * that fit; nothing is read or written outside the buffer (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/client/gk_client.h"
#include "tests/fuzz/fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[GK_CLIENT_BUF];
	size_t len = 0, used = 0, off = 1, seen = 0, chunk, linelen;
	const char *line;
	uint8_t step;

	if (size < 1)
		return 0;
	step = data[0] == 0 ? 1 : data[0];
	while (off < size) {
		/* a full buffer and no line in it: the reader says
		 * TOO_LONG and stops */
		if (len == GK_CLIENT_BUF)
			break;
		chunk = size - off < step ? size - off : step;
		if (chunk > GK_CLIENT_BUF - len)
			chunk = GK_CLIENT_BUF - len;
		memcpy(buf + len, data + off, chunk);
		len += chunk;
		off += chunk;
		while (gk_client_frame(buf, &len, &used, &line, &linelen)) {
			CHECK(memchr(line, '\n', linelen) == NULL);
			CHECK(seen + linelen + 1 <= size - 1);
			CHECK(memcmp(line, data + 1 + seen, linelen) == 0);
			CHECK(data[1 + seen + linelen] == '\n');
			seen += linelen + 1;
		}
		CHECK(used <= len && len <= GK_CLIENT_BUF);
	}
	return 0;
}
