/*
 * The mount plan: order resolved paths so the most specific one wins,
 * settle duplicates, and answer "is this host path visible inside?".
 * Pure: paths were resolved (realpath) by the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"

size_t
spawn_path_depth(const char *p)
{
	size_t d = 0;

	for (; *p != '\0'; p++)
		if (*p == '/' && p[1] != '\0')
			d++;
	return d;
}

bool
spawn_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

static int
rank(const struct spawn_mount *m)
{
	if (m->forced)
		return 4;
	if (!m->implicit)
		return 3;
	return m->kind == SPAWN_MNT_RW || m->kind == SPAWN_MNT_BIND ? 2 : 1;
}

static const char *
opt_of(enum spawn_mnt k)
{
	switch (k) {
	case SPAWN_MNT_RO:
		return "--ro";
	case SPAWN_MNT_RW:
		return "--rw";
	case SPAWN_MNT_HIDE_DIR:
	case SPAWN_MNT_HIDE_FILE:
		return "--hide";
	case SPAWN_MNT_TMPFS:
	case SPAWN_MNT_DEV:
	case SPAWN_MNT_DEV_BIND:
	case SPAWN_MNT_PROC:
	case SPAWN_MNT_BIND:
	case SPAWN_MNT_SYNTH:
	case SPAWN_MNT_SYMLINK:
	case SPAWN_MNT_DATA:
		break;
	}
	return "(base)";
}

static bool
same_option(enum spawn_mnt a, enum spawn_mnt b)
{
	return strcmp(opt_of(a), opt_of(b)) == 0;
}

static int
check_explicit(const struct spawn_mount *m, char *err, size_t errlen)
{
	char show[256];

	if (m->implicit)
		return 0;
	if (strcmp(m->path, "/dev") == 0 || spawn_path_under(m->path, "/proc")) {
		gk_seterr(err, errlen, "%s %s: the sandbox has its own /dev "
		    "and /proc; they cannot be replaced", opt_of(m->kind),
		    spawn_printable(m->path, show, sizeof(show)));
		return -1;
	}
	return 0;
}

/* Merge m[i] into an earlier entry for the same path: 1 merged, 0 not. */
static int
merge(struct spawn_mount *m, size_t kept, struct spawn_mount *e, char *err,
    size_t errlen)
{
	char show[256];
	size_t j;

	for (j = 0; j < kept; j++) {
		if (strcmp(m[j].path, e->path) != 0)
			continue;
		if ((rank(e) == 4 && rank(&m[j]) == 3) ||
		    (rank(e) == 3 && rank(&m[j]) == 4)) {
			gk_seterr(err, errlen, "%s %s: that directory holds "
			    "gatekeeperd's control socket, which no sandbox may "
			    "reach; leave it out", opt_of(rank(e) == 3 ?
			    e->kind : m[j].kind), spawn_printable(e->path,
			    show, sizeof(show)));
			return -1;
		}
		if (rank(e) > rank(&m[j])) {
			m[j].kind = e->kind;
			m[j].implicit = e->implicit;
			m[j].forced = e->forced;
			m[j].placeholder = e->placeholder;
			m[j].place = e->place;
			m[j].gitdir = e->gitdir;
			m[j].fd = e->fd;
			free(m[j].src);
			m[j].src = e->src;
			e->src = NULL;
		} else if (rank(e) == 3 && !same_option(e->kind, m[j].kind)) {
			gk_seterr(err, errlen, "%s is given both with %s "
			    "and with %s; give one", spawn_printable(e->path,
			    show, sizeof(show)), opt_of(m[j].kind),
			    opt_of(e->kind));
			return -1;
		}
		free(e->path);
		free(e->src);
		e->path = e->src = NULL;
		return 1;
	}
	return 0;
}

int
spawn_mounts_sort(struct spawn_mount *m, size_t *n, char *err, size_t errlen)
{
	struct spawn_mount t;
	size_t i, j, kept = 0;
	int r;

	for (i = 0; i < *n; i++)
		if (check_explicit(&m[i], err, errlen) == -1)
			return -1;
	for (i = 0; i < *n; i++) {
		t = m[i];
		if ((r = merge(m, kept, &t, err, errlen)) == -1) {
			/* keep every path owned by exactly one entry */
			for (j = i; j < *n; j++)
				m[kept++] = m[j];
			*n = kept;
			return -1;
		}
		if (r == 0)
			m[kept++] = t;
	}
	*n = kept;
	/* stable insertion sort by depth */
	for (i = 1; i < kept; i++) {
		t = m[i];
		for (j = i; j > 0 && spawn_path_depth(m[j - 1].path) >
		    spawn_path_depth(t.path); j--)
			m[j] = m[j - 1];
		m[j] = t;
	}
	return 0;
}

/*
 * Each directory between top (a writable mount) and path's own becomes a
 * mount point of its own (a writable bind over itself): the sandbox
 * could otherwise rename a directory above a protected file away and
 * put one of its making, holding a file of that name, in its place for
 * the next run. 0 or -1 (out of memory).
 */
