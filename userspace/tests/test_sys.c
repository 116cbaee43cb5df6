// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * sysctls, conntrack statistics, the sock_diag census and netns entry;
 * library failures injected with -Wl,--wrap.
 */
#include "testlib.h"
#include <netinet/tcp.h>
#include <libnfnetlink/libnfnetlink.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include "ct.h"
#include "diagnose.h"
#include "netns.h"
#include "nl.h"
#include "proc.h"
#include "sysctl.h"

static int nfnl_fail_errno;
static int idiag_fail;

struct nfnl_handle *__real_nfnl_open(void);
struct nfnl_handle *__wrap_nfnl_open(void);
struct nfnl_handle *__wrap_nfnl_open(void)
{
	if (nfnl_fail_errno) {
		errno = nfnl_fail_errno;
		return NULL;
	}
	return __real_nfnl_open();
}

int __real_idiagnl_connect(struct nl_sock *sk);
int __wrap_idiagnl_connect(struct nl_sock *sk);
int __wrap_idiagnl_connect(struct nl_sock *sk)
{
	if (idiag_fail)
		return -idiag_fail;
	return __real_idiagnl_connect(sk);
}

static void test_sysctls_fixture(void **state)
{
	struct sysctls s;

	(void)state;
	use_tree("port_exhaustion", "t1");
	sysctls_read(&s);
	assert_true(s.have[SC_PORT_RANGE_LO] && s.have[SC_PORT_RANGE_HI]);
	assert_int_equal(s.v[SC_PORT_RANGE_LO], 49152);
	assert_int_equal(s.v[SC_PORT_RANGE_HI], 65535);
	assert_int_equal(sysctl_port_range_size(&s), 16384);
	assert_int_equal(sysctl_get(&s, SC_TCP_TW_REUSE, -1), 2);
	assert_string_equal(sysctl_dotted(SC_SOMAXCONN), "net.core.somaxconn");
}

/* tcp_tw_reuse_delay is 6.14+; nf_conntrack may be unloaded. */
static void test_sysctls_absent(void **state)
{
	struct sysctls s;

	(void)state;
	setenv("TCPTW_PROC_ROOT", "/nonexistent-tcptw-root", 1);
	sysctls_read(&s);
	assert_false(s.have[SC_TCP_TW_REUSE_DELAY]);
	assert_int_equal(sysctl_get(&s, SC_TCP_TW_REUSE_DELAY, 1000), 1000);
	assert_int_equal(sysctl_port_range_size(&s), 0);
	assert_false(tcptw_module_loaded());
}

static void test_ct_proc_sum(void **state)
{
	char *buf = load("conntrack_full/t1/net/stat/nf_conntrack");
	struct ctrset s = { 0 };
	uint64_t entries, v;

	(void)state;
	assert_int_equal(ct_parse_proc_stat(buf, &s, &entries), 2);
	/* entries is per netns, printed on every CPU row: not summed */
	assert_int_equal(entries, 200);
	/* drop 1000 was spread as 500 + 500 over the two CPUs */
	assert_true(ctrset_get(&s, "drop", &v));
	assert_int_equal(v, 1000);
	assert_true(ctrset_get(&s, "clash_resolve", NULL));
	assert_true(ctrset_get(&s, "chaintoolong", NULL));
	assert_true(ctrset_get(&s, "error", NULL));
	ctrset_free(&s);
	free(buf);
	assert_int_equal(ct_parse_proc_stat("garbage\n", &s, NULL), -EINVAL);
	assert_int_equal(ct_parse_proc_stat("entries found\n", &s, NULL),
			 -EINVAL);
	ctrset_free(&s);
}

static void test_ct_read_fixture(void **state)
{
	struct ct_info ct;

	(void)state;
	use_tree("conntrack_full", "t1");
	assert_int_equal(ct_read(&ct), 0);
	assert_string_equal(ct.source, "proc");
	assert_true(ct.have_count && ct.have_max);
	assert_int_equal(ct.count, 200);
	assert_int_equal(ct.max, 200);
	ct_free(&ct);
}

static void test_ct_netlink_open_fails(void **state)
{
	struct ct_info ct;

	(void)state;
	memset(&ct, 0, sizeof(ct));
	nfnl_fail_errno = EPERM;
	assert_int_equal(ct_read_netlink(&ct), -EPERM);
	assert_false(ct.have_stats);
	nfnl_fail_errno = 0;
	ct_free(&ct);
}

