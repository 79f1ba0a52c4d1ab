/*
 * gk_ctlreq_budget: cage.create's "max_upload", the cage's upload
 * budgets: an array of at most GK_UPLOADS_MAX strings, each
 * SIZE[@HOSTPATTERN] (gk_upload.h).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"
#include "gatekeeper/policy/gk_upload.h"

enum gk_ctl_status
gk_ctlreq_uploads(struct json_object *v, struct gk_ctlreq *out, char *err,
    size_t errlen)
{
	struct json_object *e;
	size_t i, n;
	char msg[256];

	if (!json_object_is_type(v, json_type_array)) {
		gk_seterr(err, errlen, "\"max_upload\" must be an array of "
		    "budgets such as [\"10M\",\"1M@*.example.com\"]");
		return GK_CTL_BAD_TYPE;
	}
	if ((n = json_object_array_length(v)) > GK_UPLOADS_MAX) {
		gk_seterr(err, errlen, "\"max_upload\" has %zu budgets; at most "
		    "%d", n, GK_UPLOADS_MAX);
		return GK_CTL_BAD_VALUE;
	}
	if (n > 0 && (out->uploads = calloc(n, sizeof(*out->uploads))) ==
	    NULL)
		return GK_CTL_NOMEM;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string)) {
			gk_seterr(err, errlen, "\"max_upload\"[%zu] must be a "
			    "string such as \"10M\" or \"1M@*.example.com\"",
			    i);
			return GK_CTL_BAD_TYPE;
		}
		if (!gk_upload_parse((const uint8_t *)json_object_get_string(e),
		    (size_t)json_object_get_string_len(e), &out->uploads[i],
		    msg, sizeof(msg))) {
			gk_seterr(err, errlen, "\"max_upload\"[%zu]: %s", i,
			    msg);
			return GK_CTL_BAD_VALUE;
		}
		out->nuploads++;
	}
	return GK_CTL_OK;
}
