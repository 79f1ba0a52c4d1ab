/*
 * gk_rd: a bounded read cursor over a byte buffer with a sticky error.
 *
 * Every read checks the remaining length first (written so it cannot
 * overflow); a failed read sets ->err, returns zeroes and leaves the
 * position where it was, so a sequence of reads is checked once at the end.
 */
#ifndef GK_RD_H
#define GK_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct gk_rd {
	const uint8_t	*buf;
	size_t		 len;
	size_t		 pos;
	bool		 err;
};

static inline void
gk_rd_init(struct gk_rd *r, const uint8_t *buf, size_t len)
{
	r->buf = buf;
	r->len = len;
	r->pos = 0;
	r->err = false;
}

static inline size_t
gk_rd_left(const struct gk_rd *r)
{
	return r->len - r->pos;
}

static inline bool
gk_rd_need(struct gk_rd *r, size_t n)
{
	if (r->err || r->len - r->pos < n) {
		r->err = true;
		return false;
	}
	return true;
}

static inline uint8_t
gk_rd_u8(struct gk_rd *r)
{
	if (!gk_rd_need(r, 1))
		return 0;
	return r->buf[r->pos++];
}

static inline uint16_t
gk_rd_u16(struct gk_rd *r)
{
	uint16_t v;

	if (!gk_rd_need(r, 2))
		return 0;
	v = (uint16_t)((r->buf[r->pos] << 8) | r->buf[r->pos + 1]);
	r->pos += 2;
	return v;
}

static inline uint32_t
gk_rd_u24(struct gk_rd *r)
{
	uint32_t v;

	if (!gk_rd_need(r, 3))
		return 0;
	v = ((uint32_t)r->buf[r->pos] << 16) |
	    ((uint32_t)r->buf[r->pos + 1] << 8) | r->buf[r->pos + 2];
	r->pos += 3;
	return v;
}

static inline uint32_t
gk_rd_u32(struct gk_rd *r)
{
	uint32_t v;

	if (!gk_rd_need(r, 4))
		return 0;
	v = ((uint32_t)r->buf[r->pos] << 24) |
	    ((uint32_t)r->buf[r->pos + 1] << 16) |
	    ((uint32_t)r->buf[r->pos + 2] << 8) | r->buf[r->pos + 3];
	r->pos += 4;
	return v;
}

/* Copy n bytes out; on failure dst is zeroed. */
static inline void
gk_rd_bytes(struct gk_rd *r, void *dst, size_t n)
{
	if (!gk_rd_need(r, n)) {
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->buf + r->pos, n);
	r->pos += n;
}

/* Return a pointer to the next n bytes and skip them, or NULL. */
static inline const uint8_t *
gk_rd_take(struct gk_rd *r, size_t n)
{
	const uint8_t *p;

	if (!gk_rd_need(r, n))
		return NULL;
	p = r->buf + r->pos;
	r->pos += n;
	return p;
}

static inline void
gk_rd_skip(struct gk_rd *r, size_t n)
{
	if (gk_rd_need(r, n))
		r->pos += n;
}

#endif /* GK_RD_H */
