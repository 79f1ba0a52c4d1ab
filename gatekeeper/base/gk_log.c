/*
 * gk_log: stderr logger with levels, in the manner of relayd's log.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "gatekeeper/base/gk_log.h"

static const char	*log_ident = "gatekeeperd";
static int		 log_level = LOG_LVL_INFO;

void
log_init(const char *ident, int level)
{
	if (ident != NULL)
		log_ident = ident;
	log_level = level;
}

void
log_setlevel(int level)
{
	log_level = level;
}

int
log_getlevel(void)
{
	return log_level;
}

int
log_level_parse(const char *s)
{
	static const char *names[] = { "error", "warn", "info", "debug" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i]) == 0)
			return (int)i;
	if (strcasecmp(s, "warning") == 0)
		return LOG_LVL_WARN;
	return -1;
}

/* One line, written at once: "ident: TAG[func: ]msg[: err]". */
static void
vlog(const char *tag, const char *func, const char *fmt, va_list ap,
    const char *err)
{
	char msg[2048];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = '\0';
	fprintf(stderr, "%s: %s%s%s%s%s%s\n", log_ident, tag,
	    func != NULL ? func : "", func != NULL ? ": " : "", msg,
	    err != NULL ? ": " : "", err != NULL ? err : "");
}

/* Warnings are for operators: the message alone, never the function. */
void
log_warn_(const char *func, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	(void)func;
	if (log_level < LOG_LVL_WARN)
		return;
	va_start(ap, fmt);
	vlog("", NULL, fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void
log_warnx_(const char *func, const char *fmt, ...)
{
	va_list ap;

	(void)func;
	if (log_level < LOG_LVL_WARN)
		return;
	va_start(ap, fmt);
	vlog("", NULL, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LVL_INFO)
		return;
	va_start(ap, fmt);
	vlog("", NULL, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug_(const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("debug: ", func, fmt, ap, NULL);
	va_end(ap);
}

void
fatal_(const char *func, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", func, fmt, ap, strerror(saved));
	va_end(ap);
	exit(1);
}

void
fatalx_(const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", func, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
