/*
 * From options to a mount plan against the real filesystem: realpath,
 * stat, the default hides that exist. Also small file helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "spawner/spawn_int.h"

/* The usual secret stores, relative to $HOME (spawn_usage() lists
 * them: keep both in step). */
static const char *const default_hides[] = {
	/* keys and cloud credentials */
	".ssh", ".gnupg", ".aws", ".config/gcloud", ".kube", ".docker",
	".azure", ".oci", ".terraform.d", ".terraformrc", ".vault-token",
	".config/doctl", ".config/hcloud", ".fly", ".aliyun", ".bluemix",
	".ibmcloud", ".config/openstack", ".s3cfg", ".boto", ".pgpass",
	".my.cnf",
	/* container registries */
	".config/containers/auth.json",
	/* tokens of forges and registries */
	".netrc", ".git-credentials", ".config/gh", ".config/hub",
	".config/glab-cli", ".npmrc", ".yarnrc.yml", ".pypirc",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".m2/settings.xml", ".m2/settings-security.xml",
	".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config",
	".config/composer/auth.json", ".composer/auth.json",
	".pub-cache/credentials.json",
	/* agent tools' own directories: their tokens and transcripts */
	".claude", ".claude.json", ".codex", ".gemini", ".config/gemini",
	".aider", ".continue", ".cursor",
	/* password stores, keyrings, browser profiles */
	".password-store", ".local/share/keyrings", ".config/Bitwarden CLI",
	".config/op", ".mozilla", ".config/google-chrome",
	".config/chromium",
	/* shell and REPL histories */
	".bash_history", ".zsh_history", ".zhistory", ".sh_history",
	".history", ".local/share/fish/fish_history", ".python_history",
	".node_repl_history", ".irb_history", ".psql_history",
	".mysql_history", ".sqlite_history", ".rediscli_history",
	".lesshst", ".viminfo",
	NULL,
};

/* Host-only secrets a sandbox run as root could read (an unprivileged
 * user cannot read them anyway). */
static const char *const system_hides[] = {
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
	"/etc/ssl/private",
	NULL,
};

int
spawn_ml_add_src(struct spawn_mlist *l, enum spawn_mnt kind, char *path,
    char *src, bool implicit)
{
	struct spawn_mount *nm;
	size_t cap;

	if (path == NULL || (src == NULL && (kind == SPAWN_MNT_BIND ||
	    kind == SPAWN_MNT_SYMLINK))) {
		free(path);
		free(src);
		return -1;
	}
	if (l->n == l->cap) {
		cap = l->cap == 0 ? 16 : l->cap * 2;
		if ((nm = reallocarray(l->m, cap, sizeof(*nm))) == NULL) {
			free(path);
			free(src);
			return -1;
		}
		l->m = nm;
		l->cap = cap;
	}
	memset(&l->m[l->n], 0, sizeof(l->m[l->n]));
	l->m[l->n].kind = kind;
	l->m[l->n].path = path;
	l->m[l->n].src = src;
	l->m[l->n].fd = -1;
	l->m[l->n].implicit = implicit;
	l->n++;
	return 0;
}

int
spawn_ml_add(struct spawn_mlist *l, enum spawn_mnt kind, char *path,
    bool implicit)
{
	return spawn_ml_add_src(l, kind, path, NULL, implicit);
}

bool
spawn_ml_has(const struct spawn_mlist *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->m[i].path, path) == 0)
			return true;
	return false;
}

const struct spawn_mount *
spawn_ml_covering(const struct spawn_mlist *l, const char *path)
{
	const struct spawn_mount *best = NULL;
	size_t i, d, bd = 0;

	for (i = 0; i < l->n; i++) {
		if (!spawn_path_under(path, l->m[i].path))
			continue;
		d = strlen(l->m[i].path);
		if (best == NULL || d >= bd) {
			best = &l->m[i];
			bd = d;
		}
	}
	return best;
}

