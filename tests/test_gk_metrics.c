/*
 * Metrics rendering: every contract name present, per-cage series exactly
 * while the cage lives, counters as set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "gatekeeper/policy/gk_policy.h"
#include "gatekeeper/cage/gk_cage.h"
#include "tests/cage_testutil.h"
#include "gatekeeper/faces/gk_metrics.h"
#include "gatekeeper/state/gk_stats.h"

static char *
render(const struct gk_cage_table *t)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *s;

	gk_metrics_render(b, t);
	n = evbuffer_get_length(b);
	s = malloc(n + 1);
	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

static void
test_contract_names(void **state)
{
	static const char *names[] = {
		"# TYPE gatekeeper_cages gauge",
		"gatekeeper_build_info{version=\"",
		"gatekeeper_dns_queries_total{verdict=\"allowed\"}",
		"gatekeeper_dns_queries_total{verdict=\"denied\"}",
		"gatekeeper_dns_queries_total{verdict=\"refused\"}",
		"gatekeeper_dns_cache_hits_total ",
		"gatekeeper_dns_cache_misses_total ",
		"gatekeeper_dns_upstream_errors_total ",
		"gatekeeper_connections_total{proto=\"socks5\",verdict=\"denied\"}",
		"gatekeeper_denied_total{kind=\"dns\",reason=\"not_allowlisted\"}",
		"gatekeeper_denied_total{kind=\"socks5\",reason=\"sni_mismatch\"}",
		"gatekeeper_bytes_total{direction=\"upstream\"}",
		"gatekeeper_active_tunnels ",
		"process_cpu_seconds_total ",
		"process_resident_memory_bytes ",
		"process_open_fds ",
		"process_max_fds ",
		"process_start_time_seconds ",
	};
	struct gk_cage_table *t = gk_cage_table_new();
	char *s;
	size_t i;

	(void)state;
	s = render(t);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(s, names[i]) == NULL)
			fail_msg("missing %s", names[i]);
	free(s);
	gk_cage_table_free(t);
}

static void
test_counters_and_label_series(void **state)
{
	const char *allow[] = { "*.github.com" };
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_allowlist *al;
	enum gk_cage_err e;
	struct gk_addr src;
	struct gk_cage *c;
	char err[256], *s;
	int i;

	(void)state;
	gk_stats.denied[GK_KIND_DNS][GK_REASON_NOT_ALLOWLISTED] = 41;
	al = gk_allowlist_new(allow, 1, err, sizeof(err));
	assert_non_null(al);
	gk_addr_parse("127.0.0.2", &src);
	c = gk_test_cage(t, &src, "m", 0, al, &e);
	assert_non_null(c);
	for (i = 0; i < 7; i++)
		gk_cage_count(c, GK_TALLY_DENIED, GK_KIND_DNS);

	s = render(t);
	assert_non_null(strstr(s, "gatekeeper_denied_total{kind=\"dns\","
	    "reason=\"not_allowlisted\"} 41\n"));
	assert_non_null(strstr(s, "gatekeeper_cages 1\n"));
	/* the label's series counts them; no series names a cage id */
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label=\"m\","
	    "kind=\"dns\"} 7\n"));
	assert_null(strstr(s, "gatekeeper_cage_denied_total"));
	assert_null(strstr(s, gk_cage_id(c)));
	free(s);

	gk_cage_end(c, "test");
	s = render(t);
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label=\"m\","
	    "kind=\"dns\"} 7\n"));
	assert_non_null(strstr(s, "gatekeeper_cages 0\n"));
	/* global counters survive the cage */
	assert_non_null(strstr(s, "reason=\"not_allowlisted\"} 41\n"));
	free(s);
	gk_cage_table_free(t);
}

/* Buckets hold what is at or below their bound, cumulatively at render;
 * sum and count follow. */
static void
test_histograms(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	struct gk_hist *h = &gk_stats.dns_answer[GK_DNSV_DENIED];
	char *s;

	(void)state;
	memset(h, 0, sizeof(*h));
	gk_hist_observe(h, 40);		/* <= 100 us */
	gk_hist_observe(h, 100);	/* on the bound: in it */
	gk_hist_observe(h, 101);	/* <= 250 us */
	gk_hist_observe(h, 3000000);	/* <= 10 s */
	gk_hist_observe(h, 20000000);	/* +Inf */
	assert_int_equal(h->le[0], 2);
	assert_int_equal(h->le[1], 1);
	assert_int_equal(h->le[GK_HIST_BOUNDS - 1], 1);
	assert_int_equal(h->le[GK_HIST_BOUNDS], 1);
	gk_hist_observe(&gk_stats.upstream_connect, 1500);
	s = render(t);
	assert_non_null(strstr(s, "# TYPE gatekeeper_dns_answer_seconds "
	    "histogram\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_bucket{"
	    "verdict=\"denied\",le=\"0.0001\"} 2\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_bucket{"
	    "verdict=\"denied\",le=\"0.00025\"} 3\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_bucket{"
	    "verdict=\"denied\",le=\"2.5\"} 3\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_bucket{"
	    "verdict=\"denied\",le=\"10\"} 4\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_bucket{"
	    "verdict=\"denied\",le=\"+Inf\"} 5\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_sum{"
	    "verdict=\"denied\"} 23.000241\n"));
	assert_non_null(strstr(s, "gatekeeper_dns_answer_seconds_count{"
	    "verdict=\"denied\"} 5\n"));
	assert_non_null(strstr(s, "gatekeeper_upstream_connect_seconds_bucket{"
	    "le=\"0.001\"} 0\n"));
	assert_non_null(strstr(s, "gatekeeper_upstream_connect_seconds_bucket{"
	    "le=\"0.0025\"} 1\n"));
	assert_non_null(strstr(s, "gatekeeper_upstream_connect_seconds_count "
	    "1\n"));
	free(s);
	gk_cage_table_free(t);
}

