/*
 * spawn_scrub: secrets in settings files replaced by placeholders of the
 * same shape (spawn_scrub.h). Line by line, in place.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "spawner/spawn_scrub.h"

/*
 * Token prefixes clients check, kept in a placeholder (the longest that
 * matches wins: sk-ant- over sk-). GitHub, GitLab, npm, PyPI, Anthropic,
 * OpenAI, Slack, Hugging Face, AWS access key ids, Stripe, Google API
 * keys, DigitalOcean, Vault.
 */
static const char *const known_prefixes[] = {
	"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-",
	"glptt-", "gldt-", "glrt-", "npm_", "pypi-", "sk-ant-", "sk-proj-",
	"sk-", "xoxb-", "xoxp-", "xoxa-", "xoxe-", "xapp-", "hf_", "AKIA",
	"ASIA", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "AIza",
	"dop_v1_", "hvs.",
	NULL,
};

static const char fill[] = "gkplaceholder";

size_t
spawn_scrub_prefix(const char *v, size_t n)
{
	size_t i, p, keep = 0;

	for (i = 0; known_prefixes[i] != NULL; i++) {
		p = strlen(known_prefixes[i]);
		if (p > keep && n >= p + SPAWN_SCRUB_PREFIX_REST &&
		    memcmp(v, known_prefixes[i], p) == 0)
			keep = p;
	}
	return keep;
}

void
spawn_scrub_placeholder(char *v, size_t n)
{
	size_t i, keep = spawn_scrub_prefix(v, n);

	for (i = keep; i < n; i++)
		v[i] = fill[(i - keep) % (sizeof(fill) - 1)];
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	    c == '\f' || c == '\v';
}

/* Trim [*s, *e) of blanks at both ends. */
static void
trim(const char *b, size_t *s, size_t *e)
{
	while (*s < *e && is_space(b[*s]))
		(*s)++;
	while (*e > *s && is_space(b[*e - 1]))
		(*e)--;
}

/* Does key[0, n) end with suffix (case-insensitively)? */
static bool
ends_with(const char *key, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && strncasecmp(key + n - m, suffix, m) == 0;
}

static bool
secret_key(enum spawn_scrub_fmt f, const char *key, size_t n)
{
	switch (f) {
	case SPAWN_SCRUB_NPMRC:
		return ends_with(key, n, "_authToken") ||
		    ends_with(key, n, "_auth") || ends_with(key, n, "_password");
	case SPAWN_SCRUB_PYPIRC:
		return n == 8 && strncasecmp(key, "password", 8) == 0;
	case SPAWN_SCRUB_CARGO:
		return n == 5 && strncasecmp(key, "token", 5) == 0;
	case SPAWN_SCRUB_GHHOSTS:
		return (n == 11 && memcmp(key, "oauth_token", 11) == 0) ||
		    (n == 5 && memcmp(key, "token", 5) == 0);
	case SPAWN_SCRUB_DOCKER:
		return (n == 4 && memcmp(key, "auth", 4) == 0) ||
		    (n == 13 && memcmp(key, "identitytoken", 13) == 0) ||
		    (n == 13 && memcmp(key, "registrytoken", 13) == 0) ||
		    (n == 8 && memcmp(key, "password", 8) == 0);
	case SPAWN_SCRUB_NETRC:
	case SPAWN_SCRUB_GITCRED:
		break;
	}
	return false;
}

/* Scrub the value v[0, n): inside its quotes when quoted; never an
 * environment reference. 1 when replaced. */
static int
scrub_value(char *v, size_t n)
{
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v++;
		n -= 2;
	}
	if (n == 0 || (n >= 2 && v[0] == '$' && v[1] == '{'))
		return 0;
	spawn_scrub_placeholder(v, n);
	return 1;
}

/* key = value lines (npmrc, pypirc, cargo's TOML), key: value (gh's
 * YAML): one line [s, e). */
static int
scrub_kv_line(enum spawn_scrub_fmt f, char *b, size_t s, size_t e)
{
	size_t ks = s, ke, vs, ve = e;
	const char *eq;

	trim(b, &ks, &ve);
	if (ks == ve || b[ks] == '#' || b[ks] == ';' || b[ks] == '[')
		return 0;
	if ((eq = memchr(b + ks, f == SPAWN_SCRUB_GHHOSTS ? ':' : '=',
	    ve - ks)) == NULL)
		return 0;
	ke = (size_t)(eq - b);
	vs = ke + 1;
	trim(b, &ks, &ke);
	trim(b, &vs, &ve);
	if (!secret_key(f, b + ks, ke - ks))
		return 0;
	return scrub_value(b + vs, ve - vs);
}

