// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Hooks on ftrace_ops of tcptw's own, for x86-64 kernels that export no
 * fprobes (5.10, 6.1; compat/hook.h).
 *
 * Why not kprobes there: a kprobe hit while any kprobe handler runs on the
 * same CPU is skipped, and kprobes at a function's entry are ftrace-based
 * with interrupts on, so a softirq that interrupts a hook in process
 * context (connect(), conntrack on output, a socket's backlog) lost every
 * hook it hit: 2-18 per hook in one run of a seed at its own load. ftrace
 * guards recursion per context (task, softirq, hardirq, NMI), not per CPU.
 *
 * A function's entry (TCPTW_ENTRY) is an ftrace callback. Its entry and
 * return (TCPTW_CALL) are seen by a wrapper: an IPMODIFY callback (as
 * livepatch uses) sends the call to one of the wrap_N() functions below,
 * which runs the entry handler, calls the function's body past its fentry
 * site with the same six argument registers (every hooked function takes
 * at most six integer or pointer arguments), runs the return handler and
 * returns the body's result to the caller. The per-call data lives on the
 * wrapper's stack: no instance pool to run out of, nothing missed.
 *
 * Each wrapper has an ftrace_ops of its own, registered with its one
 * function in the filter: on 6.1 registration is where an IPMODIFY ops
 * and a BPF trampoline (fexit, fmod_ret) on the same function agree to
 * share it; a site added to an ops already registered skips that, and the
 * trampoline would then return past the wrapper.
 *
 * Unload: the ops are unregistered first (each waits until no task is on
 * its trampoline), so no call enters a wrapper any more; the calls inside
 * one (wraps_in_flight, raised and dropped by the wrapper itself) are
 * waited for, and one RCU-tasks grace period then covers a task preempted
 * in a wrapper's last instructions.
 *
 * IPMODIFY is exclusive: a hook ftrace refuses (livepatch, a kprobe with a
 * post handler, on 5.10 a BPF fentry/fexit already on the function) falls
 * back to hook_kprobe.c's, and the probes file names the mechanism of each
 * hook; one of those loaded after tcptw is refused instead, which the
 * kprobes=1 parameter avoids (README "Limits").
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "probes.h"

#ifdef TCPTW_HAVE_FTRACE_REGS
#define TCPTW_FREGS struct ftrace_regs

static __always_inline struct pt_regs *cb_regs(struct ftrace_regs *fregs)
{
	return ftrace_get_regs(fregs);
}
#else
/* 5.10: callbacks get the pt_regs themselves */
#define TCPTW_FREGS struct pt_regs

static __always_inline struct pt_regs *cb_regs(struct pt_regs *regs)
{
	return regs;
}
#endif

#ifdef TCPTW_HAVE_FTRACE_OPS_FL_RECURSION
/* 5.11+: ask ftrace for its per-context recursion guard */
#define OPS_RECURSION	FTRACE_OPS_FL_RECURSION
#else
/* 5.10: ftrace guards every ops without FTRACE_OPS_FL_RECURSION_SAFE */
#define OPS_RECURSION	0
#endif

static bool kprobes;
module_param(kprobes, bool, 0444);
MODULE_PARM_DESC(kprobes,
		 "hook with kprobes and kretprobes, not ftrace (leaves the hooked functions to livepatch)");

/* wrappers, one per TCPTW_CALL hook attached through ftrace */
#define NR_SLOTS	16

struct wrap_slot {
	struct ftrace_ops ops;		/* IPMODIFY, the one function */
	struct tcptw_probe *probe;	/* a probe keeps its slot */
	unsigned long body;		/* the function past its fentry site */
};

static void notrace call_cb(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, TCPTW_FREGS *fregs);

#define CALL_OPS {							\
	.func = call_cb,						\
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |	\
		 OPS_RECURSION,						\
}

static struct wrap_slot slots[NR_SLOTS] = {
	[0 ... NR_SLOTS - 1] = { .ops = CALL_OPS },
};

