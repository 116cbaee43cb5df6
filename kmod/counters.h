/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The module's counters, from the one list in uapi/tcptw_counters.h
 * (its order is the ABI of /proc/net/tcptw/counters), the histograms and
 * the reasons a TIME_WAIT 4-tuple is not reused.
 */
#ifndef _TCPTW_COUNTERS_H
#define _TCPTW_COUNTERS_H

/* TCPTW_TW_CREATED, ... in the order of uapi/tcptw_counters.h */
enum tcptw_counter {
#define TCPTW_COUNTER(id, name, how, help) TCPTW_##id,
#include "uapi/tcptw_counters.h"
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

/* indexed by enum tcptw_counter, made from the same list (proc.c) */
extern const char * const tcptw_counter_names[TCPTW_NR_COUNTERS];
extern const char * const tcptw_hist_names[TCPTW_NR_HIST];
extern const char * const tcptw_reuse_reason_names[TCPTW_NR_REUSE_REASONS];

#endif /* _TCPTW_COUNTERS_H */
