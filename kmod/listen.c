// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Listeners: accept-queue overflow, SYN-queue drops, SYN cookies, by
 * listener. The kernel counts each of these per netns (ListenOverflows,
 * TCPReqQFullDrop, SyncookiesSent): tcptw's counters are those MIBs
 * (mib.c). What the kernel does not say is which listener and which peer.
 *
 * The hooks below do not guess the kernel's decision: a queue they read
 * at the entry can move before the kernel reads it (another CPU queueing
 * a child, accept() taking one). Each entry arms a record on its CPU (the
 * listener's row, the segment's tuple, this CPU's values of the three
 * MIBs); the kernel then decides and counts in the same MIBs on the same
 * CPU. The record is settled by the CPU's next listener hook in the netns
 * or by a reader (tcptw_listen_settle()), whichever comes first: the MIB
 * that moved since the entry is the decision, counted in the listener's
 * row and an event. Nothing else on that CPU can move them in between:
 * TCP's listeners take their segments in softirq (never from a socket's
 * backlog), one at a time per CPU, and a Fast Open child's hook, the one
 * nested inside tcp_conn_request(), comes after every test of the SYN's.
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
 * The group's sums of the last SO_REUSEPORT walk on this CPU, keyed by
 * the group (any of its sockets hits): under a flood at one group, the
 * walk runs once per jiffy and CPU, not once per SYN. @group is only
 * compared, never followed.
 */
struct gauge_cache {
	const void *group;
	unsigned long when;
	u32 backlog, max;
};

static DEFINE_PER_CPU(struct gauge_cache, gauge_cache);

/*
 * The queue of @sk as its row shows it, when the call may fail
 * (listen_may_fail()): for a socket in an SO_REUSEPORT group, the sums
 * over the group's listening sockets (socks[0..num_socks); closed ones
 * follow them since v5.14), which share the row; false if @sk is in no
 * group (listen_gauges() reads its own queue). In a
 * hook, with preemption disabled: a read section of RCU, in which the
 * group and TCP listeners (SOCK_RCU_FREE) are not freed.
 */
static noinline bool listen_group_gauges(const struct sock *sk,
					 u32 *backlog, u32 *max)
{
	struct gauge_cache *c = this_cpu_ptr(&gauge_cache);
	const struct sock_reuseport *reuse;
	unsigned long now = jiffies;
	const struct sock *s;
	unsigned int i, n;

	reuse = rcu_dereference_sched(sk->sk_reuseport_cb);
	if (!reuse)
		return false;
	if (c->group == reuse && c->when == now) {
		*backlog = c->backlog;
		*max = c->max;
		return true;
	}
	tcptw_test_group_walked();
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
	c->group = reuse;
	c->when = now;
	c->backlog = *backlog;
	c->max = *max;
	return true;
}

/* listen_group_gauges() if @group and @sk has one, else @sk's own, inline */
static __always_inline void listen_gauges(const struct sock *sk, bool group,
					  u32 *backlog, u32 *max)
{
	if (unlikely(group) && listen_group_gauges(sk, backlog, max))
		return;
	*backlog = READ_ONCE(sk->sk_ack_backlog);
	*max = READ_ONCE(sk->sk_max_ack_backlog);
}

/*
 * The kernel's own tests that can fail this call on listener @sk,
 * replayed at the entry on the same socket: its accept queue full (the
 * child's first test, and the SYN's), its SYN queue full or cookies
 * forced (the SYN's). Only then is the row's gauge worth a walk of the
 * SO_REUSEPORT group: a clean SYN or ACK reads two words of its own
 * socket. A queue that fills after the entry (another CPU's child in
 * between) fails a call this said would not: its row shows that socket's
 * own queue for that decision (docs/proc-format.md, listeners).
 */
static __always_inline bool listen_may_fail(const struct sock *sk,
					    bool child)
{
	if (sk_acceptq_is_full(sk))
		return true;
	if (child)
		return false;
	return inet_csk_reqsk_queue_is_full(sk) ||
	       READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_syncookies) == 2;
}

static const int listen_mibs[TCPTW_LISTEN_MIBS] = {
	LINUX_MIB_LISTENOVERFLOWS,
	LINUX_MIB_TCPREQQFULLDROP,
	LINUX_MIB_SYNCOOKIESSENT,
};

/* the three MIBs of @lm, one CPU's */
static void listen_mibs_read(const struct linux_mib *lm, unsigned long *m)
{
	unsigned int i;

	for (i = 0; i < TCPTW_LISTEN_MIBS; i++)
		m[i] = READ_ONCE(lm->mibs[listen_mibs[i]]);
}

