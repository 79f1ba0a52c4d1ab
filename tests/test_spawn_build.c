/*
 * gk-run's pure builders: the mount plan, the bwrap argv and its shell
 * rendering, the SBPL profile. Fixed plans (HOME /home/alice, cwd
 * /home/alice/proj) are compared with golden files in tests/data/spawn
 * and tests/data/sbpl; GK_UPDATE_GOLDEN=1 rewrites them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"
#include "tests/testdata.h"

#define GOLDEN_MAX	65536

static void
golden(const char *dir, const char *name, const char *got)
{
	static uint8_t want[GOLDEN_MAX];
	const char *src = getenv("GK_SRCDIR");
	char path[1024];
	size_t n, i;
	FILE *f;

	if (getenv("GK_UPDATE_GOLDEN") != NULL) {
		snprintf(path, sizeof(path), "%s/tests/data/%s/%s",
		    src != NULL ? src : ".", dir, name);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	n = test_data_load(dir, name, want, sizeof(want));
	want[n] = '\0';
	if (strcmp((char *)want, got) == 0)
		return;
	for (i = 0; want[i] == (uint8_t)got[i]; i++)
		;
	fail_msg("%s/%s differs at byte %zu:\n--- want\n%s\n--- got\n%s\n"
	    "(GK_UPDATE_GOLDEN=1 rewrites the golden file)", dir, name, i,
	    (char *)want, got);
}

/* ---- plans ------------------------------------------------------------- */

struct mspec {
	enum spawn_mnt	 kind;
	const char	*path;
	bool		 implicit;
	bool		 forced;
	bool		 keep;		/* a file gk-run keeps read-only (fd) */
};

#define BASE_SANDBOX							\
	{ SPAWN_MNT_RO, "/", true }, { SPAWN_MNT_DEV, "/dev", true },	\
	{ SPAWN_MNT_PROC, "/proc", true },				\
	{ SPAWN_MNT_TMPFS, "/tmp", true },				\
	{ SPAWN_MNT_RW, "/home/alice/proj", true }
#define BASE_HOST							\
	{ SPAWN_MNT_RW, "/", true },					\
	{ SPAWN_MNT_DEV_BIND, "/dev", true },				\
	{ SPAWN_MNT_PROC, "/proc", true }

/* The mounts of `spec`, unsorted (the caller frees them). */
static struct spawn_mount *
spec_mounts(const struct mspec *spec, size_t n)
{
	struct spawn_mount *m;
	size_t i;

	m = calloc(n, sizeof(*m));
	assert_non_null(m);
	for (i = 0; i < n; i++) {
		m[i].kind = spec[i].kind;
		m[i].path = strdup(spec[i].path);
		m[i].fd = spec[i].keep ? 0 : -1;
		m[i].implicit = spec[i].implicit;
		m[i].forced = spec[i].forced;
	}
	return m;
}

static size_t
mounts(const struct mspec *spec, size_t n, struct spawn_mount **out)
{
	char err[SPAWN_ERRLEN];
	struct spawn_mount *m = spec_mounts(spec, n);

	if (spawn_mounts_sort(m, &n, err, sizeof(err)) == -1)
		fail_msg("sort: %s", err);
	*out = m;
	return n;
}

/* Hidden and kept files get fds 3, 4, ... as --dry-run numbers them. */
static int
number_fds(struct spawn_plan *p, struct spawn_fdsrc *src)
{
	size_t i;
	int next = 3;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind != SPAWN_MNT_HIDE_FILE &&
		    (p->mounts[i].kind != SPAWN_MNT_RO ||
		    p->mounts[i].fd == -1))
			continue;
		src[next - 3] = (struct spawn_fdsrc){ next, NULL, 0, false,
		    p->mounts[i].kind == SPAWN_MNT_RO ? p->mounts[i].path :
		    NULL };
		p->mounts[i].fd = next++;
	}
	return next;
}

static char *const alice_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/alice",
	"LD_PRELOAD=/home/alice/hook.so", "TMPDIR=/var/tmp/alice",
	"LANG=C.UTF-8", "BASH_FUNC_ls%%=() {  rm -rf ~; }",
	"SSH_AUTH_SOCK=/run/user/1000/ssh", "http_proxy=http://corp:8080",
	"NOEQUALS", NULL,
};

static const uint8_t fake_bpf[] = {
	0x20, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,	/* ld arch */
	'%', '\'', '\\', '\n', '-', 0x7f, 0xff, 0x00,
};

struct gcase {
	const char		*name;
	enum spawn_net		 net;
	enum spawn_fs		 fs;
	enum spawn_seccomp	 seccomp;
	struct mspec		 m[16];
	size_t			 nm;
	const char		*envset[4];
	size_t			 nenvset;
	char			*cmd[8];
	int			 ncmd;
};

