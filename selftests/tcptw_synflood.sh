#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# A SYN flood answered with cookies: the counters stay exact, the events
# are rate-limited and say how many they left out.
#
#   cli 198.18.6.1 --eth0---eth0-- srv 198.18.6.2:8400
#   raw SYNs (tcptw_flood),         tcp_syncookies=2: every SYN a cookie;
#   SYN-ACKs dropped by nft          a listener that never accepts
#
# event_rate set to 20 (events per second, CPU and type) while loaded,
# after writes it must refuse (not a number, negative, past 32 bits);
# FLOOD SYNs as fast as the guest sends them, from one sender pinned to
# each CPU (up to 4), so that every CPU counts for the one listener row.
# Asserted: srv ListenSynCookieSent == SyncookiesSent delta == the
# SYN-ACKs on the wire (every cookie counted, none twice; srv's eth0
# traced), the :8400 listeners row's cookie_sent == the same (each CPU's counts kept aside included), the
# listen_syn_cookie events recorded (the newest seq in srv's new
# namespace, where no other event is recorded) + EventsRateLimited ==
# ListenSynCookieSent; the ring (1024) holds the recorded ones at 20 a
# second per CPU on a stock kernel, not on a debug kernel, whose flood
# took 48 s and overwrote 749. EventsRateLimited > 0 (the limit
# worked), `tcptw events` says how many it left out, a reader of
# listeners and counters ran through the flood (each read settles every
# CPU's listener record and takes its run of cookies), and the control: the
# cookies' counters and events are 0 in cli. IPv6: 50 connects to a
# listener with tcp_syncookies=2 over fd00::, each made from a cookie:
# ListenSynCookieSent == SyncookiesSent delta == its row's cookie_sent ==
# the SYN-ACKs on the wire.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nft nstat
require_traffic
require_module

