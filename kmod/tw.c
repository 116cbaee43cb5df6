// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Server side of TIME_WAIT: creation and bucket overflow, and what
 * tcp_timewait_state_process() decided for each segment that hit a
 * TIME_WAIT socket (PAWS rejection, sequence rejection, SYN recycled, ACK,
 * RST, killed by RST). No tracepoint carries these decisions before 7.2,
 * so they come from hooks on the call whose entry handlers copy all the
 * return handler needs: the TIME_WAIT socket may be freed by then.
 *
 * All handlers run with preemption disabled (kprobes, fprobes) and
 * tcp_timewait_state_process() always runs with BH disabled, so the per-CPU
 * scratch slots below cannot be clobbered between its entry, the calls it
 * makes and its return on the same CPU.
 */
#include <linux/ptrace.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <net/tcp.h>
#include <net/inet_timewait_sock.h>

#include "pernet.h"
#include "table.h"
#include "probes.h"
#include "tuple.h"
#include "twage.h"

/* What the entry handler of tcp_timewait_state_process() saw. */
struct tw_seg {
	struct net *net;
	const struct inet_timewait_sock *tw;	/* identity only at return */
	struct tcptw_event ev;
	u8 substate;
	bool syn;	/* a connection request: SYN without ACK or RST */
	bool rst;
	bool paws;	/* the kernel's own tcp_paws_reject() verdict */
};

static_assert(sizeof(struct tw_seg) <= TCPTW_MAX_CALL_DATA);

/* The segment whose RST tcp_timewait_state_process() is handling here. */
static DEFINE_PER_CPU(struct tw_seg *, tw_rst_seg);

/*
 * A SYN the TIME_WAIT socket accepted (TCP_TW_SYN): it is "recycled" when
 * tcp_v{4,6}_rcv(), having found a listener for it, deschedules this
 * TIME_WAIT socket on this CPU, right after tcp_timewait_state_process()
 * returned (only the listener lookup in between) and before the SYN goes
 * to the listener.
 */
struct tw_syn_stash {
	const struct inet_timewait_sock *tw;
	struct net *net;
	struct tcptw_event ev;
};

static DEFINE_PER_CPU(struct tw_syn_stash, tw_syn_stash);

/*
 * Attach order: consumers of the per-CPU slots (inet_twsk_deschedule_put,
 * for the RST and SYN slots) before their producer.
 */
enum {
	P_TW_DESCHEDULE,
	P_TW_ALLOC,
	P_TW_PROCESS,
	P_NR
};

static struct tcptw_probe tw_probes[P_NR];

static void tw_emit(struct tcptw_state *st, const struct tw_seg *s,
		    enum tcptw_event_type type)
{
	struct tcptw_event ev = s->ev;

	ev.type = type;
	tcptw_emit(st, &ev);
}

