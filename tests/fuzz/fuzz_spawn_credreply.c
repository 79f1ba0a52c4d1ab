/*
 * Fuzz gk-run's parsers of --credential's material: gatekeeperd's reply
 * to cage.credential (spawn_cred_reply) and the certificates of a CA
 * bundle (spawn_pem_certs). Invariants: an accepted reply's CA is one PEM
 * certificate ending in a newline, within SPAWN_CA_MAX; a refusal is one
 * printable line; the certificates taken from a bundle are CERTIFICATE
 * blocks only, never longer than what they came from (plus newlines).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "spawner/spawn_cred.h"
#include "tests/fuzz/fuzz_check.h"

/* A line of the certificates taken: a marker of a CERTIFICATE or TRUSTED
 * CERTIFICATE block, or base64. */
static void
check_line(const char *s, size_t n)
{
	static const char *const markers[] = {
		"-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----",
		"-----BEGIN TRUSTED CERTIFICATE-----",
		"-----END TRUSTED CERTIFICATE-----", NULL,
	};
	size_t i;

	CHECK(n > 0);
	for (i = 0; markers[i] != NULL; i++)
		if (n == strlen(markers[i]) && memcmp(s, markers[i], n) == 0)
			return;
	for (i = 0; i < n; i++)
		CHECK((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '+' || s[i] == '/' || s[i] == '=');
}

static void
check_certs(const uint8_t *data, size_t size)
{
	struct spawn_buf b = { 0 };
	size_t n, lines = 0, i, start = 0;

	n = spawn_pem_certs((const char *)data, size, &b);
	CHECK(!b.nomem);
	CHECK((n == 0) == (b.s == NULL));
	if (b.s == NULL)
		return;
	CHECK(b.s[b.n - 1] == '\n');
	CHECK(strncmp(b.s, "-----BEGIN ", 11) == 0);
	for (i = 0; i < b.n; i++) {
		if (b.s[i] != '\n')
			continue;
		check_line(b.s + start, i - start);
		start = i + 1;
		lines++;
	}
	CHECK(b.n <= size + lines);
	free(b.s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[SPAWN_ERRLEN], ca[SPAWN_CA_MAX + 1];
	size_t n;

	err[0] = '\0';
	if (spawn_cred_reply((const char *)data, size, "GITHUB_TOKEN", ca,
	    sizeof(ca), err, sizeof(err)) == 0) {
		n = strnlen(ca, sizeof(ca));
		CHECK(n < sizeof(ca) && n > 0 && ca[n - 1] == '\n');
		CHECK(spawn_pem_cert(ca, n));
	} else {
		CHECK(err[0] != '\0');
		CHECK(fuzz_printable(err, sizeof(err)) > 0);
	}
	check_certs(data, size);
	return 0;
}
