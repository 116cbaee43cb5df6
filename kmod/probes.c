// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Attach and detach every hook. A hook whose symbol or tracepoint does not
 * exist on the running kernel (inlined, renamed) is "absent": the load goes
 * on and /proc/net/tcptw/probes says so. Hooks in a module (conntrack) are
 * attached when that module goes live and detached when it goes away.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "probes.h"
#include "test.h"

static const struct tcptw_probe_set *const sets[] = {
	&tcptw_tw_probe_set,
	&tcptw_reuse_probe_set,
	&tcptw_listen_probe_set,
	&tcptw_ct_probe_set,
};

/* attach state of every probe: init/exit, module notifier, /proc readers */
static DEFINE_MUTEX(probes_lock);

/*
 * Room to detach every kprobe and kretprobe in one call each at unload:
 * unregister_k{,ret}probes() wait for one RCU grace period for the whole
 * array where one call per probe waits once per probe, which made each
 * rmmod take seconds on a 5.10 guest under TCG. Allocated at load, so
 * that unload cannot fail for want of memory.
 */
static struct kprobe **kp_batch;
static struct kretprobe **krp_batch;

/* the @n-th probe over all sets, NULL past the last */
static struct tcptw_probe *probe_at(unsigned int n)
{
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(sets); s++) {
		if (n < sets[s]->n)
			return &sets[s]->probes[n];
		n -= sets[s]->n;
	}
	return NULL;
}

static const char * const kind_names[] = {
	[TCPTW_TRACEPOINT] = "tracepoint",
	[TCPTW_KPROBE] = "kprobe",
	[TCPTW_KRETPROBE] = "kretprobe",
};

/* most of these tracepoints are not exported: find them by name */
static void tp_lookup(struct tracepoint *tp, void *priv)
{
	struct tcptw_probe *p;
	unsigned int n;

	for (n = 0; (p = probe_at(n)); n++)
		if (p->kind == TCPTW_TRACEPOINT && !strcmp(tp->name, p->name))
			p->tp = tp;
}

static int attach(struct tcptw_probe *p)
{
	switch (p->kind) {
	case TCPTW_TRACEPOINT:
		if (!p->tp)
			return -ENOENT;
		return tracepoint_probe_register(p->tp, p->tp_func, NULL);
	case TCPTW_KPROBE:
		/* a struct kprobe may be registered again once cleared */
		p->kp->addr = NULL;
		p->kp->flags = 0;
		p->kp->symbol_name = p->name;
		return register_kprobe(p->kp);
	case TCPTW_KRETPROBE:
		p->krp->kp.addr = NULL;
		p->krp->kp.flags = 0;
		p->krp->kp.symbol_name = p->name;
		return register_kretprobe(p->krp);
	}
	return -EINVAL;
}

static void try_attach(struct tcptw_probe *p)
{
	if (p->unused)
		return;
	p->err = attach(p);
	/* handlers read it without probes_lock (tw.c) */
	WRITE_ONCE(p->attached, !p->err);
	if (!p->attached && !p->module)
		pr_info("%s %s not attached (%d)\n", kind_names[p->kind],
			p->name, p->err);
}

static unsigned int probe_count(void)
{
	unsigned int s, n = 0;

	for (s = 0; s < ARRAY_SIZE(sets); s++)
		n += sets[s]->n;
	return n;
}

/*
 * Detach @p. Without the batch arrays (a module going away) kprobes are
 * unregistered at once; with them they are collected in @nkp / @nkrp for
 * one unregister_k{,ret}probes() call. Returns true if a tracepoint was
 * detached (needs a synchronize).
 */
static bool detach(struct tcptw_probe *p, unsigned int *nkp,
		   unsigned int *nkrp)
{
	if (!p->attached)
		return false;
	WRITE_ONCE(p->attached, false);
	p->err = -ENOENT;
	switch (p->kind) {
	case TCPTW_TRACEPOINT:
		tracepoint_probe_unregister(p->tp, p->tp_func, NULL);
		return true;
	case TCPTW_KPROBE:
		if (nkp)
			kp_batch[(*nkp)++] = p->kp;
		else
			unregister_kprobe(p->kp);
		break;
	case TCPTW_KRETPROBE:
		if (nkrp)
			krp_batch[(*nkrp)++] = p->krp;
		else
			unregister_kretprobe(p->krp);
		break;
	}
	return false;
}

