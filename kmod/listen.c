// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Listeners: accept-queue overflow, SYN-queue drops, SYN cookies, and
 * the PAWS check of a request socket (tcp_check_req()). RSTs and the PAWS
 * checks of full sockets are in rst.c.
 *
 * Where the kernel's decision is buried in inlined code (the queue tests
 * of tcp_conn_request(), the PAWS test of tcp_check_req()), a hook on the
 * call reads the netns's own MIB slot on the CPU the call runs on before
 * and after it (mib.h): the change is what this call decided, attributed
 * to its listener and 4-tuple. tcp_conn_request() runs in BH context, and
 * so does tcp_check_req() but for Fast Open children: that is exact.
 */
#include <linux/ptrace.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <net/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/sock_reuseport.h>

#include "mib.h"
#include "pernet.h"
#include "probes.h"
#include "table.h"
#include "test.h"
#include "tuple.h"

/*
 * What a listener hook saw at entry. The segment's 4-tuple is copied
 * there: cookie_v{4,6}_check() free the segment they refuse (since 6.8),
 * so a return handler must not read it.
 */
struct listen_ctx {
	struct net *net;
	const struct sock *listener;
	struct tcptw_tuple t;		/* src = peer, dst = listener */
	int cpu;
	bool fastopen;		/* tcp_check_req() for a Fast Open child */
	unsigned long mib[3];	/* up to 3 slots, see *_mibs[] */
};

static_assert(sizeof(struct listen_ctx) <= TCPTW_MAX_CALL_DATA);

static void listen_enter(struct listen_ctx *c, const struct sock *sk,
			 const struct sk_buff *skb, const int *idx,
			 unsigned int n)
{
	unsigned int i;

	c->net = sock_net(sk);
	c->listener = sk;
	tcptw_tuple_from_skb(&c->t, skb);
	c->cpu = smp_processor_id();
	c->fastopen = false;
	for (i = 0; i < n; i++)
		c->mib[i] = tcptw_mib_linux(c->net, c->cpu, idx[i]);
}

/* the event of @c's segment */
static void listen_event(const struct listen_ctx *c, struct tcptw_event *ev,
			 u8 type, u8 reason)
{
	memset(ev, 0, sizeof(*ev));
	ev->t = c->t;
	ev->age_ms = -1;
	ev->type = type;
	ev->reason = reason;
}

static unsigned long listen_delta(const struct listen_ctx *c, int idx,
				  unsigned int i)
{
	return tcptw_mib_linux(c->net, c->cpu, idx) - c->mib[i];
}

/*
 * The queue of @sk as its row shows it: for a socket in an SO_REUSEPORT
 * group, the sums over the group's listening sockets (socks[0..num_socks);
 * closed ones follow them since v5.14), which share the row. Under RCU:
 * the group and TCP listeners (SOCK_RCU_FREE) are freed after a grace
 * period.
 */
