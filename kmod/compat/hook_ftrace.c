// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Hooks at a function's entry on an ftrace_ops of tcptw's own, on x86-64
 * (compat/hook.h).
 *
 * Why not kprobes (5.10, 6.1): a kprobe hit while any kprobe handler runs
 * on the same CPU is skipped, and kprobes at a function's entry are
 * ftrace-based with interrupts on, so a softirq that interrupts a hook in
 * process context (connect(), conntrack on output, a socket's backlog)
 * lost every hook it hit: 2-18 per hook in one run of a seed at its own
 * load. An ftrace_ops callback has no such per-CPU rule: it runs in
 * every context it is hit in (tcptw's take no recursion guard, as they
 * call nothing they hook: hook_ftrace.h). Why not fprobes (6.12, 7.2): an
 * fprobe's entry goes through the function graph tracer from 6.14, about
 * twice the instructions of an ftrace_ops callback (docs/bench.md).
 *
 * One ops holds every entry site in its filter; the callback finds the
 * hook by the site's address in a small hash. A hook that every
 * connection or every packet of a flood reaches (the listener's, every
 * SYN and every handshake's ACK; a TIME_WAIT socket's birth, segments
 * and deschedule; a failed connect(); a RST sent, before 6.10) has an ops
 * of its own, whose callback calls it directly (compat/hook_ftrace.h):
 * about 30 instructions less per call, one more ops each to unregister
 * at unload. From 5.11 the ops asks for
 * the argument registers only (not SAVE_REGS): ftrace's plain trampoline
 * saves them, and the hooks read nothing else. The ops never modifies
 * the call (no IPMODIFY): livepatch, a kprobe with a post handler and BPF
 * trampolines on the same functions keep working beside it. A hook that
 * needs a function's return (TCPTW_CALL: only conntrack's, on rare paths)
 * or that ftrace refuses goes to the fallback: an fprobe where the kernel
 * exports them (hook_fprobe.c), else a kprobe or kretprobe
 * (hook_kprobe.c); none of them is exclusive either. From 6.14 fprobes
 * ride the function graph tracer, which an fprobe with a return handler
 * turns on for every task of the system (a shadow stack each, a hook on
 * every context switch) however rarely its function runs: a return goes
 * to a kretprobe there, whose trampoline costs only the calls it hooks.
 *
 * Unload: unregistering the ops waits until no task is in its callback.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "probes.h"

static bool kprobes;
module_param(kprobes, bool, 0444);
MODULE_PARM_DESC(kprobes,
		 "hook with kprobes and kretprobes (fprobes where the kernel has them), not tcptw's ftrace_ops");

/* what the ops does not take (compat/hook.h) */
#ifdef TCPTW_HAVE_FPROBE
#define fb_attach	tcptw_fp_attach
#define fb_detach	tcptw_fp_detach
#define fb_missed	tcptw_fp_missed
#define fb_mechanism	tcptw_fp_mechanism
#define FB_NAME		"an fprobe"

static void fb_detach_batch(void)
{
	tcptw_fp_detach_batch();
	/* the symbol lookups' disabled kprobes */
	tcptw_kp_detach_batch();
}
#else
#define fb_attach	tcptw_kp_attach
#define fb_detach	tcptw_kp_detach
#define fb_detach_batch	tcptw_kp_detach_batch
#define fb_missed	tcptw_kp_missed
#define fb_mechanism	tcptw_kp_mechanism
#define FB_NAME		"a kprobe"
#endif

/* a hook that goes to a kretprobe whatever the fallback (see above) */
static bool on_kprobe(const struct tcptw_probe *p)
{
#ifdef TCPTW_HAVE_FPROBE_FREGS
	return p->kind == TCPTW_CALL;
#else
	return false;
#endif
}

/*
 * The entry hooks ever attached through ftrace, by fentry site: open
 * addressing, never removed (a detached hook's ip is 0, so its slot no
 * longer matches), filled under probes_lock, read locklessly.
 */
#define SITE_BITS	6
#define SITE_SLOTS	BIT(SITE_BITS)

struct site {
	unsigned long ip;
	struct tcptw_probe *p;
};

static struct site sites[SITE_SLOTS];
static unsigned int nsites, maxsites;
/* detached with the batch at unload */
static struct tcptw_probe **batch;
static unsigned int nbatch;

static int entry_count;		/* sites in entry_ops' filter */

static struct tcptw_probe *site_probe(unsigned long ip)
{
	unsigned int i, n;
	struct tcptw_probe *p;

	for (i = hash_long(ip, SITE_BITS), n = 0; n < SITE_SLOTS;
	     i = (i + 1) & (SITE_SLOTS - 1), n++) {
		/* pairs with the release in site_add(): .ip is set */
		p = smp_load_acquire(&sites[i].p);
		if (!p)
			return NULL;
		if (sites[i].ip == ip && READ_ONCE(p->hook.ip) == ip)
			return p;
	}
	return NULL;
}

/* under probes_lock */
static int site_add(struct tcptw_probe *p, unsigned long ip)
{
	unsigned int i, n;

	for (i = hash_long(ip, SITE_BITS), n = 0; n < SITE_SLOTS;
	     i = (i + 1) & (SITE_SLOTS - 1), n++) {
		if (sites[i].p == p && sites[i].ip == ip)
			return 0;
		if (!sites[i].p)
			break;
	}
	/* at most half full: a lookup stops at an empty slot soon */
	if (n == SITE_SLOTS || nsites == maxsites)
		return -ENOSPC;
	sites[i].ip = ip;
	/* pairs with the acquire in site_probe(): .ip before .p */
	smp_store_release(&sites[i].p, p);
	nsites++;
	return 0;
}

