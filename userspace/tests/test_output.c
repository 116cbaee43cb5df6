// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* The plain/JSON printer and the Prometheus exposition. */
#include "testlib.h"
#include <inttypes.h>
#include <math.h>
#include "output.h"
#include "prom.h"

/* Run @fn writing to a memory stream; returns what it wrote. */
static char *capture(void (*fn)(struct out *o), bool json)
{
	struct out o;
	size_t len;
	char *buf;
	FILE *f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	out_init(&o, f, json);
	fn(&o);
	fclose(f);
	return buf;
}

static void sample(struct out *o)
{
	out_obj_open(o, NULL);
	out_str(o, "netns", "netns %s\n", "blue \"x\"\\\n\t\x01");
	out_double(o, "ts", NULL, 1.5);
	out_obj_open(o, "counters");
	out_u64(o, "TwCreated", "  %20" PRIu64, UINT64_MAX);
	out_text(o, "\n");
	out_s64(o, "neg", NULL, -3);
	out_obj_close(o);
	out_arr_open(o, "list");
	out_bool(o, NULL, "%s\n", true);
	out_null(o, NULL, "-\n");
	out_double(o, NULL, "%.1f\n", NAN);
	out_obj_open(o, NULL);
	out_obj_close(o);
	out_arr_close(o);
	out_arr_open(o, "empty");
	out_arr_close(o);
	out_obj_close(o);
	/* a second sample on its own line */
	out_obj_open(o, NULL);
	out_u64(o, "n", NULL, 2);
	out_obj_close(o);
}

static void test_json_valid(void **state)
{
	char *s = capture(sample, true);

	(void)state;
	assert_true(json_lines_valid(s));
	assert_non_null(strstr(s, "\"netns\":\"blue \\\"x\\\"\\\\\\n\\t\\u0001\""));
	assert_non_null(strstr(s, "18446744073709551615"));
	assert_non_null(strstr(s, "\"neg\":-3"));
	assert_non_null(strstr(s, "[true,null,null,{}]"));
	assert_non_null(strstr(s, "}\n{\"n\":2}\n"));
	free(s);
}

static void test_plain(void **state)
{
	char *s = capture(sample, false);

	(void)state;
	assert_non_null(strstr(s, "netns blue"));
	assert_non_null(strstr(s, "  18446744073709551615"));
	assert_non_null(strstr(s, "yes\n-\nnan\n"));
	assert_null(strstr(s, "{"));
	free(s);
}

/* The checker itself must reject what is not JSON. */
static void test_json_checker(void **state)
{
	(void)state;
	assert_true(json_lines_valid("{\"a\":[1,2.5,-0.1e3,\"x\"]}\n"));
	assert_false(json_lines_valid("{\"a\":1,}"));
	assert_false(json_lines_valid("{\"a\":nan}"));
	assert_false(json_lines_valid("{\"a\":\"\t\"}"));
	assert_false(json_lines_valid("{\"a\":01}"));
	assert_false(json_lines_valid("{} {}"));
}

