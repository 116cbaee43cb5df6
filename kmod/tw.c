// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * TIME_WAIT: creation, and what tcp_timewait_state_process()
 * decides for each segment that hits a TIME_WAIT socket (PAWS rejection,
 * sequence rejection, SYN recycled, RST sent, killed by RST). No kernel
 * counter or tracepoint carries most of these decisions, and all of them
 * follow from the segment and the socket as they are at the function's
 * entry (net/ipv4/tcp_minisocks.c, the same in 5.10 through 7.2): the
 * entry hook replays the kernel's tests on them, including the kernel's
 * own tcp_parse_options() and tcp_paws_reject(). Overflow of the
 * TIME_WAIT buckets is the kernel's TCPTimeWaitOverflow, and the ACKs a
 * TIME_WAIT socket sends are counted where the kernel rate-limits them
 * (rst.c). A socket still in the FIN_WAIT2 substate (an orphan waiting
 * for its peer's FIN) refuses SYNs too, with an ACK (PAWS, where the
 * kernel counts no PAWS MIB, or out of window) or a RST (in window):
 * TwSynFinWait2Rejected.
 *
 * tcp_timewait_state_process() always runs with BH disabled; a TIME_WAIT
 * socket's fields change only there (the FIN_WAIT2 substate taking its
 * FIN), so two CPUs racing on one socket is the only way the replay can
 * differ from the kernel's verdict.
 */
#include <linux/ptrace.h>
#include <linux/percpu.h>
#include <net/tcp.h>
#include <net/inet_timewait_sock.h>

#include "pernet.h"
#include "table.h"
#include "probes.h"
#include "tuple.h"
#include "twage.h"
#include "test.h"

/* what tcp_timewait_state_process() will decide for this segment */
enum tw_verdict {
	TW_NONE,		/* nothing tcptw counts (the ACK path is rst.c's) */
	TW_PAWS,		/* TIME_WAIT: PAWS rejected it */
	TW_SYN_SEQ,		/* TIME_WAIT: a SYN neither newer by seq nor ts */
	TW_SYN,			/* TCP_TW_SYN: a listener may take it */
	TW_KILL,		/* a RST in window destroys the socket */
	TW_RST,			/* TCP_TW_RST (FIN_WAIT2: new data) */
	TW_FIN_ACK,		/* FIN_WAIT2 takes the FIN: TCP_TW_ACK */
	TW_FW2_SYN_PAWS,	/* FIN_WAIT2: a SYN PAWS rejected, an ACK */
	TW_FW2_SYN_SEQ,		/* FIN_WAIT2: a SYN out of window, an ACK */
	TW_FW2_SYN_RST,		/* FIN_WAIT2: a SYN in window, TCP_TW_RST */
};

/* the segment as tcp_timewait_state_process() sees it at entry */
struct tw_seg {
	u32 seq, end_seq, tsval;
	bool ts;	/* a timestamp compared (tw_ts_recent_stamp set) */
	bool paws;	/* the kernel's own tcp_paws_reject() verdict */
};

/* tcp_in_window() of net/ipv4/tcp_minisocks.c (static there) */
static bool in_window(u32 seq, u32 end_seq, u32 s_win, u32 e_win)
{
	if (seq == s_win)
		return true;
	if (after(end_seq, s_win) && before(seq, e_win))
		return true;
	return seq == e_win && seq == end_seq;
}

static enum tw_verdict fin_wait2_verdict(const struct tcp_timewait_sock *tcptw,
					 const struct tcphdr *th,
					 const struct tw_seg *s)
{
	u32 rcv_nxt = READ_ONCE(tcptw->tw_rcv_nxt);
	bool syn = th->syn && !th->rst && !th->ack;

	/* an ACK, unless rate-limited (rst.c counts it) */
	if (s->paws)
		return syn ? TW_FW2_SYN_PAWS : TW_NONE;
	if (!in_window(s->seq, s->end_seq, rcv_nxt,
		       rcv_nxt + READ_ONCE(tcptw->tw_rcv_wnd)))
		return syn ? TW_FW2_SYN_SEQ : TW_NONE;
	if (th->rst)
		return TW_KILL;
	if (th->syn && !before(s->seq, rcv_nxt))
		return syn ? TW_FW2_SYN_RST : TW_RST;
	if (!th->ack || !after(s->end_seq, rcv_nxt) ||
	    s->end_seq == s->seq)
		return TW_NONE;		/* a duplicate ACK */
	if (!th->fin || s->end_seq != rcv_nxt + 1)
		return TW_RST;
	return TW_FIN_ACK;
}

