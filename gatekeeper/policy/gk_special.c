/*
 * gk_special: classify addresses a proxy must not connect to, and collect
 * this host's own addresses and gateways.
 *
 * Deliberately NOT special: the documentation ranges 192.0.2.0/24,
 * 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32. They are not
 * routed on the internet, so nothing real lives there, and the tests
 * build their fake internet in them; classifying them would only make
 * every test allowlist them by CIDR.
 */
#include <net/route.h>

#include <errno.h>
#include <ifaddrs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_special.h"

#define V4(a, b, c, d)	{ AF_INET, { a, b, c, d } }
#define V6(...)		{ AF_INET6, { __VA_ARGS__ } }
#define NITEMS(x)	(sizeof(x) / sizeof((x)[0]))

struct range {
	struct gk_addr	 net;
	uint8_t		 plen;
	enum gk_special	 cls;
};

/* An IPv6 prefix whose addresses carry an IPv4 address at byte off. */
struct embed {
	struct gk_addr	 net;
	uint8_t		 plen;
	uint8_t		 off;
};

/* First match wins: exact metadata endpoints before their wider ranges. */
static const struct range ranges4[] = {
	{ V4(169, 254, 169, 254), 32, GK_SPECIAL_METADATA },	/* most */
	{ V4(169, 254, 170, 2), 32, GK_SPECIAL_METADATA },	/* AWS ECS */
	{ V4(100, 100, 100, 200), 32, GK_SPECIAL_METADATA },	/* Alibaba */
	{ V4(168, 63, 129, 16), 32, GK_SPECIAL_METADATA },	/* Azure */
	{ V4(192, 0, 0, 192), 32, GK_SPECIAL_METADATA },	/* Oracle */
	{ V4(255, 255, 255, 255), 32, GK_SPECIAL_BROADCAST },
	{ V4(127, 0, 0, 0), 8, GK_SPECIAL_LOOPBACK },
	{ V4(0, 0, 0, 0), 8, GK_SPECIAL_UNSPECIFIED },	/* "this network" */
	{ V4(169, 254, 0, 0), 16, GK_SPECIAL_LINK_LOCAL },
	{ V4(224, 0, 0, 0), 4, GK_SPECIAL_MULTICAST },
	{ V4(240, 0, 0, 0), 4, GK_SPECIAL_RESERVED },
	{ V4(192, 0, 0, 0), 24, GK_SPECIAL_RESERVED },	/* IETF protocol */
	{ V4(198, 18, 0, 0), 15, GK_SPECIAL_RESERVED },	/* benchmarking */
	{ V4(10, 0, 0, 0), 8, GK_SPECIAL_PRIVATE },
	{ V4(172, 16, 0, 0), 12, GK_SPECIAL_PRIVATE },
	{ V4(192, 168, 0, 0), 16, GK_SPECIAL_PRIVATE },
	{ V4(100, 64, 0, 0), 10, GK_SPECIAL_PRIVATE },	/* CGNAT */
};

/* Checked before the embedding forms (:: and ::1 are in ::/96). */
static const struct range exact6[] = {
	/* fd00:ec2::254, AWS */
	{ V6(0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54), 128,
	    GK_SPECIAL_METADATA },
	/* fd20:ce::254, GCP */
	{ V6(0xfd, 0x20, 0x00, 0xce, [14] = 0x02, [15] = 0x54), 128,
	    GK_SPECIAL_METADATA },
	{ V6(0), 128, GK_SPECIAL_UNSPECIFIED },
	{ V6([15] = 1), 128, GK_SPECIAL_LOOPBACK },
};