/* calls inside a wrapper: raised and dropped by the wrapper, on any CPU */
static DEFINE_PER_CPU(long, wraps_in_flight);

/* the entry hooks ever attached through ftrace, found by fentry site */
static struct tcptw_probe **sites;
static unsigned int nsites, maxsites;
/* detached with the batch at unload */
static struct tcptw_probe **batch;
static unsigned int nbatch;

static int entry_count;		/* sites in entry_ops' filter */

static struct tcptw_probe *site_probe(unsigned long ip)
{
	/* pairs with the release in ftrace_attach_entry(): sites[i] is set */
	unsigned int i, n = smp_load_acquire(&nsites);

	for (i = 0; i < n; i++)
		if (READ_ONCE(sites[i]->hook.ip) == ip)
			return sites[i];
	return NULL;
}

static void notrace entry_cb(unsigned long ip, unsigned long parent_ip,
			     struct ftrace_ops *op, TCPTW_FREGS *fregs)
{
	struct pt_regs *regs = cb_regs(fregs);
	struct tcptw_probe *p = site_probe(ip);

	if (!p || !regs)
		return;
	tcptw_probe_hit(p);
	p->entry(regs);
}

typedef unsigned long (*wrap_fn)(unsigned long a0, unsigned long a1,
				 unsigned long a2, unsigned long a3,
				 unsigned long a4, unsigned long a5);

/*
 * The call's own argument registers go to the handlers as a pt_regs, the
 * body's result as its ax (regs_return_value()): all they read.
 */
static __always_inline unsigned long wrap(struct wrap_slot *s,
					  unsigned long a0, unsigned long a1,
					  unsigned long a2, unsigned long a3,
					  unsigned long a4, unsigned long a5)
{
	struct tcptw_probe *p = READ_ONCE(s->probe);
	wrap_fn body = (wrap_fn)READ_ONCE(s->body);
	u64 data[TCPTW_MAX_CALL_DATA / sizeof(u64)];
	struct pt_regs regs;
	unsigned long ret;
	int skip;

	/*
	 * Raised here, not in call_cb(): a call that never reaches the
	 * wrapper (another ftrace user redirecting it after us) would
	 * otherwise hold unload forever. A task sent here is off the ops'
	 * trampoline only once it ran this far (5.10: nothing preempts it
	 * before; 6.1: unregistering waits for RCU-tasks).
	 */
	this_cpu_inc(wraps_in_flight);
	regs.di = a0;
	regs.si = a1;
	regs.dx = a2;
	regs.cx = a3;
	regs.r8 = a4;
	regs.r9 = a5;
	/* handlers run with preemption disabled, as on the other backends */
	preempt_disable_notrace();
	tcptw_probe_hit(p);
	skip = p->call(data, &regs);
	preempt_enable_notrace();
	ret = body(a0, a1, a2, a3, a4, a5);
	if (!skip) {
		regs.ax = ret;
		preempt_disable_notrace();
		p->ret(data, &regs);
		preempt_enable_notrace();
	}
	this_cpu_dec(wraps_in_flight);
	return ret;
}

#define WRAPPER(n)							\
static unsigned long notrace wrap_##n(unsigned long a0, unsigned long a1, \
				      unsigned long a2, unsigned long a3, \
				      unsigned long a4, unsigned long a5) \
{									\
	return wrap(&slots[n], a0, a1, a2, a3, a4, a5);			\
}

WRAPPER(0)
WRAPPER(1)
WRAPPER(2)
WRAPPER(3)
WRAPPER(4)
WRAPPER(5)
WRAPPER(6)
WRAPPER(7)
WRAPPER(8)
WRAPPER(9)
WRAPPER(10)
WRAPPER(11)
WRAPPER(12)
WRAPPER(13)
WRAPPER(14)
WRAPPER(15)

static const wrap_fn wrappers[NR_SLOTS] = {
	wrap_0, wrap_1, wrap_2, wrap_3, wrap_4, wrap_5, wrap_6, wrap_7,
	wrap_8, wrap_9, wrap_10, wrap_11, wrap_12, wrap_13, wrap_14, wrap_15,
};