/*
 * A directory the sandbox gets writable, as the user named it, must not
 * be a symbolic link: where it lies, an earlier run may have written (a
 * project, a build directory), and that run could have made it a link to
 * anywhere the user can write. Its target, named itself, is fine; links
 * higher up the path are followed as usual.
 */
static int
not_a_link(const char *what, const char *path, const char *fix, char *err,
    size_t errlen)
{
	char show[256], tshow[256], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) == -1 || !S_ISLNK(st.st_mode))
		return 0;
	if ((n = readlink(path, target, sizeof(target) - 1)) < 0)
		n = 0;
	target[n] = '\0';
	gk_seterr(err, errlen, "%s %s is a symbolic link (to %s), which a run "
	    "that could write beside it may have made; gk-run does not follow "
	    "it: %s", what, spawn_printable(path, show, sizeof(show)),
	    spawn_printable(target, tshow, sizeof(tshow)), fix);
	return -1;
}

/* The shell's idea of the working directory ($PWD), when it names the
 * same directory by another path (through links): it is what the user
 * typed. */
static int
cwd_not_a_link(const char *real, char *err, size_t errlen)
{
	const char *pwd = getenv("PWD");
	char *p;
	int r = 0;

	if (pwd == NULL || pwd[0] != '/' || strcmp(pwd, real) == 0 ||
	    (p = realpath(pwd, NULL)) == NULL)
		return 0;
	if (strcmp(p, real) == 0)
		r = not_a_link("the working directory", pwd, "run from the "
		    "directory itself (cd -P), or name it with --cwd", err,
		    errlen);
	free(p);
	return r;
}

char *
spawn_resolve_cwd(const char *opt_cwd, char *err, size_t errlen)
{
	struct stat st;
	char show[256], *p;

	if (opt_cwd != NULL && not_a_link("--cwd", opt_cwd, "name the "
	    "directory itself", err, errlen) == -1)
		return NULL;
	p = realpath(opt_cwd != NULL ? opt_cwd : ".", NULL);
	if (p == NULL || stat(p, &st) == -1 || !S_ISDIR(st.st_mode)) {
		gk_seterr(err, errlen, "%s %s: %s", opt_cwd != NULL ?
		    "--cwd" : "the current directory", opt_cwd != NULL ?
		    spawn_printable(opt_cwd, show, sizeof(show)) : "",
		    p == NULL ? strerror(errno) : "not a directory");
		free(p);
		return NULL;
	}
	if (opt_cwd == NULL && cwd_not_a_link(p, err, errlen) == -1) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * /run (and /var/run where it is a directory of its own) replaced by a
 * fresh tmpfs: the host's daemons listen there (docker, D-Bus, nscd,
 * systemd-resolved, the journal), and a socket is reachable even on a
 * read-only mount. What the sandbox needs back: the file
 * /etc/resolv.conf points to when it lives there.
 */
static int
run_mounts(struct spawn_mlist *l)
{
	static const char *const runs[] = { "/run", "/var/run", NULL };
	struct stat st;
	char *p, *rc;
	size_t i;
	int r = 0;

	for (i = 0; runs[i] != NULL; i++) {
		if ((p = realpath(runs[i], NULL)) == NULL)
			continue;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
		    strcmp(p, "/") != 0 &&
		    (i == 0 || strcmp(p, "/run") != 0))
			r |= spawn_ml_add(l, SPAWN_MNT_TMPFS, p, true);
		else
			free(p);
	}
	if ((rc = realpath("/etc/resolv.conf", NULL)) != NULL &&
	    (spawn_path_under(rc, "/run") || spawn_path_under(rc,
	    "/var/run")) && stat(rc, &st) == 0 && S_ISREG(st.st_mode))
		r |= spawn_ml_add(l, SPAWN_MNT_RO, rc, true);
	else
		free(rc);
	return r;
}

