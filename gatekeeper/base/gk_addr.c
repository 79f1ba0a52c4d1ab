/*
 * gk_addr: IPv4/IPv6 addresses as plain values.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/base/gk_hash.h"

int
gk_addr_parse(const char *s, struct gk_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->bytes) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out->bytes) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return -1;
}

static int
parse_port(const char *s, uint16_t *port)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int
gk_addr_parse_port(const char *s, struct gk_addr *out, uint16_t *port)
{
	char buf[GK_ADDR_STRLEN + 8];
	const char *colon, *close;
	size_t n;

	if (strlen(s) >= sizeof(buf))
		return -1;
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (close == NULL)
			return -1;
		n = (size_t)(close - s - 1);
		memcpy(buf, s + 1, n);
		buf[n] = '\0';
		if (gk_addr_parse(buf, out) == -1 || out->family != AF_INET6)
			return -1;
		if (close[1] == '\0')
			return 0;
		if (close[1] != ':')
			return -1;
		return parse_port(close + 2, port);
	}
	colon = strchr(s, ':');
	if (colon != NULL && strchr(colon + 1, ':') != NULL)
		return gk_addr_parse(s, out);	/* bare IPv6, no port */
	if (colon == NULL)
		return gk_addr_parse(s, out);
	n = (size_t)(colon - s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (gk_addr_parse(buf, out) == -1)
		return -1;
	return parse_port(colon + 1, port);
}

const char *
gk_addr_ntop(const struct gk_addr *a, char *buf, size_t len)
{
	if (inet_ntop(a->family, a->bytes, buf, (socklen_t)len) == NULL) {
		if (len > 0)
			buf[0] = '\0';
	}
	return buf;
}

void
gk_addr_from_bytes(struct gk_addr *a, int family, const void *bytes)
{
	memset(a, 0, sizeof(*a));
	a->family = (sa_family_t)family;
	memcpy(a->bytes, bytes, family == AF_INET ? 4 : 16);
}

int
gk_addr_from_sockaddr(struct gk_addr *a, const struct sockaddr *sa)
{
	const struct sockaddr_in *sin;
	const struct sockaddr_in6 *sin6;

	switch (sa->sa_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)(const void *)sa;
		gk_addr_from_bytes(a, AF_INET, &sin->sin_addr);
		return 0;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)(const void *)sa;
		gk_addr_from_bytes(a, AF_INET6, &sin6->sin6_addr);
		return 0;
	default:
		memset(a, 0, sizeof(*a));
		return -1;
	}
}

socklen_t
gk_addr_to_sockaddr(const struct gk_addr *a, uint16_t port,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;

	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->bytes, 4);
		return sizeof(*sin);
	}
	sin6 = (struct sockaddr_in6 *)ss;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	memcpy(&sin6->sin6_addr, a->bytes, 16);
	return sizeof(*sin6);
}

size_t
gk_addr_len(const struct gk_addr *a)
{
	return a->family == AF_INET ? 4 : 16;
}

bool
gk_addr_eq(const struct gk_addr *a, const struct gk_addr *b)
{
	return a->family == b->family &&
	    memcmp(a->bytes, b->bytes, gk_addr_len(a)) == 0;
}

uint32_t
gk_addr_hash(const struct gk_addr *a)
{
	uint32_t h;

	h = gk_hash_bytes(GK_HASH_INIT ^ a->family, a->bytes, gk_addr_len(a));
	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	h ^= h >> 12;
	return h;
}

bool
gk_addr_in_prefix(const struct gk_addr *a, const struct gk_addr *net,
    unsigned prefix)
{
	unsigned full, rest, maxbits;
	uint8_t mask;

	if (a->family != net->family)
		return false;
	maxbits = (unsigned)gk_addr_len(a) * 8;
	if (prefix > maxbits)
		return false;
	full = prefix / 8;
	rest = prefix % 8;
	if (memcmp(a->bytes, net->bytes, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return (a->bytes[full] & mask) == (net->bytes[full] & mask);
}

int
gk_addr_cmp(const void *x, const void *y)
{
	const struct gk_addr *a = x, *b = y;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}
