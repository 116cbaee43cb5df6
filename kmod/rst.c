// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * RSTs sent and received, and the PAWS rejects of full sockets outside
 * TIME_WAIT: an established socket's (tcp_oow_rate_limited()) and a
 * SYN-SENT socket's, which the kernel answers with a RST and so is seen
 * from the RST's hook. RstSent and PawsActiveRejected are the kernel's
 * own OutRsts and PAWSActive (mib.c): the RST hooks only say which
 * connection and why, as events.
 */
#include <linux/ptrace.h>
#include <linux/tracepoint.h>
#include <net/tcp.h>

#include "pernet.h"
#include "probes.h"
#include "tuple.h"
#include "compat/tp_tcp.h"

/*
 * tcp_oow_rate_limited()'s decision, as it takes it (the same since 5.10):
 * a segment with data and no SYN is never limited; else the limit holds
 * within tcp_invalid_ratelimit jiffies of the last ACK it let through.
 * The same inputs, read a few instructions apart: only a jiffy's tick in
 * between tells them apart.
 */
static bool oow_limited(const struct net *net, const struct sk_buff *skb,
			const u32 *last)
{
	u32 val;
	s32 elapsed;

	if (TCP_SKB_CB(skb)->seq != TCP_SKB_CB(skb)->end_seq &&
	    !tcp_hdr(skb)->syn)
		return false;
	val = READ_ONCE(*last);
	if (!val)
		return false;
	elapsed = (s32)(tcp_jiffies32 - val);
	return elapsed >= 0 &&
	       elapsed < READ_ONCE(net->ipv4.sysctl_tcp_invalid_ratelimit);
}

/*
 * tcp_oow_rate_limited(net, skb, mib, last): tcp_validate_incoming() calls
 * it with LINUX_MIB_TCPACKSKIPPEDPAWS for, and only for, each segment it
 * just counted in PAWSEstab (an established-state PAWS reject); and
 * tcp_timewait_state_process() for each ACK a TIME_WAIT socket would send
 * but for this rate limit, which counts the ones it keeps in
 * TCPACKSkippedTimeWait / TCPACKSkippedFinWait2. TwAckSent counts the
 * others, the ACKs sent, by the limit's own test at the entry
 * (oow_limited()).
 */
static void oow_pre(struct pt_regs *regs)
{
	struct net *net = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	int mib = (int)regs_get_kernel_argument(regs, 2);
	struct tcptw_state *st;
	struct tcptw_event ev;

	if (mib != LINUX_MIB_TCPACKSKIPPEDPAWS &&
	    mib != LINUX_MIB_TCPACKSKIPPEDTIMEWAIT &&
	    mib != LINUX_MIB_TCPACKSKIPPEDFINWAIT2)
		return;
	rcu_read_lock();
	st = tcptw_state(net);
	if (!st)
		goto out;
	if (mib != LINUX_MIB_TCPACKSKIPPEDPAWS) {
		if (!oow_limited(net, skb,
				 (u32 *)regs_get_kernel_argument(regs, 3)))
			tcptw_inc(st, TCPTW_TW_ACK_SENT);
		goto out;
	}
	tcptw_inc(st, TCPTW_PAWS_ESTAB_REJECTED);
	if (tcptw_event_start(st, &ev, TCPTW_EV_PAWS_ESTAB_REJECTED)) {
		tcptw_tuple_from_skb(&ev.t, skb);
		tcptw_event_push(st, &ev);
	}
out:
	rcu_read_unlock();
}

/*
 * SYN-SENT's PAWS test (PAWSActive): tcp_rcv_synsent_state_process()
 * answers a SYN-ACK with a RST for two reasons only, an ACK outside
 * (snd_una, snd_nxt] and, with an acceptable ACK, a TSecr outside what we
 * sent. So at the entry of tcp_v{4,6}_send_reset() for a SYN-SENT socket,
 * an acceptable ACK means the PAWS test rejected the segment. From 6.10
 * the RST's reason says so (tcptw_count_rst_sent()).
 */
static bool synsent_paws_rejected(const struct sock *sk,
				  const struct sk_buff *skb)
{
	const struct tcp_sock *tp;
	u32 ack;

	if (READ_ONCE(sk->sk_state) != TCP_SYN_SENT || !tcp_hdr(skb)->ack)
		return false;
	tp = tcp_sk(sk);
	ack = TCP_SKB_CB(skb)->ack_seq;
	return after(ack, READ_ONCE(tp->snd_una)) &&
	       !after(ack, READ_ONCE(tp->snd_nxt));
}

/* the event of a SYN-SENT PAWS reject of @sk's SYN-ACK (its own frame) */
static noinline void paws_active_event(struct tcptw_state *st,
				       const struct sock *sk)
{
	struct tcptw_event ev;

	if (!tcptw_event_start(st, &ev, TCPTW_EV_PAWS_ACTIVE_REJECTED))
		return;
	/* src = local, dst = remote */
	tcptw_tuple_from_sk(&ev.t, sk);
	tcptw_event_push(st, &ev);
}

/* rst_sent()'s event, once the rate limit let it through */
static noinline void rst_sent_event(struct tcptw_state *st,
				    const struct sk_buff *skb, u8 reason)
{
	struct tcptw_event ev;

	tcptw_event_init(&ev, TCPTW_EV_RST_SENT);
	ev.reason = reason;
	tcptw_tuple_from_skb(&ev.t, skb);
	tcptw_tuple_swap(&ev.t);
	tcptw_event_push(st, &ev);
}