static int
base_mounts(struct spawn_mlist *l, const struct spawn_opts *o, const char *cwd)
{
	int r = 0;

	if (o->fs == SPAWN_FS_HOST) {
		r |= spawn_ml_add(l, SPAWN_MNT_RW, strdup("/"), true);
		r |= spawn_ml_add(l, SPAWN_MNT_DEV_BIND, strdup("/dev"), true);
		r |= spawn_ml_add(l, SPAWN_MNT_PROC, strdup("/proc"), true);
		return r;
	}
	r |= spawn_ml_add(l, SPAWN_MNT_RO, strdup("/"), true);
	r |= spawn_ml_add(l, SPAWN_MNT_DEV, strdup("/dev"), true);
	r |= spawn_ml_add(l, SPAWN_MNT_PROC, strdup("/proc"), true);
	r |= spawn_ml_add(l, SPAWN_MNT_TMPFS, strdup("/tmp"), true);
	r |= run_mounts(l);
	r |= spawn_ml_add(l, SPAWN_MNT_RW, strdup(cwd), true);
	return r;
}

static int
user_mount(struct spawn_mlist *l, const struct spawn_optpath *op, bool macos,
    bool dry_run, char *err, size_t errlen)
{
	static const char *const names[] = { "--ro", "--rw", "--hide",
	    "--socket" };
	enum spawn_mnt kind;
	struct stat st;
	char show[256], *p, *cwd;

	if (op->kind == SPAWN_PATH_RW && !macos && not_a_link("--rw",
	    op->path, "name its target with --rw instead", err, errlen) == -1)
		return -1;
	/* --rw of a missing path: a new directory (for --dry-run, the path
	 * as it would be) */
	if (op->kind == SPAWN_PATH_RW && !macos && !dry_run &&
	    lstat(op->path, &st) == -1 && errno == ENOENT &&
	    spawn_mkdirs(op->path, 0777) == -1)
		return gk_seterr(err, errlen, "--rw %s: cannot create it: %s",
		    spawn_printable(op->path, show, sizeof(show)),
		    strerror(errno));
	if ((p = realpath(op->path, NULL)) == NULL) {
		macos |= dry_run && op->kind == SPAWN_PATH_RW &&
		    errno == ENOENT;
		if (!macos) {
			gk_seterr(err, errlen, "%s %s: %s", names[op->kind],
			    spawn_printable(op->path, show, sizeof(show)),
			    strerror(errno));
			return -1;
		}
		/* a profile for another machine: take the path as given */
		if ((cwd = getcwd(NULL, 0)) == NULL)
			return -1;
		p = spawn_path_normalize(cwd, op->path);
		free(cwd);
	}
	if (op->kind == SPAWN_PATH_SOCKET && !macos &&
	    (stat(p, &st) == -1 || !S_ISSOCK(st.st_mode))) {
		gk_seterr(err, errlen, "--socket %s: %s", spawn_printable(
		    op->path, show, sizeof(show)), S_ISSOCK(st.st_mode) ?
		    strerror(errno) : "not a unix socket");
		free(p);
		return -1;
	}
	if (op->kind == SPAWN_PATH_RO || op->kind == SPAWN_PATH_SOCKET)
		kind = SPAWN_MNT_RO;
	else if (op->kind == SPAWN_PATH_RW)
		kind = SPAWN_MNT_RW;
	else
		kind = p != NULL && stat(p, &st) == 0 && !S_ISDIR(st.st_mode) ?
		    SPAWN_MNT_HIDE_FILE : SPAWN_MNT_HIDE_DIR;
	if (spawn_ml_add(l, kind, p, false) == -1) {
		gk_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A hide that only applies when the path exists (macOS: always). */
static int
implicit_hide(struct spawn_mlist *l, const char *path, bool macos, bool dir_only)
{
	struct stat st;
	char *p;

	/* most are not there: one lstat says so, where realpath would read
	 * every component's link first */
	if (!macos && lstat(path, &st) == -1 && errno == ENOENT)
		return 0;
	if ((p = realpath(path, NULL)) == NULL || stat(p, &st) == -1) {
		free(p);
		return macos ? spawn_ml_add(l, SPAWN_MNT_HIDE_DIR, strdup(path),
		    true) : 0;
	}
	if (dir_only && !S_ISDIR(st.st_mode)) {
		free(p);
		return 0;
	}
	return spawn_ml_add(l, S_ISDIR(st.st_mode) ? SPAWN_MNT_HIDE_DIR :
	    SPAWN_MNT_HIDE_FILE, p, true);
}

char *
spawn_home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h == NULL || h[0] != '/') {
		pw = getpwuid(getuid());
		h = pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ?
		    pw->pw_dir : NULL;
	}
	return h != NULL ? realpath(h, NULL) : NULL;
}

