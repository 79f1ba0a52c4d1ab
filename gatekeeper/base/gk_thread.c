#include <signal.h>

#include "gatekeeper/base/gk_thread.h"

int
gk_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, bool detached)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0 && detached)
		(void)pthread_detach(*t);
	return rc;
}
