/*
 * gk_err: the one error formatter, and printable quoting (gk_err.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"

int
gk_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
gk_printable(const char *s, char *buf, size_t len)
{
	size_t i;

	if (len == 0)
		return "";
	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = '\0';
	if (s[i] != '\0' && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

const char *
gk_escape(const void *s, size_t n, size_t max, char *out, size_t outlen)
{
	const unsigned char *p = s;
	size_t i, o = 0;

	if (outlen == 0)
		return "";
	for (i = 0; i < n && i < max; i++) {
		/* room for this byte's escape, "..." and the NUL */
		if (o + 4 + 3 + 1 > outlen)
			break;
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' &&
		    p[i] != '\'')
			out[o++] = (char)p[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x",
			    p[i]);
	}
	if (i < n && o + 4 <= outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}