/*
 * What the call of @r decided, from its CPU's MIBs @m now: a listeners
 * column, or -1 (nothing failed). In tcp_conn_request() at most one of
 * the three moves (a drop, an overflow, a cookie);
 * tcp_v{4,6}_syn_recv_sock() moves ListenOverflows alone.
 */
static int listen_outcome(const struct tcptw_listen_rec *r,
			  const unsigned long *m)
{
	if (m[0] != r->mib[0])
		return r->syn ? TCPTW_LISTENER_OVERFLOW_SYN :
				TCPTW_LISTENER_OVERFLOW_ACK;
	if (r->child)
		return -1;
	if (m[1] != r->mib[1])
		return TCPTW_LISTENER_SYN_DROP;
	if (m[2] != r->mib[2])
		return TCPTW_LISTENER_COOKIE_SENT;
	return -1;
}

/* listen_count()'s event, once the rate limit let it through */
static noinline void listen_event(struct tcptw_state *st,
				  const struct tcptw_listen_rec *r, u8 type,
				  u8 reason)
{
	struct tcptw_event ev;

	tcptw_event_init(&ev, type);
	ev.t = r->t;
	ev.reason = reason;
	/* stamped with the decision's time, whoever settles it */
	ev.time_ns = ktime_get_real_ns() - jiffies_to_nsecs(jiffies - r->when);
	tcptw_ring_push(st->ring, &ev);
}

/*
 * Count the decision @col of record @r (a claimed one, or a reader's copy
 * of it): the listener's row and an event. The row is the listening
 * socket's, keyed by the address and port it is bound to (0.0.0.0 or ::
 * for a wildcard one); an SO_REUSEPORT group binds them all alike, so it
 * shares one row. BH context or BH disabled (the listeners table).
 */
static void listen_count(struct tcptw_state *st,
			 const struct tcptw_listen_rec *r, int col)
{
	u8 type = TCPTW_EV_LISTEN_OVERFLOW, reason = 0;

	switch (col) {
	case TCPTW_LISTENER_OVERFLOW_SYN:
		tcptw_inc(st, TCPTW_LISTEN_OVERFLOW_SYN);
		reason = TCPTW_LISTEN_REASON_SYN;
		break;
	case TCPTW_LISTENER_OVERFLOW_ACK:
		reason = TCPTW_LISTEN_REASON_ACK;
		break;
	case TCPTW_LISTENER_SYN_DROP:
		type = TCPTW_EV_LISTEN_SYN_DROP;
		break;
	default:
		type = TCPTW_EV_LISTEN_SYN_COOKIE;
		break;
	}
	tcptw_table_add_key_bh(st->listeners, &r->key, col, 1, r->backlog,
			       r->max, r->when);
	/* a SYN flood: most are only counted (event_rate) */
	if (tcptw_event_ok(st, type))
		listen_event(st, r, type, reason);
}

/*
 * The record's state word (struct tcptw_listen_rec): armed, the run, the
 * generation. A run is at most TCPTW_TABLE_ADD_MAX cookies, added to the
 * row at once.
 */
#define REC_ARMED	1UL
#define REC_RUN_ONE	2UL
#define REC_RUN_MAX	((1UL << TCPTW_LISTEN_RUN_BITS) - 1)
#define REC_RUN_MASK	(REC_RUN_MAX * REC_RUN_ONE)
#define REC_GEN_ONE	(REC_RUN_ONE << TCPTW_LISTEN_RUN_BITS)
#define REC_RUN(state)	(((state) & REC_RUN_MASK) / REC_RUN_ONE)

/*
 * A claimed run of @n cookies, in @r's row (BH context or BH disabled),
 * and in EventsRateLimited: each was past the rate limit (listen_run()).
 */
static void listen_count_run(struct tcptw_state *st,
			     const struct tcptw_listen_rec *r, unsigned int n)
{
	BUILD_BUG_ON(REC_RUN_MAX > TCPTW_TABLE_ADD_MAX);
	tcptw_add(st, TCPTW_EVENTS_RATE_LIMITED, n);
	tcptw_table_add_key_bh(st->listeners, &r->key,
			       TCPTW_LISTENER_COOKIE_SENT, n, r->backlog,
			       r->max, r->run_when);
}

