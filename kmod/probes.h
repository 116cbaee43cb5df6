/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The hooks: each feature file exports a table of probes; probes.c attaches
 * them all, tolerates the absent ones and reports every state in
 * /proc/net/tcptw/probes.
 */
#ifndef _TCPTW_PROBES_H
#define _TCPTW_PROBES_H

#include <linux/kprobes.h>
#include <linux/tracepoint.h>

struct seq_file;

enum tcptw_probe_kind {
	TCPTW_TRACEPOINT,
	TCPTW_KPROBE,
	TCPTW_KRETPROBE,
};

struct tcptw_probe {
	const char *name;		/* symbol or tracepoint name */
	enum tcptw_probe_kind kind;
	union {
		struct kprobe *kp;
		struct kretprobe *krp;
		void *tp_func;
	};
	/* the module the symbol lives in, NULL for vmlinux */
	const char *module;
	/*
	 * Another hook counts the same on this kernel (compat/): never
	 * attached, and not listed in the probes file.
	 */
	bool unused;
	/* private to probes.c */
	struct tracepoint *tp;
	int err;			/* 0 attached, -errno otherwise */
	bool attached;
};

struct tcptw_probe_set {
	struct tcptw_probe *probes;
	unsigned int n;
	void (*setup)(void);	/* before attaching, e.g. maxactive */
};

extern const struct tcptw_probe_set tcptw_tw_probe_set;
extern const struct tcptw_probe_set tcptw_reuse_probe_set;
extern const struct tcptw_probe_set tcptw_listen_probe_set;
extern const struct tcptw_probe_set tcptw_ct_probe_set;

/* tcp_conn_request, one hook shared by tw.c and listen.c */
void tcptw_tw_conn_request(const struct sock *sk, const struct sk_buff *skb);
bool tcptw_listen_conn_request_attached(void);

int tcptw_probes_init(void);
void tcptw_probes_uninit(void);
void tcptw_probes_show(struct seq_file *seq);

#endif /* _TCPTW_PROBES_H */
