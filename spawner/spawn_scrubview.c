/*
 * spawn_scrubview: the settings files that hold secrets too (~/.npmrc,
 * ~/.pypirc, ~/.netrc, ~/.git-credentials, cargo's credentials; gh's
 * hosts.yml and docker's config.json in their hidden directories) are
 * shown inside as gk-run's read-only copy with every secret replaced
 * (spawn_scrub.h), instead of being hidden whole: a scoped or private
 * registry's settings keep working, its token stays outside. The file is
 * read beneath $HOME following no link (an earlier run may have planted
 * one); anything else (a link, not a regular file, too big, not text)
 * is hidden whole, as before. In a run that binds them (spawn_cred.h,
 * "settings files"), the secrets whose hosts a file names get random
 * placeholders instead, bound to those hosts through gatekeeperd.
 */
#include <fcntl.h>
#include <stdio.h>
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
	const char		*kind;	/* its bound secrets' names: KIND_N
					   (NULL: it binds none) */
} views[] = {
	{ ".npmrc", SPAWN_SCRUB_NPMRC, NULL, "NPMRC" },
	{ ".pypirc", SPAWN_SCRUB_PYPIRC, NULL, "PYPIRC" },
	{ ".netrc", SPAWN_SCRUB_NETRC, NULL, "NETRC" },
	{ ".git-credentials", SPAWN_SCRUB_GITCRED, NULL, "GITCRED" },
	{ ".cargo/credentials.toml", SPAWN_SCRUB_CARGO, NULL, "CARGO" },
	{ ".cargo/credentials", SPAWN_SCRUB_CARGO, NULL, "CARGO" },
	{ ".config/gh/hosts.yml", SPAWN_SCRUB_GHHOSTS, ".config/gh", "GH" },
	{ ".docker/config.json", SPAWN_SCRUB_DOCKER, ".docker", NULL },
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

/* The secrets of view i's text[0, len) that fc binds: each one's
 * placeholder in text. 0, or -1 out of memory. */
static int
bind_view(struct spawn_filecreds *fc, size_t i, const char *orig, char *text,
    const struct spawn_scrub_binds *b)
{
	char file[64];

	snprintf(file, sizeof(file), "~/%s", views[i].rel);
	return spawn_filecreds_bind(fc, file, views[i].kind, orig, text, b);
}

/* View i: 1 added, 0 not (hide it), -1 out of memory. With fc, the
 * secrets it binds are reported (its values read from orig, a copy of
 * the text made before the scrub and wiped after it). */
static int
view(struct spawn_mlist *l, const char *home, size_t i,
    struct spawn_filecreds *fc)
{
	struct spawn_scrub_binds *b = NULL;
	char *text, *orig = NULL, *path;
	size_t len;
	int r = -1;

	if ((text = read_text(home, views[i].rel, &len)) == NULL)
		return 0;
	if (fc != NULL && views[i].kind != NULL &&
	    ((b = malloc(sizeof(*b))) == NULL ||
	    (orig = malloc(len + 1)) == NULL))
		goto done;
	if (orig != NULL)
		memcpy(orig, text, len);
	if (spawn_scrub_report(views[i].fmt, text, len, b) == -1)
		r = 0;
	else if (b != NULL && bind_view(fc, i, orig, text, b) == -1)
		r = -1;
	else if (asprintf(&path, "%s/%s", home, views[i].rel) == -1)
		r = 0;
	else {
		r = spawn_ml_add_src(l, SPAWN_MNT_DATA, path, text, true) ==
		    0 ? 1 : -1;
		text = NULL;	/* the mount's now (freed with it) */
	}
done:
	if (orig != NULL)
		explicit_bzero(orig, len);
	if (text != NULL)
		explicit_bzero(text, len);	/* perhaps not scrubbed */
	free(orig);
	free(text);
	free(b);
	return r;
}

int
spawn_scrub_view(struct spawn_mlist *l, const char *home, const char *rel,
    struct spawn_filecreds *fc)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i].in == NULL && strcmp(views[i].rel, rel) == 0)
			return view(l, home, i, fc);
	return 0;
}

int
spawn_scrub_views_in(struct spawn_mlist *l, const char *home,
    const char *dir, struct spawn_filecreds *fc)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i].in != NULL && strcmp(views[i].in, dir) == 0 &&
		    view(l, home, i, fc) == -1)
			return -1;
	return 0;
}