/* does @r count in @sk's row? (the listener's bound address and port) */
static __always_inline bool listen_same_row(const struct tcptw_listen_rec *r,
					    const struct sock *sk)
{
	const __be32 *a = tcptw_compat_sk_bound_addr(sk);
	const __be32 *k = r->key.addr.s6_addr32;

	if (r->key.port != inet_sk(sk)->inet_sport ||
	    r->key.family != sk->sk_family)
		return false;
	if (r->key.family != AF_INET6)
		return a[0] == k[0];
	return !((a[0] ^ k[0]) | (a[1] ^ k[1]) | (a[2] ^ k[2]) |
		 (a[3] ^ k[3]));
}

/* the row's key of listener @sk */
static __always_inline void listen_key(struct tcptw_table_key *key,
				       const struct sock *sk)
{
	tcptw_table_key_set(key, sk->sk_family, tcptw_compat_sk_bound_addr(sk),
			    inet_sk(sk)->inet_sport);
}

/*
 * The state of listener @sk's netns (NULL: none, nothing to arm or
 * settle), this CPU's record in it (@r) and this CPU's MIBs of the netns
 * (@lm). In a hook: preemption disabled, a read section of RCU
 * (pernet.h).
 */
static __always_inline struct tcptw_state *
listen_rec(const struct sock *sk, struct tcptw_listen_rec **r,
	   const struct linux_mib **lm)
{
	const struct net *net = sock_net(sk);
	struct tcptw_state *st = tcptw_state_hook(net);

	if (unlikely(!st))
		return NULL;
	*r = &this_cpu_ptr(st->pcpu)->listen;
	*lm = this_cpu_ptr(net->mib.net_statistics);
	return st;
}

/*
 * A SYN flood's path, tried first at each SYN: the previous call on this
 * CPU (armed, not a child's) sent a cookie and nothing else, the new SYN
 * is at the same row, and the previous call's event would be
 * rate-limited anyway. It joins the run, and the record is armed for the
 * new call with only what changes from SYN to SYN: no table, no event, no
 * key, the gauges and the rate limit's test once a jiffy (the limit's
 * second starts at a jiffy: spent stays spent until the next one). False:
 * listen_arm(). @st, @r and @lm: the netns's state, this CPU's record
 * and MIBs. The hook runs with preemption disabled (tcptw_state_hook()),
 * in softirq.
 */
static __always_inline bool listen_run(struct tcptw_state *st,
				       struct tcptw_listen_rec *r,
				       const struct linux_mib *lm,
				       const struct sock *sk,
				       const struct sk_buff *skb)
{
	unsigned long state, next, now, m0, m1, m2;

	state = READ_ONCE(r->state);
	if (!(state & REC_ARMED) || r->child || REC_RUN(state) == REC_RUN_MAX)
		return false;
	m0 = READ_ONCE(lm->mibs[LINUX_MIB_LISTENOVERFLOWS]);
	m1 = READ_ONCE(lm->mibs[LINUX_MIB_TCPREQQFULLDROP]);
	m2 = READ_ONCE(lm->mibs[LINUX_MIB_SYNCOOKIESSENT]);
	/* listen_outcome() == TCPTW_LISTENER_COOKIE_SENT */
	if (m0 != r->mib[0] || m1 != r->mib[1] || m2 == r->mib[2] ||
	    !listen_same_row(r, sk))
		return false;
	now = jiffies;
	if (r->spent_when != now) {
		if (!tcptw_event_spent(st, TCPTW_EV_LISTEN_SYN_COOKIE))
			return false;
		/* only this CPU reads it */
		r->spent_when = now;
	}
	next = (state + REC_GEN_ONE + REC_RUN_ONE) & ~REC_ARMED;
	/* the next generation before any field changes (a full barrier) */
	if (cmpxchg(&r->state, state, next) != state)
		return false;	/* a reader claimed it */
	r->run_when = r->when;
	/* mib[0] and mib[1] have not moved (the test above) */
	r->mib[2] = m2;
	/* the row's gauges: the last arm's, if of this jiffy */
	if (r->when != now)
		listen_gauges(sk, true, &r->backlog, &r->max);
	r->when = now;
	tcptw_tuple_from_skb(&r->t, skb);
	/* the fields before the armed state (tcptw_listen_settle()) */
	smp_store_release(&r->state, next | REC_ARMED);
	return true;
}

/*
 * A settled decision counted: the run, and the call if @col >= 0 (BH
 * context or BH disabled; the tables' code wants rcu_read_lock(): out of
 * line, as listen_arm() comes here only when something failed)
 */
