/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The event types of /proc/net/tcptw/events, each written once: the
 * module (kmod/events.h, kmod/events.c) and the CLI (userspace/ctr_names.h)
 * are made from this list, and scripts/check-counters.py holds
 * docs/proc-format.md's events table to it. The order is the ABI of the
 * module's enum: append only, never rename, reorder or reuse a name
 * (types no longer recorded stay).
 *
 * Define TCPTW_EVENT(id, name) and include this file: one TCPTW_EVENT()
 * per type, in order (it undefines TCPTW_EVENT).
 *   id    enum tcptw_event_type's TCPTW_EV_<id> (the CLI's EV_<id>)
 *   name  the event's name in the file
 *
 * No include and no include guard: kernel and user space both include
 * it, once per use.
 */
#ifndef TCPTW_EVENT
#error "define TCPTW_EVENT(id, name) before including this list"
#endif

TCPTW_EVENT(TW_OVERFLOW, "tw_overflow")
TCPTW_EVENT(TW_PAWS_REJECTED, "tw_paws_rejected")
TCPTW_EVENT(TW_SYN_PAWS_REJECTED, "tw_syn_paws_rejected")
TCPTW_EVENT(TW_SYN_SEQ_REJECTED, "tw_syn_seq_rejected")
TCPTW_EVENT(TW_SYN_RECYCLED, "tw_syn_recycled")
TCPTW_EVENT(TW_KILLED_BY_RST, "tw_killed_by_rst")
TCPTW_EVENT(TW_RST_SENT, "tw_rst_sent")
TCPTW_EVENT(TW_REUSE_GRANTED, "tw_reuse_granted")
TCPTW_EVENT(TW_REUSE_DENIED, "tw_reuse_denied")
TCPTW_EVENT(CONNECT_PORT_EXHAUSTED, "connect_port_exhausted")
TCPTW_EVENT(CONNECT_TUPLE_IN_USE, "connect_tuple_in_use")
TCPTW_EVENT(LISTEN_OVERFLOW, "listen_overflow")
TCPTW_EVENT(LISTEN_SYN_DROP, "listen_syn_drop")
TCPTW_EVENT(LISTEN_SYN_COOKIE, "listen_syn_cookie")
TCPTW_EVENT(PAWS_ESTAB_REJECTED, "paws_estab_rejected")
TCPTW_EVENT(PAWS_SYNRECV_REJECTED, "paws_synrecv_rejected")
TCPTW_EVENT(PAWS_ACTIVE_REJECTED, "paws_active_rejected")
TCPTW_EVENT(CONNTRACK_TABLE_FULL, "conntrack_table_full")
TCPTW_EVENT(CONNTRACK_INSERT_FAILED, "conntrack_insert_failed")
TCPTW_EVENT(RST_SENT, "rst_sent")
TCPTW_EVENT(RST_RECEIVED, "rst_received")

#undef TCPTW_EVENT
