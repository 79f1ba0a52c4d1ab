/*
 * Replays a fuzz target's corpus without a fuzzing engine: every file in
 * the directories (or the files) given is copied into an exact-size
 * allocation, so ASan catches any read past the end, and fed to
 * LLVMFuzzerTestOneInput. Exits non-zero if no input was found.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;
	size_t n;

	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &st) == -1) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	n = (size_t)st.st_size;
	buf = malloc(n == 0 ? 1 : n);
	if (buf == NULL || fread(buf, 1, n, f) != n) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* exact-size copy so reads past the end are caught */
	if (n > 0) {
		uint8_t *exact = malloc(n);
		if (exact == NULL) {
			free(buf);
			return -1;
		}
		memcpy(exact, buf, n);
		free(buf);
		buf = exact;
	}
	LLVMFuzzerTestOneInput(n == 0 ? NULL : buf, n);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	int i, count = 0, failed = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= run_file(argv[i]) == -1;
			count++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL)
			return 1;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			failed |= run_file(path) == -1;
			count++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "no corpus inputs found\n");
		return 1;
	}
	return failed ? 1 : 0;
}