static enum tw_verdict time_wait_verdict(const struct inet_timewait_sock *tw,
					 const struct tcphdr *th,
					 const struct tw_seg *s)
{
	const struct tcp_timewait_sock *tcptw = tcp_twsk((struct sock *)tw);
	u32 rcv_nxt = READ_ONCE(tcptw->tw_rcv_nxt);

	if (!s->paws && s->seq == rcv_nxt &&
	    (s->seq == s->end_seq || th->rst)) {
		if (th->rst &&
		    !READ_ONCE(twsk_net(tw)->ipv4.sysctl_tcp_rfc1337))
			return TW_KILL;
		return TW_NONE;
	}
	if (th->syn && !th->rst && !th->ack && !s->paws &&
	    (after(s->seq, rcv_nxt) ||
	     (s->ts && (s32)(READ_ONCE(tcptw->tw_ts_recent) - s->tsval) < 0)))
		return TW_SYN;
	if (s->paws)
		return TW_PAWS;
	if (th->syn && !th->rst && !th->ack)
		return TW_SYN_SEQ;
	return TW_NONE;
}

/*
 * A SYN the TIME_WAIT socket accepted (TCP_TW_SYN) is "recycled" when
 * tcp_v{4,6}_rcv(), having found a listener for it, deschedules that
 * socket on this CPU while it still handles the same packet (only the
 * listener lookup in between). Without a listener the kernel ACKs instead
 * and nothing consumes the stash: the next TIME_WAIT segment on this CPU
 * clears it, and a deschedule of the same socket later (a netns purge,
 * ss -K) is told apart by the packets this CPU received since the
 * verdict (softnet_data.processed, counted by __netif_receive_skb_core()
 * for every packet on all four kernels; a list of packets is counted
 * before any of them reaches TCP, so one packet's verdict and deschedule
 * see the same number), and by the time since it. Not by time alone: a
 * vCPU the host stops for a millisecond between the two (TCG on a busy
 * host) is no reason to miss a recycle. No pointer here is ever
 * dereferenced: the socket is the deschedule's own.
 */
#define TW_SYN_WINDOW	HZ

struct tw_syn_stash {
	const void *tw;
	unsigned long when;	/* jiffies at the verdict */
	unsigned int rx;	/* this CPU's softnet_data.processed then */
};

static DEFINE_PER_CPU(struct tw_syn_stash, tw_syn_stash);

/* tw_event()'s event, once the rate limit let it through */
static noinline void tw_event_emit(struct tcptw_state *st,
				   const struct inet_timewait_sock *tw,
				   const struct tw_seg *s, s32 age_ms, u8 type)
{
	struct tcptw_event ev;

	tcptw_event_init(&ev, type);
	tcptw_tuple_from_tw(&ev.t, tw);
	ev.age_ms = age_ms;
	tcptw_event_ts_recent(&ev, tw);
	if (s && s->ts) {
		ev.tsval = s->tsval;
		ev.flags |= TCPTW_EV_HAS_TSVAL;
	}
	tcptw_event_push(st, &ev);
}

/*
 * An event about @tw and the segment @s, if this CPU may record one: the
 * rate limit's test inline, the event (zeroed on entry on kernels built
 * with CONFIG_INIT_STACK_ALL_ZERO) built only if it passes
 */
static __always_inline void tw_event(struct tcptw_state *st,
				     const struct inet_timewait_sock *tw,
				     const struct tw_seg *s, s32 age_ms,
				     u8 type)
{
	if (tcptw_event_ok(st, type))
		tw_event_emit(st, tw, s, age_ms, type);
}