static int tw_process_entry(void *data, struct pt_regs *regs)
{
	struct inet_timewait_sock *tw =
		(void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	const struct tcphdr *th = (void *)regs_get_kernel_argument(regs, 2);
	const struct tcp_timewait_sock *tcptw = tcp_twsk((struct sock *)tw);
	struct tw_seg *s = data;
	struct tcp_options_received opt;
	bool ours;
	int stamp;

	/* a stash nobody consumed belongs to an earlier segment */
	this_cpu_write(tw_syn_stash.tw, NULL);
	s->net = twsk_net(tw);
	rcu_read_lock();
	ours = tcptw_state(s->net);
	rcu_read_unlock();
	if (!ours)
		return 1;	/* no return handler for this call */

	s->tw = tw;
	s->substate = READ_ONCE(tw->tw_substate);
	s->syn = th->syn && !th->rst && !th->ack;
	s->rst = th->rst;
	s->paws = false;
	memset(&s->ev, 0, sizeof(s->ev));
	tcptw_tuple_from_tw(&s->ev.t, tw);
	s->ev.age_ms = tcptw_tw_age_ms(tw);
	s->ev.ts_recent = READ_ONCE(tcptw->tw_ts_recent);
	stamp = READ_ONCE(tcptw->tw_ts_recent_stamp);
	if (stamp)
		s->ev.flags |= TCPTW_EV_HAS_TS_RECENT;

	/* the same parse and check as tcp_timewait_state_process() */
	if (th->doff > (sizeof(*th) >> 2)) {
		memset(&opt, 0, sizeof(opt));
		tcp_parse_options(s->net, skb, &opt, 0, NULL);
		if (opt.saw_tstamp) {
			s->ev.tsval = opt.rcv_tsval;
			s->ev.flags |= TCPTW_EV_HAS_TSVAL;
			if (stamp) {
				opt.ts_recent = s->ev.ts_recent;
				opt.ts_recent_stamp = stamp;
				s->paws = tcp_paws_reject(&opt, th->rst);
			}
		}
	}
	if (s->rst)
		this_cpu_write(tw_rst_seg, s);
	return 0;
}

static void tw_recycled(struct tcptw_state *st, struct tcptw_event *ev)
{
	tcptw_inc(st, TCPTW_TW_SYN_RECYCLED);
	tcptw_hist_add(st, TCPTW_HIST_SYN_RECYCLED, ev->age_ms);
	tcptw_table_inc(st->peers, ev->t.family, &ev->t.saddr, 0,
			TCPTW_PEER_SYN_RECYCLED, 0, 0);
	ev->type = TCPTW_EV_TW_SYN_RECYCLED;
	tcptw_emit(st, ev);
}

static void tw_syn_accepted(const struct tw_seg *s)
{
	struct tw_syn_stash *stash = this_cpu_ptr(&tw_syn_stash);

	stash->ev = s->ev;
	stash->net = s->net;
	stash->tw = s->tw;
}

static void tw_process_ret(void *data, struct pt_regs *regs)
{
	int status = (int)regs_return_value(regs);
	struct tw_seg *s = data;
	struct tcptw_state *st;

	this_cpu_write(tw_rst_seg, NULL);
	rcu_read_lock();
	st = tcptw_state(s->net);
	if (!st)
		goto out;

	/* the kernel counts PAWS only in the real TIME_WAIT substate */
	if (s->substate == TCP_TIME_WAIT && s->paws) {
		tcptw_inc(st, TCPTW_TW_PAWS_REJECTED);
		if (s->syn) {
			tcptw_inc(st, TCPTW_TW_SYN_PAWS_REJECTED);
			tcptw_hist_add(st, TCPTW_HIST_SYN_PAWS_REJECTED,
				       s->ev.age_ms);
			/* per address: a NAT's source ports vary */
			tcptw_table_inc(st->peers, s->ev.t.family,
					&s->ev.t.saddr, 0,
					TCPTW_PEER_SYN_PAWS_REJECTED, 0, 0);
			tw_emit(st, s, TCPTW_EV_TW_SYN_PAWS_REJECTED);
		} else {
			tw_emit(st, s, TCPTW_EV_TW_PAWS_REJECTED);
		}
	} else if (s->substate == TCP_TIME_WAIT && s->syn &&
		   status != TCP_TW_SYN) {
		/* neither a newer sequence number nor a newer timestamp */
		tcptw_inc(st, TCPTW_TW_SYN_SEQ_REJECTED);
		tw_emit(st, s, TCPTW_EV_TW_SYN_SEQ_REJECTED);
	}

	if (status == TCP_TW_SYN) {
		tw_syn_accepted(s);
	} else if (tcptw_compat_tw_is_ack(status)) {
		tcptw_inc(st, TCPTW_TW_ACK_SENT);
	} else if (status == TCP_TW_RST) {
		tcptw_inc(st, TCPTW_TW_RST_SENT);
		tw_emit(st, s, TCPTW_EV_TW_RST_SENT);
	}
out:
	rcu_read_unlock();
}

/* a listener takes over the SYN this TIME_WAIT socket accepted */
static void tw_syn_recycled(const void *tw)
{
	struct tw_syn_stash *stash = this_cpu_ptr(&tw_syn_stash);
	struct tcptw_state *st;

	if (stash->tw != tw)
		return;
	stash->tw = NULL;
	rcu_read_lock();
	st = tcptw_state(stash->net);
	if (st)
		tw_recycled(st, &stash->ev);
	rcu_read_unlock();
}

/*
 * inet_twsk_deschedule_put(tw): while the segment being handled is a RST
 * (inside tcp_timewait_state_process()), the RST killed the socket; right
 * after a TCP_TW_SYN verdict for this socket, a listener took the SYN.
 */
static void tw_deschedule_pre(struct pt_regs *regs)
{
	const void *tw = (void *)regs_get_kernel_argument(regs, 0);
	struct tw_seg *s = this_cpu_read(tw_rst_seg);
	struct tcptw_state *st;

	if (!s || s->tw != tw) {
		tw_syn_recycled(tw);
		return;
	}
	this_cpu_write(tw_rst_seg, NULL);
	rcu_read_lock();
	st = tcptw_state(s->net);
	if (st) {
		tcptw_inc(st, TCPTW_TW_KILLED_BY_RST);
		tw_emit(st, s, TCPTW_EV_TW_KILLED_BY_RST);
	}
	rcu_read_unlock();
}

/* connect() takes over @tw's tuple (tcp_twsk_unique()): not a SYN's */
void tcptw_tw_syn_forget(const struct sock *tw)
{
	if (this_cpu_read(tw_syn_stash.tw) == (const void *)tw)
		this_cpu_write(tw_syn_stash.tw, NULL);
}

/* inet_twsk_alloc(sk, death_row, state): NULL means no TIME_WAIT */
struct tw_alloc {
	struct net *net;
	struct tcptw_tuple t;
};

static_assert(sizeof(struct tw_alloc) <= TCPTW_MAX_CALL_DATA);

static int tw_alloc_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct tw_alloc *a = data;

	/* DCCP shares inet_twsk_alloc() on older kernels */
	if (sk->sk_protocol != IPPROTO_TCP)
		return 1;
	a->net = sock_net(sk);
	tcptw_tuple_from_sk(&a->t, sk);
	return 0;
}

