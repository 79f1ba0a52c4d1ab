/*
 * spawn_view: the sandbox's filesystem view, made by gk-run's child with
 * the kernel's mount API before bwrap starts; bwrap then binds it whole.
 *
 * bwrap makes each bind mount with mount(2) and then reads the whole
 * mount table (/proc/self/mountinfo) to fix the flags of what it bound:
 * a view of 60 mounts read a table of some 150 lines 60 times, 15-20 ms
 * of a start. Here each mount is a clone of the host's tree (open_tree),
 * its flags set in one call for the whole subtree (mount_setattr) and
 * moved into place (move_mount): some 20 microseconds each, whatever
 * the table holds.
 *
 * The child unshares a mount namespace with its user namespace (so no
 * mount here is ever seen by the host), clones the host's / recursively,
 * read-only, nosuid, nodev (/dev keeps its devices for bwrap's --dev,
 * /proc stays writable for bwrap's uid map), and attaches that tree over
 * its own /. Its root stays the host's: paths it resolves (the sources
 * of the binds, the keeper's work at the end) are the host's, while the
 * tree is reached by its fd only. Then, in the plan's order (parents
 * first, as bwrap would have taken them):
 *   RO, RW, BIND  a recursive clone of the source, read-only (RO) or
 *                 not, nosuid and nodev, moved onto the path in the tree;
 *   TMPFS, SYNTH, HIDE_DIR
 *                 a fresh tmpfs (mode 0755, nosuid, nodev); a HIDE_DIR
 *                 is made read-only once everything is mounted (as
 *                 bwrap's --remount-ro, after the mounts inside it);
 *   DATA, HIDE_FILE
 *                 the text written to a file of a scratch tmpfs (mode
 *                 0600, as bwrap's --ro-bind-data), that file bound
 *                 read-only onto the path, its name then removed: the
 *                 scratch sits under the tree's /tmp, which the plan
 *                 always mounts over, and is left empty;
 *   SYMLINK       the link made in the tree (on a SYNTH).
 * A missing mount point is made as bwrap makes it (directories 0755,
 * files 0444, parents too), resolved inside the tree (RESOLVE_IN_ROOT):
 * a link there never leads out of it. The plan's /dev and /proc stay
 * bwrap's --proc; /dev is made here as bwrap's --dev makes it, and bound
 * whole. What needs the cage (resolv.conf, the trust bundles, mode 0444)
 * comes once gatekeeperd has made it (spawn_view_file), on the same
 * scratch, before the view is entered.
 *
 * The bwrap process, once forked, enters the tree (spawn_view_enter:
 * chroot to it) and runs bwrap with --bind / /, --dev-bind /dev /dev and
 * no other mount but those. A kernel without the API (before 5.12) or a plan of another
 * shape (--fs host) leaves the view to bwrap, as before; so does
 * GK_RUN_VIEW=bwrap in the environment.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define SETUP_ATTRS	(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define DATA_CHUNK	65536

struct view {
	const struct spawn_plan *p;
	int		 root;		/* the tree */
	int		 scratch;	/* the data files' tmpfs, or -1 */
	mode_t		 mode;		/* a data file's: 0600, as bwrap's */
	int		*hides;		/* HIDE_DIR tmpfs, made read-only last */
	size_t		 nhides;
	char		*err;
	size_t		 errlen;
};

/* ---- the calls --------------------------------------------------------- */

static int
open_tree_(int dfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int
move_mount_(int from, int to)
{
	return (int)syscall(SYS_move_mount, from, "", to, "",
	    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* Flags set and cleared on fd's mount (and below it: recursive). */
static int
setattr_(int fd, uint64_t set, uint64_t clr, bool recursive)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };

	return (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH |
	    (recursive ? AT_RECURSIVE : 0), &a, sizeof(a));
}

/* A fresh fs of type with options key=val..., detached: its fd, or -1. */
static int
fs_new(const char *type, const char *const *opts, unsigned int attrs)
{
	int fs, m = -1, r = 0;

	if ((fs = (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC)) == -1)
		return -1;
	for (; r == 0 && opts[0] != NULL; opts += 2)
		r = (int)syscall(SYS_fsconfig, fs, opts[1] != NULL ?
		    FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, opts[0], opts[1],
		    0);
	if (r == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL,
	    NULL, 0) == 0)
		m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	close(fs);
	return m;
}

