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
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "probes.h"
#include "test.h"

static const struct tcptw_probe_set *const sets[] = {
	&tcptw_tw_probe_set,
	&tcptw_reuse_probe_set,
	&tcptw_listen_probe_set,
	&tcptw_rst_probe_set,
	&tcptw_ct_probe_set,
};

/* attach state of every probe: init/exit, module notifier, /proc readers */
static DEFINE_MUTEX(probes_lock);
/* under probes_lock: unload has detached everything, attach nothing */
static bool probes_closed;

/* the @n-th probe over all sets, NULL past the last */
struct tcptw_probe *tcptw_probe_at(unsigned int n)
{
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(sets); s++) {
		if (n < sets[s]->n)
			return &sets[s]->probes[n];
		n -= sets[s]->n;
	}
	return NULL;
}

#ifdef TCPTW_TEST
/*
 * Test build: /sys/module/tcptw/parameters/test_hits, one line per hook
 * in the probes file's order: "name<TAB>calls its handlers saw".
 */
static int hits_get(char *buf, const struct kernel_param *kp)
{
	struct tcptw_probe *p;
	unsigned int n;
	int len = 0;

	for (n = 0; (p = tcptw_probe_at(n)); n++)
		if (!p->unused)
			len += scnprintf(buf + len, PAGE_SIZE - len, "%s\t%ld\n",
					 p->name, atomic_long_read(&p->hits));
	return len;
}

static const struct kernel_param_ops hits_ops = {
	.get = hits_get,
};

module_param_cb(test_hits, &hits_ops, NULL, 0444);
MODULE_PARM_DESC(test_hits, "test build: calls each hook saw since the load");
#endif

/* what the probes file calls the mechanism of @p */
static const char *mechanism(const struct tcptw_probe *p)
{
	return p->kind == TCPTW_TRACEPOINT ? "tracepoint" :
		tcptw_hook_mechanism(p);
}

/* most of these tracepoints are not exported: find them by name */
static void tp_lookup(struct tracepoint *tp, void *priv)
{
	struct tcptw_probe *p;
	unsigned int n;

	for (n = 0; (p = tcptw_probe_at(n)); n++)
		if (p->kind == TCPTW_TRACEPOINT && !strcmp(tp->name, p->name))
			p->tp = tp;
}

static int attach(struct tcptw_probe *p)
{
	int err;

	if (p->kind == TCPTW_TRACEPOINT) {
		if (!p->tp)
			return -ENOENT;
		/* the handler gets @p as its data (tcptw_probe_hit()) */
		return tracepoint_probe_register(p->tp, p->tp_func, p);
	}
	err = tcptw_hook_attach(p);
	/* fprobes say a symbol ftrace does not know with -ESRCH */
	return err == -ESRCH ? -ENOENT : err;
}

static void try_attach(struct tcptw_probe *p)
{
	if (p->unused)
		return;
	p->err = attach(p);
	/* handlers read it without probes_lock (tw.c) */
	WRITE_ONCE(p->attached, !p->err);
	if (!p->attached && !p->module)
		pr_info("%s %s not attached (%d)\n", mechanism(p), p->name,
			p->err);
}

static unsigned int probe_count(void)
{
	unsigned int s, n = 0;

	for (s = 0; s < ARRAY_SIZE(sets); s++)
		n += sets[s]->n;
	return n;
}

/*
 * Detach @p: at once (a module going away), or with @batch collected for
 * one tcptw_hooks_detach_batch() at unload. Returns true if a tracepoint
 * was detached (needs a synchronize).
 */
static bool detach(struct tcptw_probe *p, bool batch)
{
	if (!p->attached)
		return false;
	WRITE_ONCE(p->attached, false);
	p->err = -ENOENT;
	if (p->kind == TCPTW_TRACEPOINT) {
		tracepoint_probe_unregister(p->tp, p->tp_func, p);
		return true;
	}
	tcptw_hook_detach(p, batch);
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
	tcptw_test_failnth_mark(TCPTW_FAILNTH_NOTIFIER, false);
	mutex_lock(&probes_lock);
	for (n = 0; (p = tcptw_probe_at(n)); n++) {
		if (!p->module || strcmp(p->module, mod->name))
			continue;
		if (action == MODULE_STATE_LIVE && !p->attached &&
		    !probes_closed)
			try_attach(p);
		else if (action == MODULE_STATE_GOING)
			detach(p, false);	/* no module tracepoints */
	}
	mutex_unlock(&probes_lock);
	tcptw_test_failnth_mark(TCPTW_FAILNTH_NOTIFIER, true);
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = {
	.notifier_call = module_event,
};

int tcptw_probes_init(void)
{
	unsigned int n, attached = 0;
	struct tcptw_probe *p;
	int err;

	err = tcptw_hooks_init(probe_count());
	if (err)
		return err;
	for_each_kernel_tracepoint(tp_lookup, NULL);

	/* before the first attempt, so a module loading now is not missed */
	err = register_module_notifier(&module_nb);
	if (err) {
		tcptw_hooks_uninit();
		return err;
	}
	/* test builds only: hold the window open for a module to go live */
	tcptw_test_delay(tcptw_test_attach_delay_ms);
	mutex_lock(&probes_lock);
	for (n = 0; (p = tcptw_probe_at(n)); n++) {
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
}

void tcptw_probes_uninit(void)
{
	bool tracepoints = false;
	struct tcptw_probe *p;
	unsigned int n;

	/*
	 * The notifier stays until every hook is detached: a module going
	 * away meanwhile must still have its hooks taken off its text.
	 */
	mutex_lock(&probes_lock);
	probes_closed = true;
	for (n = 0; (p = tcptw_probe_at(n)); n++)
		tracepoints |= detach(p, true);
	tcptw_hooks_detach_batch();
	mutex_unlock(&probes_lock);
	unregister_module_notifier(&module_nb);
	if (tracepoints)
		tracepoint_synchronize_unregister();
	tcptw_hooks_uninit();
}

void tcptw_probes_show(struct seq_file *seq)
{
	struct tcptw_probe *p;
	unsigned int n;

	mutex_lock(&probes_lock);
	for (n = 0; (p = tcptw_probe_at(n)); n++) {
		if (p->unused)
			continue;
		seq_printf(seq, "%s\t%s\t", p->name, mechanism(p));
		if (p->attached)
			seq_puts(seq, "attached");
		else if (p->err == -ENOENT)
			seq_puts(seq, "absent");
		else
			seq_printf(seq, "error:%d", p->err);
		seq_printf(seq, "\t%lu\n", p->kind == TCPTW_TRACEPOINT ? 0 :
			   tcptw_hook_missed(p));
	}
	mutex_unlock(&probes_lock);
}
