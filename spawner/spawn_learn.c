/*
 * --learn FILE at the end of the run: what a learning cage told gk-run
 * (spawn_learn_push: "host\tport" per name and port used, port 0 for a
 * lookup; "host\tport\tMETHOD\tpath" per request to an inspected host)
 * written as an allow-file: the names, then the request rules.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gatekeeper/policy/gk_reqlearn.h"
#include "spawner/spawn_int.h"

void
spawn_learn_push(struct spawn_strv *learned, const struct spawn_event *ev)
{
	if (ev->path[0] == '\0')
		spawn_strv_pushf(learned, "%s\t%u", ev->host, ev->port);
	else
		spawn_strv_pushf(learned, "%s\t%u\t%s\t%s", ev->host,
		    ev->port, ev->method, ev->path);
}

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
		if (strchr(tab + 1, '\t') != NULL)
			continue;	/* a request: learned_rules() */
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
	if (lines->n > 1)
		qsort(lines->v, lines->n, sizeof(lines->v[0]), str_cmp);
}

/* "host\tport\tMETHOD\tpath" into r (its path learnable again: what
 * gatekeeperd said is checked, not trusted); false if it is not one. */
static bool
learned_req(const char *e, struct gk_learned_req *r)
{
	char host[SPAWN_EVENT_HOST_MAX], m[16], path[SPAWN_EVENT_PATH_MAX];
	unsigned port;

	memset(r, 0, sizeof(*r));
	if (sscanf(e, "%255[^\t]\t%u\t%15[^\t]\t%255s", host, &port, m,
	    path) != 4 || port > 65535 || strlen(host) >= sizeof(r->host))
		return false;
	memcpy(r->host, host, strlen(host) + 1);
	r->port = (uint16_t)port;
	r->methods = gk_method_bit(m, strlen(m));
	return gk_reqlearn_path(m, strlen(m), path, strlen(path), r->path,
	    sizeof(r->path));
}

/* The request rules learned: one line each, in gk_reqlearn_merge's
 * order (by host, port and path), appended to lines. */
static void
learned_rules(const struct spawn_strv *learned, struct spawn_strv *lines)
{
	struct gk_learned_req *v;
	char text[GK_PATTERN_MAX + 1];
	size_t i, n = 0;

	if ((v = calloc(learned->n + 1, sizeof(*v))) == NULL) {
		lines->nomem = true;
		return;
	}
	for (i = 0; i < learned->n; i++)
		if (strchr(strchr(learned->v[i], '\t') + 1, '\t') != NULL &&
		    learned_req(learned->v[i], &v[n]))
			n++;
	n = gk_reqlearn_merge(v, n);
	for (i = 0; i < n; i++) {
		gk_reqlearn_format(&v[i], text, sizeof(text));
		spawn_strv_pushf(lines, "%s", text);
	}
	free(v);
}

char *
spawn_learn_next(int argc, char *const argv[], const char *file)
{
	struct spawn_strv words = { 0 };
	char *line = NULL;
	int c, li, at, i, from = 0;

	optind = 0;	/* glibc: full reinitialization */
	opterr = 0;
	for (;;) {
		at = optind == 0 ? 1 : optind;
		li = -1;
		if ((c = getopt_long(argc, argv, SPAWN_SHORTOPTS,
		    spawn_longopts, &li)) == -1)
			break;
		/* a long option is a word (or two) of its own */
		if (c == '?' || c == ':' || li < 0 ||
		    strcmp(spawn_longopts[li].name, "learn") != 0)
			continue;
		for (i = from; i < at; i++)
			spawn_strv_push(&words, argv[i]);
		spawn_strv_push(&words, "--allow-file");
		spawn_strv_push(&words, file);
		from = optind;
	}
	for (i = from; i < argc; i++)
		spawn_strv_push(&words, argv[i]);
	if (!words.nomem)
		line = spawn_shell_render(&words, NULL, 0);
	spawn_strv_clear(&words);
	return line;
}

/* "1 entry", "3 entries" */
static const char *
entries(size_t n)
{
	return n == 1 ? "entry" : "entries";
}

/* What was written, and the command to run next. */
static void
say_written(size_t n, const char *path, char *const argv[], int argc)
{
	char *next = argv != NULL ? spawn_learn_next(argc, argv, path) : NULL;

	if (next != NULL)
		fprintf(stderr, "gk-run: --learn: %zu %s written to %s; run "
		    "next: %s\n", n, entries(n), path, next);
	else
		fprintf(stderr, "gk-run: --learn: %zu %s written to %s (run "
		    "again with --allow-file %s)\n", n, entries(n), path, path);
	free(next);
}

void
spawn_learn_write(const struct spawn_hostfile *h,
    const struct spawn_strv *learned, bool more, char *const cmd[], int ncmd,
    char *const argv[], int argc)
{
	struct spawn_strv lines = { 0 };
	char label[SPAWN_LABEL_MAX + 1], tmp[NAME_MAX + 1], ts[32];
	const char *path = h->arg;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	FILE *f;

	learned_lines(learned, &lines);
	learned_rules(learned, &lines);
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
	    "# %zu %s%s; use with: gk-run --allow-file %s -- ...\n",
	    ts, label + (strncmp(label, "gk-run: ", 8) == 0 ? 8 : 0),
	    lines.n, entries(lines.n), more ? " (and more gatekeeperd did not "
	    "tell)" : "", path);
	for (i = 0; i < lines.n; i++)
		if (i == 0 || strcmp(lines.v[i], lines.v[i - 1]) != 0)
			fprintf(f, "%s\n", lines.v[i]);
	if (spawn_hostfile_commit(h, f, tmp) == -1)
		fprintf(stderr, "gk-run: --learn %s: %s; nothing written\n",
		    path, strerror(errno));
	else
		say_written(lines.n, path, argv, argc);
	spawn_strv_clear(&lines);
}
