// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Client side: connect() and the 4-tuples held by TIME_WAIT sockets.
 *
 * tcp_twsk_unique(sk, sktw, twp) decides, for each TIME_WAIT socket that
 * holds a 4-tuple a connect() tries, whether it may be reused. Under port
 * pressure one connect() tries every port of the range, so nothing here
 * hooks that function: its decisions are read where they end.
 *
 * A grant is the kernel's TWRecycled (mib.c); its peers row, age and event
 * come from inet_twsk_deschedule_put() of a socket that is already out of
 * the established hash (tw.c: connect() unhashed it when it took over the
 * tuple; every other caller passes a hashed one).
 *
 * A connect() that fails with EADDRNOTAVAIL (every port of the range
 * taken, ConnectPortExhausted, or, for a socket bound to a port, its one
 * 4-tuple, ConnectTupleInUse) leaves SYN-SENT for CLOSE without having
 * sent its SYN or got a tuple. From 6.1 its failure path calls
 * inet_bhash2_reset_saddr(), once, hooked at its entry; on 5.10 the
 * sock:inet_sock_set_state tracepoint (SYN-SENT -> CLOSE) says so. Either
 * way once per connect(), with no hook on the connect() path itself, and
 * none at all on a clean connection's from 6.1. There the refusal is
 * counted once, with the reason reuse could
 * not help: the connection's own (tcp_tw_reuse 0, or 2 and not over
 * loopback), else that of the TIME_WAIT socket holding the tuple
 * (bound), or holding the lowest port of the range the kernel searched
 * (the socket's own IP_LOCAL_PORT_RANGE where it has one) to the same
 * peer (found by looking ports up in the established hash, at most
 * TW_SCAN_MAX of them), in the kernel's order.
 * Both counts go to one peers row in one update, and one event
 * (connect_port_exhausted or connect_tuple_in_use) carries the reason,
 * with that TIME_WAIT socket's tuple, age and last peer timestamp.
 */
#include <linux/ptrace.h>
#include <net/tcp.h>
#include <net/inet_timewait_sock.h>
#include <net/ipv6.h>
#include <trace/events/sock.h>

#include "pernet.h"
#include "table_fast.h"
#include "probes.h"
#include "tuple.h"
#include "twage.h"

/* ports looked up for a TIME_WAIT socket after a failed connect() */
#define TW_SCAN_MAX	256

static bool sk_is_loopback(const struct sock *sk)
{
	if (sk->sk_bound_dev_if == LOOPBACK_IFINDEX)
		return true;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
		return ipv6_addr_loopback(&sk->sk_v6_daddr) ||
		       ipv6_addr_v4mapped_loopback(&sk->sk_v6_daddr) ||
		       ipv6_addr_loopback(&sk->sk_v6_rcv_saddr) ||
		       ipv6_addr_v4mapped_loopback(&sk->sk_v6_rcv_saddr);
#endif
	return ipv4_is_loopback(sk->sk_daddr) ||
	       ipv4_is_loopback(sk->sk_rcv_saddr);
}

/*
 * The TIME_WAIT socket holding @sk's remote endpoint and local address
 * with local port @lport, with a reference (sock_gen_put()); NULL if the
 * tuple is free or held by a connection.
 */
static struct sock *tw_holding(const struct sock *sk, u16 lport)
{
	struct net *net = sock_net(sk);
	struct sock *sk2;

#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr))
		sk2 = tcptw_compat_lookup_est6(net, &sk->sk_v6_daddr,
					       sk->sk_dport,
					       &sk->sk_v6_rcv_saddr, lport,
					       sk->sk_bound_dev_if);
	else
#endif
		sk2 = tcptw_compat_lookup_est4(net, sk->sk_daddr, sk->sk_dport,
					       sk->sk_rcv_saddr, lport,
					       sk->sk_bound_dev_if);
	if (sk2 && sk2->sk_state != TCP_TIME_WAIT) {
		sock_gen_put(sk2);
		return NULL;
	}
	return sk2;
}

/*
 * The lowest port of the range connect() searched for @sk (its own
 * IP_LOCAL_PORT_RANGE where it has one) whose tuple a TIME_WAIT socket
 * holds.
 */
static struct sock *tw_in_range(const struct sock *sk)
{
	struct sock *tw = NULL;
	int low, high, port;

	tcptw_compat_port_range(sk, &low, &high);
	for (port = low; port <= high && port < low + TW_SCAN_MAX && !tw;
	     port++)
		tw = tw_holding(sk, port);
	return tw;
}

/*
 * Why reuse could not help a connect() that failed (@bound: to its one
 * 4-tuple), in the kernel's order; TCPTW_REUSE_OK if no TIME_WAIT socket
 * was found to blame. *@tw: the socket the reason is of, if any.
 */
static u8 refusal(const struct sock *sk, bool bound, struct sock **tw)
{
	const struct net *net = sock_net(sk);
	u8 reuse = READ_ONCE(net->ipv4.sysctl_tcp_tw_reuse);

	*tw = NULL;
	/* a port the socket is bound to ignores tcp_tw_reuse */
	if (!bound && !reuse)
		return TCPTW_REUSE_DISABLED;
	if (!bound && reuse == 2 && !sk_is_loopback(sk))
		return TCPTW_REUSE_LOOPBACK_ONLY;
	/* the established hash's lookups, as lockdep wants them */
	rcu_read_lock();
	*tw = bound ? tw_holding(sk, inet_sk(sk)->inet_num) : tw_in_range(sk);
	rcu_read_unlock();
	if (!*tw)
		return TCPTW_REUSE_OK;
	if (!bound && tcptw_compat_tw_reuse_checks_fin_wait2() &&
	    READ_ONCE(inet_twsk(*tw)->tw_substate) == TCP_FIN_WAIT2)
		return TCPTW_REUSE_FIN_WAIT2;
	if (!READ_ONCE(tcp_twsk(*tw)->tw_ts_recent_stamp))
		return TCPTW_REUSE_NO_TIMESTAMPS;
	/* with a timestamp, a bound tuple's socket would have been taken */
	return bound ? TCPTW_REUSE_OK : TCPTW_REUSE_TOO_RECENT;
}

/*
 * connect() took over @tw's tuple (tcp_twsk_unique() granted it; tw.c
 * tells this deschedule apart): its peers row, age and event. The count
 * is the kernel's TWRecycled.
 */
void tcptw_reuse_granted(const struct inet_timewait_sock *tw)
{
	struct tcptw_state *st;
	struct tcptw_event ev;
	struct tcptw_tuple t = {};
	s32 age;

	rcu_read_lock();
	st = tcptw_state(twsk_net(tw));
	if (!st)
		goto out;
	tcptw_tuple_from_tw(&t, tw);
	tcptw_tuple_swap(&t);	/* src = local, dst = remote */
	age = tcptw_tw_age_ms(tw);
	tcptw_hist_add(st, TCPTW_HIST_REUSE_GRANTED, age);
	tcptw_table_inc(st->peers, t.family, &t.daddr, t.dport,
			TCPTW_PEER_REUSE_GRANTED, 0, 0);
	if (!tcptw_event_start(st, &ev, TCPTW_EV_TW_REUSE_GRANTED))
		goto out;
	ev.t = t;
	ev.age_ms = age;
	ev.reason = TCPTW_REUSE_OK;
	tcptw_event_ts_recent(&ev, tw);
	tcptw_event_push(st, &ev);
out:
	rcu_read_unlock();
}

/*
 * The one event of a failed connect() (syn_sent_closed()): with the tuple
 * the TIME_WAIT socket @tw holds, its port included, if there is one.
 */
static noinline void connect_event(struct tcptw_state *st, u8 type,
				   const struct sock *sk, u8 reason,
				   const struct sock *tw)
{
	struct tcptw_event ev;

	tcptw_event_init(&ev, type);
	ev.reason = reason;
	if (tw) {
		tcptw_tuple_from_tw(&ev.t, inet_twsk(tw));
		tcptw_tuple_swap(&ev.t);	/* src = local, dst = remote */
		ev.age_ms = tcptw_tw_age_ms(inet_twsk(tw));
		tcptw_event_ts_recent(&ev, inet_twsk(tw));
	} else {
		tcptw_tuple_from_sk(&ev.t, sk);
	}
	tcptw_event_push(st, &ev);
}

/*
 * The peers row of @sk's remote endpoint: the tuple's dst as
 * tcptw_tuple_from_sk() gives it, and that of any TIME_WAIT socket found
 * for it (looked up by that endpoint).
 */
static void peer_key(struct tcptw_table_key *k, const struct sock *sk)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		tcptw_table_key_set(k, AF_INET6, &sk->sk_v6_daddr,
				    sk->sk_dport);
		return;
	}
