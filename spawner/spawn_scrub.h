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
 * A secret whose host the file names is also reported with that host
 * (spawn_scrub_report), so that gk-run can bind it to the host through
 * gatekeeperd (spawn_filecred.c) and give it a random placeholder:
 *
 *   npmrc    //HOST[:PORT]/path/:_authToken=T; a bare _authToken goes to
 *            the registry= URL's host (default registry.npmjs.org)
 *   netrc    machine HOST ... password P (not default's, not account)
 *   gitcred  https://USER:P@HOST[:PORT]/... (a P with '%' is encoded
 *            in the file, not as sent: not reported)
 *   pypirc   password in a section whose repository= https URL names the
 *            host; [pypi] and [testpypi] without one: upload.pypi.org,
 *            test.pypi.org
 *   cargo    [registry] token: crates.io (other registries: none)
 *   ghhosts  HOST: ... oauth_token (or token): HOST, and api.github.com
 *            too for github.com
 *
 * Values a client sends base64-encoded with a user name (npmrc's _auth
 * and _password, docker's auth) are never reported: a placeholder inside
 * them would not be on the wire as it is in the file. Nor is a value
 * with a backslash (an escape: the file's bytes are not the secret's).
 *
 * Each scrubber is a pure function over a bounded buffer, in place (the
 * length does not change), with cmocka tests (tests/test_spawn_scrub.c)
 * and a fuzz target (fuzz_spawn_scrub).
 */
#ifndef SPAWN_SCRUB_H
#define SPAWN_SCRUB_H

#include <stddef.h>
#include <stdint.h>

#include "gatekeeper/base/gk_name.h"

#define SPAWN_SCRUB_MAX		(64 * 1024)	/* bytes of one file */
#define SPAWN_SCRUB_LINE_MAX	4096		/* bytes of one line */
#define SPAWN_SCRUB_BIND_MAX	32	/* secrets reported from one file */
#define SPAWN_SCRUB_HOSTS_MAX	2	/* hosts of one */

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

/* A replaced secret the file binds to a host. */
struct spawn_scrub_bind {
	size_t		 off;		/* the secret was buf[off, off +
					   len); its placeholder is there */
	size_t		 len;
	char		 host[SPAWN_SCRUB_HOSTS_MAX][GK_NAME_MAX + 1];
	size_t		 nhosts;	/* 1..SPAWN_SCRUB_HOSTS_MAX; gk_name's
					   lower-case text, no port */
	uint16_t	 port;		/* where it is sent: 443 unless the
					   file names another */
	const char	*label;		/* its key: "_authToken", "password",
					   "token", "oauth_token" (static) */
};

struct spawn_scrub_binds {
	struct spawn_scrub_bind	 b[SPAWN_SCRUB_BIND_MAX];
	size_t			 n;	/* in the buffer's order */
	size_t			 more;	/* reported ones that did not fit */
};

/*
 * Replace each secret in buf[0, len) by its placeholder. Returns how many
 * were replaced, or -1 when buf cannot be such a file (over
 * SPAWN_SCRUB_MAX, a NUL byte, a line over SPAWN_SCRUB_LINE_MAX): the
 * caller then hides the file whole.
 */
int	spawn_scrub(enum spawn_scrub_fmt f, char *buf, size_t len);
/* The same, and each replaced secret whose host the file names in out
 * (emptied first; NULL: none), as the table above says. */
int	spawn_scrub_report(enum spawn_scrub_fmt f, char *buf, size_t len,
	    struct spawn_scrub_binds *out);

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
