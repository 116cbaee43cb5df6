#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# kcsan-lane.sh [K] : the KCSAN lane (docs/testing.md: Lanes) in one guest
# of K (default 7.2-kcsan: scripts/debug-kernel.sh's kcsan flavour, the
# data race detector with its interrupt watcher; 7.2 because its
# tracepoint handlers are preemptible) with two vCPUs: the coverage set
# (scripts/coverage-lane.sh: every hook fired), the races the test build
# opens on purpose (tfo_race, tables' nested counts) and the floods, while
# KCSAN watches every access of tcptw's. selftests/run_vm.sh sorts KCSAN's
# reports (TCPTW_KCSAN=1): one with a frame of tcptw's fails the lane; the
# kernel's own are listed. Not part of make check.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
k=${1:-7.2-kcsan}

SCRIPTS="tcptw_synflood.sh tcptw_paws_other.sh tcptw_conntrack.sh
tcptw_netns_memory.sh tcptw_load_race.sh tcptw_tw_overflow.sh tcptw_run.sh
tcptw_backlog_rst.sh tcptw_syn_recycled.sh tcptw_tfo_race.sh tcptw_tables.sh"
CASES="tcptw_paws_other.sh:test_estab* tcptw_conntrack.sh:test_table_full
tcptw_conntrack.sh:test_snat_clash
tcptw_netns_memory.sh:test_fd_outlives_netns tcptw_tw_overflow.sh:test_overflow*
tcptw_run.sh:test_overflow tcptw_syn_recycled.sh:test_same_port*
tcptw_tables.sh:test_nest tcptw_tables.sh:test_stream"

scripts/kernels.sh fetch "$k" >&2 || exit 1
scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k" >&2 &&
	scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k-test" TCPTW_TEST=1 >&2 ||
	exit 1
make -s -C userspace >&2 && make -s -C selftests >&2 || exit 1

# two vCPUs: races between CPUs, not only between a task and an interrupt
export VM_CPUS=${VM_CPUS:-2}
export VM_TIMEOUT=${VM_TIMEOUT:-3600}
t0=$SECONDS
# shellcheck disable=SC2086 # the lists, split on purpose
scripts/vng-run.sh "$k" "TCPTW_KCSAN=1 TCPTW_COVERAGE=1 TCPTW_CASES='$(echo $CASES)' selftests/run_vm.sh .cache/build/$k/tcptw.ko $(echo $SCRIPTS)"
rc=$?
echo "kcsan-lane: $k: exit $rc after $((SECONDS - t0)) s"
exit $rc
