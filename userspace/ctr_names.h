/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_CTR_NAMES_H
#define _TCPTW_CTR_NAMES_H

/*
 * The module's counters as the CLI names them: the one list of
 * kmod/uapi/tcptw_counters.h, so that no counter's name is written here
 * by hand: CTR(TW_OVERFLOW) is the name TwOverflow.
 */
enum ctr_id {
#define TCPTW_COUNTER(id, name, how, help) CTR_##id,
#include "../kmod/uapi/tcptw_counters.h"
	CTR_NR
};

/* the prefix of the counters one Prometheus family carries by reason */
#define TCPTW_REUSE_DENIED_PREFIX "TwReuseDenied"

/* the module's event types: EV(TW_SYN_PAWS_REJECTED) is its name */
enum ev_id {
#define TCPTW_EVENT(id, name) EV_##id,
#include "../kmod/uapi/tcptw_events.h"
	EV_NR
};

extern const char *const ctr_names[CTR_NR];
extern const char *const ev_names[EV_NR];
extern const char *const ctr_helps[CTR_NR];

#define CTR(id) (ctr_names[CTR_##id])
#define EV(id) (ev_names[EV_##id])

#endif