/*
 * The directory of a control socket: hidden (forced) in every mode, so
 * that neither the socket nor one a restarted gatekeeperd makes there
 * is ever visible inside. Nothing to do while it does not exist; a
 * directory that cannot be hidden (/, the working directory or above)
 * is an error only while a socket is there (else the connection fails
 * next, or no daemon is involved; gatekeeperd refuses peers from inside
 * a sandbox in any case).
 */
/*
 * gatekeeperd's own files: its audit log's directory (every cage's names
 * and labels; the unit's LogsDirectory=) and its configuration (the host
 * policy), hidden (forced) in every mode as its socket's directory is:
 * a sandbox run as root could read them otherwise.
 */
static const char *const daemon_dirs[] = {
	GK_AUDIT_DIR_DEFAULT,
	GK_CONF_DIR_DEFAULT,
	NULL,
};

/* A directory no option brings back (real: taken). */
static int
forced_hide(struct spawn_mlist *l, char *real)
{
	if (spawn_ml_add(l, SPAWN_MNT_HIDE_DIR, real, true) == -1)
		return -1;
	l->m[l->n - 1].forced = true;
	return 0;
}

static int
daemon_hide(struct spawn_mlist *l, const char *dir, const char *cwd,
    char *err, size_t errlen)
{
	char show[256], *real;

	if ((real = realpath(dir, NULL)) == NULL)
		return 0;		/* not here: nothing to hide */
	if (strcmp(real, "/") == 0 || spawn_path_under(cwd, real)) {
		spawn_printable(real, show, sizeof(show));
		gk_seterr(err, errlen, "the working directory is in %s, "
		    "gatekeeperd's own files, which no sandbox may see: run "
		    "from elsewhere (--cwd)", show);
		free(real);
		return -1;
	}
	return forced_hide(l, real);
}

static int
control_hide(struct spawn_mlist *l, const char *sock, const char *cwd, char *err,
    size_t errlen)
{
	char show[256], *dir, *slash, *real;
	struct stat st;

	if ((dir = strdup(sock)) == NULL)
		return -1;
	if ((slash = strrchr(dir, '/')) != NULL)
		slash[slash == dir ? 1 : 0] = '\0';
	real = slash != NULL ? realpath(dir, NULL) : NULL;
	free(dir);
	if (real == NULL)
		return 0;
	spawn_printable(real, show, sizeof(show));
	if ((strcmp(real, "/") == 0 || spawn_path_under(cwd, real)) &&
	    lstat(sock, &st) == -1) {
		free(real);	/* no socket (yet): gatekeeperd's own check */
		return 0;
	}
	if (strcmp(real, "/") == 0 || spawn_path_under(cwd, real)) {
		gk_seterr(err, errlen, "gatekeeperd's control socket %s "
		    "sits in %s, which %s; no sandbox may see that directory: "
		    "run from elsewhere (--cwd) or give gatekeeperd a socket "
		    "in a directory of its own (the default is %s)", sock,
		    show, strcmp(real, "/") == 0 ? "is the root" :
		    "holds the working directory", SPAWN_CONTROL_DEFAULT);
		free(real);
		return -1;
	}
	return forced_hide(l, real);
}