static int module_event(struct notifier_block *nb, unsigned long action,
			void *data)
{
	struct module *mod = data;
	struct tcptw_probe *p;
	unsigned int n;

	if (action != MODULE_STATE_LIVE && action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&probes_lock);
	for (n = 0; (p = probe_at(n)); n++) {
		if (!p->module || strcmp(p->module, mod->name))
			continue;
		if (action == MODULE_STATE_LIVE && !p->attached)
			try_attach(p);
		else if (action == MODULE_STATE_GOING)
			detach(p, NULL, NULL);	/* no module tracepoints */
	}
	mutex_unlock(&probes_lock);
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = {
	.notifier_call = module_event,
};

int tcptw_probes_init(void)
{
	unsigned int s, n, attached = 0, total = probe_count();
	struct tcptw_probe *p;
	int err;

	kp_batch = kcalloc(total, sizeof(*kp_batch), GFP_KERNEL);
	krp_batch = kcalloc(total, sizeof(*krp_batch), GFP_KERNEL);
	if (!kp_batch || !krp_batch) {
		err = -ENOMEM;
		goto err_free;
	}
	for (s = 0; s < ARRAY_SIZE(sets); s++)
		if (sets[s]->setup)
			sets[s]->setup();
	for_each_kernel_tracepoint(tp_lookup, NULL);

	/* before the first attempt, so a module loading now is not missed */
	err = register_module_notifier(&module_nb);
	if (err)
		goto err_free;
	/* test builds only: hold the window open for a module to go live */
	tcptw_test_delay(tcptw_test_attach_delay_ms);
	mutex_lock(&probes_lock);
	for (n = 0; (p = probe_at(n)); n++) {
		/*
		 * The notifier may have attached a module's probes since it
		 * was registered; registering a live kprobe again would
		 * clear its address and flags under the kernel's feet.
		 */
		if (!p->attached)
			try_attach(p);
		attached += p->attached;
	}
	mutex_unlock(&probes_lock);
	if (!attached) {
		pr_err("no hook could be attached\n");
		tcptw_probes_uninit();
		return -ENOENT;
	}
	return 0;

err_free:
	kfree(krp_batch);
	kfree(kp_batch);
	krp_batch = NULL;
	kp_batch = NULL;
	return err;
}

void tcptw_probes_uninit(void)
{
	unsigned int n, nkp = 0, nkrp = 0;
	bool tracepoints = false;
	struct tcptw_probe *p;

	unregister_module_notifier(&module_nb);
	mutex_lock(&probes_lock);
	for (n = 0; (p = probe_at(n)); n++)
		tracepoints |= detach(p, &nkp, &nkrp);
	if (nkp)
		unregister_kprobes(kp_batch, nkp);
	if (nkrp)
		unregister_kretprobes(krp_batch, nkrp);
	mutex_unlock(&probes_lock);
	if (tracepoints)
		tracepoint_synchronize_unregister();
	kfree(krp_batch);
	kfree(kp_batch);
	krp_batch = NULL;
	kp_batch = NULL;
}

/*
 * Calls a hook skipped: a kprobe hit while another kprobe ran on that CPU
 * (kp.nmissed), and for a kretprobe also a call that found no free
 * instance (nmissed). The handlers update them without a lock.
 */
static unsigned long missed(const struct tcptw_probe *p)
{
	switch (p->kind) {
	case TCPTW_KPROBE:
		/* the kprobe core counts it without a lock */
		return data_race(p->kp->nmissed);
	case TCPTW_KRETPROBE:
		/* both counted without a lock */
		return data_race(p->krp->kp.nmissed + p->krp->nmissed);
	default:
		return 0;
	}
}

void tcptw_probes_show(struct seq_file *seq)
{
	struct tcptw_probe *p;
	unsigned int n;

	mutex_lock(&probes_lock);
	for (n = 0; (p = probe_at(n)); n++) {
		if (p->unused)
			continue;
		seq_printf(seq, "%s\t%s\t", p->name, kind_names[p->kind]);
		if (p->attached)
			seq_puts(seq, "attached");
		else if (p->err == -ENOENT)
			seq_puts(seq, "absent");
		else
			seq_printf(seq, "error:%d", p->err);
		seq_printf(seq, "\t%lu\n", missed(p));
	}
	mutex_unlock(&probes_lock);
}
