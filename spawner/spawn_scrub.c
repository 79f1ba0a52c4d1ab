/*
 * spawn_scrub: secrets in settings files replaced by placeholders of the
 * same shape, and those whose host the file names reported with it
 * (spawn_scrub.h). Line by line (.netrc word by word, docker's JSON
 * string by string), in place.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "gatekeeper/base/gk_name.h"
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

/* Where a secret goes: a host the file names, or none (""). */
struct target {
	char		 host[GK_NAME_MAX + 1];
	uint16_t	 port;
};

static const struct target no_target = { "", 0 };

/* One pass over a file. */
struct scan {
	enum spawn_scrub_fmt	 f;
	char			*b;
	size_t			 len;
	struct spawn_scrub_binds *out;	/* NULL: nothing reported */
	struct target		 cur;	/* the section's, machine's, host's */
	struct target		 reg;	/* .npmrc: its registry= URL's */
	int			 count;	/* secrets replaced */
};

/* A line's key [ks, ke) and value [vs, ve), blanks trimmed. */
struct kv {
	size_t		 ks, ke, vs, ve;
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	    c == '\f' || c == '\v';
}

/* c is one of the bytes of set (never the NUL that ends it). */
static bool
in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
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

/* [*s, *e) without the quotes around it, when quoted. */
static void
unquote(const char *b, size_t *s, size_t *e)
{
	if (*e - *s >= 2 && (b[*s] == '"' || b[*s] == '\'') &&
	    b[*e - 1] == b[*s]) {
		(*s)++;
		(*e)--;
	}
}

/* The end of the line starting at s (its '\n', or len). */
static size_t
line_end(const struct scan *sc, size_t s)
{
	const char *nl = memchr(sc->b + s, '\n', sc->len - s);

	return nl != NULL ? (size_t)(nl - sc->b) : sc->len;
}

/* key[0, n) is w exactly; case-insensitively for ieq. */
static bool
is(const char *key, size_t n, const char *w)
{
	return n == strlen(w) && memcmp(key, w, n) == 0;
}

static bool
ieq(const char *key, size_t n, const char *w)
{
	return n == strlen(w) && strncasecmp(key, w, n) == 0;
}

/* Does key[0, n) end with suffix (case-insensitively)? */
static bool
ends_with(const char *key, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && strncasecmp(key + n - m, suffix, m) == 0;
}

/* The label of a secret's key, or NULL: not a secret's. */
static const char *
secret_key(enum spawn_scrub_fmt f, const char *key, size_t n)
{
	switch (f) {
	case SPAWN_SCRUB_NPMRC:
		return ends_with(key, n, "_authToken") ? "_authToken" :
		    ends_with(key, n, "_auth") ? "_auth" :
		    ends_with(key, n, "_password") ? "_password" : NULL;
	case SPAWN_SCRUB_PYPIRC:
		return ieq(key, n, "password") ? "password" : NULL;
	case SPAWN_SCRUB_CARGO:
		return ieq(key, n, "token") ? "token" : NULL;
	case SPAWN_SCRUB_GHHOSTS:
		return is(key, n, "oauth_token") ? "oauth_token" :
		    is(key, n, "token") ? "token" : NULL;
	case SPAWN_SCRUB_DOCKER:
		return is(key, n, "auth") ? "auth" :
		    is(key, n, "identitytoken") ? "identitytoken" :
		    is(key, n, "registrytoken") ? "registrytoken" :
		    is(key, n, "password") ? "password" : NULL;
	case SPAWN_SCRUB_NETRC:
	case SPAWN_SCRUB_GITCRED:
		break;
	}
	return NULL;
}

/* ---- where a secret goes --------------------------------------------- */

/* t: the host name[0, n) (gk_name's text) and port; false (t none) when
 * it is no host name. */
static bool
set_target(struct target *t, const char *name, size_t n, uint16_t port)
{
	if (gk_name_normalize(name, n, t->host) == -1) {
		*t = no_target;
		return false;
	}
	t->port = port;
	return true;
}

/* HOST[:PORT] in b[s, e) into t (port 443 unless given). */
static bool
host_port(const char *b, size_t s, size_t e, struct target *t)
{
	const char *colon = memchr(b + s, ':', e - s);
	size_t i, c = colon != NULL ? (size_t)(colon - b) : e;
	uint32_t port = 443;

	if (c < e) {
		port = 0;
		for (i = c + 1; i < e && port <= 65535; i++) {
			if (b[i] < '0' || b[i] > '9')
				break;
			port = port * 10 + (uint32_t)(b[i] - '0');
		}
		if (i < e || port == 0 || port > 65535) {
			*t = no_target;
			return false;
		}
	}
	return set_target(t, b + s, c - s, (uint16_t)port);
}

