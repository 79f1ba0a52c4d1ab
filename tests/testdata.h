/*
 * Captured test data under tests/data (found through $GK_SRCDIR, which
 * meson sets; "." otherwise).
 */
#ifndef TESTDATA_H
#define TESTDATA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read tests/data/<dir>/<name> into buf. Fails the running cmocka test if
 * the file is missing, empty or does not fit in cap - 1 bytes (so a
 * capture that outgrew its buffer is noticed). Returns its length.
 */
size_t	test_data_load(const char *dir, const char *name, uint8_t *buf,
	    size_t cap);

/*
 * tests/data/tls/<name>.bin, a capture of TLS records: test_data_load,
 * and more than one record header (5 bytes) in it.
 */
size_t	test_tls_load(const char *name, uint8_t *buf, size_t cap);

#endif /* TESTDATA_H */
