/*
 * dns_msg_int.h: what dns_msg.c (names, queries, replies) and
 * dns_answer.c (upstream answers) share.
 */
#ifndef DNS_MSG_INT_H
#define DNS_MSG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_F_QR		0x8000
#define DNS_F_TC		0x0200
#define DNS_F_RD		0x0100
#define DNS_F_RA		0x0080
#define DNS_OPCODE(f)		(((f) >> 11) & 0x0f)
#define DNS_TTL_MAX		0x7fffffffU	/* RFC 2181 8: larger is 0 */

/* A big-endian 32-bit field. */
static inline uint32_t
dns_get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

/*
 * Read the name at *pos into uncompressed wire form (DNS_MAX_NAME bytes at
 * `wire`, its length in *wlen). Pointers are refused unless `ptrs`; a
 * pointer's target lies in front of the segment holding it, never in the
 * header; with `ttls` (a bit per byte), no byte reached through a pointer
 * is part of a TTL field. *pos moves past the name as stored. false: not
 * a valid name.
 */
bool		 dns_name_read(const uint8_t *buf, size_t len, size_t *pos,
		    bool ptrs, const uint8_t *ttls, uint8_t *wire, size_t *wlen);

#endif /* DNS_MSG_INT_H */
