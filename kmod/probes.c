// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Attach and detach every hook. A hook whose symbol or tracepoint does not
 * exist on the running kernel (inlined, renamed, module not loaded) is
 * "absent": the load goes on and /proc/net/tcptw/probes says so.
 */
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "probes.h"

static const struct tcptw_probe_set *const sets[] = {
	&tcptw_tw_probe_set,
	&tcptw_reuse_probe_set,
};

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
		p->kp->symbol_name = p->name;
		return register_kprobe(p->kp);
	case TCPTW_KRETPROBE:
		p->krp->kp.symbol_name = p->name;
		return register_kretprobe(p->krp);
	}
	return -EINVAL;
}

int tcptw_probes_init(void)
{
	struct tcptw_probe *p;
	unsigned int s, i, n = 0;

	for (s = 0; s < ARRAY_SIZE(sets); s++)
		if (sets[s]->setup)
			sets[s]->setup();
	for_each_kernel_tracepoint(tp_lookup, NULL);
	for (i = 0; (p = probe_at(i)); i++) {
		p->err = attach(p);
		p->attached = !p->err;
		if (p->attached)
			n++;
		else
			pr_info("%s %s not attached (%d)\n",
				kind_names[p->kind], p->name, p->err);
	}
	if (!n) {
		pr_err("no hook could be attached\n");
		return -ENOENT;
	}
	return 0;
}

void tcptw_probes_uninit(void)
{
	bool tracepoints = false;
	struct tcptw_probe *p;
	unsigned int n;

	for (n = 0; (p = probe_at(n)); n++) {
		if (!p->attached)
			continue;
		switch (p->kind) {
		case TCPTW_TRACEPOINT:
			tracepoint_probe_unregister(p->tp, p->tp_func, NULL);
			tracepoints = true;
			break;
		case TCPTW_KPROBE:
			unregister_kprobe(p->kp);
			break;
		case TCPTW_KRETPROBE:
			unregister_kretprobe(p->krp);
			break;
		}
		p->attached = false;
	}
	if (tracepoints)
		tracepoint_synchronize_unregister();
}

bool tcptw_probe_attached(const char *name)
{
	struct tcptw_probe *p;
	unsigned int n;

	for (n = 0; (p = probe_at(n)); n++)
		if (!strcmp(p->name, name))
			return p->attached;
	return false;
}

void tcptw_probes_show(struct seq_file *seq)
{
	struct tcptw_probe *p;
	unsigned int n;

	for (n = 0; (p = probe_at(n)); n++) {
		seq_printf(seq, "%s\t%s\t", p->name, kind_names[p->kind]);
		if (p->attached)
			seq_puts(seq, "attached");
		else if (p->err == -ENOENT)
			seq_puts(seq, "absent");
		else
			seq_printf(seq, "error:%d", p->err);
		seq_printf(seq, "\t%d\n",
			   p->kind == TCPTW_KRETPROBE ? p->krp->nmissed : 0);
	}
}
