/*
 * --credential, the pure half: the option's text, the value's shape, the
 * placeholder, the cage.credential request and gatekeeperd's reply, and
 * the PEM text of the cage's CA (spawn.h, "credentials").
 *
 * The value never leaves the buffers the caller gave: no message here
 * quotes a byte of it, and the request is built in one allocation the
 * caller wipes (no growing buffer leaves copies behind in freed memory).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gatekeeper/policy/gk_policy.h"
#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"
#include "spawner/spawn_scrub.h"

static const char alnum[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

#define NALNUM		(sizeof(alnum) - 1)		/* 62 */
#define RAND_LIMIT	(256 - 256 % NALNUM)		/* 248: no bias */

static bool
name_char(char ch, bool first)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    ch == '_' || (!first && ch >= '0' && ch <= '9');
}

/* name[0..n) is [A-Za-z_][A-Za-z0-9_]{0,127}. */
static bool
cred_name_ok(const char *name, size_t n)
{
	size_t i;

	if (n == 0 || n > SPAWN_CRED_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!name_char(name[i], i == 0))
			return false;
	return true;
}

/* One host pattern h[0..n): a name pattern gatekeeperd can bind. */
static int
cred_host(struct spawn_cred *c, const char *h, size_t n, char *err,
    size_t errlen)
{
	struct gk_pattern p;
	enum gk_pat_status st;
	char msg[512];

	if (n == 0)
		return gk_seterr(err, errlen, "--credential %s: an empty host "
		    "pattern; give NAME@HOSTPATTERN[,HOSTPATTERN...]", c->name);
	if ((st = gk_pattern_parse((const uint8_t *)h, n, &p)) != GK_PAT_OK) {
		gk_pattern_error((const uint8_t *)h, n, st, msg, sizeof(msg));
		return gk_seterr(err, errlen, "--credential %s: %s", c->name,
		    msg);
	}
	if (p.kind == GK_PAT_CIDR) {
		gk_pattern_format(&p, msg, sizeof(msg));
		return gk_seterr(err, errlen, "--credential %s: '%s' is an "
		    "address range; a credential is bound to host names (the "
		    "cage's certificate names them)", c->name, msg);
	}
	if (p.path[0] != '\0') {
		gk_pattern_format(&p, msg, sizeof(msg));
		return gk_seterr(err, errlen, "--credential %s: '%s' has a "
		    "path; a credential is bound to hosts (give the rule with "
		    "--allow)", c->name, msg);
	}
	if (c->hosts.n == SPAWN_CRED_HOSTS_MAX)
		return gk_seterr(err, errlen, "--credential %s: more than %d "
		    "host patterns", c->name, SPAWN_CRED_HOSTS_MAX);
	if (spawn_strv_pushn(&c->hosts, h, n) == -1)
		return gk_seterr(err, errlen, "out of memory");
	return 0;
}

int
spawn_cred_parse(const char *arg, struct spawn_cred *c, char *err,
    size_t errlen)
{
	const char *at = strchr(arg, '@'), *h, *comma;

	memset(c, 0, sizeof(*c));
	/* never quote arg: a value given here by mistake stays unsaid */
	if (at == NULL || memchr(arg, '=', (size_t)(at - arg)) != NULL)
		return gk_seterr(err, errlen, "--credential takes "
		    "NAME@HOSTPATTERN[,HOSTPATTERN...], never a value: the "
		    "value comes from gk-run's environment (GITHUB_TOKEN=... "
		    "gk-run --credential GITHUB_TOKEN@github.com ...)");
	if (!cred_name_ok(arg, (size_t)(at - arg)))
		return gk_seterr(err, errlen, "--credential: the name before "
		    "'@' is not a variable name (letters, digits and '_', not "
		    "starting with a digit, at most %d bytes)",
		    SPAWN_CRED_NAME_MAX);
	memcpy(c->name, arg, (size_t)(at - arg));
	for (h = at + 1;; h = comma + 1) {
		comma = strchr(h, ',');
		if (cred_host(c, h, comma != NULL ? (size_t)(comma - h) :
		    strlen(h), err, errlen) == -1) {
			spawn_cred_clear(c);
			return -1;
		}
		if (comma == NULL)
			return 0;
	}
}

