#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# A BPF fexit program on a function tcptw hooks at entry and return,
# attached before tcptw loads (x86-64: the ftrace hooks; 5.10's bpftrace
# has no kretfunc, so 6.1, 6.12 and 7.2).
#
#   cli 198.18.6.1 --eth0---eth0-- srv 198.18.6.2:8310
#   srv: bpftrace 'kretfunc:tcp_conn_request { @n = count(); }'
#
# On 6.1 an IPMODIFY ftrace_ops and a BPF trampoline on one function agree
# to share it only when the ops is registered; tcptw first added later
# sites to one shared, already registered ops, so the trampoline returned
# past tcptw's wrapper: the hook saw nothing while the probes file said
# attached, and rmmod waited forever for calls it counted as inside the
# wrapper. On 5.10 the two refuse each other and tcptw's hook would fall
# back to a kretprobe (bookworm's bpftrace has no kretfunc there: skipped).
# Asserted, with the test build's hit counts: N
# connections, tcptw's tcp_conn_request hook saw N calls, bpftrace
# counted N, and rmmod returns within 60 s.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip insmod rmmod bpftrace
require_traffic
require_module

N=20
SRV=198.18.6.2
PORT=8310
FN=tcp_conn_request
HITS=/sys/module/tcptw/parameters/test_hits

# unload_bounded: rmmod tcptw, killed after 60 s (the defect: forever)
unload_bounded()
{
	local i

	rmmod tcptw &
	for ((i = 0; i < 300; i++)); do
		kill -0 $! 2>/dev/null || { wait $!; return; }
		sleep 0.2
	done
	return 1
}

# bt_settled OUT PID: bpftrace attached its probes, or exited
bt_settled()
{
	grep -q '^Attaching' "$1" || ! kill -0 "$2" 2>/dev/null
}

test_coexist()
{
	local name="bpf coexist: a BPF fexit on $FN before the load; tcptw sees every call, rmmod returns"
	local out=$TMPDIR_T/coexist bt_pid kind h0 h1 n

	test_begin "bpf coexist"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	if ! awk -F'\t' '$2 ~ /^ftrace/ { f = 1 } END { exit !f }' \
		"$TCPTW_PROC/probes"; then
		skip_test "no ftrace hooks on this kernel ($(uname -r)): its fprobes share a function with BPF by design"
		log_test "$name"
		return
	fi
	if ! timeout 60 bpftrace --info 2>&1 | grep -q 'kfunc: yes'; then
		skip_test "bpftrace $(bpftrace --version | cut -d' ' -f2) has no kretfunc on $(uname -r) (bpftrace --info: kfunc: no)"
		log_test "$name"
		return
	fi
	rmmod tcptw
	# bounded by itself (and killed by cleanup)
	bg_start "$out.bt" bpftrace -e \
		"kretfunc:$FN { @n = count(); } interval:s:300 { exit(); }"
	bt_pid=$BG_PID
	# attached, or gone (an error: it exits at once)
	slowwait 120 bt_settled "$out.bt" "$bt_pid"
	if grep -q 'kfunc/kretfunc not available' "$out.bt" "$out.bt.err"; then
		bg_wait "$bt_pid"
		skip_test "bpftrace $(bpftrace --version | cut -d' ' -f2) has no kretfunc on $(uname -r)"
		restore_module
		log_test "$name"
		return
	fi
	if ! grep -q '^Attaching' "$out.bt"; then
		diag "bpftrace did not attach: $(cat "$out.bt" "$out.bt.err")"
		check_err 1 "bpftrace kretfunc:$FN"
		restore_module
		log_test "$name"
		return
	fi
	timeout 120 insmod "$TCPTW_TEST_KO" ||
		{ check_err 1 "insmod of the test build failed"; restore_module; log_test "$name"; return; }
	kind=$(awk -F'\t' -v f="$FN" '$1 == f { print $2 }' "$TCPTW_PROC/probes")
	diag "$FN: tcptw's hook is $kind beside the BPF trampoline"

	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.6.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		{ check_err 1 "topology setup failed"; return; }
	server_start "$srv" "$out.server.json" --listen $SRV:$PORT \
		--count $N --timeout 120 ||
		{ check_err 1 "server did not start"; return; }
	h0=$(awk -F'\t' -v f="$FN" '$1 == f { print $2 }' "$HITS")
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count $N \
		--netns "$(nspath "$cli")" --timeout 120 >"$out.client.json"
	bg_wait "$SERVER_PID"
	h1=$(awk -F'\t' -v f="$FN" '$1 == f { print $2 }' "$HITS")
	cleanup_all_ns
	check_eq "connections ok" "$(json_get "$out.client.json" ok)" $N
	check_eq "$FN calls tcptw's hook saw" "$((h1 - h0))" $N

	kill -INT "$bt_pid"
	bg_wait "$bt_pid"
	n=$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$out.bt")
	check_eq "$FN calls bpftrace counted" "${n:-0}" $N

	unload_bounded
	check_eq "rmmod tcptw: exit status within 60 s" "$?" 0
	restore_module
	log_test "$name"
}

tests_run \
	test_coexist
