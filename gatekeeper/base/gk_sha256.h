/*
 * SHA-256 (FIPS 180-4), for the few digests gk-run and the protocol
 * layer take (a project's cache key, a cage's spec, the host policy's
 * text), without loading and initialising a crypto library for them.
 */
#ifndef GK_SHA256_H
#define GK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GK_SHA256_LEN	32

struct gk_sha256 {
	uint32_t	 h[8];
	uint64_t	 bytes;		/* taken so far */
	uint8_t		 buf[64];	/* a block being filled */
	size_t		 nbuf;
};

void	gk_sha256_init(struct gk_sha256 *s);
void	gk_sha256_update(struct gk_sha256 *s, const void *data, size_t len);
void	gk_sha256_final(struct gk_sha256 *s, uint8_t out[GK_SHA256_LEN]);
/* The digest of len bytes in one call. */
void	gk_sha256(const void *data, size_t len, uint8_t out[GK_SHA256_LEN]);

#endif /* GK_SHA256_H */