/* A fresh tmpfs, mode 0755: bwrap's --tmpfs. */
static int
tmpfs_new(unsigned int attrs)
{
	static const char *const opts[] = { "mode", "0755", NULL, NULL };

	return fs_new("tmpfs", opts, attrs);
}

/* A devpts of its own: bwrap's --dev's. */
static int
devpts_new(void)
{
	static const char *const opts[] = { "newinstance", NULL,
	    "ptmxmode", "0666", "mode", "620", NULL, NULL };

	return fs_new("devpts", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
}

/* rel (no leading '/'; "" is the root) opened inside the tree. */
static int
in_tree(const struct view *v, const char *rel, int flags)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

	return (int)syscall(SYS_openat2, v->root, *rel == '\0' ? "." : rel,
	    &how, sizeof(how));
}

static int
fail(struct view *v, const char *path, const char *what)
{
	char show[256];

	gk_seterr(v->err, v->errlen, "cannot make the sandbox's view: %s: "
	    "%s: %s", spawn_printable(path, show, sizeof(show)), what,
	    strerror(errno));
	return -1;
}

/* ---- mount points -------------------------------------------------------- */

/* The directory rel is in, opened inside the tree (O_PATH), and rel's
 * last component in *base; -1 with errno. */
static int
in_parent(struct view *v, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char parent[PATH_MAX];

	snprintf(parent, sizeof(parent), "%.*s", slash != NULL ?
	    (int)(slash - rel) : 0, rel);
	*base = slash != NULL ? slash + 1 : rel;
	return in_tree(v, parent, O_PATH | O_DIRECTORY);
}

/* rel made in the tree: a directory (0755) or an empty file (0444), as
 * bwrap makes them; there already is fine. */
static int
make_in(struct view *v, const char *rel, bool dir)
{
	const char *base;
	int dfd, r;

	if ((dfd = in_parent(v, rel, &base)) == -1)
		return -1;
	if (dir)
		r = mkdirat(dfd, base, 0755);
	else if ((r = openat(dfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0444)) != -1)
		r = close(r);
	close(dfd);
	return r == -1 && errno != EEXIST ? -1 : 0;
}

/* The directories above rel, made where missing. */
static int
parents(struct view *v, const char *rel)
{
	char buf[PATH_MAX], *s;
	int fd;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (s = strchr(buf, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		if ((fd = in_tree(v, buf, O_PATH | O_DIRECTORY)) != -1)
			close(fd);
		else if (errno != ENOENT || make_in(v, buf, true) == -1)
			return -1;
		*s = '/';
	}
	return 0;
}

/* The mount point rel in the tree (made if missing), as an O_PATH fd;
 * -1 with errno. */
static int
mount_point(struct view *v, const char *rel, bool dir)
{
	int fd;

	if ((fd = in_tree(v, rel, O_PATH)) != -1 || errno != ENOENT)
		return fd;
	/* its directory is there, mostly: the walk from the top only when
	 * it is not */
	if (make_in(v, rel, dir) == -1 && (errno != ENOENT ||
	    parents(v, rel) == -1 || make_in(v, rel, dir) == -1))
		return -1;
	return in_tree(v, rel, O_PATH);
}

/* Mount src (a detached mount) at path in the tree; src is closed. */
static int
place(struct view *v, int src, const char *path)
{
	struct stat st;
	int t, r;

	if (fstat(src, &st) == -1 ||
	    (t = mount_point(v, path + 1, S_ISDIR(st.st_mode))) == -1) {
		close(src);
		return fail(v, path, "its mount point");
	}
	r = move_mount_(src, t);
	close(t);
	close(src);
	return r == -1 ? fail(v, path, "mount") : 0;
}

/* ---- the kinds ------------------------------------------------------------ */

/* A clone of the host's src (recursive), its flags set. */
static int
bind_from(struct view *v, const struct spawn_mount *m, const char *src,
    bool ro)
{
	int fd;

	if ((fd = open_tree_(AT_FDCWD, src, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_RECURSIVE)) == -1)
		return fail(v, src, "cannot bind it");
	if (setattr_(fd, SETUP_ATTRS | (ro ? MOUNT_ATTR_RDONLY : 0), 0,
	    true) == -1) {
		close(fd);
		return fail(v, m->path, "its flags");
	}
	return place(v, fd, m->path);
}

/*
 * A read-only bind of the file gk-run holds open (m->fd): cloned by the
 * path its fd has, then checked to be that very file (a mount cannot be
 * cloned from a descriptor of the host's namespace), as bwrap's
 * --ro-bind-fd does.
 */
static int
bind_fd(struct view *v, const struct spawn_mount *m)
{
	char proc[64], src[PATH_MAX];
	struct stat a, b;
	ssize_t n;
	int fd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", m->fd);
	if ((n = readlink(proc, src, sizeof(src) - 1)) <= 0 ||
	    fstat(m->fd, &a) == -1)
		return fail(v, m->path, "the file gk-run holds");
	src[n] = '\0';
	if ((fd = open_tree_(AT_FDCWD, src, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC)) == -1)
		return fail(v, src, "cannot bind it");
	if (fstat(fd, &b) == -1 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		close(fd);
		errno = ESTALE;
		return fail(v, m->path, "the file changed while bound");
	}
	if (setattr_(fd, SETUP_ATTRS | MOUNT_ATTR_RDONLY, 0, false) == -1) {
		close(fd);
		return fail(v, m->path, "its flags");
	}
	return place(v, fd, m->path);
}

static int
tmpfs_at(struct view *v, const struct spawn_mount *m)
{
	int fd, keep = -1;

	if ((fd = tmpfs_new(SETUP_ATTRS)) == -1)
		return fail(v, m->path, "a tmpfs");
	if (m->kind == SPAWN_MNT_HIDE_DIR &&
	    (keep = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		close(fd);
		return fail(v, m->path, "a tmpfs");
	}
	if (place(v, fd, m->path) == -1) {
		if (keep != -1)
			close(keep);
		return -1;
	}
	if (keep != -1)
		v->hides[v->nhides++] = keep;
	return 0;
}

/* m->fd's whole text into fd. */
static int
copy_data(int from, int to)
{
	char *buf;
	ssize_t n = 0, w;
	off_t off = 0;

	if ((buf = malloc(DATA_CHUNK)) == NULL)
		return -1;
	while ((n = pread(from, buf, DATA_CHUNK, off)) > 0) {
		for (w = 0; w < n; ) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));

			if (k <= 0) {
				free(buf);
				return -1;
			}
			w += k;
		}
		off += n;
	}
	free(buf);
	return n == 0 ? 0 : -1;
}

