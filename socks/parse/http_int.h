/*
 * http_int.h: character classes the HTTP parsers (http_parse.c,
 * http_follow.c) share (ASCII lower case is gk_name.h's gk_lower).
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/base/gk_name.h"

/* tchar (RFC 9110 5.6.2): what method and field names are made of. */
static inline bool
http_is_tchar(uint8_t c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

#endif /* HTTP_INT_H */