void
spawn_cred_clear(struct spawn_cred *c)
{
	if (c->value != NULL) {
		explicit_bzero(c->value, c->len);
		free(c->value);
	}
	if (c->placeholder != NULL) {
		explicit_bzero(c->placeholder, c->len);
		free(c->placeholder);
	}
	spawn_strv_clear(&c->hosts);
	memset(c, 0, sizeof(*c));
}

int
spawn_cred_value_check(const char *name, const char *value, char *err,
    size_t errlen)
{
	size_t i, n;

	if (value == NULL)
		return gk_seterr(err, errlen, "--credential %s: %s is not set "
		    "in gk-run's environment (set it for gk-run: %s=... gk-run "
		    "..., or export it)", name, name, name);
	if ((n = strnlen(value, SPAWN_CRED_VALUE_MAX + 1)) == 0)
		return gk_seterr(err, errlen, "--credential %s: %s is empty in "
		    "gk-run's environment", name, name);
	if (n < SPAWN_CRED_VALUE_MIN || n > SPAWN_CRED_VALUE_MAX)
		return gk_seterr(err, errlen, "--credential %s: %s's value is "
		    "%s than %d bytes; a credential is %d to %d bytes", name,
		    name, n < SPAWN_CRED_VALUE_MIN ? "shorter" : "longer",
		    n < SPAWN_CRED_VALUE_MIN ? SPAWN_CRED_VALUE_MIN :
		    SPAWN_CRED_VALUE_MAX, SPAWN_CRED_VALUE_MIN,
		    SPAWN_CRED_VALUE_MAX);
	for (i = 0; i < n; i++)
		if (value[i] < 0x21 || value[i] > 0x7e)
			return gk_seterr(err, errlen, "--credential %s: %s's "
			    "value holds a space, a line break or a byte that "
			    "is not printable ASCII; gatekeeperd carries "
			    "printable ASCII only (a trailing newline? "
			    "%s=$(cat FILE) drops it)", name, name, name);
	return 0;
}

/* out[0..n) from rnd, each byte one of alnum[] with equal odds. */
static int
fill_alnum(char *out, size_t n, spawn_rand_fn rnd, void *arg)
{
	uint8_t buf[64];
	size_t i, done = 0;

	while (done < n) {
		if (rnd(arg, buf, sizeof(buf)) == -1)
			return -1;
		for (i = 0; i < sizeof(buf) && done < n; i++)
			if (buf[i] < RAND_LIMIT)
				out[done++] = alnum[buf[i] % NALNUM];
	}
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

int
spawn_cred_placeholder(const char *value, size_t len, char *out,
    spawn_rand_fn rnd, void *arg)
{
	size_t keep = spawn_scrub_prefix(value, len);
	int tries;

	memcpy(out, value, keep);
	out[len] = '\0';
	for (tries = 0; tries < 8; tries++) {
		if (fill_alnum(out + keep, len - keep, rnd, arg) == -1)
			break;
		if (memcmp(out, value, len) != 0)
			return 0;
	}
	explicit_bzero(out, len);
	return -1;
}

/* ---- the request ------------------------------------------------------ */

/* Bytes of s as a JSON string, with its quotes. */
static size_t
json_len(const char *s)
{
	size_t n = 2;

	for (; *s != '\0'; s++)
		n += *s == '"' || *s == '\\' ? 2 :
		    (unsigned char)*s < 0x20 || *s == 0x7f ? 6 : 1;
	return n;
}

/* s as a JSON string at p; returns the end. */
static char *
json_put(char *p, const char *s)
{
	*p++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			*p++ = '\\';
			*p++ = *s;
		} else if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			snprintf(p, 7, "\\u%04x", (unsigned char)*s);
			p += 6;
		} else
			*p++ = *s;
	}
	*p++ = '"';
	return p;
}

