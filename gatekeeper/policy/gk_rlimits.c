/*
 * gk_rlimits: parsing and printing sizes and CPU counts, exactly: a
 * decimal fraction is carried as an integer numerator and a power of ten,
 * so "1.5G" is 1610612736 with no floating point in between.
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/base/gk_name.h"
#include "gatekeeper/policy/gk_rlimits.h"

#define FRAC_DIGITS_MAX	3

bool
gk_rlimits_any(const struct gk_rlimits *l)
{
	return l->memory != 0 || l->pids != 0 || l->cpus != 0;
}

/* The input as a message shows it: at most 24 bytes, anything but
 * printable ASCII as '?'. */
static void
shown_text(char *dst, size_t dstlen, const char *s, size_t len)
{
	size_t i, n = len < 24 ? len : 24;

	for (i = 0; i < n && i + 1 < dstlen; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	dst[i] = '\0';
}

/*
 * "12", "12.5", "0.25": *num = the digits without the point (at most 18
 * of them), *scale = 10^(decimals). The number of bytes read, 0 if none.
 */
static size_t
decimal(const char *s, size_t len, uint64_t *num, uint64_t *scale,
    size_t *ndec)
{
	size_t i = 0, digits = 0;
	bool point = false;

	*num = 0;
	*scale = 1;
	*ndec = 0;
	for (; i < len; i++) {
		if (s[i] == '.' && !point && digits > 0) {
			point = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			break;
		if (++digits > 18)
			return 0;
		*num = *num * 10 + (uint64_t)(s[i] - '0');
		if (point) {
			*scale *= 10;
			(*ndec)++;
		}
	}
	if (digits == 0 || (point && *ndec == 0))
		return 0;
	return i;
}

int
gk_size_parse(const char *s, size_t len, uint64_t *out, char *err,
    size_t errlen)
{
	return gk_size_parse_in(s, len, GK_RLIM_MEMORY_MIN, GK_RLIM_MEMORY_MAX,
	    out, err, errlen);
}

int
gk_size_parse_in(const char *s, size_t len, uint64_t min, uint64_t max,
    uint64_t *out, char *err, size_t errlen)
{
	static const char units[] = "kmgt";
	uint64_t num, scale, mult = 1, v;
	size_t n, ndec, i;
	const char *u, *p;
	char shown[GK_RLIM_TEXT], lo[GK_RLIM_TEXT], hi[GK_RLIM_TEXT];

	shown_text(shown, sizeof(shown), s, len);
	if ((n = decimal(s, len, &num, &scale, &ndec)) == 0)
		goto bad;
	u = s + n;
	len -= n;
	if (len > 0) {
		if ((p = strchr(units, gk_lower((uint8_t)u[0]))) == NULL ||
		    u[0] == '\0')
			goto bad;
		for (i = 0; i <= (size_t)(p - units); i++)
			mult *= 1024;
		/* K, KB, KiB (any case) */
		if (!(len == 1 || (len == 2 && gk_lower((uint8_t)u[1]) == 'b') ||
		    (len == 3 && gk_lower((uint8_t)u[1]) == 'i' &&
		    gk_lower((uint8_t)u[2]) == 'b')))
			goto bad;
	} else if (ndec > 0)
		goto bad;		/* a fraction of a byte */
	if (ndec > FRAC_DIGITS_MAX)
		goto bad;
	/* num * mult / scale, exactly, without overflow */
	if (num > UINT64_MAX / mult)
		goto range;
	v = num * mult;
	if (v % scale != 0) {
		gk_seterr(err, errlen, "size \"%s\" is not a whole number of "
		    "bytes", shown);
		return -1;
	}
	v /= scale;
	if (v < min || v > max)
		goto range;
	*out = v;
	return 0;
bad:
	gk_seterr(err, errlen, "bad size \"%s\": a number of bytes, or with "
	    "K, M, G or T (powers of 1024), e.g. 512M or 1.5G", shown);
	return -1;
range:
	gk_size_format(min, lo, sizeof(lo));
	gk_size_format(max, hi, sizeof(hi));
	gk_seterr(err, errlen, "size \"%s\" is out of range (%s to %s)",
	    shown, lo, hi);
	return -1;
}

int
gk_cpus_parse(const char *s, size_t len, uint32_t *milli, char *err,
    size_t errlen)
{
	uint64_t num, scale, v;
	size_t n, ndec;
	char shown[GK_RLIM_TEXT];

	shown_text(shown, sizeof(shown), s, len);
	if ((n = decimal(s, len, &num, &scale, &ndec)) == 0 || n != len ||
	    ndec > FRAC_DIGITS_MAX) {
		gk_seterr(err, errlen, "bad CPU count \"%s\": a number such as "
		    "2, 1.5 or 0.25 (at most three decimals)", shown);
		return -1;
	}
	if (num > UINT64_MAX / 1000)
		v = UINT64_MAX;
	else
		v = num * 1000 / scale;
	if (v < GK_RLIM_CPUS_MIN || v > GK_RLIM_CPUS_MAX) {
		gk_seterr(err, errlen, "CPU count \"%s\" is out of range (0.01 "
		    "to 1024)", shown);
		return -1;
	}
	*milli = (uint32_t)v;
	return 0;
}

void
gk_size_format(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	uint64_t unit = 1ULL << 40;
	unsigned long long w;
	int i;

	for (i = 3; i >= 0; i--, unit >>= 10) {
		if (v < unit || v > (UINT64_MAX / 100))
			continue;
		w = (unsigned long long)(v / unit);
		if (v % unit == 0)
			snprintf(buf, len, "%llu%c", w, units[i]);
		else if (v * 10 % unit == 0)
			snprintf(buf, len, "%llu.%llu%c", w,
			    (unsigned long long)(v * 10 / unit % 10), units[i]);
		else if (v * 100 % unit == 0)
			snprintf(buf, len, "%llu.%02llu%c", w,
			    (unsigned long long)(v * 100 / unit % 100),
			    units[i]);
		else
			break;
		return;
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

void
gk_cpus_format(uint32_t milli, char *buf, size_t len)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%u", milli / 1000);
	else if (milli % 100 == 0)
		snprintf(buf, len, "%u.%u", milli / 1000, milli % 1000 / 100);
	else if (milli % 10 == 0)
		snprintf(buf, len, "%u.%02u", milli / 1000, milli % 1000 / 10);
	else
		snprintf(buf, len, "%u.%03u", milli / 1000, milli % 1000);
}
