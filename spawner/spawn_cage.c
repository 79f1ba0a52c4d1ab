/*
 * The control protocol, client side, as pure functions (the socket work
 * is in spawn_ctl.c). One request line, sent with the cage's network
 * namespace fd as SCM_RIGHTS on its first byte:
 *
 *   {"op":"cage.create","netns":true,"label":"gk-run: git clone ...",
 *    "allow":["*.github.com"]}
 *
 * and one reply line:
 *
 *   {"ok":true,"cage":{"id":"abcd1234","label":"...","source":"10.143.0.2",
 *    "uid":1000,"allow":[...],"token":"...","gateway":"10.143.0.1",
 *    "dns":"10.143.0.1:53","socks":"10.143.0.1:1080",
 *    "http":"10.143.0.1:3128"}}
 *   {"ok":false,"error":"message a person can act on"}
 *
 * gk-run needs id, gateway, socks and http; token and dns are checked
 * when present; "ask" and "ask_timeout" echo an asking cage's request;
 * anything else is ignored. Every value that ends up in a
 * file or a variable in the sandbox is checked strictly here.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/base/gk_hash.h"
#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"

#define REQUEST_MAX	GK_CTL_LINE_MAX
#define REPLY_MAX	GK_CTL_LINE_MAX
#define SHOW_MAX	300	/* bytes of a daemon message shown */

void
spawn_cage_placeholder(struct spawn_cage *c, enum spawn_platform pf)
{
	const char *gw = pf == SPAWN_PLATFORM_MACOS ? "127.0.0.1" :
	    GK_GATEWAY_DEFAULT;

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "dry-run");
	snprintf(c->token, sizeof(c->token), "%s",
	    pf == SPAWN_PLATFORM_MACOS ? "TOKEN" : "");
	snprintf(c->gateway, sizeof(c->gateway), "%s", gw);
	snprintf(c->dns, sizeof(c->dns), "%s:%d", gw, GK_DNS_PORT_DEFAULT);
	snprintf(c->socks, sizeof(c->socks), "%s:%d", gw,
	    GK_SOCKS_PORT_DEFAULT);
	snprintf(c->http, sizeof(c->http), "%s:%d", gw, GK_HTTP_PORT_DEFAULT);
}

/* A word that says what a command does and is unlikely to be a secret. */
static bool
plain_word(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("._,+/-", *s) != NULL))
			return false;
	return true;
}

/*
 * The host of a URL (scheme://[userinfo@]host[:port][/...]) into out,
 * "" when arg is none or its host is not plain: never the userinfo.
 */
