// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* The diagnosis rules on each seed's failure and on healthy systems. */
#include "testlib.h"
#include <netinet/tcp.h>
#include <unistd.h>
#include "snapshot.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct run {
	struct snapshot t0, t1;
	struct diag_window w;
	struct diag_input in;
	struct diag_result r;
};

static struct run *diagnose_scenario(const char *name)
{
	struct run *run = calloc(1, sizeof(*run));

	assert_non_null(run);
	use_tree(name, "t0");
	snapshot_take(&run->t0, SNAP_ALL);
	use_tree(name, "t1");
	snapshot_take(&run->t1, SNAP_ALL);
	assert_int_equal(run->t1.mib_err, 0);
	assert_int_equal(snapshot_diag_input(&run->t0, &run->t1, 10.0,
					     &run->w, &run->in), 0);
	diagnose_run(&run->in, &run->r);
	return run;
}

static void run_free(struct run *run)
{
	diag_window_free(&run->w);
	snapshot_free(&run->t0);
	snapshot_free(&run->t1);
	free(run);
}

/* Exactly @id fires (NULL: nothing does). */
static struct run *expect_only(const char *scenario, const char *id)
{
	struct run *run = diagnose_scenario(scenario);

	if (!id) {
		assert_int_equal(run->r.n, 0);
	} else {
		assert_int_equal(run->r.n, 1);
		assert_string_equal(run->r.f[0].id, id);
		assert_true(run->r.f[0].nev > 0);
		assert_non_null(run->r.f[0].remedy);
	}
	return run;
}

static const struct evidence *ev(const struct finding *f, const char *name)
{
	int i;

	for (i = 0; i < f->nev; i++)
		if (!strcmp(f->ev[i].name, name))
			return &f->ev[i];
	return NULL;
}

/* the finding's commands, one per line */
static const char *cmds(const struct finding *f)
{
	static char buf[DIAG_MAX_CMDS * 244];
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < f->ncmds; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "%s\n", f->cmds[i]);
	return buf;
}

static bool has_note(const struct finding *f, const char *needle)
{
	int i;

	for (i = 0; i < f->nnotes; i++)
		if (strstr(f->notes[i], needle))
			return true;
	return false;
}

static void test_healthy(void **state)
{
	(void)state;
	run_free(expect_only("healthy", NULL));
	run_free(expect_only("healthy-6.1", NULL));
	run_free(expect_only("healthy-nomodule", NULL));
	/* TIME_WAIT dropped an old duplicate; no SYN was refused */
	run_free(expect_only("tw_paws-nonsyn", NULL));
}

static bool has_caveat(const struct diag_result *r, const char *needle)
{
	int i;

	for (i = 0; i < r->ncaveats; i++)
		if (strstr(r->caveats[i], needle))
			return true;
	return false;
}

/*
 * A busy web server's healthy window: 3100 resets, 240 SYN retransmits,
 * 3 listener drops that were no overflow, 14 PAWSEstab. Without the
 * module the resets cannot be told from a NAT's, which is said, not named.
 */
static void test_busy_healthy(void **state)
{
	struct run *run = expect_only("busy-nomodule", NULL);

	(void)state;
	assert_true(has_caveat(&run->r, "not loaded"));
	assert_true(has_caveat(&run->r, "3100 connections were reset"));
	assert_true(has_caveat(&run->r, "cannot be told"));
	assert_true(run->r.idle_untold);
	run_free(run);
	run = expect_only("busy-healthy", NULL);
	assert_false(has_caveat(&run->r, "cannot be told"));
	assert_false(run->r.idle_untold);
	assert_int_equal(deltaset_get(run->in.mod, "RstReceived"), 3100);
	assert_int_equal(deltaset_get(run->in.mib, "TcpExtListenDrops"), 3);
	run_free(run);
}