/*
 * A SYN at @tw decided: its counter @ctr, the age histogram @hist, the
 * peers row's column @col (per address: a NAT's source ports vary) and
 * the event @type. tw_syn_paws() and tw_recycled() differ only in those.
 */
static void tw_syn_decided(struct tcptw_state *st,
			   const struct inet_timewait_sock *tw,
			   const struct tw_seg *s, s32 age_ms,
			   enum tcptw_counter ctr, enum tcptw_hist hist,
			   unsigned int col, u8 type)
{
	struct tcptw_tuple t = {};

	tcptw_inc(st, ctr);
	tcptw_hist_add(st, hist, age_ms);
	tcptw_tuple_from_tw(&t, tw);
	tcptw_table_inc(st->peers, t.family, &t.saddr, 0, col, 0, 0);
	tw_event(st, tw, s, age_ms, type);
}

/* a SYN PAWS rejected in TIME_WAIT */
static void tw_syn_paws(struct tcptw_state *st,
			const struct inet_timewait_sock *tw,
			const struct tw_seg *s, s32 age_ms)
{
	tw_syn_decided(st, tw, s, age_ms, TCPTW_TW_SYN_PAWS_REJECTED,
		       TCPTW_HIST_SYN_PAWS_REJECTED,
		       TCPTW_PEER_SYN_PAWS_REJECTED,
		       TCPTW_EV_TW_SYN_PAWS_REJECTED);
}

/* the count of a TIME_WAIT PAWS reject the kernel has no MIB for */
static void tw_paws(struct tcptw_state *st, const struct inet_timewait_sock *tw,
		    const struct tcphdr *th, const struct tw_seg *s,
		    s32 age_ms)
{
	if (!TCPTW_COMPAT_TW_PAWS_MIB)
		tcptw_inc(st, TCPTW_TW_PAWS_REJECTED);
	if (!th->syn || th->rst || th->ack) {
		tw_event(st, tw, s, age_ms, TCPTW_EV_TW_PAWS_REJECTED);
		return;
	}
	tw_syn_paws(st, tw, s, age_ms);
}

/*
 * The TSval tcp_parse_options(net, skb, &opt, 0, NULL) would find in the
 * options of @th, as tcp_timewait_state_process() calls it: the last
 * well-formed timestamp option before the end or a malformed option, and
 * only with net.ipv4.tcp_timestamps on (estab 0). The kernel's parse also
 * decodes every other option, at several times the cost, for nothing
 * this needs.
 */
static bool tw_seg_tsval(const struct net *net, const struct tcphdr *th,
			 u32 *tsval)
{
	const u8 *ptr = (const u8 *)(th + 1);
	int length = th->doff * 4 - (int)sizeof(*th);
	bool saw = false;
	int opsize;

	/*
	 * The two layouts Linux sends, whose parse below ends the same way:
	 * a segment's NOP, NOP, TS (tcp_parse_aligned_timestamp()'s), and a
	 * SYN's MSS, SACK_PERM, TS, NOP, WS (the only TS in either). Else
	 * the option walk.
	 */
	if (length == TCPOLEN_TSTAMP_ALIGNED &&
	    get_unaligned_be32(ptr) == (TCPOPT_NOP << 24 | TCPOPT_NOP << 16 |
					TCPOPT_TIMESTAMP << 8 |
					TCPOLEN_TIMESTAMP))
		goto ts_at_4;
	if (length == 20 && ptr[0] == TCPOPT_MSS && ptr[1] == TCPOLEN_MSS &&
	    get_unaligned_be32(ptr + 4) == (TCPOPT_SACK_PERM << 24 |
					    TCPOLEN_SACK_PERM << 16 |
					    TCPOPT_TIMESTAMP << 8 |
					    TCPOLEN_TIMESTAMP) &&
	    ptr[16] == TCPOPT_NOP && ptr[17] == TCPOPT_WINDOW &&
	    ptr[18] == TCPOLEN_WINDOW) {
		ptr += 4;
		goto ts_at_4;
	}
	while (length > 0) {
		switch (*ptr) {
		case TCPOPT_EOL:
			return saw;
		case TCPOPT_NOP:
			ptr++;
			length--;
			continue;
		}
		if (length < 2)
			return saw;
		opsize = ptr[1];
		if (opsize < 2 || opsize > length)
			return saw;
		if (*ptr == TCPOPT_TIMESTAMP && opsize == TCPOLEN_TIMESTAMP &&
		    READ_ONCE(net->ipv4.sysctl_tcp_timestamps)) {
			saw = true;
			*tsval = get_unaligned_be32(ptr + 2);
		}
		ptr += opsize;
		length -= opsize;
	}
	return saw;

ts_at_4:
	if (!READ_ONCE(net->ipv4.sysctl_tcp_timestamps))
		return false;
	*tsval = get_unaligned_be32(ptr + 4);
	return true;
}

