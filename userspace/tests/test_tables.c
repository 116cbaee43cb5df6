// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* Parsers of the module's events, peers, listeners and hist files. */
#include "testlib.h"
#include "events.h"
#include "tables.h"

static void test_event_line(void **state)
{
	struct tcptw_event e;

	(void)state;
	assert_int_equal(event_parse_line("1795300000.000000042 "
		"tw_syn_paws_rejected src=198.51.100.7:40000 "
		"dst=192.0.2.10:80 age_ms=1500 tsval=1000 ts_recent=90000 "
		"reason=- future=1", &e), 0);
	assert_true(e.sec == 1795300000);
	assert_int_equal(e.nsec, 42);
	assert_string_equal(e.name, "tw_syn_paws_rejected");
	assert_string_equal(e.src, "198.51.100.7:40000");
	assert_true(e.age_ms == 1500 && e.tsval == 1000);
	assert_true(e.ts_recent == 90000);
	assert_string_equal(e.reason, "-");
}

static void test_event_dashes_v6(void **state)
{
	struct tcptw_event e;

	(void)state;
	assert_int_equal(event_parse_line("1.5 rst_received "
		"src=[fd00::1]:80 dst=[fd00::2]:4000 age_ms=- tsval=- "
		"ts_recent=- reason=tcp_reset", &e), 0);
	assert_true(e.age_ms == EV_NONE && e.tsval == EV_NONE);
	assert_string_equal(e.reason, "tcp_reset");
	assert_string_equal(e.src, "[fd00::1]:80");
	assert_true(e.idle_ms == EV_NONE);
	/* the appended idle_ms token of rst_received */
	assert_int_equal(event_parse_line("1.5 rst_received "
		"src=198.18.0.2:8080 dst=198.18.1.2:40000 age_ms=- tsval=- "
		"ts_recent=- reason=- idle_ms=8004", &e), 0);
	assert_true(e.idle_ms == 8004);
	assert_int_equal(event_parse_line("1.5 rst_received src=- dst=- "
		"idle_ms=8x", &e), -EINVAL);
}

static void test_event_malformed(void **state)
{
	struct tcptw_event e;

	(void)state;
	assert_int_equal(event_parse_line("", &e), -EINVAL);
	assert_int_equal(event_parse_line("notatime x", &e), -EINVAL);
	assert_int_equal(event_parse_line("12 x", &e), -EINVAL);
	assert_int_equal(event_parse_line("1.2", &e), -EINVAL);
	assert_int_equal(event_parse_line("1.2 src=x", &e), -EINVAL);
	assert_int_equal(event_parse_line("1.2 ev age_ms=abc", &e), -EINVAL);
	assert_int_equal(event_parse_line("1.9999999999 ev", &e), -EINVAL);
}

static void test_events_file(void **state)
{
	char *buf = load("nat_paws/t1/net/tcptw/events");
	struct peer_count top[4];
	struct event_list l;

	(void)state;
	assert_int_equal(events_parse(buf, &l), 21);
	assert_int_equal(events_top(&l, "tw_syn_paws_rejected", false, top,
				    4), 2);
	assert_string_equal(top[0].addr, "198.51.100.7");
	assert_int_equal(top[0].n, 20);
	assert_string_equal(top[1].addr, "2001:db8::7");
	assert_int_equal(events_top(&l, "tw_syn_paws_rejected", true, top,
				    4), 2);
	assert_string_equal(top[0].addr, "192.0.2.10");
	assert_int_equal(events_top(&l, "rst_sent", false, top, 4), 0);
	events_free(&l);
	free(buf);
	/* empty ring */
	assert_int_equal(events_parse("", &l), 0);
	events_free(&l);
}

