/*
 * spawn_cache: the tool caches inside the sandbox (--cache), and the
 * mount points they need under a read-only home.
 *
 * Package managers and build tools write to well-known places under
 * $HOME (~/.npm, ~/.cache, ~/.cargo/registry, ...). With --cache private
 * (the default) each of them is a directory of gk-run's own, kept per
 * user under ~/.gk-run/cache (or $GK_RUN_CACHE), bound writable at the
 * usual place: it persists between runs and the
 * host's own tools never read it. --cache tmp puts a fresh tmpfs there
 * instead; --cache host binds the host's own directories writable.
 *
 * A mount point must exist. Where the host lacks one (a fresh user has
 * no ~/.npm), the nearest existing directory above it becomes a SYNTH
 * mount: a tmpfs on which every entry of the host directory is bound
 * read-only again (directories and files; symbolic links recreated;
 * sockets, fifos and devices left out), so the missing directory can be
 * created on the tmpfs. New files there vanish at exit; the host's stay
 * read-only. Nothing is ever created on the host, except the private
 * cache directories themselves (and, with --cache host, the host's
 * missing cache directories).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

/* Relative to $HOME: where tools keep caches and user installs. */
static const char *const cache_paths[] = {
	".cache",		/* XDG: pip, go-build, node/corepack, ... */
	".npm",			/* npm's cache, npx */
	".cargo/registry", ".cargo/git",
	"go/pkg/mod",
	".m2/repository",
	".gradle/caches", ".gradle/wrapper",
	".yarn/berry",
	".local/share/pnpm",
	".bun/install/cache",
	".local/lib",		/* pip install --user */
	NULL,
};

/* Also written by user installs (pip's scripts), but the host's own
 * programs there stay visible: the host's entries are bound read-only on
 * top of the private directory. */
static const char *const merged_paths[] = {
	".local/bin",
	NULL,
};

#define SYNTH_ENTRIES_MAX	4096	/* per directory */