static int
data_at(struct view *v, const struct spawn_mount *m, size_t i)
{
	char name[32];
	int fd, r;

	snprintf(name, sizeof(name), "d%zu", i);
	if ((fd = openat(v->scratch, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, v->mode)) == -1 || fchmod(fd, v->mode) == -1)
		return fail(v, m->path, "its text");
	r = m->fd != -1 ? copy_data(m->fd, fd) : 0;
	if (close(fd) == -1 || r == -1)
		return fail(v, m->path, "its text");
	fd = open_tree_(v->scratch, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd == -1 || setattr_(fd, SETUP_ATTRS | MOUNT_ATTR_RDONLY, 0,
	    false) == -1) {
		if (fd != -1)
			close(fd);
		(void)unlinkat(v->scratch, name, 0);
		return fail(v, m->path, "its file");
	}
	r = place(v, fd, m->path);
	(void)unlinkat(v->scratch, name, 0);	/* the mount holds it */
	return r;
}

static int
symlink_at(struct view *v, const struct spawn_mount *m)
{
	const char *rel = m->path + 1, *base;
	int dfd, r;

	if (parents(v, rel) == -1 || (dfd = in_parent(v, rel, &base)) == -1)
		return fail(v, m->path, "its directory");
	r = symlinkat(m->src, dfd, base);
	close(dfd);
	return r == -1 && errno != EEXIST ? fail(v, m->path, "symlink") : 0;
}

/*
 * /dev as bwrap's --dev makes it: a tmpfs with the host's null, zero,
 * full, random, urandom and tty bound on it (devices allowed), the
 * stdio, fd and core links, shm, a devpts of its own with ptmx linked
 * to it, and the terminal of stdout as console when there is one.
 * bwrap binds it whole (--dev-bind), which keeps the devices usable.
 */
