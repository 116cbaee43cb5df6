// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Conntrack: packets dropped because the table was full, entries that
 * failed to insert (NAT clash, dying entry, chain too long). The kernel's
 * only other trace is a rate-limited "nf_conntrack: table full, dropping
 * packet" and per-CPU stats. These hooks live in nf_conntrack.ko: probes.c
 * attaches them when that module goes live and detaches them when it goes.
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <linux/netfilter.h>
#include <net/netfilter/nf_conntrack.h>

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

struct confirm_ctx {
	struct net *net;
	struct tcptw_event ev;
};

static_assert(sizeof(struct confirm_ctx) <= TCPTW_MAX_CALL_DATA);

/* __nf_conntrack_confirm(skb): NF_DROP means insert_failed was counted */
static int confirm_entry(void *data, struct pt_regs *regs)
{
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 0);
	struct confirm_ctx *c = data;
	const struct nf_conntrack_tuple *t;
	enum ip_conntrack_info ctinfo;
	const struct nf_conn *ct;

	ct = nf_ct_get(skb, &ctinfo);
	if (!ct)
		return 1;
	c->net = nf_ct_net(ct);
	t = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	memset(&c->ev, 0, sizeof(c->ev));
	c->ev.type = TCPTW_EV_CONNTRACK_INSERT_FAILED;
	c->ev.age_ms = -1;
	c->ev.t.family = t->src.l3num == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	memcpy(&c->ev.t.saddr, &t->src.u3, sizeof(t->src.u3));
	memcpy(&c->ev.t.daddr, &t->dst.u3, sizeof(t->dst.u3));
	c->ev.t.sport = t->src.u.all;
	c->ev.t.dport = t->dst.u.all;
	return 0;
}

static void confirm_ret(void *data, struct pt_regs *regs)
{
	struct confirm_ctx *c = data;

	if (regs_return_value(regs) == NF_DROP)
		tcptw_count_event(c->net, TCPTW_CONNTRACK_INSERT_FAILED,
				  &c->ev);
}

static struct tcptw_probe ct_probes[] = {
	{ .name = "nf_conntrack:early_drop", .kind = TCPTW_CALL,
	  .call = early_drop_entry, .ret = early_drop_ret,
	  .data_size = sizeof(struct net *), .module = "nf_conntrack" },
	{ .name = "nf_conntrack:__nf_conntrack_confirm", .kind = TCPTW_CALL,
	  .call = confirm_entry, .ret = confirm_ret,
	  .data_size = sizeof(struct confirm_ctx), .module = "nf_conntrack" },
};

const struct tcptw_probe_set tcptw_ct_probe_set = {
	.probes = ct_probes,
	.n = ARRAY_SIZE(ct_probes),
};
