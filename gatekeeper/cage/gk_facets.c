/*
 * gk_facets: the facet table (gk_facet.h), one row per per-cage facility,
 * in the order they begin (and the reverse of the order they end).
 */
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_budget.h"
#include "gatekeeper/cage/gk_contain_facet.h"
#include "gatekeeper/cage/gk_cred.h"
#include "gatekeeper/cage/gk_events.h"
#include "gatekeeper/cage/gk_facet.h"
#include "gatekeeper/cage/gk_learn.h"
#include "gatekeeper/cage/gk_life.h"
#include "gatekeeper/cage/gk_limit.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "gatekeeper/cage/gk_traffic.h"

const struct gk_facet gk_facets[GK_FACET__MAX] = {
	[GK_FACET_LIFE] = { "life", gk_life_begin, gk_life_ended,
	    gk_life_end },
	[GK_FACET_PLUMB] = { "plumbing", gk_plumb_facet_begin, NULL,
	    gk_plumb_facet_end },
	[GK_FACET_EVENTS] = { "events", gk_events_begin, NULL,
	    gk_events_end },
	[GK_FACET_CRED] = { "credentials", gk_cred_begin, gk_cred_ended,
	    gk_cred_end },
	[GK_FACET_TRAFFIC] = { "traffic", gk_traffic_begin, gk_traffic_ended,
	    gk_traffic_end },
	[GK_FACET_BUDGET] = { "budgets", gk_budget_begin, gk_budget_ended,
	    gk_budget_end },
	[GK_FACET_LEARN] = { "learning", gk_learn_begin, gk_learn_ended,
	    gk_learn_end },
	[GK_FACET_ASK] = { "questions", gk_ask_begin, NULL, gk_ask_end },
	[GK_FACET_LIMITS] = { "limits", gk_limit_begin, gk_limit_ended,
	    gk_limit_end },
	[GK_FACET_CONTAIN] = { "containment", gk_contain_facet_begin, NULL,
	    gk_contain_facet_end },
};