static void test_split_endpoint(void **state)
{
	char a[48];
	uint16_t p;

	(void)state;
	assert_int_equal(split_endpoint("10.0.0.1:80", a, sizeof(a), &p), 0);
	assert_string_equal(a, "10.0.0.1");
	assert_int_equal(p, 80);
	assert_int_equal(split_endpoint("[2001:db8::1]:443", a, sizeof(a),
					&p), 0);
	assert_string_equal(a, "2001:db8::1");
	assert_int_equal(p, 443);
	assert_int_equal(split_endpoint("10.0.0.1", a, sizeof(a), &p),
			 -EINVAL);
	assert_int_equal(split_endpoint("[::1]80", a, sizeof(a), &p), -EINVAL);
	assert_int_equal(split_endpoint("h:70000", a, sizeof(a), &p), -EINVAL);
	assert_int_equal(split_endpoint(":80", a, sizeof(a), &p), -EINVAL);
}

static void test_peers(void **state)
{
	char *buf = load("port_exhaustion/t1/net/tcptw/peers");
	struct table t;

	(void)state;
	assert_int_equal(table_parse(buf, &t), 1);
	assert_int_equal(t.ncols, 13);
	assert_string_equal(t.rows[0].key, "203.0.113.10");
	assert_int_equal(table_get(&t, 0, "port"), 8080);
	assert_int_equal(table_get(&t, 0, "port_exhausted"), 500);
	assert_int_equal(table_get(&t, 0, "denied_loopback_only"), 900);
	/* a column of a later ABI: absent, not an error */
	assert_true(table_get(&t, 0, "future_column") == TBL_NONE);
	assert_int_equal(table_find(&t, "203.0.113.10", 8080), 0);
	assert_int_equal(table_find(&t, "203.0.113.10", 80), -1);
	table_free(&t);
	free(buf);
}

static void test_listeners_dashes(void **state)
{
	char *buf = load("accept_queue/t1/net/tcptw/listeners");
	struct table t;

	(void)state;
	assert_int_equal(table_parse(buf, &t), 2);
	assert_int_equal(table_get(&t, 0, "overflow_ack"), 400);
	assert_int_equal(table_get(&t, 0, "last_overflow_ms"), 5);
	assert_true(table_get(&t, 0, "last_syn_drop_ms") == TBL_NONE);
	assert_string_equal(t.rows[1].key, "::");
	assert_int_equal(table_get(&t, 1, "max_backlog"), 511);
	table_free(&t);
	free(buf);
}

static void test_table_appended_and_short(void **state)
{
	struct table t;

	(void)state;
	assert_int_equal(table_parse("addr port a b newcol\n"
				     "1.1.1.1 1 2 3 4\n"
				     "2.2.2.2 5 6\n"
				     "3.3.3.3 x 1\n", &t), 2);
	assert_int_equal(table_get(&t, 0, "newcol"), 4);
	assert_true(table_get(&t, 1, "b") == TBL_NONE);
	table_free(&t);
	assert_int_equal(table_parse("", &t), -EINVAL);
	assert_int_equal(table_parse("onlyonecolumn\n", &t), -EINVAL);
	assert_int_equal(table_parse("addr port\n", &t), 0);
	table_free(&t);
}

static void test_hist(void **state)
{
	const char *buf =
		"le_ms 1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 "
		"32768 65536 +Inf\n"
		"reuse_granted 0 0 0 0 0 0 0 0 0 0 3 5 0 0 0 0 0 0\n"
		"syn_paws_rejected 0 0 0 0 0 0 0 0 0 0 0 7 0 0 0 0 0 2\n";
	struct table t;
	uint64_t le;

	(void)state;
	assert_int_equal(table_parse(buf, &t), 2);
	assert_int_equal(t.ncols, 19);
	assert_int_equal(hist_bound(&t, 1, &le), 0);
	assert_int_equal(le, 1);
	assert_int_equal(hist_bound(&t, 17, &le), 0);
	assert_int_equal(le, 65536);
	assert_int_equal(hist_bound(&t, 18, &le), 0);
	assert_true(le == TBL_NONE);
	assert_int_equal(hist_bound(&t, 19, &le), -EINVAL);
	assert_int_equal(t.rows[1].v[18], 2);
	assert_int_equal(table_find(&t, "syn_paws_rejected", -1), 1);
	table_free(&t);
}

