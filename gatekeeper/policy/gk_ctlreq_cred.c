/*
 * gk_ctlreq_cred: the values of a cage.credential request, checked and
 * copied (gk_ctlreq.c takes them out of the JSON): the environment
 * variable's name, the placeholder and its secret value, the hosts.
 * Messages quote the name, never the placeholder or the value, and the
 * value's copy is wiped before it is freed.
 */
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_ctlreq.h"
#include "gatekeeper/policy/gk_ctlreq_int.h"
#include "gatekeeper/policy/gk_policy.h"

#define QUOTE_MAX	48	/* bytes of a name quoted in a message */

enum gk_ctl_status
gk_ctlreq_cred_name(const char *s, size_t n, struct gk_ctlreq *out,
    char *err, size_t errlen)
{
	char q[QUOTE_MAX * 4 + 8];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (i > 0 && s[i] >= '0' && s[i] <= '9')))
			break;
	}
	if (n == 0 || n > GK_CTL_CRED_NAME_MAX || i != n) {
		gk_seterr(err, errlen, "invalid credential name '%s': the name "
		    "of an environment variable, [A-Za-z_][A-Za-z0-9_]*, at "
		    "most %d bytes", gk_escape(s, n, QUOTE_MAX, q, sizeof(q)),
		    GK_CTL_CRED_NAME_MAX);
		return GK_CTL_BAD_VALUE;
	}
	memcpy(out->cred_name, s, n);
	out->cred_name[n] = '\0';
	return GK_CTL_OK;
}

/* "placeholder" or "value": its length and bytes, never its text. */
static enum gk_ctl_status
cred_text(const char *field, const char *s, size_t n, char *err,
    size_t errlen)
{
	size_t i;

	if (n < GK_CTL_CRED_MIN || n > GK_CTL_CRED_MAX) {
		gk_seterr(err, errlen, "\"%s\" is %zu bytes; it must be %d to "
		    "%d", field, n, GK_CTL_CRED_MIN, GK_CTL_CRED_MAX);
		return GK_CTL_BAD_VALUE;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < 0x21 || s[i] > 0x7e) {
			gk_seterr(err, errlen, "\"%s\" has a byte that is not "
			    "printable ASCII or is a space at offset %zu; a "
			    "credential is printable ASCII without spaces",
			    field, i);
			return GK_CTL_BAD_VALUE;
		}
	}
	return GK_CTL_OK;
}

enum gk_ctl_status
gk_ctlreq_cred_pair(const char *ph, size_t phn, const char *val,
    size_t valn, struct gk_ctlreq *out, char *err, size_t errlen)
{
	enum gk_ctl_status st;

	if ((st = cred_text("placeholder", ph, phn, err, errlen)) !=
	    GK_CTL_OK ||
	    (st = cred_text("value", val, valn, err, errlen)) != GK_CTL_OK)
		return st;
	if (phn != valn) {
		gk_seterr(err, errlen, "\"placeholder\" is %zu bytes and "
		    "\"value\" %zu; a placeholder is as long as the value it "
		    "stands for", phn, valn);
		return GK_CTL_BAD_VALUE;
	}
	if (memcmp(ph, val, phn) == 0) {
		gk_seterr(err, errlen, "\"placeholder\" and \"value\" are the "
		    "same; the placeholder must not be the secret");
		return GK_CTL_BAD_VALUE;
	}
	if ((out->cred_placeholder = strndup(ph, phn)) == NULL ||
	    (out->cred_value = strndup(val, valn)) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return GK_CTL_NOMEM;
	}
	out->cred_len = phn;
	return GK_CTL_OK;
}

enum gk_ctl_status
gk_ctlreq_cred_hosts(const struct gk_ctlreq *req, char *err, size_t errlen)
{
	struct gk_pattern pat;
	size_t i, n;

	if (req->nhosts < 1 || req->nhosts > GK_CTL_CRED_HOSTS_MAX) {
		gk_seterr(err, errlen, "\"hosts\" has %zu patterns; a credential "
		    "is bound to 1 to %d", req->nhosts, GK_CTL_CRED_HOSTS_MAX);
		return GK_CTL_BAD_VALUE;
	}
	for (i = 0; i < req->nhosts; i++) {
		n = strlen(req->hosts[i]);
		if (n == 0 || n > GK_PATTERN_MAX) {
			gk_seterr(err, errlen, "hosts[%zu] is %zu bytes; a "
			    "pattern is 1 to %d", i, n, GK_PATTERN_MAX);
			return GK_CTL_BAD_VALUE;
		}
		if (gk_pattern_parse((const uint8_t *)req->hosts[i], n,
		    &pat) == GK_PAT_OK && pat.path[0] != '\0') {
			gk_seterr(err, errlen, "hosts[%zu] is a request rule "
			    "(methods and a path); a credential is bound to "
			    "host patterns", i);
			return GK_CTL_BAD_VALUE;
		}
	}
	return GK_CTL_OK;
}

void
gk_ctlreq_cred_clear(struct gk_ctlreq *req)
{
	size_t i;

	if (req->cred_value != NULL) {
		explicit_bzero(req->cred_value, strlen(req->cred_value));
		free(req->cred_value);
	}
	free(req->cred_placeholder);
	for (i = 0; i < req->nhosts; i++)
		free(req->hosts[i]);
	free(req->hosts);
	req->cred_value = req->cred_placeholder = NULL;
	req->hosts = NULL;
	req->nhosts = 0;
}
