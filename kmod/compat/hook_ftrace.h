/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * What an ftrace_ops callback of tcptw's gets, by kernel (hook_ftrace.c,
 * and the hooks with an ops of their own, compat/hook.h).
 */
#ifndef _TCPTW_COMPAT_HOOK_FTRACE_H
#define _TCPTW_COMPAT_HOOK_FTRACE_H

#include <linux/ftrace.h>
#include <linux/preempt.h>

#ifdef TCPTW_HAVE_FTRACE_REGS
/* an ftrace_ops callback's parameters */
#define TCPTW_FTRACE_CB_ARGS	unsigned long ip, unsigned long parent_ip, \
				struct ftrace_ops *op, struct ftrace_regs *fregs
/* the argument registers, saved in pt_regs' places (x86-64) */
#define TCPTW_OPS_REGS	0

static __always_inline struct pt_regs *tcptw_cb_regs(struct ftrace_regs *fregs)
{
#ifdef TCPTW_HAVE_ARCH_FTRACE_REGS
	/* v6.12-ish: ftrace_regs is opaque; on x86 it holds a pt_regs */
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}
#else
/* 5.10: callbacks get the pt_regs themselves, NULL unless all saved */
#define TCPTW_FTRACE_CB_ARGS	unsigned long ip, unsigned long parent_ip, \
				struct ftrace_ops *op, struct pt_regs *fregs
#define TCPTW_OPS_REGS	FTRACE_OPS_FL_SAVE_REGS

static __always_inline struct pt_regs *tcptw_cb_regs(struct pt_regs *regs)
{
	return regs;
}
#endif

#ifdef TCPTW_HAVE_FTRACE_OPS_FL_RECURSION
/*
 * 5.11+: ftrace wants a recursion guard of a callback that may call a
 * function it is attached to. tcptw's call none (scripts/style.sh checks
 * that the module calls no function it hooks), so they only disable
 * preemption, as this_cpu_*() in the hooks needs. ftrace's own guard,
 * ftrace_test_recursion_trylock(), cost 28 instructions more per call
 * (6.1, a SYN flood; docs/bench.md).
 */
static __always_inline void tcptw_cb_lock(void)
{
	preempt_disable_notrace();
}

static __always_inline void tcptw_cb_unlock(void)
{
	preempt_enable_notrace();
}
#else
/*
 * 5.10: ftrace guards every ops without FTRACE_OPS_FL_RECURSION_SAFE (and
 * disables preemption around it) through its assist function.
 */
static __always_inline void tcptw_cb_lock(void)
{
}

static __always_inline void tcptw_cb_unlock(void)
{
}
#endif

typedef void (*tcptw_own_cb_fn)(TCPTW_FTRACE_CB_ARGS);

/*
 * The callback of an entry hook with an ftrace_ops of its own
 * (.own_cb = TCPTW_OWN_CB(fn), after TCPTW_DEFINE_OWN_CB(fn)): it calls
 * @fn itself, where the shared ops' callback searches the hook by its
 * site and calls it through a pointer.
 */
#define TCPTW_DEFINE_OWN_CB(fn)						\
static void notrace fn##_own_cb(TCPTW_FTRACE_CB_ARGS)			\
{									\
	struct pt_regs *regs = tcptw_cb_regs(fregs);			\
									\
	tcptw_cb_lock();						\
	if (regs) {							\
		tcptw_probe_hit(container_of(op, struct tcptw_probe,	\
					     hook.ops));		\
		fn(regs);						\
	}								\
	tcptw_cb_unlock();						\
}

#define TCPTW_OWN_CB(fn)	fn##_own_cb

#endif /* _TCPTW_COMPAT_HOOK_FTRACE_H */
