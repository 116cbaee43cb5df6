// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The test build's knobs (test.h). Only compiled with TCPTW_TEST=1.
 */
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <net/inet_timewait_sock.h>

#include "mem.h"
#include "test.h"

unsigned int tcptw_test_attach_delay_ms;
module_param_named(test_attach_delay_ms, tcptw_test_attach_delay_ms, uint,
		   0444);
MODULE_PARM_DESC(test_attach_delay_ms,
		 "test build: ms between the module notifier and the first attach");

unsigned int tcptw_test_tfo_delay_us;
module_param_named(test_tfo_delay_us, tcptw_test_tfo_delay_us, uint, 0444);
MODULE_PARM_DESC(test_tfo_delay_us,
		 "test build: us to spin before a Fast Open child is created (at load)");

unsigned int tcptw_test_tw_syn_delay_us;
module_param_named(test_tw_syn_delay_us, tcptw_test_tw_syn_delay_us, uint,
		   0444);
MODULE_PARM_DESC(test_tw_syn_delay_us,
		 "test build: us to spin after a TIME_WAIT socket accepts a SYN (at most 10000)");

unsigned int tcptw_test_tw_syn_unhash;
module_param_named(test_tw_syn_unhash, tcptw_test_tw_syn_unhash, uint, 0644);
MODULE_PARM_DESC(test_tw_syn_unhash,
		 "test build: TIME_WAIT SYN verdicts still to follow by the socket's unhash on another CPU (each takes one)");

unsigned int tcptw_test_tw_syn_unhashed;
module_param_named(test_tw_syn_unhashed, tcptw_test_tw_syn_unhashed, uint,
		   0444);
MODULE_PARM_DESC(test_tw_syn_unhashed,
		 "test build: sockets test_tw_syn_unhash unhashed before the kernel's own deschedule");

static unsigned int tcptw_test_tw_syn_unhash_late;
module_param_named(test_tw_syn_unhash_late, tcptw_test_tw_syn_unhash_late,
		   uint, 0444);
MODULE_PARM_DESC(test_tw_syn_unhash_late,
		 "test build: verdicts test_tw_syn_unhash took but did not unhash first (its worker late, or still busy with the previous one): the kernel's deschedule went first");

static unsigned int tcptw_test_tw_syn_unhash_wait_ms = 1000;
module_param_named(test_tw_syn_unhash_wait_ms,
		   tcptw_test_tw_syn_unhash_wait_ms, uint, 0644);
MODULE_PARM_DESC(test_tw_syn_unhash_wait_ms,
		 "test build: ms the verdict waits for test_tw_syn_unhash's worker before it gives up (at most 1000)");

static int tcptw_test_failnth_exit[TCPTW_FAILNTH_NR] = {
	-1, -1, -1, -1, -1
};
module_param_array_named(test_failnth_exit, tcptw_test_failnth_exit, int,
			 NULL, 0644);
MODULE_PARM_DESC(test_failnth_exit,
		 "test build: what was left of test_failnth_at at the last exit of tcptw_init(), a netns init, the module notifier, tcptw_pernet_init(), tcptw_probes_init() (-1: none since set; 0: it failed one)");

static int tcptw_test_failnth_at[TCPTW_FAILNTH_NR];
module_param_array_named(test_failnth_at, tcptw_test_failnth_at, int, NULL,
			 0644);
MODULE_PARM_DESC(test_failnth_at,
		 "test build: fail the Nth allocation from the entry of tcptw_init(), a netns init, the module notifier, tcptw_pernet_init(), tcptw_probes_init() (0: none)");

static unsigned int tcptw_test_failnth_after_netns;
module_param_named(test_failnth_after_netns, tcptw_test_failnth_after_netns,
		   uint, 0444);
MODULE_PARM_DESC(test_failnth_after_netns,
		 "test build: at the exit of the load's Nth netns init, fail the task's next allocation: the next netns' generic data in ops_init(), so that register_pernet_subsys() fails with N namespaces initialised (0: none)");

