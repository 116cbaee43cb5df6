#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# kcsan-lane.sh [K] : the KCSAN lane (docs/testing.md: Lanes) in one guest
# of K (default 7.2-kcsan: scripts/debug-kernel.sh's kcsan flavour, the
# data race detector with its interrupt watcher; 7.2 because its
# tracepoint handlers are preemptible) with two vCPUs: the coverage set
# (scripts/lane.sh: every hook fired), the races the test build opens on
# purpose (tfo_race, tables' nested counts) and the floods, while KCSAN
# watches every access of tcptw's. selftests/run_vm.sh sorts KCSAN's
# reports (TCPTW_KCSAN=1): one with a frame of tcptw's fails the lane; the
# kernel's own are listed. Not part of make check.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lane.sh"
k=${1:-7.2-kcsan}

# two vCPUs: races between CPUs, not only between a task and an interrupt
export VM_CPUS=${VM_CPUS:-2}
# shellcheck disable=SC2086 # the list, split on purpose
lane_run kcsan-lane "$k" \
	"TCPTW_KCSAN=1 TCPTW_COVERAGE=1 TCPTW_CASES='$(echo $COVERAGE_CASES tcptw_tables.sh:test_nest tcptw_tables.sh:test_stream)'" \
	"$COVERAGE_SCRIPTS tcptw_tfo_race.sh tcptw_tables.sh"