static void notrace entry_cb(TCPTW_FTRACE_CB_ARGS)
{
	struct pt_regs *regs = tcptw_cb_regs(fregs);
	struct tcptw_probe *p;

	tcptw_cb_lock();
	p = site_probe(ip);
	if (p && regs) {
		tcptw_probe_hit(p);
		p->entry(regs);
	}
	tcptw_cb_unlock();
}

static struct ftrace_ops entry_ops = {
	.func = entry_cb,
	.flags = TCPTW_OPS_REGS,
};

int tcptw_hooks_init(unsigned int n)
{
	int err;

	batch = kcalloc(n, sizeof(*batch), GFP_KERNEL);
	err = tcptw_kp_hooks_init(n);
	if (!batch || err) {
		tcptw_hooks_uninit();
		return err ?: -ENOMEM;
	}
	memset(sites, 0, sizeof(sites));
	maxsites = min_t(unsigned int, n, SITE_SLOTS / 2);
	nsites = 0;
	nbatch = 0;
	return 0;
}

void tcptw_hooks_uninit(void)
{
	tcptw_kp_hooks_uninit();
	kfree(batch);
	batch = NULL;
	memset(sites, 0, sizeof(sites));
	maxsites = 0;
	nsites = 0;
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

static int ftrace_attach_entry(struct tcptw_probe *p, unsigned long ip)
{
	int err;

	err = site_add(p, ip);
	if (err)
		return err;
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

/*
 * A hook with a callback of its own (p->own_cb): an ops of its own, whose
 * trampoline calls it directly.
 */
static int ftrace_attach_own(struct tcptw_probe *p, unsigned long ip)
{
	struct ftrace_ops *ops = &p->hook.ops;
	int err;

	ops->func = p->own_cb;
	ops->flags = TCPTW_OPS_REGS;
	err = ftrace_set_filter_ip(ops, ip, 0, 0);
	if (err)
		return err;
	err = register_ftrace_function(ops);
	if (err) {
		/* an empty filter hash is freed (ftrace_free_filter(): 5.13+) */
		ftrace_set_filter_ip(ops, ip, 1, 0);
		return err;
	}
	p->hook.own = true;
	WRITE_ONCE(p->hook.ip, ip);
	return 0;
}

/* waits until no task is in its callback */
static void ftrace_detach_own(struct tcptw_probe *p)
{
	unregister_ftrace_function(&p->hook.ops);
	ftrace_set_filter_ip(&p->hook.ops, p->hook.ip, 1, 0);
	WRITE_ONCE(p->hook.ip, 0);
}

int tcptw_hook_attach(struct tcptw_probe *p)
{
	int err;

	/* a struct kprobe may be registered again once cleared */
	memset(&p->hook, 0, sizeof(p->hook));
	/* a function's return: a kretprobe, never a redirected call */
	if (kprobes || p->kind == TCPTW_CALL)
		goto fallback;
	err = lookup(p);
	if (err)
		return err;
	if (p->own_cb)
		err = ftrace_attach_own(p, (unsigned long)p->hook.kp.addr);
	else
		err = ftrace_attach_entry(p, (unsigned long)p->hook.kp.addr);
	if (!err)
		return 0;
	pr_info("%s: ftrace refused it (%d), %s instead\n", p->name, err,
		FB_NAME);
	unregister_kprobe(&p->hook.kp);
	memset(&p->hook, 0, sizeof(p->hook));
fallback:
	err = on_kprobe(p) ? tcptw_kp_attach(p) : fb_attach(p);
	p->hook.fallback = true;	/* after its memset */
	return err;
}

static void ftrace_detach(struct tcptw_probe *p)
{
	if (entry_count == 1)
		unregister_ftrace_function(&entry_ops);
	entry_count--;
	ftrace_set_filter_ip(&entry_ops, p->hook.ip, 1, 0);
	WRITE_ONCE(p->hook.ip, 0);
}

void tcptw_hook_detach(struct tcptw_probe *p, bool batch_it)
{
	if (p->hook.fallback) {
		if (on_kprobe(p))
			tcptw_kp_detach(p, batch_it);
		else
			fb_detach(p, batch_it);
		return;
	}
	if (batch_it) {
		batch[nbatch++] = p;
		return;
	}
	if (p->hook.own)
		ftrace_detach_own(p);
	else
		ftrace_detach(p);
	tcptw_kp_unregister(&p->hook.kp, false);
}

void tcptw_hooks_detach_batch(void)
{
	struct tcptw_probe *p;
	unsigned int i;

	/* waits until no task is in entry_cb() */
	if (entry_count)
		unregister_ftrace_function(&entry_ops);
	for (i = 0; i < nbatch; i++) {
		p = batch[i];
		if (p->hook.own) {
			ftrace_detach_own(p);
		} else {
			ftrace_set_filter_ip(&entry_ops, p->hook.ip, 1, 0);
			WRITE_ONCE(p->hook.ip, 0);
		}
		tcptw_kp_unregister(&p->hook.kp, true);
	}
	nbatch = 0;
	entry_count = 0;
	fb_detach_batch();
}

/*
 * ftrace keeps no count of what it skips: a callback recursing within one
 * context (any ftrace user's handler calling a hooked function), or every
 * call while kernel.ftrace_enabled is 0 (docs/design.md, Limits).
 */
unsigned long tcptw_hook_missed(const struct tcptw_probe *p)
{
	if (!p->hook.fallback)
		return 0;
	return on_kprobe(p) ? tcptw_kp_missed(p) : fb_missed(p);
}

const char *tcptw_hook_mechanism(const struct tcptw_probe *p)
{
	if (!p->hook.fallback)
		return "ftrace";
	return on_kprobe(p) ? tcptw_kp_mechanism(p) : fb_mechanism(p);
}