#endif
	tcptw_table_key_set(k, AF_INET, &sk->sk_daddr, sk->sk_dport);
}

/*
 * Whether this connect() of @sk got its 4-tuple and failed after it, or
 * is a Fast Open connect() closed before its first write. tcp_connect()
 * sets window_clamp (tcp_connect_init()) before it allocates the SYN
 * (-ENOBUFS after that), where a new socket and tcp_disconnect() leave
 * it 0; an IPv4 connect() sets the socket's route only once its tuple
 * is hashed. Both are still there when the tracepoint fires: the failure
 * path clears the route after tcp_set_state(). Two failures stay alike
 * to a refusal: a route lost between the tuple's choice and the SYN
 * (tcp_v4_connect()'s ip_route_newports(), either's rebuild_header()),
 * a window of microseconds; and, on IPv6 only, a socket the user set
 * TCP_WINDOW_CLAMP on, whose refusals go uncounted.
 */
static bool connect_got_tuple(const struct sock *sk)
{
	if (tcptw_compat_defer_connect(sk))
		return true;
	if (sk->sk_family == AF_INET)
		return rcu_access_pointer(sk->sk_dst_cache);
	return READ_ONCE(tcp_sk(sk)->window_clamp);
}

/*
 * A socket left SYN-SENT for CLOSE (reset_saddr_pre(), 6.1+;
 * tp_inet_sock_set_state(), 5.10), after inet_put_port() zeroed inet_num
 * unless the user bound the port.
 * connect() leaves SYN-SENT without sending its SYN (segs_out 0, which
 * tcp_disconnect() resets for a socket connected again) and without
 * having got a 4-tuple (connect_got_tuple()) only when inet_hash_connect()
 * found none. sk_err says nothing here: tcp_disconnect() leaves
 * ECONNRESET in it for the next connect(). Out of line: its locals,
 * zeroed on entry by kernels built with CONFIG_INIT_STACK_ALL_ZERO, cost
 * nothing to the state changes that fail the first test.
 */