/* Lines of the events file, numbered: "<t>.0 rst_sent ... seq=<n>". */
static char *ring(uint64_t first, uint64_t last, uint64_t skip)
{
	size_t cap = (last - first + 1) * 64 + 1, o = 0;
	char *buf = malloc(cap);
	uint64_t i;

	assert_non_null(buf);
	buf[0] = '\0';
	for (i = first; i <= last; i++)
		if (i != skip)
			o += snprintf(buf + o, cap - o,
				      "%llu.0 rst_sent src=- dst=- seq=%llu\n",
				      (unsigned long long)(1000 + i % 7),
				      (unsigned long long)i);
	return buf;
}

/* Feed one read through the follower: how many are new, lost. */
static size_t follow(struct ev_follow *f, const char *buf, uint64_t *lost)
{
	struct event_list l;
	uint64_t gap;
	size_t i, n = 0;

	assert_true(events_parse(buf, &l) >= 0);
	events_sort_seq(&l);
	*lost = 0;
	for (i = 0; i < l.n; i++)
		if (ev_follow_take(f, &l.v[i], &gap)) {
			n++;
			*lost += gap;
		}
	events_free(&l);
	return n;
}

/*
 * A 1024-slot ring read three times: the first read takes all it holds;
 * 100 more events come, the second read prints exactly those although
 * their timestamps step back (the CPU clocks disagree); then a burst of
 * 3000 overwrites 1976 before the third read, which says so.
 */
static void test_events_follow_seq(void **state)
{
	struct ev_follow f = { 0 };
	struct tcptw_event e;
	uint64_t lost;
	char *buf;

	(void)state;
	assert_int_equal(event_parse_line("5.5 rst_sent src=- dst=- reason=- "
					  "idle_ms=- seq=18446744073709551615",
					  &e), 0);
	assert_true(e.have_seq);
	assert_true(e.seq == UINT64_MAX);
	assert_int_equal(event_parse_line("5.5 rst_sent seq=-1", &e), -EINVAL);
	assert_int_equal(event_parse_line("5.5 rst_sent seq=", &e), -EINVAL);
	assert_int_equal(event_parse_line("5.5 rst_sent", &e), 0);
	assert_false(e.have_seq);

	buf = ring(977, 2000, 0);
	assert_int_equal(follow(&f, buf, &lost), 1024);
	assert_int_equal(lost, 0);
	free(buf);
	buf = ring(1077, 2100, 0);
	assert_int_equal(follow(&f, buf, &lost), 100);
	assert_int_equal(lost, 0);
	free(buf);
	buf = ring(4077, 5100, 0);
	assert_int_equal(follow(&f, buf, &lost), 1024);
	assert_int_equal(lost, 1976);
	assert_int_equal(f.lost, 1976);
	free(buf);
	/* a writer gave up on 5150: a gap inside one read counts too */
	buf = ring(4127, 5200, 5150);
	assert_int_equal(follow(&f, buf, &lost), 99);
	assert_int_equal(lost, 1);
	assert_int_equal(f.lost, 1977);
	free(buf);
}

/* Without seq= (older module): timestamps decide, as before. */
static void test_events_follow_noseq(void **state)
{
	struct ev_follow f = { 0 };
	uint64_t lost;

	(void)state;
	assert_int_equal(follow(&f, "1.5 a\n2.5 b\n", &lost), 2);
	assert_int_equal(follow(&f, "1.5 a\n2.5 b\n3.0 c\n", &lost), 1);
	assert_int_equal(lost, 0);
	assert_false(f.by_seq);
}

