/*
 * spawn_scrub: files that mix settings and secrets, shown inside the
 * sandbox with every secret replaced by a placeholder, so registries,
 * scopes and settings keep working while the secret stays outside.
 *
 * A placeholder has the secret's length and keeps a known prefix (npm_,
 * ghp_, pypi-, glpat-, ...), so a client that checks a token's shape
 * still takes it; the rest is "gkplaceholder" repeated. A value that
 * refers to the environment (${NPM_TOKEN}) is left as it is: the
 * variable is kept out of the sandbox already (spawn_env.c).
 *
 * Each scrubber is a pure function over a bounded buffer, in place (the
 * length does not change), with cmocka tests (tests/test_spawn_scrub.c)
 * and a fuzz target (fuzz_spawn_scrub).
 */
#ifndef SPAWN_SCRUB_H
#define SPAWN_SCRUB_H

#include <stddef.h>

#define SPAWN_SCRUB_MAX		(64 * 1024)	/* bytes of one file */
#define SPAWN_SCRUB_LINE_MAX	4096		/* bytes of one line */

enum spawn_scrub_fmt {
	SPAWN_SCRUB_NPMRC,	/* ~/.npmrc: _authToken, _auth, _password */
	SPAWN_SCRUB_PYPIRC,	/* ~/.pypirc: password */
	SPAWN_SCRUB_NETRC,	/* ~/.netrc: password, account */
	SPAWN_SCRUB_GITCRED,	/* ~/.git-credentials: the URLs' passwords */
	SPAWN_SCRUB_CARGO,	/* ~/.cargo/credentials.toml: token */
	SPAWN_SCRUB_GHHOSTS,	/* gh's hosts.yml: oauth_token */
	SPAWN_SCRUB_DOCKER,	/* ~/.docker/config.json: auth,
				   identitytoken, registrytoken */
};

/*
 * Replace each secret in buf[0, len) by its placeholder. Returns how many
 * were replaced, or -1 when buf cannot be such a file (over
 * SPAWN_SCRUB_MAX, a NUL byte, a line over SPAWN_SCRUB_LINE_MAX): the
 * caller then hides the file whole.
 */
int	spawn_scrub(enum spawn_scrub_fmt f, char *buf, size_t len);

/* Overwrite v[0, n) with a placeholder of a secret v[0, n) was. */
void	spawn_scrub_placeholder(char *v, size_t n);

/*
 * How many leading bytes of the secret v[0, n) a placeholder keeps: the
 * longest known token prefix (npm_, ghp_, github_pat_, sk-ant-, ...) it
 * starts with, when at least SPAWN_SCRUB_PREFIX_REST bytes follow it;
 * else 0. Also the shape of --credential's placeholders (spawn_cred.c).
 */
#define SPAWN_SCRUB_PREFIX_REST	4
size_t	spawn_scrub_prefix(const char *v, size_t n);

#endif /* SPAWN_SCRUB_H */
