/*
 * gk_cgparse: line by line over the given bytes; nothing is read past
 * `len`, nothing needs a NUL terminator.
 */
#include <stdio.h>
#include <string.h>

#include "gatekeeper/cgroup/gk_cgparse.h"

#define FIELDS_MAX	16

static const char *const ctl_names[GK_CG__CTLS] = {
	"memory", "pids", "cpu",
};

const char *
gk_cg_ctl_name(enum gk_cg_ctl c)
{
	return c < GK_CG__CTLS ? ctl_names[c] : "?";
}

/* The next line of text at *off: its start and length (no newline). */
static bool
next_line(const char *text, size_t len, size_t *off, const char **line,
    size_t *n)
{
	const char *nl;

	if (*off >= len)
		return false;
	*line = text + *off;
	nl = memchr(*line, '\n', len - *off);
	*n = nl != NULL ? (size_t)(nl - *line) : len - *off;
	*off += *n + (nl != NULL);
	return true;
}

/* Split on spaces into at most max fields (start, length). */
static size_t
split(const char *s, size_t n, char sep, const char **f, size_t *fl,
    size_t max)
{
	size_t i = 0, k = 0, start;

	while (i < n && k < max) {
		while (i < n && s[i] == sep && sep == ' ')
			i++;
		if (i >= n)
			break;
		start = i;
		while (i < n && s[i] != sep)
			i++;
		f[k] = s + start;
		fl[k++] = i - start;
		i++;			/* the separator */
	}
	return k;
}

static bool
field_is(const char *f, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(f, word, n) == 0;
}

/* Copy a mount point, decoding \ooo escapes; false if it does not fit or
 * an escape is malformed. */
static bool
copy_unescape(char *dst, size_t dstlen, const char *s, size_t n)
{
	size_t i, o = 0;
	unsigned v;

	for (i = 0; i < n; i++) {
		if (o + 1 >= dstlen)
			return false;
		if (s[i] != '\\') {
			if (s[i] == '\0')
				return false;
			dst[o++] = s[i];
			continue;
		}
		if (n - i < 4 || s[i + 1] < '0' || s[i + 1] > '3' ||
		    s[i + 2] < '0' || s[i + 2] > '7' || s[i + 3] < '0' ||
		    s[i + 3] > '7')
			return false;
		v = (unsigned)(s[i + 1] - '0') << 6 |
		    (unsigned)(s[i + 2] - '0') << 3 |
		    (unsigned)(s[i + 3] - '0');
		if (v == 0)
			return false;
		dst[o++] = (char)v;
		i += 3;
	}
	dst[o] = '\0';
	return o > 0 && dst[0] == '/';
}

/* Does a comma-separated option list hold `opt`? */
static bool
has_option(const char *s, size_t n, const char *opt)
{
	const char *f[FIELDS_MAX * 2];
	size_t fl[FIELDS_MAX * 2], k, i;

	k = split(s, n, ',', f, fl, FIELDS_MAX * 2);
	for (i = 0; i < k; i++)
		if (field_is(f[i], fl[i], opt))
			return true;
	return false;
}

size_t
gk_cg_mounts_parse(const char *text, size_t len, struct gk_cg_mounts *m)
{
	const char *line, *f[FIELDS_MAX];
	size_t off = 0, n, k, i, dash, bad = 0, fl[FIELDS_MAX];
	char mp[GK_CG_PATH_MAX];

	memset(m, 0, sizeof(*m));
	while (next_line(text, len, &off, &line, &n)) {
		if (n == 0)
			continue;
		/* id parent maj:min root mountpoint opts [tags...] - fstype
		 * source superopts */
		k = split(line, n, ' ', f, fl, FIELDS_MAX);
		for (dash = 6; dash < k; dash++)
			if (field_is(f[dash], fl[dash], "-"))
				break;
		if (k < 7 || dash + 3 >= k) {
			bad++;
			continue;
		}
		if (!copy_unescape(mp, sizeof(mp), f[4], fl[4]))
			continue;
		if (field_is(f[dash + 1], fl[dash + 1], "cgroup2")) {
			if (m->v2[0] == '\0')
				memcpy(m->v2, mp, strlen(mp) + 1);
			continue;
		}
		if (!field_is(f[dash + 1], fl[dash + 1], "cgroup") ||
		    !field_is(f[3], fl[3], "/"))
			continue;
		for (i = 0; i < GK_CG__CTLS; i++)
			if (m->v1[i][0] == '\0' && has_option(f[dash + 3],
			    fl[dash + 3], ctl_names[i]))
				memcpy(m->v1[i], mp, strlen(mp) + 1);
	}
	return bad;
}

