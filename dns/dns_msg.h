/*
 * dns_msg: DNS message codec (RFC 1035, 6891, 8482). Pure functions over
 * bounded buffers: no I/O, no logging, no globals.
 */
#ifndef DNS_MSG_H
#define DNS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HDR_LEN		12
#define DNS_MAX_NAME		255	/* wire form, including root label */
#define DNS_MAX_LABEL		63
#define DNS_NAME_TEXT_MAX	1024	/* presentation form with \DDD escapes */
#define DNS_MAX_PTR_HOPS	64	/* compression pointers followed per name */
#define DNS_MAX_ADDRS		64	/* A/AAAA kept from one answer */
#define DNS_UDP_MIN		512
#define DNS_EDNS_SIZE		1232	/* what we advertise and accept at most */
#define DNS_MAX_MSG		65535

enum dns_rcode {
	DNS_RC_NOERROR = 0,
	DNS_RC_FORMERR = 1,
	DNS_RC_SERVFAIL = 2,
	DNS_RC_NXDOMAIN = 3,
	DNS_RC_NOTIMP = 4,
	DNS_RC_REFUSED = 5,
};
/* Extended rcode (RFC 6891): only in replies carrying our OPT. */
#define DNS_RC_BADVERS	16

enum dns_type {
	DNS_T_A = 1,
	DNS_T_NS = 2,
	DNS_T_CNAME = 5,
	DNS_T_SOA = 6,
	DNS_T_HINFO = 13,
	DNS_T_AAAA = 28,
	DNS_T_OPT = 41,
	DNS_T_SVCB = 64,
	DNS_T_HTTPS = 65,
	DNS_T_ANY = 255,
};

#define DNS_CLASS_IN	1

enum dns_status {
	DNS_OK,
	DNS_DROP,	/* no reply possible or wanted: < 12 bytes, or QR set */
	DNS_FORMERR,	/* reply FORMERR: truncated, bad name, QDCOUNT != 1 ... */
	DNS_NOTIMP,	/* reply NOTIMP: opcode other than QUERY */
};

struct dns_query {
	uint16_t	id;
	uint16_t	flags;		/* header flags word as received */
	uint8_t		opcode;
	uint16_t	qtype;
	uint16_t	qclass;
	/* question name, uncompressed wire form, case as sent */
	uint8_t		qname_wire[DNS_MAX_NAME];
	uint8_t		qname_wire_len;
	/* lower-case presentation form, no trailing dot; "" for the root */
	char		name[DNS_NAME_TEXT_MAX];
	size_t		name_len;
	bool		name_host;	/* a host name by gk_name_parse(), the
					   rule patterns and SNI follow */
	bool		edns;		/* an OPT record was present */
	uint16_t	edns_udp_size;	/* as sent (0 if !edns) */
	uint8_t		edns_version;
	bool		edns_do;
};

/*
 * Parse a query. On DNS_FORMERR/DNS_NOTIMP the header fields (id, flags,
 * opcode) are valid and, where the question could be read, so is it, so a
 * reply can echo them. Trailing bytes after the question and the OPT
 * record are a FORMERR; so are ANCOUNT/NSCOUNT != 0 and more than one
 * OPT. A pointer in the question name is a FORMERR. qname_wire_len is 0
 * when the question was not read (the reply functions then omit it).
 * An OPT with edns_version > 0 parses as DNS_OK: the caller replies
 * dns_reply_empty(q, DNS_RC_BADVERS, ...).
 */
enum dns_status	 dns_query_parse(const uint8_t *buf, size_t len,
		    struct dns_query *q);

/*
 * Build a query for name (presentation form, no trailing dot), qtype,
 * class IN, id 0 and RD set into out. Returns the length, 0 when name has
 * an empty or long label or the message does not fit outlen.
 */
size_t		 dns_build_lookup(const char *name, uint16_t qtype,
		    uint8_t *out, size_t outlen);

/* The largest UDP reply the client accepts: 512, or its EDNS size capped
 * at DNS_EDNS_SIZE (and at least 512). */
