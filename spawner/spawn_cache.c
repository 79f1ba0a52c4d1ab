/*
 * spawn_cache: the tool caches inside the sandbox (--cache), and the
 * mount points they need under a read-only home.
 *
 * Package managers and build tools write to well-known places under
 * $HOME (~/.npm, ~/.cache, ~/.cargo/registry, ...). With --cache private
 * (the default) each of them is a directory of gk-run's own, bound
 * writable at the usual place: it persists between runs and the host's
 * own tools never read it. What a run writes there may run later (a .pth
 * file in ~/.local/lib, an npm cache entry), so every project has its
 * own set: ~/.gk-run/cache/NAME-HASH (or under $GK_RUN_CACHE), keyed by
 * the real path of the working directory, which comes from the command
 * line, never from a file a sandbox could have written. A .project file
 * in it, out of every sandbox's reach, holds that path and is checked
 * on every use, so two projects never share one even if their HASH
 * collided. --cache shared is the one set for all projects
 * (~/.gk-run/cache/shared), on purpose. The single set of before, at
 * the root itself, is moved once to ~/.gk-run/cache/old, unused.
 * --cache tmp puts a fresh tmpfs there instead; --cache host binds the
 * host's own directories writable.
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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_sha256.h"
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
#define CACHE_KEY_HEX		16	/* hex digits of the hash */

/* Under the root, beside the projects' NAME-HASH (never one of them):
 * --cache shared's set, and the old layout's, moved there unused. */
#define CACHE_SHARED		"shared"
#define CACHE_OLD		"old"
#define CACHE_PROJECT_FILE	".project"

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

