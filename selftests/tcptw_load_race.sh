#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# A module tcptw hooks (nf_conntrack) going live while tcptw loads.
#
#   cli 198.18.2.1 --eth0---eth0-- srv 198.18.2.2:8080
#                                  nft: ct state established accept
#
# tcptw_probes_init() registers its module notifier, then attaches every
# probe. nf_conntrack going live in between had its kretprobes attached
# by the notifier and then again by the loop, which cleared the live
# probe's address and flags and, on 6.1+, freed its rethook (a NULL
# dereference on the next flow), on 5.10 its instances (every later call
# missed). The test build's test_attach_delay_ms holds that window open
# for 3 s (times the kernel's slowness); nf_conntrack is loaded inside it.
# Asserted: the load waited for nf_conntrack (the window was hit), both
# conntrack probes attached, each registered once (the kprobes list in
# debugfs; for fprobes and ftrace hooks, one ftrace callback in
# enabled_functions),
# 20 connections through conntrack all succeed with 0 calls missed, the
# reload back to the normal build works, and the kernel log stays clean.
# Needs the test build ($TCPTW_TEST_KO, scripts/check.sh builds it).

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nft modprobe rmmod insmod
require_traffic
require_module

DMESG_START=$(dmesg 2>/dev/null | wc -l)

# hooks_registered PROBE: how many times the kernel holds tcptw's hook on
# PROBE ("module:symbol"): lines of the kprobe list for a kprobe, the
# ftrace callbacks on the symbol for an fprobe or an ftrace hook
hooks_registered()
{
	local sym=${1#*:} n

	case $(awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$TCPTW_PROC/probes") in
	fprobe* | ftrace*)
		n=$(grep -oE "^$sym( \[[a-z_]+\])? \([0-9]+\)" \
			/sys/kernel/tracing/enabled_functions 2>/dev/null |
			sed -E 's/.*\(([0-9]+)\)$/\1/')
		echo "${n:-0}"
		;;
	*) grep -c " $sym+0x" /sys/kernel/debug/kprobes/list 2>/dev/null ;;
	esac
}

test_load_race()
{
	local name="load race: nf_conntrack goes live while tcptw attaches"
	local delay ins_pid ins_rc t_mod t_ins p got out i

	test_begin "load race"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs none /sys/kernel/tracing 2>/dev/null
	if [ ! -r /sys/kernel/debug/kprobes/list ] ||
		[ ! -r /sys/kernel/tracing/enabled_functions ]; then
		skip_test "no kprobes list in debugfs or no tracefs"
		log_test "$name"
		return
	fi
	rmmod tcptw || { check_err 1 "rmmod tcptw failed"; log_test "$name"; return; }
	# namespaces of earlier scripts may still be going away: retry
	for i in $(seq 50); do
		unload_tree nf_conntrack && break
		sleep 0.2
	done
	if [ -d /sys/module/nf_conntrack ]; then
		restore_module
		skip_test "nf_conntrack still in use: $(ls /sys/module/nf_conntrack/holders | tr '\n' ' ')"
		log_test "$name"
		return
	fi

	delay=$((3000 * ${TCPTW_TIMEOUT_MULT:-1}))
	insmod "$TCPTW_TEST_KO" test_attach_delay_ms=$delay &
	ins_pid=$!
	# pernet (and /proc) come before the notifier and the window
	busywait 20000 test -r "$TCPTW_PROC/counters" ||
		check_err 1 "the test build did not create $TCPTW_PROC"
	modprobe nf_conntrack
	check_err $? "modprobe nf_conntrack failed"
	t_mod=$(now_ms)
	wait "$ins_pid"
	ins_rc=$?
	t_ins=$(now_ms)
	check_eq "insmod of the test build" "$ins_rc" 0
	diag "nf_conntrack live $((t_ins - t_mod)) ms before insmod returned"
	# the window was hit only if nf_conntrack was live before the loop
	check_gt "ms between nf_conntrack live and the end of the load" \
		$((t_ins - t_mod)) 0
	for p in $CT_PROBES; do
		check_eq "$p attached" \
			"$([ "$(probe_state "$p")" = attached ] && echo 1 || echo 0)" 1
		got=$(hooks_registered "$p")
		check_eq "$p: hooks registered ($(awk -F'\t' -v n="$p" \
			'$1 == n { print $2 }' "$TCPTW_PROC/probes"))" "$got" 1
	done

	# flows through conntrack: the kretprobes fire on every new one
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.2.1/24 198.18.2.2/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		check_err 1 "topology setup failed"
	printf '%s\n' "table inet t {" "chain in {" \
		"type filter hook input priority 0; policy accept;" \
		"ct state established,related accept" "}" "}" |
		nsx "$srv" nft -f -
	check_err $? "nft ruleset with ct failed"
	out=$TMPDIR_T/race
	server_start "$srv" "$out.server.json" --listen 198.18.2.2:8080 \
		--count 20 --timeout 60 || check_err 1 "server did not start"
	timeout 90 "$TRAFFIC" client --connect 198.18.2.2:8080 --count 20 \
		--netns "$(nspath "$cli")" --timeout 60 >"$out.client.json"
	bg_wait "$SERVER_PID"
	check_eq "connections through conntrack ok" \
		"$(json_get "$out.client.json" ok)" 20
	for p in $CT_PROBES; do
		got=$(awk -F'\t' -v n="$p" '$1 == n { print $4 }' \
			"$TCPTW_PROC/probes")
		check_eq "$p: calls missed" "$got" 0
	done
	cleanup_all_ns

	restore_module
	check_eq "reload of the normal build" "$?" 0
	check_dmesg_clean "$DMESG_START"
	log_test "$name"
}

