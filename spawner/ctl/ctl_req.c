/*
 * gatekeeperctl's requests:
 *
 *   {"op":"cage.list"}   {"op":"stats"}   {"op":"reload"}   {"op":"pending"}
 *   {"op":"cage.show","id":ID}   {"op":"cage.destroy","id":ID}
 *   {"op":"denials"[,"id":ID][,"follow":true]}
 *   {"op":"cage.update","id":ID,"add"|"remove":[PATTERN,...]}
 *   {"op":"cage.decide","id":ID,"ask":QID,"decision":D,"by":"operator"}
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_err.h"
#include "spawner/ctl/ctl_req.h"

static const char *
op_name(enum ctl_cmd c)
{
	switch (c) {
	case CTL_CMD_LIST:
		return "cage.list";
	case CTL_CMD_SHOW:
		return "cage.show";
	case CTL_CMD_DENIALS:
		return "denials";
	case CTL_CMD_ALLOW:
	case CTL_CMD_REVOKE:
		return "cage.update";
	case CTL_CMD_DESTROY:
		return "cage.destroy";
	case CTL_CMD_STATS:
		return "stats";
	case CTL_CMD_RELOAD:
		return "reload";
	case CTL_CMD_PENDING:
	case CTL_CMD_APPROVE:
	case CTL_CMD_DENY:
		return "pending";
	case CTL_CMD_NONE:
	case CTL_CMD__MAX:
		break;
	}
	return NULL;
}

static void
add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

/* o as one line with its newline; o is put. */
static char *
line_of(struct json_object *o, char *err, size_t errlen)
{
	const char *s;
	char *line = NULL;
	size_t n;

	if (o == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s == NULL)
		gk_seterr(err, errlen, "out of memory");
	else if ((n = strlen(s)) + 1 > GK_CTL_LINE_MAX)
		gk_seterr(err, errlen, "the request would be %zu bytes, over "
		    "the %d gatekeeperd takes: give fewer patterns at a time",
		    n + 1, GK_CTL_LINE_MAX);
	else if ((line = malloc(n + 2)) == NULL)
		gk_seterr(err, errlen, "out of memory");
	else {
		memcpy(line, s, n);
		memcpy(line + n, "\n", 2);
	}
	json_object_put(o);
	return line;
}

char *
ctl_req_build(const struct ctl_args *a, char *err, size_t errlen)
{
	struct json_object *o, *pats;
	const char *op = op_name(a->cmd);
	size_t i;

	if (op == NULL) {
		gk_seterr(err, errlen, "no command");
		return NULL;
	}
	if ((o = json_object_new_object()) == NULL)
		return line_of(NULL, err, errlen);
	add_str(o, "op", op);
	if (a->cage[0] != '\0')
		add_str(o, "id", a->cage);
	if (a->cmd == CTL_CMD_DENIALS && a->follow)
		json_object_object_add(o, "follow",
		    json_object_new_boolean(1));
	if (a->cmd == CTL_CMD_ALLOW || a->cmd == CTL_CMD_REVOKE) {
		pats = json_object_new_array();
		for (i = 0; i < a->npatterns; i++)
			json_object_array_add(pats,
			    json_object_new_string(a->patterns[i]));
		json_object_object_add(o, a->cmd == CTL_CMD_ALLOW ? "add" :
		    "remove", pats);
	}
	return line_of(o, err, errlen);
}

char *
ctl_req_decide(const char *cage, const char *qid, enum ctl_decision d,
    char *err, size_t errlen)
{
	struct json_object *o;

	if ((o = json_object_new_object()) == NULL)
		return line_of(NULL, err, errlen);
	add_str(o, "op", "cage.decide");
	add_str(o, "id", cage);
	add_str(o, "ask", qid);
	add_str(o, "decision", ctl_decision_name(d));
	add_str(o, "by", "operator");
	return line_of(o, err, errlen);
}