/* A credential URL's password: scheme://user:password@host/... */
static int
scrub_url_line(char *b, size_t s, size_t e)
{
	size_t i, auth, end, at = 0, colon = 0;
	const char *p;

	trim(b, &s, &e);
	if ((p = memmem(b + s, e - s, "://", 3)) == NULL)
		return 0;
	auth = (size_t)(p - b) + 3;
	for (end = auth; end < e && b[end] != '/'; end++)
		;
	for (i = auth; i < end; i++)
		if (b[i] == '@')
			at = i;
	for (i = auth; at != 0 && i < at; i++)
		if (b[i] == ':') {
			colon = i;
			break;
		}
	if (at == 0 || colon == 0 || at - colon < 2)
		return 0;
	spawn_scrub_placeholder(b + colon + 1, at - colon - 1);
	return 1;
}

/* The next whitespace-separated word at or after *i, [*ws, *we). */
static bool
next_word(const char *b, size_t len, size_t *i, size_t *ws, size_t *we)
{
	while (*i < len && is_space(b[*i]))
		(*i)++;
	if (*i >= len)
		return false;
	*ws = *i;
	while (*i < len && !is_space(b[*i]))
		(*i)++;
	*we = *i;
	return true;
}

/* .netrc: the word after "password" or "account"; a macdef's body (up
 * to an empty line) is not words. */
static int
scrub_netrc(char *b, size_t len)
{
	size_t i = 0, ws, we, n;
	const char *nl;
	int count = 0;

	while (next_word(b, len, &i, &ws, &we)) {
		n = we - ws;
		if (n == 6 && memcmp(b + ws, "macdef", 6) == 0) {
			nl = memmem(b + we, len - we, "\n\n", 2);
			i = nl != NULL ? (size_t)(nl - b) + 2 : len;
			continue;
		}
		if (!((n == 8 && memcmp(b + ws, "password", 8) == 0) ||
		    (n == 7 && memcmp(b + ws, "account", 7) == 0)))
			continue;
		if (!next_word(b, len, &i, &ws, &we))
			break;
		count += scrub_value(b + ws, we - ws);
	}
	return count;
}

/*
 * JSON (docker's config.json): the string value of a secret key, in
 * place between its quotes (the fill has no quote and no backslash, so
 * the file stays JSON). Strings are scanned with their escapes; a key is
 * a string followed by ':'.
 */
static int
scrub_json(char *b, size_t len)
{
	size_t i = 0, ks = 0, ke = 0, s;
	bool key_secret = false;
	int count = 0;

	while (i < len) {
		if (b[i] != '"') {
			if (b[i] == ':' && ke > ks)
				key_secret = secret_key(SPAWN_SCRUB_DOCKER,
				    b + ks, ke - ks);
			else if (!is_space(b[i]))
				key_secret = false;
			i++;
			continue;
		}
		for (s = ++i; i < len && b[i] != '"'; i++)
			if (b[i] == '\\' && i + 1 < len)
				i++;
		if (i >= len)
			break;		/* an unterminated string: stop */
		if (key_secret && i > s) {
			spawn_scrub_placeholder(b + s, i - s);
			count++;
			key_secret = false;
			ke = ks = 0;
		} else {
			ks = s;
			ke = i;
		}
		i++;
	}
	return count;
}

/* The file's shape: bounded, no NUL, no overlong line. */
static bool
plain_text(const char *b, size_t len)
{
	size_t i, line = 0;

	if (len > SPAWN_SCRUB_MAX)
		return false;
	for (i = 0; i < len; i++) {
		if (b[i] == '\0')
			return false;
		line = b[i] == '\n' ? 0 : line + 1;
		if (line > SPAWN_SCRUB_LINE_MAX)
			return false;
	}
	return true;
}

int
spawn_scrub(enum spawn_scrub_fmt f, char *buf, size_t len)
{
	size_t s, e;
	int count = 0;

	if (!plain_text(buf, len))
		return -1;
	if (f == SPAWN_SCRUB_NETRC)
		return scrub_netrc(buf, len);
	if (f == SPAWN_SCRUB_DOCKER)
		return scrub_json(buf, len);
	for (s = 0; s < len; s = e + 1) {
		for (e = s; e < len && buf[e] != '\n'; e++)
			;
		if (f == SPAWN_SCRUB_GITCRED)
			count += scrub_url_line(buf, s, e);
		else
			count += scrub_kv_line(f, buf, s, e);
	}
	return count;
}
