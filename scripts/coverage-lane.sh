#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# coverage-lane.sh K : the coverage set on kernel K in one guest, with the
# test build's hook-call counts (TCPTW_COVERAGE=1): every hook tcptw
# attached there must fire at least once, the kernel log must stay free
# of BUG/WARNING/KASAN/lockdep/RCU/atomic-sleep reports, and kmemleak
# must find nothing of tcptw's after the last rmmod (selftests/run_vm.sh
# checks all three). On a debug kernel (6.1-debug: ftrace entries with
# kprobes behind them, 7.2-debug: ftrace entries with fprobes behind them)
# this is the proof of docs/testing.md's debug lane;
# on a stock kernel it checks that the set still fires every hook.
#
# The set, measured per case on stock 6.1 and 7.2 (each case alone, the
# hooks it fired): the cases below fire every hook of both kernels
# (SYN cookies: synflood; tcp_oow_rate_limited and the active reset:
# paws_other's established case; nf_conntrack's early_drop and its
# statistics' cleanup: conntrack's table-full case; nf_ct_resolve_clash:
# conntrack's SNAT clash; tcp_receive_reset and the /proc files
# across namespace deletion and rmmod: netns_memory; RSTs sent from
# process context: backlog_rst; TIME_WAIT overflow and the ACK-time
# overflow: tw_overflow and run; inet_twsk_deschedule_put: syn_recycled's
# same-port case, a SYN that recycles a TIME_WAIT socket on purpose,
# since the others fire it only when a socket dies early by timing), and
# load_race races the module's load with live traffic. About 150 s on
# the stock kernels, 11 times that on a debug kernel.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
k=${1:?usage: coverage-lane.sh KERNEL (6.1-debug, 7.2-debug, or a stock kernel)}

SCRIPTS="tcptw_synflood.sh tcptw_paws_other.sh tcptw_conntrack.sh
tcptw_netns_memory.sh tcptw_load_race.sh tcptw_tw_overflow.sh tcptw_run.sh
tcptw_backlog_rst.sh tcptw_syn_recycled.sh"
CASES="tcptw_paws_other.sh:test_estab* tcptw_conntrack.sh:test_table_full
tcptw_conntrack.sh:test_snat_clash
tcptw_netns_memory.sh:test_fd_outlives_netns tcptw_tw_overflow.sh:test_overflow*
tcptw_run.sh:test_overflow tcptw_syn_recycled.sh:test_same_port*"

scripts/kernels.sh fetch "$k" >&2 || exit 1
scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k" >&2 &&
	scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k-test" TCPTW_TEST=1 >&2 ||
	exit 1
make -s -C userspace >&2 && make -s -C selftests >&2 || exit 1

# the lane's bound: 60 minutes of one guest, boot included
export VM_TIMEOUT=${VM_TIMEOUT:-3600}
t0=$SECONDS
# shellcheck disable=SC2086 # the lists, split on purpose
scripts/vng-run.sh "$k" "TCPTW_COVERAGE=1 TCPTW_CASES='$(echo $CASES)' selftests/run_vm.sh .cache/build/$k/tcptw.ko $(echo $SCRIPTS)"
rc=$?
echo "coverage-lane: $k: exit $rc after $((SECONDS - t0)) s"
exit $rc