# Decisions inside the attach window: the namespace's state (and its
# MIB baselines) is made before the hooks attach. SYNs overflow a
# never-accepting listen(1) queue on srv while the test build holds the
# window open, then the listener closes. Those overflows are in the
# kernel's ListenOverflows (asserted > 0 in the window) and in no hook:
# tcptw starts counting once every hook is attached, so every listen
# counter is 0 and so are the rows (tcptw before 0.4.0 kept the window's
# overflows in ListenOverflow and ListenOverflowAck, whose rows stayed
# 0: they never added up again).
test_attach_window()
{
	local name="load race: decisions inside the attach window are not counted"
	local delay ins_pid b_ovf d_ovf c v rows

	test_begin "attach window"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	rmmod tcptw || { check_err 1 "rmmod tcptw failed"; log_test "$name"; return; }
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.2.1/24 198.18.2.2/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		check_err 1 "topology setup failed"
	server_start "$srv" "$TMPDIR_T/win.srv.json" \
		--listen 198.18.2.2:8080 --no-accept --backlog 1 --timeout 60 ||
		check_err 1 "server did not start"
	delay=$((6000 * ${TCPTW_TIMEOUT_MULT:-1}))
	insmod "$TCPTW_TEST_KO" test_attach_delay_ms=$delay &
	ins_pid=$!
	busywait 20000 nsx "$srv" test -r "$TCPTW_PROC/counters" ||
		check_err 1 "the test build did not create $TCPTW_PROC in srv"
	b_ovf=$(mib "$srv" TcpExtListenOverflows)
	timeout 60 ip netns exec "$cli" python3 "$(dirname "$0")/tcptw_sock.py" \
		burst 198.18.2.2 8080 8 5 1 >/dev/null
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	d_ovf=$(( $(mib "$srv" TcpExtListenOverflows) - b_ovf ))
	check_eq "the load still attaching after the burst" \
		"$(kill -0 "$ins_pid" 2>/dev/null && echo 1 || echo 0)" 1
	wait "$ins_pid"
	check_eq "insmod of the test build" "$?" 0
	diag "srv ListenOverflows in the window: $d_ovf"
	check_gt "srv TcpExt ListenOverflows in the window" "$d_ovf" 0
	for c in ListenOverflow ListenOverflowSyn ListenOverflowAck; do
		v=$(tw_counter "$srv" $c)
		check_eq "srv $c (every overflow before the hooks)" "$v" 0
	done
	rows=$(nsx "$srv" awk 'NR > 1 { s += $5 + $6 } END { print s + 0 }' \
		"$TCPTW_PROC/listeners")
	check_eq "srv listeners rows overflow_syn + overflow_ack" "$rows" 0
	cleanup_all_ns
	restore_module
	check_eq "reload of the normal build" "$?" 0
	log_test "$name"
}

tests_run \
	test_load_race \
	test_attach_window
