/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_DIAGNOSE_H
#define _TCPTW_DIAGNOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "events.h"
#include "census.h"
#include "ct_census.h"
#include "sysctl.h"
#include "tables.h"

/*
 * The diagnosis rules: pure functions of counter deltas over a window and
 * of the state at its end. A rule fires only on a counter that moved or a
 * measured level; otherwise the verdict is "no evidence".
 */
struct diag_input {
	double secs;			/* window length */
	bool module;			/* tcptw.ko counters present */
	const struct deltaset *mod;	/* module counter deltas */
	const struct deltaset *mib;	/* TcpExt/Tcp deltas */
	const struct deltaset *ct;	/* conntrack stat deltas, or NULL */
	/*
	 * hist bucket deltas, "<histogram>.<le_ms>"; idle_hist: the module
	 * has rst_received_idle
	 */
	const struct deltaset *hist;
	bool idle_hist;
	const struct sysctls *sys;
	bool ct_have_count;
	uint64_t ct_count, ct_max;
	const struct census *census;	/* NULL if not taken */
	const struct ct_census *ctc;	/* what fills conntrack, or NULL */
	const struct event_list *events;	/* NULL if unreadable */
	int events_err;
	const struct table *peers;	/* NULL if unreadable */
	const struct table *listeners;	/* NULL if unreadable */
};

enum evk { EVK_DELTA, EVK_VALUE, EVK_SHARE, EVK_LISTENER };

struct evidence {
	char name[80];
	int64_t v;
	double x;		/* rate (DELTA), share (SHARE) */
	uint64_t a, b;		/* LISTENER: backlog, max_backlog */
	enum evk kind;
};

#define DIAG_MAX_EV 16
#define DIAG_MAX_PEERS 8
#define DIAG_MAX_NOTES 5
#define DIAG_MAX 12
#define DIAG_MAX_CMDS 6

struct finding {
	const char *id;
	char title[112];
	struct evidence ev[DIAG_MAX_EV];
	int nev;
	struct peer_count peers[DIAG_MAX_PEERS];
	int npeers;
	const char *peers_from;	/* "events" or "peers" */
	char notes[DIAG_MAX_NOTES][240];
	int nnotes;
	char remedy[720];
	/*
	 * The part of the remedy that is this host's settings, as shell
	 * commands to run as root (diagnose -j "commands"); app: the rest
	 * is the application's, its peers' or a NAT's to change
	 */
	char cmds[DIAG_MAX_CMDS][240];
	int ncmds;
	bool app;
};

struct diag_result {
	struct finding f[DIAG_MAX];
	int n;
	char caveats[DIAG_MAX_NOTES][240];	/* what could not be checked */
	int ncaveats;
	bool idle_untold;	/* resets seen, but no histogram to judge them */
};

void diagnose_run(const struct diag_input *in, struct diag_result *r);
/* 0.8: the share of the ephemeral range that counts as exhaustion risk. */
#define DIAG_PORT_SHARE 0.8
#define DIAG_CT_FILL 0.95
/* Idle timeout of common NATs (AWS NAT gateway, NLB), seconds. */
#define DIAG_NAT_IDLE_S 350
/*
 * A RST after this much silence (ms, a hist bucket's lower bound) counts
 * as an idle flow forgotten by a NAT or load balancer.
 */
#define DIAG_IDLE_RST_MS 4096

#endif /* _TCPTW_DIAGNOSE_H */
