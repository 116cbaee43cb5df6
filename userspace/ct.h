/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_CT_H
#define _TCPTW_CT_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"

/*
 * Conntrack table fill and statistics of the current netns. Per-CPU
 * statistics are summed; names follow conntrack -S (found, invalid, insert,
 * insert_failed, drop, early_drop, error, search_restart, clash_resolve,
 * chaintoolong).
 */
struct ct_info {
	bool have_count, have_max, have_stats;
	uint64_t count, max;
	struct ctrset stats;
	const char *source;	/* "netlink", "proc" or "none" */
	int err;		/* why netlink was not used: -errno */
};

/* Netlink (ctnetlink via libmnl) first, /proc second. */
int ct_read(struct ct_info *ct);
void ct_free(struct ct_info *ct);
/* ctnetlink statistics only (count/max too where the kernel has them). */
int ct_read_netlink(struct ct_info *ct);
/* /proc/net/stat/nf_conntrack: hex per-CPU rows, summed into @stats. */
int ct_parse_proc_stat(const char *buf, struct ctrset *stats,
		       uint64_t *entries);

#endif /* _TCPTW_CT_H */
