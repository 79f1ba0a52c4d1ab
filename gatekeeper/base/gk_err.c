/*
 * gk_err: the one error formatter (gk_err.h).
 */
#include <stdarg.h>
#include <stdio.h>

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
