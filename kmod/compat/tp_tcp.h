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

/* @fn has the probe type of tracepoint @tp (data pointer first) */
#define TCPTW_TP_TYPECHECK(tp, fn)					\
	static_assert(__same_type(&register_trace_##tp,			\
				  int (*)(typeof(fn) *, void *)),	\
		      #fn " does not match tracepoint " #tp)

/* version-independent handlers (listen.c) */
void tcptw_count_rst_received(struct sock *sk);

/* tcp:tcp_receive_reset: TP_PROTO(struct sock *sk) in 5.10 through 7.2 */
static inline void tcptw_tp_tcp_receive_reset(void *data, struct sock *sk)
{
	tcptw_count_rst_received(sk);
}

TCPTW_TP_TYPECHECK(tcp_receive_reset, tcptw_tp_tcp_receive_reset);

#endif /* _TCPTW_COMPAT_TP_TCP_H */