static const struct embed embeds6[] = {
	{ V6([10] = 0xff, [11] = 0xff), 96, 12 },	/* ::ffff:0:0/96 */
	{ V6(0x00, 0x64, 0xff, 0x9b), 96, 12 },		/* NAT64, SIIT */
	/* local-use NAT64 64:ff9b:1::/48 */
	{ V6(0x00, 0x64, 0xff, 0x9b, 0x00, 0x01), 48, 12 },
	{ V6(0x20, 0x02), 16, 2 },			/* 6to4 */
	{ V6(0), 96, 12 },				/* IPv4-compatible */
};

static const struct gk_addr teredo6 = V6(0x20, 0x01);	/* 2001::/32 */

/* After the embedding forms; then anything outside 2000::/3 is reserved. */
static const struct range ranges6[] = {
	{ V6(0xfe, 0x80), 10, GK_SPECIAL_LINK_LOCAL },
	{ V6(0xff), 8, GK_SPECIAL_MULTICAST },
	{ V6(0xfe, 0xc0), 10, GK_SPECIAL_RESERVED },	/* site-local */
	{ V6(0x01, 0x00), 64, GK_SPECIAL_RESERVED },	/* discard */
	{ V6(0x20, 0x01), 23, GK_SPECIAL_RESERVED },	/* IETF protocol */
	{ V6(0xfc), 7, GK_SPECIAL_PRIVATE },		/* ULA */
	{ V6(0), 8, GK_SPECIAL_RESERVED },
};

static const struct gk_addr global6 = V6(0x20);	/* 2000::/3 */

static const char *const special_names[GK_SPECIAL_COUNT] = {
	[GK_SPECIAL_NONE] = "none",
	[GK_SPECIAL_LOOPBACK] = "loopback",
	[GK_SPECIAL_UNSPECIFIED] = "unspecified",
	[GK_SPECIAL_LINK_LOCAL] = "link_local",
	[GK_SPECIAL_MULTICAST] = "multicast",
	[GK_SPECIAL_BROADCAST] = "broadcast",
	[GK_SPECIAL_METADATA] = "metadata",
	[GK_SPECIAL_PRIVATE] = "private",
	[GK_SPECIAL_RESERVED] = "reserved",
	[GK_SPECIAL_HOST] = "host",
};

/* Zones a name is special in (the zone itself and every name below). */
static const struct {
	const char	*zone;
	enum gk_special	 class;
} special_zones[] = {
	{ "localhost", GK_SPECIAL_LOOPBACK },
	{ "local", GK_SPECIAL_LINK_LOCAL },
	{ "internal", GK_SPECIAL_PRIVATE },
	{ "home.arpa", GK_SPECIAL_PRIVATE },
	{ "in-addr.arpa", GK_SPECIAL_RESERVED },
	{ "ip6.arpa", GK_SPECIAL_RESERVED },
	{ "onion", GK_SPECIAL_RESERVED },
	{ "invalid", GK_SPECIAL_RESERVED },
};

enum gk_special
gk_special_name_classify(const char *name)
{
	size_t n = strlen(name), z, i;

	for (i = 0; i < sizeof(special_zones) / sizeof(special_zones[0]);
	    i++) {
		z = strlen(special_zones[i].zone);
		if (n < z || strcmp(name + n - z, special_zones[i].zone) != 0)
			continue;
		if (n == z || name[n - z - 1] == '.')
			return special_zones[i].class;
	}
	return GK_SPECIAL_NONE;
}

const char *
gk_special_name(enum gk_special c)
{
	if ((unsigned)c >= GK_SPECIAL_COUNT)
		return "unknown";
	return special_names[c];
}

