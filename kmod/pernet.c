// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * pernet_operations: every netns, including ones created after the load,
 * gets its own counters, event ring and /proc/net/tcptw/.
 */
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/rcupdate.h>

#include "pernet.h"
#include "table.h"
#include "proc.h"
#include "mib.h"
#include "test.h"

unsigned int tcptw_net_id __read_mostly;

/* sum over CPUs of a slot, since the state was made */
u64 tcptw_slot_raw(const struct tcptw_state *st, unsigned int slot)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(st->pcpu, cpu)->slot[slot]);
	return sum;
}

u64 tcptw_slot_sum(const struct tcptw_state *st, unsigned int slot)
{
	/*
	 * The baseline first (pairs with the release in tcptw_state_reset()):
	 * slots only grow and a reset stores the sum it hides, so the slots
	 * read after it add up to at least that much. Read the other way
	 * round, a reset in between would make the difference wrap.
	 */
	u64 base = smp_load_acquire(&st->base[slot]);
	u64 sum = tcptw_slot_raw(st, slot);

	return sum > base ? sum - base : 0;
}

/*
 * Zeroing per-CPU slots would race with increments on other CPUs; moving
 * the baseline does not, and a concurrent increment lands after it.
 */
void tcptw_state_reset(const struct net *net, struct tcptw_state *st)
{
	int i;

	mutex_lock(&st->reset_lock);
	/* what the kernel decided before the reset, in the rows it clears */
	rcu_read_lock();
	tcptw_counters_baseline(net, st);
	rcu_read_unlock();
	for (i = 0; i < TCPTW_NR_SLOTS; i++)
		/* pairs with the acquire in tcptw_slot_sum() */
		smp_store_release(&st->base[i],
				  READ_ONCE(st->base[i]) +
				  tcptw_slot_sum(st, i));
	tcptw_ring_reset(st->ring);
	tcptw_table_reset(st->peers);
	tcptw_table_reset(st->listeners);
	mutex_unlock(&st->reset_lock);
}

/*
 * Events are samples of the failures, the counters and rows their exact
 * count: 100 a second per CPU and type is more than a reader follows,
 * and keeps a flood's cost of events (70-210 instructions each) below 2%
 * of its failures on the slowest machine tcptw runs in, a TCG guest
 * (docs/bench.md). Root may change it while loaded; 0 records them all.
 */
unsigned int tcptw_event_rate __read_mostly = 100;
module_param_named(event_rate, tcptw_event_rate, uint, 0644);
MODULE_PARM_DESC(event_rate,
		 "events recorded per second, CPU, event type and netns (0: all); the rest only counted, in EventsRateLimited");

/*
 * May this CPU record one more event of @type this second? Per CPU and
 * type, so that a flood of one kind (SYN cookies, RSTs) neither writes
 * the ring's shared head from every CPU at its own rate nor pushes the
 * other kinds out of the ring; the counters stay exact. The fields are
 * this CPU's only; a handler interrupted by another on the same CPU may
 * lose one increment of them, which only moves the limit by one.
 */
static bool emit_allowed(struct tcptw_state *st, u8 type)
{
	unsigned int rate = READ_ONCE(tcptw_event_rate);
	unsigned long now = jiffies;
	unsigned int i;

	if (!rate || type >= TCPTW_NR_EVENTS)
		return true;
	/* unsigned: a zeroed start is long past, whatever INITIAL_JIFFIES */
	if (now - this_cpu_read(st->pcpu->ev_second) >= HZ) {
		this_cpu_write(st->pcpu->ev_second, now);
		for (i = 0; i < TCPTW_NR_EVENTS; i++)
			this_cpu_write(st->pcpu->ev_count[i], 0);
	}
	if (this_cpu_read(st->pcpu->ev_count[type]) >= rate) {
		tcptw_inc(st, TCPTW_EVENTS_RATE_LIMITED);
		return false;
	}
	this_cpu_inc(st->pcpu->ev_count[type]);
	return true;
}

void tcptw_emit(struct tcptw_state *st, struct tcptw_event *ev)
{
	if (!st->ring || !emit_allowed(st, ev->type))
		return;
	tcptw_event_push(st, ev);
}

bool tcptw_event_allowed(struct tcptw_state *st, u8 type)
{
	return st->ring && emit_allowed(st, type);
}

void tcptw_event_init(struct tcptw_event *ev, u8 type)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->age_ms = -1;
}

bool tcptw_event_start(struct tcptw_state *st, struct tcptw_event *ev,
		       u8 type)
{
	if (!tcptw_event_ok(st, type))
		return false;
	tcptw_event_init(ev, type);
	return true;
}

void tcptw_event_push(struct tcptw_state *st, struct tcptw_event *ev)
{
	ev->time_ns = ktime_get_real_ns();
	tcptw_ring_push(st->ring, ev);
}

void tcptw_count_event(const struct net *net, enum tcptw_counter c,
		       struct tcptw_event *ev)
{
	struct tcptw_state *st;

	rcu_read_lock();
	st = tcptw_state(net);
	if (st) {
		tcptw_inc(st, c);
		tcptw_emit(st, ev);
	}
	rcu_read_unlock();
}

