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
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
k=${1:-6.1-debug}

scripts/kernels.sh fetch "$k" >&2 || exit 1
scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k" >&2 &&
	scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k-test" TCPTW_TEST=1 >&2 ||
	exit 1
make -s -C userspace >&2 && make -s -C selftests >&2 || exit 1

# the lane's bound: 60 minutes of one guest, boot included
export VM_TIMEOUT=${VM_TIMEOUT:-3600}
t0=$SECONDS
scripts/vng-run.sh "$k" "TCPTW_FAULTS=1 selftests/run_vm.sh .cache/build/$k/tcptw.ko fault_sweep.sh"
rc=$?
echo "fault-lane: $k: exit $rc after $((SECONDS - t0)) s"
exit $rc
