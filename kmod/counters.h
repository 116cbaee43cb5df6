/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The single list of counters. The order is the ABI of
 * /proc/net/tcptw/counters: append only, never rename, reorder or reuse a
 * name (README.md documents each one).
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
	TCPTW_NR_COUNTERS
};

/* indexed by enum tcptw_counter; proc.c checks that none is missing */
extern const char * const tcptw_counter_names[TCPTW_NR_COUNTERS];

#endif /* _TCPTW_COUNTERS_H */