static void listen_gauges(const struct sock *sk, u32 *backlog, u32 *max)
{
	const struct sock_reuseport *reuse;
	const struct sock *s;
	unsigned int i, n;

	reuse = rcu_dereference(sk->sk_reuseport_cb);
	if (!reuse) {
		*backlog = READ_ONCE(sk->sk_ack_backlog);
		*max = READ_ONCE(sk->sk_max_ack_backlog);
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
}

/*
 * One listener decision: counters, the listener's row, an event. The row
 * is the listening socket's, keyed by the address and port it is bound
 * to (0.0.0.0 or :: for a wildcard one, whichever local address the SYN
 * was sent to); an SO_REUSEPORT group binds them all alike, so it shares
 * one row.
 */
static void listen_count(struct tcptw_state *st, const struct listen_ctx *c,
			 enum tcptw_listener_col col, u8 type, u8 reason)
{
	const struct sock *sk = c->listener;
	struct tcptw_event ev;
	u32 backlog, max;

	listen_gauges(sk, &backlog, &max);
	tcptw_table_inc(st->listeners, sk->sk_family,
			tcptw_compat_sk_bound_addr(sk),
			inet_sk(sk)->inet_sport, col, backlog, max);
	listen_event(c, &ev, type, reason);
	tcptw_emit(st, &ev);
}

/* one accept-queue overflow: the SYN's (@syn) or the completing ACK's */
static void listen_overflow(struct tcptw_state *st,
			    const struct listen_ctx *c,
			    bool syn)
{
	tcptw_inc(st, TCPTW_LISTEN_OVERFLOW);
	tcptw_inc(st, syn ? TCPTW_LISTEN_OVERFLOW_SYN :
		  TCPTW_LISTEN_OVERFLOW_ACK);
	listen_count(st, c, syn ? TCPTW_LISTENER_OVERFLOW_SYN :
		     TCPTW_LISTENER_OVERFLOW_ACK, TCPTW_EV_LISTEN_OVERFLOW,
		     syn ? TCPTW_LISTEN_REASON_SYN : TCPTW_LISTEN_REASON_ACK);
}

/*
 * Test build: a tcp_conn_request() call is running on this CPU (BH
 * context, one at a time per CPU), for the Fast Open delay below.
 */
static DEFINE_PER_CPU(bool, in_conn_request);

/*
 * tcp_conn_request(rsk_ops, af_ops, listener, skb): a SYN at a listener.
 * With TCP Fast Open it also creates the child, through
 * tcp_v{4,6}_syn_recv_sock(): a full accept queue found there (another
 * CPU filled it after the SYN's own check) is the same SYN's overflow,
 * and lands in the same ListenOverflows delta.
 */
static const int conn_mibs[] = {
	LINUX_MIB_LISTENOVERFLOWS,
	LINUX_MIB_TCPREQQFULLDROP,
	LINUX_MIB_SYNCOOKIESSENT,
};

static int conn_request_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 2);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 3);

	listen_enter(data, sk, skb, conn_mibs,
		     ARRAY_SIZE(conn_mibs));
	if (tcptw_test_tfo_delay_us)
		__this_cpu_write(in_conn_request, true);
	return 0;
}

static void conn_request_ret(void *data, struct pt_regs *regs)
{
	struct listen_ctx *c = data;
	struct tcptw_state *st;

	if (tcptw_test_tfo_delay_us)
		__this_cpu_write(in_conn_request, false);
	rcu_read_lock();
	st = tcptw_state(c->net);
	if (!st)
		goto out;
	if (listen_delta(c, LINUX_MIB_LISTENOVERFLOWS, 0))
		listen_overflow(st, c, true);
	if (listen_delta(c, LINUX_MIB_TCPREQQFULLDROP, 1)) {
		tcptw_inc(st, TCPTW_LISTEN_SYN_DROP);
		listen_count(st, c, TCPTW_LISTENER_SYN_DROP,
			     TCPTW_EV_LISTEN_SYN_DROP, 0);
	}
	if (listen_delta(c, LINUX_MIB_SYNCOOKIESSENT, 2)) {
		tcptw_inc(st, TCPTW_LISTEN_SYN_COOKIE_SENT);
		listen_count(st, c, TCPTW_LISTENER_COOKIE_SENT,
			     TCPTW_EV_LISTEN_SYN_COOKIE, 0);
	}
out:
	rcu_read_unlock();
}

/*
 * The handshake-completing ACK creates the child through
 * tcp_v{4,6}_syn_recv_sock(), which counts a full accept queue in
 * ListenOverflows (exit_overflow). It is reached from tcp_check_req() and,
 * for a SYN cookie, from cookie_v{4,6}_check(): hooks on those two see
 * it, and cost nothing per connection beyond the one tcp_check_req()
 * needs anyway (cookie_v{4,6}_check() run only for an ACK that finds no
 * request socket).
 *
 * tcp_check_req(listener, skb, req, ...) also counts its PAWS rejects in
 * PAWSEstab.
 */
static const int check_req_mibs[] = {
	LINUX_MIB_LISTENOVERFLOWS,
	LINUX_MIB_PAWSESTABREJECTED,
};