static const struct gcase gcases[] = {
	{ "none-default", SPAWN_NET_NONE, SPAWN_FS_SANDBOX,
	    SPAWN_SECCOMP_DEFAULT, { BASE_SANDBOX,
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/.aws", true },
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/.config/gcloud", true },
	    { SPAWN_MNT_HIDE_FILE, "/home/alice/.netrc", true },
	    { SPAWN_MNT_HIDE_DIR, "/run/user/1000", true } }, 10,
	    { NULL }, 0, { "make", "test", NULL }, 2 },
	{ "gated-paths", SPAWN_NET_GATED, SPAWN_FS_SANDBOX,
	    SPAWN_SECCOMP_RELAXED, { BASE_SANDBOX,
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/proj/secrets", false },
	    { SPAWN_MNT_RO, "/home/alice/proj/.git", false },
	    { SPAWN_MNT_RW, "/home/alice/.cache/pip", false },
	    { SPAWN_MNT_RO, "/tmp/shared data", false },
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
	    { SPAWN_MNT_RW, "/home/alice/.ssh", false },
	    { SPAWN_MNT_HIDE_DIR, "/run/gatekeeper", true, true } },
	    12, { "LD_PRELOAD=/opt/ok.so", "FOO=bar baz" }, 2,
	    { "git", "clone", "https://github.com/acme/hello.git", NULL },
	    3 },
	/* --allow-file and --learn in the working directory: bound
	 * read-only by fd over themselves */
	{ "gated-kept-files", SPAWN_NET_GATED, SPAWN_FS_SANDBOX,
	    SPAWN_SECCOMP_DEFAULT, { BASE_SANDBOX,
	    { SPAWN_MNT_RO, "/home/alice/proj/deps.allow", true, false, true },
	    { SPAWN_MNT_RO, "/home/alice/proj/ci/learned allow", true, false,
	    true },
	    { SPAWN_MNT_HIDE_FILE, "/home/alice/.netrc", true },
	    { SPAWN_MNT_HIDE_DIR, "/run/gatekeeper", true, true } }, 9,
	    { NULL }, 0, { "npm", "ci", NULL }, 2 },
	{ "host-hostile", SPAWN_NET_HOST, SPAWN_FS_HOST, SPAWN_SECCOMP_OFF,
	    { BASE_HOST,
	    { SPAWN_MNT_HIDE_DIR, "/run/gatekeeper", true, true },
	    { SPAWN_MNT_HIDE_DIR, "/home/alice/it's \"quoted\"", false } },
	    5, { "Q=it's $(rm -rf /) `x`", NULL }, 1,
	    { "sh", "-c", "echo \"$1\"; echo it's", "a\nb", "", "-", "*",
	    NULL }, 7 },
};

static void
setup_plan(const struct gcase *c, struct spawn_plan *p,
    const struct spawn_cage *cage)
{
	memset(p, 0, sizeof(*p));
	p->net = c->net;
	p->fs = c->fs;
	p->seccomp = c->seccomp;
	p->cwd = "/home/alice/proj";
	p->nmounts = mounts(c->m, c->nm, &p->mounts);
	p->envp = alice_env;
	p->envset = c->envset;
	p->nenvset = c->nenvset;
	p->cage = c->net == SPAWN_NET_GATED ? cage : NULL;
	p->seccomp_fd = p->resolv_fd = p->status_fd = -1;
	p->cmd = (char *const *)c->cmd;
	p->ncmd = c->ncmd;
}

static void
test_bwrap_golden(void **state)
{
	static const char resolv[] = "nameserver 10.143.0.1\n";
	static const char resolv_none[] = "nameserver 127.0.0.1\n";
	struct spawn_fdsrc src[16];
	struct spawn_strv argv = { 0 };
	struct spawn_cage cage;
	struct spawn_plan p;
	char name[64], *line;
	size_t i;
	int next;

	(void)state;
	spawn_cage_placeholder(&cage, SPAWN_PLATFORM_LINUX);
	for (i = 0; i < sizeof(gcases) / sizeof(gcases[0]); i++) {
		setup_plan(&gcases[i], &p, &cage);
		next = number_fds(&p, src);
		if (p.net == SPAWN_NET_GATED) {
			src[next - 3] = (struct spawn_fdsrc){ next,
			    (const uint8_t *)resolv, strlen(resolv), false };
			p.resolv_fd = next++;
		}
		/* as --dry-run shows it: gk-run's resolver on loopback */
		if (p.net == SPAWN_NET_NONE) {
			src[next - 3] = (struct spawn_fdsrc){ next,
			    (const uint8_t *)resolv_none, strlen(resolv_none),
			    false };
			p.resolv_fd = next++;
		}
		if (p.seccomp != SPAWN_SECCOMP_OFF) {
			src[next - 3] = (struct spawn_fdsrc){ next, fake_bpf,
			    sizeof(fake_bpf), false };
			p.seccomp_fd = next++;
		}
		src[next - 3] = (struct spawn_fdsrc){ next, NULL, 0, true };
		p.status_fd = next++;
		assert_int_equal(spawn_bwrap_build(&p, &argv), 0);
		assert_string_equal(argv.v[0], "bwrap");
		line = spawn_shell_render(&argv, src, (size_t)(next - 3));
		assert_non_null(line);
		snprintf(name, sizeof(name), "%s.txt", gcases[i].name);
		golden("spawn", name, line);
		free(line);
		spawn_strv_clear(&argv);
		spawn_mounts_free(p.mounts, p.nmounts);
	}
}