static void tw_alloc_ret(void *data, struct pt_regs *regs)
{
	const void *tw = (void *)regs_return_value(regs);
	struct tw_alloc *a = data;
	struct tcptw_event ev = {};
	struct tcptw_state *st;

	rcu_read_lock();
	st = tcptw_state(a->net);
	if (!st)
		goto out;
	if (tw) {
		tcptw_tw_birth_record(tw);
		tcptw_inc(st, TCPTW_TW_CREATED);
		goto out;
	}
	/* tcp_time_wait() counts TCPTimeWaitOverflow for any NULL */
	tcptw_inc(st, TCPTW_TW_OVERFLOW);
	ev.type = TCPTW_EV_TW_OVERFLOW;
	ev.t = a->t;
	ev.age_ms = -1;
	tcptw_emit(st, &ev);
out:
	rcu_read_unlock();
}

static struct tcptw_probe tw_probes[P_NR] = {
	[P_TW_DESCHEDULE] = { .name = "inet_twsk_deschedule_put",
			      .kind = TCPTW_ENTRY,
			      .entry = tw_deschedule_pre },
	[P_TW_ALLOC] = { .name = "inet_twsk_alloc", .kind = TCPTW_CALL,
			 .call = tw_alloc_entry, .ret = tw_alloc_ret,
			 .data_size = sizeof(struct tw_alloc) },
	[P_TW_PROCESS] = { .name = "tcp_timewait_state_process",
			   .kind = TCPTW_CALL, .call = tw_process_entry,
			   .ret = tw_process_ret,
			   .data_size = sizeof(struct tw_seg) },
};

static void tw_probes_setup(void)
{
	/*
	 * Both run in BH context at most once per CPU at a time, but
	 * inet_twsk_alloc() is also reached from process context: room for
	 * a few nested calls per CPU.
	 */
	tw_probes[P_TW_PROCESS].maxactive = 4 * num_possible_cpus();
	tw_probes[P_TW_ALLOC].maxactive = 4 * num_possible_cpus();
}

const struct tcptw_probe_set tcptw_tw_probe_set = {
	.probes = tw_probes,
	.n = P_NR,
	.setup = tw_probes_setup,
};