int
spawn_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);
	struct stat st;

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		if (i < n)
			buf[i] = '/';
	}
	if (stat(path, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/*
 * Where the private caches live: $GK_RUN_CACHE when that is an absolute
 * path, else HOME/.gk-run/cache (outside ~/.cache and ~/.local, which
 * the host's tools own). Sets *top to the directory hidden inside
 * ($GK_RUN_CACHE itself, or HOME/.gk-run). malloc'd; NULL on ENOMEM.
 */
static char *
private_root(const char *home, char **top)
{
	const char *x = getenv("GK_RUN_CACHE");
	char *c;

	if (x != NULL && x[0] == '/') {
		if ((c = spawn_path_normalize("/", x)) == NULL)
			return NULL;
		if ((*top = strdup(c)) == NULL) {
			free(c);
			return NULL;
		}
		return c;
	}
	if (asprintf(top, "%s/.gk-run", home) == -1)
		return NULL;
	if (asprintf(&c, "%s/cache", *top) == -1) {
		free(*top);
		return NULL;
	}
	return c;
}

/*
 * The nearest directory above `path` (under home) that exists on the
 * host, when `path` itself is missing: there a SYNTH mount must go.
 * NULL when path exists (or a component is not a directory: *bad).
 */
static char *
missing_parent(const char *home, const char *path, bool *bad)
{
	char buf[PATH_MAX], *p;
	struct stat st;
	size_t hl = strlen(home);

	*bad = false;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		*bad = true;
		return NULL;
	}
	for (p = buf + hl; *p != '\0'; ) {
		p = strchr(p + 1, '/');
		if (p != NULL)
			*p = '\0';
		if (stat(buf, &st) == -1) {
			if (errno != ENOENT) {
				*bad = true;
				return NULL;
			}
			*strrchr(buf, '/') = '\0';
			return strdup(buf);
		}
		if (!S_ISDIR(st.st_mode)) {
			*bad = true;
			return NULL;
		}
		if (p == NULL)
			break;
		*p = '/';
	}
	return NULL;
}

/* One cache place for the mode; 0, or -1 with err. */
static int
add_cache(struct spawn_mlist *l, const struct spawn_opts *o,
    enum spawn_cache mode, const char *path, const char *backing,
    bool merged, char *err, size_t errlen)
{
	char show[256];

	switch (mode) {
	case SPAWN_CACHE_PRIVATE:
		if (!o->dry_run && spawn_mkdirs(backing, 0700) == -1)
			return gk_seterr(err, errlen, "--cache private: "
			    "cannot create %s: %s", spawn_printable(backing,
			    show, sizeof(show)), strerror(errno));
		return spawn_ml_add_src(l, SPAWN_MNT_BIND, strdup(path),
		    strdup(backing), true);
	case SPAWN_CACHE_TMP:
		return spawn_ml_add(l, merged ? SPAWN_MNT_SYNTH :
		    SPAWN_MNT_TMPFS, strdup(path), true);
	case SPAWN_CACHE_HOST:
		if (!o->dry_run && spawn_mkdirs(path, 0777) == -1)
			return gk_seterr(err, errlen, "--cache host: cannot "
			    "create %s: %s", spawn_printable(path, show,
			    sizeof(show)), strerror(errno));
		return spawn_ml_add(l, SPAWN_MNT_RW, strdup(path), true);
	}
	return 0;
}

/* The host's entries of dir, bound read-only on a SYNTH or merged
 * mount at dir (skipping paths that have a mount of their own). */
static int
add_entries(struct spawn_mlist *l, const char *dir)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	ssize_t ll;
	DIR *d;
	int r = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;	/* nothing to show */
	while (r == 0 && (de = readdir(d)) != NULL && n < SYNTH_ENTRIES_MAX) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path) || spawn_ml_has(l, path) ||
		    lstat(path, &st) == -1)
			continue;
		n++;
		if (S_ISLNK(st.st_mode)) {
			if ((ll = readlink(path, link, sizeof(link) - 1)) <= 0)
				continue;
			link[ll] = '\0';
			r = spawn_ml_add_src(l, SPAWN_MNT_SYMLINK, strdup(path),
			    strdup(link), true);
		} else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
			r = spawn_ml_add(l, SPAWN_MNT_RO, strdup(path), true);
	}
	closedir(d);
	return r;
}

static bool
is_merged(const char *home, const char *path)
{
	size_t hl = strlen(home), i;

	if (strncmp(path, home, hl) != 0 || path[hl] != '/')
		return false;
	for (i = 0; merged_paths[i] != NULL; i++)
		if (strcmp(path + hl + 1, merged_paths[i]) == 0)
			return true;
	return false;
}

static int
by_depth(const void *a, const void *b)
{
	size_t da = spawn_path_depth(*(char *const *)a);
	size_t db = spawn_path_depth(*(char *const *)b);

	return da < db ? -1 : da > db;
}

/* A SYNTH at the nearest existing parent of m's path when the host
 * lacks it and that parent is read-only inside. */
static int
add_synth(struct spawn_mlist *l, const char *home, const char *path)
{
	const struct spawn_mount *c;
	char *mp;
	bool bad;

	if ((mp = missing_parent(home, path, &bad)) == NULL)
		return 0;
	c = spawn_ml_covering(l, mp);
	/* writable already, by this user too (bwrap makes the directory
	 * as the user), or a mount of its own there; under a SYNTH above
	 * it is a read-only entry */
	if (c != NULL && (((c->kind == SPAWN_MNT_RW ||
	    c->kind == SPAWN_MNT_BIND) && access(mp, W_OK) == 0) ||
	    c->kind == SPAWN_MNT_TMPFS || strcmp(c->path, mp) == 0)) {
		free(mp);
		return 0;
	}
	return spawn_ml_add(l, SPAWN_MNT_SYNTH, mp, true);
}