/* The argv itself, word by word, for the properties that matter. */
static void
test_bwrap_argv(void **state)
{
	struct spawn_strv a = { 0 };
	struct spawn_cage cage;
	struct spawn_plan p;
	size_t i, dd = 0;
	bool net = false, unset_ld = false, set_ld = false, tmpdir = false;

	(void)state;
	spawn_cage_placeholder(&cage, SPAWN_PLATFORM_LINUX);
	setup_plan(&gcases[1], &p, &cage);
	assert_int_equal(spawn_bwrap_build(&p, &a), 0);
	for (i = 0; i < a.n; i++) {
		if (strcmp(a.v[i], "--") == 0 && dd == 0)
			dd = i;
		if (strcmp(a.v[i], "--unshare-net") == 0)
			net = true;
		if (strcmp(a.v[i], "--unsetenv") == 0 &&
		    strcmp(a.v[i + 1], "LD_PRELOAD") == 0)
			unset_ld = true;
		if (strcmp(a.v[i], "--unsetenv") == 0 &&
		    strcmp(a.v[i + 1], "TMPDIR") == 0)
			tmpdir = true;
		if (strcmp(a.v[i], "--setenv") == 0 &&
		    strcmp(a.v[i + 1], "LD_PRELOAD") == 0)
			set_ld = strcmp(a.v[i + 2], "/opt/ok.so") == 0;
	}
	/* gated: the cage's netns, not bwrap's own */
	assert_false(net);
	/* --env LD_PRELOAD=... lets it through */
	assert_false(unset_ld);
	assert_true(set_ld);
	assert_true(tmpdir);
	/* the command is last, verbatim */
	assert_int_equal(a.n - dd - 1, 3);
	assert_string_equal(a.v[dd + 3], "https://github.com/acme/hello.git");
	spawn_strv_clear(&a);
	spawn_mounts_free(p.mounts, p.nmounts);
}

/*
 * --net none: bwrap makes the network namespace (--unshare-net) unless
 * gk-run's child made it (a real run: its resolver's socket is in it);
 * either way /etc/resolv.conf is the data gk-run gave.
 */
static void
test_bwrap_none(void **state)
{
	struct spawn_strv a = { 0 };
	struct spawn_plan p;
	size_t i, net, resolv;
	int own;

	(void)state;
	for (own = 0; own < 2; own++) {
		setup_plan(&gcases[0], &p, NULL);
		assert_int_equal(p.net, SPAWN_NET_NONE);
		p.own_netns = own == 1;
		p.resolv_fd = 9;
		assert_int_equal(spawn_bwrap_build(&p, &a), 0);
		for (i = net = resolv = 0; i < a.n; i++) {
			if (strcmp(a.v[i], "--unshare-net") == 0)
				net++;
			if (strcmp(a.v[i], "--ro-bind-data") == 0 &&
			    strcmp(a.v[i + 1], "9") == 0 &&
			    strcmp(a.v[i + 2], "/etc/resolv.conf") == 0)
				resolv++;
		}
		assert_int_equal(net, own == 1 ? 0 : 1);
		assert_int_equal(resolv, 1);
		spawn_strv_clear(&a);
		spawn_mounts_free(p.mounts, p.nmounts);
	}
}

/* --credential: the trust files after resolv.conf, the placeholders and
 * the bundles' variables after the proxies and before --env's. */
