// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * RSTs sent and received, and the PAWS rejects of full sockets outside
 * TIME_WAIT: an established socket's (tcp_oow_rate_limited()) and a
 * SYN-SENT socket's, which the kernel answers with a RST and so is seen
 * from the RST's hook.
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>
#include <net/tcp.h>

#include "mib.h"
#include "pernet.h"
#include "probes.h"
#include "tuple.h"
#include "compat/tp_tcp.h"

/*
 * tcp_oow_rate_limited(net, skb, mib, last): tcp_validate_incoming() calls
 * it with LINUX_MIB_TCPACKSKIPPEDPAWS for, and only for, each segment it
 * just counted in PAWSEstab (an established-state PAWS reject).
 */
static void oow_pre(struct pt_regs *regs)
{
	struct net *net = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	int mib = (int)regs_get_kernel_argument(regs, 2);
	struct tcptw_event ev = {
		.type = TCPTW_EV_PAWS_ESTAB_REJECTED,
		.age_ms = -1,
	};

	if (mib != LINUX_MIB_TCPACKSKIPPEDPAWS)
		return;
	tcptw_tuple_from_skb(&ev.t, skb);
	tcptw_count_event(net, TCPTW_PAWS_ESTAB_REJECTED, &ev);
}

/*
 * SYN-SENT's PAWS test (PAWSActive): tcp_rcv_synsent_state_process()
 * answers a SYN-ACK with a RST for two reasons only, an ACK outside
 * (snd_una, snd_nxt] and, with an acceptable ACK, a TSecr outside what we
 * sent. So at the entry of tcp_v{4,6}_send_reset() for a SYN-SENT socket,
 * an acceptable ACK means the PAWS test rejected the segment; the kernel
 * counted it just before, whether or not a RST goes out. From 6.10 the
 * RST's reason says so (tcptw_count_rst_sent()).
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

static void count_paws_active(const struct sock *sk)
{
	struct tcptw_event ev = {
		.type = TCPTW_EV_PAWS_ACTIVE_REJECTED,
		.age_ms = -1,
	};

	/* src = local, dst = remote */
	tcptw_tuple_from_sk(&ev.t, sk);
	tcptw_count_event(sock_net(sk), TCPTW_PAWS_ACTIVE_REJECTED, &ev);
}

/*
 * RSTs sent in reply to a segment: tcp_v4_send_reset(sk, skb) and
 * tcp_v6_send_reset(sk, skb) may return without sending (replying to a RST,
 * not for us), so the Tcp OutRsts slot decides. @sk may be NULL (no socket),
 * a TIME_WAIT or request socket, or a full one. From a socket's backlog in
 * process context the same two errors as above are possible.
 */
struct rst_ctx {
	struct net *net;
	struct tcptw_event ev;		/* src = this host, dst = the peer */
	int cpu;
	unsigned long before;
};

static_assert(sizeof(struct rst_ctx) <= TCPTW_MAX_CALL_DATA);

/*
 * The netns of a RST in reply to @skb, and its event in @ev (src = this
 * host, dst = the segment's source); NULL if the kernel sends none: it
 * does not reply without a socket or a route.
 */
static struct net *rst_reply(const struct sock *sk, const struct sk_buff *skb,
			     u8 reason, struct tcptw_event *ev)
{
	struct net *net;

	if (sk)
		net = sock_net(sk);
	else if (skb_dst(skb))
		net = dev_net(skb_dst(skb)->dev);
	else
		return NULL;
	memset(ev, 0, sizeof(*ev));
	ev->type = TCPTW_EV_RST_SENT;
	ev->reason = reason;
	ev->age_ms = -1;
	tcptw_tuple_from_skb(&ev->t, skb);
	tcptw_tuple_swap(&ev->t);
	return net;
}

static int send_reset_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	struct rst_ctx *c = data;

	if (sk && synsent_paws_rejected(sk, skb))
		count_paws_active(sk);
	c->net = rst_reply(sk, skb, tcptw_compat_rst_reason(regs), &c->ev);
	if (!c->net)
		return 1;	/* no return handler for this call */
	c->cpu = smp_processor_id();
	c->before = tcptw_mib_tcp(c->net, c->cpu, TCP_MIB_OUTRSTS);
	return 0;
}

static void send_reset_ret(void *data, struct pt_regs *regs)
{
	struct rst_ctx *c = data;

	if (tcptw_mib_tcp(c->net, c->cpu, TCP_MIB_OUTRSTS) == c->before)
		return;
	tcptw_count_event(c->net, TCPTW_RST_SENT, &c->ev);
}

/* the tcp_send_reset tracepoint's handler (compat/tp_tcp.h), 6.10+ */
void tcptw_count_rst_sent(const struct sock *sk, const struct sk_buff *skb,
			  u8 reason)
{
	struct tcptw_event ev;
	struct net *net;

	if (sk && tcptw_compat_rst_is_paws(reason) &&
	    READ_ONCE(sk->sk_state) == TCP_SYN_SENT)
		count_paws_active(sk);
	net = rst_reply(sk, skb, reason, &ev);
	if (net)
		tcptw_count_event(net, TCPTW_RST_SENT, &ev);
}

/* tcp_send_active_reset(sk, ...) counts OutRsts on every call */
static void active_reset_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct tcptw_event ev = { .type = TCPTW_EV_RST_SENT, .age_ms = -1 };

	tcptw_tuple_from_sk(&ev.t, sk);
	tcptw_count_event(sock_net(sk), TCPTW_RST_SENT, &ev);
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
	{ .name = "tcp_v4_send_reset", .kind = TCPTW_CALL,
	  .call = send_reset_entry, .ret = send_reset_ret,
	  .data_size = sizeof(struct rst_ctx),
	  .unused = TCPTW_COMPAT_RST_TRACEPOINT },
	{ .name = "tcp_v6_send_reset", .kind = TCPTW_CALL,
	  .call = send_reset_entry, .ret = send_reset_ret,
	  .data_size = sizeof(struct rst_ctx),
	  .unused = TCPTW_COMPAT_RST_TRACEPOINT },
	{ .name = "tcp_send_active_reset", .kind = TCPTW_ENTRY,
	  .entry = active_reset_pre },
	{ .name = "tcp_receive_reset", .kind = TCPTW_TRACEPOINT,
	  .tp_func = tcptw_tp_tcp_receive_reset },
};

static void rst_probes_setup(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rst_probes); i++)
		rst_probes[i].maxactive = max(64U, 8 * num_possible_cpus());
}

const struct tcptw_probe_set tcptw_rst_probe_set = {
	.probes = rst_probes,
	.n = ARRAY_SIZE(rst_probes),
	.setup = rst_probes_setup,
};