static void
url_host(const char *arg, char *out, size_t outlen)
{
	const char *h = strstr(arg, "://"), *end, *at;
	size_t n;

	out[0] = '\0';
	if (h == NULL)
		return;
	h += 3;
	end = h + strcspn(h, "/?#");
	/* the last '@' before the path ends the userinfo */
	for (at = end; at > h && at[-1] != '@'; at--)
		;
	h = at;
	n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/?#");
	if (n == 0 || n > (size_t)(end - h) || n >= outlen)
		return;
	memcpy(out, h, n);
	out[n] = '\0';
	if (strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-[]:") != n)
		out[0] = '\0';
}

/* The whole command, hashed: the same command, the same label. */
static uint32_t
cmd_hash(char *const cmd[], int ncmd)
{
	uint32_t h = GK_HASH_INIT;
	int i;

	for (i = 0; i < ncmd; i++)
		h = gk_hash_step(gk_hash_str(h, cmd[i]), 0);
	return (h ^ (h >> 24)) & 0xffffff;
}

/*
 * "gk-run: git clone ... github.com [3f2a9c]": the program's name and its
 * leading plain words; when words were left out, the host of the last URL
 * among them and a short hash of the whole command, so that different
 * commands get different labels (gatekeeper_label_denied_total) and the
 * same command the same one. gatekeeperd logs the label, so it stops at
 * the first argument that could hold a secret (a URL with credentials, a
 * token, KEY=VAL); the command itself is in cage.create's audit line.
 */
void
spawn_cage_label(char *const cmd[], int ncmd, char out[SPAWN_LABEL_MAX + 1])
{
	const char *name = cmd[0], *slash;
	/* for " ... [3f2a9c]" */
	size_t n, w, room = SPAWN_LABEL_MAX - 13;
	char host[SPAWN_LABEL_MAX + 1] = "";
	int i, j;

	if ((slash = strrchr(name, '/')) != NULL && slash[1] != '\0')
		name = slash + 1;
	n = (size_t)snprintf(out, SPAWN_LABEL_MAX + 1, "gk-run: %.*s",
	    (int)(room - 8), name);
	for (w = 8; out[w] != '\0'; w++)
		if (out[w] < 0x20 || out[w] >= 0x7f)
			out[w] = '?';
	for (i = 1; i < ncmd && plain_word(cmd[i]) &&
	    n + 1 + strlen(cmd[i]) <= room; i++)
		n += (size_t)snprintf(out + n, SPAWN_LABEL_MAX + 1 - n, " %s",
		    cmd[i]);
	if (i == ncmd && strlen(name) <= room - 8)
		return;
	n += (size_t)snprintf(out + n, SPAWN_LABEL_MAX + 1 - n, " ...");
	for (j = ncmd - 1; j >= i && host[0] == '\0'; j--)
		url_host(cmd[j], host, sizeof(host));
	if (host[0] != '\0' && n + 1 + strlen(host) + 9 <= SPAWN_LABEL_MAX)
		n += (size_t)snprintf(out + n, SPAWN_LABEL_MAX + 1 - n, " %s",
		    host);
	snprintf(out + n, SPAWN_LABEL_MAX + 1 - n, " [%06x]",
	    (unsigned int)cmd_hash(cmd, ncmd));
}

/* The request's "limits": {"memory":N,"pids":N,"cpus":X,...}. */
static struct json_object *
limits_json(const struct gk_rlimits *limits, bool best_effort)
{
	struct json_object *l = json_object_new_object();
	char cpus[GK_RLIM_TEXT];

	if (limits->memory != 0)
		json_object_object_add(l, "memory",
		    json_object_new_int64((int64_t)limits->memory));
	if (limits->pids != 0)
		json_object_object_add(l, "pids",
		    json_object_new_int64(limits->pids));
	if (limits->cpus != 0) {
		gk_cpus_format(limits->cpus, cpus, sizeof(cpus));
		json_object_object_add(l, "cpus",
		    json_object_new_double_s(limits->cpus / 1000.0, cpus));
	}
	if (best_effort)
		json_object_object_add(l, "best_effort",
		    json_object_new_boolean(1));
	return l;
}

static struct json_object *
strv_json(const struct spawn_strv *sv)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a != NULL && i < sv->n; i++)
		json_object_array_add(a, json_object_new_string(sv->v[i]));
	return a;
}

/* o[key] = sv's strings, when there are any (sv NULL: none). */
static void
add_strv(struct json_object *o, const char *key, const struct spawn_strv *sv)
{
	if (sv != NULL && sv->n > 0)
		json_object_object_add(o, key, strv_json(sv));
}

/* Each member of from (NULL: none) into o too. */
static void
add_members(struct json_object *o, struct json_object *from)
{
	if (from == NULL)
		return;
	json_object_object_foreach(from, k, v)
		json_object_object_add(o, k, json_object_get(v));
}

