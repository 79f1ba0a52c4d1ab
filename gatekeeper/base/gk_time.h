/*
 * gk_time: the daemon's monotonic clock. Cage pins, the DNS cache and the
 * proxies' pin checks must all read the same clock: this one.
 */
#ifndef GK_TIME_H
#define GK_TIME_H

#include <stdint.h>
#include <time.h>

/* Seconds (coarse: a few ms of resolution, no syscall). */
static inline time_t
gk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

/* Milliseconds, same clock. */
static inline uint64_t
gk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif /* GK_TIME_H */