/* What each class is, for people: after "X is", or "resolves to X, ". */
static const char *const special_whats[GK_SPECIAL_COUNT] = {
	[GK_SPECIAL_NONE] = "an ordinary address",
	[GK_SPECIAL_LOOPBACK] = "a loopback address (the gatekeeper host "
	    "itself)",
	[GK_SPECIAL_UNSPECIFIED] = "an unspecified address",
	[GK_SPECIAL_LINK_LOCAL] = "a link-local address",
	[GK_SPECIAL_MULTICAST] = "a multicast address",
	[GK_SPECIAL_BROADCAST] = "the broadcast address",
	[GK_SPECIAL_METADATA] = "the cloud metadata service (it hands out "
	    "the machine's credentials)",
	[GK_SPECIAL_PRIVATE] = "a private network address (RFC 1918, CGNAT "
	    "or ULA)",
	[GK_SPECIAL_RESERVED] = "a reserved address, not routed on the "
	    "internet",
	[GK_SPECIAL_HOST] = "an address of the gatekeeper host or one of its "
	    "gateways",
};

const char *
gk_special_what(enum gk_special c)
{
	if ((unsigned)c >= GK_SPECIAL_COUNT)
		return "a special address";
	return special_whats[c];
}

static enum gk_special
match_ranges(const struct gk_addr *a, const struct range *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (gk_addr_in_prefix(a, &r[i].net, r[i].plen))
			return r[i].cls;
	return GK_SPECIAL_NONE;
}

static enum gk_special
classify_embedded(const uint8_t *v4bytes, const struct gk_hostaddrs *host)
{
	struct gk_addr v4;

	gk_addr_from_bytes(&v4, AF_INET, v4bytes);
	return gk_special_classify(&v4, host);
}

/*
 * Teredo 2001:0::/32 carries the server IPv4 in bits 32..63 and the
 * client IPv4, inverted, in the last 32 bits; either being special is.
 */
static enum gk_special
classify_teredo(const struct gk_addr *a, const struct gk_hostaddrs *host)
{
	enum gk_special c;
	uint8_t client[4];
	size_t i;

	for (i = 0; i < sizeof(client); i++)
		client[i] = a->bytes[12 + i] ^ 0xff;
	c = classify_embedded(client, host);
	if (c != GK_SPECIAL_NONE)
		return c;
	return classify_embedded(a->bytes + 4, host);
}

static enum gk_special
classify6(const struct gk_addr *a, const struct gk_hostaddrs *host)
{
	enum gk_special c;
	size_t i;

	c = match_ranges(a, exact6, NITEMS(exact6));
	if (c != GK_SPECIAL_NONE)
		return c;
	for (i = 0; i < NITEMS(embeds6); i++)
		if (gk_addr_in_prefix(a, &embeds6[i].net, embeds6[i].plen))
			return classify_embedded(a->bytes + embeds6[i].off,
			    host);
	if (gk_addr_in_prefix(a, &teredo6, 32))
		return classify_teredo(a, host);
	c = match_ranges(a, ranges6, NITEMS(ranges6));
	if (c != GK_SPECIAL_NONE)
		return c;
	if (!gk_addr_in_prefix(a, &global6, 3))
		return GK_SPECIAL_RESERVED;	/* unallocated */
	return GK_SPECIAL_NONE;
}

enum gk_special
gk_special_classify(const struct gk_addr *a, const struct gk_hostaddrs *host)
{
	enum gk_special c;

	switch (a->family) {
	case AF_INET:
		c = match_ranges(a, ranges4, NITEMS(ranges4));
		break;
	case AF_INET6:
		c = classify6(a, host);
		break;
	default:
		return GK_SPECIAL_RESERVED;
	}
	if (c == GK_SPECIAL_NONE && host != NULL && gk_hostaddrs_has(host, a))
		c = GK_SPECIAL_HOST;
	return c;
}

void
gk_hostaddrs_init(struct gk_hostaddrs *h)
{
	memset(h, 0, sizeof(*h));
}

bool
gk_hostaddrs_has(const struct gk_hostaddrs *h, const struct gk_addr *a)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (gk_addr_eq(&h->addrs[i], a))
			return true;
	return false;
}

int
gk_hostaddrs_add(struct gk_hostaddrs *h, const struct gk_addr *a)
{
	if (gk_hostaddrs_has(h, a))
		return 0;
	if (h->n >= GK_HOSTADDRS_MAX)
		return -1;
	gk_addr_from_bytes(&h->addrs[h->n++], a->family, a->bytes);
	return 0;
}

