/*
 * gk_time: the monotonic clocks. Cage pins, the DNS cache and the
 * proxies' pin checks must all read the same clock: gk_now(). Deadlines
 * and timeouts (the relay's idle timer, netlink waits, gk-run's waits)
 * use the precise one, gk_clock_ms().
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

/* Milliseconds, precise (CLOCK_MONOTONIC): for deadlines. */
static inline uint64_t
gk_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
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

#endif /* GK_TIME_H */
