#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Helpers shared by the client-side selftests (tcptw_port_exhaustion.sh,
# tcptw_tw_reuse.sh, tcptw_nginx_upstream.sh), sourced after lib.sh:
# a veth pair with explicit per-netns sysctls, before/after snapshots of
# one namespace's tcptw and MIB counters, the peers table, and the
# per-connect outcome of tcptw_traffic --verbose.

# The ephemeral range every scenario squeezes the client into: 50 ports.
PORT_LO=20000
PORT_HI=20049
NPORTS=$((PORT_HI - PORT_LO + 1))

# rl_sysctl NS KEY=VALUE... : set sysctls in @ns; a failure is a test error.
rl_sysctl()
{
	local ns=$1 kv; shift

	for kv in "$@"; do
		if ! nsx "$ns" sysctl -qw "$kv"; then
			check_err 1 "sysctl $kv in $ns failed"
			return 1
		fi
	done
}

# rl_begin SHORT NAME [REUSE SRV_TS] : test_begin SHORT; false, with
# NAME logged as skipped, unless the reuse hooks are attached; with REUSE,
# a fresh pair whose client has tcp_tw_reuse=REUSE and whose server has
# tcp_timestamps=SRV_TS, false (NAME logged as failed) if it cannot be
# made. The case ends with rl_end NAME.
rl_begin()
{
	test_begin "$1"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$2"
		return 1
	fi
	[ $# -gt 2 ] || return 0
	if ! pair_setup || ! rl_client_sysctls "$cli" "$3" ||
	   ! rl_sysctl "$srv" net.ipv4.tcp_timestamps="$4"; then
		check_err 1 "setup failed"
		rl_end "$2"
		return 1
	fi
}

# rl_end NAME : the case's namespaces removed, NAME logged
rl_end()
{
	cleanup_all_ns
	log_test "$1"
}

# rl_client_sysctls NS TW_REUSE [LO HI] : the client's settings, all
# explicit (a new netns defaults to tcp_tw_reuse=2). tcp_rfc1337=1: a
# TIME_WAIT socket ignores RSTs; one killed by an RST frees its port
# early, and a burst gets one connect more than the quota (seen once on
# 5.10 under load: TwKilledByRst 1, 51 connects in the first burst; a
# server that retransmits its FIN because the ACK was late answers the
# duplicate ACK from its closed socket with an RST). Kernels with
# net.ipv4.tcp_tw_reuse_delay (6.14+, milliseconds) measure the TIME_WAIT
# age in ms instead of comparing CLOCK_MONOTONIC seconds; it is set to its
# default, 1000, and the bursts of the tests start every other second, so
# that a socket from the previous burst (1-2 s old) is reusable and one
# from the current burst (< 1 s) is not, on either kind of kernel, however
# long a burst takes under TCG (up to ~900 ms).
RL_REUSE_DELAY_MS=1000
RL_ALIGN=(--align-seconds --align-every 2)
rl_client_sysctls()
{
	local ns=$1 reuse=$2 lo=${3:-$PORT_LO} hi=${4:-$PORT_HI}

	rl_sysctl "$ns" "net.ipv4.ip_local_port_range=$lo $hi" \
		net.ipv4.tcp_tw_reuse="$reuse" net.ipv4.tcp_timestamps=1 \
		net.ipv4.tcp_rfc1337=1 || return 1
	if ip netns exec "$ns" test -e /proc/sys/net/ipv4/tcp_tw_reuse_delay; then
		rl_sysctl "$ns" net.ipv4.tcp_tw_reuse_delay="$RL_REUSE_DELAY_MS"
	fi
}

# rl_snap NS ARRAY : ns_snapshot into the associative array ARRAY.
rl_snap()
{
	ns_snapshot "$1" "$2" ""
}

# rl_delta KEY : ${AFTER[KEY]} - ${BEFORE[KEY]} (0 if absent).
declare -A BEFORE AFTER
rl_delta()
{
	echo $(( ${AFTER[$1]:-0} - ${BEFORE[$1]:-0} ))
}

# rl_tw NAME : the tcptw counter delta, empty without the module.
rl_tw()
{
	[ "$HAVE_MODULE" = 1 ] || return 0
	rl_delta "tw_$1"
}

# rl_mib NAME : the MIB delta (TcpExtTW, TcpExtTWRecycled, ...).
rl_mib()
{
	rl_delta "mib_$1"
}

# rl_peer NS ADDR PORT COLUMN : a column of @ns's peers row for ADDR PORT,
# looked up by the header's column names; 0 if there is no such row (no
# decision was ever recorded for that endpoint), empty without the module.
rl_peer()
{
	[ "$HAVE_MODULE" = 1 ] || return 0
	nsx "$1" cat "$TCPTW_PROC/peers" 2>/dev/null |
		awk -v a="$2" -v p="$3" -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == a && $2 == p { v = $(col[c]); f = 1 }
		END { if (!(c in col)) exit 1; print f ? v : 0 }'
}

# rl_range_run NAME KIND SRC DST PORT LPORT SPARE : a server on srv at
# DST:PORT (the client closes first); on cli, tcptw_sock.py range-reuse
# from SRC with the one-port range LPORT (SPARE: KIND unspec's other
# port); cli's side traced (wire_start). Fills BEFORE/AFTER (cli) and OUT
# (the scenario's JSON line); the server is stopped after.
rl_range_run()
{
	local name=$1 kind=$2 src=$3 dst=$4 port=$5 lport=$6 spare=$7

	if ! server_start "$srv" "$TMPDIR_T/$name.server.json" \
	     --listen "$(addr_port "$dst" "$port")" --count 0 --timeout 60 \
	     --close-first client; then
		check_err 1 "server did not start"
		return 1
	fi
	BEFORE=() AFTER=()
	OUT=$TMPDIR_T/$name.json
	wire_start "$name" "$cli" eth0
	rl_snap "$cli" BEFORE
	timeout 60 ip netns exec "$cli" python3 "$LIB_DIR/tcptw_sock.py" \
		range-reuse "$src" "$dst" "$port" "$lport" "$spare" "$kind" \
		>"$OUT"
	check_err $? "tcptw_sock.py range-reuse failed"
	rl_snap "$cli" AFTER
	wire_stop
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	diag "$name: $(cat "$OUT")"
}

# rl_peers_dump NS : the peers table as diagnostics.
rl_peers_dump()
{
	[ "$HAVE_MODULE" = 1 ] || return 0
	nsx "$1" cat "$TCPTW_PROC/peers" 2>/dev/null |
		sed 's/^/#   peers: /'
}

# rl_tw_dump : the reuse counters' deltas on one line.
rl_tw_dump()
{
	local k line=

	[ "$HAVE_MODULE" = 1 ] || return 0
	for k in TwReuseGranted TwReuseDeniedDisabled TwReuseDeniedLoopbackOnly \
		 TwReuseDeniedNoTimestamps TwReuseDeniedTooRecent \
		 TwReuseDeniedFinWait2 ConnectPortExhausted ConnectTupleInUse \
		 TwCreated TwKilledByRst RstSent RstReceived; do
		line+=" $k=$(rl_tw $k)"
	done
	diag "tcptw:$line"
}

# rl_outcomes FILE : one character per attempt from tcptw_traffic
# --verbose: '.' ok, 'X' EADDRNOTAVAIL, '?' any other error.
rl_outcomes()
{
	grep -o '"err":"[A-Za-z0-9]*"' "$1" | awk -F'"' '
		{ s = s ($4 == "" ? "." : ($4 == "EADDRNOTAVAIL" ? "X" : "?")) }
		END { print s }'
}

# rl_burst_mismatch FILE BURST QUOTA : attempts of aligned bursts of BURST
# whose outcome differs from "the first QUOTA of each burst succeed, the
# rest fail with EADDRNOTAVAIL".
rl_burst_mismatch()
{
	rl_outcomes "$1" | awk -v b="$2" -v q="$3" '
		{ n = split($0, c, "")
		  for (i = 1; i <= n; i++) {
			want = ((i - 1) % b < q) ? "." : "X"
			if (c[i] != want) bad++
		  } }
		END { print bad + 0 }'
}

# rl_times FILE : the CLOCK_MONOTONIC time in ms of each connect() of
# tcptw_traffic --verbose output ("t_ms"), one per line
rl_times()
{
	grep -o '"t_ms":[0-9.]*' "$1" | cut -d: -f2
}

# rl_bursts_fit : succeeds if every aligned burst of $BURST in $OUT ran
# where the kernel's quota gives the burst its exact shape, else prints
# how many did not. Before 6.14 a TIME_WAIT port may be reused once its
# last peer timestamp is from an earlier CLOCK_MONOTONIC second: the
# burst must begin and end in one second. With tcp_tw_reuse_delay (6.14+)
# the age is counted in ms: the burst must last less than the delay (the
# previous burst began 2 s earlier, so its sockets are old enough).
rl_bursts_fit()
{
	local n ms=0

	[ -e /proc/sys/net/ipv4/tcp_tw_reuse_delay ] && ms=$RL_REUSE_DELAY_MS
	n=$(rl_times "$OUT" | awk -v b="$BURST" -v ms="$ms" '
		{ s = int($1 / 1000); k = int((NR - 1) / b)
		  if (!(k in first)) { first[k] = s; t0[k] = $1 }
		  else if (!(k in bad) &&
			   (ms ? $1 - t0[k] >= ms : s != first[k])) {
			bad[k] = 1; n++ } }
		END { print n + 0 }')
	[ "$n" = 0 ] && return 0
	if [ "$ms" -gt 0 ]; then
		echo "$n burst(s) lasted $ms ms or more (slow host), so a port of the burst was reusable in it again"
	else
		echo "$n burst(s) ran into the next CLOCK_MONOTONIC second (slow host), where the per-second quota no longer holds"
	fi
	return 1
}

# rl_aligned_run CMD... : run CMD (it builds fresh namespaces, runs
# aligned bursts of $BURST and fills OUT); if a burst did not fit
# (rl_bursts_fit), run it once more in new namespaces (rerun_once). Fails
# only if CMD fails. REPRODUCED=1 if the last run's bursts fit: then the
# exact per-burst shape can be asserted; otherwise the caller asserts
# only what holds whatever the timing (the counters against the MIBs and
# the client's failures) and says the shape was not checked.
rl_aligned_run()
{
	rerun_once rl_bursts_fit cleanup_all_ns "$@" || return 1
	[ "$REPRODUCED" = 1 ] ||
		diag "the bursts did not fit twice (slow host): their exact shape is not checked, every counter still is"
}

# rl_unfit OK FAIL ATTEMPTS : what a run whose bursts did not fit twice
# (REPRODUCED 0) can still assert: its attempts add up. Without a single
# refusal there is nothing to check: a skip that says why, and 1.
rl_unfit()
{
	if [ "$2" = 0 ]; then
		skip_test "the bursts ran past the quota's clock twice (slow host): no connect() was refused, nothing to check"
		return 1
	fi
	check_eq "client ok + EADDRNOTAVAIL" $(($1 + $2)) "$3"
}

# rl_show_bursts FILE BURST : the outcomes, one burst per line, with the
# time from its first connect() to its last and where in its second of
# CLOCK_MONOTONIC it ended.
rl_show_bursts()
{
	paste -d' ' <(rl_outcomes "$1" | fold -w1) \
		<(rl_times "$1") | awk -v b="$2" '
		{ k = int((NR - 1) / b)
		  if (!(k in t0)) { t0[k] = $2; n = k }
		  o[k] = o[k] $1; t1[k] = $2 }
		END { for (k = 0; k <= n; k++)
			printf "#   burst %d (%d ms, ends at +%d ms): %s\n", k,
				t1[k] - t0[k], t1[k] % 1000, o[k] }'
}

# rl_run NAME NS DST SERVER_NS SERVER_ADDR CLIENT_ARGS... : a server in
# SERVER_NS, then the client in NS; fills BEFORE/AFTER (of NS) and OUT,
# and traces NS's side of the wire (lib_wire.sh: WIRE_JSON).
rl_run()
{
	local name=$1 ns=$2 dst=$3 sns=$4 saddr=$5; shift 5

	OUT=$TMPDIR_T/$name.client.json
	if ! server_start "$sns" "$TMPDIR_T/$name.server.json" \
	     --listen "$saddr" --count 0 --timeout 60 --close-first client; then
		check_err 1 "server did not start"
		return 1
	fi
	BEFORE=() AFTER=()
	# the wire: the client's side (its SYNs, whatever the server does)
	if [ "$ns" = "$sns" ]; then
		wire_start "$name" "$ns" lo
	else
		wire_start "$name" "$ns" eth0
	fi
	rl_snap "$ns" BEFORE
	timeout 90 "$TRAFFIC" client --connect "$dst" \
		--netns "$(nspath "$ns")" --close-first client --barrier \
		--connect-timeout 3000 --timeout 60 --verbose "$@" >"$OUT"
	check_err $? "client failed"
	rl_snap "$ns" AFTER
	wire_stop
	diag "client: $(sed 's/,"per_connect".*/}/' "$OUT")"
	diag "outcomes: $(rl_outcomes "$OUT")"
	diag "cli TcpExt TW=$(rl_mib TcpExtTW) TWRecycled=$(rl_mib TcpExtTWRecycled) TIME_WAIT sockets=$(tw_sockets "$ns")"
	rl_tw_dump
	rl_peers_dump "$ns"
}
