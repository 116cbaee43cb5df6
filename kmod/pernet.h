/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Per-network-namespace state: per-CPU counters, the event ring and the
 * /proc/net/tcptw directory.
 */
#ifndef _TCPTW_PERNET_H
#define _TCPTW_PERNET_H

#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "counters.h"
#include "events.h"
#include "table.h"

/* the MIBs a listener decision moves, on the CPU that makes it (listen.c) */
#define TCPTW_LISTEN_MIBS 3

/*
 * A listener decision (listen.c), armed at the entry of the kernel
 * function that makes it and settled once the kernel has: by the CPU's
 * next listener hook in this netns, or by a reader. @state holds, from
 * bit 0 up: armed; the run (TCPTW_LISTEN_RUN_BITS: SYN cookies of @key's
 * row, settled without an event, not yet in the table); the generation.
 * A hook or a reader claims either with a cmpxchg of @state.
 */
#define TCPTW_LISTEN_RUN_BITS 10
struct tcptw_listen_rec {
	unsigned long state;
	unsigned long mib[TCPTW_LISTEN_MIBS];	/* this CPU's, at the entry */
	unsigned long when;	/* jiffies at the entry */
	unsigned long run_when;	/* jiffies of the run's last cookie */
	/* jiffies when listen_run() found the cookies' events spent */
	unsigned long spent_when;
	struct tcptw_tuple t;	/* the segment's addresses and ports */
	/* the listener's row: its bound address and port */
	struct tcptw_table_key key;
	u32 backlog, max;	/* the row's gauges at the entry */
	bool child;		/* tcp_v{4,6}_syn_recv_sock(), not tcp_conn_request() */
	bool syn;		/* the segment is a SYN */
};

struct tcptw_pcpu {
	u64 slot[TCPTW_NR_SLOTS];
	struct tcptw_listen_rec listen;
	/* the event rate limit (tcptw_emit()): when its second began... */
	unsigned long ev_second;
	/* ...and the events of each type recorded in it */
	u32 ev_count[TCPTW_NR_EVENTS];
};

struct tcptw_table;

/*
 * Lives as long as the netns is registered with us; freed after an RCU
 * grace period, so probes that looked it up under rcu_read_lock() (or with
 * preemption disabled) may keep using it until they return. Freed from a
 * workqueue, not an RCU callback: vunmap() (mem.c) may sleep.
 */
struct tcptw_state {
	struct tcptw_pcpu __percpu *pcpu;
	/* what "reset" subtracted; written under reset_lock only */
	u64 base[TCPTW_NR_SLOTS];
	/*
	 * Each counter's value (MIB and slots, mib.c) when the hooks were
	 * attached, the netns made or the counters reset; the highest value
	 * each has shown since (a counter never goes back). Under count_lock.
	 */
	s64 count_base[TCPTW_NR_COUNTERS];
	u64 count_shown[TCPTW_NR_COUNTERS];
	/*
	 * conntrack's insert_failed of this netns counted by instances of
	 * nf_conntrack that went away (ct.c); under count_lock
	 */
	u64 ct_gone_insert_failed;
	/*
	 * count_base[], count_shown[], ct_gone_insert_failed: readers,
	 * resets and ct.c's hook on conntrack's cleanup, all in process
	 * context, never a hook in softirq
	 */
	spinlock_t count_lock;
	/* serializes resets (base[] and the ring's tail) */
	struct mutex reset_lock;
	struct tcptw_ring *ring;
	struct tcptw_table *peers;
	struct tcptw_table *listeners;
	/* enum tcptw_mem_state of the three above (NULL unless ok) */
	u8 ring_state;
	u8 peers_state;
	u8 listeners_state;
	struct rcu_work free_work;
};

struct tcptw_net {
	struct tcptw_state __rcu *state;
};

extern unsigned int tcptw_net_id __read_mostly;

/* our slot of @ng, if it has one: a netns dying at load time never got it */
static inline struct tcptw_net *tcptw_net_slot(const struct net_generic *ng)
{
	if (unlikely(!ng || ng->s.len <= tcptw_net_id))
		return NULL;
	return ng->ptr[tcptw_net_id];
}

/*
 * The state of @net, or NULL (netns being created or dismantled, or one
 * that was already dying when the module loaded). Caller holds
 * rcu_read_lock().
 */
