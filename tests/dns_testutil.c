/*
 * Helpers shared by the DNS codec tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "tests/dns_testutil.h"
#include "tests/testdata.h"


void
load(const char *name, struct msg *m)
{
	m->n = test_data_load("dns", name, m->b, sizeof(m->b));
}

void
load_query(const char *c, struct msg *m, struct dns_query *q,
    enum dns_status want)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.query.bin", c);
	load(name, m);
	assert_int_equal(dns_query_parse(m->b, m->n, q), want);
}

/* Load <c>.answer.bin; it parses as an answer to q. */
void
load_answer(const char *c, struct msg *m, const struct dns_query *q,
    struct dns_answer *a)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.answer.bin", c);
	load(name, m);
	assert_int_equal(dns_answer_parse(m->b, m->n, q, a), DNS_OK);
}

/* Message builder for hand-made cases. */
void
put16(struct msg *m, unsigned int v)
{
	m->b[m->n++] = (uint8_t)(v >> 8);
	m->b[m->n++] = (uint8_t)v;
}

void
put32(struct msg *m, uint32_t v)
{
	put16(m, v >> 16);
	put16(m, v & 0xffff);
}

void
putraw(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Dotted name, uncompressed; "" is the root. */
void
putname(struct msg *m, const char *s)
{
	const char *dot;
	size_t l;

	while (*s != '\0') {
		dot = strchr(s, '.');
		l = dot != NULL ? (size_t)(dot - s) : strlen(s);
		m->b[m->n++] = (uint8_t)l;
		putraw(m, s, l);
		s += l + (dot != NULL);
	}
	m->b[m->n++] = 0;
}

void
puthdr(struct msg *m, unsigned int flags, unsigned int qd, unsigned int an,
    unsigned int ns, unsigned int ar)
{
	m->n = 0;
	put16(m, 0x1234);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

void
putrr(struct msg *m, const char *owner, unsigned int type, uint32_t ttl,
    const void *rdata, size_t rdlen)
{
	putname(m, owner);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
	put32(m, ttl);
	put16(m, (unsigned int)rdlen);
	putraw(m, rdata, rdlen);
}

void
putrr_name(struct msg *m, const char *owner, unsigned int type, uint32_t ttl,
    const char *target)
{
	struct msg t = { .n = 0 };

	putname(&t, target);
	putrr(m, owner, type, ttl, t.b, t.n);
}

void
putopt(struct msg *m, unsigned int size, unsigned int version)
{
	m->b[m->n++] = 0;
	put16(m, DNS_T_OPT);
	put16(m, size);
	put32(m, version << 16);
	put16(m, 0);
}

/* Header and question `name`/A/IN; `name` NULL: raw wire `w`/`wl`. */
void
putq(struct msg *m, unsigned int flags, unsigned int qd, unsigned int ar,
    const char *name, const void *w, size_t wl)
{
	puthdr(m, flags, qd, 0, 0, ar);
	if (name != NULL)
		putname(m, name);
	else
		putraw(m, w, wl);
	put16(m, DNS_T_A);
	put16(m, DNS_CLASS_IN);
}

unsigned int
get16(const uint8_t *p)
{
	return ((unsigned int)p[0] << 8) | p[1];
}

uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)get16(p) << 16) | get16(p + 2);
}


/* Check a reply's header against the query; return the flags. */
unsigned int
check_reply(const struct dns_query *q, const uint8_t *r, size_t n,
    unsigned int rcode, unsigned int an, unsigned int ar)
{
	unsigned int flags = get16(r + 2);

	assert_true(n >= DNS_HDR_LEN);
	assert_int_equal(get16(r), q->id);
	assert_true(flags & 0x8000);
	assert_int_equal((flags >> 11) & 15, q->opcode);
	assert_int_equal(flags & 0x0100, q->flags & 0x0100);
	assert_true(flags & 0x0080);
	assert_int_equal(flags & 15, rcode);
	assert_int_equal(get16(r + 6), an);
	assert_int_equal(get16(r + 10), ar);
	return flags;
}
