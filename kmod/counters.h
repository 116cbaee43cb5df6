/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The single list of counters. The order is the ABI of
 * /proc/net/tcptw/counters: append only, never rename, reorder or reuse a
 * name (docs/proc-format.md documents each one).
 */
#ifndef _TCPTW_COUNTERS_H
#define _TCPTW_COUNTERS_H

enum tcptw_counter {
	TCPTW_TW_CREATED,
	TCPTW_TW_OVERFLOW,
	TCPTW_TW_PAWS_REJECTED,
	TCPTW_TW_SYN_PAWS_REJECTED,
	TCPTW_TW_SYN_SEQ_REJECTED,
	TCPTW_TW_SYN_RECYCLED,
	TCPTW_TW_ACK_SENT,
	TCPTW_TW_RST_SENT,
	TCPTW_TW_KILLED_BY_RST,
	TCPTW_TW_REUSE_GRANTED,
	TCPTW_TW_REUSE_DENIED_DISABLED,
	TCPTW_TW_REUSE_DENIED_LOOPBACK_ONLY,
	TCPTW_TW_REUSE_DENIED_NO_TIMESTAMPS,
	TCPTW_TW_REUSE_DENIED_TOO_RECENT,
	TCPTW_TW_REUSE_DENIED_FIN_WAIT2,
	TCPTW_CONNECT_PORT_EXHAUSTED,
	TCPTW_CONNECT_TUPLE_IN_USE,
	TCPTW_LISTEN_OVERFLOW,
	TCPTW_LISTEN_OVERFLOW_SYN,
	TCPTW_LISTEN_OVERFLOW_ACK,
	TCPTW_LISTEN_SYN_DROP,
	TCPTW_LISTEN_SYN_COOKIE_SENT,
	TCPTW_PAWS_ESTAB_REJECTED,
	TCPTW_PAWS_SYNRECV_REJECTED,
	TCPTW_PAWS_ACTIVE_REJECTED,
	TCPTW_CONNTRACK_TABLE_FULL,
	TCPTW_CONNTRACK_INSERT_FAILED,
	TCPTW_RST_SENT,
	TCPTW_RST_RECEIVED,
	TCPTW_EVENTS_RATE_LIMITED,	/* not a decision: events not recorded */
	TCPTW_TW_SYN_FIN_WAIT2_REJECTED,
	TCPTW_NR_COUNTERS
};

/*
 * Why the kernel's tcp_twsk_unique() refuses a TIME_WAIT 4-tuple, in the
 * order it tests them: the first that applies is the reason (reuse.c
 * replays those tests after a failed connect(); the function itself is not
 * hooked). The values index the TwReuseDenied* counters from
 * TCPTW_TW_REUSE_DENIED_DISABLED on.
 */
enum tcptw_reuse_reason {
	TCPTW_REUSE_OK,
	TCPTW_REUSE_DISABLED,
	TCPTW_REUSE_LOOPBACK_ONLY,
	TCPTW_REUSE_NO_TIMESTAMPS,
	TCPTW_REUSE_TOO_RECENT,
	TCPTW_REUSE_FIN_WAIT2,
	TCPTW_NR_REUSE_REASONS
};

/*
 * log2 histograms (ms), /proc/net/tcptw/hist: TIME_WAIT age at each decision,
 * and the idle time of connections reset by an incoming RST
 */
enum tcptw_hist {
	TCPTW_HIST_REUSE_GRANTED,
	TCPTW_HIST_REUSE_DENIED,
	TCPTW_HIST_SYN_RECYCLED,
	TCPTW_HIST_SYN_PAWS_REJECTED,
	TCPTW_HIST_RST_IDLE,	/* not an age: a connection's idle time */
	TCPTW_NR_HIST
};

/* bucket 0: < 1 ms; k: [2^(k-1), 2^k) ms; the last: >= 65536 ms */
#define TCPTW_HIST_BUCKETS 18

/* per-CPU slots: the counters, then the histogram buckets */
#define TCPTW_HIST_SLOT(h, b) \
	(TCPTW_NR_COUNTERS + (h) * TCPTW_HIST_BUCKETS + (b))
#define TCPTW_NR_SLOTS TCPTW_HIST_SLOT(TCPTW_NR_HIST, 0)

/* indexed by enum tcptw_counter; proc.c checks that none is missing */
extern const char * const tcptw_counter_names[TCPTW_NR_COUNTERS];
extern const char * const tcptw_hist_names[TCPTW_NR_HIST];
extern const char * const tcptw_reuse_reason_names[TCPTW_NR_REUSE_REASONS];

#endif /* _TCPTW_COUNTERS_H */
