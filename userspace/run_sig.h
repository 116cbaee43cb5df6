/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw run's job-control contract, as perf stat's and time's: CMD gets
 * each signal once, keeps the dispositions tcptw inherited, and tcptw
 * dies of the signal CMD died of.
 */
#ifndef _TCPTW_RUN_SIG_H
#define _TCPTW_RUN_SIG_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct run_sig {
	sigset_t orig;		/* the mask tcptw started with: CMD's */
	sigset_t waitmask;	/* what ppoll() lets in */
	struct sigaction chld;	/* SIGCHLD as inherited, for CMD */
	pid_t cmd;		/* CMD, once forked */
	pid_t witness;		/* see run_sig.c; 0: none */
	bool interrupted;	/* a signal to stop was received */
};

/* Handlers in place, signals blocked but in ppoll(), the witness; -errno. */
int run_sig_init(struct run_sig *rs);
/* In the child, before exec: the mask and SIGCHLD as inherited. */
void run_sig_child(const struct run_sig *rs);
/* CMD is forked: the process signals are passed on to. */
void run_sig_started(struct run_sig *rs, pid_t cmd);
/* The signals received since the last call, passed on to CMD or not. */
void run_sig_dispatch(struct run_sig *rs);
/* CMD has ended: the witness goes, the handlers are the inherited ones. */
void run_sig_fini(struct run_sig *rs);
/* CMD died of a signal (waitpid()'s @status): die of it too, else return. */
void run_sig_die_as(int status);

#endif /* _TCPTW_RUN_SIG_H */
