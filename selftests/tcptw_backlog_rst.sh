#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# RSTs sent from a socket's backlog, in process context:
#
#   box (lo 127.0.0.1:8500 or [::1]:8500): a client and a server, one
#   process (tcptw_sock.py backlog-rst)
#
# The client holds 10 unread bytes, shuts down both ways and blocks in
# recv() copying them into a userfaultfd page: tcp_recvmsg() owns the
# socket lock while the copy waits. The server's next 100 bytes therefore
# go to the client's backlog; the test checks that no RST left while the
# lock was held, then supplies the page: release_sock() runs the backlog in
# the recv() caller's process context, FIN-WAIT with the receive side shut
# gets data, and tcp_v{4,6}_send_reset() answers it with a RST (RFC 1122). No
# module knob is needed: the lock is held by the kernel's own code.
#
# Asserted, N connections: every recv() faulted and every RST waited for
# the release (held == N), OutRsts delta == TCPAbortOnData delta == N ==
# the server sockets the RSTs closed, and tcptw's RstSent == the RSTs on
# the wire (lo, traced; 5.10, 6.1: the OutRsts slot of the CPU around
# tcp_v{4,6}_send_reset; 6.12, 7.2: the tcp_send_reset tracepoint). Control: the same holds with
# no data after the shutdown: no RST, RstSent 0.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat python3
require_module
# userfaultfd holds recv() in tcp_recvmsg(); its sysctl exists only in a
# kernel built with CONFIG_USERFAULTFD (the debug kernels before
# 2026-11-27 were not: "userfaultfd: Function not implemented")
if [ ! -e /proc/sys/vm/unprivileged_userfaultfd ]; then
	echo "SKIP: this kernel has no userfaultfd (CONFIG_USERFAULTFD)"
	exit $ksft_skip
fi

N=20
HOLD_MS=300
PORT=8500

# the box and its loopback routes: the server's data waits in the
# backlog for HOLD_MS, unacknowledged: with the default 200 ms RTO floor
# a slow guest retransmits it, and the copy that arrives after the RST
# finds no socket and draws a second RST (5.10 under TCG). 10 s on the
# loopback routes instead.
backlog_setup()
{
	setup_ns box || return 1
	ip -n "$box" route replace local 127.0.0.1 dev lo table local \
		proto kernel scope host src 127.0.0.1 rto_min 10s &&
		ip -n "$box" -6 route del local ::1 table local &&
		ip -n "$box" -6 route add local ::1 dev lo table local \
			proto kernel metric 0 rto_min 10s
}

backlog_reset()
{
	cleanup_ns "$box"
	backlog_setup
}

# one run of the helper, with the namespace's counters around it
backlog_run()
{
	wire_start "backlog-$kind" "$box" lo tcp port $PORT
	ns_snapshot "$box" B b_
	timeout $((120 * ${TCPTW_TIMEOUT_MULT:-1})) ip netns exec "$box" \
		python3 "$LIB_DIR/tcptw_sock.py" backlog-rst $PORT $N $HOLD_MS \
		"$kind" "$addr" >"$res"
	HELPER_RC=$?
	ns_snapshot "$box" A b_
	wire_stop
	diag "helper: $(cat "$res")"
}

# the reproduction held: nothing was retransmitted (a guest stalled past
# even the 10 s floor retransmits, and the copy draws a RST of its own)
backlog_no_retrans()
{
	local r

	r=$(json_get "$res" retrans)
	[ "$r" = 0 ] && return 0
	echo "$r segments retransmitted (the guest stalled past the RTO floor)"
	return 1
}

test_backlog()
{
	local kind=$1 addr=$2 name want res
	declare -A B A

	res=$TMPDIR_T/backlog-$kind-${addr//:/_}.json
	if [ "$kind" = send ]; then
		name="backlog rst: $N RSTs to $addr sent by release_sock() in process context, each counted"
		want=$N
	else
		name="backlog rst: control, the same lock holds with no data: no RST, none counted"
		want=0
	fi
	test_begin "$name"
	if ! backlog_setup; then
		check_err 1 "setup_ns or rto_min on the loopback routes failed"
		log_test "$name"
		cleanup_all_ns
		return
	fi
	rerun_once backlog_no_retrans backlog_reset backlog_run ||
		check_err 1 "setup failed for the second run"
	check_err "$HELPER_RC" "backlog-rst helper failed"
	check_eq "recv() faulted with the socket lock held" \
		"$(json_get "$res" faults)" $N
	check_eq "no RST left while the lock was held" "$(json_get "$res" held)" $N
	check_eq "RSTs after the release (OutRsts)" "$(json_get "$res" rsts)" "$want"
	check_eq "server sockets closed by a RST" \
		"$(json_get "$res" resets_seen)" "$want"
	check_eq "segments retransmitted" "$(json_get "$res" retrans)" 0
	check_eq "OutRsts delta" \
		$(( ${A[b_mib_TcpOutRsts]:-0} - ${B[b_mib_TcpOutRsts]:-0} )) "$want"
	check_eq "TCPAbortOnData delta" \
		$(( ${A[b_mib_TcpExtTCPAbortOnData]:-0} - ${B[b_mib_TcpExtTCPAbortOnData]:-0} )) "$want"
	# the wire on lo: every RST either side sent (the client's, here)
	check_wire_eq "RstSent" \
		$(( ${A[b_tw_RstSent]:-0} - ${B[b_tw_RstSent]:-0} )) \
		'.totals.rst_client + .totals.rst_server'
	check_wire_raw "RSTs the client sent" "$want" .totals.rst_client
	wire_dump
	log_test "$name"
	cleanup_ns "$box"
}

tests_run \
	"test_backlog send 127.0.0.1" \
	"test_backlog send ::1" \
	"test_backlog nosend 127.0.0.1"