/* The host of an https URL in b[s, e) (quoted or not) into t:
 * https://[USERINFO@]HOST[:PORT][/...]; another scheme names none. */
static bool
url_target(const char *b, size_t s, size_t e, struct target *t)
{
	size_t i, hs;

	*t = no_target;
	unquote(b, &s, &e);
	if (e - s < 8 || strncasecmp(b + s, "https://", 8) != 0)
		return false;
	for (i = hs = s + 8; i < e && !in_set(b[i], "/?#"); i++)
		if (b[i] == '@')
			hs = i + 1;
	return host_port(b, hs, i, t);
}

/* ---- replacing and reporting ------------------------------------------ */

/* Report b[off, off + n), a secret for t, before it is replaced: not
 * when t names no host, nor when its bytes are not what is sent (an
 * escape; in a URL, percent-encoding). */
static void
report(struct scan *sc, const struct target *t, size_t off, size_t n,
    const char *label)
{
	struct spawn_scrub_bind *bd;

	if (sc->out == NULL || t->host[0] == '\0' ||
	    memchr(sc->b + off, '\\', n) != NULL ||
	    (sc->f == SPAWN_SCRUB_GITCRED &&
	    memchr(sc->b + off, '%', n) != NULL))
		return;
	if (sc->out->n == SPAWN_SCRUB_BIND_MAX) {
		sc->out->more++;
		return;
	}
	bd = &sc->out->b[sc->out->n++];
	bd->off = off;
	bd->len = n;
	bd->port = t->port;
	bd->label = label;
	memcpy(bd->host[0], t->host, sizeof(t->host));
	bd->nhosts = 1;
	/* gh talks to github.com's API on its own host */
	if (sc->f == SPAWN_SCRUB_GHHOSTS && strcmp(t->host, "github.com") == 0)
		memcpy(bd->host[bd->nhosts++], "api.github.com",
		    sizeof("api.github.com"));
}

/* The secret b[s, e), for t: reported, then replaced. */
static void
replace(struct scan *sc, const struct target *t, size_t s, size_t e,
    const char *label)
{
	report(sc, t, s, e - s, label);
	spawn_scrub_placeholder(sc->b + s, e - s);
	sc->count++;
}

/* A secret's value b[s, e): inside its quotes when quoted; never an
 * environment reference (${NAME}). */
static void
secret(struct scan *sc, const struct target *t, size_t s, size_t e,
    const char *label)
{
	unquote(sc->b, &s, &e);
	if (s == e || (e - s >= 2 && sc->b[s] == '$' && sc->b[s + 1] == '{'))
		return;
	replace(sc, t, s, e, label);
}

/* ---- key = value files ---------------------------------------------- */

/* Line b[s, e) split at the first byte of seps into kv; false for a
 * blank line, a comment, a section header, or no separator. */
static bool
kv_split(const char *b, size_t s, size_t e, const char *seps, struct kv *kv)
{
	size_t i;

	kv->ks = s;
	kv->ve = e;
	trim(b, &kv->ks, &kv->ve);
	if (kv->ks == kv->ve || in_set(b[kv->ks], "#;["))
		return false;
	for (i = kv->ks; i < kv->ve && !in_set(b[i], seps); i++)
		;
	if (i == kv->ve)
		return false;
	kv->ke = i;
	kv->vs = i + 1;
	trim(b, &kv->ks, &kv->ke);
	trim(b, &kv->vs, &kv->ve);
	return true;
}

/* Is line b[s, e) a section header ('[' first)? Its name, when it is
 * [NAME], in [*ns, *ne) (else empty). */
static bool
header(const char *b, size_t s, size_t e, size_t *ns, size_t *ne)
{
	trim(b, &s, &e);
	if (s == e || b[s] != '[')
		return false;
	*ns = *ne = s;
	if (e - s >= 2 && b[e - 1] == ']') {
		*ns = s + 1;
		*ne = e - 1;
		trim(b, ns, ne);
	}
	return true;
}

/* .npmrc: where a bare _authToken goes, its last registry= (https) URL's
 * host; registry.npmjs.org when it has none. */