static void notrace call_cb(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, TCPTW_FREGS *fregs)
{
	struct wrap_slot *s = container_of(op, struct wrap_slot, ops);
	struct pt_regs *regs = cb_regs(fregs);

	if (regs)
		instruction_pointer_set(regs,
					(unsigned long)wrappers[s - slots]);
}

static struct ftrace_ops entry_ops = {
	.func = entry_cb,
	.flags = FTRACE_OPS_FL_SAVE_REGS | OPS_RECURSION,
};

int tcptw_hooks_init(unsigned int n)
{
	int err;

	sites = kcalloc(n, sizeof(*sites), GFP_KERNEL);
	batch = kcalloc(n, sizeof(*batch), GFP_KERNEL);
	err = tcptw_kp_hooks_init(n);
	if (!sites || !batch || err) {
		tcptw_hooks_uninit();
		return err ?: -ENOMEM;
	}
	maxsites = n;
	nsites = 0;
	nbatch = 0;
	return 0;
}

void tcptw_hooks_uninit(void)
{
	tcptw_kp_hooks_uninit();
	kfree(batch);
	kfree(sites);
	batch = NULL;
	sites = NULL;
	maxsites = 0;
	nsites = 0;
}

static int slot_of(struct tcptw_probe *p)
{
	int i;

	for (i = 0; i < NR_SLOTS; i++)
		if (slots[i].probe == p || !slots[i].probe)
			return i;
	return -ENOSPC;
}

/*
 * The symbol's address, from a kprobe registered disabled (nothing is
 * armed): no exported lookup takes "module:symbol". It stays registered
 * until detach, so that unload unregisters them all after one grace
 * period instead of one per hook.
 */
static int lookup(struct tcptw_probe *p)
{
	struct kprobe *kp = &p->hook.kp;

	kp->symbol_name = p->name;
	kp->flags = KPROBE_FLAG_DISABLED;
	return register_kprobe(kp);
}

/* the ftrace_ops whose filter holds @p's site */
static struct ftrace_ops *hook_ops(const struct tcptw_probe *p)
{
	return p->kind == TCPTW_CALL ? &slots[p->hook.slot].ops : &entry_ops;
}

static int ftrace_attach_call(struct tcptw_probe *p, unsigned long ip)
{
	struct wrap_slot *s;
	int err;

	err = slot_of(p);
	if (err < 0)
		return err;
	s = &slots[err];
	p->hook.slot = err;
	/* no call reaches the wrapper before the ops is registered */
	WRITE_ONCE(s->body, ip + MCOUNT_INSN_SIZE);
	WRITE_ONCE(s->probe, p);
	err = ftrace_set_filter_ip(&s->ops, ip, 0, 1);
	if (err)
		return err;
	err = register_ftrace_function(&s->ops);
	if (err) {
		ftrace_set_filter_ip(&s->ops, ip, 1, 0);
		return err;
	}
	WRITE_ONCE(p->hook.ip, ip);
	return 0;
}

static int ftrace_attach_entry(struct tcptw_probe *p, unsigned long ip)
{
	unsigned int i;
	int err;

	for (i = 0; i < nsites && sites[i] != p; i++)
		;
	if (i == nsites) {
		if (nsites == maxsites)
			return -ENOSPC;
		sites[nsites] = p;
		/* pairs with the acquire in site_probe() */
		smp_store_release(&nsites, nsites + 1);
	}
	WRITE_ONCE(p->hook.ip, ip);
	err = ftrace_set_filter_ip(&entry_ops, ip, 0, 0);
	if (err)
		goto out;
	/* an ops with an empty filter would trace every function */
	if (!entry_count) {
		err = register_ftrace_function(&entry_ops);
		if (err) {
			ftrace_set_filter_ip(&entry_ops, ip, 1, 0);
			goto out;
		}
	}
	entry_count++;
	return 0;
out:
	WRITE_ONCE(p->hook.ip, 0);
	return err;
}

