// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Hooks as kprobes (a function's entry) and kretprobes (entry and
 * return), for kernels that do not export fprobes, and the fallback of
 * hook_ftrace.c (compat/hook.h).
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/slab.h>

#include "probes.h"

/*
 * The probe of a kretprobe instance; NULL where the kernel cleared the
 * instance's kretprobe while unregistering it (5.11-5.19 without rethook).
 */
static struct tcptw_probe *ri_probe(struct kretprobe_instance *ri)
{
#ifdef TCPTW_HAVE_GET_KRETPROBE
	struct kretprobe *rp = get_kretprobe(ri);
#else
	/* 5.10: before get_kretprobe() */
	struct kretprobe *rp = ri->rp;
#endif

	return rp ? container_of(rp, struct tcptw_probe, hook.krp) : NULL;
}

static int kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct tcptw_probe *p = container_of(kp, struct tcptw_probe, hook.kp);

	tcptw_probe_hit(p);
	p->entry(regs);
	return 0;
}

static int krp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct tcptw_probe *p = ri_probe(ri);

	if (!p)
		return 1;
	tcptw_probe_hit(p);
	return p->call((void *)ri->data, regs);
}

static int krp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct tcptw_probe *p = ri_probe(ri);

	if (p)
		p->ret((void *)ri->data, regs);
	return 0;
}

/*
 * Room to detach every kprobe and kretprobe in one call each at unload:
 * unregister_k{,ret}probes() wait for one RCU grace period for the whole
 * array where one call per probe waits once per probe, which made each
 * rmmod take seconds on a 5.10 guest under TCG.
 */
static struct kprobe **kp_batch;
static struct kretprobe **krp_batch;
static unsigned int nkp, nkrp;

int tcptw_kp_hooks_init(unsigned int n)
{
	kp_batch = kcalloc(n, sizeof(*kp_batch), GFP_KERNEL);
	krp_batch = kcalloc(n, sizeof(*krp_batch), GFP_KERNEL);
	if (!kp_batch || !krp_batch) {
		tcptw_kp_hooks_uninit();
		return -ENOMEM;
	}
	nkp = 0;
	nkrp = 0;
	return 0;
}

void tcptw_kp_hooks_uninit(void)
{
	kfree(krp_batch);
	kfree(kp_batch);
	krp_batch = NULL;
	kp_batch = NULL;
}

int tcptw_kp_attach(struct tcptw_probe *p)
{
	/* a struct kprobe may be registered again once cleared */
	memset(&p->hook, 0, sizeof(p->hook));
	if (p->kind == TCPTW_ENTRY) {
		p->hook.kp.symbol_name = p->name;
		p->hook.kp.pre_handler = kp_pre;
		return register_kprobe(&p->hook.kp);
	}
	p->hook.krp.kp.symbol_name = p->name;
	p->hook.krp.entry_handler = krp_entry;
	p->hook.krp.handler = krp_ret;
	p->hook.krp.data_size = p->data_size;
	p->hook.krp.maxactive = tcptw_hook_pool();
	return register_kretprobe(&p->hook.krp);
}

void tcptw_kp_unregister(struct kprobe *kp, bool batch)
{
	if (batch)
		kp_batch[nkp++] = kp;
	else
		unregister_kprobe(kp);
}

void tcptw_kp_detach(struct tcptw_probe *p, bool batch)
{
	if (p->kind == TCPTW_ENTRY)
		tcptw_kp_unregister(&p->hook.kp, batch);
	else if (batch)
		krp_batch[nkrp++] = &p->hook.krp;
	else
		unregister_kretprobe(&p->hook.krp);
}

void tcptw_kp_detach_batch(void)
{
	if (nkp)
		unregister_kprobes(kp_batch, nkp);
	if (nkrp)
		unregister_kretprobes(krp_batch, nkrp);
	nkp = 0;
	nkrp = 0;
}

/*
 * A kprobe hit while another kprobe ran on that CPU (kp.nmissed), and for
 * a kretprobe also a call that found no free instance (nmissed). The
 * kprobe core updates both without a lock.
 */
unsigned long tcptw_kp_missed(const struct tcptw_probe *p)
{
	if (p->kind == TCPTW_ENTRY)
		return data_race(p->hook.kp.nmissed);	/* see above */
	/* see above */
	return data_race(p->hook.krp.kp.nmissed + p->hook.krp.nmissed);
}

const char *tcptw_kp_mechanism(const struct tcptw_probe *p)
{
	return p->kind == TCPTW_ENTRY ? "kprobe" : "kretprobe";
}
