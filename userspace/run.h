/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw run's state, shared by cmd_run.c (the run) and run_report.c. */
#ifndef _TCPTW_RUN_H
#define _TCPTW_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cmds.h"
#include "run_sig.h"
#include "snapshot.h"

/* A gauge's value at the start, at its peak and at the end of the run */
struct gauge_track {
	bool have;
	uint64_t start, peak, end;
};

/* One netns watched during the run. */
struct target {
	int fd;			/* the netns, held open */
	char name[128];		/* as given: -N NAME, "pid:N", or "" */
	char label[128];
	struct snapshot base;	/* before CMD */
	struct snapshot last;	/* the previous tick, for the rates */
	bool have_base, have_last;
	struct gauge_track tw;	/* TIME_WAIT sockets */
	struct gauge_track ct;	/* conntrack entries (nf_conntrack_count) */
};

struct run {
	struct target *t;
	size_t n;
	int self;		/* tcptw's own netns: CMD runs there */
	pid_t pid;
	double start, start_mono, secs;
	int status;		/* waitpid()'s */
	struct run_sig sig;
	FILE *out;		/* -o FILE, opened before CMD runs; or NULL */
	bool status_shown;	/* the status line is on the terminal */
};

/* Into @t's netns (no setns() if tcptw is in it); -errno, said on stderr. */
int run_target_enter(const struct target *t);
/*
 * The TIME_WAIT sockets' and the conntrack entries' start, peak and end
 * of @t, from the census and the conntrack count of @s.
 */
void run_track(struct target *t, const struct snapshot *s);
/*
 * The report, written whole once it is complete: on stderr, or to -o
 * FILE; *@found when diagnose named a cause. An exit status.
 */
int run_report_write(const struct opts *opt, struct run *r, bool *found);

#endif /* _TCPTW_RUN_H */
