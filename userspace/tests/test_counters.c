// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* Parsers of the counters file, /proc/net/netstat and snmp; deltas. */
#include "testlib.h"
#include "counters.h"

static void test_snmp6_counters_file(void **state)
{
	struct ctrset s = { 0 };
	char *buf = load("nat_paws/t1/net/tcptw/counters");
	uint64_t v;

	(void)state;
	assert_int_equal(ctr_parse_snmp6(&s, buf, NULL), 29);
	assert_string_equal(s.v[0].name, "TwCreated");
	assert_string_equal(s.v[28].name, "RstReceived");
	assert_true(ctrset_get(&s, "TwSynPawsRejected", &v));
	assert_int_equal(v, 118);
	assert_true(ctrset_get(&s, "TwCreated", &v));
	assert_int_equal(v, 7000);
	ctrset_free(&s);
	free(buf);
}

/* The module as first shipped: only the foundation counters. */
static void test_snmp6_foundation_only(void **state)
{
	const char *buf = "TwCreated                       \t5\n"
			  "TwOverflow                      \t0\n"
			  "TwKilledByRst                   \t2\n";
	struct ctrset s = { 0 };

	(void)state;
	assert_int_equal(ctr_parse_snmp6(&s, buf, NULL), 3);
	assert_false(ctrset_get(&s, "ConnectPortExhausted", NULL));
	ctrset_free(&s);
}

static void test_snmp6_malformed(void **state)
{
	const char *buf = "Good 1\nNoValue\nBad x1\nToo many 1 2\n# 3\n"
			  "Neg -5\nHuge 18446744073709551615\n"
			  "Over 18446744073709551616\nLast\t7";
	struct ctrset s = { 0 };
	uint64_t v;

	(void)state;
	assert_int_equal(ctr_parse_snmp6(&s, buf, "p."), 4);
	assert_true(ctrset_get(&s, "p.Good", &v));
	assert_int_equal(v, 1);
	assert_true(ctrset_get(&s, "p.Neg", &v));
	assert_int_equal((int64_t)v, -5);
	assert_true(ctrset_get(&s, "p.Huge", &v));
	assert_true(v == UINT64_MAX);
	assert_false(ctrset_get(&s, "p.Over", NULL));
	assert_true(ctrset_get(&s, "p.Last", &v));
	assert_int_equal(v, 7);
	ctrset_free(&s);
}

static void test_netstat_host(void **state)
{
	struct ctrset s = { 0 };
	char *buf = load("host-netstat.txt");
	uint64_t v;

	(void)state;
	assert_int_equal(ctr_parse_table(&s, buf), 229);
	assert_true(ctrset_get(&s, "TcpExtTW", &v));
	assert_int_equal(v, 23);
	assert_true(ctrset_get(&s, "TcpExtPAWSTimewait", &v));
	assert_true(ctrset_get(&s, "IpExtInOctets", &v));
	assert_int_equal(v, 542005881);
	assert_true(ctrset_get(&s, "MPTcpExtMPCapableSYNRX", NULL));
	ctrset_free(&s);
	free(buf);
}

/* 6.1's column set: no PAWSTimewait (6.16) and friends. */
static void test_netstat_6_1(void **state)
{
	struct ctrset s = { 0 };
	char *buf = load("healthy-6.1/t1/net/netstat");

	(void)state;
	assert_int_equal(ctr_parse_table(&s, buf), 220);
	assert_false(ctrset_get(&s, "TcpExtPAWSTimewait", NULL));
	assert_true(ctrset_get(&s, "TcpExtPAWSEstab", NULL));
	ctrset_free(&s);
	free(buf);
}

static void test_snmp_negative(void **state)
{
	struct ctrset s = { 0 };
	char *buf = load("host-snmp.txt");
	uint64_t v;

	(void)state;
	assert_int_equal(ctr_parse_table(&s, buf), 83);
	assert_true(ctrset_get(&s, "TcpMaxConn", &v));
	assert_int_equal((int64_t)v, -1);
	assert_true(ctrset_get(&s, "TcpActiveOpens", &v));
	assert_int_equal(v, 29);
	ctrset_free(&s);
	free(buf);
}

static void test_table_out_of_step(void **state)
{
	const char *buf = "A: x y\nB: p q\nB: 7 8\nC: s\n"
			  "C: 9 10\nD: u v\nD: 5\nE: lone\n";
	struct ctrset s = { 0 };
	uint64_t v;

	(void)state;
	/* A/B mismatch skipped, B pair kept, C: extra value, D: short row */
	assert_int_equal(ctr_parse_table(&s, buf), 4);
	assert_false(ctrset_get(&s, "Ax", NULL));
	assert_true(ctrset_get(&s, "Bq", &v));
	assert_int_equal(v, 8);
	assert_true(ctrset_get(&s, "Cs", &v));
	assert_int_equal(v, 9);
	assert_true(ctrset_get(&s, "Du", &v));
	assert_false(ctrset_get(&s, "Dv", NULL));
	ctrset_free(&s);
}

static void test_sub_wrap_reset(void **state)
{
	unsigned int f = 0;

	(void)state;
	assert_int_equal(ctr_sub(10, 15, &f), 5);
	assert_int_equal(f, 0);
	/* 32-bit counter wrapped: 0xfffffff0 -> 0x10 is 0x20 */
	assert_int_equal(ctr_sub(0xfffffff0ULL, 0x10, &f), 0x20);
	assert_true(f & CTR_WRAP32);
	/* a 64-bit value going backwards is a reset: count from 0 */
	f = 0;
	assert_int_equal(ctr_sub(5000000000ULL, 7, &f), 7);
	assert_true(f & CTR_RESET);
	f = 0;
	assert_int_equal(ctr_sub(1000, 3, &f), 3);
	assert_true(f & CTR_RESET);
	f = 0;
	assert_true(ctr_sub(0, UINT64_MAX, &f) == UINT64_MAX);
}

