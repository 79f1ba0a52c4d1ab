/*
 * ctl_req: the request lines gatekeeperctl sends (README.md, "Control
 * socket"), one JSON object and a newline each, built with json-c so
 * every string is escaped. Pure.
 */
#ifndef CTL_REQ_H
#define CTL_REQ_H

#include <stddef.h>

#include "spawner/ctl/ctl_args.h"

/*
 * The first request of a command (approve and deny: "pending"), with its
 * newline; malloc'd. NULL with err when it would be over
 * GK_CTL_LINE_MAX, or out of memory.
 */
char		*ctl_req_build(const struct ctl_args *a, char *err,
		    size_t errlen);
/* cage.decide of question qid (as gatekeeperd spells it) of cage, "by"
 * the operator; malloc'd, NULL with err as above. */
char		*ctl_req_decide(const char *cage, const char *qid,
		    enum ctl_decision d, char *err, size_t errlen);

#endif /* CTL_REQ_H */