char *
spawn_cage_request(const char *label, bool transparent, bool events,
    bool learn, unsigned int ask_timeout, const struct gk_rlimits *limits,
    bool best_effort, const char *reattach, const struct spawn_strv *allow,
    const struct spawn_strv *max_upload, struct json_object *life, char *err,
    size_t errlen)
{
	struct json_object *o, *a;
	const char *s;
	char *line = NULL;
	size_t n;

	o = json_object_new_object();
	a = strv_json(allow);
	if (o == NULL || a == NULL) {
		json_object_put(o);
		json_object_put(a);
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	json_object_object_add(o, "op", json_object_new_string("cage.create"));
	json_object_object_add(o, "netns", json_object_new_boolean(1));
	json_object_object_add(o, "label", json_object_new_string(label));
	json_object_object_add(o, "transparent",
	    json_object_new_boolean(transparent));
	if (events || ask_timeout > 0)
		json_object_object_add(o, "events",
		    json_object_new_boolean(1));
	if (learn)
		json_object_object_add(o, "learn", json_object_new_boolean(1));
	if (ask_timeout > 0) {
		json_object_object_add(o, "ask", json_object_new_boolean(1));
		json_object_object_add(o, "ask_timeout",
		    json_object_new_int64(ask_timeout));
	}
	if (gk_rlimits_any(limits) || best_effort)
		json_object_object_add(o, "limits",
		    limits_json(limits, best_effort));
	add_strv(o, "max_upload", max_upload);
	if (reattach != NULL)
		json_object_object_add(o, "reattach",
		    json_object_new_string(reattach));
	json_object_object_add(o, "allow", a);
	add_members(o, life);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	n = s != NULL ? strlen(s) : 0;
	if (s == NULL)
		gk_seterr(err, errlen, "out of memory");
	else if (n + 1 > REQUEST_MAX)
		gk_seterr(err, errlen, "the allowlist is too long for one "
		    "request (%zu bytes; gatekeeperd takes %d); use fewer or "
		    "wider patterns", n, REQUEST_MAX);
	else if ((line = malloc(n + 2)) != NULL) {
		memcpy(line, s, n);
		memcpy(line + n, "\n", 2);
	} else
		gk_seterr(err, errlen, "out of memory");
	json_object_put(o);
	return line;
}

static bool
valid_ip(const char *s, size_t n, bool v6)
{
	unsigned char buf[16];
	char tmp[64];

	if (n == 0 || n >= sizeof(tmp))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return inet_pton(v6 ? AF_INET6 : AF_INET, tmp, buf) == 1;
}

/* "192.0.2.1:53" or "[2001:db8::1]:53", port 1..65535. */
static bool
valid_endpoint(const char *s)
{
	const char *c, *p;
	unsigned long port = 0;
	bool ok;

	if (s[0] == '[') {
		if ((c = strstr(s, "]:")) == NULL)
			return false;
		ok = valid_ip(s + 1, (size_t)(c - s - 1), true);
		p = c + 2;
	} else {
		if ((c = strchr(s, ':')) == NULL)
			return false;
		ok = valid_ip(s, (size_t)(c - s), false);
		p = c + 1;
	}
	if (!ok || *p == '\0' || strlen(p) > 5)
		return false;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	return port >= 1 && port <= 65535;
}

static bool
valid_word(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    strchr(extra, s[i]) != NULL))
			return false;
	return true;
}

enum field_kind { F_ID, F_TOKEN, F_IP, F_ENDPOINT, F_CA };

static const struct {
	const char	*name;
	enum field_kind	 kind;
	bool		 required;
	size_t		 off;
	size_t		 size;
} fields[] = {
#define FIELD(n, k, r) { #n, k, r, offsetof(struct spawn_cage, n),	\
		sizeof(((struct spawn_cage *)0)->n) }
	FIELD(id, F_ID, true),
	FIELD(gateway, F_IP, true),
	FIELD(socks, F_ENDPOINT, true),
	FIELD(http, F_ENDPOINT, true),
	FIELD(dns, F_ENDPOINT, false),
	FIELD(token, F_TOKEN, false),
	FIELD(ca, F_CA, false),		/* request rules: the cage's CA */
#undef FIELD
};

