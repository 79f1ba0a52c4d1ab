/*
 * cage_testutil.h: a cage as the cmocka tests make one (named by a source
 * address, no owner), through gk_cage_begin like every cage.
 */
#ifndef CAGE_TESTUTIL_H
#define CAGE_TESTUTIL_H

#include <string.h>

#include "gatekeeper/cage/gk_cage.h"

static inline struct gk_cage *
gk_test_cage(struct gk_cage_table *t, const struct gk_addr *src,
    const char *label, uid_t uid, struct gk_allowlist *al,
    enum gk_cage_err *e)
{
	struct gk_cage_spec s;
	char err[256];

	memset(&s, 0, sizeof(s));
	s.source = *src;
	s.label = label;
	s.uid = uid;
	s.allow = al;
	s.nsfd = -1;
	return gk_cage_begin(t, &s, e, err, sizeof(err));
}

/* A cage with source src (text) allowed the one pattern pat; NULL if
 * anything fails. */
static inline struct gk_cage *
gk_test_cage_one(struct gk_cage_table *t, const char *src, const char *pat,
    const char *label)
{
	struct gk_allowlist *al;
	struct gk_addr a;
	enum gk_cage_err e;
	char err[256];

	if (gk_addr_parse(src, &a) == -1 ||
	    (al = gk_allowlist_new(&pat, 1, err, sizeof(err))) == NULL)
		return NULL;
	return gk_test_cage(t, &a, label, 0, al, &e);
}

#endif /* CAGE_TESTUTIL_H */
