#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Every remedy diagnose gives as commands, applied as printed, and the
# same load run again:
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:8080
#
# Each case reproduces a failure, runs `tcptw diagnose -j` against a
# baseline taken before it, runs the finding's "commands" in the
# namespace diagnose ran in (no edit, no selection), and repeats the same
# load. Asserted, against truths tcptw does not compute: the failure
# happened (the client's errno, the kernel's MIB), the finding names it
# with the commands the case expects, and after them the client sees no
# failure and the kernel's MIB does not move; tcptw's counter and row
# stay at 0 too.
#
#  - port_exhaustion: the client in 50 ports, tcp_tw_reuse=0, closing
#    first: 80 connects, 30 EADDRNOTAVAIL. The commands widen the range
#    and turn reuse on: 80 connects, 0 failed.
#  - port_exhaustion, reuse refused for lack of timestamps: the client
#    (tcp_tw_reuse=1, tcp_timestamps=0) connects from a socket whose own
#    range is one port (IP_LOCAL_PORT_RANGE), closes first, and 1.5 s
#    later connects again from that port: EADDRNOTAVAIL. The commands
#    turn timestamps on (and widen the netns' range, which a socket's
#    own range does not follow): the same two connects succeed, the
#    second reusing the first's tuple (TWRecycled, a SYN on the wire).
#  - tw_overflow: the server at tcp_max_tw_buckets=10, closing first: 40
#    connections, 30 TIME_WAIT sockets refused (TCPTimeWaitOverflow). The
#    command raises the limit: 40 more, all 40 in TIME_WAIT (ss).
#  - accept_queue: somaxconn=10 under a listen(100) that never accepts:
#    30 connects, 11 complete. The commands raise somaxconn; the server
#    listens again (the application's part, which diagnose says is the
#    application's): 30 of 30, ListenOverflows 0.
#  - SYN queue (accept_queue's other half): somaxconn=10, cookies off,
#    the client dropping every SYN-ACK so that requests stay in SYN-RECV:
#    TCPReqQFullDrop > 0. The commands raise somaxconn and turn cookies
#    on; the same held-back handshakes: TCPReqQFullDrop and ListenDrops 0.
# The full conntrack table's remedy is applied in tcptw_conntrack.sh.
# The loopback conntrack remedy (notrack rules for an upstream on this
# host) is applied as printed in tcptw_run.sh, timestamps turned back on
# (ts_off_seq) in tcptw_nat_paws.sh, the keepalive of nat_idle_reset in
# tcptw_conntrack.sh and tcptw_seed_001.sh. The remedies of the other
# findings are the application's, its peers' or a NAT's (keep-alive, who
# closes first, the NAT rule's flags): diagnose says so ("application":
# true), as the unit tests check for each.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip nstat ss jq
require_traffic
require_module
require_cli
require_sock_py

SRV=198.18.0.2
PORT=8080

# srv_begin SHORT NAME SYSCTL... : test_begin SHORT; a fresh pair whose
# srv has SYSCTL set; false (NAME logged as failed) if it cannot be made.
# The case ends with rl_end NAME.
srv_begin()
{
	local name=$2

	test_begin "$1"
	shift 2
	if ! pair_setup || ! rl_sysctl "$srv" "$@"; then
		check_err 1 "setup failed"
		rl_end "$name"
		return 1
	fi
}

# ports_run NAME : 80 connects, client closes first; OUT, BEFORE, AFTER
ports_run()
{
	rl_run "$1" "$cli" $SRV:$PORT "$srv" $SRV:$PORT --count 80
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
}

