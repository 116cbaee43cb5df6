#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Other tools on the functions tcptw hooks, attached while it is loaded.
#
#   cli 198.18.6.1 --eth0---eth0-- srv 198.18.6.2:8320
#
# tcptw observes and never takes a function away: on every function it
# hooks, (1) an IPMODIFY ftrace_ops per function, as livepatch registers,
# (2) a kprobe with a post handler, and (3) bpftrace kretfunc programs
# (BPF fexit trampolines), each attached after tcptw, must attach (but
# where the kernel refuses one without tcptw too) and
# see every call tcptw's own hook sees (the test build's hit counts) over
# N short connections, the server closing first; and tcptw's counters
# stay right beside them: TwCreated == N, and no connection failure
# counted. (1) and (2) come from the test build's test_coexist knob
# (kmod/coexist.c), since both want the same exclusive ftrace slot.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip insmod rmmod
require_traffic
require_module

N=20
SRV=198.18.6.2
PORT=8320
HITS=/sys/module/tcptw/parameters/test_hits
KNOB=/sys/module/tcptw/parameters/test_coexist

# hits FN: calls tcptw's hook on FN saw since the load
hits()
{
	awk -F'\t' -v f="$1" '$1 == f { print $2 }' "$HITS"
}

# traffic OUT: N connections, the server closes first; sets TWC (the
# server's TwCreated delta) and FAILS (the client's failed connects)
traffic()
{
	local out=$1 b

	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.6.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		{ check_err 1 "topology setup failed"; return 1; }
	server_start "$srv" "$out.server.json" --listen $SRV:$PORT \
		--count $N --timeout 120 --close-first server ||
		{ check_err 1 "server did not start"; return 1; }
	b=$(tw_counter "$srv" TwCreated)
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count $N \
		--netns "$(nspath "$cli")" --close-first server \
		--timeout 120 >"$out.client.json"
	bg_wait "$SERVER_PID"
	sleep 1
	TWC=$(( $(tw_counter "$srv" TwCreated) - b ))
	FAILS=$(( N - $(json_get "$out.client.json" ok) ))
	cleanup_all_ns
}

# knob_mode MODE: one IPMODIFY ops or one post-handler kprobe per function
knob_mode()
{
	local mode=$1 name="coexist: $1 on every hooked function, attached after tcptw"
	local out=$TMPDIR_T/$1 fn err calls h
	declare -A H0 C0

	test_begin "$name"
	echo "$mode" >"$KNOB" || { check_err 1 "write $mode to $KNOB"; log_test "$name"; return; }
	diag "$(tr '\t' ' ' <"$KNOB" | tr '\n' ';')"
	while IFS=$'\t' read -r fn _ err _; do
		check_eq "$mode on $fn: registration error" "$err" 0
	done <"$KNOB"
	hits_settle
	while IFS=$'\t' read -r fn _ _ calls; do
		H0[$fn]=$(hits "$fn")
		C0[$fn]=$calls
	done <"$KNOB"
	traffic "$out" || { echo off >"$KNOB"; log_test "$name"; return; }
	# the namespaces' teardown purges their TIME_WAIT sockets
	# (inet_twsk_deschedule_put) in a workqueue after traffic returns:
	# both counts are read once it is over, the knob's into a file, and
	# the loop reads that on its own descriptor
	hits_settle
	cat "$KNOB" >"$out.knob"
	while IFS=$'\t' read -r -u 3 fn _ _ calls; do
		h=$(( $(hits "$fn") - ${H0[$fn]:-0} ))
		diag "$fn: tcptw's hook $h calls, $mode $((calls - ${C0[$fn]:-0}))"
		check_eq "$fn: $mode saw the calls tcptw's hook saw" \
			$((calls - ${C0[$fn]:-0})) "$h"
	done 3<"$out.knob"
	check_eq "tcp_conn_request: tcptw's hook saw every SYN" \
		$(( $(hits tcp_conn_request) - ${H0[tcp_conn_request]:-0} )) $N
	check_eq "client connect failures" "$FAILS" 0
	check_mod_eq "srv TwCreated == N beside $mode" "$TWC" $N
	echo off >"$KNOB"
	log_test "$name"
}

# bt_trampolines FN... : every FN has a BPF trampoline (a direct call,
# flag D in enabled_functions): bpftrace has attached it. bpftrace prints
# "Attaching N probes" before it attaches them, one by one: on a one-vCPU
# guest the last came after a wait of 2 s, and failed (6.1's
# tcp_v4_syn_recv_sock has no trampoline, with tcptw or without)
bt_trampolines()
{
	local fn

	for fn in "$@"; do
		grep -Eq "^$fn \([0-9]+\).* D( |\$)" \
			/sys/kernel/tracing/enabled_functions || return 1
	done
}

