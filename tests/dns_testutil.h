/*
 * Helpers shared by the DNS codec tests: captured messages from
 * tests/data/dns and a small builder for hand-made messages.
 */
#ifndef DNS_TESTUTIL_H
#define DNS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "dns/dns_msg.h"

#define MSG_MAX		4096
#define A_WEB		"\12\0\0\5"
#define AAAA_WEB	"\375\0\0\0\0\0\0\0\0\0\0\0\0\0\0\5"

struct msg {
	uint8_t	b[MSG_MAX];
	size_t	n;
};

void	load(const char *name, struct msg *m);
void	load_query(const char *c, struct msg *m, struct dns_query *q, enum dns_status want);
void	load_answer(const char *c, struct msg *m, const struct dns_query *q, struct dns_answer *a);
void	put16(struct msg *m, unsigned int v);
void	put32(struct msg *m, uint32_t v);
void	putraw(struct msg *m, const void *p, size_t n);
void	putname(struct msg *m, const char *s);
void	puthdr(struct msg *m, unsigned int flags, unsigned int qd, unsigned int an, unsigned int ns, unsigned int ar);
void	putrr(struct msg *m, const char *owner, unsigned int type, uint32_t ttl, const void *rdata, size_t rdlen);
void	putrr_name(struct msg *m, const char *owner, unsigned int type, uint32_t ttl, const char *target);
void	putopt(struct msg *m, unsigned int size, unsigned int version);
void	putq(struct msg *m, unsigned int flags, unsigned int qd, unsigned int ar, const char *name, const void *w, size_t wl);
unsigned int	get16(const uint8_t *p);
uint32_t	get32(const uint8_t *p);
unsigned int	check_reply(const struct dns_query *q, const uint8_t *r, size_t n, unsigned int rcode, unsigned int an, unsigned int ar);

#endif /* DNS_TESTUTIL_H */
