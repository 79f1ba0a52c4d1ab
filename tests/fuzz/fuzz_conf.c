/*
 * Fuzz the config file parser: never crash; every reported error is a
 * "name:line: message" line.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/state/gk_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char errs[GK_CONF_ERRLEN];
	struct gk_conf c;
	int n;

	errs[0] = '\0';
	gk_conf_defaults(&c);
	n = gk_conf_parse_text(&c, "fuzz", (const char *)data, size, errs,
	    sizeof(errs));
	assert(n >= 0);
	assert(memchr(errs, '\0', sizeof(errs)) != NULL);
	assert(n == 0 || strncmp(errs, "fuzz:", 5) == 0);
	assert(c.nupstreams <= GK_CONF_MAX_UPSTREAMS);
	assert(c.ttl_cap >= 1 && c.ttl_cap <= 86400);
	assert(c.dns_port >= 1);
	return 0;
}