static void
test_bwrap_credentials(void **state)
{
	static char *const credenv[] = { "GH_TOKEN=ghp_PLACEHOLDERxyz", NULL };
	struct spawn_trust t;
	struct spawn_strv a = { 0 };
	struct spawn_cage cage;
	struct spawn_plan p;
	size_t i, resolv = 0, bundle = 0, ph = 0, proxy = 0, envset = 0;
	size_t ssl = 0, ssl_env = 0;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.file[0] = (struct spawn_trust_file){ .path = (char *)
	    "/run/gatekeeper-trust/ca.pem", .fd = 20 };
	t.file[1] = (struct spawn_trust_file){ .path = (char *)
	    "/run/gatekeeper-trust/bundle.pem", .fd = 21 };
	t.file[2] = (struct spawn_trust_file){ .path = (char *)
	    "/etc/ssl/certs/ca-certificates.crt", .fd = -1 };
	t.n = 3;
	spawn_strv_push(&t.env, "SSL_CERT_FILE=/run/gatekeeper-trust/"
	    "bundle.pem");
	spawn_cage_placeholder(&cage, SPAWN_PLATFORM_LINUX);
	setup_plan(&gcases[1], &p, &cage);
	p.resolv_fd = 9;
	p.credenv = credenv;
	p.ncredenv = 1;
	p.trust = &t;
	p.envset = (const char *const[]){ "SSL_CERT_FILE=/mine.pem" };
	p.nenvset = 1;
	assert_int_equal(spawn_bwrap_build(&p, &a), 0);
	for (i = 0; i + 2 < a.n; i++) {
		if (strcmp(a.v[i], "--ro-bind-data") == 0 &&
		    strcmp(a.v[i + 2], "/etc/resolv.conf") == 0)
			resolv = i;
		if (strcmp(a.v[i], "--ro-bind-data") == 0 &&
		    strcmp(a.v[i + 1], "21") == 0 &&
		    strcmp(a.v[i + 2], "/run/gatekeeper-trust/bundle.pem") == 0)
			bundle = i;
		/* no fd yet: not shown */
		assert_string_not_equal(a.v[i + 2],
		    "/etc/ssl/certs/ca-certificates.crt");
		if (strcmp(a.v[i], "--setenv") != 0)
			continue;
		if (strcmp(a.v[i + 1], "GH_TOKEN") == 0)
			ph = i;
		if (strcmp(a.v[i + 1], "HTTPS_PROXY") == 0)
			proxy = i;
		if (strcmp(a.v[i + 1], "SSL_CERT_FILE") == 0 && ssl == 0)
			ssl = i;
		else if (strcmp(a.v[i + 1], "SSL_CERT_FILE") == 0)
			ssl_env = i;
		if (strcmp(a.v[i + 1], "FOO") == 0)
			envset = i;
	}
	assert_true(resolv > 0 && bundle > resolv);
	assert_true(proxy > 0 && ph > proxy && ssl > ph);
	assert_string_equal(a.v[ph + 2], "ghp_PLACEHOLDERxyz");
	assert_string_equal(a.v[ssl + 2], "/run/gatekeeper-trust/bundle.pem");
	/* --env's own comes last, so it wins */
	assert_true(ssl_env > ssl);
	assert_string_equal(a.v[ssl_env + 2], "/mine.pem");
	assert_int_equal(envset, 0);
	spawn_strv_clear(&a);
	spawn_strv_clear(&t.env);
	/* macOS cannot show the CA */
	{
		char err[SPAWN_ERRLEN];

		assert_null(spawn_sbpl_build(&p, err, sizeof(err)));
		assert_string_equal(err, "--credential is not supported on "
		    "macOS: sandbox-exec cannot show the cage's CA to the "
		    "sandbox");
	}
	spawn_mounts_free(p.mounts, p.nmounts);
}

/* --block-fd (spawn_tmpwatch.c) only when the plan has one, before "--". */
static void
test_bwrap_block_fd(void **state)
{
	struct spawn_strv a = { 0 };
	struct spawn_plan p;
	size_t i, at = 0, end = 0;

	(void)state;
	setup_plan(&gcases[0], &p, NULL);
	assert_int_equal(spawn_bwrap_build(&p, &a), 0);
	for (i = 0; i < a.n; i++)
		assert_string_not_equal(a.v[i], "--block-fd");
	spawn_strv_clear(&a);
	p.block_fd = 12;
	assert_int_equal(spawn_bwrap_build(&p, &a), 0);
	for (i = 0; i + 1 < a.n; i++) {
		if (strcmp(a.v[i], "--block-fd") == 0 && at == 0)
			at = i;
		if (strcmp(a.v[i], "--") == 0 && end == 0)
			end = i;
	}
	assert_true(at > 0 && end > at);
	assert_string_equal(a.v[at + 1], "12");
	spawn_strv_clear(&a);
	spawn_mounts_free(p.mounts, p.nmounts);
}

/* ---- the mount plan -------------------------------------------------- */

static void
test_mounts_sort(void **state)
{
	static const struct mspec spec[] = {
		{ SPAWN_MNT_RO, "/a/b/c", false },
		BASE_SANDBOX,
		{ SPAWN_MNT_RW, "/a", false },
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
		{ SPAWN_MNT_RO, "/a/b/c", false },		/* dup */
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/proj", true },
		{ SPAWN_MNT_RO, "/tmp", false },	/* beats tmpfs */
		{ SPAWN_MNT_HIDE_FILE, "/z", false },
	};
	static const char *const order[] = {
		"/", "/dev", "/proc", "/tmp", "/a", "/z", "/a/b/c",
		"/home/alice/proj", "/home/alice/.ssh",
	};
	struct spawn_mount *m;
	size_t n, i;

	(void)state;
	n = mounts(spec, sizeof(spec) / sizeof(spec[0]), &m);
	assert_int_equal(n, sizeof(order) / sizeof(order[0]));
	for (i = 0; i < n; i++)
		assert_string_equal(m[i].path, order[i]);
	/* explicit beats implicit; the cwd beats a default hide */
	assert_int_equal(m[3].kind, SPAWN_MNT_RO);
	assert_false(m[3].implicit);
	assert_int_equal(m[7].kind, SPAWN_MNT_RW);
	assert_true(m[7].implicit);
	spawn_mounts_free(m, n);
}