static void test_nat_paws(void **state)
{
	struct run *run = expect_only("nat_paws", "nat_paws");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "TwSynPawsRejected")->v, 118);
	assert_true(ev(f, "TwSynPawsRejected")->x > 11.7);
	assert_int_equal(ev(f, "TcpExtPAWSTimewait")->v, 120);
	/* the NAT address, from the src= of the events */
	assert_string_equal(f->peers_from, "events");
	assert_string_equal(f->peers[0].addr, "198.51.100.7");
	assert_true(has_note(f, "198.51.100.7"));
	assert_true(has_note(f, "tcp_rfc1337=1"));
	assert_non_null(strstr(f->title, "NAT"));
	/* 20 SYNs, one gap between the two hosts' clocks */
	assert_int_equal(ev(f, "ts_clock_offsets")->v, 1);
	assert_true(has_note(f, "1 clock offset(s)"));
	assert_false(has_note(f, "CVE-2026-23247"));
	/* who closes first is the application's; timestamps are on */
	assert_int_equal(f->ncmds, 0);
	assert_true(f->app);
	run_free(run);
}

/* One client whose kernel puts the ports into the TS offset (7.0+). */
static void test_nat_paws_ts_ports(void **state)
{
	struct run *run = expect_only("nat_paws-ts-ports", "nat_paws");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_string_equal(f->peers[0].addr, "203.0.113.5");
	assert_int_equal(ev(f, "ts_clock_offsets")->v, 12);
	assert_true(has_note(f, "12 of 12 rejected SYNs from 203.0.113.5"));
	assert_true(has_note(f, "CVE-2026-23247"));
	run_free(run);
}

/* Without the module the kernel's PAWSTimewait (6.16+) still names it. */
static void test_nat_paws_nomodule(void **state)
{
	struct run *run = expect_only("nat_paws-nomodule", "nat_paws");

	(void)state;
	assert_int_equal(ev(&run->r.f[0], "TcpExtPAWSTimewait")->v, 64);
	assert_int_equal(run->r.f[0].npeers, 0);
	assert_true(run->r.ncaveats > 0);
	assert_non_null(strstr(run->r.caveats[0], "not loaded"));
	run_free(run);
}

static void test_ts_off_seq(void **state)
{
	struct run *run = expect_only("ts_off_seq", "ts_off_seq");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_non_null(strstr(f->title, "Timestamps off"));
	assert_int_equal(ev(f, "TwSynSeqRejected")->v, 80);
	assert_int_equal(ev(f, "net.ipv4.tcp_timestamps")->v, 0);
	assert_string_equal(f->peers[0].addr, "198.51.100.9");
	assert_true(has_note(f, "aggravating"));
	assert_string_equal(cmds(f), "sysctl -w net.ipv4.tcp_timestamps=1\n");
	assert_true(f->app);
	run_free(run);
}

static void test_fin_wait2_syn(void **state)
{
	struct run *run = expect_only("fin_wait2_syn", "fin_wait2_syn");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "TwSynFinWait2Rejected")->v, 30);
	assert_int_equal(ev(f, "TwRstSent")->v, 4);
	assert_int_equal(ev(f, "TcpExtTCPSynRetrans")->v, 26);
	assert_non_null(strstr(f->remedy, "tcp_fin_timeout"));
	assert_true(has_note(f, "no kernel MIB"));
	assert_int_equal(f->ncmds, 0);
	assert_true(f->app);	/* the peer has to close its sockets */
	run_free(run);
}

static void test_port_exhaustion(void **state)
{
	struct run *run = expect_only("port_exhaustion", "port_exhaustion");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "ConnectPortExhausted")->v, 500);
	assert_int_equal(ev(f, "TwReuseDeniedLoopbackOnly")->v, 900);
	assert_int_equal(ev(f, "net.ipv4.ip_local_port_range[lo]")->v, 49152);
	/* connect()-side events: the remote is in dst= */
	assert_string_equal(f->peers[0].addr, "203.0.113.10");
	assert_true(has_note(f, "only over loopback"));
	assert_non_null(strstr(f->remedy, "keepalive"));
	/* the range widened, reuse beyond loopback; keep-alive is the app's */
	assert_string_equal(cmds(f),
			    "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"\n"
			    "sysctl -w net.ipv4.tcp_tw_reuse=1\n");
	assert_true(f->app);
	run_free(run);
}