static noinline void syn_sent_closed(const struct sock *sk)
{
	unsigned int col, col2 = TCPTW_TABLE_NO_COL;
	struct tcptw_table_key key;
	struct tcptw_state *st;
	struct sock *tw = NULL;
	u8 reason, type;
	bool bound;

	if (sk->sk_protocol != IPPROTO_TCP ||
	    READ_ONCE(tcp_sk(sk)->segs_out) || connect_got_tuple(sk))
		return;
	bound = inet_sk(sk)->inet_num != 0;
	/* either caller runs with preemption disabled */
	st = tcptw_state_hook(sock_net(sk));
	if (!st)
		return;
	tcptw_inc(st, bound ? TCPTW_CONNECT_TUPLE_IN_USE :
		  TCPTW_CONNECT_PORT_EXHAUSTED);
	col = bound ? TCPTW_PEER_TUPLE_IN_USE : TCPTW_PEER_PORT_EXHAUSTED;
	/* the refusal, once per failed connect(), on the same peers row */
	reason = refusal(sk, bound, &tw);
	if (reason != TCPTW_REUSE_OK) {
		if (tw)
			tcptw_hist_add(st, TCPTW_HIST_REUSE_DENIED,
				       tcptw_tw_age_ms(inet_twsk(tw)));
		tcptw_inc(st, TCPTW_TW_REUSE_DENIED_DISABLED + reason - 1);
		col2 = TCPTW_PEER_DENIED_DISABLED + reason - 1;
	}
	peer_key(&key, sk);
	tcptw_table_inc2_key(st->peers, &key, col, col2);
	/* one event, with the refusal's reason and its socket's age */
	type = bound ? TCPTW_EV_CONNECT_TUPLE_IN_USE :
		       TCPTW_EV_CONNECT_PORT_EXHAUSTED;
	if (tcptw_event_ok(st, type))
		connect_event(st, type, sk, reason, tw);
	if (tw)
		sock_gen_put(tw);
}

