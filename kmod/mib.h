/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The kernel's own per-CPU MIB slots of a netns, read around a probed call:
 * the change on the CPU the call ran on is exactly what that call counted,
 * as long as nothing else ran on that CPU in between - true for functions
 * that run in BH context, and close to it for the few process-context ones
 * (documented where used).
 */
#ifndef _TCPTW_MIB_H
#define _TCPTW_MIB_H

#include <linux/percpu.h>
#include <linux/smp.h>
#include <net/net_namespace.h>
#include <net/snmp.h>

static inline unsigned long tcptw_mib_linux(const struct net *net, int cpu,
					    int idx)
{
	return READ_ONCE(per_cpu_ptr(net->mib.net_statistics, cpu)->mibs[idx]);
}

static inline unsigned long tcptw_mib_tcp(const struct net *net, int cpu,
					  int idx)
{
	return READ_ONCE(per_cpu_ptr(net->mib.tcp_statistics, cpu)->mibs[idx]);
}

#endif /* _TCPTW_MIB_H */