static bool
field_ok(enum field_kind k, const char *s, size_t size)
{
	switch (k) {
	case F_ID:
		return valid_word(s, size - 1, "-_.");
	case F_TOKEN:
		return valid_word(s, size - 1, "-_.~");
	case F_IP:
		return strlen(s) < size &&
		    (valid_ip(s, strlen(s), false) ||
		    valid_ip(s, strlen(s), true));
	case F_ENDPOINT:
		return strlen(s) < size && valid_endpoint(s);
	case F_CA:	/* ends with its newline: a bundle's last block */
		return strlen(s) + 1 < size && spawn_pem_cert(s, strlen(s)) &&
		    s[strlen(s) - 1] == '\n';
	}
	return false;
}

static int
cage_fields(struct json_object *cage, struct spawn_cage *c, char *err,
    size_t errlen)
{
	struct json_object *v;
	char shown[SHOW_MAX];
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!json_object_object_get_ex(cage, fields[i].name, &v) ||
		    json_object_is_type(v, json_type_null)) {
			if (!fields[i].required)
				continue;
			gk_seterr(err, errlen, "\"cage\" has no \"%s\"",
			    fields[i].name);
			return -1;
		}
		if (!json_object_is_type(v, json_type_string) ||
		    !field_ok(fields[i].kind, s = json_object_get_string(v),
		    fields[i].size)) {
			gk_printable(json_object_get_string(v), shown, 64);
			gk_seterr(err, errlen, "\"%s\" is not valid: %s",
			    fields[i].name, shown);
			return -1;
		}
		memcpy((char *)c + fields[i].off, s, strlen(s) + 1);
	}
	return 0;
}

static void
refused(struct json_object *o, const char *what, char *err, size_t errlen)
{
	struct json_object *v;
	char shown[SHOW_MAX];

	if (json_object_object_get_ex(o, "error", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    json_object_get_string_len(v) > 0) {
		gk_printable(json_object_get_string(v), shown,
		    sizeof(shown));
		gk_seterr(err, errlen, "gatekeeperd refused %s: %s", what,
		    shown);
	} else
		gk_seterr(err, errlen, "gatekeeperd refused %s and gave no "
		    "reason; see its log (journalctl -u gatekeeperd)", what);
}

int
spawn_reply_not_understood(char *err, size_t errlen, const char *what)
{
	char why[SPAWN_ERRLEN];

	snprintf(why, sizeof(why), "%s", what);
	gk_seterr(err, errlen, "gatekeeperd sent a reply gk-run does not "
	    "understand (%s); are gk-run and gatekeeperd from the same "
	    "release?", why);
	return -1;
}

void
spawn_cage_cgname(const struct spawn_cage *c, char *buf, size_t len)
{
	const char *end, *start;

	buf[0] = '\0';
	if ((end = strrchr(c->kill, '/')) == NULL || end == c->kill)
		return;
	for (start = end - 1; start > c->kill && *start != '/'; start--)
		;
	if (*start == '/')
		start++;
	snprintf(buf, len, "%.*s", (int)(end - start), start);
}

struct json_object *
spawn_reply_accept(const char *line, size_t len, const char *what, char *err,
    size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o, *ok;

	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len == 0 || len > REPLY_MAX || memchr(line, '\0', len) != NULL) {
		spawn_reply_not_understood(err, errlen, len == 0 ?
		    "an empty line" : "not a line of text");
		return NULL;
	}
	if ((tok = json_tokener_new()) == NULL) {
		spawn_reply_not_understood(err, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (o == NULL || json_tokener_get_parse_end(tok) != len)
		spawn_reply_not_understood(err, errlen, "not JSON");
	else if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "ok", &ok) ||
	    !json_object_is_type(ok, json_type_boolean))
		spawn_reply_not_understood(err, errlen, "no \"ok\"");
	else if (!json_object_get_boolean(ok))
		refused(o, what, err, errlen);
	else {
		json_tokener_free(tok);
		return o;
	}
	json_object_put(o);
	json_tokener_free(tok);
	return NULL;
}