/* run's window: what each row gained, gauges as they are, top rows */
static void test_table_delta(void **state)
{
	static const char base_txt[] =
		"addr port backlog max_backlog overflow_syn overflow_ack last_overflow_ms\n"
		"10.0.0.1 80 5 128 10 7 100\n"
		"10.0.0.1 81 0 128 3 0 -\n"
		"10.0.0.2 80 0 128 50 0 9\n";
	static const char cur_txt[] =
		"addr port backlog max_backlog overflow_syn overflow_ack last_overflow_ms\n"
		"10.0.0.1 80 9 128 14 17 3\n"
		"10.0.0.1 81 0 128 3 0 -\n"
		"10.0.0.2 80 0 128 2 0 1\n"
		"10.0.0.3 8080 1 4 6 0 1\n";
	struct table b, c, d;
	size_t idx[2];

	(void)state;
	assert_int_equal(table_parse(base_txt, &b), 3);
	assert_int_equal(table_parse(cur_txt, &c), 4);
	assert_int_equal(table_delta(&b, &c, &d), 0);
	assert_int_equal(d.nrows, 4);
	/* counts: the gain; gauges (backlog, last_*): as now */
	assert_int_equal(table_get(&d, 0, "overflow_syn"), 4);
	assert_int_equal(table_get(&d, 0, "overflow_ack"), 10);
	assert_int_equal(table_get(&d, 0, "backlog"), 9);
	assert_int_equal(table_get(&d, 0, "port"), 80);
	assert_int_equal(table_get(&d, 0, "last_overflow_ms"), 3);
	assert_int_equal(table_row_moved(&d, 0), 14);
	/* matched by port too: 10.0.0.1:81 did not move */
	assert_int_equal(table_row_moved(&d, 1), 0);
	/* went backwards: the row was taken over, counted from 0 */
	assert_int_equal(table_get(&d, 2, "overflow_syn"), 2);
	/* new row: all of it is the window's */
	assert_int_equal(table_get(&d, 3, "overflow_syn"), 6);
	assert_int_equal(table_top_moved(&d, idx, 2), 2);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 3);
	table_free(&b);
	table_free(&c);
	table_free(&d);
}

/* run's window: only the events after the baseline's ring */
static void test_events_since(void **state)
{
	static const char base_txt[] =
		"1795300001.000000000 tw_syn_paws_rejected src=1.1.1.1:1 dst=2.2.2.2:80 seq=4\n"
		"1795300002.000000000 tw_syn_paws_rejected src=1.1.1.1:2 dst=2.2.2.2:80 seq=5\n";
	static const char cur_txt[] =
		"1795300002.000000000 tw_syn_paws_rejected src=1.1.1.1:2 dst=2.2.2.2:80 seq=5\n"
		"1795300003.000000000 tw_syn_paws_rejected src=1.1.1.1:3 dst=2.2.2.2:80 seq=6\n"
		"1795300004.000000000 tw_syn_paws_rejected src=1.1.1.1:4 dst=2.2.2.2:80 seq=7\n";
	struct event_list b = { 0 }, c = { 0 };

	(void)state;
	assert_int_equal(events_parse(base_txt, &b), 2);
	assert_int_equal(events_parse(cur_txt, &c), 3);
	events_since(&c, &b, 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.v[0].seq, 6);
	events_free(&c);
	/* no baseline ring: by time */
	assert_int_equal(events_parse(cur_txt, &c), 3);
	events_since(&c, NULL, c.v[2].sec);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].seq, 7);
	events_free(&c);
	events_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_line),
		cmocka_unit_test(test_event_dashes_v6),
		cmocka_unit_test(test_event_malformed),
		cmocka_unit_test(test_events_file),
		cmocka_unit_test(test_split_endpoint),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_listeners_dashes),
		cmocka_unit_test(test_table_appended_and_short),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_events_follow_seq),
		cmocka_unit_test(test_events_follow_noseq),
		cmocka_unit_test(test_table_delta),
		cmocka_unit_test(test_events_since),
	};

	return cmocka_run_group_tests_name("tables", tests, NULL, NULL);
}
