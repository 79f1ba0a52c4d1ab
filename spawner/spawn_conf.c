/*
 * spawn_conf: the configuration files' parser (spawn_conf.h).
 */
#include <stdio.h>
#include <string.h>

#include "spawner/spawn_conf.h"

static const struct {
	const char	*name;
	bool		 path;		/* its value is a path */
} directives[] = {
	{ "hide", true }, { "ro", true }, { "rw", true },
	{ "preset", false }, { "pass-env", false },
};

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line [s, e), numbered n. */
static int
conf_line(const char *b, size_t s, size_t e, unsigned n, spawn_conf_cb cb,
    void *arg, char *err, size_t errlen)
{
	size_t ks, ke, i;

	while (s < e && blank(b[s]))
		s++;
	while (e > s && blank(b[e - 1]))
		e--;
	if (s == e || b[s] == '#')
		return 0;
	for (ks = s, ke = s; ke < e && !blank(b[ke]); ke++)
		;
	for (s = ke; s < e && blank(b[s]); s++)
		;
	for (i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
		if (strlen(directives[i].name) == ke - ks &&
		    memcmp(directives[i].name, b + ks, ke - ks) == 0)
			break;
	if (i == sizeof(directives) / sizeof(directives[0])) {
		snprintf(err, errlen, "%u: unknown directive '%.*s' (hide, ro, "
		    "rw, preset, pass-env)", n, (int)(ke - ks > 40 ? 40 :
		    ke - ks), b + ks);
		return -1;
	}
	if (s == e) {
		snprintf(err, errlen, "%u: %s needs a value", n,
		    directives[i].name);
		return -1;
	}
	if (directives[i].path && b[s] != '/' &&
	    !(e - s >= 2 && b[s] == '~' && b[s + 1] == '/')) {
		snprintf(err, errlen, "%u: %s: a path is absolute or starts "
		    "with ~/", n, directives[i].name);
		return -1;
	}
	return cb(arg, directives[i].name, b + s, e - s, n, err, errlen) ?
	    0 : -1;
}

int
spawn_conf_parse(const char *buf, size_t len, spawn_conf_cb cb, void *arg,
    char *err, size_t errlen)
{
	size_t s, e;
	unsigned n = 0;

	if (len > SPAWN_CONF_MAX) {
		snprintf(err, errlen, "0: over %d bytes", SPAWN_CONF_MAX);
		return -1;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "0: a NUL byte: not a text file");
		return -1;
	}
	for (s = 0; s < len; s = e + 1) {
		for (e = s; e < len && buf[e] != '\n'; e++)
			;
		n++;
		if (e - s > SPAWN_CONF_LINE_MAX) {
			snprintf(err, errlen, "%u: a line over %d bytes", n,
			    SPAWN_CONF_LINE_MAX);
			return -1;
		}
		if (conf_line(buf, s, e, n, cb, arg, err, errlen) == -1)
			return -1;
	}
	return 0;
}