static void
npmrc_registry(struct scan *sc)
{
	struct kv kv;
	size_t s, e;

	(void)set_target(&sc->reg, "registry.npmjs.org", 18, 443);
	for (s = 0; s < sc->len; s = e + 1) {
		e = line_end(sc, s);
		if (kv_split(sc->b, s, e, "=", &kv) &&
		    is(sc->b + kv.ks, kv.ke - kv.ks, "registry"))
			(void)url_target(sc->b, kv.vs, kv.ve, &sc->reg);
	}
}

/* .npmrc: key [ks, ke)'s host. _authToken: the registry's;
 * //HOST[:PORT]/PATH:_authToken: HOST; _auth and _password (base64
 * with the user name) none. */
static void
npmrc_target(const struct scan *sc, size_t ks, size_t ke, struct target *t)
{
	static const char suffix[] = ":_authToken";
	const size_t n = sizeof(suffix) - 1;
	const char *b = sc->b, *slash;

	*t = no_target;
	if (is(b + ks, ke - ks, suffix + 1)) {
		*t = sc->reg;
		return;
	}
	if (ke - ks < n + 3 || memcmp(b + ks, "//", 2) != 0 ||
	    memcmp(b + ke - n, suffix, n) != 0)
		return;
	if ((slash = memchr(b + ks + 2, '/', ke - n - ks - 2)) != NULL)
		(void)host_port(b, ks + 2, (size_t)(slash - b), t);
}

/* .pypirc: where the passwords of section [ns, ne) go, its lines from
 * pos on: its last repository= (https) URL's host, else [pypi]'s and
 * [testpypi]'s own. Each section is read once more: linear. */
static void
pypirc_section(struct scan *sc, size_t ns, size_t ne, size_t pos)
{
	struct kv kv;
	size_t s, e, hs, he;
	bool repo = false;

	for (s = pos; s < sc->len; s = e + 1) {
		e = line_end(sc, s);
		if (header(sc->b, s, e, &hs, &he))
			break;
		if (kv_split(sc->b, s, e, "=:", &kv) &&
		    ieq(sc->b + kv.ks, kv.ke - kv.ks, "repository")) {
			repo = true;
			(void)url_target(sc->b, kv.vs, kv.ve, &sc->cur);
		}
	}
	if (repo)
		return;
	if (is(sc->b + ns, ne - ns, "pypi"))
		(void)set_target(&sc->cur, "upload.pypi.org", 15, 443);
	else if (is(sc->b + ns, ne - ns, "testpypi"))
		(void)set_target(&sc->cur, "test.pypi.org", 13, 443);
}

/* A section header line b[s, e): the secrets after it go where it says
 * (cargo's [registry]: crates.io). false: the line is not one. */
static bool
section_line(struct scan *sc, size_t s, size_t e)
{
	size_t ns, ne;

	if (!header(sc->b, s, e, &ns, &ne))
		return false;
	sc->cur = no_target;
	if (sc->out == NULL || ns == ne)
		return true;
	if (sc->f == SPAWN_SCRUB_PYPIRC)
		pypirc_section(sc, ns, ne, e + 1);
	else if (sc->f == SPAWN_SCRUB_CARGO && is(sc->b + ns, ne - ns,
	    "registry"))
		(void)set_target(&sc->cur, "crates.io", 9, 443);
	return true;
}

/* key = value lines (npmrc, pypirc also key: value, cargo's TOML),
 * key: value (gh's YAML): one line [s, e). */
static void
kv_line(struct scan *sc, size_t s, size_t e)
{
	const char *seps = sc->f == SPAWN_SCRUB_GHHOSTS ? ":" :
	    sc->f == SPAWN_SCRUB_PYPIRC ? "=:" : "=";
	const char *label;
	struct target t;
	struct kv kv;

	if (section_line(sc, s, e) || !kv_split(sc->b, s, e, seps, &kv))
		return;
	/* hosts.yml: "HOST:" at the top names the host of what follows */
	if (sc->f == SPAWN_SCRUB_GHHOSTS && kv.ks == s) {
		sc->cur = no_target;
		if (kv.vs == kv.ve) {
			(void)set_target(&sc->cur, sc->b + kv.ks,
			    kv.ke - kv.ks, 443);
			return;
		}
	}
	if ((label = secret_key(sc->f, sc->b + kv.ks, kv.ke - kv.ks)) == NULL)
		return;
	if (sc->f == SPAWN_SCRUB_NPMRC)
		npmrc_target(sc, kv.ks, kv.ke, &t);
	else
		t = sc->cur;
	secret(sc, &t, kv.vs, kv.ve, label);
}

