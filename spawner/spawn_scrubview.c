/*
 * spawn_scrubview: the settings files that hold secrets too (~/.npmrc,
 * ~/.pypirc, ~/.netrc, ~/.git-credentials, cargo's credentials; gh's
 * hosts.yml and docker's config.json in their hidden directories) are
 * shown inside as gk-run's read-only copy with every secret replaced
 * (spawn_scrub.h), instead of being hidden whole: a scoped or private
 * registry's settings keep working, its token stays outside. The file is
 * read beneath $HOME following no link (an earlier run may have planted
 * one); anything else (a link, not a regular file, too big, not text)
 * is hidden whole, as before.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"
#include "spawner/spawn_scrub.h"

static const struct {
	const char		*rel;	/* beneath $HOME */
	enum spawn_scrub_fmt	 fmt;
	const char		*in;	/* a hidden directory it is shown in
					   (NULL: it is a default hide) */
} views[] = {
	{ ".npmrc", SPAWN_SCRUB_NPMRC, NULL },
	{ ".pypirc", SPAWN_SCRUB_PYPIRC, NULL },
	{ ".netrc", SPAWN_SCRUB_NETRC, NULL },
	{ ".git-credentials", SPAWN_SCRUB_GITCRED, NULL },
	{ ".cargo/credentials.toml", SPAWN_SCRUB_CARGO, NULL },
	{ ".cargo/credentials", SPAWN_SCRUB_CARGO, NULL },
	{ ".config/gh/hosts.yml", SPAWN_SCRUB_GHHOSTS, ".config/gh" },
	{ ".docker/config.json", SPAWN_SCRUB_DOCKER, ".docker" },
};

/* home/rel's text, read following no link (spawn_read_beneath):
 * malloc'd, NUL-terminated, or NULL (then the file is hidden whole). */
static char *
read_text(const char *home, const char *rel, size_t *len)
{
	char *buf;
	int hfd;

	if ((hfd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL;
	buf = spawn_read_beneath(hfd, rel, SPAWN_SCRUB_MAX, len);
	close(hfd);
	return buf;
}

/* View i: 1 added, 0 not (hide it), -1 out of memory. */
static int
view(struct spawn_mlist *l, const char *home, size_t i)
{
	char *text, *path;
	size_t len;

	if ((text = read_text(home, views[i].rel, &len)) == NULL)
		return 0;
	if (spawn_scrub(views[i].fmt, text, len) == -1 ||
	    asprintf(&path, "%s/%s", home, views[i].rel) == -1) {
		free(text);
		return 0;
	}
	return spawn_ml_add_src(l, SPAWN_MNT_DATA, path, text, true) == 0 ?
	    1 : -1;
}

int
spawn_scrub_view(struct spawn_mlist *l, const char *home, const char *rel)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i].in == NULL && strcmp(views[i].rel, rel) == 0)
			return view(l, home, i);
	return 0;
}

int
spawn_scrub_views_in(struct spawn_mlist *l, const char *home,
    const char *dir)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i].in != NULL && strcmp(views[i].in, dir) == 0 &&
		    view(l, home, i) == -1)
			return -1;
	return 0;
}