void tcptw_test_failnth_mark(enum tcptw_failnth_where where, bool exit)
{
#ifdef CONFIG_FAULT_INJECTION
	static unsigned int netns_exits;
	int at = READ_ONCE(tcptw_test_failnth_at[where]);

	/*
	 * Where the text is, raw (the test build's sweeps only): a sweep
	 * reads a refused load's traced stacks once its symbols are gone
	 * (selftests/fault_sweep.sh)
	 */
	if (where == TCPTW_FAILNTH_LOAD && !exit &&
	    (memchr_inv(tcptw_test_failnth_at, 0,
			sizeof(tcptw_test_failnth_at)) ||
	     tcptw_test_failnth_after_netns))
		pr_info("test build: tcptw_mem_alloc at %lx\n",
			(unsigned long)tcptw_mem_alloc);
	/* the load's inits run one after the other, under pernet_ops_rwsem */
	if (where == TCPTW_FAILNTH_NETNS && exit &&
	    tcptw_test_failnth_after_netns &&
	    THIS_MODULE->state == MODULE_STATE_COMING &&
	    ++netns_exits == tcptw_test_failnth_after_netns)
		WRITE_ONCE(current->fail_nth, 1);
	if (at <= 0)
		return;
	/* the task's own fail-nth, counted from here, as a sweep's */
	if (!exit) {
		WRITE_ONCE(current->fail_nth, at);
		return;
	}
	WRITE_ONCE(tcptw_test_failnth_exit[where],
		   min_t(unsigned int, READ_ONCE(current->fail_nth), INT_MAX));
	/* not past the region: the rest of the task is not the sweep's */
	WRITE_ONCE(current->fail_nth, 0);
#endif
}

/*
 * One unhash at a time: inet_twsk_deschedule_put() on another CPU's
 * worker, with a reference of ours for it to drop. Another CPU, because
 * the call reaches tcptw's own hook, which would miss a call nested in
 * the verdict's (fprobe's recursion guard) and fail the suite's count of
 * missed calls. A worker that has not started when the verdict stops
 * waiting (a vCPU the host did not run for a second) must not deschedule
 * at all: the kernel's own deschedule goes first then, and a second one
 * of an unhashed socket is what only connect() does (a reuse grant).
 */
enum { UNHASH_IDLE, UNHASH_QUEUED, UNHASH_DOING, UNHASH_CANCELLED };

static struct inet_timewait_sock *tw_unhash_tw;
static atomic_t tw_unhash_state;

static void tw_unhash_fn(struct work_struct *work)
{
	struct inet_timewait_sock *tw = tw_unhash_tw;

	if (atomic_cmpxchg(&tw_unhash_state, UNHASH_QUEUED, UNHASH_DOING) ==
	    UNHASH_QUEUED) {
		inet_twsk_deschedule_put(tw);
		WRITE_ONCE(tcptw_test_tw_syn_unhashed,
			   READ_ONCE(tcptw_test_tw_syn_unhashed) + 1);
	} else {
		/* given up on: only our reference to drop */
		inet_twsk_put(tw);
	}
	atomic_set_release(&tw_unhash_state, UNHASH_IDLE);
}

static DECLARE_WORK(tw_unhash_work, tw_unhash_fn);

/* wait up to @ms for the worker to be done with it */
static void tw_unhash_wait(unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms && atomic_read_acquire(&tw_unhash_state) !=
			      UNHASH_IDLE; i++)
		mdelay(1);
}

/*
 * At a TCP_TW_SYN verdict (softirq): if a test asked for it, unhash @tw
 * on another CPU and wait (1 s at most, test_tw_syn_unhash_wait_ms) until
 * it is out of the hash, as when its timer fires there between the
 * verdict and the deschedule; if the worker has not started by then, it
 * is told not to.
 */
void tcptw_test_tw_unhash(struct inet_timewait_sock *tw)
{
	unsigned int left = READ_ONCE(tcptw_test_tw_syn_unhash);
	int cpu;

	if (!left || cmpxchg(&tcptw_test_tw_syn_unhash, left, left - 1) != left)
		return;
	cpu = cpumask_any_but(cpu_online_mask, smp_processor_id());
	if (cpu >= nr_cpu_ids)
		return;
	/* the previous worker not done yet: not unhashed first either */
	if (atomic_cmpxchg(&tw_unhash_state, UNHASH_IDLE, UNHASH_QUEUED) !=
	    UNHASH_IDLE)
		goto late;
	if (!refcount_inc_not_zero(&tw->tw_refcnt)) {
		atomic_set(&tw_unhash_state, UNHASH_IDLE);
		goto late;
	}
	tw_unhash_tw = tw;
	queue_work_on(cpu, system_highpri_wq, &tw_unhash_work);
	tw_unhash_wait(min(READ_ONCE(tcptw_test_tw_syn_unhash_wait_ms), 1000U));
	if (atomic_cmpxchg(&tw_unhash_state, UNHASH_QUEUED, UNHASH_CANCELLED) !=
	    UNHASH_QUEUED) {
		/* started: done in a moment */
		tw_unhash_wait(1000);
		return;
	}
late:
	WRITE_ONCE(tcptw_test_tw_syn_unhash_late,
		   READ_ONCE(tcptw_test_tw_syn_unhash_late) + 1);
}

