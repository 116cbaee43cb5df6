#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# TIME_WAIT reuse on connect(): when it is granted, and why it is refused.
#
#   cli 198.18.0.1 / fd00::1 --eth0---eth0-- srv 198.18.0.2 / fd00::2 :8080
#   ip_local_port_range 20000 20049 (50 ports), client closes first
#
#   loopback case, one namespace:
#   cli 127.0.0.1 --lo-- 127.0.0.1:8080 (server in cli)
#
# Each connection leaves a TIME_WAIT socket on cli holding one of its 50
# ports (a fresh pair of namespaces per case, so counters start at 0).
#  1. tcp_tw_reuse=1, timestamps on, bursts of 55 connects aligned on
#     every other CLOCK_MONOTONIC second: a TIME_WAIT port may be taken
#     over once its last peer timestamp is from an earlier second (or, on
#     6.14+, it is tcp_tw_reuse_delay = 1000 ms old), so in every burst
#     exactly the first 50 succeed and 5 fail with EADDRNOTAVAIL (a burst
#     that runs past the quota's clock on a slow host is run once more;
#     if it does again, that shape is not asserted, the counters are, and
#     a run in which no connect() was refused at all is a skip that says
#     so).
#     TwReuseGranted == TcpExt TWRecycled delta == ok - 50,
#     TwReuseDeniedTooRecent == ConnectPortExhausted == the failures
#     (a refusal is counted once per failed connect(), with its reason).
#     IPv4 and IPv6. Control: bursts of 45 never fail, nothing exhausted.
#  2. Default tcp_tw_reuse=2: over the veth it is refused like 0
#     (TwReuseDeniedLoopbackOnly == the failures, nothing granted); over 127.0.0.1 it
#     is granted (TwReuseGranted == TWRecycled delta > 0).
#  3. A socket bound with bind() to 198.18.0.1:30000, SO_REUSEADDR on the
#     old and the new socket, connect()s to srv while its 4-tuple is in
#     TIME_WAIT: granted even with tcp_tw_reuse=0 (TwReuseGranted ==
#     TWRecycled delta == 2 of 3 connects); with srv's timestamps off every
#     later connect() fails with EADDRNOTAVAIL, ConnectTupleInUse == those
#     failures. Control: without SO_REUSEADDR bind() fails (EADDRINUSE)
#     and no reuse decision is made at all.
#  4. net.ipv4.tcp_tw_reuse_delay (kernels that have it, 6.14+; a skip
#     naming the kernel elsewhere): with the delay at 5000 ms, 50 connects
#     fill the range; 1.2 s later a connect fails (TwReuseDeniedTooRecent
#     == 1, each event's age_ms < 5000); 5.6 s after the
#     fill 50 connects succeed (TwReuseGranted == TWRecycled delta == 50,
#     each event's age_ms >= 5000). Control: delay 1000 ms, the connect
#     1.2 s after the fill is granted.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip nstat ss
require_traffic
require_module
# every failure is asserted to leave its event
events_every

BURST=55
NBURSTS=3
BIND_PORT=30000

REASONS="TwReuseDeniedDisabled TwReuseDeniedLoopbackOnly TwReuseDeniedNoTimestamps TwReuseDeniedTooRecent TwReuseDeniedFinWait2"

# check_only_reason REASON : every other denial counter is 0 (the reasons
# are mutually exclusive); REASON "" : no denial at all.
check_only_reason()
{
	local k

	for k in $REASONS; do
		[ "$k" = "$1" ] && continue
		check_mod_eq "$k (not the reason here)" "$(rl_tw "$k")" 0
	done
}

# --------------------------------------------------------------- case 1

# bursts_run FAM DST N : fresh pair, tcp_tw_reuse=1, timestamps on, N
# connects in aligned bursts of BURST.
bursts_run()
{
	pair_setup && rl_client_sysctls "$cli" 1 &&
		rl_sysctl "$srv" net.ipv4.tcp_timestamps=1 &&
		rl_run "bursts_$1" "$cli" "$2" "$srv" "$2" \
			--count "$3" "${RL_ALIGN[@]}" --burst $BURST
}

