/*
 * Small helpers shared by the builders: a vector of owned strings, a
 * growable string, lines from a stream, a printable copy of a string, and
 * a message into the caller's buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"

static int
strv_grow(struct spawn_strv *sv)
{
	char **v;
	size_t cap;

	if (sv->n + 2 <= sv->cap)
		return 0;
	cap = sv->cap == 0 ? 16 : sv->cap * 2;
	if ((v = reallocarray(sv->v, cap, sizeof(*v))) == NULL) {
		sv->nomem = true;
		return -1;
	}
	sv->v = v;
	sv->cap = cap;
	return 0;
}

static int
strv_take(struct spawn_strv *sv, char *s)
{
	if (s == NULL || strv_grow(sv) == -1) {
		free(s);
		sv->nomem = true;
		errno = ENOMEM;
		return -1;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

int
spawn_strv_push(struct spawn_strv *sv, const char *s)
{
	return strv_take(sv, strdup(s));
}

int
spawn_strv_pushn(struct spawn_strv *sv, const char *s, size_t len)
{
	return strv_take(sv, strndup(s, len));
}

int
spawn_strv_pushf(struct spawn_strv *sv, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return strv_take(sv, r == -1 ? NULL : s);
}

void
spawn_strv_clear(struct spawn_strv *sv)
{
	size_t i;

	if (sv == NULL)
		return;
	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

void
spawn_buf_putn(struct spawn_buf *b, const char *s, size_t n)
{
	char *ns;
	size_t cap;

	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		cap = b->cap == 0 ? 256 : b->cap;
		while (cap < b->n + n + 1)
			cap *= 2;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->nomem = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void
spawn_buf_puts(struct spawn_buf *b, const char *s)
{
	spawn_buf_putn(b, s, strlen(s));
}

void
spawn_lines_reset(struct spawn_lines *l)
{
	l->len = 0;
	l->skip = false;
}

void
spawn_lines_feed(struct spawn_lines *l, const char *p, size_t n,
    spawn_line_cb cb, void *arg)
{
	const char *nl;
	size_t take;
	bool more;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		take = nl != NULL ? (size_t)(nl - p) : n;
		if (!l->skip && l->len + take <= l->cap) {
			memcpy(l->buf + l->len, p, take);
			l->len += take;
		} else
			l->skip = true;
		if (nl == NULL)
			return;
		if (l->skip)
			l->len = 0;
		l->buf[l->len] = '\0';
		more = cb(arg, l->buf, l->len, l->skip);
		spawn_lines_reset(l);
		if (!more)
			return;
		p = nl + 1;
		n -= take + 1;
	}
}

const char *
spawn_printable(const char *s, char *buf, size_t len)
{
	return gk_printable(s, buf, len);
}

