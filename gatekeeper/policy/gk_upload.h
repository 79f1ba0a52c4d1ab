/*
 * gk_upload: an upload budget's text, as gk-run's --max-upload, the
 * control protocol's "max_upload" and gatekeeperd's max-upload key carry
 * it: SIZE[@HOSTPATTERN]. SIZE is bytes, or with K, M, G or T (powers of
 * 1024: gk_size_parse); without a pattern the budget is the cage's
 * total, with one it is the bytes to every host the pattern matches,
 * together ("1M@*.example.com": one MiB to all of example.com's hosts).
 * The pattern is a name pattern (exact or wildcard, optionally :PORT);
 * not an address range and not a request rule. Pure: no I/O.
 */
#ifndef GK_UPLOAD_H
#define GK_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/policy/gk_policy.h"

#define GK_UPLOAD_MIN		1ULL
#define GK_UPLOAD_MAX		(1ULL << 50)	/* 1024T */
#define GK_UPLOADS_MAX		16		/* budgets per cage */
/* "1023.99T@" and a pattern's canonical text */
#define GK_UPLOAD_TEXT		(32 + GK_PATTERN_MAX + 2)

struct gk_upload {
	uint64_t	 bytes;
	bool		 all;		/* no pattern: the cage's total */
	char		 pattern[GK_PATTERN_MAX + 1];	/* canonical; "" */
};

/* buf[0, len) as SIZE[@HOSTPATTERN] into *out: true, or false with a
 * message a person can act on in err (the text quoted, escaped). */
bool		 gk_upload_parse(const uint8_t *buf, size_t len,
		    struct gk_upload *out, char *err, size_t errlen);
/* Its canonical text: "10M", "1M@*.example.com:443". */
void		 gk_upload_format(const struct gk_upload *u, char *buf,
		    size_t len);

#endif /* GK_UPLOAD_H */
