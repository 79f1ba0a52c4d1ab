/*
 * gk_hash: FNV-1a, 32 bits, the one hash of gatekeeperd's tables (cages
 * by id, addresses, in-flight DNS queries, the DNS cache, audit folding).
 */
#ifndef GK_HASH_H
#define GK_HASH_H

#include <stddef.h>
#include <stdint.h>

#define GK_HASH_INIT	2166136261u	/* FNV offset basis */
#define GK_HASH_PRIME	16777619u

/* One FNV-1a step: h extended by the value v (a byte, or a small word
 * taken whole). */
static inline uint32_t
gk_hash_step(uint32_t h, uint32_t v)
{
	return (h ^ v) * GK_HASH_PRIME;
}

/* h extended by n bytes at p. */
static inline uint32_t
gk_hash_bytes(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = gk_hash_step(h, b[i]);
	return h;
}

/* h extended by the bytes of a NUL-terminated string. */
static inline uint32_t
gk_hash_str(uint32_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = gk_hash_step(h, (uint8_t)*s);
	return h;
}

#endif /* GK_HASH_H */
