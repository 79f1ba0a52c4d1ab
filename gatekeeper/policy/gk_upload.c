/*
 * gk_upload: SIZE[@HOSTPATTERN], an upload budget's text (gk_upload.h).
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_rlimits.h"
#include "gatekeeper/policy/gk_upload.h"

static bool
upload_pattern(const uint8_t *p, size_t n, struct gk_upload *out, char *err,
    size_t errlen)
{
	struct gk_pattern pat;
	enum gk_pat_status st;
	char shown[96];

	if ((st = gk_pattern_parse(p, n, &pat)) != GK_PAT_OK) {
		gk_pattern_error(p, n, st, err, errlen);
		return false;
	}
	gk_escape(p, n, 64, shown, sizeof(shown));
	if (pat.kind == GK_PAT_CIDR)
		gk_seterr(err, errlen, "'%s' is an address range; an upload "
		    "budget names hosts (e.g. 1M@*.example.com)", shown);
	else if (pat.path[0] != '\0')
		gk_seterr(err, errlen, "'%s' is a request rule; an upload "
		    "budget names hosts, without methods or a path", shown);
	else {
		gk_pattern_format(&pat, out->pattern, sizeof(out->pattern));
		return true;
	}
	return false;
}

bool
gk_upload_parse(const uint8_t *buf, size_t len, struct gk_upload *out,
    char *err, size_t errlen)
{
	const uint8_t *at = memchr(buf, '@', len);
	size_t slen = at != NULL ? (size_t)(at - buf) : len;
	char e[160], shown[96];

	memset(out, 0, sizeof(*out));
	if (gk_size_parse_in((const char *)buf, slen, GK_UPLOAD_MIN,
	    GK_UPLOAD_MAX, &out->bytes, e, sizeof(e)) == -1) {
		gk_seterr(err, errlen, "upload budget '%s': %s (the form is "
		    "SIZE or SIZE@HOSTPATTERN, e.g. 10M or 1M@*.example.com)",
		    gk_escape(buf, len, 64, shown, sizeof(shown)), e);
		return false;
	}
	out->all = at == NULL;
	if (at == NULL)
		return true;
	if (!upload_pattern(at + 1, len - slen - 1, out, e, sizeof(e))) {
		gk_seterr(err, errlen, "upload budget '%s': %s",
		    gk_escape(buf, len, 64, shown, sizeof(shown)), e);
		return false;
	}
	return true;
}

void
gk_upload_format(const struct gk_upload *u, char *buf, size_t len)
{
	char size[32];

	gk_size_format(u->bytes, size, sizeof(size));
	snprintf(buf, len, "%s%s%s", size, u->all ? "" : "@", u->pattern);
}
