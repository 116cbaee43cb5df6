#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# TIME_WAIT bucket overflow on the server:
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:8080
#                                  net.ipv4.tcp_max_tw_buckets=10
#
# The server closes first, so each connection would leave a TIME_WAIT
# socket on srv; with the limit at 10, the first 10 get one and the other
# 30 are closed at once (TcpExt TCPTimeWaitOverflow). Asserted: tcptw's
# TwOverflow == TCPTimeWaitOverflow delta == N - limit (30) and TwCreated
# == TcpExt TW delta == TIME_WAIT sockets seen (10); with the default
# limit: TwOverflow == 0, TwCreated == 40. Both counters are the kernel's
# MIBs on 6.1+ (docs/design.md): the topology is the ground truth.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat
require_traffic
require_module

N=40
LIMIT=10

# run_overflow NAME DST LIMIT : sets OUT and the D_* deltas.
run_overflow()
{
	local name=$1 dst=$2 limit=$3
	local b_ovf b_tw b_tovf b_tcr a_ovf a_tw

	OUT=$TMPDIR_T/$name.client.json
	if ! pair_setup; then
		check_err 1 "setup failed"
		return 1
	fi
	if [ -n "$limit" ]; then
		nsx "$srv" sysctl -qw net.ipv4.tcp_max_tw_buckets="$limit"
	fi
	diag "srv tcp_max_tw_buckets=$(nsx "$srv" sysctl -n net.ipv4.tcp_max_tw_buckets)"
	if ! server_start "$srv" "$TMPDIR_T/$name.server.json" \
	     --listen "$dst" --count $N --timeout 60 --close-first server; then
		check_err 1 "server did not start"
		return 1
	fi
	b_ovf=$(mib "$srv" TcpExtTCPTimeWaitOverflow)
	b_tw=$(mib "$srv" TcpExtTW)
	b_tovf=$(tw_counter "$srv" TwOverflow)
	b_tcr=$(tw_counter "$srv" TwCreated)
	timeout 90 "$TRAFFIC" client --connect "$dst" --count $N \
		--netns "$(nspath "$cli")" --close-first server --barrier \
		--timeout 60 >"$OUT"
	check_err $? "client failed"
	bg_wait "$SERVER_PID"
	a_ovf=$(mib "$srv" TcpExtTCPTimeWaitOverflow)
	a_tw=$(mib "$srv" TcpExtTW)
	D_OVF=$((a_ovf - b_ovf))
	D_TW=$((a_tw - b_tw))
	D_TOVF= D_TCR=
	if [ "$HAVE_MODULE" = 1 ]; then
		D_TOVF=$(( $(tw_counter "$srv" TwOverflow) - b_tovf ))
		D_TCR=$(( $(tw_counter "$srv" TwCreated) - b_tcr ))
	fi
	diag "client: $(cat "$OUT")"
	diag "srv TCPTimeWaitOverflow=$D_OVF TW=$D_TW | TwOverflow=$D_TOVF TwCreated=$D_TCR"
	check_eq "client connections ok" "$(json_get "$OUT" ok)" $N
	# New client port each time: nothing recycles or kills these, so the
	# TIME_WAIT sockets still there are the ones created.
	TW_LEFT=$(tw_sockets "$srv")
	check_tw_mib "srv TcpExt TW == TIME_WAIT sockets" "$D_TW" "$TW_LEFT"
	D_TW=$(tw_created_truth "$D_TW" "$TW_LEFT")
}

test_overflow()
{
	local fam=$1 dst=$2

	test_begin "overflow $fam"
	if ! probe_gate tcp_timewait_state_process; then
		log_test "tw_overflow: $fam: TwOverflow == TCPTimeWaitOverflow with tcp_max_tw_buckets=$LIMIT"
		return
	fi
	run_overflow "ovf_$fam" "$dst" $LIMIT
	check_eq "srv TcpExt TCPTimeWaitOverflow == N - limit" "$D_OVF" $((N - LIMIT))
	check_eq "srv TIME_WAIT sockets created == limit" "$D_TW" $LIMIT
	# the connections past the limit, not the MIB tcptw reads
	check_mod_eq "srv TwOverflow == N - limit" "$D_TOVF" $((N - LIMIT))
	check_mod_eq "srv TwCreated == TcpExt TW" "$D_TCR" "$D_TW"
	# the counters are the kernel's (mib.c), and no hook sees an
	# overflow: no event is recorded for it
	cleanup_all_ns
	log_test "tw_overflow: $fam: TwOverflow == TCPTimeWaitOverflow with tcp_max_tw_buckets=$LIMIT"
}

test_default_limit()
{
	test_begin "default limit"
	if ! probe_gate tcp_timewait_state_process; then
		log_test "tw_overflow: control: default tcp_max_tw_buckets -> TwOverflow 0"
		return
	fi
	run_overflow ovf_default 198.18.0.2:8080 ""
	check_eq "srv TcpExt TCPTimeWaitOverflow" "$D_OVF" 0
	check_eq "srv TIME_WAIT sockets created == N" "$D_TW" $N
	check_mod_eq "srv TwOverflow" "$D_TOVF" 0
	check_mod_eq "srv TwCreated == TcpExt TW" "$D_TCR" "$D_TW"
	cleanup_all_ns
	log_test "tw_overflow: control: default tcp_max_tw_buckets -> TwOverflow 0"
}

tests_run \
	"test_overflow ipv4 198.18.0.2:8080" \
	"test_overflow ipv6 '[fd00::2]:8080'" \
	test_default_limit
