#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# A reuse refused on a socket with its own ephemeral range, and on a
# socket connected again after a disconnect (issue 39):
#
#   cli 198.18.0.1 / fd00::1 --eth0---eth0-- srv 198.18.0.2 / fd00::2 :8080
#   tcp_tw_reuse 1, tcp_timestamps 1    (srv: tcp_timestamps 1, or 0)
#
# tcptw_sock.py range-reuse: a socket with IP_BIND_ADDRESS_NO_PORT and the
# one-port IP_LOCAL_PORT_RANGE 40000 connects, closes first and leaves
# its one port in TIME_WAIT; a second such socket connects at once and
# the kernel refuses to reuse that socket's tuple (EADDRNOTAVAIL): too
# recent (the server sent timestamps, the socket is younger than a second,
# or than tcp_tw_reuse_delay), or no timestamps (srv tcp_timestamps=0).
# The same with the netns' range narrowed to that one port by the sysctl
# and no socket option. And (unspec) the second connect() comes from a
# socket that was connected elsewhere and disconnected with
# connect(AF_UNSPEC), which leaves ECONNRESET in its sk_err. And (fw2)
# the server's FIN is dropped at cli, so the first socket closes in
# FIN_WAIT2 and its TIME_WAIT socket stays in that substate, which the
# kernel (6.1+) never reuses: TwReuseDeniedFinWait2.
# Ground truth: the client's errno (ok, then EADDRNOTAVAIL), TWRecycled 0,
# the TIME_WAIT (or FIN-WAIT-2) socket on port 40000 in ss, cli's side of
# the wire (the refused connect() sent no SYN); the reason is the one the case
# built (timestamps off, or on and the socket young). Asserted: one
# ConnectPortExhausted, one refusal with that reason and no other, no
# grant, the peers row of srv:8080 with both. IPv4 and IPv6.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip nstat ss python3 nft
require_traffic
require_module

LPORT=40000
SPARE=40001

# range_run NAME KIND SRC DST : rl_range_run on port 8080 from $LPORT
# (the spare $SPARE), then the counters and peers it left
range_run()
{
	rl_range_run "$1" "$2" "$3" "$4" 8080 $LPORT $SPARE || return 1
	rl_tw_dump
	rl_peers_dump "$cli"
}

# range_fits : a run that refused the second connect(), or told why not
range_fits()
{
	[ "$(jstr second)" = EADDRNOTAVAIL ] || [ -n "$(jstr unsupported)" ] &&
		return 0
	echo "second connect(): $(jstr second), same_second $(jstr same_second)"
	return 1
}

# range_setup : fresh namespaces for $KIND and $SRV_TS; the client's
# range narrowed to LPORT for KIND sysctl, else the default's
range_setup()
{
	local lo=32768 hi=60999

	cleanup_all_ns
	[ "$KIND" = sysctl ] && lo=$LPORT hi=$LPORT
	pair_setup && rl_client_sysctls "$cli" 1 $lo $hi &&
		rl_sysctl "$srv" net.ipv4.tcp_timestamps="$SRV_TS" || return 1
	[ "$KIND" = fw2 ] || return 0
	# the server's FIN never reaches cli: its socket stays in FIN_WAIT2
	nsx "$cli" nft -f - <<-EOF
	table inet fw2 {
		chain in {
			type filter hook input priority 0;
			tcp sport 8080 tcp flags & fin == fin drop
		}
	}
	EOF
}

# fw2_checked : the kernel refuses to reuse a TIME_WAIT socket in the
# FIN_WAIT2 substate (6.1 on; 5.10 does not look)
fw2_checked()
{
	local v

	v=$(uname -r | awk -F. '{ print $1 * 256 + $2 }')
	[ "$v" -ge $((6 * 256 + 1)) ]
}

