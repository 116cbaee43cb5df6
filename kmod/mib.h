/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The kernel's own per-netns MIBs. Where the kernel already counts a
 * decision, tcptw's counter is that MIB, read when the counters file is
 * read (summed over CPUs, less a baseline taken when tcptw's state for
 * the netns is made and on reset): no hook runs for it on the packet path.
 * mib.c says which counter is which MIB.
 */
#ifndef _TCPTW_MIB_H
#define _TCPTW_MIB_H

#include <linux/percpu.h>
#include <net/net_namespace.h>
#include <net/snmp.h>

#include "counters.h"

struct tcptw_state;

/* sum over CPUs of TcpExt (LINUX_MIB_*) slot @idx of @net */
static inline u64 tcptw_mib_linux_sum(const struct net *net, int idx)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(net->mib.net_statistics,
					     cpu)->mibs[idx]);
	return sum;
}

/* sum over CPUs of Tcp (TCP_MIB_*) slot @idx of @net */
static inline u64 tcptw_mib_tcp_sum(const struct net *net, int idx)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(net->mib.tcp_statistics,
					     cpu)->mibs[idx]);
	return sum;
}

/* ct.c: conntrack's insert_failed of @net, under @st's count_lock */
u64 tcptw_ct_insert_failed(const struct net *net,
			   const struct tcptw_state *st);

/* every counter of @net as the counters file shows them; under RCU */
void tcptw_counters_read(const struct net *net, struct tcptw_state *st,
			 u64 *out);
/* the counters of @st start from 0 now (state creation, reset); under RCU */
void tcptw_counters_baseline(const struct net *net, struct tcptw_state *st);

#endif /* _TCPTW_MIB_H */
