/*
 * gk_ctlallow: the allowlist a control op asks for: made from a request's
 * patterns (cage.create, cage.update with "allow"), or the cage's own
 * edited ("add", "remove"), each within the host policy, with a reply
 * naming what is wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_hostpolicy.h"
#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/faces/gk_control.h"
#include "gatekeeper/faces/gk_control_int.h"

/* "a, b, c" (cut to fit; "" when empty). */
static void
join_patterns(const struct gk_allowlist *al, char *buf, size_t len)
{
	size_t i, n;

	buf[0] = '\0';
	for (i = 0; i < gk_allowlist_len(al); i++) {
		n = strlen(buf);
		if (n + 4 >= len)
			break;
		if (i > 0) {
			snprintf(buf + n, len - n, ", ");
			n += 2;
		}
		gk_pattern_format(gk_allowlist_at(al, i), buf + n, len - n);
	}
}

/*
 * The allowlist built from (base less what drop() says goes) plus the
 * patterns add, if every pattern is within the host policy's bound; else
 * reply and NULL.
 */
static struct gk_allowlist *
build_allow(struct ctlconn *cc, const struct gk_allowlist *base,
    bool (*drop)(const struct gk_pattern *, void *), void *arg,
    char *const *add, size_t nadd)
{
	const struct gk_hostpolicy *hp = gk_cage_table_policy(cc->ctl->cages);
	char outside[CTL_ERRLEN / 2], bound[CTL_ERRLEN / 2];
	char err[CTL_ERRLEN] = "";
	struct gk_allowlist *al;
	size_t n;

	al = gk_allowlist_edit(base, drop, arg, (const char *const *)add,
	    nadd, err, sizeof(err));
	if (al == NULL) {
		ctl_reply_error(cc, "%s", err[0] != '\0' ? err :
		    "cannot build the allowlist: out of memory");
		return NULL;
	}
	/* every pattern within the host policy's bound, or nothing */
	if ((n = gk_hostpolicy_outside(hp, al, outside, sizeof(outside))) >
	    0) {
		join_patterns(hp->bound, bound, sizeof(bound));
		ctl_reply_error(cc, "the host policy (version %s) bounds what "
		    "a cage may allow, and %s outside it: %s; it allows only "
		    "patterns within: %s", hp->version, n == 1 ? "this is" :
		    "these are", outside, bound);
		gk_allowlist_free(al);
		return NULL;
	}
	return al;
}

struct gk_allowlist *
ctl_make_allow(struct ctlconn *cc, const struct gk_ctlreq *req)
{
	return build_allow(cc, NULL, NULL, NULL, req->allow, req->nallow);
}

/* The patterns a cage.update removes, parsed. */
struct removal {
	struct gk_pattern	*pat;
	size_t			 n;
};

static bool
removed(const struct gk_pattern *p, void *arg)
{
	const struct removal *rm = arg;
	size_t i;

	for (i = 0; i < rm->n; i++)
		if (gk_pattern_equal(p, &rm->pat[i]))
			return true;
	return false;
}

static bool
has_pattern(const struct gk_allowlist *al, const struct gk_pattern *p)
{
	size_t i;

	for (i = 0; i < gk_allowlist_len(al); i++)
		if (gk_pattern_equal(gk_allowlist_at(al, i), p))
			return true;
	return false;
}

/* cage.update with "add"/"remove": c's allowlist changed, or reply. */
struct gk_allowlist *
ctl_edit_allow(struct ctlconn *cc, const struct gk_ctlreq *req,
    const struct gk_cage *c)
{
	char err[CTL_ERRLEN], have[CTL_ERRLEN / 2];
	struct removal rm = { NULL, 0 };
	struct gk_allowlist *al = NULL;
	enum gk_pat_status st;
	const char *s;
	size_t i;

	if (req->nremove > 0 && (rm.pat = calloc(req->nremove,
	    sizeof(*rm.pat))) == NULL) {
		ctl_reply_error(cc, "cannot change the allowlist: out of "
		    "memory");
		return NULL;
	}
	for (i = 0; i < req->nremove; i++) {
		s = req->remove[i];
		if ((st = gk_pattern_parse((const uint8_t *)s, strlen(s),
		    &rm.pat[rm.n])) != GK_PAT_OK) {
			gk_pattern_error((const uint8_t *)s, strlen(s), st, err,
			    sizeof(err));
			ctl_reply_error(cc, "%s", err);
			goto out;
		}
		if (!has_pattern(gk_cage_allow(c), &rm.pat[rm.n])) {
			join_patterns(gk_cage_allow(c), have, sizeof(have));
			ctl_reply_error(cc, "cage %s has no pattern '%s' to "
			    "remove; its allowlist is: %s", gk_cage_id(c), s,
			    have[0] != '\0' ? have : "(empty)");
			goto out;
		}
		rm.n++;
	}
	al = build_allow(cc, gk_cage_allow(c), removed, &rm, req->add,
	    req->nadd);
out:
	free(rm.pat);
	return al;
}
