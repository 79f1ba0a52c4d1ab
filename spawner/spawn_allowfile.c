/*
 * --allow-file: one pattern per line; '#' starts a comment (patterns
 * never contain '#', so a comment may follow a pattern); blank lines and
 * white space around a pattern are ignored; CRLF is fine. Inside one,
 * only a rule's space after its methods ("GET,HEAD github.com/acme/x").
 * The first error stops the parse with "FILE:LINE: message".
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"

static bool
is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int
one_line(const uint8_t *s, size_t n, const char *name, size_t lineno,
    struct spawn_strv *allow, char *err, size_t errlen)
{
	char msg[512], shown[256];
	enum gk_pat_status st;
	struct gk_pattern p;
	const uint8_t *hash;
	size_t i;

	if ((hash = memchr(s, '#', n)) != NULL)
		n = (size_t)(hash - s);
	while (n > 0 && is_space(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	if (n == 0)
		return 0;
	spawn_printable(name, shown, sizeof(shown));
	st = gk_pattern_parse(s, n, &p);
	for (i = 0; i < n; i++) {
		if (s[i] == '\0' || (is_space(s[i]) && (s[i] != ' ' ||
		    st == GK_PAT_BAD_CHAR))) {
			gk_seterr(err, errlen, "%s:%zu: %s; put one pattern "
			    "on each line", shown, lineno, s[i] == '\0' ?
			    "a NUL byte in the line" : "white space inside "
			    "the pattern");
			return -1;
		}
	}
	if (st != GK_PAT_OK) {
		gk_pattern_error(s, n, st, msg, sizeof(msg));
		gk_seterr(err, errlen, "%s:%zu: %s", shown, lineno, msg);
		return -1;
	}
	if (allow->n >= GK_ALLOWLIST_MAX) {
		gk_seterr(err, errlen, "%s:%zu: more than %d patterns",
		    shown, lineno, GK_ALLOWLIST_MAX);
		return -1;
	}
	if (spawn_strv_pushn(allow, (const char *)s, n) == -1) {
		gk_seterr(err, errlen, "%s:%zu: out of memory", shown,
		    lineno);
		return -1;
	}
	return 0;
}

int
spawn_allowfile_parse(const uint8_t *buf, size_t len, const char *name,
    struct spawn_strv *allow, char *err, size_t errlen)
{
	const uint8_t *nl;
	size_t pos = 0, lineno = 0, n;
	char shown[256];

	if (len > SPAWN_ALLOWFILE_MAX) {
		spawn_printable(name, shown, sizeof(shown));
		gk_seterr(err, errlen, "%s: larger than %d bytes; is it "
		    "really an allow-file?", shown, SPAWN_ALLOWFILE_MAX);
		return -1;
	}
	while (pos < len) {
		lineno++;
		nl = memchr(buf + pos, '\n', len - pos);
		n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
		if (one_line(buf + pos, n, name, lineno, allow, err,
		    errlen) == -1)
			return -1;
		pos += n + (nl != NULL);
	}
	return 0;
}
