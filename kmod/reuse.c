// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Client side: connect() and the 4-tuples held by TIME_WAIT sockets.
 *
 * tcp_twsk_unique(sk, sktw, twp) decides, for one TIME_WAIT socket that
 * holds the 4-tuple a connect() wants, whether it may be reused (1) or not
 * (0). It runs under the tuple's hash bucket lock, on a TIME_WAIT socket
 * whose fields no longer change but for its destruction, so its entry
 * knows the outcome: the hook evaluates the kernel's conditions in the
 * kernel's order and a refusal is attributed to the first that fails. One
 * connect() may examine many candidates while it scans the ephemeral
 * range: each refusal is counted. A grant is the kernel's TWRecycled
 * (mib.c); the hook adds its peer row, age and event.
 *
 * A connect() that fails with EADDRNOTAVAIL (every port of the range
 * taken, ConnectPortExhausted, or, for a socket bound to a port, its one
 * 4-tuple, ConnectTupleInUse) leaves SYN-SENT for CLOSE without having
 * sent its SYN: the sock:inet_sock_set_state tracepoint says so, with no
 * hook on the connect() path itself.
 */
#include <linux/ptrace.h>
#include <net/tcp.h>
#include <net/inet_timewait_sock.h>
#include <net/ipv6.h>
#include <trace/events/sock.h>

#include "pernet.h"
#include "table.h"
#include "probes.h"
#include "tuple.h"
#include "twage.h"

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

static void twsk_unique_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sock *sktw = (void *)regs_get_kernel_argument(regs, 1);
	const void *twp = (void *)regs_get_kernel_argument(regs, 2);
	const struct inet_timewait_sock *tw = inet_twsk(sktw);
	const struct net *net = sock_net(sk);
	struct tcptw_state *st;
	struct tcptw_event ev;
	struct tcptw_tuple t = {};
	u8 reason, col;
	s32 age;

	/* a deschedule of @sktw now is connect()'s, not a listener's */
	tcptw_tw_syn_forget(sktw);
	rcu_read_lock();
	st = tcptw_state(net);
	if (!st)
		goto out;
	/* twp == NULL: the socket already has its local port (bind()) */
	reason = reuse_reason(net, sktw, !twp);
	tcptw_tuple_from_tw(&t, tw);
	tcptw_tuple_swap(&t);	/* src = local, dst = remote */
	age = tcptw_tw_age_ms(tw);
	if (reason == TCPTW_REUSE_OK) {
		tcptw_hist_add(st, TCPTW_HIST_REUSE_GRANTED, age);
		col = TCPTW_PEER_REUSE_GRANTED;
	} else {
		tcptw_inc(st, TCPTW_TW_REUSE_DENIED_DISABLED + reason - 1);
		tcptw_hist_add(st, TCPTW_HIST_REUSE_DENIED, age);
		col = TCPTW_PEER_DENIED_DISABLED + reason - 1;
	}
	tcptw_table_inc(st->peers, t.family, &t.daddr, t.dport, col, 0, 0);
	if (!tcptw_event_start(st, &ev, reason == TCPTW_REUSE_OK ?
			       TCPTW_EV_TW_REUSE_GRANTED :
			       TCPTW_EV_TW_REUSE_DENIED))
		goto out;
	ev.t = t;
	ev.age_ms = age;
	ev.reason = reason;
	ev.ts_recent = READ_ONCE(tcp_twsk(sktw)->tw_ts_recent);
	if (READ_ONCE(tcp_twsk(sktw)->tw_ts_recent_stamp))
		ev.flags |= TCPTW_EV_HAS_TS_RECENT;
	tcptw_event_push(st, &ev);
out:
	rcu_read_unlock();
}

/*
 * sock:inet_sock_set_state(sk, oldstate, newstate), on every state change
 * of every inet socket: returns at the first test but for SYN-SENT ->
 * CLOSE. connect() leaves SYN-SENT without sending its SYN (segs_out 0)
 * and without an error (sk_err 0: not a RST, a timeout or an ICMP error)
 * only when inet_hash_connect() found no 4-tuple. One other failure looks
 * alike: a route or buffer lost between the port's choice and the SYN,
 * which would count as ConnectTupleInUse.
 */
static void set_state(const struct sock *sk, int oldstate, int newstate)
{
	enum tcptw_peer_col col;
	struct tcptw_state *st;
	struct tcptw_event ev;
	struct tcptw_tuple t = {};
	bool bound;

	if (oldstate != TCP_SYN_SENT || newstate != TCP_CLOSE ||
	    sk->sk_protocol != IPPROTO_TCP || READ_ONCE(sk->sk_err) ||
	    READ_ONCE(tcp_sk(sk)->segs_out))
		return;
	bound = inet_sk(sk)->inet_num != 0;
	rcu_read_lock();
	st = tcptw_state(sock_net(sk));
	if (!st)
		goto out;
	tcptw_inc(st, bound ? TCPTW_CONNECT_TUPLE_IN_USE :
		  TCPTW_CONNECT_PORT_EXHAUSTED);
	tcptw_tuple_from_sk(&t, sk);
	col = bound ? TCPTW_PEER_TUPLE_IN_USE : TCPTW_PEER_PORT_EXHAUSTED;
	tcptw_table_inc(st->peers, t.family, &t.daddr, t.dport, col, 0, 0);
	if (tcptw_event_start(st, &ev, bound ? TCPTW_EV_CONNECT_TUPLE_IN_USE :
			      TCPTW_EV_CONNECT_PORT_EXHAUSTED)) {
		ev.t = t;
		tcptw_event_push(st, &ev);
	}
out:
	rcu_read_unlock();
}

static void tp_inet_sock_set_state(void *data, const struct sock *sk,
				   const int oldstate, const int newstate)
{
	tcptw_probe_hit(data);
	/* v6.x+ may call tracepoint handlers preemptible (compat.h) */
	tcptw_compat_tp_enter();
	set_state(sk, oldstate, newstate);
	tcptw_compat_tp_exit();
}

static_assert(__same_type(&register_trace_inet_sock_set_state,
			  int (*)(typeof(tp_inet_sock_set_state) *, void *)),
	      "tp_inet_sock_set_state does not match its tracepoint");

static struct tcptw_probe reuse_probes[] = {
	{ .name = "tcp_twsk_unique", .kind = TCPTW_ENTRY,
	  .entry = twsk_unique_pre },
	{ .name = "inet_sock_set_state", .kind = TCPTW_TRACEPOINT,
	  .tp_func = tp_inet_sock_set_state },
};

const struct tcptw_probe_set tcptw_reuse_probe_set = {
	.probes = reuse_probes,
	.n = ARRAY_SIZE(reuse_probes),
};
