/*
 * Fuzz learning request rules. The input is "METHOD\nTARGET\n" repeated
 * (up to MAXREQ requests, to host a.example on port 443). Invariants:
 *   - a learnable path is printable ASCII, starts with '/', fits its
 *     buffer, and is learned again unchanged (cutting is idempotent);
 *   - the rules made of the learnable requests are at most
 *     GK_LEARN_HOST_RULES, each parses back (gk_pattern_parse) to a rule
 *     whose canonical text is its own, and together they allow every
 *     request they were learned from (gk_allow_request).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/policy/gk_reqlearn.h"
#include "tests/fuzz/fuzz_check.h"

#define MAXREQ	24
#define HOST	"a.example"

/* The rules made of v[0..n) allow each of the requests m[i], t[i]. */
static void
check_rules(struct gk_learned_req *v, size_t n, const struct fuzz_field *m,
    const struct fuzz_field *t, size_t nreq)
{
	static char text[MAXREQ][GK_PATTERN_MAX + 1];
	char back[GK_PATTERN_MAX + 1], why[256];
	const char *pats[MAXREQ];
	struct gk_allowlist *al;
	struct gk_pattern p;
	size_t i, k;

	k = gk_reqlearn_merge(v, n);
	CHECK(k <= n && k <= GK_LEARN_HOST_RULES);
	for (i = 0; i < k; i++) {
		gk_reqlearn_format(&v[i], text[i], sizeof(text[i]));
		CHECK(gk_pattern_parse((const uint8_t *)text[i],
		    strlen(text[i]), &p) == GK_PAT_OK);
		gk_pattern_format(&p, back, sizeof(back));
		CHECK(strcmp(back, text[i]) == 0);
		pats[i] = text[i];
	}
	al = gk_allowlist_new(pats, k, why, sizeof(why));
	CHECK(al != NULL);
	for (i = 0; i < nreq; i++)
		CHECK(gk_allow_request(al, HOST, strlen(HOST), 443, m[i].s,
		    m[i].n, t[i].s, t[i].n, why, sizeof(why)));
	gk_allowlist_free(al);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gk_learned_req v[MAXREQ];
	struct fuzz_field m[MAXREQ], t[MAXREQ];
	char again[GK_LEARN_PATH_MAX + 1];
	size_t pos = 0, n = 0, i;
	struct gk_learned_req *r;

	while (pos < size && n < MAXREQ) {
		m[n] = fuzz_next_field(data, size, &pos);
		t[n] = fuzz_next_field(data, size, &pos);
		r = &v[n];
		memset(r, 0, sizeof(*r));
		if (!gk_reqlearn_path(m[n].s, m[n].n, t[n].s, t[n].n, r->path,
		    sizeof(r->path)))
			continue;
		CHECK(r->path[0] == '/');
		fuzz_printable(r->path, sizeof(r->path));
		for (i = 0; r->path[i] != '\0'; i++)
			CHECK(r->path[i] != ' ');
		CHECK(gk_reqlearn_path("GET", 3, r->path, strlen(r->path),
		    again, sizeof(again)));
		CHECK(strcmp(again, r->path) == 0);
		snprintf(r->host, sizeof(r->host), "%s", HOST);
		r->port = 443;
		r->methods = gk_method_bit(m[n].s, m[n].n);
		n++;
	}
	check_rules(v, n, m, t, n);
	return 0;
}