static noinline void listen_settled(struct tcptw_state *st,
				    const struct tcptw_listen_rec *r,
				    unsigned int run, int col)
{
	rcu_read_lock();
	if (run)
		listen_count_run(st, r, run);
	if (col >= 0)
		listen_count(st, r, col);
	rcu_read_unlock();
}

/*
 * Settle this CPU's record of the previous call, which the kernel has
 * decided (no listener hook runs on this CPU before the previous call's
 * tests are done), from this CPU's MIBs @lm: the run and the call, each
 * unless a reader took it (a reader may take the run alone and leave the
 * call armed: again). The state word the record was left with.
 */
static noinline unsigned long listen_settle_cpu(struct tcptw_state *st,
						struct tcptw_listen_rec *r,
						const struct linux_mib *lm)
{
	unsigned long m[TCPTW_LISTEN_MIBS];
	unsigned long state, next;
	unsigned int run;
	int col;

	listen_mibs_read(lm, m);
	for (;;) {
		state = READ_ONCE(r->state);
		if (!(state & REC_ARMED))
			break;
		col = listen_outcome(r, m);
		run = REC_RUN(state);
		if (col < 0 && !run)
			break;
		next = state & ~REC_RUN_MASK & ~REC_ARMED;
		if (cmpxchg(&r->state, state, next) != state)
			continue;
		listen_settled(st, r, run, col);
		break;
	}
	return state;
}

/*
 * At a listener hook: settle this CPU's record of the previous call
 * (out of line, only when its MIBs moved or it holds a run), then arm it
 * for this one. A reader that copied the record meanwhile fails its
 * claim: the generation moves before any field does. A flood's cookies
 * at one row are settled as a run (listen_run(), tried first for a
 * SYN). Inline in each hook's callback, @child a constant there: a clean
 * call is a few loads, a few compares and the record's stores. @st, @r
 * and @lm as for listen_run().
 */
static __always_inline void listen_arm(struct tcptw_state *st,
				       struct tcptw_listen_rec *r,
				       const struct linux_mib *lm,
				       const struct sock *sk,
				       const struct sk_buff *skb, bool child,
				       bool syn)
{
	unsigned long state, next, m0;

	m0 = READ_ONCE(lm->mibs[LINUX_MIB_LISTENOVERFLOWS]);
	state = READ_ONCE(r->state);
	/*
	 * listen_outcome() < 0 and no run: nothing to settle (a child's
	 * call moves ListenOverflows alone: its other two are not kept)
	 */
	if ((state & REC_ARMED) &&
	    (REC_RUN(state) || m0 != r->mib[0] ||
	     (!r->child &&
	      (READ_ONCE(lm->mibs[LINUX_MIB_TCPREQQFULLDROP]) != r->mib[1] ||
	       READ_ONCE(lm->mibs[LINUX_MIB_SYNCOOKIESSENT]) != r->mib[2]))))
		state = listen_settle_cpu(st, r, lm);
	/* the next generation, not armed, without a run */
	next = ((state | REC_ARMED) + REC_GEN_ONE) & ~REC_RUN_MASK & ~REC_ARMED;
	WRITE_ONCE(r->state, next);
	/* the new generation is visible before any field changes */
	smp_wmb();
	r->mib[0] = m0;
	r->when = jiffies;
	if (!child) {
		r->mib[1] = READ_ONCE(lm->mibs[LINUX_MIB_TCPREQQFULLDROP]);
		r->mib[2] = READ_ONCE(lm->mibs[LINUX_MIB_SYNCOOKIESSENT]);
		/* listen_run() tests the rate limit at a jiffy's first SYN */
		r->spent_when = r->when - 1;
	}
	tcptw_tuple_from_skb(&r->t, skb);
	listen_key(&r->key, sk);
	listen_gauges(sk, listen_may_fail(sk, child), &r->backlog, &r->max);
	r->child = child;
	r->syn = syn;
	/* the fields before the armed state (tcptw_listen_settle()) */
	smp_store_release(&r->state, next | REC_ARMED);
}

