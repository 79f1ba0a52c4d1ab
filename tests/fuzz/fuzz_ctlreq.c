/*
 * Fuzz the control request parser. Invariants: on OK every string field
 * is NUL-terminated within its buffer, the op is a real one and the
 * allow strings have no embedded NUL; a credential has a valid name, a
 * placeholder and a value of cred_len printable bytes that differ, and
 * 1 to 32 hosts; on error the message is non-empty, NUL-terminated, and
 * nothing is left to free.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/policy/gk_ctlreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_cred(const struct gk_ctlreq *req)
{
	size_t i, n = strlen(req->cred_name);

	if (req->op != GK_CTL_OP_CAGE_CREDENTIAL) {
		assert(n == 0 && req->cred_value == NULL &&
		    req->cred_placeholder == NULL && req->hosts == NULL);
		return;
	}
	assert(n >= 1 && n <= GK_CTL_CRED_NAME_MAX);
	assert(req->cred_name[0] < '0' || req->cred_name[0] > '9');
	for (i = 0; i < n; i++)
		assert(req->cred_name[i] == '_' ||
		    (req->cred_name[i] >= '0' && req->cred_name[i] <= '9') ||
		    (req->cred_name[i] >= 'A' && req->cred_name[i] <= 'Z') ||
		    (req->cred_name[i] >= 'a' && req->cred_name[i] <= 'z'));
	assert(req->cred_len >= GK_CTL_CRED_MIN &&
	    req->cred_len <= GK_CTL_CRED_MAX);
	assert(strlen(req->cred_value) == req->cred_len);
	assert(strlen(req->cred_placeholder) == req->cred_len);
	assert(strcmp(req->cred_value, req->cred_placeholder) != 0);
	for (i = 0; i < req->cred_len; i++)
		assert(req->cred_value[i] > 0x20 && req->cred_value[i] < 0x7f &&
		    req->cred_placeholder[i] > 0x20 &&
		    req->cred_placeholder[i] < 0x7f);
	assert(req->nhosts >= 1 && req->nhosts <= GK_CTL_CRED_HOSTS_MAX);
	for (i = 0; i < req->nhosts; i++)
		assert(strlen(req->hosts[i]) >= 1 &&
		    strlen(req->hosts[i]) <= GK_PATTERN_MAX);
	assert(req->hosts[req->nhosts] == NULL);
}

/* create's command and mounts, destroy's end: bounded, as documented;
 * the canonical spec's hash computes. */
static void
check_life(const struct gk_ctlreq *req)
{
	char hex[65];
	size_t i;

	assert(req->ncommand <= GK_CTL_CMD_MAX &&
	    req->nmounts <= GK_CTL_MOUNTS_MAX);
	for (i = 0; i < req->ncommand; i++)
		assert(strlen(req->command[i]) <= GK_CTL_ARG_MAX);
	for (i = 0; i < req->nmounts; i++)
		assert(strlen(req->mounts[i]) <= GK_CTL_MOUNT_MAX &&
		    strchr(req->mounts[i], ':') != NULL);
	assert(!(req->exited && req->signal[0] != '\0'));
	assert(req->end_reason[0] == '\0' || req->exited ||
	    req->signal[0] != '\0');
	if (req->op == GK_CTL_OP_CAGE_CREATE) {
		assert(gk_ctlreq_spec_sha256(req, hex) == 0);
		assert(strlen(hex) == 64);
	}
}

static void
check_ok(const struct gk_ctlreq *req, size_t size)
{
	size_t i;

	assert(req->op > GK_CTL_OP_NONE && req->op < GK_CTL_OP__MAX);
	assert(memchr(req->id, '\0', sizeof(req->id)) != NULL);
	assert(memchr(req->source, '\0', sizeof(req->source)) != NULL);
	assert(memchr(req->label, '\0', sizeof(req->label)) != NULL);
	assert(strlen(req->id) == 0 || strlen(req->id) == GK_CAGE_ID_LEN);
	for (i = 0; req->label[i] != '\0'; i++)
		assert(req->label[i] >= 0x20 && req->label[i] <= 0x7e);
	if (req->op == GK_CTL_OP_CAGE_CREATE) {
		/* named by exactly one of a source and a namespace */
		assert((req->source[0] != '\0') != req->netns);
		assert(req->allow != NULL);
	}
	if (req->op == GK_CTL_OP_CAGE_UPDATE ||
	    req->op == GK_CTL_OP_CAGE_DESTROY)
		assert(strlen(req->id) == GK_CAGE_ID_LEN);
	assert(req->nallow <= GK_ALLOWLIST_MAX);
	for (i = 0; i < req->nallow; i++) {
		assert(req->allow[i] != NULL);
		assert(strlen(req->allow[i]) <= size);
	}
	assert(req->allow == NULL || req->allow[req->nallow] == NULL);
	check_cred(req);
	check_life(req);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gk_ctlreq req;
	char err[GK_CTL_ERRLEN];
	enum gk_ctl_status st;

	memset(err, 'X', sizeof(err));
	st = gk_ctlreq_parse(data, size, &req, err, sizeof(err));
	if (st == GK_CTL_OK) {
		check_ok(&req, size);
		gk_ctlreq_clear(&req);
		assert(req.allow == NULL && req.nallow == 0);
	} else {
		assert(memchr(err, '\0', sizeof(err)) != NULL);
		assert(err[0] != '\0');
		assert(req.op == GK_CTL_OP_NONE && req.allow == NULL);
		assert(req.cred_value == NULL && req.hosts == NULL);
	}
	return 0;
}
