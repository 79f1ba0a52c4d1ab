/*
 * gk_name: the one host-name rule (see gk_name.h for the rule itself).
 * Pure: bytes in, status and text out; no I/O, no globals.
 */
#include <string.h>

#include "gatekeeper/base/gk_name.h"

static const char *const name_status_str[] = {
	[GK_NAME_OK] = "ok",
	[GK_NAME_EMPTY] = "empty",
	[GK_NAME_EMPTY_LABEL] = "empty label",
	[GK_NAME_LABEL_TOO_LONG] = "label too long",
	[GK_NAME_TOO_LONG] = "name too long",
	[GK_NAME_NON_ASCII] = "non-ASCII byte",
	[GK_NAME_BAD_CHAR] = "byte outside letters, digits, '-', '_', '.'",
	[GK_NAME_NUMERIC] = "all-digit last label (an address, not a name)",
};

const char *
gk_name_strstatus(enum gk_name_status st)
{
	if ((size_t)st >= sizeof(name_status_str) / sizeof(name_status_str[0]))
		return "unknown";
	return name_status_str[st];
}

static enum gk_name_status
fail(struct gk_name *out, enum gk_name_status st, size_t off, size_t n)
{
	out->text[0] = '\0';
	out->len = 0;
	out->err_off = off;
	out->err_len = n;
	return st;
}

enum gk_name_status
gk_name_parse(const uint8_t *buf, size_t len, struct gk_name *out)
{
	size_t i, n = len, lstart = 0;
	bool digits = true;
	uint8_t c;

	if (n > 0 && buf[n - 1] == '.')
		n--;
	if (n == 0)
		return fail(out, GK_NAME_EMPTY, 0, 0);
	for (i = 0; i <= n; i++) {
		if (i < n && buf[i] != '.') {
			c = buf[i];
			if (c >= 0x80)
				return fail(out, GK_NAME_NON_ASCII, i, 1);
			if (!gk_name_char(c))
				return fail(out, GK_NAME_BAD_CHAR, i, 1);
			digits = digits && c >= '0' && c <= '9';
			if (i < GK_NAME_MAX)
				out->text[i] = (char)gk_lower(c);
			continue;
		}
		if (i == lstart)
			return fail(out, GK_NAME_EMPTY_LABEL, lstart, 0);
		if (i - lstart > GK_LABEL_MAX)
			return fail(out, GK_NAME_LABEL_TOO_LONG, lstart,
			    i - lstart);
		if (i == n)
			break;		/* digits: of the last label */
		if (i < GK_NAME_MAX)
			out->text[i] = '.';
		lstart = i + 1;
		digits = true;
	}
	if (n > GK_NAME_MAX)
		return fail(out, GK_NAME_TOO_LONG, 0, n);
	if (digits)
		return fail(out, GK_NAME_NUMERIC, 0, n);
	out->text[n] = '\0';
	out->len = n;
	out->err_off = out->err_len = 0;
	return GK_NAME_OK;
}

int
gk_name_normalize(const char *in, size_t len, char out[GK_NAME_MAX + 1])
{
	struct gk_name nm;

	/* longer than a name and its dot: not one, whatever the bytes */
	if (in == NULL || len > GK_NAME_MAX + 1 ||
	    gk_name_parse((const uint8_t *)in, len, &nm) != GK_NAME_OK)
		return -1;
	memcpy(out, nm.text, nm.len + 1);
	return (int)nm.len;
}
