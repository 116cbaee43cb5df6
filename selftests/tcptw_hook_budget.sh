#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# What one short connection costs in hook calls, per side.
#
#   cli 198.18.5.1 fd00::5:1 --eth0---eth0-- srv 198.18.5.2 fd00::5:2 :8300
#
# The test build counts the calls each hook's handlers see
# (/sys/module/tcptw/parameters/test_hits). N connections (connect, 64
# bytes each way, close), once with the server closing first and once
# with the client closing first, no conntrack in either netns. Every hook
# a clean connection reaches is asserted at exactly its count: nothing on
# connect(); the SYN (tcp_conn_request) and the child's creation at the
# handshake's ACK (tcp_v4_syn_recv_sock) once each on the server; the
# TIME_WAIT socket's birth once on the side that closed first where the
# kernel keeps no birth time of its own (6.1 to 6.13:
# inet_twsk_hashdance(_schedule); 5.10 sees it from the tracepoint below,
# 6.14+ stamps it: kmod/tw.c); every other function hook fewer than N/5
# times (no reuse, no RST, no PAWS, no SYN cookie per connection; the
# counts are the whole guest's, where a timer of some other socket may
# fire now and then: 1 of 100 seen on 5.10). On 5.10 alone the
# sock:inet_sock_set_state tracepoint is attached: it fires on every
# state change of both sides (its handler returns at the first test but
# for a change to CLOSE), between 4 and 12 per connection, reported
# apart; from 6.1 no tracepoint handler runs for a clean connection.
# Then the budget, in hook calls per connection and side
# (docs/design.md): the client 0, the server 2, plus the birth on the
# side that closed first on 6.1 to 6.13. No hook redirects a call on any
# kernel.
#
# Port pressure: the client's 50 ports held by its own TIME_WAIT sockets
# (client closes first, tcp_tw_reuse=0), then M connect()s that each walk
# all 50 and fail with EADDRNOTAVAIL: from 6.1 exactly one call per
# failed connect() (inet_bhash2_reset_saddr, on its failure path: M, the
# client's own count of EADDRNOTAVAIL), on 5.10 the tracepoint's (1-3
# each), and fewer than M/5 other function hook calls over the M,
# whatever the number of sockets walked (tcptw 0.2.0 hooked
# tcp_twsk_unique: 50 calls per connect()).
#
# The same exact counts, each case its own:
# - conntrack: an nft `ct state new` rule on input and output in both
#   namespaces, client closes first: every flow an entry in each netns's
#   nf_conntrack_count (N and N: the outside truth that conntrack ran),
#   and no call of any conntrack hook (tcptw reads conntrack's own
#   statistics; its hooks are on the rare paths): the same budget.
# - IPv6 (fd00::), server closes first: tcp_v6_syn_recv_sock in place of
#   tcp_v4_syn_recv_sock, the rest as on IPv4.
# - SO_REUSEPORT: the server listens on 16 sockets of one group (16 in
#   `ss -ltn`), server closes first: the connections accepted on more
#   than one of them (tcptw_traffic --reuseport counts per socket), one
#   tcp_conn_request per SYN whatever the group's size, and no walk of
#   the group (its queues are summed for a listeners row only when a
#   socket's queue is full: test_group_walks).
# - tcp_tw_reuse=1, timestamps on: the client's 50 ports held by its own
#   TIME_WAIT sockets (filled with tcp_tw_reuse=0: a fill over 1 s long
#   would take over its own first sockets), then M connects over 1 s
#   later: each a grant (TcpExtTWRecycled grows by M, ok == M), which by
#   design costs one inet_twsk_deschedule_put call (the socket connect()
#   took the tuple from): that call == TWRecycled exactly, the client's
#   calls a grant per connection. Denied: a
#   2-port range filled and walked by 20 more connect()s in one aligned
#   burst (one kernel second, or under tcp_tw_reuse_delay from 6.14; a
#   burst that outlived it is tried again once): 20 EADDRNOTAVAIL,
#   TWRecycled 0, no inet_twsk_deschedule_put, and beyond the 2
#   connections' own calls (4) fewer than 4 over the 20.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip insmod rmmod ss
require_traffic
require_module