FLOOD=${FLOOD:-3000}
RATE=20
SRV=198.18.6.2
PORT=8400
FLOOD_BIN=$LIB_DIR/tcptw_flood
test_synflood()
{
	local name="synflood: $FLOOD SYNs with cookies: counters exact, events rate-limited and accounted for"
	local cookies mod row evs recorded others rl err ncpu i p rpid pids=()

	test_begin "$name"
	[ -x "$FLOOD_BIN" ] || { skip_test "no $FLOOD_BIN (make -C selftests)"; log_test "$name"; return; }
	event_rate_set $RATE ||
		{ check_err 1 "event_rate not writable ($EVENT_RATE)"; log_test "$name"; return; }
	for bad in abc -1 4294967296 "20 30"; do
		if echo "$bad" 2>/dev/null >"$EVENT_RATE"; then
			check_err 1 "event_rate took '$bad'"
		fi
	done
	check_eq "event_rate after the bad writes" "$(cat "$EVENT_RATE")" $RATE
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.6.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		check_err 1 "topology setup failed"
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies=2
	# cli's own stack would answer each SYN-ACK with a RST
	nsx "$cli" nft -f - <<-EOF
	table inet f {
		chain in {
			type filter hook input priority 0;
			tcp sport $PORT drop
		}
	}
	EOF
	check_err $? "nft ruleset"
	# the listener outlives the senders' own bound (120 s) by far: on a
	# debug kernel beside other guests the flood ended past 120 s of the
	# server's life, and the SYNs after that were answered by RSTs
	server_start "$srv" "$TMPDIR_T/srv.json" --listen $SRV:$PORT \
		--no-accept --timeout 600 ||
		check_err 1 "server did not start"
	# the wire: every SYN and SYN-ACK srv's eth0 carries
	wire_start flood "$srv" eth0 "tcp[tcpflags] & tcp-syn != 0"
	ns_snapshot "$srv" B s_
	ns_snapshot "$cli" B c_
	# one sender per CPU (veth delivers on the sender's CPU): every CPU
	# counts cookies for the one listener row, each keeping its own
	# pending counts, which the listeners file must add up; each sender
	# takes its own block of source ports, so no two SYNs share a flow
	ncpu=$(nproc)
	[ "$ncpu" -le 4 ] || ncpu=4
	# a reader settles every CPU's listener record while the senders
	# count cookies into it (a flood's run, taken whole or not at all)
	nsx "$srv" timeout 150 sh -c 'n=0
		while [ ! -e "$1" ]; do
			cat "$2/listeners" "$2/counters" >/dev/null || exit 1
			n=$((n + 1))
		done
		echo $n >"$3"' sh "$TMPDIR_T/stop" "$TCPTW_PROC" "$TMPDIR_T/reads" &
	rpid=$!
	for ((i = 0; i < ncpu; i++)); do
		nsx "$cli" timeout 120 taskset -c "$i" "$FLOOD_BIN" \
			--src 198.18.6.1 --dst $SRV:$PORT \
			--count $((FLOOD / ncpu)) --seconds 60 \
			--sport $((1024 + i * FLOOD / ncpu)) >"$TMPDIR_T/flood.$i.json" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
		check_err $? "tcptw_flood failed"
	done
	touch "$TMPDIR_T/stop"
	wait "$rpid"
	check_err $? "the listeners reader failed"
	check_gt "listeners and counters reads during the flood" \
		"$(cat "$TMPDIR_T/reads" 2>/dev/null || echo 0)" 0
	sleep 1
	ns_snapshot "$srv" A s_
	ns_snapshot "$cli" A c_
	wire_stop
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	cookies=$(d s_mib_TcpExtSyncookiesSent)
	mod=$(d s_tw_ListenSynCookieSent)
	rl=$(d s_tw_EventsRateLimited)
	# srv's events, one read: the ring's listen_syn_cookie lines for the
	# listener, the newest seq, and the lines of any other event
	read -r evs recorded others < <(nsx "$srv" awk -v p="dst=$SRV:$PORT" '{
			for (i = 3; i <= NF; i++)
				if ($i ~ /^seq=/ && substr($i, 5) + 0 > m)
					m = substr($i, 5) + 0
		}
		$2 == "listen_syn_cookie" && index($0, p) { n++ }
		$2 != "listen_syn_cookie" { o++ }
		END { print n + 0, m + 0, o + 0 }' "$TCPTW_PROC/events" 2>/dev/null)
	row=$(nsx "$srv" awk -v a=$SRV -v p=$PORT '$1 == a && $2 == p { print $8 }' \
		"$TCPTW_PROC/listeners")
	diag "flood: $(cat "$TMPDIR_T"/flood.*.json) | srv SyncookiesSent +$cookies ListenSynCookieSent +$mod row cookie_sent ${row:--} events $evs EventsRateLimited +$rl | srv ListenDrops +$(d s_mib_TcpExtListenDrops) ListenOverflows +$(d s_mib_TcpExtListenOverflows) TCPReqQFullDrop +$(d s_mib_TcpExtTCPReqQFullDrop) OutRsts +$(d s_mib_TcpOutRsts)"
	check_gt "srv SyncookiesSent delta" "$cookies" $((FLOOD / 2))
	check_eq "srv ListenSynCookieSent == SyncookiesSent delta" "$mod" "$cookies"
	# tcp_syncookies=2: every SYN-ACK on the wire is a cookie (no request
	# socket, no SYN-ACK retransmitted)
	check_wire_eq "srv ListenSynCookieSent" "$mod" .totals.synack
	check_wire_eq "srv :$PORT listeners row cookie_sent" "${row:-0}" \
		".listeners[\"$SRV $PORT\"].synack"
	check_wire_raw "SYN-ACKs retransmitted (none: no request socket)" 0 \
		.totals.synack_retrans
	diag "srv events: newest seq $recorded, $evs listen_syn_cookie lines in the ring, $others others$(
		[ "$others" = 0 ] || printf ' (%s)' "$(nsx "$srv" awk '$2 != "listen_syn_cookie" { n[$2]++ }
			END { for (t in n) printf "%s %d ", t, n[t] }' "$TCPTW_PROC/events" 2>/dev/null)")"
	check_eq "srv events other than listen_syn_cookie" "$others" 0
	check_range "srv listen_syn_cookie lines in the ring (at most the recorded ones)" \
		"$evs" 1 "$recorded"
	check_eq "srv listen_syn_cookie events recorded (newest seq) + EventsRateLimited == ListenSynCookieSent" \
		$((recorded + rl)) "$mod"
	check_gt "srv EventsRateLimited delta (the limit worked)" "$rl" 0
	err=$(ip netns exec "$srv" "$TCPTW_CLI" events 2>&1 >/dev/null)
	check_eq "tcptw events says how many it left out ($err)" \
		"$(grep -c "tcptw: events: $rl more were counted but not recorded" <<<"$err")" 1
	check_eq "cli ListenSynCookieSent (control)" "$(d c_tw_ListenSynCookieSent)" 0
	check_eq "cli EventsRateLimited (control)" "$(d c_tw_EventsRateLimited)" 0
	cleanup_all_ns
	event_rate_set "$EVENT_RATE_SAVED"
	log_test "$name"
}

