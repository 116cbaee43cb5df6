#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# fault-lane.sh [K] : the fault lane (docs/testing.md: Lanes) in one guest
# of debug kernel K (default 6.1-debug; it needs CONFIG_FAULT_INJECTION,
# FAILSLAB and FAIL_PAGE_ALLOC, which scripts/debug-kernel.config turns
# on): selftests/fault_sweep.sh fails every allocation of tcptw's load,
# of its part of a namespace's creation, of each /proc read, of a control
# write and of nf_conntrack's load (which attaches tcptw's conntrack
# hooks), one at a time; selftests/run_vm.sh then asserts no kernel
# report and nothing of tcptw's in kmemleak. Not part of make check.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lane.sh"

lane_run fault-lane "${1:-6.1-debug}" TCPTW_FAULTS=1 fault_sweep.sh