test_ports()
{
	local name="remedies: port_exhaustion: the range widened and reuse on as diagnose prints -> 80 connects, 0 EADDRNOTAVAIL"

	rl_begin "ports" "$name" 0 1 || return
	save_baseline "$cli" ports
	ports_run ports
	check_eq "before: client EADDRNOTAVAIL" \
		"$(json_get "$OUT" errors.EADDRNOTAVAIL)" $((80 - NPORTS))
	diagnose "$cli" ports
	check_findings "diagnose findings" "$TMPDIR_T/ports.diag.json" \
		port_exhaustion
	check_str "port_exhaustion commands" \
		"$(remedy_commands "$TMPDIR_T/ports.diag.json" port_exhaustion)" \
		"$(printf '%s\n' 'sysctl -w net.ipv4.ip_local_port_range="1024 65535"' \
			'sysctl -w net.ipv4.tcp_tw_reuse=1')"
	remedy_apply "$cli" "$TMPDIR_T/ports.diag.json" port_exhaustion
	check_str "port_exhaustion: also the application's (keep-alive)" \
		"$APP" true
	ports_run ports.after
	check_eq "after: client ok" "$(json_get "$OUT" ok)" 80
	check_eq "after: client failures" "$(json_get "$OUT" failed)" 0
	check_mod_eq "after: ConnectPortExhausted" \
		"$(rl_tw ConnectPortExhausted)" 0
	check_mod_eq "after: peers $SRV $PORT port_exhausted (row reset by no one: the first run's)" \
		"$(rl_peer "$cli" $SRV $PORT port_exhausted)" $((80 - NPORTS))
	rl_end "$name"
}

# reuse_run NAME LPORT : rl_range_run late on srv's PORT from the
# one-port range LPORT: the second socket 1.5 s after the first closed
reuse_run()
{
	rl_range_run "$1" late 198.18.0.1 $SRV $PORT "$2" $(($2 + 1)) || return 1
	diag "$1: TWRecycled +$(rl_mib TcpExtTWRecycled)"
}

test_reuse_ts()
{
	local name="remedies: port_exhaustion, reuse refused without timestamps: timestamps on as diagnose prints -> the port's TIME_WAIT tuple reused"
	local syn

	srv_begin reuse_ts "$name" net.ipv4.tcp_timestamps=1 || return
	# the sockets' own range lies within the netns' (default) one
	if ! rl_client_sysctls "$cli" 1 32768 60999 ||
	   ! rl_sysctl "$cli" net.ipv4.tcp_timestamps=0; then
		check_err 1 "client sysctls"
		rl_end "$name"
		return
	fi
	save_baseline "$cli" reuse
	reuse_run reuse 40000
	if [ -n "$(jstr unsupported)" ]; then
		skip_test "the kernel has no IP_LOCAL_PORT_RANGE (setsockopt: $(jstr unsupported))"
		rl_end "$name"
		return
	fi
	check_str "before: first connect()" "$(jstr first)" ok
	check_str "before: second connect(), 1.5 s later" "$(jstr second)" EADDRNOTAVAIL
	check_eq "before: TWRecycled" "$(rl_mib TcpExtTWRecycled)" 0
	check_mod_eq "before: TwReuseDeniedNoTimestamps" \
		"$(rl_tw TwReuseDeniedNoTimestamps)" 1
	[ -n "$WIRE_JSON" ] && check_eq "before: SYNs (wire: the refused connect() sent none)" \
		"$(wire_get .totals.syn)" 1
	diagnose "$cli" reuse
	check_findings "diagnose findings" "$TMPDIR_T/reuse.diag.json" \
		port_exhaustion
	check_str "port_exhaustion commands" \
		"$(remedy_commands "$TMPDIR_T/reuse.diag.json" port_exhaustion)" \
		"$(printf '%s\n' 'sysctl -w net.ipv4.ip_local_port_range="1024 65535"' \
			'sysctl -w net.ipv4.tcp_timestamps=1')"
	remedy_apply "$cli" "$TMPDIR_T/reuse.diag.json" port_exhaustion
	# port 40000 is still held by the first run's TIME_WAIT socket,
	# born without timestamps: the same load from the next port
	reuse_run reuse.after 40002
	check_str "after: first connect()" "$(jstr first)" ok
	check_str "after: second connect(), 1.5 s later" "$(jstr second)" ok
	check_eq "after: TWRecycled (the second took the first's tuple)" \
		"$(rl_mib TcpExtTWRecycled)" 1
	if [ -n "$WIRE_JSON" ]; then
		syn=$(( $(wire_get .totals.syn) - $(wire_get .totals.syn_retrans) ))
		check_eq "after: connect()s that sent a SYN (wire)" "$syn" 2
		check_eq "after: SYNs on a tuple of the client's TIME_WAIT socket (wire)" \
			"$(wire_get .totals.syn_client_tw)" 1
	fi
	check_mod_eq "after: TwReuseGranted" "$(rl_tw TwReuseGranted)" 1
	check_mod_eq "after: ConnectPortExhausted" \
		"$(rl_tw ConnectPortExhausted)" 0
	rl_end "$name"
}

