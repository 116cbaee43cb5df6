/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_CMDS_H
#define _TCPTW_CMDS_H

#include <stdbool.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "output.h"
#include "snapshot.h"

/* Exit codes, documented in tcptw(8). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,	/* "tcptw: what: why" on stderr */
	EXIT_USAGE = 2,
	EXIT_FOUND = 3,		/* diagnose named at least one cause */
};

struct opts {
	bool json;
	bool pretty;		/* -p: indented JSON */
	bool all_netns;		/* -A: every netns in turn */
	bool follow;
	bool prometheus;
	double interval;	/* watch -i */
	long count;		/* watch -c, 0: until interrupted */
	double since;		/* diagnose --since */
	const char *baseline;
	const char *save_baseline;
	const char *netns;
	pid_t pid;
	char label[128];	/* netns label for output */
};

int cmd_stat(const struct opts *o);
int cmd_watch(const struct opts *o);
int cmd_sockets(const struct opts *o);
int cmd_events(const struct opts *o);
int cmd_peers(const struct opts *o);
int cmd_listeners(const struct opts *o);
int cmd_export(const struct opts *o);
int cmd_diagnose(const struct opts *o);

/* Shared by the commands. */
extern atomic_int tcptw_stop;
void install_stop_handlers(void);
/* Sleep up to @secs; false if interrupted by SIGINT/SIGTERM. */
bool sleep_interruptible(double secs);
/* Sleep until CLOCK_MONOTONIC reads @deadline; false if interrupted. */
bool sleep_until(double deadline);
int fail(const char *what, int err);
void module_note(struct out *o, const struct snapshot *s);
void module_hint_once(const struct snapshot *s, const char *what);
const char *module_hint(void);

#endif /* _TCPTW_CMDS_H */