N=100
SRV=198.18.5.2
SRV6=fd00::5:2
PORT=8300
BUDGET_CLIENT=0
BUDGET_SERVER=2
# set by budget_case from the probes file: the TIME_WAIT birth's hook
# (6.1-6.13), the failed connect()'s (6.1+), the state-change tracepoint
# (5.10); empty where not attached
BIRTH_HOOK=
FAIL_HOOK=
STATE_TP=
GROUP=16
HITS=/sys/module/tcptw/parameters/test_hits
WALKS=/sys/module/tcptw/parameters/test_group_walks

# hits_snapshot ARRAY: ARRAY[hook] = calls since the load
hits_snapshot()
{
	local -n _h=$1
	local name n

	while IFS=$'\t' read -r name n; do
		_h[$name]=$n
	done <"$HITS"
}

# check_hits LABEL N: the calls each hook saw between the caller's
# snapshots B and A, against the caller's W (hook -> the calls N clean
# connections make) and S (hook -> client, server or both): each hook of
# W exactly so, but the handshake's child (up to N/10 more: the ACK and
# the first data segment, taken on two CPUs at once, can both reach the
# request socket and create a child; one loses, own_req false), the
# state-change tracepoint between 4 and 12 per connection (both sides),
# tcp_timewait_state_process at most once per segment the wire saw reach
# a TIME_WAIT socket (the caller's TW_SEGS, when it traced the run: a
# client's FIN sent after its own ACK of the server's reaches the
# server's FIN_WAIT2 socket, 21-25 of 100 on one vCPU; a FIN or ACK
# retransmitted into TIME_WAIT), every other hook fewer than N/5 times
# (the counts are the whole guest's). Adds the calls to CLI_CALLS,
# SRV_CALLS or BOTH_CALLS (less lost races) and sets RACE.
check_hits()
{
	local label=$1 n=$2 hook d want

	RACE=0
	# a hook the connections reach and no count for it: no test build
	for hook in "${!W[@]}"; do
		[ -n "${A[$hook]:-}" ] ||
			check_err 1 "$label: no calls counted for $hook in $HITS"
	done
	for hook in "${!A[@]}"; do
		d=$(( ${A[$hook]} - ${B[$hook]:-0} ))
		want=${W[$hook]:-}
		if [ "$hook" = inet_sock_set_state ]; then
			diag "$label: $hook: $d calls, both sides"
			check_range "$label: $hook calls (4-12 per connection)" \
				"$d" $((4 * n)) $((12 * n))
			continue
		fi
		[ "$d" -eq 0 ] || diag "$label: $hook: $d calls"
		if [ -z "$want" ] && [ "$hook" = tcp_timewait_state_process ] &&
			[ -n "${TW_SEGS:-}" ]; then
			check_range "$label: $hook calls (none per connection but the $TW_SEGS segments the wire saw reach a TIME_WAIT socket, ${WIRE_MISS:-0} missing)" \
				"$d" 0 $((TW_SEGS + ${WIRE_MISS:-0}))
			_wire_explain_outside "$d" 0 $((TW_SEGS + ${WIRE_MISS:-0})) \
				.totals.seg_tw_server .totals.seg_tw_client
			continue
		fi
		if [ -z "$want" ]; then
			check_range "$label: $hook calls (none per connection)" \
				"$d" 0 $((n / 5 - 1))
			continue
		fi
		case $hook in
		tcp_v4_syn_recv_sock | tcp_v6_syn_recv_sock)
			check_range "$label: $hook calls (${S[$hook]})" \
				"$d" "$want" $((want + n / 10))
			# a child that lost that race is no cost of a connection
			[ "$d" -le "$want" ] || RACE=$((d - want))
			d=$((d - RACE))
			;;
		*)
			check_eq "$label: $hook calls (${S[$hook]})" "$d" "$want"
			;;
		esac
		case ${S[$hook]} in
		client) CLI_CALLS=$((CLI_CALLS + d)) ;;
		server) SRV_CALLS=$((SRV_CALLS + d)) ;;
		*) BOTH_CALLS=$((BOTH_CALLS + d)) ;;
		esac
	done
}