/* the states tcp_time_wait() is called in: their CLOSE may be a birth */
#define TW_PARENTS	(TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2 | TCPF_CLOSING)

/*
 * sock:inet_sock_set_state(sk, oldstate, newstate), on every state change
 * of every inet socket, attached on 5.10 only (TCPTW_COMPAT_STATE_TP):
 * only a change to CLOSE goes further, from
 * SYN-SENT (a connect() that failed) or, where the kernel keeps no birth
 * of its own, from a state a TIME_WAIT socket is born in (tw.c).
 */
static void tp_inet_sock_set_state(void *data, const struct sock *sk,
				   const int oldstate, const int newstate)
{
	tcptw_probe_hit(data);
	if (likely(newstate != TCP_CLOSE))
		return;
	if (oldstate != TCP_SYN_SENT &&
	    (!TCPTW_COMPAT_TW_BIRTH_SEEN || !((1 << oldstate) & TW_PARENTS)))
		return;
	/* v6.x+ may call tracepoint handlers preemptible (compat.h) */
	tcptw_compat_tp_enter();
	if (oldstate == TCP_SYN_SENT)
		syn_sent_closed(sk);
	else
		tcptw_tw_born(sk);
	tcptw_compat_tp_exit();
}

static_assert(__same_type(&register_trace_inet_sock_set_state,
			  int (*)(typeof(tp_inet_sock_set_state) *, void *)),
	      "tp_inet_sock_set_state does not match its tracepoint");

/*
 * inet_bhash2_reset_saddr(sk), 6.1+: tcp_v4_connect()'s failure path and
 * tcp_v6_connect()'s late one, for a socket they had put in SYN-SENT,
 * right after tcp_set_state(sk, TCP_CLOSE) and before they zero
 * inet_dport; tcp_disconnect() too, with inet_dport already zeroed, and
 * DCCP's connect(). Nothing on a clean connection's path calls it: the
 * failure costs one call, the clean path none.
 */
static __always_inline void reset_saddr_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);

	if (!READ_ONCE(inet_sk(sk)->inet_dport) ||
	    READ_ONCE(sk->sk_state) != TCP_CLOSE)
		return;
	syn_sent_closed(sk);
}

/* every connect() of a port-pressure storm: a callback of its own */
TCPTW_DEFINE_OWN_CB(reset_saddr_pre)

static struct tcptw_probe reuse_probes[] = {
	{ .name = "inet_sock_set_state", .kind = TCPTW_TRACEPOINT,
	  .tp_func = tp_inet_sock_set_state,
	  .unused = !TCPTW_COMPAT_STATE_TP },
	{ .name = "inet_bhash2_reset_saddr", .kind = TCPTW_ENTRY,
	  .entry = reset_saddr_pre, .own_cb = TCPTW_OWN_CB(reset_saddr_pre),
	  .unused = !TCPTW_COMPAT_CONNECT_FAIL_FN },
};

const struct tcptw_probe_set tcptw_reuse_probe_set = {
	.probes = reuse_probes,
	.n = ARRAY_SIZE(reuse_probes),
};
