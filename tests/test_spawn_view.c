/*
 * The view gk-run's child makes before bwrap (spawn_view.c): which plans
 * it takes, and one made for real in a child process's own user and
 * mount namespace, entered and looked at from inside: read-only and
 * writable binds, a hidden directory (empty, read-only), a file of text,
 * a tmpfs standing for a directory with an entry bound on it and a
 * link, a bind at a path made for it there, a fresh /tmp with nothing
 * left of the scratch, the host's / read-only. Skipped where user namespaces cannot be made.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawner/spawn_int.h"
#include "tests/spawn_testutil.h"

#define M(k, p)		{ .kind = (k), .path = (char *)(p), .fd = -1 }

static void
test_wanted(void **state)
{
	struct spawn_mount base[] = { M(SPAWN_MNT_RO, "/"),
	    M(SPAWN_MNT_DEV, "/dev"), M(SPAWN_MNT_PROC, "/proc"),
	    M(SPAWN_MNT_TMPFS, "/tmp"), M(SPAWN_MNT_RW, "/var/tmp/p") };
	struct spawn_plan p = { .fs = SPAWN_FS_SANDBOX, .mounts = base,
	    .nmounts = 5 };

	(void)state;
	unsetenv("GK_RUN_VIEW");
	assert_true(spawn_view_wanted(&p));
	setenv("GK_RUN_VIEW", "bwrap", 1);
	assert_false(spawn_view_wanted(&p));
	unsetenv("GK_RUN_VIEW");
	/* a mount under /dev or /proc: bwrap's, in its order */
	base[4].path = (char *)"/dev/shm";
	assert_false(spawn_view_wanted(&p));
	base[4].path = (char *)"/proc/sys/kernel";
	assert_false(spawn_view_wanted(&p));
	base[4].path = (char *)"/var/tmp/p";
	/* no mount over /tmp to hide the scratch under */
	p.nmounts = 3;
	assert_false(spawn_view_wanted(&p));
	p.nmounts = 5;
	/* --fs host */
	p.fs = SPAWN_FS_HOST;
	assert_false(spawn_view_wanted(&p));
	p.fs = SPAWN_FS_SANDBOX;
	base[0].kind = SPAWN_MNT_RW;
	assert_false(spawn_view_wanted(&p));
}

static void
put(const char *dir, const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static bool
reads(const char *path, const char *want)
{
	char buf[256];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n >= 0 && strcmp(buf, want) == 0;
}

static bool
write_fails(const char *path, int err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (fd != -1)
		close(fd);
	return fd == -1 && errno == err;
}

static bool
empty_dir(const char *path)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "[ -d '%s' ] && [ -z \"$(ls -A '%s')\" ]",
	    path, path);
	return system(cmd) == 0;
}

/* What the child checks from inside; its exit status names the first
 * failed check (0: all held). */
static int
inside(const char *d)
{
	char p[512];
	struct stat st;

#define AT(rel)	(snprintf(p, sizeof(p), "%s/%s", d, rel), p)
	if (!reads(AT("ro/f"), "ro") || !write_fails(AT("ro/f"), EROFS))
		return 10;
	if (!reads(AT("rw/f"), "rw"))
		return 11;
	put(d, "rw/new", "w");
	if (!empty_dir(AT("secret")) || !write_fails(AT("secret/x"), EROFS))
		return 12;
	if (!reads(AT("data.txt"), "text\n") ||
	    !write_fails(AT("data.txt"), EROFS))
		return 13;
	if (!reads(AT("synth/entry"), "e") ||
	    !write_fails(AT("synth/entry"), EROFS))
		return 14;
	if (lstat(AT("synth/link"), &st) == -1 || !S_ISLNK(st.st_mode))
		return 15;
	put(d, "synth/vanishes", "v");		/* the tmpfs is writable */
	if (!empty_dir("/tmp"))
		return 16;
	if (!write_fails("/etc/gk-view-test", EROFS) ||
	    !write_fails(AT("host-file"), EROFS))
		return 17;
	if (stat("/dev/null", &st) == -1 || !S_ISCHR(st.st_mode))
		return 18;
	if (!reads(AT("synth/deep/a/mp/f"), "ro"))
		return 19;
	return 0;
#undef AT
}

static void
test_build(void **state)
{
	char d[256], path[600], err[SPAWN_ERRLEN];
	struct spawn_mount m[] = {
		M(SPAWN_MNT_RO, "/"), M(SPAWN_MNT_DEV, "/dev"),
		M(SPAWN_MNT_PROC, "/proc"), M(SPAWN_MNT_TMPFS, "/tmp"),
		M(SPAWN_MNT_RO, NULL), M(SPAWN_MNT_RW, NULL),
		M(SPAWN_MNT_HIDE_DIR, NULL), M(SPAWN_MNT_DATA, NULL),
		M(SPAWN_MNT_SYNTH, NULL), M(SPAWN_MNT_RO, NULL),
		M(SPAWN_MNT_SYMLINK, NULL), M(SPAWN_MNT_BIND, NULL),
	};
	const char *rel[] = { NULL, NULL, NULL, NULL, "ro", "rw", "secret",
	    "data.txt", "synth", "synth/entry", "synth/link",
	    "synth/deep/a/mp" };
	const char *dirs[] = { "ro", "rw", "secret", "synth" };
	struct spawn_plan p = { .fs = SPAWN_FS_SANDBOX, .mounts = m,
	    .nmounts = 12 };
	char *paths[12] = { NULL };
	int status, root, i;
	pid_t pid;

	(void)state;
	spawn_test_home("gk-view-test", d, sizeof(d));
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", d, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	put(d, "ro/f", "ro");
	put(d, "rw/f", "rw");
	put(d, "secret/key", "k");
	put(d, "data.txt", "host's");
	put(d, "synth/entry", "e");
	put(d, "host-file", "h");
	for (i = 4; i < 12; i++) {
		assert_true(asprintf(&paths[i], "%s/%s", d, rel[i]) > 0);
		m[i].path = paths[i];
	}
	m[7].fd = spawn_memfd_data("gk-view-test", "text\n", 5);
	assert_true(m[7].fd >= 0);
	m[10].src = (char *)"entry";
	m[11].src = paths[4];			/* "ro", at a missing path */
	unsetenv("GK_RUN_VIEW");
	assert_true(spawn_view_wanted(&p));
	if ((pid = fork()) == 0) {
		if (spawn_netns_make(CLONE_NEWNS, err, sizeof(err)) == -1)
			_exit(77);
		if ((root = spawn_view_build(&p, err, sizeof(err))) < 0) {
			fprintf(stderr, "%s\n", err);
			_exit(root == -2 ? 77 : 2);
		}
		if (spawn_view_enter(root, err, sizeof(err)) == -1)
			_exit(3);
		_exit(inside(d));
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		fprintf(stderr, "skipped: no user namespace or mount API\n");
	else
		assert_int_equal(WEXITSTATUS(status), 0);
	/* the host: the writable bind wrote through, nothing else did */
	snprintf(path, sizeof(path), "%s/rw/new", d);
	assert_true(WEXITSTATUS(status) == 77 || access(path, F_OK) == 0);
	snprintf(path, sizeof(path), "%s/synth/vanishes", d);
	assert_int_equal(access(path, F_OK), -1);
	assert_true(reads(paths[7], "host's"));
	close(m[7].fd);
	for (i = 4; i < 12; i++)
		free(paths[i]);
	spawn_test_home_remove(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