# IPv6 takes its own cookie path (cookie_v6_init_sequence): real
# connects to a listener with tcp_syncookies=2, each SYN answered with a
# cookie and the connection made from it
test_cookies_v6()
{
	local name="synflood: ipv6: tcp_syncookies=2, $NV6 connects: every SYN a cookie, counted on the listener's row"
	local out=$TMPDIR_T/v6 cookies mod row

	test_begin "$name"
	B=() A=()
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.6.1/24 $SRV/24 fd00::6:1/64 fd00::6:2/64 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		check_err 1 "topology setup failed"
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies=2
	server_start "$srv" "$out.server.json" --listen "[fd00::6:2]:$PORT" \
		--count $NV6 --timeout 120 --close-first server ||
		check_err 1 "server did not start"
	wire_start v6 "$srv" eth0
	ns_snapshot "$srv" B s_
	timeout 150 "$TRAFFIC" client --connect "[fd00::6:2]:$PORT" \
		--count $NV6 --netns "$(nspath "$cli")" --close-first server \
		--timeout 120 >"$out.client.json"
	bg_wait "$SERVER_PID"
	sleep 1
	ns_snapshot "$srv" A s_
	wire_stop
	cookies=$(d s_mib_TcpExtSyncookiesSent)
	mod=$(d s_tw_ListenSynCookieSent)
	row=$(nsx "$srv" awk -v p=$PORT 'NR > 1 && $2 == p { print $8 }' \
		"$TCPTW_PROC/listeners")
	diag "v6: client ok $(json_get "$out.client.json" ok), SyncookiesSent +$cookies, ListenSynCookieSent +$mod, row cookie_sent ${row:--}"
	check_eq "client connects ok" "$(json_get "$out.client.json" ok)" $NV6
	# a SYN retransmitted meanwhile gets a cookie of its own
	check_range "srv SyncookiesSent delta" "$cookies" $NV6 $((NV6 + NV6 / 5))
	check_eq "srv ListenSynCookieSent == SyncookiesSent delta" "$mod" "$cookies"
	check_wire_eq "srv ListenSynCookieSent" "$mod" .totals.synack
	check_wire_eq "srv :$PORT listeners row cookie_sent" "${row:-0}" \
		".listeners[\"fd00::6:2 $PORT\"].synack"
	check_wire_raw "client connects ok" \
		"$(json_get "$out.client.json" ok)" .totals.conns
	wire_dump
	cleanup_all_ns
	log_test "$name"
}

NV6=50
tests_run \
	test_synflood \
	test_cookies_v6
