// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Client side: connect() and the 4-tuples held by TIME_WAIT sockets.
 *
 * tcp_twsk_unique(sk, sktw, twp) decides, for one TIME_WAIT socket that
 * holds the 4-tuple a connect() wants, whether it may be reused (1) or not
 * (0). No kernel counter says why it refused, so the entry handler
 * evaluates the kernel's conditions in the kernel's order on a snapshot
 * and the return handler attributes a refusal to the first one that
 * failed. One connect() may examine many candidates while it scans the
 * ephemeral range: each refusal is counted.
 *
 * __inet_hash_connect() returning -EADDRNOTAVAIL is the end of that scan:
 * every port of the range was taken (ConnectPortExhausted), or, for a
 * socket bound to a port, its single 4-tuple was (ConnectTupleInUse).
 *
 * Both are called in process context with the socket locked; the hook
 * handlers themselves run with preemption disabled. Nothing here takes a
 * lock other than the peers table's bucket lock (see peers.c).
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <net/tcp.h>
#include <net/inet_timewait_sock.h>
#include <net/ipv6.h>

#include "pernet.h"
#include "table.h"
#include "probes.h"
#include "tuple.h"
#include "twage.h"

struct reuse_ctx {
	struct net *net;
	struct tcptw_event ev;	/* src = local, dst = remote */
	u8 reason;		/* enum tcptw_reuse_reason predicted */
};

static_assert(sizeof(struct reuse_ctx) <= TCPTW_MAX_CALL_DATA);

static bool tw_is_loopback(const struct inet_timewait_sock *tw)
{
	if (tw->tw_bound_dev_if == LOOPBACK_IFINDEX)
		return true;
#if IS_ENABLED(CONFIG_IPV6)
	if (tw->tw_family == AF_INET6)
		return ipv6_addr_loopback(&tw->tw_v6_daddr) ||
		       ipv6_addr_v4mapped_loopback(&tw->tw_v6_daddr) ||
		       ipv6_addr_loopback(&tw->tw_v6_rcv_saddr) ||
		       ipv6_addr_v4mapped_loopback(&tw->tw_v6_rcv_saddr);
#endif
	return ipv4_is_loopback(tw->tw_daddr) ||
	       ipv4_is_loopback(tw->tw_rcv_saddr);
}

/* The kernel's conditions, in its order; the first that fails is why. */
static u8 reuse_reason(const struct net *net, const struct sock *sktw,
		       bool bound)
{
	const struct inet_timewait_sock *tw = inet_twsk(sktw);
	u8 reuse = READ_ONCE(net->ipv4.sysctl_tcp_tw_reuse);
	bool stamp = READ_ONCE(tcp_twsk(sktw)->tw_ts_recent_stamp);

	/* a port the socket is bound to ignores tcp_tw_reuse */
	if (bound)
		return stamp ? TCPTW_REUSE_OK : TCPTW_REUSE_NO_TIMESTAMPS;
	if (!reuse)
		return TCPTW_REUSE_DISABLED;
	if (tcptw_compat_tw_reuse_checks_fin_wait2() &&
	    READ_ONCE(tw->tw_substate) == TCP_FIN_WAIT2)
		return TCPTW_REUSE_FIN_WAIT2;
	if (reuse == 2 && !tw_is_loopback(tw))
		return TCPTW_REUSE_LOOPBACK_ONLY;
	if (!stamp)
		return TCPTW_REUSE_NO_TIMESTAMPS;
	if (!tcptw_compat_tw_reuse_age_ok(net, sktw))
		return TCPTW_REUSE_TOO_RECENT;
	return TCPTW_REUSE_OK;
}

static int twsk_unique_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sock *sktw = (void *)regs_get_kernel_argument(regs, 1);
	const void *twp = (void *)regs_get_kernel_argument(regs, 2);
	const struct inet_timewait_sock *tw = inet_twsk(sktw);
	struct reuse_ctx *c = data;
	bool ours;

	/* a deschedule of @sktw now is connect()'s, not a listener's */
	tcptw_tw_syn_forget(sktw);
	c->net = sock_net(sk);
	rcu_read_lock();
	ours = tcptw_state(c->net);
	rcu_read_unlock();
	if (!ours)
		return 1;
	memset(&c->ev, 0, sizeof(c->ev));
	tcptw_tuple_from_tw(&c->ev.t, tw);
	tcptw_tuple_swap(&c->ev.t);
	c->ev.age_ms = tcptw_tw_age_ms(tw);
	c->ev.ts_recent = READ_ONCE(tcp_twsk(sktw)->tw_ts_recent);
	if (READ_ONCE(tcp_twsk(sktw)->tw_ts_recent_stamp))
		c->ev.flags |= TCPTW_EV_HAS_TS_RECENT;
	/* twp == NULL: the socket already has its local port (bind()) */
	c->reason = reuse_reason(c->net, sktw, !twp);
	return 0;
}