test_bursts()
{
	local fam=$1 dst=$2 peer=$3 n=$((BURST * NBURSTS))
	local name="tw_reuse: $fam: tcp_tw_reuse=1, aligned bursts of $BURST: 50 per burst granted, the rest TooRecent + ConnectPortExhausted"
	local ok fail rec

	test_begin "bursts $fam"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if rl_aligned_run bursts_run "$fam" "$dst" $n; then
		rl_show_bursts "$OUT" $BURST
		ok=$(json_get "$OUT" ok)
		fail=$(json_get "$OUT" errors.EADDRNOTAVAIL)
		rec=$(rl_mib TcpExtTWRecycled)
		if [ "$REPRODUCED" = 1 ]; then
			check_eq "client ok" "$ok" $((NPORTS * NBURSTS))
			check_eq "client EADDRNOTAVAIL" "$fail" \
				$(((BURST - NPORTS) * NBURSTS))
			check_eq "attempts not following 50 ok + $((BURST - NPORTS)) EADDRNOTAVAIL per burst" \
				"$(rl_burst_mismatch "$OUT" $BURST $NPORTS)" 0
			check_eq "cli TIME_WAIT sockets" "$(tw_sockets "$cli")" \
				$NPORTS
		elif ! rl_unfit "$ok" "$fail" $n; then
			cleanup_all_ns
			log_test "$name"
			return
		fi
		check_eq "client failures (any errno)" \
			"$(json_get "$OUT" failed)" "$fail"
		# each success made a TIME_WAIT socket, each reuse ended one
		check_eq "cli TcpExt TWRecycled delta == ok - TIME_WAIT sockets" \
			"$rec" $((ok - $(tw_sockets "$cli")))
		check_tw_mib "cli TcpExt TW delta == ok" "$(rl_mib TcpExtTW)" "$ok"
		# the wire: SYNs on a 4-tuple the client's TIME_WAIT held
		check_wire_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" \
			.totals.syn_client_tw
		check_wire_raw "cli TcpExt TWRecycled delta" "$rec" \
			.totals.syn_client_tw
		check_mod_eq "TwReuseDeniedTooRecent == client EADDRNOTAVAIL (one per failed connect)" \
			"$(rl_tw TwReuseDeniedTooRecent)" "$fail"
		check_mod_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$(rl_tw ConnectPortExhausted)" "$fail"
		check_mod_eq "ConnectTupleInUse" "$(rl_tw ConnectTupleInUse)" 0
		check_only_reason TwReuseDeniedTooRecent
		check_mod_eq "peers $peer 8080 reuse_granted == TwReuseGranted" \
			"$(rl_peer "$cli" "$peer" 8080 reuse_granted)" \
			"$(rl_tw TwReuseGranted)"
		check_mod_eq "peers $peer 8080 denied_too_recent == TwReuseDeniedTooRecent" \
			"$(rl_peer "$cli" "$peer" 8080 denied_too_recent)" \
			"$(rl_tw TwReuseDeniedTooRecent)"
		check_mod_eq "peers $peer 8080 port_exhausted == client EADDRNOTAVAIL" \
			"$(rl_peer "$cli" "$peer" 8080 port_exhausted)" "$fail"
		check_mod_eq "connect_port_exhausted events with reason too_recent == client EADDRNOTAVAIL" \
			"$(events_count "$cli" connect_port_exhausted "reason=too_recent")" \
			"$fail"
	else
		check_err 1 "setup failed"
	fi
	cleanup_all_ns
	log_test "$name"
}

