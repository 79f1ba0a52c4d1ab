/*
 * --learn FILE at the end of the run: what a learning cage told gk-run
 * (spawn_run.c keeps "host\tport" per name and port used, port 0 for a
 * lookup) written as an allow-file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spawner/spawn_int.h"

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One pattern per name and port used (host:port), or the name alone when
 * it was only looked up. */
static void
learned_lines(const struct spawn_strv *learned, struct spawn_strv *lines)
{
	char *const *v = learned->v;
	size_t i, j, hl;
	bool connected;
	char *tab;

	for (i = 0; i < learned->n; i++) {
		tab = strchr(v[i], '\t');
		hl = (size_t)(tab - v[i]);
		if (strcmp(tab + 1, "0") != 0) {
			spawn_strv_pushf(lines, "%.*s:%s", (int)hl, v[i],
			    tab + 1);
			continue;
		}
		/* a lookup: the name alone, unless a connection names it */
		connected = false;
		for (j = 0; j < learned->n && !connected; j++)
			connected = strncmp(v[j], v[i], hl + 1) == 0 &&
			    strcmp(v[j] + hl + 1, "0") != 0;
		if (!connected)
			spawn_strv_pushf(lines, "%.*s", (int)hl, v[i]);
	}
	qsort(lines->v, lines->n, sizeof(lines->v[0]), str_cmp);
}

void
spawn_learn_write(const struct spawn_hostfile *h,
    const struct spawn_strv *learned, bool more, char *const cmd[], int ncmd)
{
	struct spawn_strv lines = { 0 };
	char label[SPAWN_LABEL_MAX + 1], tmp[NAME_MAX + 1], ts[32];
	const char *path = h->arg;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	FILE *f;

	learned_lines(learned, &lines);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	spawn_cage_label(cmd, ncmd, label);
	/* beside the file, in the directory opened at the start */
	if ((f = spawn_hostfile_tmp(h, tmp, sizeof(tmp))) == NULL) {
		fprintf(stderr, "gk-run: --learn %s: %s; nothing written\n",
		    path, strerror(errno));
		spawn_strv_clear(&lines);
		return;
	}
	fprintf(f, "# learned by gk-run --learn on %s for: %s\n"
	    "# %zu entries%s; use with: gk-run --allow-file %s -- ...\n",
	    ts, label + (strncmp(label, "gk-run: ", 8) == 0 ? 8 : 0),
	    lines.n, more ? " (and more gatekeeperd did not tell)" : "", path);
	for (i = 0; i < lines.n; i++)
		if (i == 0 || strcmp(lines.v[i], lines.v[i - 1]) != 0)
			fprintf(f, "%s\n", lines.v[i]);
	if (spawn_hostfile_commit(h, f, tmp) == -1)
		fprintf(stderr, "gk-run: --learn %s: %s; nothing written\n",
		    path, strerror(errno));
	else
		fprintf(stderr, "gk-run: --learn: %zu entries written to %s "
		    "(run again with --allow-file %s)\n", lines.n, path, path);
	spawn_strv_clear(&lines);
}