void tcptw_test_uninit(void)
{
	flush_work(&tw_unhash_work);
}

unsigned int tcptw_test_ack_delay_us;
module_param_named(test_ack_delay_us, tcptw_test_ack_delay_us, uint, 0444);
MODULE_PARM_DESC(test_ack_delay_us,
		 "test build: us at most to hold a handshake's ACK before the kernel tests the accept queue, until the queue turns full or not full (at most 500000)");

unsigned int tcptw_test_ack_holds;
module_param_named(test_ack_holds, tcptw_test_ack_holds, uint, 0644);
MODULE_PARM_DESC(test_ack_holds,
		 "test build: handshake ACKs still to hold (each hold takes one)");

unsigned int tcptw_test_ack_entered;
module_param_named(test_ack_entered, tcptw_test_ack_entered, uint, 0444);
MODULE_PARM_DESC(test_ack_entered,
		 "test build: handshake ACKs that reached the hook");

unsigned int tcptw_test_ack_full_seen;
module_param_named(test_ack_full_seen, tcptw_test_ack_full_seen, uint, 0444);
MODULE_PARM_DESC(test_ack_full_seen,
		 "test build: handshake ACKs whose accept queue was full at the hook's entry");

unsigned int tcptw_test_table_rows_max;
module_param_named(test_table_rows_max, tcptw_test_table_rows_max, uint,
		   0444);
MODULE_PARM_DESC(test_table_rows_max,
		 "test build: the most peers or listeners rows one read section copied");

unsigned int tcptw_test_table_nest;
module_param_named(test_table_nest, tcptw_test_table_nest, uint, 0444);
MODULE_PARM_DESC(test_table_nest,
		 "test build: task-context counts of a table that count once more in it from inside their claim, as an interrupt's hook would (decremented)");

unsigned int tcptw_test_table_nested;
module_param_named(test_table_nested, tcptw_test_table_nested, uint, 0444);
MODULE_PARM_DESC(test_table_nested,
		 "test build: counts test_table_nest made (peers row 198.18.255.254 port 0, port_exhausted)");

unsigned int tcptw_test_table_busy_seen;
module_param_named(test_table_busy_seen, tcptw_test_table_busy_seen, uint,
		   0444);
MODULE_PARM_DESC(test_table_busy_seen,
		 "test build: counts that found their CPU's batch claimed and went to the row");

unsigned int tcptw_test_group_walks;
module_param_named(test_group_walks, tcptw_test_group_walks, uint, 0444);
MODULE_PARM_DESC(test_group_walks,
		 "test build: walks of an SO_REUSEPORT group for a listeners row's gauges (racy count, for a test's deltas)");

static unsigned int tcptw_test_selftest_checks;
module_param_named(selftest_checks, tcptw_test_selftest_checks, uint, 0444);
MODULE_PARM_DESC(selftest_checks,
		 "test build: the self-tests' checks passed at load (kmod/selftest/)");

bool tcptw_st_check(const char *what, u64 got, u64 want, unsigned int *checks)
{
	if (got != want) {
		pr_err("self-test: %s: got %llu, want %llu\n", what, got, want);
		return false;
	}
	(*checks)++;
	return true;
}

static bool tcptw_st_oom;

/* a self-test's allocation @what failed: the load fails with ENOMEM */
bool tcptw_st_nomem(const char *what)
{
	pr_err("self-test: %s: out of memory\n", what);
	tcptw_st_oom = true;
	return false;
}

int __init tcptw_selftest(void)
{
	/* test_table_nest's counts are for the test that set it */
	unsigned int nest = tcptw_test_table_nest, checks = 0;
	bool ok;

	tcptw_test_table_nest = 0;
	ok = tcptw_table_selftest(&checks) && tcptw_ring_selftest(&checks);
	tcptw_test_table_nest = nest;
	if (!ok) {
		pr_err("self-test failed after %u checks\n", checks);
		return tcptw_st_oom ? -ENOMEM : -ENOTRECOVERABLE;
	}
	tcptw_test_selftest_checks = checks;
	pr_info("self-test: %u checks passed\n", checks);
	return 0;
}
