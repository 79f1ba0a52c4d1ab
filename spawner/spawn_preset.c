/*
 * spawn_preset: --preset NAME, a named allow-file of gk-run's own
 * ($GK_RUN_PRESETS, else "presets" next to this gk-run, the build
 * tree's, else the installed PRESETS_DIR), and --preset list.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "gatekeeper/base/gk_err.h"
#include "spawner/spawn_int.h"

#define PRESETS_MAX	64

static const char *
presets_dir(void)
{
	static char dir[PATH_MAX];
	struct stat sb;
	char *slash;
	ssize_t n;

	if (getenv("GK_RUN_PRESETS") != NULL && getenv("GK_RUN_PRESETS")[0])
		return getenv("GK_RUN_PRESETS");
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 16);
	if (n > 0) {
		dir[n] = '\0';
		if ((slash = strrchr(dir, '/')) != NULL) {
			strcpy(slash + 1, "presets");
			if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
				return dir;
		}
	}
	return PRESETS_DIR;
}

int
spawn_preset_load(const char *name, struct spawn_strv *allow, char *err,
    size_t errlen)
{
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.allow", presets_dir(), name);
	if (access(path, R_OK) == -1)
		return gk_seterr(err, errlen, "--preset %s: no such preset in "
		    "%s (gk-run --preset list shows them)", name,
		    presets_dir());
	if ((buf = spawn_read_file(path, SPAWN_ALLOWFILE_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	rc = spawn_allowfile_parse(buf, len, path, allow, err, errlen);
	free(buf);
	return rc == -1 ? -1 : 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
spawn_preset_list(FILE *out, char *err, size_t errlen)
{
	const char *dir = presets_dir();
	char *names[PRESETS_MAX];
	struct spawn_strv pats = { 0 };
	struct dirent *de;
	size_t n = 0, i, j, len;
	int rc = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return gk_seterr(err, errlen, "presets: %s: %s (is gatekeeper "
		    "installed?)", dir, strerror(errno));
	while ((de = readdir(d)) != NULL && n < PRESETS_MAX) {
		len = strlen(de->d_name);
		if (len > 6 && strcmp(de->d_name + len - 6, ".allow") == 0 &&
		    (names[n] = strndup(de->d_name, len - 6)) != NULL)
			n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(names[0]), name_cmp);
	fprintf(out, "Presets (%s; use with --preset NAME):\n", dir);
	for (i = 0; i < n; i++) {
		spawn_strv_clear(&pats);
		if (rc == 0 && (rc = spawn_preset_load(names[i], &pats, err,
		    errlen)) == 0) {
			fprintf(out, "  %-11s", names[i]);
			for (j = 0; j < pats.n; j++)
				fprintf(out, " %s", pats.v[j]);
			fputc('\n', out);
		}
		free(names[i]);
	}
	spawn_strv_clear(&pats);
	return rc;
}