# overflow_run NAME : 40 connections, the server closes first; D_OVF
# (TCPTimeWaitOverflow), D_TOVF (TwOverflow)
overflow_run()
{
	local b_ovf b_tovf

	server_start "$srv" "$TMPDIR_T/$1.server.json" --listen $SRV:$PORT \
		--count 40 --timeout 60 --close-first server ||
		{ check_err 1 "server did not start"; return 1; }
	b_ovf=$(mib "$srv" TcpExtTCPTimeWaitOverflow)
	b_tovf=$(tw_counter "$srv" TwOverflow)
	OUT=$TMPDIR_T/$1.client.json
	timeout 90 "$TRAFFIC" client --connect $SRV:$PORT --count 40 \
		--netns "$(nspath "$cli")" --close-first server --barrier \
		--timeout 60 >"$OUT"
	check_err $? "client failed"
	bg_wait "$SERVER_PID"
	D_OVF=$(( $(mib "$srv" TcpExtTCPTimeWaitOverflow) - b_ovf ))
	D_TOVF=$(( $(tw_counter "$srv" TwOverflow) - b_tovf ))
	diag "$1: client $(cat "$OUT"); TCPTimeWaitOverflow +$D_OVF, TwOverflow +$D_TOVF, srv TIME_WAIT sockets $(tw_sockets "$srv")"
}

test_tw_overflow()
{
	local name="remedies: tw_overflow: tcp_max_tw_buckets raised as diagnose prints -> 40 more connections, all in TIME_WAIT"

	srv_begin tw_overflow "$name" net.ipv4.tcp_max_tw_buckets=10 || return
	save_baseline "$srv" two
	overflow_run two
	check_eq "before: TCPTimeWaitOverflow" "$D_OVF" 30
	check_eq "before: srv TIME_WAIT sockets" "$(tw_sockets "$srv")" 10
	diagnose "$srv" two
	check_findings "diagnose findings" "$TMPDIR_T/two.diag.json" tw_overflow
	check_str "tw_overflow commands" \
		"$(remedy_commands "$TMPDIR_T/two.diag.json" tw_overflow)" \
		"sysctl -w net.ipv4.tcp_max_tw_buckets=80"
	remedy_apply "$srv" "$TMPDIR_T/two.diag.json" tw_overflow
	check_str "tw_overflow: the host's alone" "$APP" false
	overflow_run two.after
	check_eq "after: client ok" "$(json_get "$OUT" ok)" 40
	check_eq "after: TCPTimeWaitOverflow" "$D_OVF" 0
	check_mod_eq "after: TwOverflow" "$D_TOVF" 0
	# nothing recycles or kills them within the test's seconds
	check_eq "after: srv TIME_WAIT sockets == 10 + 40" \
		"$(tw_sockets "$srv")" 50
	rl_end "$name"
}

