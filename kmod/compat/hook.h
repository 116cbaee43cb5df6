/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * How the kernel delivers a function's entry and return to tcptw's
 * handlers (struct tcptw_probe, probes.h). The backends
 * (compat/Kbuild.include):
 *
 *   hook_ftrace.c  x86-64 (5.10, 6.1, 6.12, 7.2): every entry on an
 *                  ftrace_ops of tcptw's own (one shared, and one each
 *                  for the hooks with a callback of their own, own_cb),
 *                  which never modifies the call; a function's
 *                  return (conntrack's rare paths only) and a hook ftrace
 *                  refuses go to its fallback, one of the two below (a
 *                  return always to a kretprobe from 6.14, where an
 *                  fprobe's return would start the function graph
 *                  tracer for the whole system);
 *   hook_fprobe.c  where the kernel exports register_fprobe_syms()
 *                  (Debian's 6.12 and 7.2): ftrace-based too, and a hook
 *                  interrupted by a softirq that hits another hook runs
 *                  both (ftrace guards recursion per context); an fprobe
 *                  entry costs about twice an ftrace_ops entry (it goes
 *                  through the function graph tracer from 6.14);
 *   hook_kprobe.c  elsewhere: kprobes and kretprobes, which skip a hit
 *                  while another kprobe's handler runs on the same CPU
 *                  (counted as missed, docs/design.md, Limits); also the
 *                  ftrace hooks' symbol lookup.
 */
#ifndef _TCPTW_COMPAT_HOOK_H
#define _TCPTW_COMPAT_HOOK_H

#include <linux/kprobes.h>
#include <linux/cpumask.h>
#include <linux/minmax.h>

#ifdef TCPTW_HAVE_FPROBE
#include <linux/fprobe.h>
#endif
#ifdef TCPTW_HAVE_FTRACE_HOOK
#include "hook_ftrace.h"
#else
/* no ftrace_ops here: every entry goes to the one backend */
#define tcptw_own_cb_fn	void *
#define TCPTW_DEFINE_OWN_CB(fn)
#define TCPTW_OWN_CB(fn)	NULL
#endif

struct tcptw_hook {
	union {
		struct kprobe kp;	/* TCPTW_ENTRY */
		struct kretprobe krp;	/* TCPTW_CALL */
#ifdef TCPTW_HAVE_FPROBE
		struct fprobe fp;
#endif
	};
#ifdef TCPTW_HAVE_FTRACE_HOOK
	/* a hook with a callback of its own (own_cb): its ops */
	struct ftrace_ops ops;
	bool own;
	/* hook_ftrace.c: the function's fentry site, 0 on its fallback */
	unsigned long ip;
	/* on the fallback (fp, kp, krp); else kp is a disabled kprobe
	 * that only resolved the symbol
	 */
	bool fallback;
#endif
};

/*
 * The most per-call data (struct tcptw_probe.data_size) a hook may ask
 * for: v6.14's fprobes keep it on the function graph tracer's stack and
 * refuse more (the feature files static_assert their sizes).
 */
#ifdef MAX_FPROBE_DATA_SIZE
#define TCPTW_MAX_CALL_DATA	MAX_FPROBE_DATA_SIZE
#else
#define TCPTW_MAX_CALL_DATA	512
#endif

struct tcptw_probe;

/*
 * Calls of one function that may be inside a hook's exit at once, over
 * all CPUs, where the backend keeps a pool for them (kretprobes, fprobes
 * before 6.14): the hooks on a return run in softirq or process context
 * and never sleep, so a few per CPU, with a floor for small machines.
 */
static inline unsigned int tcptw_hook_pool(void)
{
	return max(64U, 8 * num_possible_cpus());
}

/* room to detach @n hooks at once at unload; allocated at load */
int tcptw_hooks_init(unsigned int n);
void tcptw_hooks_uninit(void);
/* attach @p (TCPTW_ENTRY or TCPTW_CALL), 0 or -errno */
int tcptw_hook_attach(struct tcptw_probe *p);
/* detach @p now, or with @batch in tcptw_hooks_detach_batch() */
void tcptw_hook_detach(struct tcptw_probe *p, bool batch);
void tcptw_hooks_detach_batch(void);
/* calls @p's handlers did not see (the probes file's 4th column) */
unsigned long tcptw_hook_missed(const struct tcptw_probe *p);
/* the mechanism as the probes file names it */
const char *tcptw_hook_mechanism(const struct tcptw_probe *p);

/* the backend that is the whole of tcptw_hook_*() where hook_ftrace.c is not */
#ifndef TCPTW_HAVE_FTRACE_HOOK
#ifdef TCPTW_HAVE_FPROBE
#define tcptw_fp_hooks_init	tcptw_hooks_init
#define tcptw_fp_hooks_uninit	tcptw_hooks_uninit
#define tcptw_fp_attach		tcptw_hook_attach
#define tcptw_fp_detach		tcptw_hook_detach
#define tcptw_fp_detach_batch	tcptw_hooks_detach_batch
#define tcptw_fp_missed		tcptw_hook_missed
#define tcptw_fp_mechanism	tcptw_hook_mechanism
#else
#define tcptw_kp_hooks_init	tcptw_hooks_init
#define tcptw_kp_hooks_uninit	tcptw_hooks_uninit
#define tcptw_kp_attach		tcptw_hook_attach
#define tcptw_kp_detach		tcptw_hook_detach
#define tcptw_kp_detach_batch	tcptw_hooks_detach_batch
#define tcptw_kp_missed		tcptw_hook_missed
#define tcptw_kp_mechanism	tcptw_hook_mechanism
#endif
#endif

/* hook_kprobe.c; the same names as above */
int tcptw_kp_hooks_init(unsigned int n);
void tcptw_kp_hooks_uninit(void);
int tcptw_kp_attach(struct tcptw_probe *p);
void tcptw_kp_detach(struct tcptw_probe *p, bool batch);
void tcptw_kp_detach_batch(void);
unsigned long tcptw_kp_missed(const struct tcptw_probe *p);
const char *tcptw_kp_mechanism(const struct tcptw_probe *p);
/* unregister a plain kprobe @kp now, or with the batch */
void tcptw_kp_unregister(struct kprobe *kp, bool batch);

/* hook_fprobe.c; the same names as above */
int tcptw_fp_hooks_init(unsigned int n);
void tcptw_fp_hooks_uninit(void);
int tcptw_fp_attach(struct tcptw_probe *p);
void tcptw_fp_detach(struct tcptw_probe *p, bool batch);
void tcptw_fp_detach_batch(void);
unsigned long tcptw_fp_missed(const struct tcptw_probe *p);
const char *tcptw_fp_mechanism(const struct tcptw_probe *p);

#endif /* _TCPTW_COMPAT_HOOK_H */