/* tcp_paws_reject() of a segment with @tsval at @tcptw */
static noinline bool tw_seg_paws(const struct tcp_timewait_sock *tcptw,
				 int stamp, u32 tsval, bool rst)
{
	struct tcp_options_received opt = {};

	opt.saw_tstamp = 1;
	opt.rcv_tsval = tsval;
	opt.ts_recent = READ_ONCE(tcptw->tw_ts_recent);
	opt.ts_recent_stamp = stamp;
	return tcp_paws_reject(&opt, rst);
}

/*
 * tcp_timewait_state_process(tw, skb, th, ...): every segment at a
 * TIME_WAIT socket, on a callback of its own (compat/hook.h). A SYN it
 * accepts (TCP_TW_SYN, a recycle if a listener takes it) only leaves
 * the stash for the deschedule that follows: no state, age or clock.
 */
static __always_inline void tw_process_pre(struct pt_regs *regs)
{
	struct inet_timewait_sock *tw = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	const struct tcphdr *th = (void *)regs_get_kernel_argument(regs, 2);
	const struct tcp_timewait_sock *tcptw = tcp_twsk((struct sock *)tw);
	struct tw_syn_stash *stash = this_cpu_ptr(&tw_syn_stash);
	struct net *net = twsk_net(tw);
	enum tw_verdict v;
	struct tcptw_state *st;
	struct tw_seg s = {};
	int stamp;
	s32 age;

	/* a stash nobody consumed belongs to an earlier segment */
	stash->tw = NULL;
	s.seq = TCP_SKB_CB(skb)->seq;
	s.end_seq = TCP_SKB_CB(skb)->end_seq;
	/* the same parse and check as tcp_timewait_state_process() */
	stamp = READ_ONCE(tcptw->tw_ts_recent_stamp);
	if (th->doff > (sizeof(*th) >> 2) && stamp &&
	    tw_seg_tsval(net, th, &s.tsval)) {
		s.ts = true;
		s.paws = tw_seg_paws(tcptw, stamp, s.tsval, th->rst);
	}
	if (READ_ONCE(tw->tw_substate) == TCP_FIN_WAIT2)
		v = fin_wait2_verdict(tcptw, th, &s);
	else
		v = time_wait_verdict(tw, th, &s);
	if (v == TW_NONE)
		return;
	if (v == TW_SYN) {
		stash->tw = tw;
		stash->when = jiffies;
		stash->rx = __this_cpu_read(softnet_data.processed);
		/* test build: a slow listener lookup (tcptw_syn_recycled.sh) */
		tcptw_test_udelay(min(tcptw_test_tw_syn_delay_us, 10000U));
		/* test build: its timer fires on another CPU meanwhile */
		tcptw_test_tw_unhash(tw);
		return;
	}

	rcu_read_lock();
	st = tcptw_state(net);
	if (!st)
		goto out;
	age = tcptw_tw_age_ms(tw);
	switch (v) {
	case TW_PAWS:
		tw_paws(st, tw, th, &s, age);
		break;
	case TW_SYN_SEQ:
		tcptw_inc(st, TCPTW_TW_SYN_SEQ_REJECTED);
		tw_event(st, tw, &s, age, TCPTW_EV_TW_SYN_SEQ_REJECTED);
		break;
	case TW_KILL:
		tcptw_inc(st, TCPTW_TW_KILLED_BY_RST);
		tw_event(st, tw, &s, age, TCPTW_EV_TW_KILLED_BY_RST);
		break;
	case TW_RST:
		tcptw_inc(st, TCPTW_TW_RST_SENT);
		tw_event(st, tw, &s, age, TCPTW_EV_TW_RST_SENT);
		break;
	case TW_FIN_ACK:
		tcptw_inc(st, TCPTW_TW_ACK_SENT);
		break;
	case TW_FW2_SYN_RST:
		tcptw_inc(st, TCPTW_TW_RST_SENT);
		fallthrough;
	case TW_FW2_SYN_PAWS:
	case TW_FW2_SYN_SEQ:
		tcptw_inc(st, TCPTW_TW_SYN_FIN_WAIT2_REJECTED);
		break;
	case TW_SYN:
	case TW_NONE:
		break;
	}
out:
	rcu_read_unlock();
}

