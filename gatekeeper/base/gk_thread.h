/*
 * gk_thread: a helper thread that takes no signal. gatekeeperd's loop
 * and gk-run's main thread read their signals from a signalfd; a signal
 * sent to the process must never be taken by one of their threads.
 */
#ifndef GK_THREAD_H
#define GK_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/*
 * fn(arg) on a new thread with every signal blocked (the caller's mask
 * is left as it was), detached when asked: 0, or pthread_create's error
 * (t is then unset).
 */
int	gk_thread_start(pthread_t *t, void *(*fn)(void *), void *arg,
	    bool detached);

#endif /* GK_THREAD_H */