static void twsk_unique_ret(void *data, struct pt_regs *regs)
{
	struct reuse_ctx *c = data;
	int granted = (int)regs_return_value(regs);
	struct tcptw_state *st;

	rcu_read_lock();
	st = tcptw_state(c->net);
	if (!st)
		goto out;
	if (granted) {
		tcptw_inc(st, TCPTW_TW_REUSE_GRANTED);
		tcptw_hist_add(st, TCPTW_HIST_REUSE_GRANTED, c->ev.age_ms);
		tcptw_table_inc(st->peers, c->ev.t.family, &c->ev.t.daddr,
				c->ev.t.dport, TCPTW_PEER_REUSE_GRANTED, 0, 0);
		c->ev.type = TCPTW_EV_TW_REUSE_GRANTED;
		tcptw_emit(st, &c->ev);
	} else if (c->reason != TCPTW_REUSE_OK) {
		/* else: lost a race with the socket's destruction */
		tcptw_inc(st, TCPTW_TW_REUSE_DENIED_DISABLED + c->reason - 1);
		tcptw_hist_add(st, TCPTW_HIST_REUSE_DENIED, c->ev.age_ms);
		tcptw_table_inc(st->peers, c->ev.t.family, &c->ev.t.daddr,
				c->ev.t.dport,
				TCPTW_PEER_DENIED_DISABLED + c->reason - 1, 0, 0);
		c->ev.type = TCPTW_EV_TW_REUSE_DENIED;
		c->ev.reason = c->reason;
		tcptw_emit(st, &c->ev);
	}
out:
	rcu_read_unlock();
}

struct hash_connect_ctx {
	struct net *net;
	struct tcptw_event ev;	/* src = local, dst = remote */
	bool bound;
};

static_assert(sizeof(struct hash_connect_ctx) <= TCPTW_MAX_CALL_DATA);

/* __inet_hash_connect(death_row, sk, ...): @sk is the second argument */
static int hash_connect_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 1);
	struct hash_connect_ctx *c = data;

	/* DCCP shares __inet_hash_connect() on older kernels */
	if (sk->sk_protocol != IPPROTO_TCP)
		return 1;
	c->net = sock_net(sk);
	c->bound = inet_sk(sk)->inet_num != 0;
	memset(&c->ev, 0, sizeof(c->ev));
	tcptw_tuple_from_sk(&c->ev.t, sk);
	c->ev.age_ms = -1;
	return 0;
}

static void hash_connect_ret(void *data, struct pt_regs *regs)
{
	struct hash_connect_ctx *c = data;
	int err = (int)regs_return_value(regs);
	struct tcptw_state *st;

	if (err != -EADDRNOTAVAIL)
		return;
	rcu_read_lock();
	st = tcptw_state(c->net);
	if (st) {
		tcptw_inc(st, c->bound ? TCPTW_CONNECT_TUPLE_IN_USE :
			  TCPTW_CONNECT_PORT_EXHAUSTED);
		tcptw_table_inc(st->peers, c->ev.t.family, &c->ev.t.daddr,
				c->ev.t.dport,
				c->bound ? TCPTW_PEER_TUPLE_IN_USE :
				TCPTW_PEER_PORT_EXHAUSTED, 0, 0);
		c->ev.type = c->bound ? TCPTW_EV_CONNECT_TUPLE_IN_USE :
			TCPTW_EV_CONNECT_PORT_EXHAUSTED;
		tcptw_emit(st, &c->ev);
	}
	rcu_read_unlock();
}

static struct tcptw_probe reuse_probes[] = {
	{ .name = "tcp_twsk_unique", .kind = TCPTW_CALL,
	  .call = twsk_unique_entry, .ret = twsk_unique_ret,
	  .data_size = sizeof(struct reuse_ctx) },
	{ .name = "__inet_hash_connect", .kind = TCPTW_CALL,
	  .call = hash_connect_entry, .ret = hash_connect_ret,
	  .data_size = sizeof(struct hash_connect_ctx) },
};

static void reuse_probes_setup(void)
{
	unsigned int i;

	/*
	 * __inet_hash_connect() may sleep (cond_resched() in its scan), so
	 * one call in flight per concurrent connect(): be generous.
	 */
	for (i = 0; i < ARRAY_SIZE(reuse_probes); i++)
		reuse_probes[i].maxactive = max(64U, 16 * num_possible_cpus());
}

const struct tcptw_probe_set tcptw_reuse_probe_set = {
	.probes = reuse_probes,
	.n = ARRAY_SIZE(reuse_probes),
	.setup = reuse_probes_setup,
};