/* A credential URL's password: scheme://user:password@host/...; an https
 * URL's goes to its host. */
static void
url_line(struct scan *sc, size_t s, size_t e)
{
	const char *b = sc->b, *p;
	size_t i, auth, end, at = 0, colon = 0;
	struct target t = no_target;

	trim(b, &s, &e);
	if ((p = memmem(b + s, e - s, "://", 3)) == NULL)
		return;
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
		return;
	if (auth - s == 8 && strncasecmp(b + s, "https", 5) == 0)
		(void)host_port(b, at + 1, end, &t);
	replace(sc, &t, colon + 1, at, "password");
}

/* ---- .netrc ----------------------------------------------------------- */

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

/* .netrc: the word after "password" (for the machine named before it)
 * or "account"; the words after "machine" and "login" are theirs, not
 * keywords; a macdef's body (up to an empty line) is not words. */
static void
scrub_netrc(struct scan *sc)
{
	const char *b = sc->b, *nl;
	size_t i = 0, ws, we;
	char k;

	while (next_word(b, sc->len, &i, &ws, &we)) {
		k = is(b + ws, we - ws, "machine") ? 'm' :
		    is(b + ws, we - ws, "login") ? 'l' :
		    is(b + ws, we - ws, "password") ? 'p' :
		    is(b + ws, we - ws, "account") ? 'a' :
		    is(b + ws, we - ws, "default") ? 'd' :
		    is(b + ws, we - ws, "macdef") ? 'x' : '\0';
		if (k == 'd')
			sc->cur = no_target;
		if (k == 'x') {
			nl = memmem(b + we, sc->len - we, "\n\n", 2);
			i = nl != NULL ? (size_t)(nl - b) + 2 : sc->len;
		}
		if (k == '\0' || k == 'd' || k == 'x')
			continue;
		if (!next_word(b, sc->len, &i, &ws, &we))
			break;
		if (k == 'm')
			(void)set_target(&sc->cur, b + ws, we - ws, 443);
		else if (k == 'p' || k == 'a')
			secret(sc, k == 'p' ? &sc->cur : &no_target, ws, we,
			    "password");
	}
}

/* ---- docker's config.json ------------------------------------------- */

/*
 * JSON: the string value of a secret key, in place between its quotes
 * (the fill has no quote and no backslash, so the file stays JSON).
 * Strings are scanned with their escapes; a key is a string followed by
 * ':'. Nothing is reported: each is base64 with a user name, or sent to
 * a token service the file does not name.
 */
static void
scrub_json(struct scan *sc)
{
	const char *b = sc->b;
	size_t i = 0, ks = 0, ke = 0, s;
	bool key_secret = false;

	while (i < sc->len) {
		if (b[i] != '"') {
			if (b[i] == ':' && ke > ks)
				key_secret = secret_key(SPAWN_SCRUB_DOCKER,
				    b + ks, ke - ks) != NULL;
			else if (!is_space(b[i]))
				key_secret = false;
			i++;
			continue;
		}
		for (s = ++i; i < sc->len && b[i] != '"'; i++)
			if (b[i] == '\\' && i + 1 < sc->len)
				i++;
		if (i >= sc->len)
			break;		/* an unterminated string: stop */
		if (key_secret && i > s) {
			replace(sc, &no_target, s, i, "auth");
			key_secret = false;
			ke = ks = 0;
		} else {
			ks = s;
			ke = i;
		}
		i++;
	}
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
spawn_scrub_report(enum spawn_scrub_fmt f, char *buf, size_t len,
    struct spawn_scrub_binds *out)
{
	struct scan sc = { .f = f, .b = buf, .len = len, .out = out };
	size_t s, e;

	if (out != NULL)
		out->n = out->more = 0;
	if (!plain_text(buf, len))
		return -1;
	if (f == SPAWN_SCRUB_NETRC)
		scrub_netrc(&sc);
	else if (f == SPAWN_SCRUB_DOCKER)
		scrub_json(&sc);
	else {
		if (f == SPAWN_SCRUB_NPMRC && out != NULL)
			npmrc_registry(&sc);
		for (s = 0; s < len; s = e + 1) {
			e = line_end(&sc, s);
			if (f == SPAWN_SCRUB_GITCRED)
				url_line(&sc, s, e);
			else
				kv_line(&sc, s, e);
		}
	}
	return sc.count;
}

int
spawn_scrub(enum spawn_scrub_fmt f, char *buf, size_t len)
{
	return spawn_scrub_report(f, buf, len, NULL);
}