static char *
lit(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

#define REQ_OP		"{\"op\":\"cage.credential\",\"id\":"
#define REQ_NAME	",\"name\":"
#define REQ_PH		",\"placeholder\":"
#define REQ_VALUE	",\"value\":"
#define REQ_HOSTS	",\"hosts\":["
#define REQ_END		"]}\n"

char *
spawn_cred_request(const char *id, const struct spawn_cred *c, size_t *len)
{
	size_t i, n;
	char *line, *p;

	n = strlen(REQ_OP REQ_NAME REQ_PH REQ_VALUE REQ_HOSTS REQ_END) +
	    json_len(id) + json_len(c->name) + json_len(c->placeholder) +
	    json_len(c->value);
	for (i = 0; i < c->hosts.n; i++)
		n += json_len(c->hosts.v[i]) + 1;
	if ((line = malloc(n + 1)) == NULL)
		return NULL;
	p = json_put(lit(line, REQ_OP), id);
	p = json_put(lit(p, REQ_NAME), c->name);
	p = json_put(lit(p, REQ_PH), c->placeholder);
	p = json_put(lit(p, REQ_VALUE), c->value);
	p = lit(p, REQ_HOSTS);
	for (i = 0; i < c->hosts.n; i++)
		p = json_put(i == 0 ? p : lit(p, ","), c->hosts.v[i]);
	p = lit(p, REQ_END);
	*p = '\0';
	*len = (size_t)(p - line);
	return line;
}

/* ---- the reply and the CA -------------------------------------------- */

static bool
b64_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
}

#define PEM_BEGIN	"-----BEGIN CERTIFICATE-----\n"
#define PEM_END		"-----END CERTIFICATE-----"
#define PEM_LINE_MAX	76

/* The base64 lines of one certificate, s[0..n), each ending in "\n":
 * at most 76 characters a line, '=' only as the last padding, a whole
 * number of quanta, and DER's SEQUENCE first ('M'). */
static bool
pem_body(const char *s, size_t n)
{
	size_t i, line = 0, chars = 0, pad = 0;

	if (n == 0 || s[n - 1] != '\n' || s[0] != 'M')
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == '\n') {
			if (line == 0)
				return false;
			line = 0;
			continue;
		}
		if (++line > PEM_LINE_MAX)
			return false;
		if (s[i] == '=')
			pad++;
		else if (!b64_char(s[i]) || pad > 0)
			return false;
		chars++;
	}
	return pad <= 2 && chars % 4 == 0 && chars >= 64;
}

bool
spawn_pem_cert(const char *s, size_t n)
{
	size_t b = strlen(PEM_BEGIN), e = strlen(PEM_END);

	if (n > 0 && s[n - 1] == '\n')
		n--;
	if (n < b + e || memcmp(s, PEM_BEGIN, b) != 0 ||
	    memcmp(s + n - e, PEM_END, e) != 0)
		return false;
	return pem_body(s + b, n - b - e);
}

int
spawn_cred_reply(const char *line, size_t len, const char *name, char *ca,
    size_t calen, char *err, size_t errlen)
{
	struct json_object *o, *v, *k;
	char what[SPAWN_CRED_NAME_MAX + 16];
	const char *pem;
	size_t n;
	int r = -1;

	snprintf(what, sizeof(what), "credential %s", name);
	if ((o = spawn_reply_accept(line, len, what, err, errlen)) == NULL)
		return -1;
	if (json_object_object_get_ex(o, "credential", &v) &&
	    (!json_object_is_type(v, json_type_object) ||
	    (json_object_object_get_ex(v, "name", &k) &&
	    (!json_object_is_type(k, json_type_string) ||
	    strcmp(json_object_get_string(k), name) != 0))))
		spawn_reply_not_understood(err, errlen, "its \"credential\" "
		    "is not the one asked for");
	else if (!json_object_object_get_ex(o, "ca", &v) ||
	    !json_object_is_type(v, json_type_string))
		spawn_reply_not_understood(err, errlen, "no \"ca\"");
	else if ((n = (size_t)json_object_get_string_len(v)) >
	    SPAWN_CA_MAX || n + 2 > calen ||
	    !spawn_pem_cert(pem = json_object_get_string(v), n))
		spawn_reply_not_understood(err, errlen, "its \"ca\" is not "
		    "one PEM certificate");
	else {
		snprintf(ca, calen, "%s%s", pem, pem[n - 1] == '\n' ? "" :
		    "\n");
		r = 0;
	}
	json_object_put(o);
	return r;
}