static bool
name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int
spawn_cache_key(const char *project, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t md[GK_SHA256_LEN];
	char name[SPAWN_CACHE_NAME_MAX + 1 + CACHE_KEY_HEX + 1];
	const char *base;
	size_t n, i;

	if (project[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	gk_sha256(project, strlen(project), md);
	base = strrchr(project, '/') + 1;
	if (*base == '\0')
		base = "root";
	for (n = 0; base[n] != '\0' && n < SPAWN_CACHE_NAME_MAX; n++)
		name[n] = name_char((unsigned char)base[n]) ? base[n] : '_';
	if (name[0] == '.')
		name[0] = '_';
	name[n++] = '-';
	for (i = 0; i < CACHE_KEY_HEX; i++)
		name[n++] = hex[(md[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0xf];
	name[n] = '\0';
	if (n >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, name, n + 1);
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
 * The caches of before, one set for every project at the root itself:
 * moved once into root/old, never bound again, and said. Only gk-run
 * writes the root (a sandbox writes below the cache directories), and
 * rename moves a link as it is.
 */
static void
old_layout_retire(const char *root)
{
	const char *const *lists[] = { cache_paths, merged_paths };
	char from[PATH_MAX], to[PATH_MAX], show[256];
	struct stat st;
	size_t i;
	int li, n, moved = 0;

	for (li = 0; li < 2; li++) {
		for (i = 0; lists[li][i] != NULL; i++) {
			n = (int)strcspn(lists[li][i], "/");
			if (snprintf(from, sizeof(from), "%s/%.*s", root, n,
			    lists[li][i]) >= (int)sizeof(from) ||
			    lstat(from, &st) == -1 ||
			    snprintf(to, sizeof(to), "%s/%s", root,
			    CACHE_OLD) >= (int)sizeof(to) ||
			    (mkdir(to, 0700) == -1 && errno != EEXIST) ||
			    snprintf(to, sizeof(to), "%s/%s/%.*s", root,
			    CACHE_OLD, n, lists[li][i]) >= (int)sizeof(to))
				continue;
			if (rename(from, to) == 0)
				moved++;
		}
	}
	if (moved > 0)
		fprintf(stderr, "gk-run: note: every project has tool caches "
		    "of its own now; the ones all projects shared were moved "
		    "to %s/%s and are not used (remove it; --cache shared "
		    "starts a new set for all projects)\n",
		    spawn_printable(root, show, sizeof(show)), CACHE_OLD);
}

/* A new file at tmp holding the project's path and a newline. */
static int
project_write(const char *tmp, const char *project)
{
	size_t n = strlen(project);
	int fd, w;

	(void)unlink(tmp);	/* a killed run's, of the same pid */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	w = dprintf(fd, "%s\n", project);
	if (close(fd) == -1 || w != (int)n + 1) {
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * dir is the project's: its .project file says so, or is made to (a
 * file written beside it and linked into place: a concurrent run reads
 * all of it or nothing). 0, or -1 with err: another project's.
 */
static int
project_claim(const char *dir, const char *project, char *err,
    size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX], show[256], had[256], me[256];
	size_t len, n = strlen(project);
	uint8_t *buf;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, CACHE_PROJECT_FILE) >=
	    (int)sizeof(path) || snprintf(tmp, sizeof(tmp), "%s.%ld", path,
	    (long)getpid()) >= (int)sizeof(tmp))
		return gk_seterr(err, errlen, "--cache private: %s: %s",
		    spawn_printable(dir, show, sizeof(show)),
		    strerror(ENAMETOOLONG));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT && project_write(tmp, project) == 0) {
		if (link(tmp, path) == -1 && errno != EEXIST)
			fd = -2;
		(void)unlink(tmp);
		if (fd == -1)
			fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 || (buf = spawn_fd_slurp(fd, PATH_MAX + 1, &len)) ==
	    NULL) {
		if (fd >= 0)
			close(fd);
		return gk_seterr(err, errlen, "--cache private: cannot make "
		    "or read %s: %s", spawn_printable(path, show,
		    sizeof(show)), strerror(errno));
	}
	close(fd);
	buf[len] = '\0';	/* spawn_fd_slurp leaves room for it */
	if (len == n + 1 && memcmp(buf, project, n) == 0 && buf[n] == '\n') {
		free(buf);
		return 0;
	}
	buf[strcspn((char *)buf, "\n")] = '\0';
	spawn_printable((char *)buf, had, sizeof(had));
	free(buf);
	return gk_seterr(err, errlen, "--cache private: %s holds the caches "
	    "of %s, not of this project (%s): move it away",
	    spawn_printable(dir, show, sizeof(show)), had,
	    spawn_printable(project, me, sizeof(me)));
}

/*
 * This run's caches' directory under root, the project's (NAME-HASH) or
 * the shared one, made unless --dry-run. A home the user cannot write
 * (HOME of another user, a read-only one) has no room for it: *mode
 * becomes tmp (fresh ones). 0, or -1 with err.
 */
static int
cache_dir(const struct spawn_opts *o, const char *root, const char *cwd,
    enum spawn_cache *mode, char **dir, char *err, size_t errlen)
{
	char key[SPAWN_CACHE_NAME_MAX + CACHE_KEY_HEX + 2], show[256];

	*dir = NULL;
	if (*mode != SPAWN_CACHE_PRIVATE && *mode != SPAWN_CACHE_SHARED)
		return 0;
	if (*mode == SPAWN_CACHE_SHARED)
		snprintf(key, sizeof(key), "%s", CACHE_SHARED);
	else if (cwd == NULL || spawn_cache_key(cwd, key, sizeof(key)) == -1)
		return gk_seterr(err, errlen, "--cache private: no project "
		    "for the working directory %s", cwd == NULL ? "" :
		    spawn_printable(cwd, show, sizeof(show)));
	if (asprintf(dir, "%s/%s", root, key) == -1) {
		*dir = NULL;
		return gk_seterr(err, errlen, "out of memory");
	}
	if (o->dry_run)
		return 0;
	if (spawn_mkdirs(root, 0700) == -1) {
		*mode = SPAWN_CACHE_TMP;
		return 0;
	}
	old_layout_retire(root);
	if (spawn_mkdirs(*dir, 0700) == -1) {
		*mode = SPAWN_CACHE_TMP;
		return 0;
	}
	return *mode == SPAWN_CACHE_PRIVATE ? project_claim(*dir, cwd, err,
	    errlen) : 0;
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
	case SPAWN_CACHE_SHARED:
		if (!o->dry_run && spawn_mkdirs(backing, 0700) == -1)
			return gk_seterr(err, errlen, "--cache %s: cannot "
			    "create %s: %s", spawn_cache_name(mode),
			    spawn_printable(backing, show, sizeof(show)),
			    strerror(errno));
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

/*
 * After the caches (mounts from first on): mount points the host lacks
 * (--cache host made its own), then the host's entries on every SYNTH
 * and on the merged places the host has (shallow first: a deeper SYNTH
 * or cache is an entry with a mount of its own, skipped). 0 or -1.
 */
static int
host_entries(struct spawn_mlist *l, const char *home, size_t first)
{
	char path[PATH_MAX], **dirs;
	size_t k, ndirs = 0;
	struct stat st;
	int r = 0;

	for (k = first; r == 0 && k < l->n; k++)
		if (l->m[k].kind == SPAWN_MNT_BIND ||
		    l->m[k].kind == SPAWN_MNT_TMPFS ||
		    (l->m[k].kind == SPAWN_MNT_SYNTH &&
		    is_merged(home, l->m[k].path)))
			r = add_synth(l, home, l->m[k].path);
	if (r != 0 || (dirs = calloc(l->n - first + 1, sizeof(*dirs))) == NULL)
		return -1;
	for (k = first; k < l->n; k++)
		if ((l->m[k].kind == SPAWN_MNT_SYNTH ||
		    (l->m[k].kind == SPAWN_MNT_BIND &&
		    is_merged(home, l->m[k].path))) &&
		    stat(l->m[k].path, &st) == 0 && S_ISDIR(st.st_mode))
			dirs[ndirs++] = l->m[k].path;
	qsort(dirs, ndirs, sizeof(*dirs), by_depth);
	for (k = 0; r == 0 && k < ndirs; k++) {
		/* add_entries may move l->m: copy the path first */
		snprintf(path, sizeof(path), "%s", dirs[k]);
		r = add_entries(l, path);
		/* dirs[] pointed into l->m's strings, which stay put */
	}
	free(dirs);
	return r;
}

int
spawn_cache_mounts(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *cwd, const char *home, char *err, size_t errlen)
{
	const char *const *lists[] = { cache_paths, merged_paths };
	char *root, *top, *dir = NULL, path[PATH_MAX], backing[PATH_MAX];
	const struct spawn_mount *c;
	size_t i, first = l->n;
	enum spawn_cache mode;
	bool bad;
	int r = 0, li;

	if (o->fs != SPAWN_FS_SANDBOX || o->platform != SPAWN_PLATFORM_LINUX ||
	    home == NULL || strcmp(home, "/") == 0)
		return 0;
	if ((root = private_root(home, &top)) == NULL)
		return -1;
	mode = o->cache;
	r = cache_dir(o, root, cwd, &mode, &dir, err, errlen);
	if (r == 0 && (mode == SPAWN_CACHE_PRIVATE ||
	    mode == SPAWN_CACHE_SHARED) && !spawn_ml_has(l, top) &&
	    (o->dry_run || access(top, F_OK) == 0))
		r = spawn_ml_add(l, SPAWN_MNT_HIDE_DIR, strdup(top), true);
	for (li = 0; r == 0 && li < 2; li++) {
		for (i = 0; r == 0 && lists[li][i] != NULL; i++) {
			snprintf(path, sizeof(path), "%s/%s", home,
			    lists[li][i]);
			snprintf(backing, sizeof(backing), "%s/%s",
			    dir != NULL ? dir : root, lists[li][i]);
			c = spawn_ml_covering(l, path);
			/* the user's own --ro/--rw/--hide, a hidden or fresh
			 * place above, a path that cannot be a directory:
			 * leave it as it is */
			if (spawn_ml_has(l, path) || (c != NULL &&
			    (!c->implicit || c->kind == SPAWN_MNT_HIDE_DIR ||
			    c->kind == SPAWN_MNT_TMPFS)))
				continue;
			free(missing_parent(home, path, &bad));
			if (!bad && spawn_cache_wanted(home, lists[li][i]))
				r = add_cache(l, o, mode, path, backing,
				    li == 1, err, errlen);
		}
	}
	if (r == 0)
		r = host_entries(l, home, first);
	free(dir);
	free(root);
	free(top);
	if (r == -1 && err[0] == '\0')
		gk_seterr(err, errlen, "out of memory");
	return r;
}

/* The fresh tmpfs of the sandbox's own that path is in, or NULL: no
 * cache is bound there (spawn_cache_mounts() leaves it alone). */
static const char *
fresh_place(const char *path)
{
	static const char *const fresh[] = { "/tmp", "/run", "/var/run",
	    "/dev", NULL };
	size_t i;

	for (i = 0; fresh[i] != NULL; i++)
		if (spawn_path_under(path, fresh[i]))
			return fresh[i];
	return NULL;
}

/*
 * gk-run --cache-dir: the host directory DIR holding the tool caches
 * these options give the sandbox (--cache, --cwd, --fs), so that a
 * cache's ~/REL inside (~/.npm/_logs/...) is DIR/REL on the host. Made
 * by the first run; nothing is made here. 0 (printed on stdout), or 1
 * (on stderr, why there is none).
 */
int
spawn_cache_dir_print(const struct spawn_opts *o)
{
	struct spawn_opts dry = *o;
	char err[SPAWN_ERRLEN], *home, *cwd = NULL, *root = NULL, *top = NULL;
	char *dir = NULL;
	enum spawn_cache mode = o->cache;
	int rc = 1;

	dry.dry_run = true;	/* cache_dir() makes nothing */
	err[0] = '\0';
	if ((home = spawn_home()) == NULL || strcmp(home, "/") == 0)
		gk_seterr(err, sizeof(err), "no home directory: no tool "
		    "caches");
	else if (o->fs != SPAWN_FS_SANDBOX ||
	    o->platform != SPAWN_PLATFORM_LINUX)
		dir = strdup(home);	/* the host's own, at their places */
	else if (fresh_place(home))
		gk_seterr(err, sizeof(err), "the home directory %s is in the "
		    "sandbox's own fresh %s: the caches there are new each "
		    "run; nothing is kept on the host", home, fresh_place(home));
	else if (mode == SPAWN_CACHE_HOST)
		dir = strdup(home);
	else if (mode == SPAWN_CACHE_TMP)
		gk_seterr(err, sizeof(err), "--cache tmp: the caches are a "
		    "fresh tmpfs each run, gone at its end; nothing is kept "
		    "on the host");
	else if ((cwd = spawn_resolve_cwd(o->cwd, err, sizeof(err))) !=
	    NULL && (root = private_root(home, &top)) != NULL)
		(void)cache_dir(&dry, root, cwd, &mode, &dir, err,
		    sizeof(err));
	if (dir != NULL) {
		printf("%s\n", dir);
		if (access(dir, F_OK) == -1)
			fprintf(stderr, "gk-run: --cache-dir: no run has made "
			    "it yet\n");
		rc = 0;
	} else
		fprintf(stderr, "gk-run: --cache-dir: %s\n", err[0] != '\0' ?
		    err : "out of memory");
	free(dir);
	free(root);
	free(top);
	free(cwd);
	free(home);
	return rc;
}
