// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * sysctls, conntrack statistics, the sock_diag census and netns entry;
 * library failures injected with -Wl,--wrap.
 */
#include "testlib.h"
#include <netinet/tcp.h>
#include <libmnl/libmnl.h>
#include <math.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ct.h"
#include "diagnose.h"
#include "netns.h"
#include "census.h"
#include "proc.h"
#include "prom.h"
#include "snapshot.h"
#include "sysctl.h"

static int nfnl_fail_errno;
static int idiag_fail;

struct mnl_socket *__real_mnl_socket_open(int bus);
struct mnl_socket *__wrap_mnl_socket_open(int bus);
struct mnl_socket *__wrap_mnl_socket_open(int bus)
{
	if (bus == NETLINK_NETFILTER && nfnl_fail_errno) {
		errno = nfnl_fail_errno;
		return NULL;
	}
	if (bus == NETLINK_SOCK_DIAG && idiag_fail) {
		errno = idiag_fail;
		return NULL;
	}
	return __real_mnl_socket_open(bus);
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
	/* /proc-only columns are left out: the keys netlink gives, no more */
	assert_false(ctrset_get(&s, "ignore", NULL));
	assert_false(ctrset_get(&s, "delete", NULL));
	assert_false(ctrset_get(&s, "expect_new", NULL));
	assert_int_equal(s.n, 10);
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
	idiag_fail = EPERM;
	assert_int_equal(census_collect(&c), -EPERM);
	assert_string_equal(c.why, "sock_diag socket");
	assert_int_equal(c.nremote, 0);
	idiag_fail = 0;
	census_free(&c);
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* this process's CPU time, in seconds */
static double cpu_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A server's census: 200k sockets, every remote addr:port distinct (the
 * case that was quadratic: 9.5 s of CPU for 120k). Linear now: well
 * under a second of CPU, and every endpoint still counted once. CPU
 * time, not wall time: make check runs this beside two busy guests
 * (1.46 s of wall time there once).
 */
static void test_census_200k(void **state)
{
	char addr[48];
	struct census c;
	double t0, secs;
	size_t i, ntw = 0;

	(void)state;
	census_init(&c, 32768, 60999);
	t0 = cpu_secs();
	for (i = 0; i < 200000; i++) {
		snprintf(addr, sizeof(addr), "10.%zu.%zu.%zu", i >> 16,
			 (i >> 8) & 255, i & 255);
		assert_int_equal(census_add(&c, i % 4 ? TCP_ESTABLISHED :
					    TCP_TIME_WAIT, 443, addr,
					    1024 + i % 50000), 0);
	}
	/* the same endpoints again: found, not added */
	for (i = 0; i < 200000; i += 1000) {
		snprintf(addr, sizeof(addr), "10.%zu.%zu.%zu", i >> 16,
			 (i >> 8) & 255, i & 255);
		census_add(&c, TCP_SYN_RECV, 443, addr, 1024 + i % 50000);
	}
	census_sort(&c);
	secs = cpu_secs() - t0;
	print_message("# 200k-socket census: %.3f s of CPU\n", secs);
	assert_true(secs < 1.0);
	assert_int_equal(c.nremote, 200000);
	assert_int_equal(c.nlocal, 1);
	assert_int_equal(c.local[0].n[CS_ESTAB], 150000);
	assert_int_equal(c.total[CS_TIME_WAIT], 50000);
	assert_int_equal(c.total[CS_SYN_RECV], 200);
	for (i = 0; i < c.nremote; i++)
		ntw += c.remote[i].n[CS_SYN_RECV];
	assert_int_equal(ntw, 200);
	/* after a sort the index is rebuilt: still one entry per endpoint */
	census_add(&c, TCP_ESTABLISHED, 443, "10.0.0.0", 1024);
	assert_int_equal(c.nremote, 200000);
	census_free(&c);
}

/*
 * The running kernel's sockets: a loopback connection made here shows up
 * once per end, with the ports in host order (sport/dport are big endian
 * in inet_diag_sockid).
 */