/*
 * Seed 003: which side holds the TIME_WAIT sockets, from the census. Here
 * as the client (ab -k exiting with its connections open) they hold the
 * ports; here as the server (it closed first) they hold none.
 */
static void test_tw_sides(void **state)
{
	struct run *run = diagnose_scenario("port_exhaustion");
	struct census c;
	const struct finding *f;
	int i;

	(void)state;
	census_init(&c, 49152, 65535);
	for (i = 0; i < 300; i++)
		assert_int_equal(census_add(&c, TCP_TIME_WAIT, 49152 + i,
					    "203.0.113.10", 80), 0);
	assert_int_equal(census_add(&c, TCP_ESTABLISHED, 60000,
				    "203.0.113.10", 80), 0);
	assert_int_equal(census_add(&c, TCP_TIME_WAIT, 22, "198.51.100.7",
				    40000), 0);
	run->in.census = &c;
	diagnose_run(&run->in, &run->r);
	assert_int_equal(run->r.n, 1);
	f = &run->r.f[0];
	assert_string_equal(f->id, "port_exhaustion");
	assert_int_equal(ev(f, "TIME_WAIT here as client")->v, 300);
	assert_int_equal(ev(f, "TIME_WAIT here as server")->v, 1);
	assert_true(has_note(f, "300 TIME_WAIT sockets are held here, on the connecting side"));
	assert_false(has_note(f, "as the server"));
	census_free(&c);

	/* the server's view: nginx closed first, TIME_WAIT on port 80 */
	census_init(&c, 49152, 65535);
	for (i = 0; i < 200; i++)
		assert_int_equal(census_add(&c, TCP_TIME_WAIT, 80, "198.18.0.1",
					    49152 + i), 0);
	assert_int_equal(census_add(&c, TCP_TIME_WAIT, 8080, "198.18.0.1",
				    50000), 0);
	run->in.census = &c;
	diagnose_run(&run->in, &run->r);
	f = &run->r.f[0];
	assert_int_equal(ev(f, "TIME_WAIT here as client")->v, 0);
	assert_int_equal(ev(f, "TIME_WAIT here as server")->v, 201);
	assert_true(has_note(f, "201 TIME_WAIT sockets are held here as the server (most on local port 80)"));
	assert_false(has_note(f, "connecting side"));
	census_free(&c);
	run_free(run);
}

static void test_tw_overflow(void **state)
{
	struct run *run = expect_only("tw_overflow", "tw_overflow");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "TwOverflow")->v, 300);
	assert_int_equal(ev(f, "TcpExtTCPTimeWaitOverflow")->v, 300);
	assert_int_equal(ev(f, "net.ipv4.tcp_max_tw_buckets")->v, 5000);
	/* room for the 300 refused, twice over */
	assert_string_equal(cmds(f), "sysctl -w net.ipv4.tcp_max_tw_buckets=10600\n");
	assert_false(f->app);
	run_free(run);
}

static void test_accept_queue(void **state)
{
	struct run *run = expect_only("accept_queue", "accept_queue");
	const struct finding *f = &run->r.f[0];
	const struct evidence *l;

	(void)state;
	assert_int_equal(ev(f, "TcpExtListenOverflows")->v, 400);
	l = ev(f, "listener 0.0.0.0:80");
	assert_non_null(l);
	assert_int_equal(l->kind, EVK_LISTENER);
	assert_int_equal(l->v, 400);
	assert_int_equal(l->b, 128);
	/* the idle :: 443 listener is not evidence */
	assert_null(ev(f, "listener :::443"));
	assert_true(has_note(f, "capped by net.core.somaxconn"));
	assert_string_equal(cmds(f), "sysctl -w net.core.somaxconn=4096\n");
	assert_true(f->app);	/* the application listens again */
	run_free(run);
}

