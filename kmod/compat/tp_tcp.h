/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Typed adapters for the tcp: tracepoints tcptw attaches by name. A
 * tracepoint outside net-traces.c's export list cannot be registered with
 * its register_trace_X(), so tracepoint_probe_register() takes the probe
 * as a void pointer: the static_assert below checks each adapter against
 * the prototype register_trace_X() wants on the target kernel instead, so
 * a changed prototype fails the build rather than the call.
 */
#ifndef _TCPTW_COMPAT_TP_TCP_H
#define _TCPTW_COMPAT_TP_TCP_H

#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <trace/events/tcp.h>

#include "probes.h"

/* @fn has the probe type of tracepoint @tp (data pointer first) */
#define TCPTW_TP_TYPECHECK(tp, fn)					\
	static_assert(__same_type(&register_trace_##tp,			\
				  int (*)(typeof(fn) *, void *)),	\
		      #fn " does not match tracepoint " #tp)

/* version-independent handlers (rst.c) */
void tcptw_count_rst_received(struct sock *sk);
/* a RST in reply to @skb; @reason: index + 1 into the kernel's list, 0 none */
void tcptw_count_rst_sent(const struct sock *sk, const struct sk_buff *skb,
			  u8 reason);

/* tcp:tcp_receive_reset: TP_PROTO(struct sock *sk) in 5.10 through 7.2 */
/* @data: the struct tcptw_probe (probes.c registers it so) */
static inline void tcptw_tp_tcp_receive_reset(void *data, struct sock *sk)
{
	tcptw_probe_hit(data);
	tcptw_compat_tp_enter();
	tcptw_count_rst_received(sk);
	tcptw_compat_tp_exit();
}

TCPTW_TP_TYPECHECK(tcp_receive_reset, tcptw_tp_tcp_receive_reset);

#ifdef TCPTW_HAVE_RST_REASON
/*
 * v6.10: tcp:tcp_send_reset(sk, skb, reason) fires in tcp_v{4,6}_send_reset()
 * for every RST they send (after the checks that send none), with the
 * reason; skb is NULL from tcp_send_active_reset(), which tcptw counts
 * at its entry instead.
 */
#define TCPTW_COMPAT_RST_TRACEPOINT true

static inline void tcptw_tp_tcp_send_reset(void *data, const struct sock *sk,
					   const struct sk_buff *skb,
					   const enum sk_rst_reason reason)
{
	tcptw_probe_hit(data);
	if (!skb)
		return;
	tcptw_compat_tp_enter();
	tcptw_count_rst_sent(sk, skb, reason < SK_RST_REASON_MAX ?
				      reason + 1 : 0);
	tcptw_compat_tp_exit();
}
#else
/*
 * Before v6.10 it fires only for full sockets (no RST to a closed port,
 * from TIME_WAIT or a request socket) and has no reason: left unused,
 * hooks at the entry of tcp_v{4,6}_send_reset() say instead.
 */
#define TCPTW_COMPAT_RST_TRACEPOINT false

static inline void tcptw_tp_tcp_send_reset(void *data, const struct sock *sk,
					   const struct sk_buff *skb)
{
}
#endif

TCPTW_TP_TYPECHECK(tcp_send_reset, tcptw_tp_tcp_send_reset);

#endif /* _TCPTW_COMPAT_TP_TCP_H */