# want_clean N FAMILY CLOSER: W and S (the caller's) for N clean
# connections, CLOSER closing first:
# nothing on connect(); the SYN (tcp_conn_request) and the child's
# creation at the handshake's ACK (tcp_v{4,6}_syn_recv_sock) once each on
# the server; nothing at the TIME_WAIT socket's birth, whichever side
# closed first
want_clean()
{
	local n=$1

	W[tcp_conn_request]=$n
	S[tcp_conn_request]=server
	W[tcp_$2_syn_recv_sock]=$n
	S[tcp_$2_syn_recv_sock]=server
	# one TIME_WAIT socket per connection, on the side that closed first
	if [ -n "$BIRTH_HOOK" ]; then
		W[$BIRTH_HOOK]=$n
		S[$BIRTH_HOOK]=$3
	fi
}

# ct_attached : every conntrack hook attached (nf_conntrack is live)
ct_attached()
{
	local p

	for p in $CT_PROBES; do
		[ "$(probe_state "$p")" = attached ] || return 1
	done
}

# ct_count NS: conntrack entries in NS
ct_count()
{
	nsx "$1" cat /proc/sys/net/netfilter/nf_conntrack_count
}

# one_run CLOSER [VARIANT]: N connections, CLOSER closes first; VARIANT
# v4 (default), v6 (over fd00::), ct (conntrack tracking the flows in
# both namespaces: an nft `ct state` rule on each side's input and
# output), reuseport (the server listens on a group of $GROUP
# SO_REUSEPORT sockets)
one_run()
{
	local closer=$1 variant=${2:-v4} fam=v4 dst=$SRV:$PORT
	local out label ct_cli=0 ct_srv=0 bcli=$BUDGET_CLIENT bsrv=$BUDGET_SERVER
	local srv_args=() v6=() ns p walks
	local CLI_CALLS=0 SRV_CALLS=0 BOTH_CALLS=0 RACE=0 TW_SEGS=
	declare -A B A W S

	label="$closer closes first"
	[ "$variant" = v4 ] || label="$variant, $label"
	out=$TMPDIR_T/budget.$variant.$closer
	case $variant in
	v6)
		fam=v6
		dst=[$SRV6]:$PORT
		v6=(fd00::5:1/64 "$SRV6/64")
		;;
	reuseport) srv_args=(--reuseport "$GROUP") ;;
	esac
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.5.1/24 $SRV/24 "${v6[@]}" &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		{ check_err 1 "$label: topology setup failed"; return; }
	if [ "$variant" = ct ]; then
		for ns in "$cli" "$srv"; do
			printf '%s\n' "table ip budget {" \
				"chain in { type filter hook input priority 0; ct state new counter; }" \
				"chain out { type filter hook output priority 0; ct state new counter; }" \
				"}" | nsx "$ns" nft -f - ||
				{ check_err 1 "$label: nft ct ruleset failed"; return; }
		done
		# attached when nf_conntrack went live (loaded for the rules)
		busywait 10000 ct_attached ||
			{ check_err 1 "$label: conntrack hooks not attached: $(grep nf_conntrack: "$TCPTW_PROC/probes" | tr '\t\n' ' ;')"; return; }
	fi
	server_start "$srv" "$out.server.json" --listen "$dst" \
		--count $N --timeout 120 --close-first "$closer" "${srv_args[@]}" ||
		{ check_err 1 "$label: server did not start"; return; }
	if [ "$variant" = reuseport ]; then
		# the outside truth that there is a group: the kernel's listeners
		check_eq "$label: listening sockets on port $PORT" \
			"$(nsx "$srv" ss -Hltn "sport = :$PORT" | wc -l)" $GROUP
	fi
	# the wire: every segment that reaches a TIME_WAIT socket
	wire_start "budget.$variant.$closer" "$srv" eth0
	hits_settle
	hits_snapshot B
	walks=$(cat "$WALKS")
	timeout 150 "$TRAFFIC" client --connect "$dst" --count $N \
		--close-first "$closer" --netns "$(nspath "$cli")" \
		--timeout 120 >"$out.client.json"
	bg_wait "$SERVER_PID"
	# the last FIN's ACK and the TIME_WAIT sockets settle
	sleep 1
	hits_snapshot A
	wire_stop
	[ -z "$WIRE_JSON" ] ||
		TW_SEGS=$(( $(wire_get .totals.seg_tw_server) +
			    $(wire_get .totals.seg_tw_client) +
			    $(wire_get .totals.syn_tw) +
			    $(wire_get .totals.rst_client_tw) ))
	walks=$(( $(cat "$WALKS") - walks ))
	if [ "$variant" = ct ]; then
		# every flow an entry on each side (in TIME_WAIT for 120 s)
		ct_cli=$(ct_count "$cli")
		ct_srv=$(ct_count "$srv")
		diag "$label: conntrack entries: client $ct_cli, server $ct_srv"
	fi
	cleanup_all_ns
	check_eq "$label: connections ok" "$(json_get "$out.client.json" ok)" $N
	want_clean $N $fam "$closer"
	if [ -n "$BIRTH_HOOK" ]; then
		case $closer in
		client) bcli=$((bcli + 1)) ;;
		server) bsrv=$((bsrv + 1)) ;;
		esac
	fi
	if [ "$variant" = ct ]; then
		check_eq "$label: conntrack entries in the client's netns" "$ct_cli" $N
		check_eq "$label: conntrack entries in the server's netns" "$ct_srv" $N
		# conntrack ran for every flow, none of its hooks did
		for p in $CT_PROBES; do
			W[$p]=0
			S[$p]=both
		done
	fi
	if [ "$variant" = reuseport ]; then
		diag "$label: accepts per listener: $(grep -o '"per_listener":\[[0-9,]*\]' "$out.server.json")"
		check_eq "$label: connections accepted over the group" \
			"$(json_get "$out.server.json" accepted)" $N
		check_gt "$label: listeners that took connections" \
			"$(json_get "$out.server.json" listeners_used)" 1
		# the group's gauges are for a listeners row: no row, no walk
		check_eq "$label: walks of the SO_REUSEPORT group (no listener failed)" \
			"$walks" 0
	fi
	check_hits "$label" $N
	diag "$label: per connection, client $CLI_CALLS/$N, server $SRV_CALLS/$N calls ($RACE children lost the ACK/data race)"
	check_range "$label: client calls per connection x$N" \
		"$CLI_CALLS" 0 $((bcli * N))
	check_range "$label: server calls per connection x$N, less $RACE lost races" \
		"$SRV_CALLS" 0 $((bsrv * N))
}