# test_range KIND FAMILY SRV_TS
test_range()
{
	local kind=$1 fam=$2 ts=$3 src=198.18.0.1 dst=198.18.0.2
	local reason=TwReuseDeniedTooRecent col=denied_too_recent k
	local name="port_range: $fam: $kind range, srv tcp_timestamps=$ts: EADDRNOTAVAIL counted with its reason"

	[ "$fam" = ipv6 ] && src=fd00::1 dst=fd00::2
	local state=time-wait connects=2 first
	[ "$ts" = 0 ] && reason=TwReuseDeniedNoTimestamps col=denied_no_timestamps
	# FIN_WAIT2 is refused before timestamps are looked at (6.1+)
	[ "$kind" = fw2 ] && reason=TwReuseDeniedFinWait2 col=denied_fin_wait2 \
		state=fin-wait-2
	[ "$kind" = unspec ] && connects=3
	KIND=$kind SRV_TS=$ts
	rl_begin "$kind $fam ts $ts" "$name" || return
	if [ "$kind" = fw2 ] && ! fw2_checked; then
		skip_test "kernel $(uname -r) does not refuse a FIN_WAIT2 TIME_WAIT socket's reuse (6.1+ does)"
		rl_end "$name"
		return
	fi
	if ! range_setup ||
	   ! rerun_once range_fits range_setup \
		range_run "range_${kind}_$fam" "$kind" "$src" "$dst"; then
		check_err 1 "setup failed"
		rl_end "$name"
		return
	fi
	if [ -n "$(jstr unsupported)" ]; then
		skip_test "the kernel has no IP_LOCAL_PORT_RANGE (setsockopt: $(jstr unsupported))"
		rl_end "$name"
		return
	fi
	check_str "first connect()" "$(jstr first)" ok
	check_eq "its local port" "$(json_get "$OUT" lport)" $LPORT
	[ "$kind" = unspec ] &&
		check_str "connect() from port $SPARE" "$(jstr spare)" ok
	check_str "second connect()" "$(jstr second)" EADDRNOTAVAIL
	check_eq "cli TcpExt TWRecycled delta" "$(rl_mib TcpExtTWRecycled)" 0
	check_eq "cli $state sockets on port $LPORT" \
		"$(nsx "$cli" ss -Htan state $state "( sport = :$LPORT )" | wc -l)" 1
	# the wire: a refused connect() sends no SYN
	if [ -n "$WIRE_JSON" ]; then
		first=$(( $(wire_get .totals.syn) - $(wire_get .totals.syn_retrans) ))
		check_eq "connect()s that sent a SYN (wire)" "$first" \
			$((connects - 1))
		check_mod_eq "ConnectPortExhausted == connect()s - SYNs (wire)" \
			"$(rl_tw ConnectPortExhausted)" $((connects - first))
	fi
	check_mod_eq "ConnectPortExhausted == the client's EADDRNOTAVAIL" \
		"$(rl_tw ConnectPortExhausted)" 1
	check_mod_eq "$reason" "$(rl_tw $reason)" 1
	for k in TwReuseDeniedDisabled TwReuseDeniedLoopbackOnly \
		 TwReuseDeniedNoTimestamps TwReuseDeniedTooRecent \
		 TwReuseDeniedFinWait2 TwReuseGranted ConnectTupleInUse; do
		[ "$k" = "$reason" ] && continue
		check_mod_eq "$k (not the reason here)" "$(rl_tw $k)" 0
	done
	check_mod_eq "peers $dst 8080 port_exhausted" \
		"$(rl_peer "$cli" "$dst" 8080 port_exhausted)" 1
	check_mod_eq "peers $dst 8080 $col" \
		"$(rl_peer "$cli" "$dst" 8080 $col)" 1
	rl_end "$name"
}

tests_run \
	"test_range socket ipv4 1" "test_range socket ipv4 0" \
	"test_range socket ipv6 1" "test_range socket ipv6 0" \
	"test_range sysctl ipv4 1" "test_range sysctl ipv4 0" \
	"test_range sysctl ipv6 1" "test_range sysctl ipv6 0" \
	"test_range unspec ipv4 0" "test_range unspec ipv6 1" \
	"test_range fw2 ipv4 1" "test_range fw2 ipv6 1"
