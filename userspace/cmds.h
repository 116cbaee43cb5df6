/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
/* The commands (cmd_<name>.c), their options and exit codes. */
#ifndef _TCPTW_CMDS_H
#define _TCPTW_CMDS_H

#include <stdbool.h>
#include <sys/types.h>

#include "ct_census.h"

/* Exit codes, documented in tcptw(8). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,	/* "tcptw: what: why" on stderr */
	EXIT_USAGE = 2,
	EXIT_FOUND = 3,		/* diagnose named at least one cause */
};

/* run: -N may be given this many times */
#define OPTS_MAX_NETNS 16

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
	/* run: every -N, and the command after "--" */
	const char *netns_v[OPTS_MAX_NETNS];
	int n_netns;
	bool fail_on_diagnosis;
	const char *output;	/* run -o: the report's file, else stderr */
	char **cmd_argv;
	int cmd_argc;
	/* conntrack: its filters, -C, -n */
	struct ctc_filter ct_filter;
	bool ct_count_only;
	long ct_top;
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
int cmd_run(const struct opts *o);
int cmd_conntrack(const struct opts *o);

#endif /* _TCPTW_CMDS_H */
