/*
 * Finding bwrap, and telling "not found" (127) from "not executable"
 * (126) before the sandbox starts.
 *
 * bwrap reports a failed execvp() with its own message and status 1,
 * the same status as a command that ran and failed. So gk-run answers
 * the question first, the way execvp() inside the sandbox would: the
 * same PATH search (the sandbox's PATH, relative to its working
 * directory), against the paths the sandbox can see (a fresh /tmp,
 * /dev and /proc, hidden paths), with the checks execve() makes: a
 * regular file, execute permission, not on a noexec mount, and a "#!"
 * interpreter or ELF loader that exists. The status follows the errno
 * execve() would give: ENOENT and ENOTDIR give 127, anything else 126.
 * What is left (the file changing in between, E2BIG, ENOMEM) shows up
 * as bwrap failing before the command ran: gk-run then exits 125.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

#define INTERP_DEPTH	4	/* the kernel allows 4 levels of "#!" */
#define WHY_MAX		512

char *
spawn_find_bwrap(char *err, size_t errlen)
{
	const char *path = getenv("PATH"), *s, *e;
	char cand[PATH_MAX];
	struct stat st;

	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; *s != '\0'; s = *e == ':' ? e + 1 : e) {
		e = strchrnul(s, ':');
		if (e == s || (size_t)(e - s) + 7 > sizeof(cand))
			continue;
		snprintf(cand, sizeof(cand), "%.*s/bwrap", (int)(e - s), s);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0)
			return strdup(cand);
	}
	gk_seterr(err, errlen, "bwrap (bubblewrap) is not installed or not "
	    "in PATH; install it: apt-get install bubblewrap (Debian, Ubuntu) "
	    "or dnf install bubblewrap (Fedora)");
	return NULL;
}

static int check_file(const struct spawn_plan *, const char *, int, char *,
    char *, size_t);

