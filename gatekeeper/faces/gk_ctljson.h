/*
 * gk_ctljson: reply objects of the control protocol (gk_ctljson.c).
 */
#ifndef GK_CTLJSON_H
#define GK_CTLJSON_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct gk_allowlist;
struct gk_cage;
struct gk_stats;

/* The patterns as given, as a JSON array of strings. */
struct json_object *gk_ctl_allow_json(const struct gk_allowlist *al);
/* A cage: id, label, source, uid, allow; with full also its counters. */
struct json_object *gk_ctl_cage_json(const struct gk_cage *c, bool full);
/* cage.show: the full cage, and its "pinned" names, "recent" denials
 * and "pending" questions. */
struct json_object *gk_ctl_cage_show_json(const struct gk_cage *c);
/* Each open question of c appended to arr (pending, cage.show). */
void		 gk_ctl_questions_json(const struct gk_cage *c,
		    struct json_object *arr);
struct json_object *gk_ctl_stats_json(const struct gk_stats *s,
		    size_t ncages);

#endif /* GK_CTLJSON_H */