static inline struct tcptw_state *tcptw_state(const struct net *net)
{
	struct tcptw_net *tn = tcptw_net_slot(rcu_dereference(net->gen));

	return tn ? rcu_dereference(tn->state) : NULL;
}

/*
 * tcptw_state() in a hook, which runs with preemption disabled: a read
 * section of RCU (every flavour is one since v4.20) without
 * rcu_read_lock(), a call on kernels with preemptible RCU.
 */
static inline struct tcptw_state *tcptw_state_hook(const struct net *net)
{
	struct tcptw_net *tn = tcptw_net_slot(rcu_dereference_sched(net->gen));

	return tn ? rcu_dereference_sched(tn->state) : NULL;
}

static inline void tcptw_inc(struct tcptw_state *st, enum tcptw_counter c)
{
	/* this_cpu_inc: safe even where a tracepoint probe is preemptible */
	this_cpu_inc(st->pcpu->slot[c]);
}

static inline void tcptw_add(struct tcptw_state *st, enum tcptw_counter c,
			     unsigned int n)
{
	this_cpu_add(st->pcpu->slot[c], n);
}

static inline void tcptw_hist_add(struct tcptw_state *st, enum tcptw_hist h,
				  s32 age_ms)
{
	unsigned int b;

	if (age_ms < 0)
		return;		/* unknown age: not in any bucket */
	b = min_t(unsigned int, fls(age_ms), TCPTW_HIST_BUCKETS - 1);
	this_cpu_inc(st->pcpu->slot[TCPTW_HIST_SLOT(h, b)]);
}

/* sum over CPUs of a counter or histogram slot, minus the last reset */
u64 tcptw_slot_raw(const struct tcptw_state *st, unsigned int slot);
u64 tcptw_slot_sum(const struct tcptw_state *st, unsigned int slot);
void tcptw_state_reset(const struct net *net, struct tcptw_state *st);
void tcptw_pernet_rebase(void);
void tcptw_emit(struct tcptw_state *st, struct tcptw_event *ev);
/*
 * Start an event of @type in @ev (zeroed, age unknown) if this CPU may
 * record one more this second, before anything is spent on building it;
 * then fill it and tcptw_event_push() it. Preemption disabled.
 */
bool tcptw_event_start(struct tcptw_state *st, struct tcptw_event *ev,
		       u8 type);
/* the event_rate module parameter */
extern unsigned int tcptw_event_rate;

/*
 * Has this CPU recorded its event_rate events of @type in @st this
 * second? Then tcptw_event_ok() says no and counts the decision in
 * EventsRateLimited. Preemption disabled.
 */
static inline bool tcptw_event_spent(struct tcptw_state *st, u8 type)
{
	unsigned int rate = READ_ONCE(tcptw_event_rate);

	return st->ring && rate &&
	       jiffies - this_cpu_read(st->pcpu->ev_second) < HZ &&
	       this_cpu_read(st->pcpu->ev_count[type]) >= rate;
}

/* tcptw_event_ok() once the inline test has not said no */
bool tcptw_event_allowed(struct tcptw_state *st, u8 type);

/*
 * tcptw_event_start() in two steps, for a hook that counts floods:
 * whether this CPU may record an event of @type now (EventsRateLimited
 * counted if not; a flood's case, inline), then, in a function of its own
 * that only runs if so, @ev zeroed as one. Kernels built with
 * CONFIG_INIT_STACK_ALL_ZERO zero every local event at the entry of the
 * function that declares it, rate-limited or not. Preemption disabled.
 */
static inline bool tcptw_event_ok(struct tcptw_state *st, u8 type)
{
	if (tcptw_event_spent(st, type)) {
		tcptw_inc(st, TCPTW_EVENTS_RATE_LIMITED);
		return false;
	}
	return tcptw_event_allowed(st, type);
}

void tcptw_event_init(struct tcptw_event *ev, u8 type);
void tcptw_event_push(struct tcptw_state *st, struct tcptw_event *ev);
/* count @c in @net and log @ev, if tcptw tracks @net; any context */
void tcptw_count_event(const struct net *net, enum tcptw_counter c,
		       struct tcptw_event *ev);

/*
 * listen.c: count the listener decisions the kernel has made since their
 * hooks ran, on every CPU of @st's netns (a reader, before it reads).
 */
void tcptw_listen_settle(const struct net *net, struct tcptw_state *st);

int tcptw_pernet_init(void);
void tcptw_pernet_uninit(void);

#endif /* _TCPTW_PERNET_H */