/* The "#!" interpreter (in head[0..n)) into out, or "". */
static void
shebang(const char *head, size_t n, char *out, size_t len)
{
	size_t i = 2, j = 0;

	while (i < n && (head[i] == ' ' || head[i] == '\t'))
		i++;
	while (i < n && head[i] != ' ' && head[i] != '\t' &&
	    head[i] != '\n' && head[i] != '\0' && j + 1 < len)
		out[j++] = head[i++];
	out[j] = '\0';
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELFDATA_HOST	ELFDATA2LSB
#else
#define ELFDATA_HOST	ELFDATA2MSB
#endif

/* Where the program headers are: 0, or -1 for "not an ELF we read". */
static int
elf_phdrs(const unsigned char *head, size_t n, uint64_t *phoff,
    uint16_t *phnum, uint16_t *phentsize)
{
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;

	if (n < sizeof(e64) || head[EI_DATA] != ELFDATA_HOST)
		return -1;
	if (head[EI_CLASS] == ELFCLASS64) {
		memcpy(&e64, head, sizeof(e64));
		*phoff = e64.e_phoff;
		*phnum = e64.e_phnum;
		*phentsize = e64.e_phentsize;
	} else if (head[EI_CLASS] == ELFCLASS32) {
		memcpy(&e32, head, sizeof(e32));
		*phoff = e32.e_phoff;
		*phnum = e32.e_phnum;
		*phentsize = e32.e_phentsize;
	} else
		return -1;
	return *phentsize >= sizeof(Elf32_Phdr) &&
	    *phentsize <= sizeof(Elf64_Phdr) ? 0 : -1;
}

/* The ELF loader (PT_INTERP) of fd into out, or "". */
static void
elf_interp(int fd, const unsigned char *head, size_t n, char *out,
    size_t len)
{
	unsigned char ph[sizeof(Elf64_Phdr)];
	uint64_t phoff, off = 0, sz = 0;
	uint16_t phnum, phentsize, i;
	Elf64_Phdr p64;
	Elf32_Phdr p32;
	uint32_t type;

	out[0] = '\0';
	if (elf_phdrs(head, n, &phoff, &phnum, &phentsize) == -1)
		return;
	for (i = 0; i < phnum && i < 256; i++) {
		if (pread(fd, ph, phentsize, (off_t)(phoff + (uint64_t)i *
		    phentsize)) != phentsize)
			return;
		memcpy(&type, ph, sizeof(type));
		if (type != PT_INTERP)
			continue;
		if (head[EI_CLASS] == ELFCLASS64) {
			memcpy(&p64, ph, sizeof(p64));
			off = p64.p_offset;
			sz = p64.p_filesz;
		} else {
			memcpy(&p32, ph, sizeof(p32));
			off = p32.p_offset;
			sz = p32.p_filesz;
		}
		if (sz == 0 || sz >= len || pread(fd, out, sz, (off_t)off) !=
		    (ssize_t)sz)
			sz = 0;
		out[sz] = '\0';
		return;
	}
}

/* The interpreter or loader `real` needs, checked in turn. */
static int
check_interp(const struct spawn_plan *p, const char *real, int depth,
    char *why, size_t whylen)
{
	unsigned char head[256];
	char interp[PATH_MAX], sub[WHY_MAX], show[256];
	ssize_t n;
	int fd, e;

	if ((fd = open(real, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;	/* execute-only: the kernel will tell */
	n = read(fd, head, sizeof(head));
	interp[0] = '\0';
	if (n >= 2 && head[0] == '#' && head[1] == '!')
		shebang((const char *)head, (size_t)n, interp, sizeof(interp));
	else if (n >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0)
		elf_interp(fd, head, (size_t)n, interp, sizeof(interp));
	close(fd);
	if (interp[0] == '\0')
		return 0;
	if (depth >= INTERP_DEPTH) {
		gk_seterr(why, whylen, "too many levels of \"#!\" "
		    "interpreters");
		return ELOOP;
	}
	if ((e = check_file(p, interp, depth + 1, NULL, sub,
	    sizeof(sub))) != 0)
		gk_seterr(why, whylen, "its %s %s: %s", head[0] == '#' ?
		    "interpreter" : "ELF loader", spawn_printable(interp, show,
		    sizeof(show)), sub);
	return e;
}

/*
 * Can `cand` (as the sandbox names it, relative to its cwd) be
 * executed there? 0, or the errno execve() would give (why says more).
 * The canonical path goes to real_out when given.
 */
static int
check_file(const struct spawn_plan *p, const char *cand, int depth,
    char *real_out, char *why, size_t whylen)
{
	struct statvfs sv;
	struct stat st;
	char *abs, *host, *real = NULL;
	bool mapped;
	int e = 0;

	if ((abs = spawn_path_normalize(p->cwd, cand)) == NULL)
		return ENOMEM;
	/* under a cache's bind: the file is in its source (hidden itself) */
	if ((host = spawn_path_host(p, abs)) == NULL) {
		free(abs);
		return ENOMEM;
	}
	mapped = strcmp(host, abs) != 0;
	if (!spawn_path_visible(p, abs) ||
	    ((real = realpath(host, NULL)) != NULL && !mapped &&
	    !spawn_path_visible(p, real))) {
		e = ENOENT;
		gk_seterr(why, whylen, "%s", access(abs, F_OK) == 0 ? "it "
		    "exists on the host but not in the sandbox (a fresh /tmp, "
		    "/dev or /proc, or a hidden path, covers it; --ro DIR "
		    "shows it)" : strerror(ENOENT));
	} else if (real == NULL) {
		e = errno;
		gk_seterr(why, whylen, "%s", strerror(e));
	} else if (stat(real, &st) == -1) {
		e = errno;
		gk_seterr(why, whylen, "%s", strerror(e));
	} else if (!S_ISREG(st.st_mode)) {
		e = EACCES;
		gk_seterr(why, whylen, "%s", S_ISDIR(st.st_mode) ?
		    "is a directory" : "not a regular file");
	} else if (access(real, X_OK) == -1) {
		e = EACCES;
		gk_seterr(why, whylen, "permission denied (not executable: "
		    "chmod +x it, or run it with its interpreter)");
	} else if (statvfs(real, &sv) == 0 && (sv.f_flag & ST_NOEXEC)) {
		e = EACCES;
		gk_seterr(why, whylen, "on a filesystem mounted noexec");
	} else
		e = check_interp(p, real, depth, why, whylen);
	if (e == 0 && real_out != NULL)
		snprintf(real_out, PATH_MAX, "%s", mapped ? abs : real);
	free(abs);
	free(host);
	free(real);
	return e;
}

static int
status_of(int e)
{
	return e == ENOENT || e == ENOTDIR ? SPAWN_EXIT_NOTFOUND :
	    SPAWN_EXIT_NOEXEC;
}

/* The PATH search of execvp(): remember EACCES, go on after ENOENT. */
static int
search_path(const struct spawn_plan *p, const char *name,
    const char *path_env, char *resolved, char *err, size_t errlen)
{
	char cand[PATH_MAX], why[WHY_MAX], first_why[WHY_MAX] = "";
	char show[256];
	const char *s, *e;
	int r, seen = 0;

	for (s = path_env; ; s = e + 1) {
		e = strchrnul(s, ':');
		snprintf(cand, sizeof(cand), "%.*s%s%s", (int)(e - s), s,
		    e == s ? "" : "/", name);
		r = check_file(p, cand, 0, resolved, why, sizeof(why));
		if (r == 0)
			return 0;
		if (r != ENOENT && r != ENOTDIR && seen == 0) {
			seen = r;
			snprintf(first_why, sizeof(first_why), "%s: %.250s",
			    spawn_printable(cand, show, sizeof(show)), why);
		} else if (seen == 0 && first_why[0] == '\0' &&
		    strstr(why, "on the host") != NULL)
			snprintf(first_why, sizeof(first_why), "%s: %.250s",
			    spawn_printable(cand, show, sizeof(show)), why);
		if (*e == '\0')
			break;
	}
	if (seen != 0) {
		gk_seterr(err, errlen, "%.200s", first_why);
		return status_of(seen);
	}
	gk_seterr(err, errlen, "%s: command not found%s%s%s",
	    spawn_printable(name, show, 104),
	    first_why[0] != '\0' ? " in the sandbox; " : "", first_why,
	    first_why[0] != '\0' ? "" : " (check the name and PATH)");
	return SPAWN_EXIT_NOTFOUND;
}

const char *
spawn_sandbox_path(const struct spawn_plan *p)
{
	size_t i;

	for (i = p->nenvset; i > 0; i--)
		if (strncmp(p->envset[i - 1], "PATH=", 5) == 0)
			return p->envset[i - 1] + 5;
	return getenv("PATH");
}

int
spawn_check_command(const struct spawn_plan *p, const char *path_env,
    char *resolved, size_t reslen, char *err, size_t errlen)
{
	char why[WHY_MAX], real[PATH_MAX], show[256];
	const char *name = p->cmd[0];
	int r;

	real[0] = '\0';
	if (name[0] == '\0') {
		gk_seterr(err, errlen, "'': command not found");
		return SPAWN_EXIT_NOTFOUND;
	}
	if (strchr(name, '/') == NULL) {
		r = search_path(p, name, path_env != NULL ? path_env :
		    "/bin:/usr/bin", real, err, errlen);
	} else if ((r = check_file(p, name, 0, real, why, sizeof(why))) != 0) {
		gk_seterr(err, errlen, "%s: %s", spawn_printable(name, show,
		    sizeof(show)), why);
		r = status_of(r);
	}
	if (resolved != NULL && reslen > 0)
		snprintf(resolved, reslen, "%s", real);
	return r;
}
