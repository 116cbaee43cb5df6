#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# coverage-lane.sh K : the coverage set (scripts/lane.sh) on kernel K in
# one guest, with the test build's hook-call counts (TCPTW_COVERAGE=1):
# every hook tcptw attached there must fire at least once, the kernel log
# must stay free of BUG/WARNING/KASAN/lockdep/RCU/atomic-sleep reports,
# and kmemleak must find nothing of tcptw's after the last rmmod
# (selftests/run_vm.sh checks all three). On a debug kernel (6.1-debug:
# ftrace entries with kprobes behind them, 7.2-debug: ftrace entries with
# fprobes behind them) this is the proof of docs/testing.md's debug lane;
# on a stock kernel it checks that the set still fires every hook.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lane.sh"
k=${1:?usage: coverage-lane.sh KERNEL (6.1-debug, 7.2-debug, or a stock kernel)}

# shellcheck disable=SC2086 # the list, split on purpose
lane_run coverage-lane "$k" \
	"TCPTW_COVERAGE=1 TCPTW_CASES='$(echo $COVERAGE_CASES)'" \
	"$COVERAGE_SCRIPTS"
