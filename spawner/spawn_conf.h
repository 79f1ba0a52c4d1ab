/*
 * spawn_conf: gk-run's configuration files, the system's
 * (/etc/gatekeeper/gk-run.conf) then the user's
 * (~/.config/gk-run/config): defaults that come before the command line's
 * options, one per line,
 *
 *   # a comment
 *   hide ~/.config/corp-vpn        more to hide
 *   ro ~/.claude                   one of the default hides, read-only
 *   rw ~/src/shared
 *   preset npm
 *   pass-env NPM_TOKEN
 *
 * A path is absolute or starts with "~/" ($HOME). The parser is a pure
 * function over a bounded buffer (test_spawn_conf, fuzz_spawn_conf).
 */
#ifndef SPAWN_CONF_H
#define SPAWN_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define SPAWN_CONF_MAX		(64 * 1024)	/* bytes of one file */
#define SPAWN_CONF_LINE_MAX	4096
#define SPAWN_CONF_SYSTEM	"/etc/gatekeeper/gk-run.conf"
#define SPAWN_CONF_USER		".config/gk-run/config"	/* in $HOME */

/* One directive: the option it stands for ("hide", "ro", "rw", "preset",
 * "pass-env") and its value (the line's bytes, not NUL-terminated; "~/"
 * not expanded). cb returns false to stop (then parse returns -1 with
 * err as cb set it). */
typedef bool	(*spawn_conf_cb)(void *arg, const char *opt, const char *val,
		    size_t vlen, unsigned line, char *err, size_t errlen);

/*
 * Parse buf[0, len): 0, or -1 with "LINE: why" in err (an unknown
 * directive, one without a value, a path neither absolute nor "~/...", a
 * NUL byte, a line over SPAWN_CONF_LINE_MAX, a file over SPAWN_CONF_MAX).
 */
int	spawn_conf_parse(const char *buf, size_t len, spawn_conf_cb cb,
	    void *arg, char *err, size_t errlen);

/*
 * argv with the configuration files' options first (spawn_confload.c):
 * argv[0], the system file's, the user's ("~/" expanded to home), then
 * argv[1...]; *nargc its length. A missing file is none; NULL with
 * "FILE:LINE: why" in err for a file that cannot be read or parsed (a
 * link as the user's file: an earlier run may have planted it).
 */
char	**spawn_conf_argv(int argc, char **argv, const char *home,
	    int *nargc, char *err, size_t errlen);

#endif /* SPAWN_CONF_H */
