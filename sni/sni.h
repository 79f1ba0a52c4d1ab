/*
 * sni: peek at the first bytes a client sends on a tunnel and extract the
 * server_name of its TLS ClientHello (RFC 8446 §4.1.2, RFC 6066 §3).
 * Pure: bytes in, result out; no I/O, no logging, no allocation.
 */
#ifndef SNI_H
#define SNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_name.h"

#define SNI_MAX_NAME		GK_NAME_MAX	/* trailing dot removed */
#define SNI_MAX_HELLO		16384	/* ClientHello body, reassembled */
#define SNI_MAX_RECORDS		8	/* handshake records it may span */
#define SNI_REC_HDR		5
/* Bytes after which sni_parse() never returns SNI_NEED_MORE. */
#define SNI_MAX_WIRE		(4 + SNI_MAX_HELLO + \
				    SNI_MAX_RECORDS * SNI_REC_HDR)

enum sni_status {
	SNI_NEED_MORE,	/* a valid prefix: call again with more bytes */
	SNI_OK,		/* complete ClientHello with a host_name */
	SNI_ABSENT,	/* complete ClientHello without server_name */
	SNI_NOT_TLS,	/* neither a TLS record nor an SSLv2 hello */
	SNI_INVALID,	/* malformed record, handshake, extension or name
			   (a server name gk_name_parse() refuses) */
	SNI_TOO_LONG,	/* > SNI_MAX_HELLO or > SNI_MAX_RECORDS records */
	SNI_SSL2,	/* an SSLv2-format ClientHello: no server name */
	SNI_NOT_HELLO,	/* a TLS record other than a handshake first, or a
			   handshake record whose major version is not 3 */
};

struct sni_result {
	char		name[SNI_MAX_NAME + 1];	/* gk_name_parse() text:
						   lowercase, NUL-terminated;
						   "" unless SNI_OK */
	size_t		name_len;
	size_t		consumed;	/* bytes of buf holding the hello's
					   records (SNI_OK, SNI_ABSENT) */
	unsigned int	nrecords;	/* handshake records it spanned */
	uint16_t	record_version;	/* of the first record */
	uint16_t	legacy_version;	/* ClientHello.legacy_version */
	bool		ech;		/* encrypted_client_hello (0xfe0d) */
	bool		grease;		/* RFC 8701 cipher or extension seen */
};

/*
 * buf holds the first len bytes the client sent; the caller keeps them,
 * appends what arrives next and calls again while SNI_NEED_MORE. The hello
 * may be fragmented over several handshake records; it must fill its
 * records exactly. Bytes after its last record are not looked at.
 *
 * What servers may take for a hello is told apart from other protocols:
 * a first byte with the high bit set needs 3 bytes (SNI_SSL2 when the
 * third is msg_type CLIENT-HELLO, RFC 6101 E.2), a first byte 20..24
 * (change_cipher_spec, alert, handshake, application_data, heartbeat)
 * needs 2 (SNI_NOT_HELLO with a major version 3, or for 22 with any
 * other). Every prefix of an input says SNI_NEED_MORE or what the whole
 * input says.
 */
enum sni_status	 sni_parse(const uint8_t *buf, size_t len,
		    struct sni_result *out);
const char	*sni_strstatus(enum sni_status st);
/* Does the SNI equal host (ASCII case-insensitive, one trailing dot of
 * host ignored)? False unless r came from SNI_OK. */
bool		 sni_matches(const struct sni_result *r, const char *host,
		    size_t host_len);

/*
 * After a ClientHello: the server's first handshake message, far enough
 * to tell a HelloRetryRequest (RFC 8446 §4.1.3), which a second
 * ClientHello answers.
 */
enum sni_srv_status {
	SNI_SRV_NEED_MORE,	/* a valid prefix: call again with more bytes */
	SNI_SRV_HRR,		/* a ServerHello with the HelloRetryRequest
				   random: a second ClientHello follows */
	SNI_SRV_HELLO,		/* another ServerHello (TLS 1.3 or earlier) */
	SNI_SRV_OTHER,		/* no handshake record or no ServerHello
				   first (an alert, not TLS) */
	SNI_SRV_INVALID,	/* a ServerHello's first bytes malformed: an
				   empty or overlong record, another record
				   type or message type inside it, more than
				   SNI_MAX_RECORDS records */
};

/* Bytes after which sni_srv_parse() never returns SNI_SRV_NEED_MORE:
 * the handshake header, legacy_version and random over records. */
#define SNI_SRV_MAX_WIRE	(SNI_MAX_RECORDS * SNI_REC_HDR + 4 + 2 + 32)

struct sni_srv_result {
	unsigned int	nrecords;	/* records looked at */
	uint16_t	record_version;	/* of the first record */
	uint16_t	legacy_version;	/* ServerHello.legacy_version (HRR,
					   HELLO) */
};

/*
 * buf: the first len bytes the server sent. Only the ServerHello's
 * header, version and random are read (its fragments may span records);
 * every prefix of an input says SNI_SRV_NEED_MORE or what the whole
 * input says.
 */
enum sni_srv_status sni_srv_parse(const uint8_t *buf, size_t len,
		    struct sni_srv_result *out);
const char	*sni_srv_strstatus(enum sni_srv_status st);

/*
 * The client's bytes after its first ClientHello, once the server sent a
 * HelloRetryRequest: at most one change_cipher_spec record of TLS 1.3's
 * middlebox compatibility mode (20 3 x 0 1 1; SNI_INVALID if otherwise),
 * then the second ClientHello as sni_parse() reads it (consumed counts
 * the change_cipher_spec record too).
 */
enum sni_status	 sni_parse_retry(const uint8_t *buf, size_t len,
		    struct sni_result *out);

#endif /* SNI_H */