int
spawn_cache_mounts(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *home, char *err, size_t errlen)
{
	const char *const *lists[] = { cache_paths, merged_paths };
	char *root, *top, path[PATH_MAX], backing[PATH_MAX], **dirs = NULL;
	const struct spawn_mount *c;
	size_t i, k, ndirs = 0, first = l->n;
	struct stat st;
	enum spawn_cache mode;
	bool bad;
	int r = 0, li;

	if (o->fs != SPAWN_FS_SANDBOX || o->platform != SPAWN_PLATFORM_LINUX ||
	    home == NULL || strcmp(home, "/") == 0)
		return 0;
	if ((root = private_root(home, &top)) == NULL)
		return -1;
	/*
	 * A home the user cannot write (HOME of another user, a read-only
	 * one): no private directory can be made there, so this run gets
	 * fresh ones (tmp); a --dry-run shows what a run would do.
	 */
	mode = o->cache;
	if (mode == SPAWN_CACHE_PRIVATE && !o->dry_run &&
	    spawn_mkdirs(root, 0700) == -1)
		mode = SPAWN_CACHE_TMP;
	if (mode == SPAWN_CACHE_PRIVATE && !spawn_ml_has(l, top) &&
	    (o->dry_run || access(top, F_OK) == 0))
		r = spawn_ml_add(l, SPAWN_MNT_HIDE_DIR, strdup(top), true);
	for (li = 0; r == 0 && li < 2; li++) {
		for (i = 0; r == 0 && lists[li][i] != NULL; i++) {
			snprintf(path, sizeof(path), "%s/%s", home,
			    lists[li][i]);
			snprintf(backing, sizeof(backing), "%s/%s", root,
			    lists[li][i]);
			c = spawn_ml_covering(l, path);
			/* the user's own --ro/--rw/--hide, a hidden or fresh
			 * place above, a path that cannot be a directory:
			 * leave it as it is */
			if (spawn_ml_has(l, path) || (c != NULL &&
			    (!c->implicit || c->kind == SPAWN_MNT_HIDE_DIR ||
			    c->kind == SPAWN_MNT_TMPFS)))
				continue;
			free(missing_parent(home, path, &bad));
			if (!bad)
				r = add_cache(l, o, mode, path, backing,
				    li == 1, err, errlen);
		}
	}
	/* mount points the host lacks (--cache host made its own) */
	for (k = first; r == 0 && k < l->n; k++)
		if (l->m[k].kind == SPAWN_MNT_BIND ||
		    l->m[k].kind == SPAWN_MNT_TMPFS ||
		    (l->m[k].kind == SPAWN_MNT_SYNTH &&
		    is_merged(home, l->m[k].path)))
			r = add_synth(l, home, l->m[k].path);
	/* the host's entries on every SYNTH, and on the merged places the
	 * host has (shallow first: a deeper SYNTH or cache is an entry
	 * with a mount of its own, skipped) */
	if (r == 0 && (dirs = calloc(l->n - first + 1, sizeof(*dirs))) ==
	    NULL)
		r = -1;
	for (k = first; r == 0 && k < l->n; k++)
		if ((l->m[k].kind == SPAWN_MNT_SYNTH ||
		    (l->m[k].kind == SPAWN_MNT_BIND &&
		    is_merged(home, l->m[k].path))) &&
		    stat(l->m[k].path, &st) == 0 && S_ISDIR(st.st_mode))
			dirs[ndirs++] = l->m[k].path;
	if (r == 0)
		qsort(dirs, ndirs, sizeof(*dirs), by_depth);
	for (k = 0; r == 0 && k < ndirs; k++) {
		/* add_entries may move l->m: copy the path first */
		snprintf(path, sizeof(path), "%s", dirs[k]);
		r = add_entries(l, path);
		/* dirs[] pointed into l->m's strings, which stay put */
	}
	free(dirs);
	free(root);
	free(top);
	if (r == -1 && err[0] == '\0')
		gk_seterr(err, errlen, "out of memory");
	return r;
}
