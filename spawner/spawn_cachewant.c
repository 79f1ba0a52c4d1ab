/*
 * Which tool caches get a mount point: those of tools this host or this
 * project uses.
 *
 * A cache the host lacks needs a mount point, and a mount point the host
 * lacks needs its nearest existing parent shown as a SYNTH (spawn_cache.c):
 * a tmpfs with every entry of the host directory bound on it again, one
 * mount each. For a home of fifty entries that is fifty mounts on every
 * start, paid for tools that are not there. So a cache place the host
 * lacks is set up only when the host says the tool is used: the tool's
 * own directory in $HOME (~/.cargo, ~/go, ~/.gradle, ...) or one of its
 * programs on PATH. Never from what the sandbox could have written (a
 * go.mod in the project, an earlier run's files in the private cache):
 * nothing the sandbox writes decides a mount. A place the host has is
 * always bound: that costs one mount.
 *
 * What a run writes to a place left out stays where it would be without
 * gk-run's caches: in the read-only home, or on the SYNTH another place
 * needed (gone at exit).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

struct want {
	const char	*rel;		/* the place, under $HOME */
	const char	*own;		/* the tool's own directory there */
	const char	*progs[4];	/* on PATH */
};

static const struct want wants[] = {
	{ ".npm", ".npm", { "npm", "npx", "node" } },
	{ ".cargo/registry", ".cargo", { "cargo" } },
	{ ".cargo/git", ".cargo", { "cargo" } },
	{ "go/pkg/mod", "go", { "go" } },
	{ ".m2/repository", ".m2", { "mvn" } },
	{ ".gradle/caches", ".gradle", { "gradle" } },
	{ ".gradle/wrapper", ".gradle", { "gradle" } },
	{ ".yarn/berry", ".yarn", { "yarn", "yarnpkg" } },
	{ ".local/share/pnpm", ".local/share/pnpm", { "pnpm" } },
	{ ".bun/install/cache", ".bun", { "bun" } },
	{ ".local/lib", ".local/lib", { "pip", "pip3", "python3", "python" } },
	{ ".local/bin", ".local/bin", { "pip", "pip3", "python3", "python" } },
};

static bool
exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return snprintf(p, sizeof(p), "%s/%s", dir, name) < (int)sizeof(p) &&
	    lstat(p, &st) == 0;
}

#define PATH_DIRS_MAX	64

/* PATH's directories, opened once (O_PATH): a name is then looked up in
 * each without walking the directory's own path again. */
static struct {
	int	 fd[PATH_DIRS_MAX];
	size_t	 n;
	char	*path;		/* the PATH they are of */
} dirs;

/* The directories of PATH as it is now (again if it changed). */
static void
path_dirs(const char *path)
{
	const char *s, *e;
	char p[PATH_MAX];
	int fd;

	while (dirs.n > 0)
		close(dirs.fd[--dirs.n]);
	free(dirs.path);
	if ((dirs.path = strdup(path)) == NULL)
		return;
	for (s = path; *s != '\0' && dirs.n < PATH_DIRS_MAX;
	    s = *e != '\0' ? e + 1 : e) {
		e = s + strcspn(s, ":");
		if (e > s && *s == '/' && (size_t)(e - s) < sizeof(p)) {
			snprintf(p, sizeof(p), "%.*s", (int)(e - s), s);
			if ((fd = open(p, O_PATH | O_DIRECTORY |
			    O_CLOEXEC)) != -1)
				dirs.fd[dirs.n++] = fd;
		}
	}
}

/* Is prog an executable in a directory of PATH? */
static bool
on_path(const char *prog)
{
	const char *path = getenv("PATH");
	size_t i;

	if (path == NULL)
		return false;
	if (dirs.path == NULL || strcmp(dirs.path, path) != 0)
		path_dirs(path);
	for (i = 0; i < dirs.n; i++)
		if (faccessat(dirs.fd[i], prog, X_OK, 0) == 0)
			return true;
	return false;
}

bool
spawn_cache_wanted(const char *home, const char *rel)
{
	const struct want *w = NULL;
	size_t i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]) && w == NULL; i++)
		if (strcmp(wants[i].rel, rel) == 0)
			w = &wants[i];
	if (w == NULL || exists(home, rel) || exists(home, w->own))
		return true;
	for (i = 0; i < 4 && w->progs[i] != NULL; i++)
		if (on_path(w->progs[i]))
			return true;
	return false;
}