/* ---- bundles ---------------------------------------------------------- */

/* The next line of in[*pos..n), [*s, *e) without its end (\n, \r\n)
 * and blanks around it. false at the end. */
static bool
next_line(const char *in, size_t n, size_t *pos, size_t *s, size_t *e)
{
	const char *nl;

	if (*pos >= n)
		return false;
	nl = memchr(in + *pos, '\n', n - *pos);
	*s = *pos;
	*e = nl != NULL ? (size_t)(nl - in) : n;
	*pos = *e + 1;
	while (*s < *e && (in[*s] == ' ' || in[*s] == '\t'))
		(*s)++;
	while (*e > *s && (in[*e - 1] == ' ' || in[*e - 1] == '\t' ||
	    in[*e - 1] == '\r'))
		(*e)--;
	return true;
}

static bool
line_is(const char *in, size_t s, size_t e, const char *want)
{
	return e - s == strlen(want) && memcmp(in + s, want, e - s) == 0;
}

/* Inside a block: a base64 line (or padding). */
static bool
b64_line(const char *in, size_t s, size_t e)
{
	for (; s < e; s++)
		if (!b64_char(in[s]) && in[s] != '=')
			return false;
	return true;
}

static const char *const cert_kinds[][2] = {
	{ "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----" },
	{ "-----BEGIN TRUSTED CERTIFICATE-----",
	    "-----END TRUSTED CERTIFICATE-----" },
};

/* One block starting after its BEGIN line (kind k) at *pos: its base64
 * lines into body, true when its END came and nothing else (a line that
 * is not base64 ends it, and is read again as the next one). */
static bool
cert_block(const char *in, size_t n, size_t *pos, size_t k,
    struct spawn_buf *body)
{
	size_t s, e, start = *pos;

	for (; next_line(in, n, pos, &s, &e); start = *pos) {
		if (line_is(in, s, e, cert_kinds[k][1]))
			return body->n > 0;
		if (s == e || !b64_line(in, s, e)) {
			*pos = start;	/* perhaps the next block's BEGIN */
			return false;
		}
		spawn_buf_putn(body, in + s, e - s);
		spawn_buf_putn(body, "\n", 1);
	}
	return false;
}

size_t
spawn_pem_certs(const char *in, size_t n, struct spawn_buf *out)
{
	struct spawn_buf body = { 0 };
	size_t pos = 0, s, e, k, count = 0;

	while (next_line(in, n, &pos, &s, &e)) {
		for (k = 0; k < 2; k++)
			if (line_is(in, s, e, cert_kinds[k][0]))
				break;
		if (k == 2)
			continue;
		body.n = 0;
		if (!cert_block(in, n, &pos, k, &body) || body.nomem) {
			out->nomem |= body.nomem;
			continue;
		}
		spawn_buf_puts(out, cert_kinds[k][0]);
		spawn_buf_putn(out, "\n", 1);
		spawn_buf_putn(out, body.s, body.n);
		spawn_buf_puts(out, cert_kinds[k][1]);
		spawn_buf_putn(out, "\n", 1);
		count++;
	}
	free(body.s);
	return count;
}

char *
spawn_trust_bundle(const char *certs, size_t len, const char *ca,
    size_t *outlen)
{
	size_t calen = strlen(ca), nl = len > 0 && certs[len - 1] != '\n';
	char *b;

	if ((b = malloc(len + nl + calen + 1)) == NULL)
		return NULL;
	memcpy(b, certs, len);
	if (nl)
		b[len] = '\n';
	memcpy(b + len + nl, ca, calen + 1);
	*outlen = len + nl + calen;
	return b;
}