/* A forced hide beats the cwd and an implicit entry; what is under it
 * is still mounted after it. */
static void
test_mounts_forced(void **state)
{
	static const struct mspec spec[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_RW, "/run/gk/work", false },
		{ SPAWN_MNT_HIDE_DIR, "/run/gk", true, true },
		{ SPAWN_MNT_HIDE_DIR, "/tmp", true, true },
	};
	struct spawn_mount *m;
	size_t n;

	(void)state;
	n = mounts(spec, sizeof(spec) / sizeof(spec[0]), &m);
	assert_int_equal(n, 7);
	assert_string_equal(m[3].path, "/tmp");
	assert_int_equal(m[3].kind, SPAWN_MNT_HIDE_DIR);
	assert_true(m[3].forced);
	assert_string_equal(m[4].path, "/run/gk");
	assert_string_equal(m[6].path, "/run/gk/work");
	assert_int_equal(m[6].kind, SPAWN_MNT_RW);
	spawn_mounts_free(m, n);
}

/* One file through spawn_mounts_protect: its return, and where the
 * read-only bind landed (its index, or -1). */
static int
protect(const struct mspec *spec, size_t n, const char *path, int *at,
    struct spawn_mount **out, size_t *nout)
{
	char err[SPAWN_ERRLEN];
	struct spawn_mount *m;
	size_t i;
	int r;

	n = mounts(spec, n, &m);
	r = spawn_mounts_protect(&m, &n, path, 42, err, sizeof(err));
	*at = -1;
	for (i = 0; i < n; i++)
		if (m[i].fd == 42) {
			assert_int_equal(*at, -1);
			*at = (int)i;
		}
	*out = m;
	*nout = n;
	return r;
}

/* Which of the files gk-run reads and writes get a read-only bind: the
 * ones a writable mount shows, and after it. */
static void
test_mounts_protect(void **state)
{
	static const struct mspec sandbox[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_RW, "/home/alice/work", false },
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/proj/secrets", false },
		{ SPAWN_MNT_RO, "/home/alice/proj/conf", false },
		{ SPAWN_MNT_RW, "/home/alice/proj/conf/rw", false },
	};
	static const struct mspec host[] = {
		BASE_HOST,
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
	};
	static const struct {
		const struct mspec *spec;
		size_t n;
		const char *path;
		int want;
		size_t pins;	/* directories pinned between (below) */
	} cases[] = {
		{ sandbox, 9, "/home/alice/proj/deps.allow", 1, 0 },
		{ sandbox, 9, "/home/alice/proj/a/b/learned", 1, 2 },
		{ sandbox, 9, "/home/alice/work/saved.allow", 1, 0 },
		{ sandbox, 9, "/home/alice/proj/conf/rw/x.allow", 1, 0 },
		{ sandbox, 9, "/home/alice/deps.allow", 0, 0 },	/* read-only */
		{ sandbox, 9, "/home/alice/proj/conf/x.allow", 0, 0 },
		{ sandbox, 9, "/home/alice/proj/secrets/x", 0, 0 }, /* hidden */
		{ sandbox, 9, "/tmp/x.allow", 0, 0 },	/* a fresh tmpfs */
		{ sandbox, 9, "/home/alice/projx/deps.allow", 0, 0 },
		{ host, 4, "/etc/gk/deps.allow", 1, 2 },	/* --fs host: / */
		{ host, 4, "/home/alice/.ssh/x", 0, 0 },
	};
	struct spawn_mount *m;
	size_t i, j, k, n, pins;
	bool known;
	int at;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(protect(cases[i].spec, cases[i].n,
		    cases[i].path, &at, &m, &n), cases[i].want);
		if (cases[i].want == 0) {
			assert_int_equal(at, -1);
			assert_int_equal(n, cases[i].n);
			spawn_mounts_free(m, n);
			continue;
		}
		assert_int_equal(n, cases[i].n + 1 + cases[i].pins);
		assert_true(at >= 0);
		assert_int_equal(m[at].kind, SPAWN_MNT_RO);
		assert_true(m[at].implicit);
		assert_string_equal(m[at].path, cases[i].path);
		/* the pins: writable binds of the directories above it, so
		 * that none can be moved away */
		for (j = 0, pins = 0; j < n; j++) {
			for (k = 0, known = false; k < cases[i].n; k++)
				known |= strcmp(cases[i].spec[k].path,
				    m[j].path) == 0;
			if (known || (size_t)at == j)
				continue;
			assert_int_equal(m[j].kind, SPAWN_MNT_RW);
			assert_true(m[j].implicit &&
			    spawn_path_under(cases[i].path, m[j].path));
			pins++;
		}
		assert_int_equal(pins, cases[i].pins);
		/* after every mount that covers it */
		for (j = (size_t)at + 1; j < n; j++)
			assert_false(spawn_path_under(cases[i].path,
			    m[j].path));
		spawn_mounts_free(m, n);
	}
}