static int check_req_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	struct listen_ctx *c = data;

	listen_enter(c, sk, skb, check_req_mibs, ARRAY_SIZE(check_req_mibs));
	/*
	 * A Fast Open child (4th argument) has been created already: no
	 * syn_recv_sock() here, and the call may run in process context,
	 * where a softirq's overflow on this CPU would land in the delta.
	 */
	c->fastopen = !!regs_get_kernel_argument(regs, 3);
	return 0;
}

static void check_req_ret(void *data, struct pt_regs *regs)
{
	struct listen_ctx *c = data;
	struct tcptw_event ev;
	struct tcptw_state *st;

	rcu_read_lock();
	st = tcptw_state(c->net);
	if (!st)
		goto out;
	if (!c->fastopen && listen_delta(c, LINUX_MIB_LISTENOVERFLOWS, 0))
		listen_overflow(st, c, false);
	if (listen_delta(c, LINUX_MIB_PAWSESTABREJECTED, 1)) {
		tcptw_inc(st, TCPTW_PAWS_SYNRECV_REJECTED);
		listen_event(c, &ev, TCPTW_EV_PAWS_SYNRECV_REJECTED, 0);
		tcptw_emit(st, &ev);
	}
out:
	rcu_read_unlock();
}

/* cookie_v{4,6}_check(listener, skb): an ACK that may carry a SYN cookie */
static const int cookie_mibs[] = {
	LINUX_MIB_LISTENOVERFLOWS,
};

static int cookie_check_entry(void *data, struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	listen_enter(data, sk, skb, cookie_mibs, ARRAY_SIZE(cookie_mibs));
	return 0;
}

static void cookie_check_ret(void *data, struct pt_regs *regs)
{
	struct listen_ctx *c = data;
	struct tcptw_state *st;

	if (!listen_delta(c, LINUX_MIB_LISTENOVERFLOWS, 0))
		return;
	rcu_read_lock();
	st = tcptw_state(c->net);
	if (st)
		listen_overflow(st, c, false);
	rcu_read_unlock();
}

/*
 * Test build: hold a Fast Open child's creation, so that another CPU
 * fills the queue between tcp_conn_request()'s check and the child's.
 * Attached only when test_tfo_delay_us is set at load.
 */
static void tfo_delay_pre(struct pt_regs *regs)
{
	if (__this_cpu_read(in_conn_request))
		tcptw_test_udelay(tcptw_test_tfo_delay_us);
}

/* the test knob's row */
enum { LP_TFO_DELAY = 4 };

static struct tcptw_probe listen_probes[] = {
	{ .name = "tcp_conn_request", .kind = TCPTW_CALL,
	  .call = conn_request_entry, .ret = conn_request_ret,
	  .data_size = sizeof(struct listen_ctx) },
	{ .name = "tcp_check_req", .kind = TCPTW_CALL,
	  .call = check_req_entry, .ret = check_req_ret,
	  .data_size = sizeof(struct listen_ctx) },
	{ .name = "cookie_v4_check", .kind = TCPTW_CALL,
	  .call = cookie_check_entry, .ret = cookie_check_ret,
	  .data_size = sizeof(struct listen_ctx) },
	{ .name = "cookie_v6_check", .kind = TCPTW_CALL,
	  .call = cookie_check_entry, .ret = cookie_check_ret,
	  .data_size = sizeof(struct listen_ctx) },
	[LP_TFO_DELAY] = { .name = "tcp_v4_syn_recv_sock",
			   .kind = TCPTW_ENTRY, .entry = tfo_delay_pre,
			   .unused = true },
};

static void listen_probes_setup(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(listen_probes); i++)
		listen_probes[i].maxactive = max(64U, 8 * num_possible_cpus());
	listen_probes[LP_TFO_DELAY].unused = !tcptw_test_tfo_delay_us;
}

const struct tcptw_probe_set tcptw_listen_probe_set = {
	.probes = listen_probes,
	.n = ARRAY_SIZE(listen_probes),
	.setup = listen_probes_setup,
};
