// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Conntrack: packets dropped because the table was full, entries that
 * failed to insert (NAT clash, dying entry, chain too long). No hook runs
 * per flow: insert failures are the kernel's own per-netns insert_failed,
 * read when the counters are (mib.c); the hooks are on the rare paths
 * only (a table over nf_conntrack_max, a clash at confirm, statistics
 * being freed), each entry and return at most. The kernel's only other
 * trace of a full table is a rate-limited "nf_conntrack: table full,
 * dropping packet". These hooks live in nf_conntrack.ko: probes.c
 * attaches them when that module goes live and detaches them when it
 * goes.
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <net/netfilter/nf_conntrack.h>

#include "mib.h"
#include "pernet.h"
#include "probes.h"

/*
 * early_drop(net, hash) is called by __nf_conntrack_alloc() only when the
 * table is over nf_conntrack_max; 0 means nothing could be evicted and the
 * packet that wanted a new entry is dropped.
 */
static int early_drop_entry(void *data, struct pt_regs *regs)
{
	*(struct net **)data = (void *)regs_get_kernel_argument(regs, 0);
	return 0;
}

static void early_drop_ret(void *data, struct pt_regs *regs)
{
	struct tcptw_event ev = {
		.type = TCPTW_EV_CONNTRACK_TABLE_FULL,
		.flags = TCPTW_EV_NO_TUPLE,
		.age_ms = -1,
	};
	struct net *net = *(struct net **)data;

	if (!regs_return_value(regs))
		tcptw_count_event(net, TCPTW_CONNTRACK_TABLE_FULL, &ev);
}

struct clash_ctx {
	struct net *net;
	struct tcptw_event ev;
};

static_assert(sizeof(struct clash_ctx) <= TCPTW_MAX_CALL_DATA);

/*
 * nf_ct_resolve_clash(skb, h, repl_idx): called by __nf_conntrack_confirm()
 * only when the entry of @skb clashes with one already in the table (two
 * flows given the same tuple: a NAT that ran out of ports, a UDP race);
 * NF_DROP means it could not be resolved and insert_failed was counted.
 * The counter is the kernel's insert_failed (mib.c); this hook only
 * records the event, with the losing flow's tuple.
 */
static int clash_entry(void *data, struct pt_regs *regs)
{
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 0);
	struct clash_ctx *c = data;
	const struct nf_conntrack_tuple *t;
	enum ip_conntrack_info ctinfo;
	const struct nf_conn *ct;

	ct = nf_ct_get(skb, &ctinfo);
	if (!ct)
		return 1;
	c->net = nf_ct_net(ct);
	tcptw_event_init(&c->ev, TCPTW_EV_CONNTRACK_INSERT_FAILED);
	t = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	c->ev.t.family = t->src.l3num == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	memcpy(&c->ev.t.saddr, &t->src.u3, sizeof(t->src.u3));
	memcpy(&c->ev.t.daddr, &t->dst.u3, sizeof(t->dst.u3));
	c->ev.t.sport = t->src.u.all;
	c->ev.t.dport = t->dst.u.all;
	return 0;
}

static void clash_ret(void *data, struct pt_regs *regs)
{
	struct clash_ctx *c = data;
	struct tcptw_state *st;

	if (regs_return_value(regs) != NF_DROP)
		return;
	st = tcptw_state_hook(c->net);
	if (st)
		tcptw_emit(st, &c->ev);
}

/* conntrack -S's insert_failed of @net, summed over CPUs */
static u64 ct_insert_failed_sum(const struct net *net)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(net->ct.stat, cpu)->insert_failed);
	return sum;
}

/*
 * ConntrackInsertFailed before its baseline (mib.c): the kernel's
 * insert_failed of @net, while nf_conntrack is loaded, plus what the
 * instances of it that went away had counted. The reference on
 * nf_conntrack (taken through a symbol it exports) keeps its statistics
 * from being freed under the read: a `rmmod nf_conntrack` that falls in
 * these few instructions fails as "in use". Caller holds count_lock.
 */
u64 tcptw_ct_insert_failed(const struct net *net,
			   const struct tcptw_state *st)
{
	u64 v = st->ct_gone_insert_failed;

	if (symbol_get(nf_conntrack_htable_size)) {
		if (net->ct.stat)
			v += ct_insert_failed_sum(net);
		symbol_put(nf_conntrack_htable_size);
	}
	return v;
}

/*
 * nf_conntrack_cleanup_net_list(net_exit_list): nf_conntrack frees the
 * statistics of these namespaces (namespaces deleted, or nf_conntrack
 * unloading): what they counted is kept, so ConntrackInsertFailed never
 * goes back and goes on from there if nf_conntrack comes back. Process
 * context; count_lock is never taken in softirq.
 */
static void cleanup_entry(struct pt_regs *regs)
{
	struct list_head *list = (void *)regs_get_kernel_argument(regs, 0);
	struct tcptw_state *st;
	struct net *net;

	list_for_each_entry(net, list, exit_list) {
		st = tcptw_state_hook(net);
		if (!st || !net->ct.stat)
			continue;
		spin_lock(&st->count_lock);
		st->ct_gone_insert_failed += ct_insert_failed_sum(net);
		spin_unlock(&st->count_lock);
	}
}

static struct tcptw_probe ct_probes[] = {
	{ .name = "nf_conntrack:early_drop", .kind = TCPTW_CALL,
	  .call = early_drop_entry, .ret = early_drop_ret,
	  .data_size = sizeof(struct net *), .module = "nf_conntrack" },
	{ .name = "nf_conntrack:nf_ct_resolve_clash", .kind = TCPTW_CALL,
	  .call = clash_entry, .ret = clash_ret,
	  .data_size = sizeof(struct clash_ctx), .module = "nf_conntrack" },
	{ .name = "nf_conntrack:nf_conntrack_cleanup_net_list",
	  .kind = TCPTW_ENTRY, .entry = cleanup_entry,
	  .module = "nf_conntrack" },
};

const struct tcptw_probe_set tcptw_ct_probe_set = {
	.probes = ct_probes,
	.n = ARRAY_SIZE(ct_probes),
};