#define NSSWITCH_MAX	65536

/*
 * Gated: the sandbox's /etc/nsswitch.conf says "hosts: files dns", so
 * every name lookup reaches gatekeeperd's resolver, also where the
 * host's says resolve (systemd-resolved), mdns or nis. The rest of the
 * host's file is kept. NULL when there is none (glibc's default then
 * asks DNS) or on ENOMEM.
 */
static char *
nsswitch_text(void)
{
	struct spawn_buf b = { 0 };
	const char *s, *e;
	uint8_t *raw;
	size_t len;
	int fd;
	bool hosts = false;

	if ((fd = open("/etc/nsswitch.conf", O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	raw = spawn_fd_slurp(fd, NSSWITCH_MAX, &len);
	close(fd);
	if (raw == NULL)
		return NULL;
	spawn_buf_puts(&b, "# gk-run: every host name goes to gatekeeperd's "
	    "resolver\n");
	for (s = (const char *)raw; s < (const char *)raw + len; s = e) {
		e = memchr(s, '\n', (size_t)((const char *)raw + len - s));
		e = e != NULL ? e + 1 : (const char *)raw + len;
		if ((size_t)(e - s) >= 6 && strncmp(s, "hosts:", 6) == 0) {
			if (!hosts)
				spawn_buf_puts(&b, "hosts: files dns\n");
			hosts = true;
			continue;
		}
		spawn_buf_putn(&b, s, (size_t)(e - s));
	}
	if (len > 0 && raw[len - 1] != '\n')
		spawn_buf_puts(&b, "\n");
	if (!hosts)
		spawn_buf_puts(&b, "hosts: files dns\n");
	free(raw);
	if (b.nomem) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* Files gk-run writes for the sandbox (read-only inside). */
static int
data_mounts(struct spawn_mlist *l, const struct spawn_opts *o)
{
	struct stat st;
	char *t;
	int r = 0;

	if (o->fs != SPAWN_FS_SANDBOX || o->platform != SPAWN_PLATFORM_LINUX)
		return 0;
	if (o->net == SPAWN_NET_GATED && stat("/etc/nsswitch.conf", &st) == 0 &&
	    (t = nsswitch_text()) != NULL)
		r |= spawn_ml_add_src(l, SPAWN_MNT_DATA,
		    strdup("/etc/nsswitch.conf"), t, true);
	/* root inside: apt drops to its sandbox user _apt, whose uid is not
	 * mapped in the sandbox's user namespace (setgroups fails) */
	if (getuid() == 0) {
		if (asprintf(&t, "// gk-run: the sandbox maps no _apt user\n"
		    "APT::Sandbox::User \"root\";\n%s",
		    stat("/etc/apt/apt.conf", &st) == 0 ?
		    "#include \"/etc/apt/apt.conf\";\n" : "") == -1)
			return -1;
		r |= spawn_ml_add_src(l, SPAWN_MNT_DATA,
		    strdup(SPAWN_APT_CONF), t, true);
	}
	return r;
}

static int
default_mounts(struct spawn_mlist *l, const struct spawn_opts *o,
    const char *cwd, const char *home, char *err, size_t errlen)
{
	bool macos = o->platform == SPAWN_PLATFORM_MACOS;
	const char *rt;
	char path[PATH_MAX];
	size_t i;
	int r = 0, v;

	if (o->fs == SPAWN_FS_SANDBOX && home != NULL) {
		for (i = 0; default_hides[i] != NULL; i++) {
			/* settings with secrets: shown without them */
			if (!macos && (v = spawn_scrub_view(l, home,
			    default_hides[i], o->fcreds)) != 0) {
				r |= v == -1 ? -1 : 0;
				continue;
			}
			snprintf(path, sizeof(path), "%s/%s", home,
			    default_hides[i]);
			r |= implicit_hide(l, path, macos, false);
			if (!macos)
				r |= spawn_scrub_views_in(l, home,
				    default_hides[i], o->fcreds);
		}
	}
	for (i = 0; o->fs == SPAWN_FS_SANDBOX && !macos &&
	    system_hides[i] != NULL; i++)
		r |= implicit_hide(l, system_hides[i], false, false);
	r |= data_mounts(l, o);
	rt = getenv("XDG_RUNTIME_DIR");
	if (o->fs == SPAWN_FS_SANDBOX && !macos && rt != NULL && rt[0] == '/')
		r |= implicit_hide(l, rt, false, true);
	if (macos)
		return r;
	r |= control_hide(l, o->control, cwd, err, errlen);
	if (r == 0 && strcmp(o->control, SPAWN_CONTROL_DEFAULT) != 0)
		r |= control_hide(l, SPAWN_CONTROL_DEFAULT, cwd, err, errlen);
	for (i = 0; r == 0 && daemon_dirs[i] != NULL; i++)
		r |= daemon_hide(l, daemon_dirs[i], cwd, err, errlen);
	return r;
}

int
spawn_resolve_mounts(const struct spawn_opts *o, const char *cwd,
    struct spawn_mount **out, size_t *n, char *err, size_t errlen)
{
	struct spawn_mlist l = { 0 };
	char *home = spawn_home();
	size_t i;

	*out = NULL;
	*n = 0;
	err[0] = '\0';
	if (base_mounts(&l, o, cwd) != 0)
		goto fail;
	for (i = 0; i < o->npaths; i++)
		if (user_mount(&l, &o->paths[i], o->platform ==
		    SPAWN_PLATFORM_MACOS, o->dry_run, err, errlen) == -1)
			goto fail;
	if (default_mounts(&l, o, cwd, home, err, errlen) != 0 ||
	    spawn_cache_mounts(&l, o, cwd, home, err, errlen) != 0 ||
	    spawn_project_mounts(&l, o, cwd, home) != 0 ||
	    spawn_guard_mounts(&l, o, cwd, home) != 0 ||
	    spawn_gitlinks_pin(&l, o, cwd) != 0 ||
	    spawn_mounts_sort(l.m, &l.n, err, errlen) == -1)
		goto fail;
	free(home);
	*out = l.m;
	*n = l.n;
	return 0;
fail:
	free(home);
	if (err[0] == '\0')
		gk_seterr(err, errlen, "out of memory");
	spawn_mounts_free(l.m, l.n);
	return -1;
}

int
spawn_memfd_data(const char *name, const void *data, size_t len)
{
	const uint8_t *p = data;
	ssize_t w;
	int fd, saved;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1)
		return -1;
	while (len > 0) {
		if ((w = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		p += w;
		len -= (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

uint8_t *
spawn_fd_slurp(int fd, size_t max, size_t *len)
{
	uint8_t *buf;
	size_t n = 0;
	ssize_t r = 0;

	if ((buf = malloc(max + 1)) == NULL)
		return NULL;
	while (n <= max) {
		r = pread(fd, buf + n, max + 1 - n, (off_t)n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (r == -1 || n > max) {
		free(buf);
		errno = r == -1 ? errno : EFBIG;
		return NULL;
	}
	*len = n;
	return buf;
}

uint8_t *
spawn_read_file(const char *path, size_t max, size_t *len, char *err,
    size_t errlen)
{
	char show[256];
	uint8_t *buf;
	int fd;

	spawn_printable(path, show, sizeof(show));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		gk_seterr(err, errlen, "--allow-file %s: %s", show,
		    strerror(errno));
		return NULL;
	}
	if ((buf = spawn_fd_slurp(fd, max, len)) == NULL)
		gk_seterr(err, errlen, "--allow-file %s: %s", show,
		    errno == EFBIG ? "larger than 1 MiB; is it really an "
		    "allow-file?" : strerror(errno));
	close(fd);
	return buf;
}