static void test_conntrack_full(void **state)
{
	struct run *run = expect_only("conntrack_full", "conntrack_full");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "ConntrackTableFull")->v, 1000);
	assert_int_equal(ev(f, "conntrack drop")->v, 1000);
	assert_int_equal(ev(f, "net.netfilter.nf_conntrack_count")->v, 200);
	assert_int_equal(ev(f, "net.netfilter.nf_conntrack_max")->v, 200);
	/* no census: the max, with room for the 1000 dropped, twice over */
	assert_string_equal(cmds(f),
			    "nsenter -t 1 -n sysctl -w net.netfilter.nf_conntrack_max=2400\n");
	assert_false(f->app);
	run_free(run);
}

/* @n entries in TCP @state from 10.0.0.(i % @srcs) to @dst:@port */
static void ctc_fill(struct ct_census *c, unsigned int n, uint8_t state,
		     uint32_t dst, uint16_t port, unsigned int srcs)
{
	struct ctc_entry e = { .family = AF_INET, .proto = IPPROTO_TCP,
			       .have_state = true, .tcp_state = state,
			       .dport = port };
	uint32_t a;
	unsigned int i;

	for (i = 0; i < n; i++) {
		a = htonl(0x0a000000 | (i % srcs));
		memcpy(e.src, &a, 4);
		a = htonl(dst);
		memcpy(e.dst, &a, 4);
		ct_census_add(c, &e);
	}
}

/*
 * What fills the table decides the remedy: TIME_WAIT entries of a
 * loopback upstream (seed 004's lab), or live flows.
 */
static void test_conntrack_fillers(void **state)
{
	struct run *run = diagnose_scenario("conntrack_full");
	const struct finding *f;
	struct ct_census c;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	c.timeout[CTC_TCP_TIME_WAIT] = 120;
	c.timeout[CTC_TCP_ESTABLISHED] = 432000;
	ctc_fill(&c, 182, CTC_TCP_TIME_WAIT, 0x7f000001, 9000, 50);
	ctc_fill(&c, 18, CTC_TCP_ESTABLISHED, 0xc6120002, 80, 18);
	run->in.ctc = &c;
	diagnose_run(&run->in, &run->r);
	assert_int_equal(run->r.n, 1);
	f = &run->r.f[0];
	assert_string_equal(f->id, "conntrack_full");
	assert_int_equal(ev(f, "conntrack entries dumped")->v, 200);
	assert_int_equal(ev(f, "conntrack tcp TIME_WAIT")->v, 182);
	assert_int_equal(ev(f, "conntrack to tcp 127.0.0.1:9000")->v, 182);
	assert_string_equal(f->notes[0], "182 of 200 entries are TCP TIME_WAIT, held 120 s (nf_conntrack_tcp_timeout_time_wait)");
	assert_ptr_equal(strstr(f->remedy, "182 of 200 entries are TCP TIME_WAIT, held 120 s (nf_conntrack_tcp_timeout_time_wait): shorten it"),
			 f->remedy);
	assert_non_null(strstr(f->remedy, "or add a notrack rule for the loopback upstream on :9000"));
	/* both directions: the replies would be picked up mid-stream */
	assert_non_null(strstr(f->remedy, "\"tcp dport 9000 oif lo notrack\""));
	assert_non_null(strstr(f->remedy, "\"tcp sport 9000 oif lo notrack\""));
	assert_string_equal(cmds(f),
			    "sysctl -w net.netfilter.nf_conntrack_tcp_timeout_time_wait=30\n"
			    "nft add table inet tcptw_notrack\n"
			    "nft 'add chain inet tcptw_notrack output { type filter hook output priority raw; }'\n"
			    "nft add rule inet tcptw_notrack output oif lo tcp dport 9000 notrack\n"
			    "nft add rule inet tcptw_notrack output oif lo tcp sport 9000 notrack\n");
	assert_false(f->app);
	ct_census_free(&c);

	/* live flows of many destinations: raise the max, no notrack */
	assert_int_equal(ct_census_init(&c), 0);
	c.timeout[CTC_TCP_ESTABLISHED] = 432000;
	ctc_fill(&c, 150, CTC_TCP_ESTABLISHED, 0xc6120002, 80, 150);
	ctc_fill(&c, 25, CTC_TCP_ESTABLISHED, 0xc6120003, 80, 25);
	ctc_fill(&c, 25, CTC_TCP_ESTABLISHED, 0xc6120004, 80, 25);
	diagnose_run(&run->in, &run->r);
	f = &run->r.f[0];
	assert_int_equal(ev(f, "conntrack tcp ESTABLISHED")->v, 200);
	assert_non_null(strstr(f->remedy, "raise net.netfilter.nf_conntrack_max"));
	assert_non_null(strstr(f->remedy, "or exempt the 150 entries"));
	assert_null(strstr(f->remedy, "loopback"));
	assert_null(strstr(cmds(f), "nft"));
	/* global: set in the initial netns */
	assert_non_null(strstr(cmds(f), "nsenter -t 1 -n sysctl -w net.netfilter.nf_conntrack_max="));
	ct_census_free(&c);

	/* nothing dominates: the generic remedy */
	assert_int_equal(ct_census_init(&c), 0);
	ctc_fill(&c, 10, CTC_TCP_ESTABLISHED, 0xc6120002, 80, 10);
	ctc_fill(&c, 10, CTC_TCP_TIME_WAIT, 0xc6120003, 81, 10);
	ctc_fill(&c, 10, 2, 0xc6120004, 82, 10);
	diagnose_run(&run->in, &run->r);
	f = &run->r.f[0];
	assert_ptr_equal(strstr(f->remedy, "Raise net.netfilter.nf_conntrack_max"),
			 f->remedy);
	assert_int_equal(ev(f, "conntrack entries dumped")->v, 30);
	ct_census_free(&c);
	run_free(run);
}

