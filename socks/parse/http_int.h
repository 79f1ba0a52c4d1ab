/*
 * http_int.h: character classes the HTTP parsers (http_parse.c,
 * http_follow.c) share.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* tchar (RFC 9110 5.6.2): what method and field names are made of. */
static inline bool
http_is_tchar(uint8_t c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static inline uint8_t
http_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

#endif /* HTTP_INT_H */