# pressure_run: M failing connect()s with the client's range full of its
# TIME_WAIT sockets
pressure_run()
{
	local out=$TMPDIR_T/budget.pressure m=100 hook d calls=0 tp=0
	declare -A B A

	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.5.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 &&
		nsx "$cli" sysctl -qw net.ipv4.ip_local_port_range="20000 20049" \
			net.ipv4.tcp_tw_reuse=0 ||
		{ check_err 1 "topology setup failed"; return; }
	server_start "$srv" "$out.server.json" --listen $SRV:$PORT \
		--count 50 --timeout 120 --close-first client ||
		{ check_err 1 "server did not start"; return; }
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count 50 \
		--close-first client --netns "$(nspath "$cli")" \
		--timeout 120 >"$out.fill.json"
	bg_wait "$SERVER_PID"
	hits_settle
	hits_snapshot B
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count $m \
		--close-first client --netns "$(nspath "$cli")" \
		--timeout 120 >"$out.client.json"
	hits_snapshot A
	check_eq "pressure: client TIME_WAIT sockets" "$(tw_sockets "$cli")" 50
	cleanup_all_ns
	check_eq "pressure: connects filling the range ok" \
		"$(json_get "$out.fill.json" ok)" 50
	check_eq "pressure: connect()s failed with EADDRNOTAVAIL" \
		"$(json_get "$out.client.json" errors.EADDRNOTAVAIL)" $m
	for hook in "${!A[@]}"; do
		d=$(( ${A[$hook]} - ${B[$hook]:-0} ))
		if [ "$hook" = inet_sock_set_state ]; then
			tp=$d
			continue
		fi
		[ "$d" -eq 0 ] || diag "pressure: $hook: $d calls"
		if [ "$hook" = "$FAIL_HOOK" ]; then
			check_eq "pressure: $hook calls (one per failed connect(): the client's EADDRNOTAVAIL)" \
				"$d" $m
			continue
		fi
		calls=$((calls + d))
	done
	diag "pressure: $calls other function hook calls, $tp tracepoint calls over $m failed connect()s"
	check_range "pressure: other function hook calls over $m failed connect()s (none per connect(), 50 sockets walked each)" \
		"$calls" 0 $((m / 5 - 1))
	if [ -n "$STATE_TP" ]; then
		check_range "pressure: tracepoint calls (1-3 per failed connect())" \
			"$tp" "$m" $((3 * m))
	fi
}

