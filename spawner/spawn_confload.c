/*
 * spawn_confload: gk-run's configuration files read and turned into the
 * options that come before the command line's (spawn_conf.h). The
 * user's file is read beneath $HOME following no link; in a writable
 * $HOME the sandbox cannot write it (spawn_guard.c keeps
 * ~/.config/gk-run read-only and uncreatable there).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_conf.h"
#include "spawner/spawn_int.h"

struct conf_args {
	const char	*home;
	char		**v;
	size_t		 n, cap;
};

static bool
push(struct conf_args *a, char *s)
{
	char **nv;
	size_t cap;

	if (s == NULL)
		return false;
	if (a->n == a->cap) {
		cap = a->cap == 0 ? 16 : 2 * a->cap;
		if ((nv = reallocarray(a->v, cap, sizeof(*nv))) == NULL) {
			free(s);
			return false;
		}
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = s;
	return true;
}

static bool
conf_cb(void *arg, const char *opt, const char *val, size_t vlen,
    unsigned line, char *err, size_t errlen)
{
	struct conf_args *a = arg;
	char *o = NULL, *v = NULL;

	if (vlen >= 2 && val[0] == '~' && val[1] == '/') {
		if (a->home == NULL) {
			snprintf(err, errlen, "%u: %.*s: no home directory for "
			    "~/", line, (int)(vlen > 60 ? 60 : vlen), val);
			return false;
		}
		if (asprintf(&v, "%s/%.*s", a->home, (int)(vlen - 2),
		    val + 2) == -1)
			v = NULL;
	} else
		v = strndup(val, vlen);
	if (asprintf(&o, "--%s", opt) == -1)
		o = NULL;
	if (!push(a, o) || !push(a, v)) {
		snprintf(err, errlen, "%u: out of memory", line);
		return false;
	}
	return true;
}

/* The file at dirfd/rel (no link followed), parsed into a: 0, 1 when it
 * does not exist, -1 with err. */
static int
conf_file(int dirfd, const char *rel, const char *show,
    struct conf_args *a, char *err, size_t errlen)
{
	char *buf, why[256];
	size_t len;
	int rc = 0, e;

	if ((buf = spawn_read_beneath(dirfd, rel, SPAWN_CONF_MAX,
	    &len)) == NULL) {
		/* none; or defaults this user may not read (not a policy:
		 * gatekeeperd's host policy is the bound) */
		if ((e = errno) == ENOENT || e == EACCES)
			return 1;
		if (e == EINVAL || e == EFBIG)
			snprintf(err, errlen, "%s: not a plain file of at "
			    "most %d bytes", show, SPAWN_CONF_MAX);
		else
			snprintf(err, errlen, "%s: %s%s", show, strerror(e),
			    e == ELOOP ? " (a link: gk-run reads its own "
			    "configuration only as a plain file)" : "");
		return -1;
	}
	if (spawn_conf_parse(buf, len, conf_cb, a, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s:%s", show, why);
		rc = -1;
	}
	free(buf);
	return rc;
}

char **
spawn_conf_argv(int argc, char **argv, const char *home, int *nargc,
    char *err, size_t errlen)
{
	struct conf_args a = { home, NULL, 0, 0 };
	char show[4096];
	int fd, rc = 0, i;

	if (!push(&a, strdup(argv[0])))
		goto nomem;
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) != -1) {
		rc = conf_file(fd, SPAWN_CONF_SYSTEM + 1, SPAWN_CONF_SYSTEM, &a,
		    err, errlen);
		close(fd);
	}
	if (rc != -1 && home != NULL &&
	    (fd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC)) != -1) {
		snprintf(show, sizeof(show), "%s/%s", home, SPAWN_CONF_USER);
		rc = conf_file(fd, SPAWN_CONF_USER, show, &a, err, errlen);
		close(fd);
	}
	if (rc == -1)
		goto fail;
	for (i = 1; i < argc; i++)
		if (!push(&a, strdup(argv[i])))
			goto nomem;
	/* room for the terminating NULL */
	if (!push(&a, strdup("")))
		goto nomem;
	free(a.v[a.n - 1]);
	a.v[a.n - 1] = NULL;
	*nargc = (int)a.n - 1;
	return a.v;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	while (a.n > 0)
		free(a.v[--a.n]);
	free(a.v);
	return NULL;
}