static void test_prom_escape_snake(void **state)
{
	char buf[64];

	(void)state;
	prom_escape(buf, sizeof(buf), "a\"b\\c\nd");
	assert_string_equal(buf, "a\\\"b\\\\c\\nd");
	prom_snake(buf, sizeof(buf), "TwSynPawsRejected");
	assert_string_equal(buf, "tw_syn_paws_rejected");
	prom_snake(buf, sizeof(buf), "ConnectPortExhausted");
	assert_string_equal(buf, "connect_port_exhausted");
	prom_snake(buf, sizeof(buf), "TwReuseDeniedFinWait2");
	assert_string_equal(buf, "tw_reuse_denied_fin_wait2");
	prom_snake(buf, sizeof(buf), "RSTReceived");
	assert_string_equal(buf, "rst_received");
	/* label values are UTF-8: valid sequences kept, stray bytes U+FFFD */
	prom_escape(buf, sizeof(buf), "caf\xc3\xa9-\xff\xc0\xaf-\xed\xa0\x80");
	assert_string_equal(buf, "caf\xc3\xa9-\xef\xbf\xbd\xef\xbf\xbd\xef"
			    "\xbf\xbd-\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	prom_snake(buf, sizeof(buf), "TCPACKSkippedPAWS");
	assert_string_equal(buf, "tcpack_skipped_paws");
}

/* A netns name can hold any byte; the JSON stays valid UTF-8. */
static void test_json_utf8(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	out_json_string(f, "ns-\xe2\x82\xac-\xff\xfe-\xf4\x90\x80\x80");
	fclose(f);
	assert_string_equal(buf, "\"ns-\xe2\x82\xac-\\ufffd\\ufffd-\\ufffd"
			    "\\ufffd\\ufffd\\ufffd\"");
	free(buf);
}

/*
 * Exposition format 0.0.4: every family has one # HELP and one # TYPE
 * before its samples, its samples are contiguous, every sample line is
 * name{labels} value with well-formed label values.
 */
static void check_exposition(const char *text)
{
	char fams[512][100], cur[100] = "";
	int nfam = 0, i, samples = 0;
	char *copy = strdup(text), *line, *save = NULL;

	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[100], type[32];
		const char *p;

		if (sscanf(line, "# HELP %99s", name) == 1) {
			for (i = 0; i < nfam; i++)
				assert_string_not_equal(fams[i], name);
			assert_true(nfam < 512);
			strcpy(fams[nfam++], name);
			strcpy(cur, name);
			continue;
		}
		if (sscanf(line, "# TYPE %99s %31s", name, type) == 2) {
			assert_string_equal(name, cur);
			assert_true(!strcmp(type, "counter") ||
				    !strcmp(type, "gauge") ||
				    !strcmp(type, "histogram"));
			continue;
		}
		/* a sample of the current family */
		assert_int_equal(strncmp(line, cur, strlen(cur)), 0);
		p = line + strlen(cur);
		if (*p == '_')	/* _bucket, _count */
			p = strchr(p, '{');
		assert_non_null(p);
		assert_int_equal(*p, '{');
		p++;
		while (*p != '}') {
			while (*p == '_' || isalnum((unsigned char)*p))
				p++;
			assert_int_equal(*p++, '=');
			assert_int_equal(*p++, '"');
			while (*p != '"') {
				assert_true(*p && *p != '\n');
				if (*p == '\\') {
					p++;
					assert_non_null(strchr("\\\"n", *p));
				}
				p++;
			}
			p++;
			if (*p == ',')
				p++;
		}
		assert_int_equal(*++p, ' ');
		assert_true(isdigit((unsigned char)p[1]) || p[1] == '-');
		samples++;
	}
	assert_true(samples > 0);
	free(copy);
}

static char *export_tree(const char *scenario, const char *netns)
{
	struct snapshot s;
	size_t len;
	char *buf;
	FILE *f;

	use_tree(scenario, "t1");
	snapshot_take(&s, SNAP_ALL);
	f = open_memstream(&buf, &len);
	assert_int_equal(prom_write(f, &s, netns), 0);
	fclose(f);
	snapshot_free(&s);
	return buf;
}

static void test_prom_module(void **state)
{
	char *t = export_tree("port_exhaustion", "ns \"1\"");

	(void)state;
	check_exposition(t);
	assert_non_null(strstr(t, "# TYPE tcptw_connect_port_exhausted_total "
			       "counter\n"));
	assert_non_null(strstr(t, "tcptw_connect_port_exhausted_total"
			       "{netns=\"ns \\\"1\\\"\"} 500\n"));
	assert_non_null(strstr(t, "tcptw_tw_reuse_denied_total{netns=\"ns "
			       "\\\"1\\\"\",reason=\"loopback_only\"} 900\n"));
	assert_non_null(strstr(t, "tcptw_peer_port_exhausted_total{netns="
			       "\"ns \\\"1\\\"\",peer=\"203.0.113.10\","
			       "port=\"8080\"} 500\n"));
	assert_non_null(strstr(t, "tcptw_module_loaded{netns=\"ns \\\"1\\\"\"}"
			       " 1\n"));
	assert_non_null(strstr(t, "tcptw_sysctl_ip_local_port_range_lo"));
	assert_non_null(strstr(t, "tcptw_tw_age_seconds_bucket{"));
	free(t);
}