# Control: bursts of 45 < 50 ports never fail.
test_bursts_control()
{
	local n=$((45 * NBURSTS)) ok rec
	local name="tw_reuse: control: tcp_tw_reuse=1, aligned bursts of 45 -> ConnectPortExhausted 0"

	rl_begin "bursts control" "$name" 1 1 || return
	if rl_run bursts_control "$cli" 198.18.0.2:8080 "$srv" \
		198.18.0.2:8080 --count $n "${RL_ALIGN[@]}" --burst 45; then
		rl_show_bursts "$OUT" 45
		ok=$(json_get "$OUT" ok)
		rec=$(rl_mib TcpExtTWRecycled)
		check_eq "client ok" "$ok" $n
		check_eq "client failures" "$(json_get "$OUT" failed)" 0
		# each success made a TIME_WAIT socket, each reuse ended one
		check_eq "cli TcpExt TWRecycled delta == ok - TIME_WAIT sockets" \
			"$rec" $((ok - $(tw_sockets "$cli")))
		check_gt "cli TcpExt TWRecycled delta" "$rec" 0
		# the wire: SYNs on a 4-tuple the client's TIME_WAIT held
		check_wire_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" \
			.totals.syn_client_tw
		check_wire_raw "cli TcpExt TWRecycled delta" "$rec" \
			.totals.syn_client_tw
		check_mod_eq "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_mod_eq "peers 198.18.0.2 8080 port_exhausted" \
			"$(rl_peer "$cli" 198.18.0.2 8080 port_exhausted)" 0
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# --------------------------------------------------------------- case 2

test_default_veth()
{
	local n=80 fail
	local name="tw_reuse: default tcp_tw_reuse=2 over a veth: refused, TwReuseDeniedLoopbackOnly"

	rl_begin "default veth" "$name" 2 1 || return
	if rl_run default_veth "$cli" 198.18.0.2:8080 "$srv" \
		198.18.0.2:8080 --count $n; then
		fail=$(json_get "$OUT" errors.EADDRNOTAVAIL)
		check_eq "client ok" "$(json_get "$OUT" ok)" $NPORTS
		check_eq "client EADDRNOTAVAIL" "$fail" $((n - NPORTS))
		check_eq "cli TcpExt TWRecycled delta" \
			"$(rl_mib TcpExtTWRecycled)" 0
		check_mod_eq "TwReuseDeniedLoopbackOnly == client EADDRNOTAVAIL" \
			"$(rl_tw TwReuseDeniedLoopbackOnly)" "$fail"
		check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
		check_mod_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$(rl_tw ConnectPortExhausted)" "$fail"
		check_only_reason TwReuseDeniedLoopbackOnly
		check_mod_eq "peers 198.18.0.2 8080 denied_loopback_only == TwReuseDeniedLoopbackOnly" \
			"$(rl_peer "$cli" 198.18.0.2 8080 denied_loopback_only)" \
			"$(rl_tw TwReuseDeniedLoopbackOnly)"
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# loopback_run N : fresh cli, default tcp_tw_reuse=2, N connects to
# 127.0.0.1 in aligned bursts of BURST.
loopback_run()
{
	setup_ns cli && rl_client_sysctls "$cli" 2 &&
		rl_run default_lo "$cli" 127.0.0.1:8080 "$cli" \
			127.0.0.1:8080 --count "$1" "${RL_ALIGN[@]}" --burst $BURST
}

test_default_loopback()
{
	local n=$((BURST * 2)) ok fail rec
	local name="tw_reuse: default tcp_tw_reuse=2 over 127.0.0.1: granted, TwReuseGranted == TWRecycled"

	test_begin "default loopback"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if rl_aligned_run loopback_run $n; then
		rl_show_bursts "$OUT" $BURST
		ok=$(json_get "$OUT" ok)
		fail=$(json_get "$OUT" errors.EADDRNOTAVAIL)
		rec=$(rl_mib TcpExtTWRecycled)
		if [ "$REPRODUCED" = 1 ]; then
			check_eq "client ok" "$ok" $((NPORTS * 2))
			check_eq "client EADDRNOTAVAIL" "$fail" \
				$(((BURST - NPORTS) * 2))
		elif ! rl_unfit "$ok" "$fail" $n; then
			cleanup_all_ns
			log_test "$name"
			return
		fi
		check_eq "cli TcpExt TWRecycled delta == ok - TIME_WAIT sockets" \
			"$rec" $((ok - $(tw_sockets "$cli")))
		# the wire: SYNs on a 4-tuple the client's TIME_WAIT held
		check_wire_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" \
			.totals.syn_client_tw
		check_wire_raw "cli TcpExt TWRecycled delta" "$rec" \
			.totals.syn_client_tw
		check_mod_eq "TwReuseDeniedLoopbackOnly" \
			"$(rl_tw TwReuseDeniedLoopbackOnly)" 0
		check_mod_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$(rl_tw ConnectPortExhausted)" "$fail"
		check_mod_eq "peers 127.0.0.1 8080 reuse_granted == TwReuseGranted" \
			"$(rl_peer "$cli" 127.0.0.1 8080 reuse_granted)" \
			"$(rl_tw TwReuseGranted)"
	else
		check_err 1 "setup failed"
	fi
	cleanup_all_ns
	log_test "$name"
}

# --------------------------------------------------------------- case 3

# Three connects from 198.18.0.1:30000, 300 ms apart, tcp_tw_reuse=0.
run_bound()
{
	local name=$1; shift

	rl_run "$name" "$cli" 198.18.0.2:8080 "$srv" 198.18.0.2:8080 \
		--count 3 --gap-ms 300 --bind 198.18.0.1:$BIND_PORT "$@"
}

test_bind()
{
	local ok rec
	local name="tw_reuse: bind()+SO_REUSEADDR, tcp_tw_reuse=0: the TIME_WAIT 4-tuple is reused, TwReuseGranted == TWRecycled"

	rl_begin "bind reuse" "$name" 0 1 || return
	if run_bound bind_ok --reuseaddr; then
		ok=$(json_get "$OUT" ok)
		rec=$(rl_mib TcpExtTWRecycled)
		check_eq "client ok" "$ok" 3
		check_eq "cli TcpExt TWRecycled delta" "$rec" 2
		check_eq "cli TIME_WAIT sockets" "$(tw_sockets "$cli")" 1
		# the wire: SYNs on a 4-tuple the client's TIME_WAIT held
		check_wire_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" \
			.totals.syn_client_tw
		check_wire_raw "cli TcpExt TWRecycled delta" "$rec" \
			.totals.syn_client_tw
		check_mod_eq "ConnectTupleInUse" "$(rl_tw ConnectTupleInUse)" 0
		check_mod_eq "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_only_reason ""
		check_mod_eq "peers 198.18.0.2 8080 reuse_granted" \
			"$(rl_peer "$cli" 198.18.0.2 8080 reuse_granted)" "$rec"
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

test_bind_no_timestamps()
{
	local fail
	local name="tw_reuse: bind()+SO_REUSEADDR, server tcp_timestamps=0: EADDRNOTAVAIL, ConnectTupleInUse == failures"

	rl_begin "bind no timestamps" "$name" 0 0 || return
	if run_bound bind_nots --reuseaddr; then
		fail=$(json_get "$OUT" errors.EADDRNOTAVAIL)
		check_eq "client ok" "$(json_get "$OUT" ok)" 1
		check_eq "client EADDRNOTAVAIL" "$fail" 2
		check_eq "cli TcpExt TWRecycled delta" \
			"$(rl_mib TcpExtTWRecycled)" 0
		check_mod_eq "ConnectTupleInUse == client EADDRNOTAVAIL" \
			"$(rl_tw ConnectTupleInUse)" "$fail"
		# one candidate per connect: the bound 4-tuple's TIME_WAIT
		check_mod_eq "TwReuseDeniedNoTimestamps == client EADDRNOTAVAIL" \
			"$(rl_tw TwReuseDeniedNoTimestamps)" "$fail"
		check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
		check_mod_eq "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_only_reason TwReuseDeniedNoTimestamps
		check_mod_eq "peers 198.18.0.2 8080 tuple_in_use == client EADDRNOTAVAIL" \
			"$(rl_peer "$cli" 198.18.0.2 8080 tuple_in_use)" "$fail"
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# Control: without SO_REUSEADDR, bind() itself fails; connect() is never
# reached and no reuse decision is made.
test_bind_control()
{
	local k
	local name="tw_reuse: control: bind() without SO_REUSEADDR -> EADDRINUSE, no reuse decision"

	rl_begin "bind control" "$name" 0 1 || return
	if run_bound bind_control; then
		check_eq "client ok" "$(json_get "$OUT" ok)" 1
		check_eq "client EADDRINUSE" \
			"$(json_get "$OUT" errors.EADDRINUSE)" 2
		check_eq "cli TcpExt TWRecycled delta" \
			"$(rl_mib TcpExtTWRecycled)" 0
		for k in TwReuseGranted ConnectTupleInUse ConnectPortExhausted; do
			check_mod_eq "$k" "$(rl_tw $k)" 0
		done
		check_only_reason ""
	else
		check_err 1 "setup failed"
	fi
	rl_end "$name"
}

# --------------------------------------------------------------- case 4

# ms since the epoch
now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# sleep_until_ms T : sleep until now_ms >= T (no-op if already past)
sleep_until_ms()
{
	local d=$(($1 - $(now_ms)))

	[ "$d" -le 0 ] || sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
}

# events_age_bad NS EVENT REASON CMP MS : how many EVENT lines (reason REASON,
# "-" for none) in NS have an age_ms that fails "age CMP MS" (CMP: lt|ge),
# or whose age is missing.
events_age_bad()
{
	nsx "$1" cat "$TCPTW_PROC/events" 2>/dev/null |
		awk -v e="$2" -v r="reason=$3" -v cmp="$4" -v ms="$5" '
		$2 != e { next }
		{ a = -1; rr = ""
		  for (i = 3; i <= NF; i++) {
			if ($i ~ /^age_ms=[0-9]+$/) a = substr($i, 8) + 0
			if ($i ~ /^reason=/) rr = $i
		  }
		  if (rr != r) next
		  if (a < 0 || (cmp == "lt" && a >= ms) ||
		      (cmp == "ge" && a < ms)) bad++ }
		END { print bad + 0 }'
}

# reuse_delay_run DELAY_MS : fill the 50 ports, one connect 1.2 s after the
# fill, 50 more DELAY_MS + 600 ms after it (and after the early connect,
# if it got a port); the outcomes in FILL_OK, EARLY_OK,
# LATE_OK and the counter deltas of the early and late steps in
# EARLY_*/LATE_* (via BEFORE/AFTER snapshots around each).
reuse_delay_run()
{
	local delay=$1 t0 t_fill t_late dst=198.18.0.2:8080

	pair_setup && rl_client_sysctls "$cli" 1 &&
		rl_sysctl "$cli" net.ipv4.tcp_tw_reuse_delay="$delay" &&
		rl_sysctl "$srv" net.ipv4.tcp_timestamps=1 || return 1
	if ! server_start "$srv" "$TMPDIR_T/delay$delay.server.json" \
	     --listen "$dst" --count 0 --timeout 60 --close-first client; then
		check_err 1 "server did not start"
		return 1
	fi
	# reuse_client NAME COUNT : one client run from cli, JSON in OUT
	reuse_client()
	{
		OUT=$TMPDIR_T/delay$delay.$1.client.json
		timeout 60 "$TRAFFIC" client --connect "$dst" \
			--netns "$(nspath "$cli")" --close-first client --barrier \
			--connect-timeout 3000 --timeout 30 --verbose \
			--count "$2" >"$OUT"
		T_END=$(now_ms)
		diag "delay $delay: $1: $(sed 's/,"per_connect".*/}/' "$OUT")"
	}

	# one trace over the three runs (each its own would cost the early
	# run its margin): the reuses on it are the early and late grants
	wire_start "delay$delay" "$cli" eth0
	t0=$(now_ms)
	reuse_client fill $NPORTS
	FILL_OK=$(json_get "$OUT" ok)
	t_fill=$T_END
	# the early connect must come before the oldest socket is 5 s old
	if [ "$delay" -gt 1000 ] && [ $((t_fill - t0)) -gt 3500 ]; then
		check_err 1 "filling the range took $((t_fill - t0)) ms (> 3500)"
		return 1
	fi

	sleep_until_ms $((t_fill + 1200))
	BEFORE=() AFTER=()
	rl_snap "$cli" BEFORE
	reuse_client early 1
	rl_snap "$cli" AFTER
	EARLY_OK=$(json_get "$OUT" ok)
	EARLY_FAIL=$(json_get "$OUT" errors.EADDRNOTAVAIL)
	EARLY_GRANTED=$(rl_tw TwReuseGranted)
	EARLY_RECYCLED=$(rl_mib TcpExtTWRecycled)
	EARLY_TOO_RECENT=$(rl_tw TwReuseDeniedTooRecent)
	EARLY_EXHAUSTED=$(rl_tw ConnectPortExhausted)
	rl_tw_dump
	t_late=$((t_fill + delay + 600))
	# A granted early connect left a TIME_WAIT socket of its own: the
	# late run reuses its port too, so it waits until that one is old
	# enough as well (at 1000 ms the early one ended ~400 ms before).
	if [ "$EARLY_OK" -gt 0 ] && [ $((T_END + delay + 600)) -gt $t_late ]; then
		t_late=$((T_END + delay + 600))
	fi

	sleep_until_ms $t_late
	BEFORE=() AFTER=()
	rl_snap "$cli" BEFORE
	reuse_client late $NPORTS
	rl_snap "$cli" AFTER
	LATE_OK=$(json_get "$OUT" ok)
	LATE_GRANTED=$(rl_tw TwReuseGranted)
	LATE_RECYCLED=$(rl_mib TcpExtTWRecycled)
	LATE_EXHAUSTED=$(rl_tw ConnectPortExhausted)
	wire_stop
	rl_tw_dump
	rl_peers_dump "$cli"
}

have_reuse_delay()
{
	[ -e /proc/sys/net/ipv4/tcp_tw_reuse_delay ] && return 0
	skip_test "kernel $(uname -r) has no net.ipv4.tcp_tw_reuse_delay (added in 6.14; the 1 s rule of older kernels is case 1)"
	return 1
}

# reuse_delay_begin SHORT NAME : test_begin; false (the test reported as
# skipped) where the kernel has no tcp_tw_reuse_delay or a probe is absent.
reuse_delay_begin()
{
	test_begin "$1"
	if ! have_reuse_delay ||
	   ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$2"
		return 1
	fi
}

test_reuse_delay()
{
	local name="tw_reuse: tcp_tw_reuse_delay=5000: denied (TooRecent, age < delay) 1.2 s after the fill, granted (age >= delay) at 5.6 s"

	reuse_delay_begin "reuse delay" "$name" || return
	if reuse_delay_run 5000; then
		check_eq "fill: client ok" "$FILL_OK" $NPORTS
		check_eq "early: client ok" "$EARLY_OK" 0
		check_eq "early: client EADDRNOTAVAIL" "$EARLY_FAIL" 1
		check_eq "early: cli TcpExt TWRecycled delta" "$EARLY_RECYCLED" 0
		check_mod_eq "early: TwReuseGranted" "$EARLY_GRANTED" 0
		check_mod_eq "early: TwReuseDeniedTooRecent == client EADDRNOTAVAIL" \
			"$EARLY_TOO_RECENT" "$EARLY_FAIL"
		check_mod_eq "early: ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$EARLY_EXHAUSTED" "$EARLY_FAIL"
		check_eq "late: client ok" "$LATE_OK" $NPORTS
		check_eq "late: cli TcpExt TWRecycled delta" "$LATE_RECYCLED" \
			$NPORTS
		check_mod_eq "late: TwReuseGranted == TWRecycled delta" \
			"$LATE_GRANTED" "$LATE_RECYCLED"
		check_wire_eq "TwReuseGranted, early + late" \
			$((EARLY_GRANTED + LATE_GRANTED)) .totals.syn_client_tw
		check_mod_eq "late: ConnectPortExhausted" "$LATE_EXHAUSTED" 0
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "connect_port_exhausted events, reason too_recent" \
				"$(events_count "$cli" connect_port_exhausted "reason=too_recent")" \
				"$EARLY_EXHAUSTED"
			check_eq "too_recent events with age_ms >= 5000" \
				"$(events_age_bad "$cli" connect_port_exhausted too_recent lt 5000)" 0
			check_eq "tw_reuse_granted events with age_ms < 5000" \
				"$(events_age_bad "$cli" tw_reuse_granted - ge 5000)" 0
			check_eq "tw_reuse_granted events" \
				"$(events_count "$cli" tw_reuse_granted)" $NPORTS
		fi
	else
		check_err 1 "setup failed"
	fi
	cleanup_all_ns
	log_test "$name"
}

# Control: the same schedule at the default 1000 ms grants the early one.
test_reuse_delay_control()
{
	local name="tw_reuse: control: tcp_tw_reuse_delay=1000: the connect 1.2 s after the fill is granted"

	reuse_delay_begin "reuse delay control" "$name" || return
	if reuse_delay_run 1000; then
		check_eq "fill: client ok" "$FILL_OK" $NPORTS
		check_eq "early: client ok" "$EARLY_OK" 1
		check_eq "early: cli TcpExt TWRecycled delta" "$EARLY_RECYCLED" 1
		check_mod_eq "early: TwReuseGranted == TWRecycled delta" \
			"$EARLY_GRANTED" "$EARLY_RECYCLED"
		check_wire_eq "TwReuseGranted, early + late" \
			$((EARLY_GRANTED + LATE_GRANTED)) .totals.syn_client_tw
		check_mod_eq "early: ConnectPortExhausted" "$EARLY_EXHAUSTED" 0
		check_eq "late: client ok" "$LATE_OK" $NPORTS
		check_mod_eq "late: TwReuseGranted == TWRecycled delta" \
			"$LATE_GRANTED" "$LATE_RECYCLED"
		check_wire_eq "TwReuseGranted, early + late" \
			$((EARLY_GRANTED + LATE_GRANTED)) .totals.syn_client_tw
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "tw_reuse_granted events with age_ms < 1000" \
				"$(events_age_bad "$cli" tw_reuse_granted - ge 1000)" 0
		fi
	else
		check_err 1 "setup failed"
	fi
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	"test_bursts ipv4 198.18.0.2:8080 198.18.0.2" \
	"test_bursts ipv6 '[fd00::2]:8080' fd00::2" \
	test_bursts_control \
	test_default_veth \
	test_default_loopback \
	test_bind \
	test_bind_no_timestamps \
	test_bind_control \
	test_reuse_delay \
	test_reuse_delay_control
