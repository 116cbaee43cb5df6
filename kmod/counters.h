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

#define TCPTW_COUNTERS(X)			\
	X(TW_CREATED, "TwCreated")		\
	X(TW_OVERFLOW, "TwOverflow")		\
	X(TW_PAWS_REJECTED, "TwPawsRejected")	\
	X(TW_SYN_PAWS_REJECTED, "TwSynPawsRejected") \
	X(TW_SYN_SEQ_REJECTED, "TwSynSeqRejected") \
	X(TW_SYN_RECYCLED, "TwSynRecycled")	\
	X(TW_ACK_SENT, "TwAckSent")		\
	X(TW_RST_SENT, "TwRstSent")		\
	X(TW_KILLED_BY_RST, "TwKilledByRst")

#define TCPTW_ENUM(id, name) TCPTW_##id,
enum tcptw_counter {
	TCPTW_COUNTERS(TCPTW_ENUM)
	TCPTW_NR_COUNTERS
};
#undef TCPTW_ENUM

extern const char * const tcptw_counter_names[TCPTW_NR_COUNTERS];

#endif /* _TCPTW_COUNTERS_H */
