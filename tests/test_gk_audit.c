/*
 * Audit log: one valid JSON object per line, with time, event, cage and
 * label, details merged in, and hostile strings escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gatekeeper/base/gk_addr.h"
#include "gatekeeper/state/gk_audit.h"
#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"

static char *
read_all(const char *path)
{
	static char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static json_object *
line_obj(char *text, int idx)
{
	char *save = NULL, *line;
	int i = 0;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), i++)
		if (i == idx)
			return json_tokener_parse(line);
	return NULL;
}

static const char *
field(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return NULL;
	return json_object_get_string(v);
}

static void
test_lines(void **state)
{
	char path[] = "/tmp/gkaudit.XXXXXX", err[256] = "", *text, copy[65536];
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *cage;
	struct gk_audit *a;
	struct gk_addr client;
	json_object *o, *d;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	a = gk_audit_open(NULL, path, err, sizeof(err));
	assert_non_null(a);
	gk_addr_parse("127.0.0.2", &client);
	/* a label may hold any printable byte: a quote, a backslash */
	assert_non_null(cage = gk_test_cage(t, &client, "quote\" back\\ x",
	    0, gk_allowlist_new(NULL, 0, err, sizeof(err)), NULL));

	d = json_object_new_object();
	json_object_object_add(d, "uid", json_object_new_int(1000));
	gk_audit_event(a, "cage.create", cage, d);
	gk_audit_dns_deny(a, cage, &client, "evil\x01.example", 1,
	    "no pattern shares a domain");
	gk_audit_event(a, "daemon.start", NULL, NULL);
	gk_audit_close(a);

	text = read_all(path);
	strcpy(copy, text);
	o = line_obj(copy, 0);
	assert_non_null(o);
	assert_string_equal(field(o, "event"), "cage.create");
	assert_string_equal(field(o, "cage"), gk_cage_id(cage));
	assert_string_equal(field(o, "label"), "quote\" back\\ x");
	assert_string_equal(field(o, "uid"), "1000");
	assert_int_equal(strlen(field(o, "time")), 24);
	json_object_put(o);

	strcpy(copy, text);
	o = line_obj(copy, 1);
	assert_non_null(o);
	assert_string_equal(field(o, "event"), "dns.deny");
	assert_string_equal(field(o, "name"), "evil\x01.example");
	assert_string_equal(field(o, "client"), "127.0.0.2");
	assert_string_equal(field(o, "reason"), "not_allowlisted");
	assert_string_equal(field(o, "qtype"), "1");
	json_object_put(o);

	strcpy(copy, text);
	o = line_obj(copy, 2);
	assert_non_null(o);
	assert_null(field(o, "cage"));
	json_object_put(o);
	unlink(path);
	gk_cage_table_free(t);
}

static int
count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)) != NULL; text++)
		n++;
	return n;
}

static void
test_deny_folding(void **state)
{
	char path[] = "/tmp/gkaudit.XXXXXX", err[256] = "", *text;
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_cage *cage, *other;
	struct gk_addr client, client2;
	struct gk_audit *a;
	int fd, i, folded = 0;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	a = gk_audit_open(NULL, path, err, sizeof(err));
	assert_non_null(a);
	gk_addr_parse("127.0.0.2", &client);
	gk_addr_parse("127.0.0.3", &client2);
	assert_non_null(cage = gk_test_cage(t, &client, NULL, 0,
	    gk_allowlist_new(NULL, 0, err, sizeof(err)), NULL));
	assert_non_null(other = gk_test_cage(t, &client2, NULL, 0,
	    gk_allowlist_new(NULL, 0, err, sizeof(err)), NULL));

	for (i = 0; i < 100; i++) {
		if (gk_audit_dns_deny_fold(a, cage, "evil.example", 1)) {
			folded++;
			continue;
		}
		gk_audit_dns_deny(a, cage, &client, "evil.example", 1, "why");
	}
	/* another cage, name or type is never folded into it */
	assert_false(gk_audit_dns_deny_fold(a, other, "evil.example", 1));
	assert_false(gk_audit_dns_deny_fold(a, cage, "evil.example", 28));
	assert_false(gk_audit_dns_deny_fold(a, cage, "evil2.example", 1));
	assert_int_equal(folded, 99);
	gk_audit_close(a);	/* writes the pending repeat count */

	text = read_all(path);
	assert_int_equal(count_lines(text, "\"event\":\"dns.deny\""), 2);
	assert_int_equal(count_lines(text, "\"why\":\"why\""), 1);
	assert_int_equal(count_lines(text, "\"repeated\":99}"), 1);
	unlink(path);
	gk_cage_table_free(t);
}

static void
test_open_errors(void **state)
{
	char err[256] = "";

	(void)state;
	assert_null(gk_audit_open(NULL, NULL, err, sizeof(err)));
	assert_null(gk_audit_open(NULL, "/nonexistent/dir/audit.log", err,
	    sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/dir/audit.log"));
	/* NULL audit is a no-op everywhere */
	gk_audit_event(NULL, "x", NULL, NULL);
	gk_audit_flush(NULL);
	gk_audit_close(NULL);
}

/* Allowed connections: none by default; 1 in N, the first of each N. */
static void
test_allowed_sampling(void **state)
{
	char path[] = "/tmp/gkaudit.XXXXXX", err[256] = "";
	struct gk_audit *a;
	size_t i, n;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(a = gk_audit_open(NULL, path, err, sizeof(err)));
	for (i = 0; i < 10; i++)
		assert_false(gk_audit_allowed_take(a));
	gk_audit_set_allowed(a, 1);
	for (i = 0; i < 10; i++)
		assert_true(gk_audit_allowed_take(a));
	gk_audit_set_allowed(a, 4);
	for (i = n = 0; i < 40; i++)
		n += gk_audit_allowed_take(a);
	assert_int_equal(n, 10);
	gk_audit_set_allowed(a, 0);
	assert_false(gk_audit_allowed_take(a));
	gk_audit_set_allowed(NULL, 1);
	assert_false(gk_audit_allowed_take(NULL));
	gk_audit_close(a);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_deny_folding),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_allowed_sampling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