size_t		 dns_query_udp_limit(const struct dns_query *q);

/*
 * Reply with no records: header (id, QR, opcode, RD copied, RA set, rcode),
 * the question when it was read, and an OPT record (our DNS_EDNS_SIZE,
 * version 0) when the query had one. Returns the length, 0 if `outlen` is
 * too small. An rcode > 15 (DNS_RC_BADVERS) is split between the header
 * and the OPT; without an OPT, SERVFAIL is sent instead.
 */
size_t		 dns_reply_empty(const struct dns_query *q, uint8_t rcode,
		    uint8_t *out, size_t outlen);

/* RFC 8482 answer to ANY: one HINFO "RFC8482" "" record for the name. */
/* Reply with one A record: the IPv4 address a4 (network order) for q's
 * name, with TTL ttl. 0 if outlen is too small or q has no question. */
size_t		 dns_reply_a(const struct dns_query *q, const uint8_t a4[4],
		    uint32_t ttl, uint8_t *out, size_t outlen);
size_t		 dns_reply_rfc8482(const struct dns_query *q, uint32_t ttl,
		    uint8_t *out, size_t outlen);

/*
 * Reply with cached answer and authority records. `rrs` are the records as
 * they stood in the upstream message right after a question identical in
 * length to q's (so compression pointers into the question stay valid).
 * Every TTL is rewritten to min(ttl, cap) - age (never below 0). If the
 * result exceeds `limit`, the reply is header + question + OPT with TC set.
 */
size_t		 dns_reply_records(const struct dns_query *q, uint8_t rcode,
		    const uint8_t *rrs, size_t rrs_len, uint16_t ancount,
		    uint16_t nscount, uint32_t cap, uint32_t age, uint8_t *out,
		    size_t outlen, size_t limit);

/* A recursive query for the upstream: RD set, the question of q, an OPT
 * advertising DNS_EDNS_SIZE. */
size_t		 dns_build_query(uint16_t id, const struct dns_query *q,
		    uint8_t *out, size_t outlen);

struct dns_addr {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];
	uint32_t	ttl;
};

struct dns_answer {
	uint8_t		rcode;
	bool		tc;
	uint16_t	ancount, nscount;
	size_t		rrs_off;	/* answer + authority records ... */
	size_t		rrs_len;	/* ... as a byte range of the message */
	uint32_t	min_ttl;	/* over those records, an SOA in
					 * authority counting as min(SOA ttl,
					 * SOA minimum) (RFC 2308); 0 (do not
					 * cache) when there are no records or
					 * for a negative answer (NXDOMAIN,
					 * NODATA) without an SOA */
	size_t		naddrs;
	struct dns_addr	addrs[DNS_MAX_ADDRS]; /* A/AAAA owned by the qname
					 * or a CNAME target reached from it */
};

/*
 * Parse an upstream answer to q: QR set, question equal to q's
 * (case-insensitive name, same type and class). Names are decompressed
 * with backward-only pointers and a hop cap to follow the CNAME chain.
 * The id is not checked (the caller matches it). DNS_DROP: not a response
 * to q (QR clear, other question); DNS_FORMERR: malformed. With TC set the
 * records are not parsed (ancount = nscount = rrs_len = 0): retry on TCP.
 */
enum dns_status	 dns_answer_parse(const uint8_t *buf, size_t len,
		    const struct dns_query *q, struct dns_answer *a);

/*
 * Skip a (possibly compressed) name at *pos without following pointers;
 * false if malformed. Used to walk records.
 */
bool		 dns_name_skip(const uint8_t *buf, size_t len, size_t *pos);

/*
 * Expand a (possibly compressed) name at *pos into lower-case presentation
 * form; *pos moves past the name as stored. false on loops, forward
 * pointers, overlong names or truncation.
 */
bool		 dns_name_expand(const uint8_t *buf, size_t len, size_t *pos,
		    char *out, size_t outlen, size_t *outlen_used);

#endif /* DNS_MSG_H */
