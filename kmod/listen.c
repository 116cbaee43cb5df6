// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Listeners: accept-queue overflow, SYN-queue drops, SYN cookies, by
 * listener. The kernel counts each of these per netns (ListenOverflows,
 * TCPReqQFullDrop, SyncookiesSent): tcptw's counters are those MIBs
 * (mib.c). What the kernel does not say is which listener and which peer:
 * the hooks below work that out at the entry of the function that
 * decides, from the same queue lengths and sysctls the kernel is about to
 * test, and count the listener's row and an event.
 *
 * The queues can move between that read and the kernel's own (another
 * CPU queueing a child, accept() taking one): a row may then be off by
 * one decision; the counters themselves cannot.
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <net/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/sock_reuseport.h>

#include "pernet.h"
#include "probes.h"
#include "table.h"
#include "test.h"
#include "tuple.h"

/*
 * The group's sums of the last SO_REUSEPORT walk on this CPU: under a
 * flood at one group, the walk runs once per jiffy and CPU, not once per
 * SYN. @sk is only compared, never followed.
 */
struct gauge_cache {
	const struct sock *sk;
	unsigned long when;
	u32 backlog, max;
};

static DEFINE_PER_CPU(struct gauge_cache, gauge_cache);

/*
 * The queue of @sk as its row shows it: for a socket in an SO_REUSEPORT
 * group, the sums over the group's listening sockets (socks[0..num_socks);
 * closed ones follow them since v5.14), which share the row. Under RCU:
 * the group and TCP listeners (SOCK_RCU_FREE) are freed after a grace
 * period. Preemption is disabled (a hook).
 */
static void listen_gauges(const struct sock *sk, u32 *backlog, u32 *max)
{
	struct gauge_cache *c = this_cpu_ptr(&gauge_cache);
	const struct sock_reuseport *reuse;
	unsigned long now = jiffies;
	const struct sock *s;
	unsigned int i, n;

	reuse = rcu_dereference(sk->sk_reuseport_cb);
	if (!reuse) {
		*backlog = READ_ONCE(sk->sk_ack_backlog);
		*max = READ_ONCE(sk->sk_max_ack_backlog);
		return;
	}
	if (c->sk == sk && c->when == now) {
		*backlog = c->backlog;
		*max = c->max;
		return;
	}
	*backlog = 0;
	*max = 0;
	n = min_t(unsigned int, READ_ONCE(reuse->num_socks), reuse->max_socks);
	for (i = 0; i < n; i++) {
		s = READ_ONCE(reuse->socks[i]);
		if (!s)
			continue;
		*backlog += READ_ONCE(s->sk_ack_backlog);
		*max += READ_ONCE(s->sk_max_ack_backlog);
	}
	c->sk = sk;
	c->when = now;
	c->backlog = *backlog;
	c->max = *max;
}

/* listen_count()'s event, once the rate limit let it through */
static noinline void listen_event(struct tcptw_state *st,
				  const struct sk_buff *skb, u8 type, u8 reason)
{
	struct tcptw_event ev;

	tcptw_event_init(&ev, type);
	tcptw_tuple_from_skb(&ev.t, skb);
	ev.reason = reason;
	tcptw_event_push(st, &ev);
}

/*
 * One listener decision for the segment @skb at @sk: the listener's row
 * and an event. The row is the listening socket's, keyed by the address
 * and port it is bound to (0.0.0.0 or :: for a wildcard one, whichever
 * local address the SYN was sent to); an SO_REUSEPORT group binds them
 * all alike, so it shares one row.
 */
static void listen_count(struct tcptw_state *st, const struct sock *sk,
			 const struct sk_buff *skb,
			 enum tcptw_listener_col col, u8 type, u8 reason)
{
	u32 backlog, max;

	listen_gauges(sk, &backlog, &max);
	tcptw_table_inc(st->listeners, sk->sk_family,
			tcptw_compat_sk_bound_addr(sk),
			inet_sk(sk)->inet_sport, col, backlog, max);
	/* a SYN flood: most are only counted (event_rate) */
	if (tcptw_event_ok(st, type))
		listen_event(st, skb, type, reason);
}

/*
 * tcp_conn_request(rsk_ops, af_ops, sk, skb): a SYN at listener @sk. In
 * the kernel's order: a full SYN queue (or tcp_syncookies=2) means a
 * cookie or, with cookies off, a drop (TCPReqQFullDrop); then a full
 * accept queue drops the SYN (ListenOverflows); then the cookie is sent
 * (SyncookiesSent). A SYN a TIME_WAIT socket accepted carries its ISN and
 * skips the SYN queue's test. All three are decided here, from what the
 * kernel is about to test: the cookie needs no hook of its own where
 * cookie_v{4,6}_init_sequence() counts it, only this one, which every
 * SYN passes anyway. What the kernel can still refuse after the decision
 * (the request's allocation, a route back, a security module) drops the
 * SYN without its cookie: such a SYN is in its listener's cookie_sent
 * and in ListenDrops, not in SyncookiesSent (docs/design.md, Limits).
 */
