/*
 * sni_retry: the rest of a TLS 1.3 handshake's plaintext the peek must
 * see once a ClientHello passed. The server's first handshake message
 * says whether the server asked for a HelloRetryRequest (RFC 8446
 * §4.1.3: a ServerHello whose random is a fixed value), and if it did,
 * the client's next bytes carry its second ClientHello, after at most one
 * change_cipher_spec record (RFC 8446 §D.4, middlebox compatibility).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sni/sni.h"

#define TLS_CT_CCS		20
#define TLS_CT_HANDSHAKE	22
#define TLS_MAX_RECORD		16384
#define TLS_HS_SERVER_HELLO	2
#define TLS_HS_HDR		4
#define TLS_VERSION_LEN		2
#define TLS_RANDOM_LEN		32
/* handshake bytes that tell a HelloRetryRequest: header, version, random */
#define SRV_NEED		(TLS_HS_HDR + TLS_VERSION_LEN + TLS_RANDOM_LEN)
#define CCS_LEN			6

/* SHA-256("HelloRetryRequest"), RFC 8446 §4.1.3 */
static const uint8_t hrr_random[TLS_RANDOM_LEN] = {
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
	0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
	0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

/* The verdict on the first SRV_NEED handshake bytes. */
static enum sni_srv_status
srv_decide(const uint8_t *hs, struct sni_srv_result *out)
{
	out->legacy_version = (uint16_t)((hs[TLS_HS_HDR] << 8) |
	    hs[TLS_HS_HDR + 1]);
	if (memcmp(hs + TLS_HS_HDR + TLS_VERSION_LEN, hrr_random,
	    TLS_RANDOM_LEN) == 0)
		return SNI_SRV_HRR;
	return SNI_SRV_HELLO;
}

/*
 * Handshake records from the start, gathering payload bytes until
 * SRV_NEED are known. Any prefix of the input decides NEED_MORE or what
 * the whole input decides: each byte is judged when it arrives.
 */
enum sni_srv_status
sni_srv_parse(const uint8_t *buf, size_t len, struct sni_srv_result *out)
{
	uint8_t hs[SRV_NEED];
	size_t pos = 0, got = 0, rlen, take;

	memset(out, 0, sizeof(*out));
	if (len >= 3)
		out->record_version = (uint16_t)((buf[1] << 8) | buf[2]);
	for (;;) {
		if (len - pos < 1)
			return SNI_SRV_NEED_MORE;
		if (buf[pos] != TLS_CT_HANDSHAKE)	/* alert, other */
			return pos == 0 ? SNI_SRV_OTHER : SNI_SRV_INVALID;
		if (len - pos < 2)
			return SNI_SRV_NEED_MORE;
		if (buf[pos + 1] != 3)
			return pos == 0 ? SNI_SRV_OTHER : SNI_SRV_INVALID;
		if (out->nrecords == SNI_MAX_RECORDS)
			return SNI_SRV_INVALID;
		if (len - pos < SNI_REC_HDR)
			return SNI_SRV_NEED_MORE;
		rlen = ((size_t)buf[pos + 3] << 8) | buf[pos + 4];
		if (rlen == 0 || rlen > TLS_MAX_RECORD)
			return SNI_SRV_INVALID;
		out->nrecords++;
		pos += SNI_REC_HDR;
		take = rlen < SRV_NEED - got ? rlen : SRV_NEED - got;
		for (; take > 0 && pos < len; take--, rlen--) {
			hs[got] = buf[pos++];
			if (got++ == 0 && hs[0] != TLS_HS_SERVER_HELLO)
				return out->nrecords == 1 ? SNI_SRV_OTHER :
				    SNI_SRV_INVALID;
		}
		if (got == SRV_NEED)
			return srv_decide(hs, out);
		if (take > 0)
			return SNI_SRV_NEED_MORE;
		pos += rlen;	/* (rlen is 0 here: the record is used up) */
	}
}

const char *
sni_srv_strstatus(enum sni_srv_status st)
{
	switch (st) {
	case SNI_SRV_NEED_MORE:
		return "need-more";
	case SNI_SRV_HRR:
		return "hello-retry-request";
	case SNI_SRV_HELLO:
		return "server-hello";
	case SNI_SRV_OTHER:
		return "not-server-hello";
	case SNI_SRV_INVALID:
		return "invalid-tls";
	}
	return "unknown";
}

/* A change_cipher_spec record of TLS 1.3's compatibility mode: 20 3 x 0
 * 1 1. NEED_MORE while what is there matches, SNI_OK once all of it. */
static enum sni_status
ccs_record(const uint8_t *buf, size_t len)
{
	static const uint8_t want[CCS_LEN] = { TLS_CT_CCS, 3, 0, 0, 1, 1 };
	size_t i;

	for (i = 0; i < CCS_LEN && i < len; i++)
		if (i != 2 && buf[i] != want[i])
			return SNI_INVALID;
	return len < CCS_LEN ? SNI_NEED_MORE : SNI_OK;
}

enum sni_status
sni_parse_retry(const uint8_t *buf, size_t len, struct sni_result *out)
{
	enum sni_status st;
	size_t skip = 0;

	if (len > 0 && buf[0] == TLS_CT_CCS) {
		if ((st = ccs_record(buf, len)) != SNI_OK) {
			memset(out, 0, sizeof(*out));
			return st;
		}
		skip = CCS_LEN;
	}
	st = sni_parse(buf + skip, len - skip, out);
	if (st == SNI_OK || st == SNI_ABSENT)
		out->consumed += skip;
	return st;
}
