/*
 * Fuzz the control request parser. Invariants: on OK every string field
 * is NUL-terminated within its buffer, the op is a real one and the
 * allow strings have no embedded NUL; on error the message is non-empty,
 * NUL-terminated, and nothing is left to free.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gatekeeper/policy/gk_ctlreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	}
	return 0;
}
