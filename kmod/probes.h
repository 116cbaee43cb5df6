/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The hooks: each feature file exports a table of probes; probes.c attaches
 * them all, tolerates the absent ones and reports every state in
 * /proc/net/tcptw/probes.
 *
 * A feature file says what it needs (a tracepoint, a function's entry, or
 * a function's entry and return) and writes its handlers once, on the
 * registers at entry and at return. compat/hook.h decides how the kernel
 * delivers them, and lists the backends it builds from.
 */
#ifndef _TCPTW_PROBES_H
#define _TCPTW_PROBES_H

#include <linux/atomic.h>
#include <linux/tracepoint.h>

#include "compat/hook.h"

struct seq_file;

enum tcptw_probe_kind {
	TCPTW_TRACEPOINT,
	TCPTW_ENTRY,		/* a function's entry */
	TCPTW_CALL,		/* a function's entry and its return */
};

/* TCPTW_ENTRY: the registers at entry */
typedef void (*tcptw_entry_fn)(struct pt_regs *regs);
/*
 * TCPTW_CALL, at entry: fill @data (data_size bytes, private to this
 * call); nonzero: no return handler for this call
 */
typedef int (*tcptw_call_fn)(void *data, struct pt_regs *regs);
/* TCPTW_CALL, at return: regs_return_value(@regs) is the result */
typedef void (*tcptw_ret_fn)(void *data, struct pt_regs *regs);

struct tcptw_probe {
	const char *name;		/* symbol or tracepoint name */
	enum tcptw_probe_kind kind;
	union {
		void *tp_func;		/* TCPTW_TRACEPOINT */
		tcptw_entry_fn entry;	/* TCPTW_ENTRY */
		tcptw_call_fn call;	/* TCPTW_CALL */
	};
	tcptw_ret_fn ret;		/* TCPTW_CALL */
	/*
	 * TCPTW_ENTRY: the entry's callback on an ftrace_ops of its own
	 * (compat/hook.h), for a hook every packet of a flood reaches;
	 * NULL: the shared ops'
	 */
	tcptw_own_cb_fn own_cb;
	unsigned int data_size;		/* TCPTW_CALL */
	/* the module the symbol lives in, NULL for vmlinux */
	const char *module;
	/*
	 * Another hook counts the same on this kernel (compat/): never
	 * attached, and not listed in the probes file.
	 */
	bool unused;
	/* private to probes.c and compat/hook_*.c */
	struct tracepoint *tp;
	struct tcptw_hook hook;
	int err;			/* 0 attached, -errno otherwise */
	bool attached;
#ifdef TCPTW_TEST
	/* test build: the calls its handlers saw (test_hits parameter) */
	atomic_long_t hits;
#endif
};

/* every handler of @p, first thing: a hit, counted in test builds only */
static inline void tcptw_probe_hit(struct tcptw_probe *p)
{
#ifdef TCPTW_TEST
	atomic_long_inc(&p->hits);
#endif
}

struct tcptw_probe_set {
	struct tcptw_probe *probes;
	unsigned int n;
};

extern const struct tcptw_probe_set tcptw_tw_probe_set;
extern const struct tcptw_probe_set tcptw_reuse_probe_set;
extern const struct tcptw_probe_set tcptw_listen_probe_set;
extern const struct tcptw_probe_set tcptw_rst_probe_set;
extern const struct tcptw_probe_set tcptw_ct_probe_set;

/* reuse.c: connect() took over a TIME_WAIT socket's tuple (tw.c tells) */
void tcptw_reuse_granted(const struct inet_timewait_sock *tw);
/* a TIME_WAIT socket may have taken @sk's place (tw.c) */
void tcptw_tw_born(const struct sock *sk);

/* the @n-th hook over all sets, NULL past the last */
struct tcptw_probe *tcptw_probe_at(unsigned int n);
int tcptw_probes_init(void);
void tcptw_probes_uninit(void);
void tcptw_probes_show(struct seq_file *seq);

#endif /* _TCPTW_PROBES_H */