/*
 * /proc/net/route and /proc/net/ipv6_route parsers: pure, over text that
 * need not be NUL-terminated, one line at a time. They take the next hop
 * of every up route with RTF_GATEWAY, not only the default routes: any
 * router this host uses is as much "the host's network" as its gateway.
 * A malformed line is skipped and reported; later lines still count.
 */

#define ROUTE_FIELDS	10

struct field {
	const char	*p;
	size_t		 n;
};

typedef enum gk_hostaddrs_status route_line_fn(const struct field *,
    size_t, struct gk_hostaddrs *);

/* Split [p, p + n) on blanks into at most max fields; extras ignored. */
static size_t
split_fields(const char *p, size_t n, struct field *f, size_t max)
{
	size_t i = 0, nf = 0, start;

	while (nf < max) {
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && p[i] != ' ' && p[i] != '\t')
			i++;
		f[nf].p = p + start;
		f[nf].n = i - start;
		nf++;
	}
	return nf;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 1 to 8 hex digits. */
static int
parse_hex32(const struct field *f, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;
	int d;

	if (f->n == 0 || f->n > 8)
		return -1;
	for (i = 0; i < f->n; i++) {
		if ((d = hexval(f->p[i])) == -1)
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

/* Exactly 32 hex digits, most significant byte first. */
static int
parse_hex128(const struct field *f, uint8_t out[16])
{
	size_t i;
	int hi, lo;

	if (f->n != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		hi = hexval(f->p[2 * i]);
		lo = hexval(f->p[2 * i + 1]);
		if (hi == -1 || lo == -1)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static bool
field_is(const struct field *f, const char *s)
{
	return f->n == strlen(s) && memcmp(f->p, s, f->n) == 0;
}

static enum gk_hostaddrs_status
add_gateway(struct gk_hostaddrs *h, int family, const void *bytes)
{
	static const uint8_t zero[16];
	struct gk_addr a;

	gk_addr_from_bytes(&a, family, bytes);
	if (memcmp(a.bytes, zero, gk_addr_len(&a)) == 0)
		return GK_HOSTADDRS_OK;		/* no next hop */
	if (gk_hostaddrs_add(h, &a) == -1)
		return GK_HOSTADDRS_FULL;
	return GK_HOSTADDRS_OK;
}

/*
 * Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT;
 * addresses are the in-memory __be32 printed as a native u32.
 */
static enum gk_hostaddrs_status
route4_line(const struct field *f, size_t nf, struct gk_hostaddrs *h)
{
	uint32_t dst, gw, flags, mask;

	if (nf > 0 && field_is(&f[0], "Iface"))
		return GK_HOSTADDRS_OK;		/* header */
	if (nf < 8 || parse_hex32(&f[1], &dst) == -1 ||
	    parse_hex32(&f[2], &gw) == -1 ||
	    parse_hex32(&f[3], &flags) == -1 ||
	    parse_hex32(&f[7], &mask) == -1)
		return GK_HOSTADDRS_INVALID;
	if ((flags & (RTF_UP | RTF_GATEWAY)) != (RTF_UP | RTF_GATEWAY))
		return GK_HOSTADDRS_OK;
	return add_gateway(h, AF_INET, &gw);
}

/* dst dst_plen src src_plen next_hop metric refcnt use flags iface */
static enum gk_hostaddrs_status
route6_line(const struct field *f, size_t nf, struct gk_hostaddrs *h)
{
	uint8_t dst[16], src[16], gw[16];
	uint32_t flags;

	if (nf < 9 || parse_hex128(&f[0], dst) == -1 ||
	    parse_hex128(&f[2], src) == -1 ||
	    parse_hex128(&f[4], gw) == -1 ||
	    parse_hex32(&f[8], &flags) == -1)
		return GK_HOSTADDRS_INVALID;
	if ((flags & (RTF_UP | RTF_GATEWAY)) != (RTF_UP | RTF_GATEWAY))
		return GK_HOSTADDRS_OK;
	return add_gateway(h, AF_INET6, gw);
}

static enum gk_hostaddrs_status
parse_lines(const char *text, size_t len, struct gk_hostaddrs *h,
    route_line_fn *fn)
{
	enum gk_hostaddrs_status st = GK_HOSTADDRS_OK, r;
	struct field f[ROUTE_FIELDS];
	const char *nl;
	size_t pos = 0, n, nf;

	while (pos < len) {
		nl = memchr(text + pos, '\n', len - pos);
		n = nl != NULL ? (size_t)(nl - (text + pos)) : len - pos;
		nf = split_fields(text + pos, n, f, ROUTE_FIELDS);
		if (nf > 0) {
			r = fn(f, nf, h);
			if (r == GK_HOSTADDRS_FULL)
				return r;
			if (r == GK_HOSTADDRS_INVALID)
				st = r;
		}
		pos += n + 1;
	}
	return st;
}

enum gk_hostaddrs_status
gk_hostaddrs_parse_route4(const char *text, size_t len,
    struct gk_hostaddrs *h)
{
	return parse_lines(text, len, h, route4_line);
}

enum gk_hostaddrs_status
gk_hostaddrs_parse_route6(const char *text, size_t len,
    struct gk_hostaddrs *h)
{
	return parse_lines(text, len, h, route6_line);
}

/*
 * I/O: the loader.
 */

static int
status_errno(enum gk_hostaddrs_status st)
{
	switch (st) {
	case GK_HOSTADDRS_OK:
		return 0;
	case GK_HOSTADDRS_INVALID:
		return EINVAL;
	case GK_HOSTADDRS_FULL:
		return ENOBUFS;
	}
	return EINVAL;
}

/* 0 or an errno. */
static int
load_ifaddrs(struct gk_hostaddrs *h)
{
	struct ifaddrs *ifa, *i;
	struct gk_addr a;
	int err = 0;

	if (getifaddrs(&ifa) == -1)
		return errno;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL ||
		    gk_addr_from_sockaddr(&a, i->ifa_addr) == -1)
			continue;
		if (gk_hostaddrs_add(h, &a) == -1) {
			err = ENOBUFS;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}

typedef enum gk_hostaddrs_status route_parse_fn(const char *, size_t,
    struct gk_hostaddrs *);

/* Feed the file to fn line by line (route tables can be large); 0/errno. */
static int
load_routes(const char *path, bool optional, route_parse_fn *fn,
    struct gk_hostaddrs *h)
{
	enum gk_hostaddrs_status st = GK_HOSTADDRS_OK, r;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp;
	int err;

	if ((fp = fopen(path, "re")) == NULL)
		return optional && errno == ENOENT ? 0 : errno;
	while ((n = getline(&line, &cap, fp)) != -1) {
		r = fn(line, (size_t)n, h);
		if (r != GK_HOSTADDRS_OK)
			st = r;
		if (r == GK_HOSTADDRS_FULL)
			break;
	}
	err = ferror(fp) ? EIO : status_errno(st);
	free(line);
	fclose(fp);
	return err;
}

int
gk_hostaddrs_load(struct gk_hostaddrs *h)
{
	int err[3];
	size_t i;

	gk_hostaddrs_init(h);
	err[0] = load_ifaddrs(h);
	err[1] = load_routes("/proc/net/route", false,
	    gk_hostaddrs_parse_route4, h);
	err[2] = load_routes("/proc/net/ipv6_route", true,
	    gk_hostaddrs_parse_route6, h);
	for (i = 0; i < NITEMS(err); i++) {
		if (err[i] != 0) {
			errno = err[i];
			return -1;
		}
	}
	return 0;
}