/*
 * Issue 40: 5,000 one-entry destinations fill the census before the
 * loopback upstream's TIME_WAIT entries; its remedy is named all the same.
 */
static void test_conntrack_late_filler(void **state)
{
	struct run *run = diagnose_scenario("conntrack_full");
	const struct finding *f;
	struct ct_census c;
	unsigned int i;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	c.timeout[CTC_TCP_TIME_WAIT] = 120;
	for (i = 0; i < 5000; i++)
		ctc_fill(&c, 1, CTC_TCP_ESTABLISHED, 0xc6120000 | i, 80, 1);
	ctc_fill(&c, 6000, CTC_TCP_TIME_WAIT, 0x7f000001, 9000, 50);
	run->in.ctc = &c;
	diagnose_run(&run->in, &run->r);
	f = &run->r.f[0];
	assert_string_equal(f->id, "conntrack_full");
	assert_non_null(strstr(f->remedy, "or add a notrack rule for the loopback upstream on :9000"));
	assert_non_null(strstr(f->remedy, "\"tcp dport 9000 oif lo notrack\""));
	/* the entries it surely has: n - err */
	assert_int_equal(ev(f, "conntrack to tcp 127.0.0.1:9000")->v, 6000);
	ct_census_free(&c);
	run_free(run);
}

/*
 * SNAT tuple clashes bump conntrack's drop as well as insert_failed: they
 * are not a full table, with the module or without it.
 */
static void test_conntrack_clash(void **state)
{
	struct run *run = expect_only("conntrack_clash",
				      "conntrack_insert_failed");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "ConntrackInsertFailed")->v, 6);
	assert_int_equal(ev(f, "conntrack insert_failed")->v, 6);
	/* the destination whose SNAT tuples clashed, from the events */
	assert_int_equal(f->npeers, 1);
	assert_string_equal(f->peers_from, "events");
	assert_string_equal(f->peers[0].addr, "192.0.2.10");
	assert_int_equal(f->peers[0].n, 6);
	/* the NAT rule's ports and flags: nothing to run here */
	assert_int_equal(f->ncmds, 0);
	assert_true(f->app);
	run_free(run);
	run = expect_only("conntrack_clash-nomodule",
			  "conntrack_insert_failed");
	f = &run->r.f[0];
	assert_null(ev(f, "ConntrackInsertFailed"));
	assert_int_equal(ev(f, "conntrack insert_failed")->v, 6);
	run_free(run);
}

