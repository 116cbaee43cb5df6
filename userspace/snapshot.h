/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_SNAPSHOT_H
#define _TCPTW_SNAPSHOT_H

#include <stdbool.h>
#include <time.h>

#include "counters.h"
#include "ct.h"
#include "ct_census.h"
#include "diagnose.h"
#include "events.h"
#include "census.h"
#include "sysctl.h"
#include "tables.h"

/* Everything tcptw reads at one instant in one netns. */
enum {
	SNAP_CT = 1 << 0,	/* conntrack count, max, statistics */
	SNAP_CENSUS = 1 << 1,	/* sock_diag dump */
	SNAP_TABLES = 1 << 2,	/* the module's events, peers, listeners */
	SNAP_HIST = 1 << 3,	/* the hist table, for display */
	SNAP_HISTCTR = 1 << 4,	/* its buckets as counters, for deltas */
	SNAP_ALL = 0x1f,
	/* the conntrack table's entries, dumped (not in SNAP_ALL: costly) */
	SNAP_CTCENSUS = 1 << 5,
};

struct snapshot {
	double ts;		/* CLOCK_REALTIME */
	char netns_id[64];	/* "net:[inode]" of the netns read, or "" */
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id, or "" */
	bool complete;		/* a loaded baseline ended with its #end line */
	double mono;		/* CLOCK_MONOTONIC: intervals */
	bool module;		/* /proc/net/tcptw/counters exists */
	int mod_err;		/* -errno reading it */
	struct ctrset mod;	/* the module's counters */
	struct ctrset mib;	/* /proc/net/netstat + /proc/net/snmp */
	int mib_err;
	struct sysctls sys;
	bool have_ct;
	struct ct_info ct;
	bool have_ctc;		/* SNAP_CTCENSUS: what fills the table */
	int ctc_err;
	struct ct_census ctc;
	bool have_census;
	int census_err;
	struct census census;
	int events_err, peers_err, listeners_err, hist_err;
	struct event_list events;
	struct table peers, listeners, hist;
	/* hist buckets as counters "<histogram>.<le_ms bound>" (SNAP_HISTCTR) */
	struct ctrset histc;
};

int snapshot_take(struct snapshot *s, unsigned int what);
void snapshot_free(struct snapshot *s);

/*
 * A baseline file: "#tcptw-baseline 1" (the format's version), "#ts
 * <seconds>", "#netns net:[inode]", "#boot_id <uuid>", then one "Name
 * value" line per counter, names prefixed "tcptw.", "mib.", "ct." or
 * "hist." (snmp6 format, so awk and nstat-style tools read it too), then
 * "#end <number of counters>". 0.3.0's files lack all but "#ts" and the
 * counters; they are read, and baseline_check() warns.
 */
#define SNAPSHOT_VERSION_LINE "#tcptw-baseline 1"
int snapshot_save(const struct snapshot *s, const char *path);
/*
 * Counters, ts, netns_id, boot_id, complete; other fields empty. -errno;
 * -EINVAL: not a baseline, and why in @why (every line is checked: a
 * header or a counter with a decimal value, a sane #ts, no line twice).
 */
int snapshot_load(struct snapshot *s, const char *path, char *why,
		  size_t len);

enum baseline_verdict {
	BASE_OK,
	BASE_OLD_FORMAT,	/* no netns/boot id (older tcptw): a warning */
	BASE_TRUNCATED,		/* refused */
	BASE_OTHER_NETNS,	/* refused */
	BASE_OTHER_BOOT,	/* refused: the counters restarted since */
	BASE_FUTURE,		/* refused: dated after @now */
};

/*
 * Can @base be compared with @cur, read at @now (CLOCK_REALTIME)? @why
 * gets a sentence saying what is wrong with it. An unknown id on either
 * side (a fixture tree) is not checked.
 */
enum baseline_verdict baseline_check(const struct snapshot *base,
				     const struct snapshot *cur, double now,
				     char *why, size_t len);

/* The deltas a diagnosis window needs, owned here, pointed to by in. */
struct diag_window {
	struct deltaset mod, mib, ct, hist;
};

/* Fill @in from two snapshots @secs apart. -ENOMEM. */
int snapshot_diag_input(const struct snapshot *base,
			const struct snapshot *cur, double secs,
			struct diag_window *w, struct diag_input *in);
void diag_window_free(struct diag_window *w);

/*
 * The deadline after @next for a fixed period @interval (CLOCK_MONOTONIC
 * seconds): @next + @interval, or, when a sample overran it and @now is
 * already past that, the first tick of the same grid after @now. Sampling
 * on this grid keeps the period whatever a sample costs.
 */
double tick_next(double next, double now, double interval);
/* clock_gettime(@clk) in seconds */
double snapshot_clock(clockid_t clk);

/* The kernel MIBs tcptw shows beside its own (nstat names). */
bool mib_relevant(const char *name);

#endif /* _TCPTW_SNAPSHOT_H */
