/*
 * What the spawner's filesystem tests share (test_spawn_cache.c, the tool
 * caches; test_spawn_guard.c, the guarded git files): a real directory to
 * plan against, made under /var/tmp (not /tmp, which gk-run shows fresh
 * inside, wherever the tree is), which is also HOME.
 */
#ifndef SPAWN_TESTUTIL_H
#define SPAWN_TESTUTIL_H

#include <stddef.h>

/*
 * A fresh /var/tmp/PREFIX.XXXXXX, its real path in dir (len bytes); HOME
 * points at it, GK_RUN_CACHE and XDG_RUNTIME_DIR are unset. Fails the
 * test on any error.
 */
void	spawn_test_home(const char *prefix, char *dir, size_t len);
/* rm -rf dir (made by spawn_test_home). */
void	spawn_test_home_remove(const char *dir);

#endif /* SPAWN_TESTUTIL_H */
