#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Ephemeral port exhaustion on the client (seeds 003/004, and 000: a peer
# without timestamps makes tcp_tw_reuse useless):
#
#   cli 198.18.0.1 / fd00::1 --eth0---eth0-- srv 198.18.0.2 / fd00::2 :8080
#   ip_local_port_range 20000 20049            (tcp_timestamps 0 in the
#   tcp_tw_reuse 0 (or 1), client closes first  no-timestamps case)
#
# The client closes first, so each connection leaves a TIME_WAIT socket on
# cli holding one of its 50 ports. With tcp_tw_reuse=0 (or =1 while the
# server sends no timestamps) none of them may be reused: of 80 sequential
# connects exactly the first 50 succeed and the other 30 fail with
# EADDRNOTAVAIL without sending a SYN. Asserted, per namespace (fresh each
# time, so tcptw's counters start at 0):
#  - ground truth: ok 50 then 30 EADDRNOTAVAIL, TcpExt TW delta 50,
#    TWRecycled 0, 50 TIME_WAIT sockets;
#  - ConnectPortExhausted == the client's EADDRNOTAVAIL count;
#  - each failed connect counts one refusal, with the one right reason
#    (TwReuseDeniedDisabled, resp. ...NoTimestamps, == EADDRNOTAVAIL; the
#    other reasons 0), TwReuseGranted 0;
#  - the peers row of the server endpoint carries port_exhausted and the
#    denial column, equal to the counters.
# Control: 200 ports for 80 connects: all succeed, ConnectPortExhausted 0.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip nstat ss
require_traffic
require_module

N=80

# run_exhaust NAME DST : server on srv, N client connects (client closes
# first) from cli; fills BEFORE/AFTER (cli) and OUT.
run_exhaust()
{
	rl_run "$1" "$cli" "$2" "$srv" "$2" --count $N
}

# check_exhausted PEER_ADDR REASON_COUNTER REASON_COLUMN : the assertions
# shared by the tw_reuse=0 and no-timestamps cases.
check_exhausted()
{
	local peer=$1 reason=$2 col=$3 eaddr k

	eaddr=$(json_get "$OUT" errors.EADDRNOTAVAIL)
	check_eq "client ok" "$(json_get "$OUT" ok)" $NPORTS
	check_eq "client EADDRNOTAVAIL" "$eaddr" $((N - NPORTS))
	check_eq "client failures (any errno)" "$(json_get "$OUT" failed)" \
		$((N - NPORTS))
	check_eq "attempts not following ok x50 then EADDRNOTAVAIL" \
		"$(rl_burst_mismatch "$OUT" $N $NPORTS)" 0
	check_tw_mib "cli TcpExt TW delta" "$(rl_mib TcpExtTW)" $NPORTS
	check_eq "cli TcpExt TWRecycled delta" "$(rl_mib TcpExtTWRecycled)" 0
	check_eq "cli TIME_WAIT sockets" "$(tw_sockets "$cli")" $NPORTS
	check_mod_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
		"$(rl_tw ConnectPortExhausted)" "$eaddr"
	check_mod_eq "$reason == client EADDRNOTAVAIL (one per failed connect)" \
		"$(rl_tw "$reason")" "$eaddr"
	check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
	check_mod_eq "ConnectTupleInUse" "$(rl_tw ConnectTupleInUse)" 0
	for k in TwReuseDeniedDisabled TwReuseDeniedLoopbackOnly \
		 TwReuseDeniedNoTimestamps TwReuseDeniedTooRecent \
		 TwReuseDeniedFinWait2; do
		[ "$k" = "$reason" ] && continue
		check_mod_eq "$k (not the reason here)" "$(rl_tw $k)" 0
	done
	check_mod_eq "peers $peer 8080 port_exhausted == client EADDRNOTAVAIL" \
		"$(rl_peer "$cli" "$peer" 8080 port_exhausted)" "$eaddr"
	check_mod_eq "peers $peer 8080 $col == $reason" \
		"$(rl_peer "$cli" "$peer" 8080 "$col")" "$(rl_tw "$reason")"
	check_mod_eq "peers $peer 8080 reuse_granted" \
		"$(rl_peer "$cli" "$peer" 8080 reuse_granted)" 0
	check_wire_ports "$peer"
}

