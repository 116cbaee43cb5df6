/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Knobs that open race windows on purpose, for selftests. They exist only
 * in a test build (make TCPTW_TEST=1, scripts/build-kmod.sh K DIR
 * TCPTW_TEST=1); in a normal build every knob is a constant 0 and its
 * code compiles away.
 */
#ifndef _TCPTW_TEST_H
#define _TCPTW_TEST_H

#include <linux/compiler.h>
#include <linux/delay.h>
#include <net/sock.h>

struct inet_timewait_sock;

enum tcptw_failnth_where {
	TCPTW_FAILNTH_LOAD,
	TCPTW_FAILNTH_NETNS,
	TCPTW_FAILNTH_NOTIFIER,
	TCPTW_FAILNTH_PERNET,
	TCPTW_FAILNTH_PROBES,
	TCPTW_FAILNTH_NR,
};

#ifdef TCPTW_TEST
/* ms to sleep between the module notifier and the first attach (probes.c) */
extern unsigned int tcptw_test_attach_delay_ms;
/* us to spin at the entry of a Fast Open child's syn_recv_sock (listen.c) */
extern unsigned int tcptw_test_tfo_delay_us;
/* us to spin after a TCP_TW_SYN verdict, before the listener lookup (tw.c) */
extern unsigned int tcptw_test_tw_syn_delay_us;
/*
 * TCP_TW_SYN verdicts still to follow by the socket's unhash on another
 * CPU, as its timer or ss -K would do there, before the listener lookup;
 * and how many were (tw.c)
 */
extern unsigned int tcptw_test_tw_syn_unhash;
extern unsigned int tcptw_test_tw_syn_unhashed;
void tcptw_test_tw_unhash(struct inet_timewait_sock *tw);
/* test.c: wait for its work */
void tcptw_test_uninit(void);
/*
 * The self-tests of the table and the event ring (kmod/selftest/), run
 * at load: 0, or -ENOTRECOVERABLE after the first check that failed (in
 * the kernel log), -ENOMEM if one of their allocations failed; the checks
 * passed are in the selftest_checks parameter. tcptw_st_check() counts
 * one check in *@checks; tcptw_st_nomem() says an allocation failed.
 */
int tcptw_selftest(void);
bool tcptw_st_check(const char *what, u64 got, u64 want,
		    unsigned int *checks);
bool tcptw_st_nomem(const char *what);
bool tcptw_table_selftest(unsigned int *checks);
bool tcptw_ring_selftest(unsigned int *checks);
/*
 * tcp_v{4,6}_syn_recv_sock()'s hook for a handshake's ACK (listen.c):
 * how many such ACKs reached it, and how many found the accept queue full
 * there; how many ACKs still to hold (a test writes it, each hold takes
 * one), and for at most how many us each is held, before the kernel tests
 * the queue
 */
extern unsigned int tcptw_test_ack_entered;
extern unsigned int tcptw_test_ack_full_seen;
extern unsigned int tcptw_test_ack_holds;
extern unsigned int tcptw_test_ack_delay_us;
/* coexist.c: detach the other tools' hooks it attached */
void tcptw_test_coexist_uninit(void);
/*
 * The fail-nth regions: tcptw_init() (main.c), tcptw_net_init()
 * (pernet.c), the module notifier (probes.c), and two parts of the load:
 * tcptw_pernet_init() and tcptw_probes_init() (main.c), whose first
 * allocations a sweep of the whole load would reach only by luck. With
 * test_failnth_at's column N > 0, the region's Nth allocation fails (the
 * task's fail-nth set at the entry, cleared at the exit), and parameter
 * test_failnth_exit's column says what was left of N at the exit (-1
 * until it runs; 0: the Nth was made to fail):
 * selftests/fault_sweep.sh sweeps each region's allocations, counted
 * from its entry whatever the task did before. Without
 * CONFIG_FAULT_INJECTION, nothing.
 */
void tcptw_test_failnth_mark(enum tcptw_failnth_where where, bool exit);
/* the most table rows one read section copied (table.c) */
extern unsigned int tcptw_test_table_rows_max;
/*
 * table.c: counts to make from inside a claimed batch, as a hook in an
 * interrupt would; how many were made; how many counts found a batch
 * claimed
 */
extern unsigned int tcptw_test_table_nest;
extern unsigned int tcptw_test_table_nested;
extern unsigned int tcptw_test_table_busy_seen;
extern unsigned int tcptw_test_group_walks;

static inline void tcptw_test_group_walked(void)
{
	WRITE_ONCE(tcptw_test_group_walks, READ_ONCE(tcptw_test_group_walks) + 1);
}

static inline void tcptw_test_table_row_copied(unsigned int rows)
{
	if (rows > READ_ONCE(tcptw_test_table_rows_max))
		WRITE_ONCE(tcptw_test_table_rows_max, rows);
}

/*
 * a handshake's ACK at the hook: the queue as the hook sees it, a hold
 * taken if one is left, then counted (a test that sees the count move
 * knows which of full or not this ACK saw, and that it is held if it
 * took one). The hold, in steps of 1 ms, lasts until the queue turns full
 * or not full, whichever it was not at the entry: another CPU queueing a
 * child or accept() taking one is the window, however late either CPU
 * gets to it.
 */
static inline void tcptw_test_ack_hold(const struct sock *sk)
{
	unsigned int us = min(READ_ONCE(tcptw_test_ack_delay_us), 500000U);
	unsigned int holds = READ_ONCE(tcptw_test_ack_holds);
	bool full = sk_acceptq_is_full(sk);

	if (holds && cmpxchg(&tcptw_test_ack_holds, holds, holds - 1) != holds)
		holds = 0;
	if (full)
		WRITE_ONCE(tcptw_test_ack_full_seen,
			   READ_ONCE(tcptw_test_ack_full_seen) + 1);
	/* the counts before the ACK goes on or is held */
	smp_wmb();
	WRITE_ONCE(tcptw_test_ack_entered,
		   READ_ONCE(tcptw_test_ack_entered) + 1);
	while (holds && us && sk_acceptq_is_full(sk) == full) {
		udelay(min(us, 1000U));
		us -= min(us, 1000U);
	}
}
#else
static inline void tcptw_test_coexist_uninit(void)
{
}

static inline void tcptw_test_failnth_mark(enum tcptw_failnth_where where,
					   bool exit)
{
}

static inline void tcptw_test_tw_unhash(struct inet_timewait_sock *tw)
{
}

static inline void tcptw_test_uninit(void)
{
}

static inline int tcptw_selftest(void)
{
	return 0;
}

static inline void tcptw_test_table_row_copied(unsigned int rows)
{
}

static inline void tcptw_test_ack_hold(const struct sock *sk)
{
}

static inline void tcptw_test_group_walked(void)
{
}

#define tcptw_test_attach_delay_ms 0U
#define tcptw_test_tfo_delay_us 0U
#define tcptw_test_tw_syn_delay_us 0U
#endif

static inline void tcptw_test_delay(unsigned int ms)
{
	if (ms)
		msleep(ms);
}

/*
 * in a probe handler (atomic): a busy wait, in steps of 10 ms (x86's
 * udelay() wraps above about 250 ms)
 */
static inline void tcptw_test_udelay(unsigned int us)
{
	unsigned int step;

	while (us) {
		step = min(us, 10000U);
		udelay(step);
		us -= step;
	}
}

#endif /* _TCPTW_TEST_H */
