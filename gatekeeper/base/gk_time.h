/*
 * gk_time: the monotonic clocks. Cage pins, the DNS cache and the
 * proxies' pin checks must all read the same clock: gk_now(). Deadlines
 * and timeouts (the relay's idle timer, netlink waits, gk-run's waits)
 * use the precise one, gk_clock_ms().
 */
#ifndef GK_TIME_H
#define GK_TIME_H

#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define GK_UTC_STAMP_LEN	64

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

/* Milliseconds, precise (CLOCK_MONOTONIC): for deadlines. */
static inline uint64_t
gk_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Microseconds, precise (CLOCK_MONOTONIC): for latency histograms. */
static inline uint64_t
gk_clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Milliseconds until `deadline` (a gk_clock_ms() value): 0 once it has
 * passed, at most `max` (a poll(2) timeout fits in an int). */
static inline int
gk_ms_left(uint64_t deadline, int max)
{
	uint64_t now = gk_clock_ms();

	if (now >= deadline)
		return 0;
	return deadline - now > (uint64_t)max ? max : (int)(deadline - now);
}

/* Wall-clock milliseconds since the epoch. */
static inline int64_t
gk_wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* `ms` (gk_wall_ms()) in UTC to the millisecond,
 * "2026-11-25T10:00:00.123Z". */
static inline void
gk_utc_stamp_at(char *buf, size_t len, int64_t ms)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* Wall-clock now, the same way (audit lines, events). */
static inline void
gk_utc_stamp(char *buf, size_t len)
{
	gk_utc_stamp_at(buf, len, gk_wall_ms());
}

#endif /* GK_TIME_H */
