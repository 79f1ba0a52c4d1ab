/*
 * gk_log: the daemon's one logging facility (stderr; journald captures it).
 * Info and warning lines are the message alone, for operators; debug and
 * fatal lines start with the calling function's name.
 */
#ifndef GK_LOG_H
#define GK_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

void	log_init(const char *ident, int level);
void	log_setlevel(int level);
int	log_getlevel(void);
/* Parse "error", "warn", "info", "debug"; -1 if unknown. */
int	log_level_parse(const char *s);

void	log_warn_(const char *func, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	log_warnx_(const char *func, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug_(const char *func, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	fatal_(const char *func, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3), noreturn));
void	fatalx_(const char *func, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3), noreturn));

#define log_warn(...)	log_warn_(__func__, __VA_ARGS__)
#define log_warnx(...)	log_warnx_(__func__, __VA_ARGS__)
#define log_debug(...)	do {						\
		if (log_getlevel() >= LOG_LVL_DEBUG)			\
			log_debug_(__func__, __VA_ARGS__);		\
	} while (0)
#define fatal(...)	fatal_(__func__, __VA_ARGS__)
#define fatalx(...)	fatalx_(__func__, __VA_ARGS__)

#endif /* GK_LOG_H */