/* Denials by label: one series per label, kept, escaped; past the
 * bound, folded into "_other". */
static void
test_label_series(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	char label[32], *s;
	size_t i;

	(void)state;
	memset(&gk_stats, 0, sizeof(gk_stats));	/* no label before */
	gk_stats_label_denied("gk-run: npm", GK_KIND_HTTP);
	gk_stats_label_denied("gk-run: npm", GK_KIND_HTTP);
	gk_stats_label_denied("gk-run: npm", GK_KIND_DNS);
	gk_stats_label_denied("say \"hi\" \\", GK_KIND_SOCKS);
	for (i = 0; i < GK_LABEL_SERIES_MAX + 5; i++) {
		snprintf(label, sizeof(label), "job-%zu", i);
		gk_stats_label_denied(label, GK_KIND_TRANSPARENT);
	}
	assert_int_equal(gk_stats.nlabels, GK_LABEL_SERIES_MAX);
	s = render(t);
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label="
	    "\"gk-run: npm\",kind=\"http\"} 2\n"));
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label="
	    "\"gk-run: npm\",kind=\"dns\"} 1\n"));
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label="
	    "\"say \\\"hi\\\" \\\\\",kind=\"socks5\"} 1\n"));
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label="
	    "\"job-0\",kind=\"transparent\"} 1\n"));
	/* 2 labels before them: 62 job labels fit, 7 are folded */
	assert_null(strstr(s, "label=\"job-62\""));
	assert_non_null(strstr(s, "gatekeeper_label_denied_total{label="
	    "\"_other\",kind=\"transparent\"} 7\n"));
	free(s);
	gk_cage_table_free(t);
}

/* Traffic by host: bytes each way and tunnels per host, escaped; past
 * the bound, folded into "_other". */
static void
test_host_series(void **state)
{
	struct gk_cage_table *t = gk_cage_table_new();
	char host[32], *s;
	size_t i;

	(void)state;
	memset(&gk_stats, 0, sizeof(gk_stats));
	gk_stats_host_tunnel("github.com", 100, 2000);
	gk_stats_host_tunnel("github.com", 5, 7);
	gk_stats_host_tunnel("a\"b", 1, 1);
	for (i = 0; i < GK_HOST_SERIES_MAX + 3; i++) {
		snprintf(host, sizeof(host), "h%zu.example", i);
		gk_stats_host_tunnel(host, 10, 1);
	}
	assert_int_equal(gk_stats.nhosts, GK_HOST_SERIES_MAX);
	s = render(t);
	assert_non_null(strstr(s, "# TYPE gatekeeper_host_bytes_total "
	    "counter\n"));
	assert_non_null(strstr(s, "# TYPE gatekeeper_host_connections_total "
	    "counter\n"));
	assert_non_null(strstr(s, "gatekeeper_host_bytes_total{host="
	    "\"github.com\",direction=\"upstream\"} 105\n"));
	assert_non_null(strstr(s, "gatekeeper_host_bytes_total{host="
	    "\"github.com\",direction=\"downstream\"} 2007\n"));
	assert_non_null(strstr(s, "gatekeeper_host_connections_total{host="
	    "\"github.com\"} 2\n"));
	assert_non_null(strstr(s, "gatekeeper_host_connections_total{host="
	    "\"a\\\"b\"} 1\n"));
	/* 2 hosts before them: 62 fit, 5 are folded */
	assert_null(strstr(s, "host=\"h62.example\""));
	assert_non_null(strstr(s, "gatekeeper_host_bytes_total{host="
	    "\"_other\",direction=\"upstream\"} 50\n"));
	assert_non_null(strstr(s, "gatekeeper_host_connections_total{host="
	    "\"_other\"} 5\n"));
	free(s);
	gk_cage_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contract_names),
		cmocka_unit_test(test_counters_and_label_series),
		cmocka_unit_test(test_histograms),
		cmocka_unit_test(test_label_series),
		cmocka_unit_test(test_host_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