static int
dev_at(struct view *v, const struct spawn_mount *m)
{
	static const char *const nodes[] = { "null", "zero", "full",
	    "random", "urandom", "tty" };
	static const char *const links[][2] = { { "stdin", "/proc/self/fd/0" },
	    { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
	    { "fd", "/proc/self/fd" }, { "core", "/proc/kcore" },
	    { "ptmx", "pts/ptmx" } };
	char src[64], dst[PATH_MAX];
	const char *tty;
	size_t i;
	int fd, d, r = 0;

	if ((fd = tmpfs_new(MOUNT_ATTR_NOSUID)) == -1)
		return fail(v, m->path, "a tmpfs");
	if (place(v, fd, m->path) == -1)
		return -1;
	for (i = 0; r == 0 && i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
		if ((fd = open_tree_(AT_FDCWD, src, OPEN_TREE_CLONE |
		    OPEN_TREE_CLOEXEC)) == -1)
			return fail(v, src, "cannot bind it");
		if (setattr_(fd, MOUNT_ATTR_NOSUID, 0, false) == -1) {
			close(fd);
			return fail(v, src, "its flags");
		}
		snprintf(dst, sizeof(dst), "%s/%s", m->path, nodes[i]);
		r = place(v, fd, dst);
	}
	if (r == -1 || (d = in_tree(v, m->path + 1, O_PATH |
	    O_DIRECTORY)) == -1)
		return r == -1 ? -1 : fail(v, m->path, "the directory");
	for (i = 0; r == 0 && i < sizeof(links) / sizeof(links[0]); i++)
		r = symlinkat(links[i][1], d, links[i][0]);
	if (r == 0 && (mkdirat(d, "shm", 0755) == -1 ||
	    mkdirat(d, "pts", 0755) == -1))
		r = -1;
	close(d);
	if (r == -1)
		return fail(v, m->path, "its entries");
	snprintf(dst, sizeof(dst), "%s/pts", m->path);
	if ((fd = devpts_new()) == -1)
		return fail(v, dst, "a devpts");
	if (place(v, fd, dst) == -1)
		return -1;
	if (isatty(1) && (tty = ttyname(1)) != NULL && (fd = open_tree_(
	    AT_FDCWD, tty, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) != -1) {
		snprintf(dst, sizeof(dst), "%s/console", m->path);
		return place(v, fd, dst);
	}
	return 0;
}

static int
one(struct view *v, const struct spawn_mount *m, size_t i)
{
	switch (m->kind) {
	case SPAWN_MNT_RO:
		if (m->fd != -1)
			return bind_fd(v, m);
		return strcmp(m->path, "/") == 0 ? 0 : bind_from(v, m,
		    m->path, true);
	case SPAWN_MNT_RW:
		return bind_from(v, m, m->path, false);
	case SPAWN_MNT_BIND:
		return bind_from(v, m, m->src, false);
	case SPAWN_MNT_TMPFS:
	case SPAWN_MNT_SYNTH:
	case SPAWN_MNT_HIDE_DIR:
		return tmpfs_at(v, m);
	case SPAWN_MNT_HIDE_FILE:
	case SPAWN_MNT_DATA:
		return data_at(v, m, i);
	case SPAWN_MNT_SYMLINK:
		return symlink_at(v, m);
	case SPAWN_MNT_DEV:
		return dev_at(v, m);
	case SPAWN_MNT_PROC:
	case SPAWN_MNT_DEV_BIND:
		break;		/* bwrap's */
	}
	return 0;
}

/* ---- the tree ---------------------------------------------------------------- */

/* Can this plan's view be made here (else bwrap makes it)? */
bool
spawn_view_wanted(const struct spawn_plan *p)
{
	const char *e = getenv("GK_RUN_VIEW");
	bool tmp = false;
	size_t i;

	if ((e != NULL && strcmp(e, "bwrap") == 0) ||
	    p->fs != SPAWN_FS_SANDBOX || p->nmounts == 0 ||
	    p->mounts[0].kind != SPAWN_MNT_RO ||
	    strcmp(p->mounts[0].path, "/") != 0)
		return false;
	for (i = 1; i < p->nmounts; i++) {
		const struct spawn_mount *m = &p->mounts[i];

		if (m->kind == SPAWN_MNT_DEV_BIND ||
		    (spawn_path_under(m->path, "/dev") &&
		    m->kind != SPAWN_MNT_DEV) ||
		    (spawn_path_under(m->path, "/proc") &&
		    m->kind != SPAWN_MNT_PROC))
			return false;
		tmp |= strcmp(m->path, "/tmp") == 0;
	}
	return tmp;
}

/* /dev keeps its devices and /proc stays writable (bwrap's needs), where
 * each is a mount of its own. */
static int
base_flags(struct view *v)
{
	static const struct { const char *rel; uint64_t clr; } k[] = {
		{ "dev", MOUNT_ATTR_NODEV }, { "proc", MOUNT_ATTR_RDONLY },
	};
	struct stat top, st;
	size_t i;
	int fd, r;

	if (fstat(v->root, &top) == -1)
		return -1;
	for (i = 0; i < 2; i++) {
		if ((fd = in_tree(v, k[i].rel, O_PATH | O_DIRECTORY)) == -1)
			continue;
		r = fstat(fd, &st) == 0 && st.st_dev != top.st_dev ?
		    setattr_(fd, 0, k[i].clr, false) : 0;
		close(fd);
		if (r == -1)
			return -1;
	}
	return 0;
}

/* What failed on / says the kernel has no mount API (or may not use it
 * here): 0, bwrap makes the view; else -1 with err. */
static int
no_api(struct view *v, const char *what)
{
	if (errno == ENOSYS || errno == EINVAL || errno == EPERM)
		return 0;
	return fail(v, "/", what);
}

/*
 * The host's / cloned, read-only, attached over this process's /; the
 * scratch tmpfs on its /tmp. 1: done; 0: the kernel cannot (nothing
 * attached); -1 with err.
 */
static int
tree_start(struct view *v)
{
	int t;

	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == -1)
		return fail(v, "/", "its propagation");
	v->root = open_tree_(AT_FDCWD, "/", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (v->root == -1)
		return no_api(v, "cannot clone it");
	if (setattr_(v->root, SETUP_ATTRS | MOUNT_ATTR_RDONLY, 0, true) ==
	    -1) {
		t = no_api(v, "its flags");
		close(v->root);
		v->root = -1;
		return t;
	}
	if (syscall(SYS_move_mount, v->root, "", AT_FDCWD, "/",
	    MOVE_MOUNT_F_EMPTY_PATH) == -1)
		return fail(v, "/", "the tree");
	if (base_flags(v) == -1)
		return fail(v, "/dev and /proc", "their flags");
	if ((v->scratch = tmpfs_new(SETUP_ATTRS)) == -1 ||
	    (t = in_tree(v, "tmp", O_PATH | O_DIRECTORY)) == -1)
		return fail(v, "/tmp", "a tmpfs");
	if (move_mount_(v->scratch, t) == -1) {
		close(t);
		return fail(v, "/tmp", "mount");
	}
	close(t);
	return 1;
}

/* The scratch, kept for the files that need the cage (spawn_view_file)
 * until the view is entered. */
static int kept_scratch = -1;

int
spawn_view_build(const struct spawn_plan *p, char *err, size_t errlen)
{
	struct view v = { .p = p, .root = -1, .scratch = -1, .mode = 0600,
	    .err = err, .errlen = errlen };
	size_t i;
	int r;

	if ((v.hides = calloc(p->nmounts, sizeof(*v.hides))) == NULL)
		return gk_seterr(err, errlen, "out of memory");
	if ((r = tree_start(&v)) == 1)
		for (i = 1, r = 0; r == 0 && i < p->nmounts; i++)
			r = one(&v, &p->mounts[i], i);
	for (i = 0; i < v.nhides; i++) {
		if (r == 0 && setattr_(v.hides[i], MOUNT_ATTR_RDONLY, 0,
		    false) == -1)
			r = fail(&v, "a hidden directory", "read-only");
		close(v.hides[i]);
	}
	free(v.hides);
	if (r == 0 && v.root != -1) {
		kept_scratch = v.scratch;
		return v.root;
	}
	if (v.scratch != -1)
		close(v.scratch);
	if (v.root != -1)
		close(v.root);
	return r == 0 ? -2 : -1;
}

int
spawn_view_file(int root, const char *path, int fd, mode_t mode, char *err,
    size_t errlen)
{
	static size_t n;
	struct view v = { .root = root, .scratch = kept_scratch,
	    .mode = mode, .err = err, .errlen = errlen };
	struct spawn_mount m = { .kind = SPAWN_MNT_DATA, .path = (char *)path,
	    .fd = fd };

	if (kept_scratch == -1)
		return gk_seterr(err, errlen, "the sandbox's view is made");
	return data_at(&v, &m, 100000 + n++);
}

int
spawn_view_enter(int root, char *err, size_t errlen)
{
	if (kept_scratch != -1) {
		close(kept_scratch);
		kept_scratch = -1;
	}
	if (fchdir(root) == -1 || chroot(".") == -1 || chdir("/") == -1)
		return gk_seterr(err, errlen, "cannot enter the sandbox's "
		    "view: %s", strerror(errno));
	close(root);
	return 0;
}