static void test_nat_idle_reset(void **state)
{
	struct run *run = expect_only("nat_idle_reset", "nat_idle_reset");
	const struct finding *f = &run->r.f[0];

	(void)state;
	assert_int_equal(ev(f, "rst_received_idle>=4096ms")->v, 25);
	assert_int_equal(ev(f, "RstReceived")->v, 25);
	assert_int_equal(ev(f, "net.ipv4.tcp_keepalive_time")->v, 7200);
	assert_non_null(strstr(f->title, "Idle connections"));
	/*
	 * for sockets with SO_KEEPALIVE, which the application sets: the
	 * shortest silence reset was 8.2-16.4 s (20 in that bucket), so
	 * probe after 4 s, and again 4 s after each probe (intvl 75)
	 */
	assert_int_equal(ev(f, "net.ipv4.tcp_keepalive_intvl")->v, 75);
	assert_string_equal(cmds(f),
			    "sysctl -w net.ipv4.tcp_keepalive_time=4\n"
			    "sysctl -w net.ipv4.tcp_keepalive_intvl=4\n");
	assert_true(f->app);
	run_free(run);
}

/* RSTs on connections that were busy (idle < 64 ms) are not NAT idle resets */
static void test_busy_reset(void **state)
{
	(void)state;
	run_free(expect_only("busy_reset", NULL));
}

/*
 * Without the idle histogram (older module) the RSTs alone are no
 * evidence: a caveat says what could not be told apart.
 */
static void test_nat_idle_reset_nohist(void **state)
{
	struct run *run = expect_only("nat_idle_reset-nohist", NULL);

	(void)state;
	assert_int_equal(run->r.ncaveats, 2);
	assert_true(has_caveat(&run->r, "25 connections were reset"));
	run_free(run);
}

/* Every finding's JSON-relevant strings are filled. */
static void test_findings_complete(void **state)
{
	static const char *const all[] = {
		"nat_paws", "ts_off_seq", "port_exhaustion", "tw_overflow",
		"accept_queue", "conntrack_full", "conntrack_clash",
		"nat_idle_reset", "fin_wait2_syn",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct run *run = diagnose_scenario(all[i]);

		assert_int_equal(run->r.n, 1);
		assert_true(strlen(run->r.f[0].title) > 10);
		assert_true(strlen(run->r.f[0].remedy) > 40);
		run_free(run);
	}
}

/* why snapshot_load() refused a file */
static char why_[200];

static void test_baseline_roundtrip(void **state)
{
	char path[] = "/tmp/tcptw-baseline-XXXXXX";
	struct snapshot a, b;
	uint64_t v;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	use_tree("conntrack_full", "t1");
	snapshot_take(&a, SNAP_CT);
	assert_int_equal(snapshot_save(&a, path), 0);
	assert_int_equal(snapshot_load(&b, path, why_, sizeof(why_)), 0);
	assert_true(b.ts > a.ts - 0.01 && b.ts < a.ts + 0.01);
	assert_int_equal(b.mod.n, a.mod.n);
	assert_int_equal(b.mib.n, a.mib.n);
	assert_true(ctrset_get(&b.mod, "ConntrackTableFull", &v));
	assert_int_equal(v, 1000);
	assert_true(ctrset_get(&b.ct.stats, "drop", &v));
	assert_int_equal(v, 1000);
	snapshot_free(&a);
	snapshot_free(&b);
	unlink(path);
	assert_int_equal(snapshot_load(&b, "/nonexistent/b", why_, sizeof(why_)), -ENOENT);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	return buf;
}