# burst_fits FILE: every connect() of the client's --verbose output FILE
# ran where none of the burst's own TIME_WAIT sockets was old enough for
# reuse: in one CLOCK_MONOTONIC second before 6.14, within
# tcp_tw_reuse_delay (1000 ms) from 6.14 (as reuse_lib.sh's bursts)
burst_fits()
{
	local ms=0

	[ -e /proc/sys/net/ipv4/tcp_tw_reuse_delay ] && ms=1000
	grep -o '"t_ms":[0-9.]*' "$1" | cut -d: -f2 | awk -v ms=$ms '
		NR == 1 { t0 = $1; s0 = int($1 / 1000) }
		{ if (ms ? $1 - t0 >= ms : int($1 / 1000) != s0) bad = 1 }
		END { exit bad }'
}

# reuse_run: timestamps on at both ends. The client's 50 ports
# (20000-20049) held by its own TIME_WAIT sockets (client closes first,
# each connection's barrier waits for the server's FIN; tcp_tw_reuse=0
# so that none is taken over in the fill), then with tcp_tw_reuse=1
# granted: M connects over 1 s later, each taking over one of them
# (every port of the range is held: every connect() is a grant), and
# denied: a 2-port range (20050-20051) filled and walked again in one
# aligned burst, in which no TIME_WAIT socket gets old enough.
reuse_run()
{
	local out=$TMPDIR_T/budget.reuse m=50 md=20 try lo rec calls tp hook d own
	local births
	local CLI_CALLS=0 SRV_CALLS=0 BOTH_CALLS=0 RACE=0
	declare -A B A W S

	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.5.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 &&
		nsx "$srv" sysctl -qw net.ipv4.tcp_timestamps=1 &&
		nsx "$cli" sysctl -qw net.ipv4.ip_local_port_range="20000 20049" \
			net.ipv4.tcp_tw_reuse=0 net.ipv4.tcp_timestamps=1 \
			net.ipv4.tcp_rfc1337=1 ||
		{ check_err 1 "reuse: topology setup failed"; return; }
	# a TIME_WAIT socket's age in ms from 6.14: its default, explicit
	if [ -e /proc/sys/net/ipv4/tcp_tw_reuse_delay ]; then
		nsx "$cli" sysctl -qw net.ipv4.tcp_tw_reuse_delay=1000 ||
			{ check_err 1 "reuse: tcp_tw_reuse_delay"; return; }
	fi
	# the fill, the grants and two tries of the denied burst's 2 ports
	server_start "$srv" "$out.server.json" --listen $SRV:$PORT \
		--count $((50 + m + 4)) --timeout 200 --close-first client ||
		{ check_err 1 "reuse: server did not start"; return; }
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count 50 \
		--close-first client --barrier --netns "$(nspath "$cli")" \
		--timeout 120 >"$out.fill.json"
	check_eq "reuse: connects filling the range ok" \
		"$(json_get "$out.fill.json" ok)" 50
	check_eq "reuse: client TIME_WAIT sockets holding the range" \
		"$(tw_sockets "$cli")" 50
	# only now: a fill that lasts over 1 s (a starved guest) would take
	# over its own first sockets and leave ports free (19 of 50 seen)
	nsx "$cli" sysctl -qw net.ipv4.tcp_tw_reuse=1 ||
		{ check_err 1 "reuse: tcp_tw_reuse=1"; return; }
	# over 1 s (the kernel's next second; tcp_tw_reuse_delay) since the
	# last TIME_WAIT socket's peer timestamp: with hits_settle, over 2 s
	nap 1.1
	hits_settle
	hits_snapshot B
	rec=$(mib "$cli" TcpExtTWRecycled)
	timeout 150 "$TRAFFIC" client --connect $SRV:$PORT --count $m \
		--close-first client --barrier --verbose \
		--netns "$(nspath "$cli")" --timeout 120 >"$out.granted.json"
	nap 0.5
	hits_snapshot A
	rec=$(( $(mib "$cli" TcpExtTWRecycled) - rec ))
	[ "$rec" = $m ] ||
		diag "reuse granted: ports taken: $(grep -o '"lport":[0-9]*' "$out.granted.json" | cut -d: -f2 | tr '\n' ' ')"
	check_eq "reuse granted: connects ok" \
		"$(json_get "$out.granted.json" ok)" $m
	# the outside truth that the reuse decision was taken: the kernel's
	check_eq "reuse granted: TcpExtTWRecycled (every connect() a grant)" \
		"$rec" $m
	check_eq "reuse granted: client TIME_WAIT sockets (one per port)" \
		"$(tw_sockets "$cli")" 50
	want_clean $m v4 client
	# by design a grant costs one call: inet_twsk_deschedule_put of the
	# socket connect() took the tuple from (docs/design.md, TwReuseGranted)
	W[inet_twsk_deschedule_put]=$rec
	S[inet_twsk_deschedule_put]=client
	check_hits "reuse granted" $m
	diag "reuse granted: per connection, client $CLI_CALLS/$m, server $SRV_CALLS/$m calls, $rec grants ($RACE children lost the ACK/data race)"
	births=0
	[ -z "$BIRTH_HOOK" ] || births=$m
	check_eq "reuse granted: client calls: one per grant${BIRTH_HOOK:+ and one per birth}" \
		"$CLI_CALLS" "$((rec + births))"
	check_range "reuse granted: server calls per connection x$m, less $RACE lost races" \
		"$SRV_CALLS" 0 $((2 * m))

	# denied: 2 connections (their TIME_WAIT sockets in place before the
	# next connect(): --barrier), then md connect()s that find both ports
	# held by a socket too young to reuse; a burst that ran into the
	# kernel's next second (a starved guest) is tried again on 2 fresh
	# ports
	for try in 1 2; do
		lo=$((20048 + 2 * try))
		nsx "$cli" sysctl -qw net.ipv4.ip_local_port_range="$lo $((lo + 1))" ||
			{ check_err 1 "reuse denied: port range"; break; }
		CLI_CALLS=0 SRV_CALLS=0 BOTH_CALLS=0 RACE=0 calls=0 tp=0
		B=() A=() W=() S=()
		hits_settle
		hits_snapshot B
		rec=$(mib "$cli" TcpExtTWRecycled)
		timeout 60 "$TRAFFIC" client --connect $SRV:$PORT \
			--count $((2 + md)) --align-seconds --verbose \
			--close-first client --barrier --netns "$(nspath "$cli")" \
			--timeout 30 >"$out.denied.json"
		hits_snapshot A
		rec=$(( $(mib "$cli" TcpExtTWRecycled) - rec ))
		burst_fits "$out.denied.json" && break
		diag "reuse denied: try $try: the burst outlived its sockets' youth (slow guest)"
	done
	check_eq "reuse denied: connects ok (the 2 ports)" \
		"$(json_get "$out.denied.json" ok)" 2
	check_eq "reuse denied: connect()s failed with EADDRNOTAVAIL" \
		"$(json_get "$out.denied.json" errors.EADDRNOTAVAIL)" $md
	check_eq "reuse denied: TcpExtTWRecycled (no grant)" "$rec" 0
	check_eq "reuse denied: client TIME_WAIT sockets" \
		"$(tw_sockets "$cli")" $((50 + 2 * try))
	# the server waits for the connections of a try not made
	cleanup_all_ns
	bg_wait "$SERVER_PID"
	# the 2 connections' own calls, exactly (the SYN and the child on
	# the server, the births on the client where hooked); each failed
	# connect() one call from 6.1 (FAIL_HOOK), none on 5.10 (the
	# tracepoint tells them, 1-3 each)
	own=4
	[ -z "$BIRTH_HOOK" ] || own=6
	for hook in "${!A[@]}"; do
		d=$(( ${A[$hook]} - ${B[$hook]:-0} ))
		case $hook in
		inet_sock_set_state) tp=$d; continue ;;
		"$FAIL_HOOK")
			check_eq "reuse denied: $hook calls (one per failed connect())" \
				"$d" $md
			continue ;;
		tcp_conn_request)
			check_eq "reuse denied: $hook calls" "$d" 2 ;;
		tcp_v4_syn_recv_sock)
			check_range "reuse denied: $hook calls" "$d" 2 3
			[ "$d" -le 2 ] || RACE=$((d - 2)) ;;
		inet_twsk_deschedule_put)
			check_eq "reuse denied: $hook calls (no grant)" "$d" 0 ;;
		esac
		[ "$d" -eq 0 ] || diag "reuse denied: $hook: $d calls"
		calls=$((calls + d))
	done
	diag "reuse denied: $calls function hook calls ($RACE lost races), $tp tracepoint calls: 2 connections and $md failed connect()s"
	check_range "reuse denied: other function hook calls beyond the 2 connections' $own (none per failed connect())" \
		"$((calls - RACE - own))" 0 $((md / 5 - 1))
	if [ -n "$STATE_TP" ]; then
		check_range "reuse denied: tracepoint calls (4-12 per connection, 1-3 per failed connect())" \
			"$tp" $((4 * 2 + md)) $((12 * 2 + 3 * md))
	fi
}