/* a recycle: its count, age histogram, peers row and event */
static noinline void tw_recycled(const struct inet_timewait_sock *tw)
{
	struct tcptw_state *st;

	rcu_read_lock();
	/* @tw's own netns: the caller holds @tw, and @tw its netns */
	st = tcptw_state(twsk_net(tw));
	if (st)
		tw_syn_decided(st, tw, NULL, tcptw_tw_age_ms(tw),
			       TCPTW_TW_SYN_RECYCLED, TCPTW_HIST_SYN_RECYCLED,
			       TCPTW_PEER_SYN_RECYCLED,
			       TCPTW_EV_TW_SYN_RECYCLED);
	rcu_read_unlock();
}

/*
 * inet_twsk_deschedule_put(tw): right after a TCP_TW_SYN verdict for this
 * socket on this CPU, with bottom halves still off while the same packet
 * is handled (in the NET_RX softirq, or in the process that wrote the SYN
 * to a tun device: tun_get_user() receives with BH disabled, not in a
 * softirq, as vhost-net and packetdrill do), a listener took
 * the SYN: a recycle, whether or not the socket is still hashed (its
 * timer, ss -K or a netns purge may have unhashed it on another CPU
 * meanwhile). Else a socket already out of the established hash is one
 * connect() took over (__inet_check_established() unhashes it under the
 * bucket lock, with TWRecycled, in process context; every other caller
 * passes a hashed socket: a SYN's or a RST's verdict, a netns purge,
 * ss -K).
 */
static __always_inline void tw_deschedule_pre(struct pt_regs *regs)
{
	const struct inet_timewait_sock *tw =
		(void *)regs_get_kernel_argument(regs, 0);
	struct tw_syn_stash *stash = this_cpu_ptr(&tw_syn_stash);
	bool syn = stash->tw == tw;

	if (syn)
		stash->tw = NULL;
	if (!syn || !in_softirq() ||
	    stash->rx != __this_cpu_read(softnet_data.processed) ||
	    time_after(jiffies, stash->when + TW_SYN_WINDOW)) {
		if (hlist_nulls_unhashed(&tw->tw_node))
			tcptw_reuse_granted(tw);
		return;
	}
	tw_recycled(tw);
}

/* every recycle and reuse grant, every segment at a TIME_WAIT socket */
TCPTW_DEFINE_OWN_CB(tw_deschedule_pre)
TCPTW_DEFINE_OWN_CB(tw_process_pre)

/*
 * Is @tw the TIME_WAIT socket of @sk's connection? Its local port from
 * inet_sport: tcp_set_state() zeroed @sk's inet_num (inet_put_port())
 * before the tracepoint, unless the user bound the port.
 */
static bool tw_of(const struct sock *tw, const struct sock *sk)
{
	if (tw->sk_hash != sk->sk_hash ||
	    READ_ONCE(tw->sk_state) != TCP_TIME_WAIT ||
	    tw->sk_dport != sk->sk_dport ||
	    tw->sk_num != ntohs(inet_sk(sk)->inet_sport) ||
	    tw->sk_addrpair != sk->sk_addrpair ||
	    tw->sk_family != sk->sk_family ||
	    !net_eq(sock_net(tw), sock_net(sk)))
		return false;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
		return ipv6_addr_equal(&tw->sk_v6_daddr, &sk->sk_v6_daddr) &&
		       ipv6_addr_equal(&tw->sk_v6_rcv_saddr,
				       &sk->sk_v6_rcv_saddr);
#endif
	return true;
}