static void state_free(struct tcptw_state *st)
{
	tcptw_table_free(st->listeners);
	tcptw_table_free(st->peers);
	tcptw_ring_free(st->ring);
	free_percpu(st->pcpu);
	kfree(st);
}

/* frees the states of deleted namespaces, an RCU grace period later */
static struct workqueue_struct *free_wq;

static void state_free_work(struct work_struct *work)
{
	state_free(container_of(to_rcu_work(work), struct tcptw_state,
				free_work));
}

/*
 * Never fails: tcptw must not make namespace creation fail. Everything is
 * charged to the creating task's memory cgroup. Without the state itself
 * (a few hundred bytes and the per-CPU counters) the namespace is not
 * tracked (and has no /proc/net/tcptw); without its ring or a table it
 * still counts, and its status file says which part is missing and why.
 */
static int __net_init tcptw_net_init(struct net *net)
{
	struct tcptw_net *tn = net_generic(net, tcptw_net_id);
	struct tcptw_state *st;

	tcptw_test_failnth_mark(TCPTW_FAILNTH_NETNS, false);
	st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!st)
		goto untracked;
	mutex_init(&st->reset_lock);
	spin_lock_init(&st->count_lock);
	st->pcpu = alloc_percpu_gfp(struct tcptw_pcpu,
				    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!st->pcpu)
		goto err_free_state;
	st->ring = tcptw_ring_alloc(&st->ring_state);
	st->peers = tcptw_table_alloc(tcptw_peer_table_size,
				      &st->peers_state);
	st->listeners = tcptw_table_alloc(tcptw_listener_table_size,
					  &st->listeners_state);
	/*
	 * the MIBs count from now on, as tcptw's own slots do (taken again
	 * once the hooks are attached, for the netns made before it:
	 * tcptw_pernet_rebase())
	 */
	rcu_read_lock();
	tcptw_counters_baseline(net, st);
	rcu_read_unlock();
	if (tcptw_proc_net_init(net))
		goto err_free_state;
	rcu_assign_pointer(tn->state, st);
	tcptw_test_failnth_mark(TCPTW_FAILNTH_NETNS, true);
	return 0;

err_free_state:
	state_free(st);
untracked:
	pr_warn_ratelimited("out of memory: a new netns is not tracked\n");
	tcptw_test_failnth_mark(TCPTW_FAILNTH_NETNS, true);
	return 0;
}

static void __net_exit tcptw_net_exit(struct net *net)
{
	struct tcptw_net *tn = net_generic(net, tcptw_net_id);
	struct tcptw_state *st = rcu_dereference_protected(tn->state, true);

	/* waits for readers of our /proc files */
	tcptw_proc_net_exit(net);
	RCU_INIT_POINTER(tn->state, NULL);
	/* probes may still hold @st (TIME_WAIT purge runs in later exits) */
	if (st) {
		INIT_RCU_WORK(&st->free_work, state_free_work);
		queue_rcu_work(free_wq, &st->free_work);
	}
}

static struct pernet_operations tcptw_net_ops = {
	.init = tcptw_net_init,
	.exit = tcptw_net_exit,
	.id = &tcptw_net_id,
	.size = sizeof(struct tcptw_net),
};

/*
 * Once every hook is attached: the counters of the netns made before it
 * start again from there. Until then the MIBs counted decisions whose
 * hooked part nobody counted (a SYN's overflow in ListenOverflowAck, for
 * one), and the listeners rows would never add up to ListenOverflows. A
 * netns whose state is made meanwhile but listed only after this walk
 * (setup_net() lists it after its inits) keeps its creation's baseline:
 * a window of microseconds at load.
 */
void tcptw_pernet_rebase(void)
{
	struct tcptw_state *st;
	struct net *net;

	down_read(&net_rwsem);
	for_each_net(net) {
		rcu_read_lock();
		st = tcptw_state(net);
		rcu_read_unlock();
		/* freed only by this netns' exit: it is on the list */
		if (st)
			tcptw_state_reset(net, st);
	}
	up_read(&net_rwsem);
}

int tcptw_pernet_init(void)
{
	int err;

	free_wq = alloc_workqueue("tcptw_free", WQ_UNBOUND, 0);
	if (!free_wq)
		return -ENOMEM;
	err = register_pernet_subsys(&tcptw_net_ops);
	/*
	 * A failed register ran the exits of the namespaces it had
	 * initialised, whose frees are queue_rcu_work()'s: it waits for their
	 * RCU callbacks itself (rcu_barrier() in register_pernet_operations()
	 * on every kernel), so the queue holds them when it is destroyed and
	 * they run before it goes.
	 */
	if (err)
		destroy_workqueue(free_wq);
	return err;
}

void tcptw_pernet_uninit(void)
{
	unregister_pernet_subsys(&tcptw_net_ops);
	/* queue_rcu_work()'s callbacks queue the last frees... */
	rcu_barrier();
	/* ...which this runs to the end */
	destroy_workqueue(free_wq);
}
