/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * How the kernel delivers a function's entry and return to tcptw's
 * handlers (struct tcptw_probe, probes.h). One backend is built
 * (compat/Kbuild.include):
 *
 *   hook_fprobe.c  where the kernel exports register_fprobe_syms()
 *                  (Debian's 6.12 and 7.2): ftrace-based, and a hook
 *                  interrupted by a softirq that hits another hook runs
 *                  both (ftrace guards recursion per context);
 *   hook_kprobe.c  elsewhere (5.10, 6.1): kprobes and kretprobes, which
 *                  skip a hit while another kprobe's handler runs on the
 *                  same CPU (counted as missed, README "Limits").
 */
#ifndef _TCPTW_COMPAT_HOOK_H
#define _TCPTW_COMPAT_HOOK_H

#include <linux/kprobes.h>

#ifdef TCPTW_HAVE_FPROBE
#include <linux/fprobe.h>

struct tcptw_hook {
	struct fprobe fp;
};
#else
struct tcptw_hook {
	union {
		struct kprobe kp;	/* TCPTW_ENTRY */
		struct kretprobe krp;	/* TCPTW_CALL */
	};
};
#endif

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

#endif /* _TCPTW_COMPAT_HOOK_H */