/*
 * inet_twsk_hashdance(_schedule)(tw, sk, ...) on 6.1 to 6.13: tcp_time_wait()
 * hashes the TIME_WAIT socket @tw it made for @sk (inet_twsk_alloc()
 * found room: no overflow). The kernel counts it (TW + TWKilled) but
 * keeps no birth time: tcptw keeps it, for the socket's age at every
 * later decision. One call per TIME_WAIT socket, on the side that closed
 * first: a callback of its own (compat/hook.h). DCCP shares this code on
 * the kernels that still have it.
 */
static __always_inline void tw_birth_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 1);

	if (sk->sk_protocol == IPPROTO_TCP)
		tcptw_tw_birth_record((void *)regs_get_kernel_argument(regs, 0));
}

TCPTW_DEFINE_OWN_CB(tw_birth_pre)

/*
 * 5.10: tcp_time_wait() put a TIME_WAIT socket in @sk's place in the
 * established hash (inet_twsk_hashdance(), at the head of the chain)
 * before tcp_done() moved @sk, a TCP socket, from FIN-WAIT or CLOSING to
 * CLOSE (reuse.c's tracepoint): its birth time is kept for its age
 * (twage.c) and, on 5.10, whose kernel counts it only at expiry, it is
 * counted. The socket is found by @sk's own hash and tuple, which it
 * copied, and nothing else holds that tuple meanwhile: @sk held it until
 * then. No TIME_WAIT socket there: none was born (TCPTimeWaitOverflow, a
 * RST, a timeout, an abort), or it died already on another CPU (a RST in
 * the microseconds between; its age and, on 5.10, its birth uncounted).
 * Only where the kernel keeps neither (TCPTW_COMPAT_TW_BIRTH_SEEN): from
 * 6.14 it stamps the birth and counts it in TW + TWKilled. With
 * preemption disabled, under RCU (a tracepoint's handler).
 */
void tcptw_tw_born(const struct sock *sk)
{
	const struct hlist_nulls_head *chain;
	const struct hlist_nulls_node *node;
	struct tcptw_state *st;
	const struct sock *tw;

	if (!TCPTW_COMPAT_TW_BIRTH_SEEN || !TCPTW_COMPAT_STATE_TP ||
	    sk->sk_protocol != IPPROTO_TCP)
		return;
	chain = tcptw_compat_ehash_chain(sock_net(sk), sk->sk_hash);
	sk_nulls_for_each_rcu(tw, node, chain) {
		if (!tw_of(tw, sk))
			continue;
		if (!TCPTW_COMPAT_TW_ENTRY_STAMP)
			tcptw_tw_birth_record(tw);
		if (TCPTW_COMPAT_TW_MIB_AT_BIRTH)
			return;
		st = tcptw_state_hook(sock_net(sk));
		if (st)
			tcptw_inc(st, TCPTW_TW_CREATED);
		return;
	}
}

static struct tcptw_probe tw_probes[] = {
	{ .name = "inet_twsk_deschedule_put", .kind = TCPTW_ENTRY,
	  .entry = tw_deschedule_pre,
	  .own_cb = TCPTW_OWN_CB(tw_deschedule_pre) },
	{ .name = "tcp_timewait_state_process", .kind = TCPTW_ENTRY,
	  .entry = tw_process_pre, .own_cb = TCPTW_OWN_CB(tw_process_pre) },
	{ .name = TCPTW_COMPAT_TW_BIRTH_FN, .kind = TCPTW_ENTRY,
	  .entry = tw_birth_pre, .own_cb = TCPTW_OWN_CB(tw_birth_pre),
	  .unused = !TCPTW_COMPAT_TW_BIRTH_HOOK },
};

const struct tcptw_probe_set tcptw_tw_probe_set = {
	.probes = tw_probes,
	.n = ARRAY_SIZE(tw_probes),
};
