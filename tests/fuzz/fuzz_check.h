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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#endif /* FUZZ_CHECK_H */