static void test_diff_appear_vanish(void **state)
{
	struct ctrset a = { 0 }, b = { 0 };
	const struct ctr_delta *d;
	struct deltaset ds;

	(void)state;
	ctrset_add(&a, "Kept", 10);
	ctrset_add(&a, "Gone", 4);
	ctrset_add(&b, "Kept", 30);
	ctrset_add(&b, "New", 6);
	assert_int_equal(ctr_diff(&a, &b, 2.0, &ds), 0);
	assert_int_equal(ds.n, 3);
	d = deltaset_find(&ds, "Kept");
	assert_non_null(d);
	assert_int_equal(d->delta, 20);
	assert_true(d->rate > 9.99 && d->rate < 10.01);
	/* missing from a set that was there: unknown, not its lifetime 6 */
	d = deltaset_find(&ds, "New");
	assert_int_equal(d->delta, 0);
	assert_true(d->flags & CTR_NEW);
	d = deltaset_find(&ds, "Gone");
	assert_int_equal(d->delta, 0);
	assert_true(d->flags & CTR_GONE);
	assert_int_equal(deltaset_get(&ds, "Absent"), 0);
	deltaset_free(&ds);
	/* no previous sample: everything is new, no rate */
	assert_int_equal(ctr_diff(NULL, &b, 0, &ds), 0);
	assert_int_equal(ds.n, 2);
	assert_true(ds.v[0].rate == 0);
	deltaset_free(&ds);
	/* a set absent before (module loaded since): counted from 0 */
	ctrset_free(&a);
	assert_int_equal(ctr_diff(&a, &b, 2.0, &ds), 0);
	assert_int_equal(deltaset_get(&ds, "New"), 6);
	assert_int_equal(deltaset_get(&ds, "Kept"), 30);
	deltaset_free(&ds);
	ctrset_free(&a);
	ctrset_free(&b);
}

/* A kernel upgrade between samples: 6.1 -> 6.18 columns. */
static void test_diff_kernel_columns(void **state)
{
	char *old = load("healthy-6.1/t1/net/netstat");
	char *new = load("healthy/t1/net/netstat");
	struct ctrset a = { 0 }, b = { 0 };
	struct deltaset ds;

	(void)state;
	ctr_parse_table(&a, old);
	ctr_parse_table(&b, new);
	assert_int_equal(ctr_diff(&a, &b, 1, &ds), 0);
	assert_true(deltaset_find(&ds, "TcpExtPAWSTimewait")->flags & CTR_NEW);
	assert_int_equal(deltaset_get(&ds, "TcpExtTW"), 0);
	deltaset_free(&ds);
	assert_int_equal(ctr_diff(&b, &a, 1, &ds), 0);
	assert_true(deltaset_find(&ds, "TcpExtPAWSTimewait")->flags & CTR_GONE);
	deltaset_free(&ds);
	ctrset_free(&a);
	ctrset_free(&b);
	free(old);
	free(new);
}

static void test_probes_missed(void **state)
{
	const char *buf =
		"inet_twsk_alloc\tkretprobe\tattached\t0\n"
		"__inet_hash_connect\tkretprobe\tattached\t37\n"
		"nf_conntrack:early_drop\tkretprobe\tabsent\t0\n"
		"tcp_v4_send_reset\tkretprobe\terror:-22\t3\n"
		"short\tkprobe\tattached\n"
		"long\tkprobe\tattached\t1\textra\n"
		"nan\tkprobe\tattached\tx\n";
	struct ctrset s = { 0 };
	uint64_t v;

	(void)state;
	assert_int_equal(ctr_parse_probes(&s, buf), 4);
	assert_true(ctrset_get(&s, "__inet_hash_connect", &v));
	assert_int_equal(v, 37);
	assert_true(ctrset_get(&s, "tcp_v4_send_reset", &v));
	assert_int_equal(v, 3);
	assert_true(ctrset_get(&s, "nf_conntrack:early_drop", &v));
	assert_int_equal(v, 0);
	assert_false(ctrset_get(&s, "short", &v));
	assert_false(ctrset_get(&s, "long", &v));
	assert_false(ctrset_get(&s, "nan", &v));
	ctrset_free(&s);
}

static void test_name_limits(void **state)
{
	char name[200];
	struct ctrset s = { 0 };

	(void)state;
	memset(name, 'A', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(ctrset_add(&s, name, 1), -EINVAL);
	assert_int_equal(ctrset_add(&s, "", 1), -EINVAL);
	assert_int_equal(s.n, 0);
	ctrset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snmp6_counters_file),
		cmocka_unit_test(test_snmp6_foundation_only),
		cmocka_unit_test(test_snmp6_malformed),
		cmocka_unit_test(test_netstat_host),
		cmocka_unit_test(test_netstat_6_1),
		cmocka_unit_test(test_snmp_negative),
		cmocka_unit_test(test_table_out_of_step),
		cmocka_unit_test(test_sub_wrap_reset),
		cmocka_unit_test(test_diff_appear_vanish),
		cmocka_unit_test(test_diff_kernel_columns),
		cmocka_unit_test(test_name_limits),
		cmocka_unit_test(test_probes_missed),
	};

	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