static void conn_request_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 2);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 3);
	const struct net *net = sock_net(sk);
	u8 syncookies = READ_ONCE(net->ipv4.sysctl_tcp_syncookies);
	enum tcptw_listener_col col;
	bool cookie = false;
	struct tcptw_state *st;
	u8 type, reason = 0;

	if ((syncookies == 2 || inet_csk_reqsk_queue_is_full(sk)) &&
	    !tcptw_compat_tw_isn(skb)) {
		cookie = IS_ENABLED(CONFIG_SYN_COOKIES) && syncookies;
		if (!cookie) {
			col = TCPTW_LISTENER_SYN_DROP;
			type = TCPTW_EV_LISTEN_SYN_DROP;
			goto count;
		}
	}
	if (sk_acceptq_is_full(sk)) {
		col = TCPTW_LISTENER_OVERFLOW_SYN;
		type = TCPTW_EV_LISTEN_OVERFLOW;
		reason = TCPTW_LISTEN_REASON_SYN;
	} else if (cookie) {
		col = TCPTW_LISTENER_COOKIE_SENT;
		type = TCPTW_EV_LISTEN_SYN_COOKIE;
	} else {
		return;		/* the common case: nothing fails */
	}
count:
	rcu_read_lock();
	st = tcptw_state(net);
	if (st) {
		if (col == TCPTW_LISTENER_OVERFLOW_SYN)
			tcptw_inc(st, TCPTW_LISTEN_OVERFLOW_SYN);
		listen_count(st, sk, skb, col, type, reason);
	}
	rcu_read_unlock();
}

/*
 * tcp_v{4,6}_syn_recv_sock(sk, skb, ...): the child of a handshake, whose
 * first test is the accept queue (exit_overflow, ListenOverflows). Reached
 * from tcp_check_req() and cookie_v{4,6}_check() with the completing ACK,
 * and, for TCP Fast Open, from tcp_conn_request() with the SYN: that
 * overflow is the SYN's (ListenOverflowSyn), another CPU having filled the
 * queue after the SYN's own test (tcptw_tfo_race.sh).
 */
static void syn_recv_sock(const struct sock *sk, const struct sk_buff *skb)
{
	bool syn = tcp_hdr(skb)->syn;
	struct tcptw_state *st;

	/* test build: hold a Fast Open child, for that race */
	if (syn)
		tcptw_test_udelay(tcptw_test_tfo_delay_us);
	if (!sk_acceptq_is_full(sk))
		goto out;
	if (!syn)
		tcptw_test_ack_queue_full();
	rcu_read_lock();
	st = tcptw_state(sock_net(sk));
	if (st) {
		if (syn)
			tcptw_inc(st, TCPTW_LISTEN_OVERFLOW_SYN);
		listen_count(st, sk, skb, syn ? TCPTW_LISTENER_OVERFLOW_SYN :
			     TCPTW_LISTENER_OVERFLOW_ACK,
			     TCPTW_EV_LISTEN_OVERFLOW, syn ?
			     TCPTW_LISTEN_REASON_SYN : TCPTW_LISTEN_REASON_ACK);
	}
	rcu_read_unlock();
out:
	if (!syn)
		tcptw_test_udelay(min(tcptw_test_ack_delay_us, 500000U));
}

static void v4_syn_recv_sock_pre(struct pt_regs *regs)
{
	syn_recv_sock((void *)regs_get_kernel_argument(regs, 0),
		      (void *)regs_get_kernel_argument(regs, 1));
}

static void v6_syn_recv_sock_pre(struct pt_regs *regs)
{
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	/* a v4-mapped child: tcp_v4_syn_recv_sock()'s hook counts it */
	if (skb->protocol == htons(ETH_P_IP))
		return;
	syn_recv_sock((void *)regs_get_kernel_argument(regs, 0), skb);
}

static struct tcptw_probe listen_probes[] = {
	{ .name = "tcp_conn_request", .kind = TCPTW_ENTRY,
	  .entry = conn_request_pre },
	{ .name = "tcp_v4_syn_recv_sock", .kind = TCPTW_ENTRY,
	  .entry = v4_syn_recv_sock_pre },
	{ .name = "tcp_v6_syn_recv_sock", .kind = TCPTW_ENTRY,
	  .entry = v6_syn_recv_sock_pre },
};

const struct tcptw_probe_set tcptw_listen_probe_set = {
	.probes = listen_probes,
	.n = ARRAY_SIZE(listen_probes),
};