static int
pin_between(struct spawn_mount **m, size_t *n, const char *top,
    const char *path)
{
	struct spawn_mount *nm;
	size_t i, k, tl = strlen(top);
	bool have;

	for (k = tl + 1; path[k] != '\0'; k++) {
		if (path[k] != '/')
			continue;
		for (i = 0, have = false; i < *n && !have; i++)
			have = strncmp((*m)[i].path, path, k) == 0 &&
			    (*m)[i].path[k] == '\0';
		if (have)
			continue;
		if ((nm = reallocarray(*m, *n + 1, sizeof(*nm))) == NULL)
			return -1;
		*m = nm;
		memset(&nm[*n], 0, sizeof(nm[*n]));
		if ((nm[*n].path = strndup(path, k)) == NULL)
			return -1;
		nm[*n].kind = SPAWN_MNT_RW;
		nm[*n].fd = -1;
		nm[*n].implicit = true;
		(*n)++;
	}
	return 0;
}

int
spawn_mounts_protect(struct spawn_mount **m, size_t *n, const char *path,
    int fd, char *err, size_t errlen)
{
	const struct spawn_mount *last = NULL;
	struct spawn_mount *nm;
	const char *top;
	char show[256];
	size_t i;

	for (i = 0; i < *n; i++)
		if (spawn_path_under(path, (*m)[i].path))
			last = &(*m)[i];
	if (last == NULL || last->kind != SPAWN_MNT_RW)
		return 0;
	if (strcmp(last->path, path) == 0)
		return gk_seterr(err, errlen, "--rw %s: gk-run reads or writes "
		    "that file for you (an allow-file, --learn's or "
		    "--ask-save's); the sandbox may not write it",
		    spawn_printable(path, show, sizeof(show)));
	top = last->path;	/* its own string: the array moves below */
	if ((nm = reallocarray(*m, *n + 1, sizeof(*nm))) == NULL)
		goto nomem;
	*m = nm;
	memset(&nm[*n], 0, sizeof(nm[*n]));
	if ((nm[*n].path = strdup(path)) == NULL)
		goto nomem;
	nm[*n].kind = SPAWN_MNT_RO;
	nm[*n].fd = fd;
	nm[*n].implicit = true;
	(*n)++;
	if (pin_between(m, n, top, path) == -1)
		goto nomem;
	return spawn_mounts_sort(*m, n, err, errlen) == -1 ? -1 : 1;
nomem:
	return gk_seterr(err, errlen, "out of memory");
}

void
spawn_mounts_free(struct spawn_mount *m, size_t n)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(m[i].path);
		free(m[i].src);
	}
	free(m);
}

bool
spawn_path_visible(const struct spawn_plan *p, const char *path)
{
	const struct spawn_mount *last = NULL;
	size_t i;

	for (i = 0; i < p->nmounts; i++)
		if (spawn_path_under(path, p->mounts[i].path))
			last = &p->mounts[i];
	if (last == NULL)
		return false;
	switch (last->kind) {
	case SPAWN_MNT_RO:
	case SPAWN_MNT_RW:
	case SPAWN_MNT_DEV_BIND:
		return true;
	case SPAWN_MNT_BIND:		/* another directory's files */
		return true;
	case SPAWN_MNT_SYMLINK:		/* the link, not what it names */
	case SPAWN_MNT_SYNTH:		/* its entries are mounts of their own */
	case SPAWN_MNT_DATA:		/* gk-run's text, not the host's file */
	case SPAWN_MNT_HIDE_DIR:
	case SPAWN_MNT_HIDE_FILE:
	case SPAWN_MNT_TMPFS:
	case SPAWN_MNT_DEV:
	case SPAWN_MNT_PROC:
		break;
	}
	return false;
}

char *
spawn_path_host(const struct spawn_plan *p, const char *path)
{
	const struct spawn_mount *last = NULL;
	char *out;
	size_t i, n;

	for (i = 0; i < p->nmounts; i++)
		if (spawn_path_under(path, p->mounts[i].path))
			last = &p->mounts[i];
	if (last == NULL || last->kind != SPAWN_MNT_BIND || last->src == NULL)
		return strdup(path);
	n = strlen(last->path);
	if (asprintf(&out, "%s%s", last->src, path + (n == 1 ? 0 : n)) == -1)
		return NULL;
	return out;
}

char *
spawn_path_normalize(const char *cwd, const char *p)
{
	char *out, *o;
	const char *s, *e;
	size_t n, cap;
	int pass;

	cap = (p[0] == '/' ? 0 : strlen(cwd) + 1) + strlen(p) + 2;
	if ((out = malloc(cap)) == NULL)
		return NULL;
	o = out;
	*o = '\0';
	for (pass = p[0] == '/' ? 1 : 0; pass < 2; pass++) {
		for (s = pass == 0 ? cwd : p; *s != '\0'; s = e) {
			while (*s == '/')
				s++;
			for (e = s; *e != '\0' && *e != '/'; e++)
				;
			n = (size_t)(e - s);
			if (n == 0 || (n == 1 && s[0] == '.'))
				continue;
			if (n == 2 && s[0] == '.' && s[1] == '.') {
				while (o > out && *--o != '/')
					;
				*o = '\0';
				continue;
			}
			*o++ = '/';
			memcpy(o, s, n);
			o += n;
			*o = '\0';
		}
	}
	if (o == out)
		memcpy(out, "/", 2);
	return out;
}
