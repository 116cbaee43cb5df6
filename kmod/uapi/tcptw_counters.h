/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The counters of /proc/net/tcptw/counters, each written once: the module
 * (kmod/counters.h, kmod/proc.c) and the CLI (userspace/ctr_names.h, the
 * Prometheus HELP lines) are made from this list, and
 * scripts/check-counters.py holds docs/proc-format.md and docs/design.md
 * to it. The order is the ABI: append only, never rename, reorder or
 * reuse a name.
 *
 * Define TCPTW_COUNTER(id, name, how, help) and include this file: one
 * TCPTW_COUNTER() per counter, in order (it undefines TCPTW_COUNTER).
 *   id    enum tcptw_counter's TCPTW_<id> (the CLI's CTR_<id>)
 *   name  the name in the file
 *   how   how the module decides it: "mib" (the namespace's own MIB,
 *         read at read time, no hook), "hook" (an entry hook where the
 *         decision fails), "tracepoint", "combined" (a MIB less a hook's
 *         count), "stat" (a kernel statistic beside the MIBs:
 *         conntrack's), or "tcptw" (the module's own); "a/b" where
 *         kernels differ (docs/design.md says which)
 *   help  one line of meaning (the Prometheus HELP)
 *
 * No include and no include guard: kernel and user space both include
 * it, once per use.
 */
#ifndef TCPTW_COUNTER
#error "define TCPTW_COUNTER(id, name, how, help) before including this list"
#endif

TCPTW_COUNTER(TW_CREATED, "TwCreated", "mib/tracepoint",
	      "TIME_WAIT sockets created (FIN_WAIT2 substate included)")
TCPTW_COUNTER(TW_OVERFLOW, "TwOverflow", "mib",
	      "TIME_WAIT not created: tcp_max_tw_buckets reached")
TCPTW_COUNTER(TW_PAWS_REJECTED, "TwPawsRejected", "hook/mib",
	      "segments rejected by PAWS on a TIME_WAIT socket")
TCPTW_COUNTER(TW_SYN_PAWS_REJECTED, "TwSynPawsRejected", "hook",
	      "SYNs a TIME_WAIT socket rejected by PAWS (clients behind NAT)")
TCPTW_COUNTER(TW_SYN_SEQ_REJECTED, "TwSynSeqRejected", "hook",
	      "SYNs a TIME_WAIT socket refused on sequence (no timestamps)")
TCPTW_COUNTER(TW_SYN_RECYCLED, "TwSynRecycled", "hook",
	      "SYNs a TIME_WAIT socket handed to a listener")
TCPTW_COUNTER(TW_ACK_SENT, "TwAckSent", "hook",
	      "ACKs sent by TIME_WAIT sockets")
TCPTW_COUNTER(TW_RST_SENT, "TwRstSent", "hook",
	      "RSTs sent by TIME_WAIT sockets")
TCPTW_COUNTER(TW_KILLED_BY_RST, "TwKilledByRst", "hook",
	      "TIME_WAIT sockets destroyed by an incoming RST")
TCPTW_COUNTER(TW_REUSE_GRANTED, "TwReuseGranted", "mib",
	      "connect() reused a TIME_WAIT socket's 4-tuple")
TCPTW_COUNTER(TW_REUSE_DENIED_DISABLED, "TwReuseDeniedDisabled", "tracepoint",
	      "connect() failed, reuse off (tcp_tw_reuse 0)")
TCPTW_COUNTER(TW_REUSE_DENIED_LOOPBACK_ONLY, "TwReuseDeniedLoopbackOnly", "tracepoint",
	      "connect() failed, reuse only over loopback (tcp_tw_reuse 2)")
TCPTW_COUNTER(TW_REUSE_DENIED_NO_TIMESTAMPS, "TwReuseDeniedNoTimestamps", "tracepoint",
	      "connect() failed, the TIME_WAIT socket had no timestamps")
TCPTW_COUNTER(TW_REUSE_DENIED_TOO_RECENT, "TwReuseDeniedTooRecent", "tracepoint",
	      "connect() failed, the TIME_WAIT socket was too young")
TCPTW_COUNTER(TW_REUSE_DENIED_FIN_WAIT2, "TwReuseDeniedFinWait2", "tracepoint",
	      "connect() failed, the socket was still in FIN_WAIT2")
TCPTW_COUNTER(CONNECT_PORT_EXHAUSTED, "ConnectPortExhausted", "tracepoint",
	      "connect() found no free port in the ephemeral range")
TCPTW_COUNTER(CONNECT_TUPLE_IN_USE, "ConnectTupleInUse", "tracepoint",
	      "connect() from a bound port: 4-tuple taken")
TCPTW_COUNTER(LISTEN_OVERFLOW, "ListenOverflow", "mib",
	      "segments dropped: a listener's accept queue was full")
TCPTW_COUNTER(LISTEN_OVERFLOW_SYN, "ListenOverflowSyn", "hook",
	      "accept queue full when the SYN arrived")
TCPTW_COUNTER(LISTEN_OVERFLOW_ACK, "ListenOverflowAck", "combined",
	      "accept queue full at the handshake's last ACK")
TCPTW_COUNTER(LISTEN_SYN_DROP, "ListenSynDrop", "mib",
	      "SYNs dropped: SYN queue full, no SYN cookies")
TCPTW_COUNTER(LISTEN_SYN_COOKIE_SENT, "ListenSynCookieSent", "mib",
	      "SYN cookies sent by a listener")
TCPTW_COUNTER(PAWS_ESTAB_REJECTED, "PawsEstabRejected", "hook",
	      "segments rejected by PAWS on established sockets")
TCPTW_COUNTER(PAWS_SYNRECV_REJECTED, "PawsSynRecvRejected", "combined",
	      "segments rejected by PAWS in SYN-RECV")
TCPTW_COUNTER(PAWS_ACTIVE_REJECTED, "PawsActiveRejected", "mib",
	      "SYN-ACKs rejected in SYN-SENT (bad TSecr)")
TCPTW_COUNTER(CONNTRACK_TABLE_FULL, "ConntrackTableFull", "hook",
	      "packets dropped: the conntrack table was full")
TCPTW_COUNTER(CONNTRACK_INSERT_FAILED, "ConntrackInsertFailed", "stat",
	      "conntrack entries that failed to insert (NAT clash)")
TCPTW_COUNTER(RST_SENT, "RstSent", "mib",
	      "TCP RSTs sent")
TCPTW_COUNTER(RST_RECEIVED, "RstReceived", "tracepoint",
	      "RSTs received that reset a connection")
TCPTW_COUNTER(EVENTS_RATE_LIMITED, "EventsRateLimited", "tcptw",
	      "decisions counted but not recorded in events (event_rate)")
TCPTW_COUNTER(TW_SYN_FIN_WAIT2_REJECTED, "TwSynFinWait2Rejected", "hook",
	      "SYNs refused by a TIME_WAIT socket still in FIN_WAIT2")

#undef TCPTW_COUNTER
