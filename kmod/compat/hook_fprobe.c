// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Hooks as fprobes, for kernels that export them (compat/hook.h): an
 * fprobe rides ftrace at the function's fentry site, and its exit handler
 * replaces a kretprobe. ftrace refuses recursion per context (task,
 * softirq, hardirq, NMI) rather than per CPU, so a softirq that interrupts
 * a hook running in process context still runs its own hooks: nothing is
 * missed under load the way nested kprobes are. On x86-64 hook_ftrace.c
 * takes the entries and leaves these the returns (conntrack's), what
 * ftrace refuses and kprobes=1.
 */
#include <linux/kernel.h>
#include <linux/fprobe.h>
#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "probes.h"

static int hook_entry(struct fprobe *fp, struct pt_regs *regs, void *data)
{
	struct tcptw_probe *p = container_of(fp, struct tcptw_probe, hook.fp);

	tcptw_probe_hit(p);
	if (p->kind == TCPTW_ENTRY) {
		p->entry(regs);
		return 0;
	}
	return p->call(data, regs);
}

static void hook_exit(struct fprobe *fp, struct pt_regs *regs, void *data)
{
	container_of(fp, struct tcptw_probe, hook.fp)->ret(data, regs);
}

#ifdef TCPTW_HAVE_FPROBE_FREGS
/*
 * v6.14 moved fprobes onto the function graph tracer, whose handlers get
 * ftrace_regs: where these hold a pt_regs (x86), that one, with the
 * argument registers and, at return, the return value; else a copy in
 * @tmp, declared only here, since a kernel that zeroes every stack
 * variable (INIT_STACK_ALL_ZERO) would clear it on every call.
 */
static int fp_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	struct pt_regs tmp;

	return hook_entry(fp, ftrace_partial_regs(fregs, &tmp), data);
}

static void fp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	struct pt_regs tmp;

	hook_exit(fp, ftrace_partial_regs(fregs, &tmp), data);
}
#else
static int fp_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct pt_regs *regs, void *data)
{
	return hook_entry(fp, regs, data);
}

static void fp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct pt_regs *regs, void *data)
{
	hook_exit(fp, regs, data);
}
#endif

int tcptw_fp_hooks_init(unsigned int n)
{
	return 0;
}

void tcptw_fp_hooks_uninit(void)
{
}

/*
 * The address of "module:symbol": no exported lookup is limited to one
 * module, but a kprobe on that name resolves it exactly (past an ENDBR,
 * which ftrace maps to the same fentry site).
 */
static int module_symbol_addr(const char *name, unsigned long *addr)
{
	struct kprobe kp = { .symbol_name = name };
	int err;

	err = register_kprobe(&kp);
	if (err)
		return err;
	*addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}

int tcptw_fp_attach(struct tcptw_probe *p)
{
	struct fprobe *fp = &p->hook.fp;
	unsigned long addr;
	int err;

#ifdef MAX_FPROBE_DATA_SIZE
	/* v6.14: the function graph tracer's room per call is bounded */
	if (p->data_size > MAX_FPROBE_DATA_SIZE)
		return -E2BIG;
#endif
	memset(fp, 0, sizeof(*fp));
	fp->entry_handler = fp_entry;
	if (p->kind == TCPTW_CALL) {
		fp->exit_handler = fp_exit;
		fp->entry_data_size = p->data_size;
#ifdef TCPTW_HAVE_FPROBE_RETHOOK
		/* before v6.14, exits come from a pool of this size */
		fp->nr_maxactive = tcptw_hook_pool();
#endif
	}
	if (!p->module)
		return register_fprobe_syms(fp, &p->name, 1);
	err = module_symbol_addr(p->name, &addr);
	if (err)
		return err;
	return register_fprobe_ips(fp, &addr, 1);
}

void tcptw_fp_detach(struct tcptw_probe *p, bool batch)
{
	unregister_fprobe(&p->hook.fp);
}

void tcptw_fp_detach_batch(void)
{
#ifdef TCPTW_HAVE_FPROBE_FREGS
	/*
	 * Before the upstream fix that made it wait, unregister_fprobe() on
	 * the function graph tracer returned while a handler could still be
	 * running; one grace period here covers those kernels at unload
	 * (handlers run with preemption disabled).
	 */
	synchronize_rcu();
#endif
}

/* before v6.14: recursion within one context, or an exhausted pool */
unsigned long tcptw_fp_missed(const struct tcptw_probe *p)
{
	/* fprobe's handler counts it without a lock */
	return data_race(p->hook.fp.nmissed);
}

const char *tcptw_fp_mechanism(const struct tcptw_probe *p)
{
	return p->kind == TCPTW_ENTRY ? "fprobe" : "fprobe-exit";
}