int
spawn_cage_ack(const char *line, size_t len, char *err, size_t errlen)
{
	struct json_object *o;

	if ((o = spawn_reply_accept(line, len, "the cage", err,
	    errlen)) == NULL)
		return -1;
	json_object_put(o);
	return 0;
}

/* "cgroup": {"kill": PATH, "limits": {"memory": N, "pids": N,
 * "cpus": X}} */
static int
cgroup_fields(struct json_object *cg, struct spawn_cage *c, char *why,
    size_t whylen)
{
	struct json_object *k, *l, *v;
	const char *s;
	double d;

	if (!json_object_is_type(cg, json_type_object) ||
	    !json_object_object_get_ex(cg, "kill", &k) ||
	    !json_object_is_type(k, json_type_string) ||
	    (size_t)json_object_get_string_len(k) >= sizeof(c->kill)) {
		gk_seterr(why, whylen, "a bad \"cgroup\"");
		return -1;
	}
	s = json_object_get_string(k);
	if (s[0] != '\0' && s[0] != '/') {
		gk_seterr(why, whylen, "a bad \"cgroup\".\"kill\"");
		return -1;
	}
	snprintf(c->kill, sizeof(c->kill), "%s", s);
	c->contained = true;
	if (!json_object_object_get_ex(cg, "limits", &l) ||
	    !json_object_is_type(l, json_type_object))
		return 0;
	if (json_object_object_get_ex(l, "memory", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > 0)
		c->limits.memory = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(l, "pids", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > 0 &&
	    json_object_get_int64(v) <= GK_RLIM_PIDS_MAX)
		c->limits.pids = (uint32_t)json_object_get_int64(v);
	if (json_object_object_get_ex(l, "cpus", &v) &&
	    (json_object_is_type(v, json_type_double) ||
	    json_object_is_type(v, json_type_int)) &&
	    (d = json_object_get_double(v)) > 0 && d <= 1024)
		c->limits.cpus = (uint32_t)(d * 1000 + 0.5);
	return 0;
}

int
spawn_cage_reply(const char *line, size_t len, struct spawn_cage *c,
    char *err, size_t errlen)
{
	struct json_object *o, *v, *cage;
	char why[SPAWN_ERRLEN];
	int r = -1;

	memset(c, 0, sizeof(*c));
	if ((o = spawn_reply_accept(line, len, "the cage", err,
	    errlen)) == NULL)
		return -1;
	if (!json_object_object_get_ex(o, "cage", &cage) ||
	    !json_object_is_type(cage, json_type_object))
		spawn_reply_not_understood(err, errlen, "no \"cage\" object");
	else if (cage_fields(cage, c, why, sizeof(why)) == -1)
		spawn_reply_not_understood(err, errlen, why);
	else
		r = 0;
	c->transparent = -1;
	if (r == 0 && json_object_object_get_ex(cage, "transparent", &v) &&
	    json_object_is_type(v, json_type_boolean))
		c->transparent = json_object_get_boolean(v);
	if (r == 0 && json_object_object_get_ex(cage, "cgroup", &v) &&
	    cgroup_fields(v, c, why, sizeof(why)) == -1)
		r = spawn_reply_not_understood(err, errlen, why);
	if (r == 0 && json_object_object_get_ex(cage, "ask", &v) &&
	    json_object_is_type(v, json_type_boolean))
		c->ask = json_object_get_boolean(v);
	if (r == 0 && c->ask &&
	    json_object_object_get_ex(cage, "ask_timeout", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > 0 &&
	    json_object_get_int64(v) <= SPAWN_ASK_TIMEOUT_MAX)
		c->ask_timeout = (unsigned int)json_object_get_int64(v);
	json_object_put(o);
	if (r == -1)
		memset(c, 0, sizeof(*c));
	return r;
}