/*
 * A RST in reply to @skb, for @sk (NULL: no socket; or a TIME_WAIT,
 * request or full one): its event (src = this host, dst = the segment's
 * source). The kernel sends none without a socket or a route; a RST it
 * then does not send after all (replying to a RST, a route lost) still
 * has its event, while OutRsts says what went out. Both callers run with
 * preemption disabled (tcptw_state_hook()).
 */
static void rst_sent(const struct sock *sk, const struct sk_buff *skb,
		     u8 reason, bool paws)
{
	struct tcptw_state *st;
	struct net *net;

	if (sk)
		net = sock_net(sk);
	else if (skb_dst(skb))
		net = dev_net(skb_dst(skb)->dev);
	else
		return;
	st = tcptw_state_hook(net);
	if (!st)
		return;
	if (paws)
		paws_active_event(st, sk);
	/* a RST flood: most are only counted (event_rate) */
	if (tcptw_event_ok(st, TCPTW_EV_RST_SENT))
		rst_sent_event(st, skb, reason);
}

/*
 * tcp_v{4,6}_send_reset(sk, skb[, reason]) before 6.10: every RST of a
 * flood, on a callback of its own (compat/hook.h)
 */
static __always_inline void send_reset_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	rst_sent(sk, skb, tcptw_compat_rst_reason(regs),
		 sk && synsent_paws_rejected(sk, skb));
}

TCPTW_DEFINE_OWN_CB(send_reset_pre)

/* the tcp_send_reset tracepoint's handler (compat/tp_tcp.h), 6.10+ */
void tcptw_count_rst_sent(const struct sock *sk, const struct sk_buff *skb,
			  u8 reason)
{
	rst_sent(sk, skb, reason, sk && tcptw_compat_rst_is_paws(reason) &&
		 READ_ONCE(sk->sk_state) == TCP_SYN_SENT);
}

/* tcp_send_active_reset(sk, ...): a RST of our own (abort, close) */
static void active_reset_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct tcptw_state *st;
	struct tcptw_event ev;

	rcu_read_lock();
	st = tcptw_state(sock_net(sk));
	if (st && tcptw_event_start(st, &ev, TCPTW_EV_RST_SENT)) {
		tcptw_tuple_from_sk(&ev.t, sk);
		tcptw_event_push(st, &ev);
	}
	rcu_read_unlock();
}

/*
 * How long @sk had received nothing, in ms: keepalive's own measure
 * (keepalive_time_elapsed(): the later of the last segment and the last
 * ACK). Only for a connection that got past the handshake.
 */
static bool rst_idle_ms(const struct sock *sk, u32 *ms)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	u32 now = tcp_jiffies32, idle;

	switch (READ_ONCE(sk->sk_state)) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECV:
	case TCP_LISTEN:
	case TCP_CLOSE:
		return false;
	}
	idle = min_t(u32, now - READ_ONCE(icsk->icsk_ack.lrcvtime),
		     now - READ_ONCE(tcp_sk(sk)->rcv_tstamp));
	/* clamped in jiffies: jiffies_to_msecs() wraps after 49.7 days */
	*ms = jiffies_to_msecs(min_t(u32, idle, msecs_to_jiffies(S32_MAX)));
	return true;
}

/*
 * tracepoint tcp:tcp_receive_reset: tcp_reset() on a full socket, called
 * before it changes the socket's state
 */
void tcptw_count_rst_received(struct sock *sk)
{
	struct tcptw_event ev = { .type = TCPTW_EV_RST_RECEIVED, .age_ms = -1 };
	struct tcptw_state *st;

	/* received: src = the peer */
	tcptw_tuple_from_sk(&ev.t, sk);
	tcptw_tuple_swap(&ev.t);
	if (rst_idle_ms(sk, &ev.idle_ms))
		ev.flags |= TCPTW_EV_HAS_IDLE;
	rcu_read_lock();
	st = tcptw_state(sock_net(sk));
	if (st) {
		tcptw_inc(st, TCPTW_RST_RECEIVED);
		if (ev.flags & TCPTW_EV_HAS_IDLE)
			tcptw_hist_add(st, TCPTW_HIST_RST_IDLE, ev.idle_ms);
		tcptw_emit(st, &ev);
	}
	rcu_read_unlock();
}

static struct tcptw_probe rst_probes[] = {
	{ .name = "tcp_oow_rate_limited", .kind = TCPTW_ENTRY,
	  .entry = oow_pre },
	{ .name = "tcp_send_reset", .kind = TCPTW_TRACEPOINT,
	  .tp_func = tcptw_tp_tcp_send_reset,
	  .unused = !TCPTW_COMPAT_RST_TRACEPOINT },
	{ .name = "tcp_v4_send_reset", .kind = TCPTW_ENTRY,
	  .entry = send_reset_pre, .own_cb = TCPTW_OWN_CB(send_reset_pre),
	  .unused = TCPTW_COMPAT_RST_TRACEPOINT },
	{ .name = "tcp_v6_send_reset", .kind = TCPTW_ENTRY,
	  .entry = send_reset_pre, .own_cb = TCPTW_OWN_CB(send_reset_pre),
	  .unused = TCPTW_COMPAT_RST_TRACEPOINT },
	{ .name = "tcp_send_active_reset", .kind = TCPTW_ENTRY,
	  .entry = active_reset_pre },
	{ .name = "tcp_receive_reset", .kind = TCPTW_TRACEPOINT,
	  .tp_func = tcptw_tp_tcp_receive_reset },
};

const struct tcptw_probe_set tcptw_rst_probe_set = {
	.probes = rst_probes,
	.n = ARRAY_SIZE(rst_probes),
};