# budget_case NAME RUN...: a test case: the test build loaded, each RUN
# (a command, quoted for eval), the normal build back
budget_case()
{
	local name=$1 run; shift

	test_begin "$name"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	rmmod tcptw && timeout 120 insmod "$TCPTW_TEST_KO" ||
		{ check_err 1 "insmod of the test build failed"; restore_module; log_test "$name"; return; }
	# a build without TCPTW_TEST counts nothing: every count would be 0
	if [ ! -r "$HITS" ]; then
		check_err 1 "$TCPTW_TEST_KO is no test build: no $HITS"
		restore_module
		log_test "$name"
		return
	fi
	diag "hooks: $(awk -F'\t' '{ printf "%s=%s ", $1, $2 }' "$TCPTW_PROC/probes")"
	local probe
	BIRTH_HOOK= FAIL_HOOK= STATE_TP=
	for probe in inet_twsk_hashdance inet_twsk_hashdance_schedule \
		 inet_bhash2_reset_saddr inet_sock_set_state; do
		[ "$(probe_state "$probe")" = attached ] || continue
		case $probe in
		inet_twsk_*) BIRTH_HOOK=$probe ;;
		inet_bhash2_*) FAIL_HOOK=$probe ;;
		*) STATE_TP=$probe ;;
		esac
	done
	diag "birth hook: ${BIRTH_HOOK:-none}, failed connect(): ${FAIL_HOOK:-${STATE_TP:-none}}"
	# one of the two ways to see a failed connect(), on every kernel
	[ -n "$FAIL_HOOK$STATE_TP" ] ||
		check_err 1 "neither inet_bhash2_reset_saddr nor inet_sock_set_state attached"
	for run in "$@"; do
		eval "$run"
	done
	restore_module
	check_eq "reload of the normal build" "$?" 0
	log_test "$name"
}

test_budget()
{
	budget_case "hook budget: one short connection costs client <= $BUDGET_CLIENT, server <= $BUDGET_SERVER hook calls" \
		"one_run server" "one_run client" pressure_run
}

test_budget_conntrack()
{
	budget_case "hook budget with conntrack in both namespaces: no conntrack hook call, the same budget" \
		"one_run client ct"
}

test_budget_v6()
{
	budget_case "hook budget over IPv6: the same per connection and side" \
		"one_run server v6"
}

test_budget_reuseport()
{
	budget_case "hook budget with a $GROUP-socket SO_REUSEPORT listener: the same per connection" \
		"one_run server reuseport"
}

test_budget_tw_reuse()
{
	budget_case "hook budget with tcp_tw_reuse=1: one call per grant, none per denial" \
		reuse_run
}

tests_run \
	test_budget \
	test_budget_conntrack \
	test_budget_v6 \
	test_budget_reuseport \
	test_budget_tw_reuse
