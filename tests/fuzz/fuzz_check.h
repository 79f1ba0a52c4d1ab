/*
 * fuzz_check.h: what the fuzz targets share: the entry point libFuzzer
 * (or fuzz_main.c's replay) calls, and CHECK, an invariant that aborts
 * with its file, line and text when it fails (in every build, NDEBUG or
 * not: a fuzz target's invariants are its point).
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

/*
 * Text for a person: a NUL within the first max bytes of s, and every
 * byte before it printable ASCII. Returns its length.
 */
static inline size_t
fuzz_printable(const char *s, size_t max)
{
	size_t i, n = strnlen(s, max);

	CHECK(n < max);
	for (i = 0; i < n; i++)
		CHECK(s[i] >= 0x20 && s[i] < 0x7f);
	return n;
}

/* One '\n'-ended field of an input: its bytes (not NUL-terminated). */
struct fuzz_field {
	const char	*s;
	size_t		 n;
};

/* The field at *pos of data[0..size) ("" past its end); *pos moves on. */
static inline struct fuzz_field
fuzz_next_field(const uint8_t *data, size_t size, size_t *pos)
{
	const uint8_t *nl;
	struct fuzz_field f = { "", 0 };

	if (*pos >= size)
		return f;
	nl = memchr(data + *pos, '\n', size - *pos);
	f.s = (const char *)data + *pos;
	f.n = nl != NULL ? (size_t)(nl - (data + *pos)) : size - *pos;
	*pos += f.n + 1;
	return f;
}

#endif /* FUZZ_CHECK_H */
