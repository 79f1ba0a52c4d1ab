/*
 * Fuzz gk-run's parser for gatekeeperd's cage.create reply. Invariants:
 * an accepted reply has an id, an IP literal gateway and "ip:port" proxy
 * endpoints, all printable with no white space (they end up in
 * resolv.conf and proxy variables); a refusal is one printable line.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawner/spawn.h"
#include "tests/fuzz/fuzz_check.h"

static void
check_word(const char *s, size_t max, bool empty_ok)
{
	size_t i, n = strnlen(s, max);

	CHECK(n < max);
	CHECK(empty_ok || n > 0);
	for (i = 0; i < n; i++)
		CHECK(s[i] > 0x20 && s[i] < 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spawn_cage c;
	unsigned char a[16];
	char err[SPAWN_ERRLEN];
	size_t i;

	err[0] = '\0';
	if (spawn_cage_reply((const char *)data, size, &c, err,
	    sizeof(err)) == 0) {
		check_word(c.id, sizeof(c.id), false);
		check_word(c.token, sizeof(c.token), true);
		check_word(c.gateway, sizeof(c.gateway), false);
		CHECK(inet_pton(AF_INET, c.gateway, a) == 1 ||
		    inet_pton(AF_INET6, c.gateway, a) == 1);
		check_word(c.socks, sizeof(c.socks), false);
		check_word(c.http, sizeof(c.http), false);
		check_word(c.dns, sizeof(c.dns), true);
		CHECK(strrchr(c.socks, ':') != NULL);
		CHECK(strrchr(c.http, ':') != NULL);
	} else {
		CHECK(err[0] != '\0');
		for (i = 0; err[i] != '\0'; i++)
			CHECK(err[i] >= 0x20 && err[i] < 0x7f);
	}
	return 0;
}