int tcptw_hook_attach(struct tcptw_probe *p)
{
	int err;

	/* a struct kprobe may be registered again once cleared */
	memset(&p->hook, 0, sizeof(p->hook));
	if (kprobes ||
	    (p->kind == TCPTW_CALL && p->data_size > TCPTW_MAX_CALL_DATA))
		goto fallback;
	err = lookup(p);
	if (err)
		return err;
	if (p->kind == TCPTW_CALL)
		err = ftrace_attach_call(p, (unsigned long)p->hook.kp.addr);
	else
		err = ftrace_attach_entry(p, (unsigned long)p->hook.kp.addr);
	if (!err)
		return 0;
	pr_info("%s: ftrace refused it (%d), kprobes instead\n", p->name, err);
	unregister_kprobe(&p->hook.kp);
	memset(&p->hook, 0, sizeof(p->hook));
fallback:
	err = tcptw_kp_attach(p);
	p->hook.fallback = true;	/* after its memset */
	return err;
}

static void ftrace_detach(struct tcptw_probe *p)
{
	struct ftrace_ops *ops = hook_ops(p);

	if (p->kind == TCPTW_CALL) {
		unregister_ftrace_function(ops);
	} else {
		if (entry_count == 1)
			unregister_ftrace_function(ops);
		entry_count--;
	}
	ftrace_set_filter_ip(ops, p->hook.ip, 1, 0);
	WRITE_ONCE(p->hook.ip, 0);
}

void tcptw_hook_detach(struct tcptw_probe *p, bool batch_it)
{
	if (p->hook.fallback) {
		tcptw_kp_detach(p, batch_it);
		return;
	}
	if (batch_it) {
		batch[nbatch++] = p;
		return;
	}
	/* a module going away: its calls have ended, wrappers stay loaded */
	ftrace_detach(p);
	tcptw_kp_unregister(&p->hook.kp, false);
}

static long wraps_pending(void)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		/* each CPU's own, written by it without a lock */
		n += data_race(per_cpu(wraps_in_flight, cpu));
	return n;
}

void tcptw_hooks_detach_batch(void)
{
	struct tcptw_probe *p;
	unsigned int i;

	/* no call enters a callback, so none a wrapper, after these */
	if (entry_count)
		unregister_ftrace_function(&entry_ops);
	for (i = 0; i < nbatch; i++)
		if (batch[i]->kind == TCPTW_CALL)
			unregister_ftrace_function(hook_ops(batch[i]));
	for (i = 0; i < nbatch; i++) {
		p = batch[i];
		ftrace_set_filter_ip(hook_ops(p), p->hook.ip, 1, 0);
		WRITE_ONCE(p->hook.ip, 0);
		tcptw_kp_unregister(&p->hook.kp, true);
	}
	nbatch = 0;
	entry_count = 0;
	/*
	 * Calls inside a wrapper return in bounded time (the longest,
	 * __inet_hash_connect(), scans the ephemeral range once).
	 */
	for (i = 0; wraps_pending(); i++) {
		WARN_ONCE(i == 10000, "tcptw: calls still inside a wrapper\n");
		usleep_range(1000, 2000);
	}
	/* a task preempted after its wrapper's decrement (synchronize_rcu
	 * where the kernel cannot preempt one)
	 */
	synchronize_rcu_tasks();
	tcptw_kp_detach_batch();
}

/*
 * ftrace keeps no count of what it skips: a callback recursing within one
 * context (any ftrace user's handler calling a hooked function), or every
 * call while kernel.ftrace_enabled is 0 (README "Limits").
 */
unsigned long tcptw_hook_missed(const struct tcptw_probe *p)
{
	return p->hook.fallback ? tcptw_kp_missed(p) : 0;
}

const char *tcptw_hook_mechanism(const struct tcptw_probe *p)
{
	if (p->hook.fallback)
		return tcptw_kp_mechanism(p);
	return p->kind == TCPTW_ENTRY ? "ftrace" : "ftrace-call";
}
