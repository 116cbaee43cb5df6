/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
/* What the commands (cmd_*.c) share. */
#ifndef _TCPTW_UTIL_H
#define _TCPTW_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cmds.h"
#include "output.h"
#include "snapshot.h"

/* Set by SIGINT/SIGTERM once install_stop_handlers() ran. */
extern atomic_int tcptw_stop;
void install_stop_handlers(void);
/* Sleep up to @secs; false if interrupted by SIGINT/SIGTERM. */
bool sleep_interruptible(double secs);
/* Sleep until CLOCK_MONOTONIC reads @deadline; false if interrupted. */
bool sleep_until(double deadline);
/* "tcptw: @what: strerror(@err)" on stderr (either sign); EXIT_RUNTIME. */
int fail(const char *what, int err);
void module_note(struct out *o, const struct snapshot *s);
void module_hint_once(const struct snapshot *s, const char *what);
const char *module_hint(void);
void print_header(struct out *o, const char *label, double ts);
/*
 * @fn in this netns, or with --all-netns in every netns in turn; an exit
 * status, the last failure's if any.
 */
int each_netns(const struct opts *opt,
	       int (*fn)(const struct opts *opt, const char *label, void *arg),
	       void *arg);
/* 0 if tcptw.ko is loaded, else says so for @what: EXIT_RUNTIME. */
int need_module(const char *what);
/* A module table that could not be read: EPERM says what it needs. */
int table_err(const char *file, int err);
/*
 * The counters of @d that moved, plain ("@indent  Name delta rate/s") and
 * JSON ("@key":{"Name":{"value","delta","rate"}}); @mib: only the MIBs
 * tcptw shows (mib_relevant()).
 */
void print_moved(struct out *o, const char *key, const struct deltaset *d,
		 bool mib, const char *indent);
/*
 * diagnose's findings, as diagnose and run print them: "verdict" and
 * "findings"; "no evidence of: ..." (plain, none found); "caveats".
 */
void print_findings(struct out *o, const struct diag_result *r);
void print_finding(struct out *o, const struct finding *f);
void print_no_evidence(struct out *o, const struct diag_result *r);
void print_caveats(struct out *o, const struct diag_result *r,
		   const char *indent);
/*
 * Plain: @text after @label, word-wrapped at 78 columns and indented under
 * its first line. JSON: the string as is, under @key.
 */
void print_wrapped(struct out *o, const char *key, const char *label,
		   const char *text);

#endif /* _TCPTW_UTIL_H */