static void test_prom_nomodule(void **state)
{
	char *t = export_tree("healthy-nomodule", "host");

	(void)state;
	check_exposition(t);
	assert_non_null(strstr(t, "tcptw_module_loaded{netns=\"host\"} 0\n"));
	assert_non_null(strstr(t, "tcptw_netstat_tcpext_paws_timewait_total"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_drop_total"));
	assert_null(strstr(t, "tcptw_tw_created_total"));
	free(t);
}

static void test_prom_listeners_hist(void **state)
{
	char *t = export_tree("accept_queue", "x");

	(void)state;
	check_exposition(t);
	assert_non_null(strstr(t, "tcptw_listener_overflow_ack_total{netns="
			       "\"x\",addr=\"0.0.0.0\",port=\"80\"} 400\n"));
	assert_non_null(strstr(t, "# TYPE tcptw_listener_max_backlog gauge"));
	/* cumulative buckets end at _count */
	assert_non_null(strstr(t, "tcptw_tw_age_seconds_bucket{netns=\"x\",hist="
			       "\"reuse_granted\",le=\"+Inf\"} 0\n"));
	assert_non_null(strstr(t, "tcptw_tw_age_seconds_count{netns=\"x\",hist="
			       "\"reuse_granted\"} 0\n"));
	assert_null(strstr(t, "hist=\"rst_received_idle\""));
	free(t);
	/* the silence before RSTs is a family of its own, cumulative */
	t = export_tree("nat_idle_reset", "x");
	check_exposition(t);
	assert_non_null(strstr(t, "# TYPE tcptw_rst_received_idle_seconds histogram"));
	assert_non_null(strstr(t, "tcptw_rst_received_idle_seconds_bucket{netns="
			       "\"x\",le=\"8.191\"} 0\n"));
	assert_non_null(strstr(t, "tcptw_rst_received_idle_seconds_bucket{netns="
			       "\"x\",le=\"16.383\"} 20\n"));
	assert_non_null(strstr(t, "tcptw_rst_received_idle_seconds_bucket{netns="
			       "\"x\",le=\"+Inf\"} 25\n"));
	assert_non_null(strstr(t, "tcptw_rst_received_idle_seconds_count{netns="
			       "\"x\"} 25\n"));
	free(t);
}

/* Every metric the example alert rules use is one tcptw exports. */
static void test_alert_rules_names(void **state)
{
	static const char *const trees[] = {
		"nat_paws", "ts_off_seq", "port_exhaustion", "tw_overflow",
		"accept_queue", "conntrack_full", "nat_idle_reset",
		"healthy-nomodule",
	};
	char *all = calloc(1, 4 << 20), *rules, *p, name[128];
	size_t i, used = 0, n;

	(void)state;
	assert_non_null(all);
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		char *t = export_tree(trees[i], "x");

		n = strlen(t);
		assert_true(used + n < (4 << 20));
		memcpy(all + used, t, n);
		used += n;
		free(t);
	}
	rules = load("../../../alerts/tcptw.rules.yml");
	for (p = strstr(rules, "tcptw_"); p; p = strstr(p, "tcptw_")) {
		char family[160];

		for (n = 0; n < sizeof(name) - 1 &&
		     (isalnum((unsigned char)p[n]) || p[n] == '_'); n++)
			name[n] = p[n];
		name[n] = '\0';
		p += n;
		if (*p == '.')	/* a file name in a comment */
			continue;
		/* the census needs sock_diag, absent from fixture trees */
		if (!strncmp(name, "tcptw_ephemeral_port", 20) ||
		    !strcmp(name, "tcptw_sockets"))
			continue;
		snprintf(family, sizeof(family), "# TYPE %s ", name);
		/* a histogram's samples: the family without the suffix */
		if (!strstr(all, family)) {
			char *suf = strrchr(name, '_');

			if (suf && (!strcmp(suf, "_bucket") ||
				    !strcmp(suf, "_count")))
				snprintf(family, sizeof(family),
					 "# TYPE %.*s histogram", (int)(suf - name),
					 name);
		}
		if (!strstr(all, family))
			print_message("# not exported: %s\n", name);
		assert_non_null(strstr(all, family));
	}
	free(rules);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_valid),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_json_checker),
		cmocka_unit_test(test_prom_escape_snake),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_prom_module),
		cmocka_unit_test(test_prom_nomodule),
		cmocka_unit_test(test_prom_listeners_hist),
		cmocka_unit_test(test_alert_rules_names),
	};

	return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
