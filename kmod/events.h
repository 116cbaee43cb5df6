/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Per-netns ring of the most recent decisions (/proc/net/tcptw/events).
 */
#ifndef _TCPTW_EVENTS_H
#define _TCPTW_EVENTS_H

#include <linux/bits.h>
#include <linux/in6.h>
#include <linux/types.h>
#include <linux/atomic.h>

struct seq_file;

/* the event types, in the order of uapi/tcptw_events.h (an ABI) */
enum tcptw_event_type {
#define TCPTW_EVENT(id, name) TCPTW_EV_##id,
#include "uapi/tcptw_events.h"
	TCPTW_NR_EVENTS
};

/* Address pair and ports of an event; IPv4 uses the first 4 bytes. */
struct tcptw_tuple {
	union {
		__be32 v4;
		struct in6_addr v6;
	} saddr, daddr;
	__be16 sport;
	__be16 dport;
	u16 family;
};

#define TCPTW_EV_HAS_TSVAL	0x1
#define TCPTW_EV_HAS_TS_RECENT	0x2
#define TCPTW_EV_NO_TUPLE	0x4	/* the hook does not know it */
#define TCPTW_EV_HAS_IDLE	0x8	/* idle_ms is set */

#define TCPTW_LISTEN_REASON_SYN	1
#define TCPTW_LISTEN_REASON_ACK	2

/* gen of a slot a writer has claimed and not yet published */
#define TCPTW_GEN_BUSY	BIT_ULL(63)

struct tcptw_event {
	/* ring index + 1 once written; with TCPTW_GEN_BUSY while being written */
	u64 gen;
	/* the payload, from here to the end (tcptw_ring_push() copies it) */
	u64 time_ns;
	struct tcptw_tuple t;
	s32 age_ms;		/* -1: unknown */
	u32 tsval;
	u32 ts_recent;
	u32 idle_ms;		/* rst_received: ms since the last segment */
	u8 type;
	u8 flags;
	u8 reason;		/* event-specific, 0: none */
};

struct tcptw_ring {
	atomic64_t head;	/* next index to reserve */
	u64 tail;		/* first index still shown (reset moves it) */
	u32 mask;
	size_t bytes;		/* as allocated (mem.c) */
	struct tcptw_event ev[];
};

extern unsigned int tcptw_event_ring_size;

/* NULL (*state says why: enum tcptw_mem_state) leaves events out */
struct tcptw_ring *tcptw_ring_alloc(u8 *state);
void tcptw_ring_free(struct tcptw_ring *ring);
void tcptw_ring_reset(struct tcptw_ring *ring);
void tcptw_ring_push(struct tcptw_ring *ring, const struct tcptw_event *ev);
int tcptw_events_proc_init(struct proc_dir_entry *dir);

#endif /* _TCPTW_EVENTS_H */
