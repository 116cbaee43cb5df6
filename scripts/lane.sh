#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# lane.sh : sourced by the lanes run by hand (coverage-lane.sh,
# kcsan-lane.sh, fault-lane.sh; docs/testing.md: Lanes): the coverage set,
# and lane_run, which builds what a lane needs and runs it in one guest.
#
# The coverage set, measured per case on stock 6.1 and 7.2 (each case
# alone, the hooks it fired): the cases below fire every hook of both
# kernels (SYN cookies: synflood; tcp_oow_rate_limited and the active
# reset: paws_other's established case; nf_conntrack's early_drop and its
# statistics' cleanup: conntrack's table-full case; nf_ct_resolve_clash:
# conntrack's SNAT clash; tcp_receive_reset and the /proc files across
# namespace deletion and rmmod: netns_memory; RSTs sent from process
# context: backlog_rst; TIME_WAIT overflow and the ACK-time overflow:
# tw_overflow and run; inet_twsk_deschedule_put: syn_recycled's same-port
# case, a SYN that recycles a TIME_WAIT socket on purpose, since the
# others fire it only when a socket dies early by timing), and load_race
# races the module's load with live traffic. About 150 s on the stock
# kernels, 11 times that on a debug kernel.
# shellcheck disable=SC2034 # used by the lanes that source this file
COVERAGE_SCRIPTS="tcptw_synflood.sh tcptw_paws_other.sh tcptw_conntrack.sh
tcptw_netns_memory.sh tcptw_load_race.sh tcptw_tw_overflow.sh tcptw_run.sh
tcptw_backlog_rst.sh tcptw_syn_recycled.sh"
# shellcheck disable=SC2034
COVERAGE_CASES="tcptw_paws_other.sh:test_estab* tcptw_conntrack.sh:test_table_full
tcptw_conntrack.sh:test_snat_clash
tcptw_netns_memory.sh:test_fd_outlives_netns tcptw_tw_overflow.sh:test_overflow*
tcptw_run.sh:test_overflow tcptw_syn_recycled.sh:test_same_port*"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1

# lane_run NAME K ENV SCRIPTS : kernel K fetched, the module built (normal
# and test build, the latter with line numbers for the fault lane's
# sites), the CLI and the helpers; then selftests/run_vm.sh with
# the normal build and the words of ENV (VAR=value ...) over SCRIPTS in
# one guest, bounded by VM_TIMEOUT (default 60 minutes, boot included).
# Its exit status, and the lane's time on stdout.
lane_run()
{
	local name=$1 k=$2 env=$3 scripts=$4 t0=$SECONDS rc

	scripts/kernels.sh fetch "$k" >&2 || return 1
	scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k" >&2 &&
		scripts/build-kmod.sh "$k" "$REPO/.cache/build/$k-test" TCPTW_TEST=1 \
			KCFLAGS=-g >&2 ||
		return 1
	make -s -C userspace >&2 && make -s -C selftests >&2 || return 1
	export VM_TIMEOUT=${VM_TIMEOUT:-3600}
	# shellcheck disable=SC2086 # the list, split on purpose
	scripts/vng-run.sh "$k" "$env selftests/run_vm.sh .cache/build/$k/tcptw.ko $(echo $scripts)"
	rc=$?
	echo "$name: $k: exit $rc after $((SECONDS - t0)) s"
	return $rc
}
