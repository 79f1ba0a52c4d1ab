/*
 * --learn FILE's end (spawn_learn.c): the command to run next is the
 * command line as given with --learn FILE replaced by --allow-file FILE
 * (every other option kept, the command untouched), and the counts say
 * "1 entry", "2 entries", in the file's header and on stderr.
 */
#include <sys/stat.h>

#include <fcntl.h>
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

static void
test_next(void **state)
{
	static const struct {
		const char	*argv[12];
		const char	*file;
		const char	*want;
	} cases[] = {
		{ { "gk-run", "--learn", "deps.allow", "--", "npm", "ci" },
		    "deps.allow", "gk-run --allow-file deps.allow -- npm ci" },
		/* the other options kept, in their places */
		{ { "./gk-run", "--ro", "/x", "--learn=deps.allow", "-q",
		    "--preset", "npm", "--", "sh", "-c", "echo a b" },
		    "deps.allow", "./gk-run --ro /x --allow-file deps.allow -q "
		    "--preset npm -- sh -c 'echo a b'" },
		/* an abbreviation getopt_long took; no "--" */
		{ { "gk-run", "--lear", "f", "-a", "a.example", "curl",
		    "https://x/" }, "f",
		    "gk-run --allow-file f -a a.example curl https://x/" },
		/* an option's value that reads "--learn", and the command's
		 * own --learn, stay */
		{ { "gk-run", "--env", "--learn", "--learn", "f", "--", "x",
		    "--learn", "y" }, "f",
		    "gk-run --env --learn --allow-file f -- x --learn y" },
		/* short options bundled, one taking the next word */
		{ { "gk-run", "-qva", "a.example", "--learn", "f", "--",
		    "true" }, "f",
		    "gk-run -qva a.example --allow-file f -- true" },
		{ { "gk-run", "--learn", "my deps.allow", "--", "true" },
		    "my deps.allow",
		    "gk-run --allow-file 'my deps.allow' -- true" },
	};
	char *line;
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (n = 0; n < 12 && cases[i].argv[n] != NULL; n++)
			;
		line = spawn_learn_next(n, (char *const *)cases[i].argv,
		    cases[i].file);
		assert_non_null(line);
		if (strcmp(line, cases[i].want) != 0)
			fail_msg("case %zu: '%s', expected '%s'", i, line,
			    cases[i].want);
		free(line);
	}
}

/* What spawn_learn_write wrote to FILE and said on stderr. */
static void
write_learned(const char *dir, const char *const *hosts, size_t n,
    char *file, size_t filelen, char *said, size_t saidlen)
{
	static const char *const argv[] = { "gk-run", "--learn", "l.allow",
	    "--", "curl", "https://a.example/" };
	struct spawn_hostfile h = { .dirfd = -1, .fd = -1 };
	struct spawn_strv learned = { 0 };
	char err[SPAWN_ERRLEN], path[512];
	int fd, saved;
	ssize_t r;
	size_t i;

	for (i = 0; i < n; i++)
		spawn_strv_push(&learned, hosts[i]);
	assert_int_equal(chdir(dir), 0);
	if (spawn_hostfile_open(&h, "--learn", "l.allow", true, err,
	    sizeof(err)) == -1)
		fail_msg("%s", err);
	snprintf(path, sizeof(path), "%s/said", dir);
	assert_true((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_int_equal(dup2(fd, 2), 2);
	spawn_learn_write(&h, &learned, false, (char *const *)argv + 4, 2,
	    (char *const *)argv, 6);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_true((r = pread(fd, said, saidlen - 1, 0)) >= 0);
	said[r] = '\0';
	close(fd);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/l.allow", dir);
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_true((r = read(fd, file, filelen - 1)) >= 0);
	file[r] = '\0';
	close(fd);
	assert_int_equal(unlink(path), 0);
	spawn_hostfile_close(&h);
	spawn_strv_clear(&learned);
}

static void
test_write(void **state)
{
	static const char *const one[] = { "a.example\t443" };
	static const char *const two[] = { "a.example\t443", "b.example\t0" };
	char dir[] = "/tmp/gk-learn-test.XXXXXX", file[1024], said[1024];

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_learned(dir, one, 1, file, sizeof(file), said, sizeof(said));
	assert_non_null(strstr(file, "\n# 1 entry; use with: gk-run "
	    "--allow-file l.allow -- ...\na.example:443\n"));
	assert_string_equal(said, "gk-run: --learn: 1 entry written to "
	    "l.allow; run next: gk-run --allow-file l.allow -- curl "
	    "https://a.example/\n");
	write_learned(dir, two, 2, file, sizeof(file), said, sizeof(said));
	assert_non_null(strstr(file, "\n# 2 entries; use with: gk-run "
	    "--allow-file l.allow -- ...\na.example:443\nb.example\n"));
	assert_non_null(strstr(said, "gk-run: --learn: 2 entries written "
	    "to l.allow; run next: "));
	write_learned(dir, NULL, 0, file, sizeof(file), said, sizeof(said));
	assert_non_null(strstr(file, "\n# 0 entries; "));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