/* --rw of the file itself cannot stand with its read-only bind. */
static void
test_mounts_protect_rw(void **state)
{
	static const struct mspec spec[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_RW, "/home/alice/deps.allow", false },
	};
	char err[SPAWN_ERRLEN];
	struct spawn_mount *m;
	size_t n;

	(void)state;
	n = mounts(spec, 6, &m);
	assert_int_equal(spawn_mounts_protect(&m, &n, "/home/alice/deps.allow",
	    7, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--rw /home/alice/deps.allow"));
	assert_int_equal(n, 6);
	spawn_mounts_free(m, n);
}

static void
sort_error(const struct mspec *spec, size_t n, const char *want)
{
	char err[SPAWN_ERRLEN];
	struct spawn_mount *m = spec_mounts(spec, n);

	assert_int_equal(spawn_mounts_sort(m, &n, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("message '%s', expected '%s'", err, want);
	spawn_mounts_free(m, n);	/* no leak, no double free */
}

static void
test_mounts_errors(void **state)
{
	static const struct mspec a[] = {
		BASE_SANDBOX, { SPAWN_MNT_RO, "/x", false },
		{ SPAWN_MNT_RW, "/y", false }, { SPAWN_MNT_RW, "/x", false },
		{ SPAWN_MNT_RW, "/w", false },
	};
	static const struct mspec b[] = {
		BASE_SANDBOX, { SPAWN_MNT_HIDE_DIR, "/proc/1", false },
	};
	static const struct mspec c[] = {
		BASE_SANDBOX, { SPAWN_MNT_RW, "/dev", false },
	};
	static const struct mspec d[] = {
		BASE_SANDBOX, { SPAWN_MNT_RO, "/proc", false },
	};
	/* the control socket's directory, named by the user either way */
	static const struct mspec e[] = {
		BASE_SANDBOX, { SPAWN_MNT_RO, "/run/gatekeeper", false },
		{ SPAWN_MNT_HIDE_DIR, "/run/gatekeeper", true, true },
	};
	static const struct mspec f[] = {
		BASE_SANDBOX, { SPAWN_MNT_HIDE_DIR, "/run/gatekeeper", true,
		    true }, { SPAWN_MNT_RW, "/run/gatekeeper", false },
	};

	(void)state;
	sort_error(e, 7, "--ro /run/gatekeeper: that directory holds "
	    "gatekeeperd's control socket, which no sandbox may reach");
	sort_error(f, 7, "--rw /run/gatekeeper: that directory holds");
	sort_error(a, 9, "/x is given both with --ro and with --rw; give one");
	sort_error(b, 6, "--hide /proc/1: the sandbox has its own /dev and "
	    "/proc");
	sort_error(c, 6, "--rw /dev: the sandbox has its own");
	sort_error(d, 6, "--ro /proc: the sandbox has its own");
}

static void
test_visible(void **state)
{
	static const struct mspec spec[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
		{ SPAWN_MNT_HIDE_FILE, "/home/alice/.netrc", true },
		{ SPAWN_MNT_RO, "/tmp/tools", false },
		{ SPAWN_MNT_HIDE_DIR, "/opt/x", false },
		{ SPAWN_MNT_RO, "/opt/x/bin", false },
	};
	static const struct {
		const char	*path;
		bool		 visible;
	} cases[] = {
		{ "/usr/bin/git", true }, { "/", true },
		{ "/home/alice/proj/run.sh", true },
		{ "/tmp/x", false }, { "/tmp", false },
		{ "/tmp/tools/bin/t", true }, { "/tmp/toolsx/t", false },
		{ "/dev/shm/x", false }, { "/proc/self/exe", false },
		{ "/home/alice/.ssh/x", false }, { "/home/alice/.sshx", true },
		{ "/home/alice/.netrc", false }, { "/opt/x/lib/y", false },
		{ "/opt/x/bin/y", true },
	};
	struct spawn_plan p;
	size_t i;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.nmounts = mounts(spec, sizeof(spec) / sizeof(spec[0]), &p.mounts);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (spawn_path_visible(&p, cases[i].path) != cases[i].visible)
			fail_msg("%s: visible should be %d", cases[i].path,
			    cases[i].visible);
	spawn_mounts_free(p.mounts, p.nmounts);
}

static void
test_normalize(void **state)
{
	static const char *const cases[][3] = {
		{ "/cwd", "/a/b", "/a/b" }, { "/cwd", "a/b", "/cwd/a/b" },
		{ "/cwd", ".", "/cwd" }, { "/cwd", "..", "/" },
		{ "/cwd", "../../..", "/" }, { "/", "x", "/x" },
		{ "/c/d", "./x/../y//z/", "/c/d/y/z" },
		{ "/cwd", "/a/./b/../../c", "/c" }, { "/cwd", "/", "/" },
		{ "/cwd", "...", "/cwd/..." }, { "/cwd", "a/.b", "/cwd/a/.b" },
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = spawn_path_normalize(cases[i][0], cases[i][1]);
		assert_non_null(s);
		if (strcmp(s, cases[i][2]) != 0)
			fail_msg("%s + %s: %s, expected %s", cases[i][0],
			    cases[i][1], s, cases[i][2]);
		free(s);
	}
}

/* ---- shell rendering ---------------------------------------------------- */

static void
test_shell_quote(void **state)
{
	static const char *const cases[][2] = {
		{ "abc", "abc" }, { "", "''" }, { "a b", "'a b'" },
		{ "it's", "'it'\\''s'" }, { "$x", "'$x'" },
		{ "`id`", "'`id`'" }, { "a\nb", "'a\nb'" },
		{ "--opt=v,w:x@y%z+1", "--opt=v,w:x@y%z+1" },
		{ "~", "'~'" }, { "*", "'*'" }, { "'", "''\\'''" },
		{ "\\", "'\\'" }, { "a;b&c|d", "'a;b&c|d'" },
	};
	struct spawn_strv out = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(spawn_shell_quote(cases[i][0], &out), 0);
		assert_string_equal(out.v[i], cases[i][1]);
	}
	spawn_strv_clear(&out);
}

static void
test_shell_render(void **state)
{
	static const uint8_t data[] = { '-', 'a', '%', '\'', '\\', '\n', 0,
	    0xff, ' ' };
	struct spawn_fdsrc src[4] = {
		{ 3, data, sizeof(data), false }, { 4, NULL, 0, false },
		{ 9, NULL, 0, true },
		{ 10, NULL, 0, false, "/home/alice/my proj/deps.allow" },
	};
	struct spawn_strv a = { 0 };
	char *line;

	(void)state;
	spawn_strv_push(&a, "bwrap");
	spawn_strv_push(&a, "x y");
	line = spawn_shell_render(&a, src, 4);
	assert_non_null(line);
	assert_string_equal(line, "bwrap 'x y' 3< <(printf '\\055a%%\\047"
	    "\\134\\n\\000\\377 ') 4</dev/null 9>/dev/null "
	    "10<'/home/alice/my proj/deps.allow'");
	free(line);
	spawn_strv_clear(&a);
}

/* ---- SBPL -------------------------------------------------------------- */

/*
 * Read an SBPL profile as a tokenizer would: count parentheses outside
 * strings and collect the strings, unescaped. Fails on a broken quote.
 */
static int
sbpl_strings(const char *s, struct spawn_strv *out)
{
	char buf[4096];
	int depth = 0;
	size_t n;

	for (; *s != '\0'; s++) {
		if (*s == ';') {
			while (*s != '\0' && *s != '\n')
				s++;
			if (*s == '\0')
				break;
		} else if (*s == '(')
			depth++;
		else if (*s == ')')
			assert_true(--depth >= 0);
		else if (*s == '"') {
			for (n = 0, s++; *s != '"'; s++) {
				assert_true(*s != '\0' && n < sizeof(buf) - 1);
				if (*s == '\\')
					s++;
				assert_true(*s != '\0');
				buf[n++] = *s;
			}
			buf[n] = '\0';
			spawn_strv_push(out, buf);
		}
	}
	assert_int_equal(depth, 0);
	return 0;
}

static void
sbpl_case(const char *golden_name, enum spawn_net net, enum spawn_fs fs,
    const struct mspec *spec, size_t n)
{
	struct spawn_cage cage;
	struct spawn_plan p;
	struct spawn_strv strs = { 0 };
	char err[SPAWN_ERRLEN], *prof;
	size_t i, j;
	bool found;

	memset(&p, 0, sizeof(p));
	spawn_cage_placeholder(&cage, SPAWN_PLATFORM_MACOS);
	p.net = net;
	p.fs = fs;
	p.cage = &cage;
	p.cwd = "/home/alice/proj";
	p.nmounts = mounts(spec, n, &p.mounts);
	prof = spawn_sbpl_build(&p, err, sizeof(err));
	if (prof == NULL)
		fail_msg("%s: %s", golden_name, err);
	golden("sbpl", golden_name, prof);
	/* every path comes back out of its string literal intact */
	sbpl_strings(prof, &strs);
	for (i = 0; i < p.nmounts; i++) {
		if (p.mounts[i].kind == SPAWN_MNT_DEV ||
		    p.mounts[i].kind == SPAWN_MNT_PROC ||
		    p.mounts[i].kind == SPAWN_MNT_DEV_BIND ||
		    strcmp(p.mounts[i].path, "/tmp") == 0)
			continue;
		for (found = false, j = 0; j < strs.n && !found; j++)
			found = strcmp(strs.v[j], p.mounts[i].path) == 0;
		if (!found)
			fail_msg("%s: path %s is not in the profile",
			    golden_name, p.mounts[i].path);
	}
	spawn_strv_clear(&strs);
	free(prof);
	spawn_mounts_free(p.mounts, p.nmounts);
}

static void
test_sbpl_golden(void **state)
{
	static const struct mspec sandbox[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/.ssh", true },
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/.netrc", true },
		{ SPAWN_MNT_RW, "/home/alice/.cache/pip", false },
		{ SPAWN_MNT_RO, "/home/alice/proj/.git", false },
	};
	static const struct mspec host[] = {
		BASE_HOST, { SPAWN_MNT_HIDE_DIR, "/home/alice/.aws", false },
	};
	static const struct mspec hostile[] = {
		BASE_SANDBOX,
		{ SPAWN_MNT_RW, "/home/alice/a \"quoted\" dir", false },
		{ SPAWN_MNT_RO, "/home/alice/back\\slash\\", false },
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/x\")(allow default)"
		    "(allow network* (remote ip \"*:*\"))(deny file-read* "
		    "(subpath \"", false },
		{ SPAWN_MNT_RW, "/home/alice/; not a comment", false },
		{ SPAWN_MNT_RW, "/home/alice/caf\xc3\xa9 (1)", false },
		{ SPAWN_MNT_HIDE_DIR, "/home/alice/\\\"", false },
	};

	(void)state;
	sbpl_case("gated-sandbox.sb", SPAWN_NET_GATED, SPAWN_FS_SANDBOX,
	    sandbox, sizeof(sandbox) / sizeof(sandbox[0]));
	sbpl_case("none-sandbox.sb", SPAWN_NET_NONE, SPAWN_FS_SANDBOX,
	    sandbox, sizeof(sandbox) / sizeof(sandbox[0]));
	sbpl_case("host-host.sb", SPAWN_NET_HOST, SPAWN_FS_HOST, host,
	    sizeof(host) / sizeof(host[0]));
	sbpl_case("hostile.sb", SPAWN_NET_GATED, SPAWN_FS_SANDBOX, hostile,
	    sizeof(hostile) / sizeof(hostile[0]));
}

static void
test_sbpl_string(void **state)
{
	static const char *const cases[][2] = {
		{ "/a", "\"/a\"" }, { "", "\"\"" },
		{ "a\"b", "\"a\\\"b\"" }, { "a\\b", "\"a\\\\b\"" },
		{ "\\\"", "\"\\\\\\\"\"" },
		{ "(x) ;y #\"z", "\"(x) ;y #\\\"z\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	};
	static const char *const bad[] = {
		"a\nb", "a\rb", "\t", "x\033[31m", "del\x7f",
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = spawn_sbpl_string(cases[i][0]);
		assert_non_null(s);
		assert_string_equal(s, cases[i][1]);
		free(s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(spawn_sbpl_string(bad[i]));
}

static void
test_sbpl_refuses(void **state)
{
	static const struct mspec spec[] = {
		BASE_SANDBOX, { SPAWN_MNT_RW, "/home/alice/new\nline", false },
	};
	struct spawn_plan p;
	char err[SPAWN_ERRLEN];

	(void)state;
	memset(&p, 0, sizeof(p));
	p.net = SPAWN_NET_NONE;
	p.nmounts = mounts(spec, 6, &p.mounts);
	assert_null(spawn_sbpl_build(&p, err, sizeof(err)));
	assert_string_equal(err, "/home/alice/new?line: a path with a "
	    "control character cannot be written into an SBPL profile "
	    "safely; rename it or leave it out");
	spawn_mounts_free(p.mounts, p.nmounts);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bwrap_golden),
		cmocka_unit_test(test_bwrap_argv),
		cmocka_unit_test(test_bwrap_none),
		cmocka_unit_test(test_bwrap_credentials),
		cmocka_unit_test(test_bwrap_block_fd),
		cmocka_unit_test(test_mounts_sort),
		cmocka_unit_test(test_mounts_forced),
		cmocka_unit_test(test_mounts_errors),
		cmocka_unit_test(test_mounts_protect),
		cmocka_unit_test(test_mounts_protect_rw),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_shell_render),
		cmocka_unit_test(test_sbpl_golden),
		cmocka_unit_test(test_sbpl_string),
		cmocka_unit_test(test_sbpl_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