static void test_census_share(void **state)
{
	const struct census_ep *ep;
	struct census c;
	int i;

	(void)state;
	/* seed 003: ab against one server, 16363 TIME_WAIT of 16384 ports */
	census_init(&c, 49152, 65535);
	for (i = 0; i < 16363; i++)
		assert_int_equal(census_add(&c, TCP_TIME_WAIT, 49152 + i,
					    "10.0.0.5", 8080), 0);
	for (i = 0; i < 100; i++)
		census_add(&c, TCP_ESTABLISHED, 80, "10.0.0.9", 50000 + i);
	census_add(&c, TCP_LISTEN, 80, "0.0.0.0", 0);
	census_add(&c, TCP_SYN_RECV, 80, "10.0.0.9", 1);
	census_sort(&c);
	assert_int_equal(c.total[CS_TIME_WAIT], 16363);
	assert_int_equal(c.total[CS_ESTAB], 100);
	assert_int_equal(c.total[CS_SYN_RECV], 1);
	ep = &c.remote[0];
	assert_string_equal(ep->addr, "10.0.0.5");
	assert_int_equal(ep->ephemeral, 16363);
	assert_true(census_share(&c, ep) > 0.998);
	/* server side: port 80 is not ephemeral, local census counts it */
	assert_int_equal(c.local[0].port, 80);
	assert_int_equal(c.local[0].n[CS_ESTAB], 100);
	census_free(&c);
}

/* Port exhaustion from the census alone: no module needed. */
static void test_census_rule(void **state)
{
	struct deltaset none = { 0 };
	struct diag_input in = { 0 };
	struct diag_result r;
	struct sysctls sys = { 0 };
	struct census c;
	int i;

	(void)state;
	census_init(&c, 49152, 65535);
	for (i = 0; i < 16000; i++)
		census_add(&c, TCP_TIME_WAIT, 49152 + i, "10.0.0.5", 8080);
	in.mod = in.mib = &none;
	in.sys = &sys;
	in.census = &c;
	in.secs = 1;
	diagnose_run(&in, &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.f[0].id, "port_exhaustion");
	assert_int_equal(r.f[0].ev[0].kind, EVK_SHARE);
	assert_string_equal(r.f[0].ev[0].name, "10.0.0.5:8080");
	census_free(&c);
	/* a quarter of the range: no finding */
	census_init(&c, 49152, 65535);
	for (i = 0; i < 4096; i++)
		census_add(&c, TCP_TIME_WAIT, 49152 + i, "10.0.0.5", 8080);
	diagnose_run(&in, &r);
	assert_int_equal(r.n, 0);
	census_free(&c);
}

static void test_census_connect_fails(void **state)
{
	struct census c;

	(void)state;
	census_init(&c, 1, 2);
	idiag_fail = NLE_PERM;
	assert_int_equal(census_collect(&c), -EIO);
	assert_non_null(c.why);
	assert_string_equal(c.why, nl_geterror(-NLE_PERM));
	idiag_fail = 0;
	census_free(&c);
}

static void test_netns_bad_names(void **state)
{
	char label[64];

	(void)state;
	assert_int_equal(netns_enter_name("../etc"), -EINVAL);
	assert_int_equal(netns_enter_name(""), -EINVAL);
	assert_int_equal(netns_enter_name("tcptw-no-such-ns"), -ENOENT);
	assert_int_equal(netns_enter_pid(0), -EINVAL);
	netns_label(label, sizeof(label), "blue", 0);
	assert_string_equal(label, "blue");
	netns_label(label, sizeof(label), NULL, 42);
	assert_string_equal(label, "pid:42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysctls_fixture),
		cmocka_unit_test(test_sysctls_absent),
		cmocka_unit_test(test_ct_proc_sum),
		cmocka_unit_test(test_ct_read_fixture),
		cmocka_unit_test(test_ct_netlink_open_fails),
		cmocka_unit_test(test_census_share),
		cmocka_unit_test(test_census_rule),
		cmocka_unit_test(test_census_connect_fails),
		cmocka_unit_test(test_netns_bad_names),
	};

	return cmocka_run_group_tests_name("sys", tests, NULL, NULL);
}
