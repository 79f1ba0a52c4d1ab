/*
 * Which tool caches get a mount point: those of tools this host or this
 * project uses.
 *
 * A cache the host lacks needs a mount point, and a mount point the host
 * lacks needs its nearest existing parent shown as a SYNTH (spawn_cache.c):
 * a tmpfs with every entry of the host directory bound on it again, one
 * mount each. For a home of fifty entries that is fifty mounts on every
 * start, paid for tools that are not there. So a cache place the host
 * lacks is set up only when something says the tool is used: the tool's
 * own directory in $HOME (~/.cargo, ~/go, ~/.gradle, ...), the place's
 * private directory holding what an earlier run wrote, one of its programs on PATH, or
 * one of its files in the working directory (go.mod, yarn.lock, ...).
 * A place the host has is always bound: that costs one mount.
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
	const char	*files[6];	/* in the working directory */
};

static const struct want wants[] = {
	{ ".npm", ".npm", { "npm", "npx", "node" }, { "package.json" } },
	{ ".cargo/registry", ".cargo", { "cargo" }, { "Cargo.toml" } },
	{ ".cargo/git", ".cargo", { "cargo" }, { "Cargo.toml" } },
	{ "go/pkg/mod", "go", { "go" }, { "go.mod" } },
	{ ".m2/repository", ".m2", { "mvn" }, { "pom.xml", "mvnw" } },
	{ ".gradle/caches", ".gradle", { "gradle" }, { "gradlew",
	    "build.gradle", "build.gradle.kts", "settings.gradle",
	    "settings.gradle.kts" } },
	{ ".gradle/wrapper", ".gradle", { "gradle" }, { "gradlew",
	    "build.gradle", "build.gradle.kts", "settings.gradle",
	    "settings.gradle.kts" } },
	{ ".yarn/berry", ".yarn", { "yarn", "yarnpkg" }, { "yarn.lock",
	    ".yarnrc.yml" } },
	{ ".local/share/pnpm", ".local/share/pnpm", { "pnpm" },
	    { "pnpm-lock.yaml", "pnpm-workspace.yaml" } },
	{ ".bun/install/cache", ".bun", { "bun" }, { "bun.lockb",
	    "bun.lock", "bunfig.toml" } },
	{ ".local/lib", ".local/lib", { "pip", "pip3", "python3", "python" },
	    { "requirements.txt", "pyproject.toml", "setup.py" } },
	{ ".local/bin", ".local/bin", { "pip", "pip3", "python3", "python" },
	    { "requirements.txt", "pyproject.toml", "setup.py" } },
};

static bool
exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return snprintf(p, sizeof(p), "%s/%s", dir, name) < (int)sizeof(p) &&
	    lstat(p, &st) == 0;
}

/* Is prog an executable in a directory of PATH? */
static bool
on_path(const char *prog)
{
	const char *path = getenv("PATH"), *s, *e;
	char p[PATH_MAX];
	int n;

	for (s = path; s != NULL && *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = s + strcspn(s, ":");
		n = snprintf(p, sizeof(p), "%.*s/%s", (int)(e - s), s, prog);
		if (e > s && *s == '/' && n < (int)sizeof(p) &&
		    access(p, X_OK) == 0)
			return true;
	}
	return false;
}

bool
spawn_cache_wanted(const char *home, const char *rel, const char *backing,
    const char *cwd)
{
	const struct want *w = NULL;
	size_t i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]) && w == NULL; i++)
		if (strcmp(wants[i].rel, rel) == 0)
			w = &wants[i];
	if (w == NULL || exists(home, rel) || exists(home, w->own) ||
	    (backing != NULL && exists(backing, ".") &&
	    !spawn_dir_empty(backing)))
		return true;
	for (i = 0; i < 6 && cwd != NULL && w->files[i] != NULL; i++)
		if (exists(cwd, w->files[i]))
			return true;
	for (i = 0; i < 4 && w->progs[i] != NULL; i++)
		if (on_path(w->progs[i]))
			return true;
	return false;
}