# bt_start OUT FNS...: bpftrace with one kretfunc (fexit) per function,
# in the background (BT_PID); 0 once every one is attached, 1 if it
# exited, naming in BT_REFUSED the function it could not attach
bt_start()
{
	local out=$1 fn prog
	shift

	prog=$(for fn in "$@"; do printf 'kretfunc:%s { @["%s"] = count(); } ' "$fn" "$fn"; done)
	bg_start "$out" bpftrace -e "$prog interval:s:300 { exit(); }"
	BT_PID=$BG_PID
	slowwait 180 eval "! kill -0 $BT_PID 2>/dev/null || { grep -q '^Attaching' $out && bt_trampolines $*; }"
	BT_REFUSED=
	if kill -0 "$BT_PID" 2>/dev/null && grep -q '^Attaching' "$out"; then
		return 0
	fi
	bg_wait "$BT_PID"
	BT_REFUSED=$(sed -n 's/.*Error attaching probe: kretfunc:\(vmlinux:\)\{0,1\}\([A-Za-z0-9_]*\).*/\2/p' \
		"$out.err" | head -n 1)
	return 1
}

# bpftrace: one kretfunc (fexit) per hooked function. A function the
# kernel gives no BPF trampoline to even without tcptw (6.1:
# tcp_v4_syn_recv_sock) is left out, after a check without tcptw says so.
bpf_mode()
{
	local name="coexist: bpftrace kretfunc on every hooked function, attached after tcptw"
	local out=$TMPDIR_T/bt fns fn n h i
	declare -A H0

	test_begin "$name"
	if ! command -v bpftrace >/dev/null; then
		skip_test "bpftrace not installed"
		log_test "$name"
		return
	fi
	if ! timeout 60 bpftrace --info 2>&1 | grep -q 'kfunc: yes'; then
		skip_test "bpftrace $(bpftrace --version | cut -d' ' -f2) has no kretfunc on $(uname -r) (bpftrace --info: kfunc: no)"
		log_test "$name"
		return
	fi
	fns=$(awk -F'\t' '$2 != "tracepoint" && $3 == "attached" && $1 !~ /:/ { print $1 }' \
		"$TCPTW_PROC/probes")
	for i in 1 2 3; do
		bt_start "$out.$i" $fns && break
		if [ -z "$BT_REFUSED" ]; then
			diag "bpftrace did not attach: $(cat "$out.$i" "$out.$i.err" | head -5)"
			check_err 1 "bpftrace kretfunc on ${fns//$'\n'/ }"
			log_test "$name"
			return
		fi
		# the same function without tcptw: the kernel's refusal, or ours?
		rmmod tcptw
		if bt_start "$out.$i.alone" "$BT_REFUSED"; then
			kill -INT "$BT_PID"
			bg_wait "$BT_PID"
			timeout 120 insmod "$TCPTW_TEST_KO"
			check_err 1 "kretfunc:$BT_REFUSED attaches without tcptw, not with it"
			log_test "$name"
			return
		fi
		timeout 120 insmod "$TCPTW_TEST_KO" ||
			{ check_err 1 "insmod of the test build failed"; log_test "$name"; return; }
		diag "kretfunc:$BT_REFUSED is refused without tcptw too: left out"
		fns=$(grep -vx "$BT_REFUSED" <<<"$fns")
	done
	kill -0 "$BT_PID" 2>/dev/null || { check_err 1 "bpftrace did not attach"; log_test "$name"; return; }
	out=$out.$i
	hits_settle
	for fn in $fns; do H0[$fn]=$(hits "$fn"); done
	traffic "$out" || { kill -INT "$BT_PID"; log_test "$name"; return; }
	hits_settle
	for fn in $fns; do H0[$fn]=$(( $(hits "$fn") - ${H0[$fn]} )); done
	if ! kill -INT "$BT_PID" 2>/dev/null; then
		diag "bpftrace exited before the end: $(tr '\n' ' ' <"$out.err" | cut -c1-600)"
		check_err 1 "bpftrace still running after the traffic"
	fi
	bg_wait "$BT_PID"
	for fn in $fns; do
		n=$(sed -n "s/^@\[$fn\]: \([0-9]*\)$/\1/p" "$out")
		h=${H0[$fn]}
		diag "$fn: tcptw's hook $h calls (in the traffic), bpftrace ${n:-0} (since attached)"
		# bpftrace counts from its attach, so also what came before
		check_range "$fn: bpftrace saw at least the calls tcptw's hook saw" \
			"${n:-0}" "$h" $((h + N))
	done
	check_eq "tcp_conn_request among bpftrace's functions" \
		"$(grep -cx tcp_conn_request <<<"$fns")" 1
	check_eq "client connect failures" "$FAILS" 0
	check_mod_eq "srv TwCreated == N beside bpftrace" "$TWC" $N
	log_test "$name"
}

if ! have_test_build; then
	echo "SKIP: no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
	exit $ksft_skip
fi
rmmod tcptw && timeout 120 insmod "$TCPTW_TEST_KO" ||
	{ echo "insmod of the test build failed"; restore_module; exit 1; }
tests_run \
	"knob_mode ipmodify" \
	"knob_mode kprobe" \
	"bpf_mode; restore_module"
