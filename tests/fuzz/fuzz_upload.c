/*
 * Fuzz gk_upload_parse (SIZE[@HOSTPATTERN]). Invariants: a budget
 * accepted is within GK_UPLOAD_MIN..MAX; without '@' it is the cage's
 * total, with one its pattern is a name pattern's canonical text (no
 * path, not an address range); its canonical text parses back to the
 * same budget; a refusal says why in printable ASCII within its buffer.
 */
#include <string.h>

#include "gatekeeper/policy/gk_upload.h"
#include "tests/fuzz/fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gk_upload u, back;
	struct gk_pattern p;
	char err[256], text[GK_UPLOAD_TEXT];
	const char *m;

	err[0] = '\0';
	if (!gk_upload_parse(data, size, &u, err, sizeof(err))) {
		CHECK(err[0] != '\0' && strlen(err) < sizeof(err));
		for (m = err; *m != '\0'; m++)
			CHECK(*m >= 0x20 && *m < 0x7f);
		return 0;
	}
	CHECK(u.bytes >= GK_UPLOAD_MIN && u.bytes <= GK_UPLOAD_MAX);
	CHECK(u.all == (memchr(data, '@', size) == NULL));
	CHECK(u.all == (u.pattern[0] == '\0'));
	if (!u.all) {
		CHECK(gk_pattern_parse((const uint8_t *)u.pattern,
		    strlen(u.pattern), &p) == GK_PAT_OK);
		CHECK(p.kind != GK_PAT_CIDR && p.path[0] == '\0');
	}
	gk_upload_format(&u, text, sizeof(text));
	CHECK(gk_upload_parse((const uint8_t *)text, strlen(text), &back, err,
	    sizeof(err)));
	CHECK(back.bytes == u.bytes && back.all == u.all &&
	    strcmp(back.pattern, u.pattern) == 0);
	return 0;
}