# check_wire_ports PEER_ADDR : against the client's side of the wire: a
# connect() refused a port sends no SYN, so the refusals are the connect()
# calls less the first SYNs on the wire; no SYN went out on a 4-tuple the
# client's TIME_WAIT held (nothing reused)
check_wire_ports()
{
	local first

	[ -n "$WIRE_JSON" ] || return 0
	first=$(( $(json_get "$OUT" ok) + $(json_get "$OUT" failed) - \
		$(json_get "$OUT" errors.EADDRNOTAVAIL) ))
	check_wire_raw "connect()s that sent a SYN == client ok + other failures" \
		"$first" '.totals.syn - .totals.syn_retrans'
	first=$(( $(wire_get .totals.syn) - $(wire_get .totals.syn_retrans) ))
	# a trace K packets short may have lost up to K first SYNs
	check_mod_range "ConnectPortExhausted == $N connect()s - first SYNs (wire, ${WIRE_MISS:-0} short)" \
		"$(rl_tw ConnectPortExhausted)" $((N - first - ${WIRE_MISS:-0})) \
		$((N - first))
	check_mod_range "peers $1 8080 port_exhausted == $N - first SYNs (wire, ${WIRE_MISS:-0} short)" \
		"$(rl_peer "$cli" "$1" 8080 port_exhausted)" \
		$((N - first - ${WIRE_MISS:-0})) $((N - first))
	check_wire_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" \
		.totals.syn_client_tw
}

# tw_reuse=0, timestamps on: 50 ok, then EADDRNOTAVAIL.
test_reuse_off()
{
	local fam=$1 dst=$2 peer=$3
	local name="port_exhaustion: $fam: tcp_tw_reuse=0, $NPORTS ports: ConnectPortExhausted == EADDRNOTAVAIL"

	rl_begin "reuse off $fam" "$name" 0 1 || return
	if run_exhaust "off_$fam" "$dst"; then
		check_exhausted "$peer" TwReuseDeniedDisabled denied_disabled
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# Seed 000: tcp_tw_reuse=1 on the client, but the server sends no
# timestamps, so no TIME_WAIT socket has a peer timestamp to protect a
# reuse: the same 50 ok, then EADDRNOTAVAIL.
test_no_timestamps()
{
	local name="port_exhaustion: tcp_tw_reuse=1, server tcp_timestamps=0: TwReuseDeniedNoTimestamps, nothing granted"

	rl_begin "no timestamps" "$name" 1 0 || return
	if run_exhaust nots 198.18.0.2:8080; then
		check_exhausted 198.18.0.2 TwReuseDeniedNoTimestamps \
			denied_no_timestamps
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# Control: 200 ports for 80 connects; nothing is exhausted.
test_control()
{
	local name="port_exhaustion: control: 200 ports, 80 connects -> ConnectPortExhausted 0"

	test_begin "control"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if pair_setup && rl_client_sysctls "$cli" 0 $PORT_LO $((PORT_LO + 199)) &&
	   rl_sysctl "$srv" net.ipv4.tcp_timestamps=1 &&
	   run_exhaust control 198.18.0.2:8080; then
		check_eq "client ok" "$(json_get "$OUT" ok)" $N
		check_eq "client failures" "$(json_get "$OUT" failed)" 0
		check_tw_mib "cli TcpExt TW delta" "$(rl_mib TcpExtTW)" $N
		check_eq "cli TIME_WAIT sockets" "$(tw_sockets "$cli")" $N
		check_mod_eq "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
		check_mod_eq "peers 198.18.0.2 8080 port_exhausted" \
			"$(rl_peer "$cli" 198.18.0.2 8080 port_exhausted)" 0
		check_wire_ports 198.18.0.2
	else
		check_err 1 "setup failed"
	fi
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	"test_reuse_off ipv4 198.18.0.2:8080 198.18.0.2" \
	"test_reuse_off ipv6 '[fd00::2]:8080' fd00::2" \
	test_no_timestamps \
	test_control
