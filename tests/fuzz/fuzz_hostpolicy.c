/*
 * Fuzz gk_hostpolicy_parse() and the queries on what it parsed.
 * Invariants: a message is printable, NUL-terminated and starts with the
 * file's name; a parsed policy has a deny list, a version of 1 to 64
 * printable bytes ("sha256:" and 12 hex digits when computed), a bound
 * that is NULL or not empty; every deny pattern denies its own name or
 * network, every bound pattern is within the bound, and nothing of the
 * bound is outside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_hostpolicy.h"
#include "tests/fuzz/fuzz_check.h"

/* computed: the input has no version line (a given one may look like
 * anything printable, "sha256:..." too) */
static void
check_version(const char *v, bool computed)
{
	size_t i, n = strlen(v);

	CHECK(n >= 1 && n <= GK_HOSTPOLICY_VERSION_MAX);
	for (i = 0; i < n; i++)
		CHECK(v[i] > 0x20 && v[i] < 0x7f);
	if (computed)
		CHECK(n == 19 && strncmp(v, "sha256:", 7) == 0 &&
		    strspn(v + 7, "0123456789abcdef") == 12);
}

/* A deny pattern denies what it names, on its port (and any port). */
static void
check_deny(const struct gk_hostpolicy *p, const struct gk_pattern *d)
{
	uint16_t port = d->port != 0 ? d->port : 443;
	size_t n = strlen(d->name);

	if (d->kind == GK_PAT_CIDR) {
		CHECK(gk_hostpolicy_denies_addr(p, &d->net, port));
		if (d->port == 0)
			CHECK(gk_hostpolicy_denies_addr(p, &d->net, 0));
		CHECK(!gk_hostpolicy_denies_name(p, d->name, n, 0));
	} else {
		CHECK(gk_hostpolicy_denies_name(p, d->name, n, port));
		if (d->port == 0)
			CHECK(gk_hostpolicy_denies_name(p, d->name, n, 0));
	}
	(void)gk_hostpolicy_within(p, d);
}

static void
check_policy(const struct gk_hostpolicy *p, bool computed)
{
	char text[GK_PATTERN_MAX + 1], out[256];
	const struct gk_pattern *pat;
	size_t i;

	CHECK(p->deny != NULL);
	CHECK(p->bound == NULL || gk_allowlist_len(p->bound) > 0);
	check_version(p->version, computed);
	for (i = 0; (pat = gk_allowlist_at(p->deny, i)) != NULL; i++) {
		check_deny(p, pat);
		gk_pattern_format(pat, text, sizeof(text));
		(void)gk_hostpolicy_denies_name(p, text, strlen(text),
		    pat->port);
	}
	for (i = 0; (pat = gk_allowlist_at(p->bound, i)) != NULL; i++)
		CHECK(gk_hostpolicy_within(p, pat));
	CHECK(gk_hostpolicy_outside(p, p->bound, out, sizeof(out)) == 0);
	CHECK(out[0] == '\0');
	(void)gk_hostpolicy_outside(p, p->deny, out, sizeof(out));
	(void)fuzz_printable(out, sizeof(out));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gk_hostpolicy p;
	char err[1024], small[12];

	if (gk_hostpolicy_parse(data, size, "fuzz", &p, err,
	    sizeof(err)) == 0) {
		check_policy(&p, size == 0 ||
		    memmem(data, size, "version", 7) == NULL);
		gk_hostpolicy_clear(&p);
		CHECK(p.deny == NULL && p.bound == NULL);
		return 0;
	}
	CHECK(p.deny == NULL && p.bound == NULL && p.version[0] == '\0');
	(void)fuzz_printable(err, sizeof(err));
	CHECK(strncmp(err, "fuzz:", 5) == 0);
	CHECK(gk_hostpolicy_parse(data, size, "fuzz", &p, small,
	    sizeof(small)) == -1);
	(void)fuzz_printable(small, sizeof(small));
	return 0;
}