size_t
gk_cg_self_parse(const char *text, size_t len, struct gk_cg_self *s)
{
	const char *line, *c1, *c2;
	size_t off = 0, n, plen, bad = 0, i;

	memset(s, 0, sizeof(*s));
	while (next_line(text, len, &off, &line, &n)) {
		if (n == 0)
			continue;
		if ((c1 = memchr(line, ':', n)) == NULL ||
		    (c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line))) ==
		    NULL) {
			bad++;
			continue;
		}
		plen = n - (size_t)(c2 + 1 - line);
		if (plen == 0 || plen >= GK_CG_PATH_MAX || c2[1] != '/' ||
		    memchr(c2 + 1, '\0', plen) != NULL) {
			bad++;
			continue;
		}
		if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
			memcpy(s->v2, c2 + 1, plen);
			s->v2[plen] = '\0';
			continue;
		}
		for (i = 0; i < GK_CG__CTLS; i++) {
			if (s->v1[i][0] == '\0' && has_option(c1 + 1,
			    (size_t)(c2 - c1 - 1), ctl_names[i])) {
				memcpy(s->v1[i], c2 + 1, plen);
				s->v1[i][plen] = '\0';
			}
		}
	}
	return bad;
}

/* Digits only, at most 19 of them. */
static bool
number(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 19)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

int
gk_cg_counter(const char *text, size_t len, const char *key, uint64_t *out)
{
	const char *line, *f[3];
	size_t off = 0, n, fl[3];

	while (next_line(text, len, &off, &line, &n)) {
		if (split(line, n, ' ', f, fl, 3) != 2 ||
		    !field_is(f[0], fl[0], key))
			continue;
		return number(f[1], fl[1], out) ? 0 : -1;
	}
	return -1;
}

int
gk_proc_stat_parse(const char *text, size_t len, pid_t *ppid,
    uint64_t *start)
{
	const char *p, *f[FIELDS_MAX * 2];
	size_t i, fl[FIELDS_MAX * 2], k;
	uint64_t v;

	/* "pid (comm) state ppid ...": the fields after the last ')' */
	for (p = NULL, i = 0; i < len; i++)
		if (text[i] == ')')
			p = text + i;
	if (p == NULL)
		return -1;
	k = split(p + 1, len - (size_t)(p + 1 - text), ' ', f, fl,
	    FIELDS_MAX * 2);
	/* f[0] is field 3 (state): ppid is f[1], starttime (22) f[19] */
	if (k < 20 || !number(f[1], fl[1], &v) || v > 0x7fffffff)
		return -1;
	*ppid = (pid_t)v;
	if (fl[19] > 0 && f[19][fl[19] - 1] == '\n')
		fl[19]--;
	if (!number(f[19], fl[19], start))
		return -1;
	return 0;
}

bool
gk_cg_name(char *buf, size_t len, const char *id,
    const struct gk_cg_owner *o)
{
	int n;

	n = snprintf(buf, len, "cage-%s-%llu-%d-%llu", id,
	    (unsigned long long)o->pidns, (int)o->pid,
	    (unsigned long long)o->start);
	return n > 0 && (size_t)n < len && (size_t)n <= GK_CG_NAME_MAX;
}

bool
gk_cg_name_parse(const char *name, char *id, size_t idlen,
    struct gk_cg_owner *o)
{
	const char *p = name, *d1, *d2, *d3;
	size_t n = strnlen(name, GK_CG_NAME_MAX + 1), i;
	uint64_t v;

	if (n > GK_CG_NAME_MAX || strncmp(p, "cage-", 5) != 0)
		return false;
	p += 5;
	if ((d1 = strchr(p, '-')) == NULL || (d2 = strchr(d1 + 1, '-')) ==
	    NULL || (d3 = strchr(d2 + 1, '-')) == NULL || d1 == p ||
	    (size_t)(d1 - p) >= idlen)
		return false;
	for (i = 0; p + i < d1; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' &&
		    p[i] <= '9')))
			return false;
	if (!number(d1 + 1, (size_t)(d2 - d1 - 1), &o->pidns) ||
	    !number(d2 + 1, (size_t)(d3 - d2 - 1), &v) || v == 0 ||
	    v > 0x7fffffff || !number(d3 + 1, strlen(d3 + 1), &o->start))
		return false;
	o->pid = (pid_t)v;
	memcpy(id, p, (size_t)(d1 - p));
	id[d1 - p] = '\0';
	return true;
}

size_t
gk_cg_unscope(const char *dir)
{
	size_t n = strlen(dir), k = sizeof(GK_CG_SCOPE) - 1;

	return n > k && strcmp(dir + n - k, GK_CG_SCOPE) == 0 ? n - k : 0;
}

bool
gk_cg_in_unit(const char *path, const char *unit, char *out, size_t len)
{
	size_t ul = strlen(unit), end;
	const char *at;

	if (ul == 0)
		return false;
	for (at = strstr(path, unit); at != NULL; at = strstr(at + 1, unit)) {
		if (at == path || at[-1] != '/' ||
		    (at[ul] != '\0' && at[ul] != '/'))
			continue;
		end = (size_t)(at - path) + ul;
		if (end >= len)
			return false;
		memcpy(out, path, end);
		out[end] = '\0';
		return true;
	}
	return false;
}