static void test_census_collect_live(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd, cfd, afd, err;
	uint16_t lport, cport;
	struct census c;
	size_t i, hits = 0;

	(void)state;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	lport = ntohs(sa.sin_port);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	assert_int_equal(getsockname(cfd, (struct sockaddr *)&sa, &len), 0);
	cport = ntohs(sa.sin_port);

	census_init(&c, 1, 1);
	err = census_collect(&c);
	if (err == -EPERM || err == -EACCES || err == -EPROTONOSUPPORT) {
		census_free(&c);
		close(afd);
		close(cfd);
		close(lfd);
		skip();
	}
	assert_int_equal(err, 0);
	assert_null(c.why);
	for (i = 0; i < c.nremote; i++) {
		if (strcmp(c.remote[i].addr, "127.0.0.1"))
			continue;
		if (c.remote[i].port == lport || c.remote[i].port == cport) {
			assert_int_equal(c.remote[i].n[CS_ESTAB], 1);
			hits++;
		}
	}
	assert_int_equal(hits, 2);
	assert_true(c.total[CS_ESTAB] >= 2);
	census_free(&c);
	close(afd);
	close(cfd);
	close(lfd);
}

/*
 * Exported destinations: client side only (ephemeral local ports), at
 * least 1% of the range, the 10 busiest, in a stable order. A server's
 * 5000 clients on port 443 export nothing however many sockets they hold.
 */
static void test_census_export_destinations(void **state)
{
	struct snapshot s = { 0 };
	char addr[48], *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)state;
	census_init(&s.census, 32768, 60999);	/* 28232 ports: 1% is 283 */
	for (i = 0; i < 5000; i++) {
		snprintf(addr, sizeof(addr), "198.51.100.%zu", i % 250);
		census_add(&s.census, TCP_TIME_WAIT, 443, addr, 1024 + i);
	}
	/* 12 destinations at 300..410 ports, one at 282 (below 1%) */
	for (i = 0; i < 13; i++) {
		size_t k, n = i == 12 ? 282 : 300 + 10 * i;

		snprintf(addr, sizeof(addr), "203.0.113.%zu", i);
		for (k = 0; k < n; k++)
			census_add(&s.census, TCP_ESTABLISHED, 33000 + k, addr,
				   8080);
	}
	census_sort(&s.census);
	s.have_census = true;
	s.mib_err = -ENOENT;
	f = open_memstream(&buf, &len);
	assert_int_equal(prom_write(f, &s, "cli"), 0);
	fclose(f);
	/* 10 series, busiest first: 203.0.113.11 (410) ... .2 (320) */
	assert_int_equal(count_str(buf, "tcptw_ephemeral_ports_in_use{"), 10);
	assert_int_equal(count_str(buf, "tcptw_ephemeral_port_share{"), 10);
	assert_non_null(strstr(buf, "tcptw_ephemeral_ports_in_use{netns=\"cli\","
			       "destination=\"203.0.113.11:8080\"} 410\n"));
	assert_non_null(strstr(buf, "destination=\"203.0.113.2:8080\"} 320\n"));
	assert_null(strstr(buf, "203.0.113.1:8080"));
	assert_null(strstr(buf, "203.0.113.12:"));
	assert_null(strstr(buf, "198.51.100."));
	assert_true(strstr(buf, "203.0.113.11:") < strstr(buf, "203.0.113.10:"));
	assert_non_null(strstr(buf, "tcptw_sockets{netns=\"cli\","
			       "state=\"time_wait\"} 5000\n"));
	free(buf);
	census_free(&s.census);
}

/* watch's grid: a slow sample skips ticks instead of shifting them */
static void test_tick_next(void **state)
{
	(void)state;
	/* on time: the next tick */
	assert_true(fabs(tick_next(100.0, 100.3, 1.0) - 101.0) < 1e-9);
	/* the sample ended exactly on the tick: the one after it */
	assert_true(fabs(tick_next(100.0, 101.0, 1.0) - 102.0) < 1e-9);
	/* a 2.5 s census after the tick at 100: 103, not 103.5 */
	assert_true(fabs(tick_next(100.0, 102.5, 1.0) - 103.0) < 1e-9);
	/* 1000 ticks of 0.25 s later: still on the grid */
	assert_true(fabs(tick_next(0.0, 249.9, 0.25) - 250.0) < 1e-6);
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
		cmocka_unit_test(test_census_200k),
		cmocka_unit_test(test_census_collect_live),
		cmocka_unit_test(test_census_export_destinations),
		cmocka_unit_test(test_tick_next),
		cmocka_unit_test(test_netns_bad_names),
	};

	return cmocka_run_group_tests_name("sys", tests, NULL, NULL);
}