/* Write @text to a temporary file; its path in @path. */
static void write_tmp(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/tcptw-base-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static enum baseline_verdict verdict_of(const char *text,
					const struct snapshot *cur,
					char *why, size_t len)
{
	enum baseline_verdict v;
	struct snapshot b;
	char path[32];

	write_tmp(path, text);
	assert_int_equal(snapshot_load(&b, path, why_, sizeof(why_)), 0);
	v = baseline_check(&b, cur, cur->ts, why, len);
	snapshot_free(&b);
	unlink(path);
	return v;
}

/*
 * Each baseline that cannot be compared is refused with the reason; an
 * older file without ids is used with a warning. A counter missing from
 * a baseline counts as unknown (delta 0), not as its lifetime value.
 */
static void test_baseline_checks(void **state)
{
	char path[] = "/tmp/tcptw-baseline-XXXXXX", why[200], *buf, *orig, *p;
	struct snapshot a, b;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	use_tree("conntrack_full", "t1");
	snapshot_take(&a, SNAP_CT);
	snprintf(a.netns_id, sizeof(a.netns_id), "net:[4026531840]");
	snprintf(a.boot_id, sizeof(a.boot_id), "0a6f-boot-1");
	assert_int_equal(snapshot_save(&a, path), 0);
	assert_int_equal(snapshot_load(&b, path, why_, sizeof(why_)), 0);
	assert_true(b.complete);
	assert_string_equal(b.netns_id, "net:[4026531840]");
	assert_string_equal(b.boot_id, "0a6f-boot-1");
	assert_int_equal(baseline_check(&b, &a, a.ts + 10, why, sizeof(why)),
			 BASE_OK);
	snapshot_free(&b);
	buf = slurp(path);
	orig = strdup(buf);
	unlink(path);

	/* truncated: the last 40 bytes (and the #end line) cut off */
	buf[strlen(buf) - 40] = '\0';
	assert_int_equal(verdict_of(buf, &a, why, sizeof(why)),
			 BASE_TRUNCATED);
	assert_non_null(strstr(why, "truncated"));
	/* an #end that counts more than is there */
	assert_int_equal(verdict_of("#ts 1700000000\n#netns net:[4026531840]\n"
				    "mib.TcpExtTW 5\n#end 2\n", &a, why,
				    sizeof(why)), BASE_TRUNCATED);
	free(buf);
	buf = orig;
	/* another netns */
	p = strstr(buf, "4026531840");
	memcpy(p, "4026532999", 10);
	assert_int_equal(verdict_of(buf, &a, why, sizeof(why)),
			 BASE_OTHER_NETNS);
	assert_non_null(strstr(why, "net:[4026532999], this is "
				    "net:[4026531840]"));
	memcpy(p, "4026531840", 10);
	/* before a reboot */
	p = strstr(buf, "0a6f-boot-1");
	p[10] = '0';
	assert_int_equal(verdict_of(buf, &a, why, sizeof(why)),
			 BASE_OTHER_BOOT);
	assert_non_null(strstr(why, "reboot"));
	free(buf);
	/* from the future: a day ahead of now */
	snprintf(why, sizeof(why), "#ts %.3f\n#netns net:[4026531840]\n"
		 "#boot_id 0a6f-boot-1\nmib.TcpExtTW 5\n#end 1\n",
		 a.ts + 86400);
	buf = strdup(why);
	assert_int_equal(verdict_of(buf, &a, why, sizeof(why)), BASE_FUTURE);
	assert_non_null(strstr(why, "86400.0 s in the future"));
	free(buf);
	/* an older tcptw's file: used, with a warning */
	assert_int_equal(verdict_of("#ts 1700000000\nmib.TcpExtTW 5\n", &a, why,
				    sizeof(why)), BASE_OLD_FORMAT);
	assert_non_null(strstr(why, "older tcptw"));
	snapshot_free(&a);
}

/* Garbage is refused with the reason, whole: nothing of it is used. */
static void test_baseline_garbage(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "#ts 1\n", "#ts '1' is not a time" },
		{ "#ts 1700000000\n", "has no counters" },
		{ "xx #ts 1700000000\nmib.X 1\n", "has no '#tcptw-baseline 1'" },
		{ "#ts nan\nmib.X 1\n", "#ts 'nan'" },
		{ "#ts -1\nmib.X 1\n", "#ts '-1'" },
		{ "#ts 1e9\nmib.X 1\n", "#ts '1e9'" },
		{ "-1\n", "has no '#tcptw-baseline 1'" },
		{ "#ts 1700000000\nmib.X -1\n", "'-1' is not a number" },
		{ "#ts 1700000000\nmib.X\n", "'' is not a number" },
		{ "#ts 1700000000\nmib.X 1 2\n", "more than a name" },
		{ "#ts 1700000000\nfoo 1\n", "no counter tcptw saves" },
		{ "#ts 1700000000\n#ts 1700000001\nmib.X 1\n", "two #ts" },
		{ "#tcptw-baseline 1\n#ts 1700000000\nmib.X 1\n#end 1\n",
		  "lacks its #netns or #boot_id" },
		{ "#tcptw-baseline 2\n#ts 1700000000\n", "newer format" },
		{ "#tcptw-baseline 1\n#ts 1700000000\n#netns n\n#boot_id b\n"
		  "mib.X 1\n#end 1\nmib.Y 2\n", "after the #end" },
		{ "#tcptw-baseline 1\n#ts 1700000000\n#netns n\n#boot_id b\n"
		  "mib.X 1\n#end x\n", "is not a count" },
		{ "#tcptw-baseline 1\n#ts 1700000000\n#bogus 1\n", "unknown line" },
	};
	struct snapshot b;
	char path[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_tmp(path, bad[i].text);
		if (snapshot_load(&b, path, why_, sizeof(why_)) != -EINVAL ||
		    !strstr(why_, bad[i].why))
			print_message("# %s: %s\n", bad[i].text, why_);
		assert_int_equal(snapshot_load(&b, path, why_, sizeof(why_)),
				 -EINVAL);
		assert_non_null(strstr(why_, bad[i].why));
		unlink(path);
	}
	/* a NUL byte: not text */
	strcpy(path, "/tmp/tcptw-base-XXXXXX");
	i = mkstemp(path);
	assert_int_equal(write(i, "#ts 1700000000\n\0mib.X 1\n", 25), 25);
	close(i);
	assert_int_equal(snapshot_load(&b, path, why_, sizeof(why_)), -EINVAL);
	assert_non_null(strstr(why_, "NUL"));
	unlink(path);
	/* a directory: its errno, not "not a baseline" */
	assert_int_equal(snapshot_load(&b, "/tmp", why_, sizeof(why_)), -EISDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_busy_healthy),
		cmocka_unit_test(test_nat_paws),
		cmocka_unit_test(test_nat_paws_ts_ports),
		cmocka_unit_test(test_nat_paws_nomodule),
		cmocka_unit_test(test_ts_off_seq),
		cmocka_unit_test(test_fin_wait2_syn),
		cmocka_unit_test(test_port_exhaustion),
		cmocka_unit_test(test_tw_sides),
		cmocka_unit_test(test_tw_overflow),
		cmocka_unit_test(test_accept_queue),
		cmocka_unit_test(test_conntrack_full),
		cmocka_unit_test(test_conntrack_fillers),
		cmocka_unit_test(test_conntrack_late_filler),
		cmocka_unit_test(test_conntrack_clash),
		cmocka_unit_test(test_nat_idle_reset),
		cmocka_unit_test(test_busy_reset),
		cmocka_unit_test(test_nat_idle_reset_nohist),
		cmocka_unit_test(test_findings_complete),
		cmocka_unit_test(test_baseline_roundtrip),
		cmocka_unit_test(test_baseline_checks),
		cmocka_unit_test(test_baseline_garbage),
	};

	return cmocka_run_group_tests_name("diagnose", tests, NULL, NULL);
}
