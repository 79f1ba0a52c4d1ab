/*
 * gk_rlimits: a cage's resource limits as gk-run's options and the control
 * protocol carry them (--memory 256M, --pids 64, --cpus 1.5; "limits":
 * {"memory":268435456,"pids":64,"cpus":1.5}), and their text forms.
 * Pure: no I/O.
 */
#ifndef GK_RLIMITS_H
#define GK_RLIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GK_RLIM_MEMORY_MIN	(4ULL << 20)		/* 4 MiB */
#define GK_RLIM_MEMORY_MAX	(1ULL << 50)		/* 1 PiB */
#define GK_RLIM_PIDS_MAX	4194304			/* pid_max's top */
#define GK_RLIM_CPUS_MIN	10			/* 0.01 CPU */
#define GK_RLIM_CPUS_MAX	1024000			/* 1024 CPUs */
#define GK_RLIM_TEXT		32			/* "1023.99G" etc. */

struct gk_rlimits {
	uint64_t	 memory;	/* bytes; 0: none */
	uint32_t	 pids;		/* processes and threads; 0: none */
	uint32_t	 cpus;		/* thousandths of a CPU; 0: none */
};

bool		 gk_rlimits_any(const struct gk_rlimits *l);

/*
 * A size: digits, optionally a binary unit K, M, G or T (also KiB,
 * MiB... and KB, MB..., all powers of 1024; case-insensitive), e.g.
 * "256M", "1.5G" (a fraction with a unit), "67108864". Within
 * GK_RLIM_MEMORY_MIN..MAX. 0 or -1 with a message in err.
 */
int		 gk_size_parse(const char *s, size_t len, uint64_t *out,
		    char *err, size_t errlen);
/* The same within [min, max]. */
int		 gk_size_parse_in(const char *s, size_t len, uint64_t min,
		    uint64_t max, uint64_t *out, char *err, size_t errlen);
/* A CPU count: "2", "1.5", "0.25" (at most three decimals), within
 * 0.01..1024, in thousandths. 0 or -1 with err. */
int		 gk_cpus_parse(const char *s, size_t len, uint32_t *milli,
		    char *err, size_t errlen);
/* 268435456 -> "256M", 1610612736 -> "1.5G", 1000 -> "1000" (the
 * shortest exact form, up to 2 decimals); "" if len is too small. */
void		 gk_size_format(uint64_t v, char *buf, size_t len);
/* 1500 -> "1.5", 2000 -> "2", 250 -> "0.25". */
void		 gk_cpus_format(uint32_t milli, char *buf, size_t len);

#endif /* GK_RLIMITS_H */
