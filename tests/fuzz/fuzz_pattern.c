/*
 * Fuzz gk_pattern_parse() and the functions around it. Invariants:
 * an accepted name is lower case (letters, digits, '-', '_'), <= 253
 * octets, no trailing dot, and gk_name_normalize() keeps it as it is; a
 * CIDR has no host bits; the canonical text re-parses to an equal
 * pattern and the pattern matches its own name or network; every message
 * is printable and NUL-terminated within its buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "tests/fuzz/fuzz_check.h"

/* text is n printable bytes and its NUL, within size. */
static void
check_text(const char *s, size_t n, size_t size)
{
	CHECK(fuzz_printable(s, size) == n);
}

static void
check_name(const struct gk_pattern *p)
{
	char norm[GK_NAME_MAX + 1];
	size_t i, n = strlen(p->name);

	CHECK(n > 0 && n <= GK_NAME_MAX);
	CHECK(p->name[0] != '.' && p->name[n - 1] != '.');
	for (i = 0; i < n; i++) {
		CHECK((p->name[i] >= 'a' && p->name[i] <= 'z') ||
		    (p->name[i] >= '0' && p->name[i] <= '9') ||
		    p->name[i] == '-' || p->name[i] == '_' ||
		    (p->name[i] == '.' && p->name[i + 1] != '.'));
	}
	CHECK(gk_name_normalize(p->name, n, norm) == (int)n);
	CHECK(strcmp(norm, p->name) == 0);
}

static void
check_match(const struct gk_pattern *p, const char *text)
{
	const char *pats[1] = { text };
	struct gk_allowlist *al;
	char err[512], sub[GK_NAME_MAX + 8];
	size_t n;

	al = gk_allowlist_new(pats, 1, err, sizeof(err));
	CHECK(al != NULL && gk_allowlist_len(al) == 1);
	if (p->kind == GK_PAT_CIDR) {
		CHECK(gk_allow_addr(al, &p->net, p->port));
		CHECK(gk_allow_addr_cidr(al, &p->net));
		CHECK(!gk_allow_name(al, p->name, strlen(p->name), 0));
	} else {
		n = strlen(p->name);
		CHECK(gk_allow_name(al, p->name, n, p->port));
		CHECK(gk_allow_name(al, p->name, n, 0));
		n = (size_t)snprintf(sub, sizeof(sub), "x.%s", p->name);
		if (n <= GK_NAME_MAX)
			CHECK(gk_allow_name(al, sub, n, p->port) ==
			    (p->kind == GK_PAT_WILDCARD));
	}
	gk_allowlist_free(al);
}

static void
check_ok(const struct gk_pattern *p)
{
	char text[GK_PATTERN_MAX + 1];
	struct gk_pattern q;
	size_t n, bit;

	switch (p->kind) {
	case GK_PAT_EXACT:
	case GK_PAT_WILDCARD:
		check_name(p);
		break;
	case GK_PAT_CIDR:
		CHECK(p->net.family == AF_INET || p->net.family == AF_INET6);
		CHECK(p->prefix <= gk_addr_len(&p->net) * 8);
		CHECK(p->name[0] == '\0');
		for (bit = p->prefix; bit < gk_addr_len(&p->net) * 8; bit++)
			CHECK((p->net.bytes[bit / 8] & (0x80 >> bit % 8)) == 0);
		break;
	}
	n = gk_pattern_format(p, text, sizeof(text));
	check_text(text, n, sizeof(text));
	CHECK(gk_pattern_parse((const uint8_t *)text, n, &q) == GK_PAT_OK);
	CHECK(memcmp(p, &q, sizeof(q)) == 0);
	check_match(p, text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gk_allowlist *al;
	static const char *const pats[] = {
		"example.com", "*.github.com:443", "192.0.2.0/24",
		"[2001:db8::/32]:53", "*.example.co.uk",
	};
	char msg[1024], small[16], norm[GK_NAME_MAX + 1];
	enum gk_pat_status st;
	struct gk_pattern p;
	size_t n;
	int r;

	st = gk_pattern_parse(data, size, &p);
	CHECK(strlen(gk_pat_strstatus(st)) > 0);
	n = gk_pattern_error(data, size, st, msg, sizeof(msg));
	check_text(msg, n, sizeof(msg));
	CHECK(strncmp(msg, "invalid pattern '", 17) == 0);
	n = gk_pattern_error(data, size, st, small, sizeof(small));
	check_text(small, n, sizeof(small));
	if (st == GK_PAT_OK)
		check_ok(&p);

	/* the same bytes as a queried name */
	if (al == NULL)
		al = gk_allowlist_new(pats, 5, msg, sizeof(msg));
	CHECK(al != NULL);
	r = gk_name_normalize((const char *)data, size, norm);
	if (gk_allow_name(al, (const char *)data, size, 0))
		CHECK(r > 0);
	n = gk_allow_explain(al, (const char *)data, size, 443, msg,
	    sizeof(msg));
	check_text(msg, n, sizeof(msg));
	return 0;
}