void tcptw_listen_settle(const struct net *net, struct tcptw_state *st)
{
	unsigned long m[TCPTW_LISTEN_MIBS];
	struct tcptw_listen_rec *r, copy;
	unsigned long state, next;
	unsigned int run;
	int cpu, col;

	for_each_possible_cpu(cpu) {
		r = &per_cpu_ptr(st->pcpu, cpu)->listen;
		/* pairs with the release in listen_arm() and listen_run() */
		state = smp_load_acquire(&r->state);
		if (!(state & REC_ARMED))
			continue;
		memcpy(&copy, r, sizeof(copy));
		listen_mibs_read(per_cpu_ptr(net->mib.net_statistics, cpu), m);
		col = listen_outcome(&copy, m);
		run = REC_RUN(state);
		if (col < 0 && !run)
			continue;
		/*
		 * The run, and the call if the kernel has decided it; counted
		 * only if the record is still this one: a copy torn by its CPU
		 * arming the next one fails here. An undecided call stays
		 * armed for its CPU.
		 */
		next = state & ~REC_RUN_MASK;
		if (col >= 0)
			next &= ~REC_ARMED;
		if (cmpxchg(&r->state, state, next) != state)
			continue;
		local_bh_disable();
		listen_settled(st, &copy, run, col);
		local_bh_enable();
	}
}

/*
 * tcp_conn_request(rsk_ops, af_ops, sk, skb): a SYN at listener @sk. The
 * kernel drops it with a full SYN queue and cookies off (TCPReqQFullDrop)
 * or a full accept queue (ListenOverflows), or answers it with a cookie
 * (SyncookiesSent): one hook per SYN, settled from those MIBs.
 */
static __always_inline void conn_request_pre(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 2);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 3);
	const struct linux_mib *lm;
	struct tcptw_listen_rec *r;
	struct tcptw_state *st;

	st = listen_rec(sk, &r, &lm);
	if (st && !listen_run(st, r, lm, sk, skb))
		listen_arm(st, r, lm, sk, skb, false, true);
}

/* every SYN at a listener: a callback of its own (compat/hook.h) */
TCPTW_DEFINE_OWN_CB(conn_request_pre)

/*
 * tcp_v{4,6}_syn_recv_sock(sk, skb, ...): the child of a handshake, whose
 * first test is the accept queue (exit_overflow, ListenOverflows). Reached
 * from tcp_check_req() and cookie_v{4,6}_check() with the completing ACK,
 * and, for TCP Fast Open, from tcp_conn_request() with the SYN: that
 * overflow is the SYN's (ListenOverflowSyn), another CPU having filled the
 * queue after the SYN's own test (tcptw_tfo_race.sh).
 */
static __always_inline void syn_recv_sock(const struct sock *sk,
					  const struct sk_buff *skb)
{
	bool syn = tcp_hdr(skb)->syn;
	const struct linux_mib *lm;
	struct tcptw_listen_rec *r;
	struct tcptw_state *st;

	/* test build: hold a Fast Open child, for that race */
	if (syn)
		tcptw_test_udelay(tcptw_test_tfo_delay_us);
	st = listen_rec(sk, &r, &lm);
	if (st)
		listen_arm(st, r, lm, sk, skb, true, syn);
	/* test build: the queue as the hook sees it, then a hold */
	if (!syn)
		tcptw_test_ack_hold(sk);
}

static __always_inline void v4_syn_recv_sock_pre(struct pt_regs *regs)
{
	syn_recv_sock((void *)regs_get_kernel_argument(regs, 0),
		      (void *)regs_get_kernel_argument(regs, 1));
}

static __always_inline void v6_syn_recv_sock_pre(struct pt_regs *regs)
{
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	/* a v4-mapped child: tcp_v4_syn_recv_sock()'s hook counts it */
	if (skb->protocol == htons(ETH_P_IP))
		return;
	syn_recv_sock((void *)regs_get_kernel_argument(regs, 0), skb);
}

/* every handshake's ACK at a listener: callbacks of their own too */
TCPTW_DEFINE_OWN_CB(v4_syn_recv_sock_pre)
TCPTW_DEFINE_OWN_CB(v6_syn_recv_sock_pre)

static struct tcptw_probe listen_probes[] = {
	{ .name = "tcp_conn_request", .kind = TCPTW_ENTRY,
	  .entry = conn_request_pre,
	  .own_cb = TCPTW_OWN_CB(conn_request_pre) },
	{ .name = "tcp_v4_syn_recv_sock", .kind = TCPTW_ENTRY,
	  .entry = v4_syn_recv_sock_pre,
	  .own_cb = TCPTW_OWN_CB(v4_syn_recv_sock_pre) },
	{ .name = "tcp_v6_syn_recv_sock", .kind = TCPTW_ENTRY,
	  .entry = v6_syn_recv_sock_pre,
	  .own_cb = TCPTW_OWN_CB(v6_syn_recv_sock_pre) },
};

const struct tcptw_probe_set tcptw_listen_probe_set = {
	.probes = listen_probes,
	.n = ARRAY_SIZE(listen_probes),
};