# queue_run NAME : a listen(100) that never accepts, 30 connects 10 ms
# apart; OK (completed), OVF (ListenOverflows), MOD (ListenOverflow)
queue_run()
{
	local out=$TMPDIR_T/$1.burst.json

	server_start "$srv" "$TMPDIR_T/$1.srv" --listen $SRV:$PORT \
		--no-accept --backlog 100 --timeout 60 ||
		{ check_err 1 "server did not start"; return 1; }
	B=()
	A=()
	ns_snapshot "$srv" B s_
	timeout 60 ip netns exec "$cli" "$PY" "$SOCK" burst $SRV $PORT 30 10 5 \
		>"$out"
	check_err $? "burst client failed"
	sleep 0.5
	ns_snapshot "$srv" A s_
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	OK=$(json_get "$out" ok)
	OVF=$(d s_mib_TcpExtListenOverflows)
	MOD=$(d s_tw_ListenOverflow)
	diag "$1: $(cat "$out"); ListenOverflows +$OVF, ListenOverflow +$MOD"
}

test_accept_queue()
{
	local name="remedies: accept_queue: somaxconn raised as diagnose prints, the server listening again -> 30 of 30 connects, 0 overflows"

	srv_begin accept_queue "$name" net.core.somaxconn=10 || return
	save_baseline "$srv" queue
	queue_run queue
	check_range "before: connects completed (backlog + 1, + other CPUs)" \
		"$OK" 11 14
	check_gt "before: ListenOverflows" "$OVF" 0
	diagnose "$srv" queue
	check_findings "diagnose findings" "$TMPDIR_T/queue.diag.json" \
		accept_queue
	check_str "accept_queue commands" \
		"$(remedy_commands "$TMPDIR_T/queue.diag.json" accept_queue)" \
		"sysctl -w net.core.somaxconn=4096"
	remedy_apply "$srv" "$TMPDIR_T/queue.diag.json" accept_queue
	check_str "accept_queue: also the application's (it listens again)" \
		"$APP" true
	queue_run queue.after
	check_eq "after: connects completed" "$OK" 30
	check_eq "after: ListenOverflows" "$OVF" 0
	check_mod_eq "after: ListenOverflow" "$MOD" 0
	rl_end "$name"
}

test_syn_queue()
{
	local name="remedies: SYN queue: cookies on and the queue raised as diagnose prints -> the same held-back handshakes, 0 SYNs dropped"
	local cmds

	srv_begin syn_queue "$name" net.core.somaxconn=10 \
		net.ipv4.tcp_syncookies=0 || return
	# the handshakes never complete: requests pile up in SYN-RECV
	printf '%s\n' "table inet synq {" "chain inbound {" \
		"type filter hook input priority 0; policy accept;" \
		"tcp flags & (syn | ack) == (syn | ack) drop" "}" "}" |
		nsx "$cli" nft -f - || check_err 1 "nft ruleset"
	save_baseline "$srv" synq
	queue_run synq
	check_gt "before: TCPReqQFullDrop" "$(d s_mib_TcpExtTCPReqQFullDrop)" 0
	diagnose "$srv" synq
	check_findings "diagnose findings" "$TMPDIR_T/synq.diag.json" \
		accept_queue
	cmds=$(remedy_commands "$TMPDIR_T/synq.diag.json" accept_queue)
	check_eq "accept_queue commands: somaxconn raised, cookies on" \
		"$(grep -c -e '^sysctl -w net.core.somaxconn=4096$' \
			-e '^sysctl -w net.ipv4.tcp_syncookies=1$' <<<"$cmds")" 2
	remedy_apply "$srv" "$TMPDIR_T/synq.diag.json" accept_queue
	queue_run synq.after
	check_eq "after: TCPReqQFullDrop" "$(d s_mib_TcpExtTCPReqQFullDrop)" 0
	check_eq "after: ListenDrops" "$(d s_mib_TcpExtListenDrops)" 0
	check_mod_eq "after: ListenSynDrop" "$(d s_tw_ListenSynDrop)" 0
	rl_end "$name"
}

tests_run \
	test_ports \
	test_reuse_ts \
	test_tw_overflow \
	test_accept_queue \
	test_syn_queue
