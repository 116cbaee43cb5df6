#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Seed 000 at load, and its 2026 twin (issue 18, scenario 3): wrk with
# "Connection: close" from two clients behind one NAT address, against an
# nginx that closes first, so its TIME_WAIT sockets meet the NAT's reused
# tuples and refuse the SYNs whose timestamp clock is behind (PAWS):
#
#   c1 198.18.1.2  wrk -c 50 --+
#                              nat --- srv 198.18.0.2:8080 nginx
#   c2 198.18.2.2  wrk -c 50 --+  masquerade to :B-B+255 [fully-random]
#                                 conntrack tcp time_wait = 0
#
# 1. plain masquerade: the clients use the NAT's 256 ports as their own
#    ip_local_port_range, and the NAT keeps a client's port when it is
#    free, so a port goes from one client to the other (seed 000: several
#    hosts, several TS clocks, one address).
# 2. masquerade fully-random (iptables --random-fully, the Kubernetes
#    setting): every connection gets a random NAT port.
# 3. fully-random, c1 alone: on kernels that hash the ports into the TS
#    offset (Debian 6.1.192+, 6.12.94+, 7.x: "tcp: secure_seq: add back
#    ports to TS offset", CVE-2026-23247) one client is enough to be
#    refused; on the others (5.10) it never is.
# Each run: a baseline, `tcptw watch` in srv meanwhile, wrk for
# SEED000_SECS seconds; then wrk is stopped (SIGSTOP, not ended: a client
# that exits drops the SYN retransmit of a connect just refused, and the
# counts below would differ by the connects in flight), the clients' SYNs
# in flight finish, and everything is read while nothing moves. Asserted:
#  - srv TwSynPawsRejected > 0 (3.: == 0 where the TS offset is per host),
#  - TwPawsRejected + PawsEstabRejected + PawsSynRecvRejected == srv
#    PAWSEstab (+ PAWSTimewait) delta, and TwPawsRejected == PAWSTimewait
#    where the kernel has it (6.16+),
#  - clients TcpExtTCPSynRetrans delta == srv PAWS MIB + nat conntrack
#    insert_failed + srv TCPSYNChallenge (kernel counters only): each SYN
#    refused costs its client one SYN retransmit, whether a TIME_WAIT
#    socket refused it on PAWS, the NAT dropped it (two SYNs raced for one
#    tuple) or a socket not yet in TIME_WAIT challenged it. TCPSynRetrans
#    is exact here; TcpRetransSegs also counts the data and FIN
#    retransmits a busy guest has for reasons of its own. A SYN that the
#    client's timer sent again before srv's SYN-ACK reached it (a guest
#    stalled by its host) is answered, not refused, and a TIME_WAIT socket
#    still in FIN_WAIT2 ACKs a SYN without a PAWS count: when srv sent
#    SYN-ACKs again (TCPSynRetrans, TCPACKSkippedSynRecv) or the clients
#    sent more RSTs than refusals were counted, up to that many more,
#  - and the module: TwSynPawsRejected + TwSynSeqRejected == that
#    TCPSynRetrans - insert_failed - TCPSYNChallenge (both are 0 in most
#    runs: then TwSynPawsRejected == PAWS MIB == TCPSynRetrans),
#    A non-SYN segment that PAWS drops (a late one of an earlier
#    connection on the tuple: 2 of ~500 on a loaded 6.1, at established
#    sockets)
#    is in the MIB but costs no retransmit: then, instead of ==, from
#    the MIB less the module's non-SYN drops up to the MIB,
#  - srv ListenDrops == 0: else the run is repeated once (rerun_once),
#    as is one without PAWS rejections where they belong, and one whose
#    clients sent more SYNs again than srv's counters refused or
#    answered again (kernel counters only: a SYN-ACK that a stalled
#    guest delivered after the client's timer, its duplicate ACKed
#    without a count by a FIN_WAIT2 TIME_WAIT socket).
#    nginx sends its response and FIN in one segment (sendfile with
#    tcp_nopush: the cork holds the data until close() adds the FIN), so
#    that wrk never closes at the same time: a simultaneous close let the
#    NAT free a tuple whose srv socket was still CLOSING (conntrack's
#    TIME_WAIT is 0 s), and new SYNs met that socket,
#  - the watch samples' TwSynPawsRejected add up to the same delta,
#  - `tcptw diagnose --baseline` in srv names nat_paws (plus ts_off_seq
#    if a SYN was refused on sequence, fin_wait2_syn if one met a
#    TIME_WAIT socket whose client had not closed yet: each such SYN
#    within the clients' SYN retransmits), the NAT address 198.18.0.1 and the
#    module's count; in the fully-random runs, on a kernel with ports in
#    the TS offset, its note about --random-fully, and on one without,
#    one clock offset and no such note.
#  - the wrks run under one `tcptw run -j -N srv`: its report's deltas
#    (PAWS MIB, ListenDrops, the module's TwSynPawsRejected,
#    TwPawsRejected, TwSynSeqRejected) are the run's above, its findings
#    and evidence diagnose's (nat_paws, the NAT address).
# Reported, not asserted: requests per second of each run (nginx's access
# log over the time wrk ran) and their ratio: TCG's rate depends on the
# machine, not on the kernel.
# TCPTW_EXAMPLES_DIR set: watch and diagnose output go to
# seed-000-watch.txt and seed-000-diagnose.txt there (docs/examples/).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

# the random-fully pair on 5.10 (no ports in the TS offset), 6.1 and 7.2
require_seeds_at_load 5.10 6.1 7.2

require_root
require_cmd ip nft conntrack nginx wrk ss python3
require_traffic
require_module
require_nat
require_cli

SECS=${SEED000_SECS:-3}
CONNS=50
NPORTS=256
# each run (and a rerun) takes NAT ports of its own: the TIME_WAIT
# sockets an earlier run left in srv never meet a later run's SYNs
PORT_BASE=40000
NGINX_DIR=$TMPDIR_T/nginx
EXDIR=${TCPTW_EXAMPLES_DIR:-}

declare -A E
declare -a WRK_PIDS

nginx_start()
{
	mkdir -p "$NGINX_DIR/www"
	echo ok >"$NGINX_DIR/www/index.html"
	cat >"$NGINX_DIR/nginx.conf" <<-EOF
	user root;
	daemon off;
	master_process on;
	worker_processes 1;
	pid $NGINX_DIR/nginx.pid;
	error_log $NGINX_DIR/error.log error;
	events {
		worker_connections 1024;
	}
	http {
		access_log $NGINX_DIR/access.log;
		keepalive_timeout 0;
		sendfile on;
		tcp_nopush on;
		client_body_temp_path $NGINX_DIR/client_body;
		proxy_temp_path $NGINX_DIR/proxy;
		fastcgi_temp_path $NGINX_DIR/fastcgi;
		uwsgi_temp_path $NGINX_DIR/uwsgi;
		scgi_temp_path $NGINX_DIR/scgi;
		server {
			listen $SRV_ADDR:$SRV_PORT;
			root $NGINX_DIR/www;
		}
	}
	EOF
	bg_start "$NGINX_DIR/stdout" ip netns exec "$srv" nginx -p "$NGINX_DIR" \
		-e "$NGINX_DIR/error.log" -c "$NGINX_DIR/nginx.conf"
	busywait 15000 nginx_listening && return 0
	diag "nginx did not start: $(tail -n 3 "$NGINX_DIR/error.log" "$NGINX_DIR/stdout.err" 2>/dev/null)"
	return 1
}

nginx_listening()
{
	[ -n "$(nsx "$srv" ss -Hltn "sport = :$SRV_PORT")" ]
}

# requests nginx logged so far
access_lines()
{
	wc -l <"$NGINX_DIR/access.log" 2>/dev/null || echo 0
}

# setup : the NAT topology of nat_topo.sh and nginx in srv
setup()
{
	nat_topo_setup || return 1
	nginx_start
}

# nat_rule LO HI FLAGS : masquerade to :LO-HI FLAGS ("" or fully-random)
nat_rule()
{
	nsx "$nat" nft -f - <<-EOF
	flush chain ip natpaws post
	add rule ip natpaws post oifname "n-srv" meta l4proto tcp masquerade to :$1-$2 $3
	EOF
}

# snapshot ARRAY : srv, c1, c2 and nat, absolute (ns_snapshot), plus the
# requests nginx logged
snapshot()
{
	local -n s=$1

	s=()
	ns_snapshot "$srv" s srv_
	ns_snapshot "$c1" s c1_
	ns_snapshot "$c2" s c2_
	ns_snapshot "$nat" s nat_
	s[requests]=$(access_lines)
}

# syn_sent NS... : SYN_SENT sockets in NS... (state 02 of /proc/net/tcp)
syn_sent()
{
	local ns n=0

	for ns in "$@"; do
		n=$((n + $(nsx "$ns" awk '$4 == "02" { n++ } END { print n + 0 }' /proc/net/tcp)))
	done
	echo $n
}

no_syn_sent()
{
	[ "$(syn_sent "$@")" -eq 0 ]
}

# wrk_pid PID : the child of `timeout` PID (nsenter has exec'd wrk)
wrk_pid()
{
	local c

	read -r c <"/proc/$1/task/$1/children" 2>/dev/null
	echo "${c:-}"
}

# lines_ge FILE N : FILE has N lines or more
lines_ge()
{
	[ "$(wc -l <"$1")" -ge "$2" ]
}

# run NAME FLAGS CLIENT... : one wrk run through `masquerade FLAGS` from
# the CLIENT namespaces (variable names: c1 c2), in NAT ports of its own.
# Fills B, A, RUN_* and the files $TMPDIR_T/NAME.*.
run()
{
	local name=$1 flags=$2 lo hi v ns pid t0 t1 i=0 watch load
	local -a clients=()
	shift 2

	for v in "$@"; do
		clients+=("${!v}")
	done
	lo=$PORT_BASE
	hi=$((lo + NPORTS - 1))
	PORT_BASE=$((PORT_BASE + 1000))
	RUN_NAME=$name
	RUN_PORTS="$lo-$hi"
	if ! nat_rule "$lo" "$hi" "$flags"; then
		check_err 1 "nft: masquerade to :$lo-$hi $flags"
		return 1
	fi
	# plain masquerade keeps a client's port if it is in the NAT's range
	# and free: both clients draw from the same 256 ports
	for ns in "$c1" "$c2"; do
		nsx "$ns" sysctl -qw net.ipv4.ip_local_port_range="$lo $hi"
	done

	watch=$TMPDIR_T/$name.watch
	save_baseline "$srv" "$name"
	bg_start "$watch" ip netns exec "$srv" "$TCPTW_CLI" watch -i 1 -c 60
	RUN_WATCH_PID=$BG_PID
	# its first sample is out: it has read its starting values
	busywait 15000 lines_ge "$watch" 1 ||
		diag "watch printed no sample in 15 s"
	snapshot B

	# The load, every client's wrk, as one `tcptw run` in srv: its
	# report covers the same run as B and A (nothing moves before wrk
	# starts, nor once it is frozen and its connects have settled)
	load=
	for ns in "${clients[@]}"; do
		i=$((i + 1))
		load+="timeout -k 5 60 nsenter --net=$(nspath "$ns") wrk -t1"
		load+=" -c$CONNS -d30s --timeout 10s -H 'Connection: close'"
		load+=" http://$SRV_ADDR:$SRV_PORT/ >$TMPDIR_T/$name.wrk$i"
		load+=" 2>$TMPDIR_T/$name.wrk$i.err &"
		load+=" echo \$! >$TMPDIR_T/$name.wrk$i.pid; "
	done
	rm -f "$TMPDIR_T/$name".wrk*.pid
	t0=$(now_ms)
	bg_start "$TMPDIR_T/$name.run.out" timeout -k 5 300 \
		"$TCPTW_CLI" run -j -o "$TMPDIR_T/$name.run.json" -N "$srv" -- \
		sh -c "${load}wait"
	RUN_RUN_PID=$BG_PID
	# WRK_PIDS: each wrk's timeout (wrk_pid finds wrk under it)
	WRK_PIDS=()
	for i in $(seq ${#clients[@]}); do
		busywait 10000 test -s "$TMPDIR_T/$name.wrk$i.pid" ||
			check_err 1 "wrk $i of run $name did not start"
		WRK_PIDS+=("$(cat "$TMPDIR_T/$name.wrk$i.pid" 2>/dev/null)")
	done
	sleep "$SECS"
	# freeze wrk: from now on no new connection, and the connects in
	# flight finish in the kernel with nobody closing them
	for pid in "${WRK_PIDS[@]}"; do
		v=$(wrk_pid "$pid")
		if [ -n "$v" ]; then
			kill -STOP "$v"
		else
			check_err 1 "wrk in run $name ended before it was stopped: $(tail -n 2 "$TMPDIR_T/$name.wrk"*)"
		fi
	done
	t1=$(now_ms)
	RUN_MS=$((t1 - t0))
	# New mappings from ports no TIME_WAIT socket holds: a SYN retransmitted
	# now is not refused again, and only the timers already running (1 s,
	# 2 s, ... after a second refusal) are waited for.
	nat_rule $((hi + 1)) $((hi + NPORTS)) "$flags" ||
		check_err 1 "nft: masquerade to :$((hi + 1))-$((hi + NPORTS)) $flags"
	if ! busywait 20000 no_syn_sent "${clients[@]}"; then
		diag "connects still in SYN_SENT 20 s after wrk stopped: $(syn_sent "${clients[@]}")"
		RUN_SETTLED=0
	else
		RUN_SETTLED=1
	fi
	# the handshakes' last ACKs and the responses in flight
	sleep 0.3
	snapshot A
	RUN_SETTLE_MS=$(($(now_ms) - t1))

	# two more samples: the last one covers the whole run
	v=$(wc -l <"$watch")
	busywait 15000 lines_ge "$watch" $((v + 2)) ||
		diag "watch printed no new sample in 15 s"
	kill -INT "$RUN_WATCH_PID" 2>/dev/null
	bg_wait "$RUN_WATCH_PID"
	RUN_WATCH_RC=$?
	diagnose "$srv" "$name"
	[ -n "$EXDIR" ] &&
		ip netns exec "$srv" "$TCPTW_CLI" diagnose \
			--baseline "$TMPDIR_T/$name.base" >"$TMPDIR_T/$name.diag.txt" 2>&1
	RUN_DIAG_TXT_RC=$?

	# wrk's SIGINT handler does not always end it here: SIGTERM (no
	# summary; the requests are counted in nginx's log)
	for pid in "${WRK_PIDS[@]}"; do
		v=$(wrk_pid "$pid")
		[ -n "$v" ] && kill -TERM "$v" && kill -CONT "$v"
	done
	# then the report of `tcptw run`, and srv once more (E): what moved
	# after A is in the report but not in the counts above
	bg_wait "$RUN_RUN_PID"
	RUN_RUN_RC=$?
	E=()
	ns_snapshot "$srv" E srv_
	i=0
	for ns in "${clients[@]}"; do
		i=$((i + 1))
		[ -s "$TMPDIR_T/$name.wrk$i" ] &&
			diag "wrk $i: $(tr -s ' \n' ' ' <"$TMPDIR_T/$name.wrk$i" | head -c 300)"
	done

	RUN_REQS=$(d requests)
	RUN_RPS=$(awk -v n="$RUN_REQS" -v ms="$RUN_MS" 'BEGIN { printf "%.1f", n * 1000 / ms }')
	RUN_K=$(d srv_tw_TwSynPawsRejected)
	RUN_KALL=$(d srv_tw_TwPawsRejected)
	RUN_SEQ=$(d srv_tw_TwSynSeqRejected)
	RUN_FW2=$(d srv_tw_TwSynFinWait2Rejected)
	RUN_POTHER=$(( $(d srv_tw_PawsEstabRejected) + $(d srv_tw_PawsSynRecvRejected) ))
	RUN_PAWS=$(( $(d srv_mib_TcpExtPAWSEstab) + $(d srv_mib_TcpExtPAWSTimewait) ))
	RUN_RETR=$(( $(d c1_mib_TcpExtTCPSynRetrans) + $(d c2_mib_TcpExtTCPSynRetrans) ))
	RUN_RETRSEGS=$(( $(d c1_mib_TcpRetransSegs) + $(d c2_mib_TcpRetransSegs) ))
	RUN_INSFAIL=$(d nat_ct_insert_failed)
	RUN_LDROPS=$(d srv_mib_TcpExtListenDrops)
	RUN_SYNCHAL=$(d srv_mib_TcpExtTCPSYNChallenge)
	# SYNs a client sent again for a reason other than a refusal the MIBs
	# count: SYN-ACKs srv sent again (its timer, or a client's SYN
	# retransmitted before the SYN-ACK reached it: a stalled guest) and
	# those it left out for the rate limit; and the clients' RSTs beyond
	# one per SYN refused on PAWS or sequence: a TIME_WAIT socket still
	# in its FIN_WAIT2 substate (srv's FIN acked, the client's FIN late)
	# answers an out-of-window SYN with an ACK without counting it in
	# PAWSEstab, the client resets it, and sends its SYN again. The SYNs
	# refused on PAWS are the MIB less the non-SYN segments it counts
	# (the module tells them apart; its split is checked against the MIB
	# below): CI saw 145 RSTs for 143 SYNs refused and 1 late segment.
	local rsts=$(( $(d c1_mib_TcpOutRsts) + $(d c2_mib_TcpOutRsts) ))
	local nonsyn=$((RUN_KALL - RUN_K + RUN_POTHER))
	local extra=$((rsts - (RUN_PAWS - nonsyn) - RUN_SEQ))
	RUN_DUP=$(( $(d srv_mib_TcpExtTCPSynRetrans) + $(d srv_mib_TcpExtTCPACKSkippedSynRecv) + (extra > 0 ? extra : 0) ))
	RUN_WATCH_SUM=$(awk '$1 == "TwSynPawsRejected" { s += $2 } END { print s + 0 }' "$watch")
	diag "run $name: masquerade to :$RUN_PORTS $flags, clients: $*, ${RUN_MS} ms of wrk, settled in ${RUN_SETTLE_MS} ms"
	diag "  requests $RUN_REQS, $RUN_RPS/s; srv TcpExt TW $(d srv_mib_TcpExtTW), clients TcpExt TW $(( $(d c1_mib_TcpExtTW) + $(d c2_mib_TcpExtTW) )), srv TwCreated $(d srv_tw_TwCreated)"
	diag "  srv TwSynPawsRejected $RUN_K TwPawsRejected $RUN_KALL TwSynSeqRejected $RUN_SEQ TwSynFinWait2Rejected $RUN_FW2 PawsEstab+SynRecvRejected $RUN_POTHER TwSynRecycled $(d srv_tw_TwSynRecycled) TwKilledByRst $(d srv_tw_TwKilledByRst)"
	diag "  srv PAWS MIB $RUN_PAWS (PAWSTimewait $(d srv_mib_TcpExtPAWSTimewait)); clients TCPSynRetrans $RUN_RETR (c1 $(d c1_mib_TcpExtTCPSynRetrans)), RetransSegs $RUN_RETRSEGS, OutRsts $rsts"
	diag "  nat insert_failed $RUN_INSFAIL drop $(d nat_ct_drop); srv ListenDrops $RUN_LDROPS ListenOverflows $(d srv_mib_TcpExtListenOverflows) TCPSYNChallenge $RUN_SYNCHAL, SYNs sent again for other reasons (at most) $RUN_DUP; watch sum $RUN_WATCH_SUM"
	return 0
}

# run_clean : the run reproduced what it is about without other losses
run_clean()
{
	local why=

	[ "$RUN_SETTLED" = 1 ] || why+="connects still in SYN_SENT; "
	[ "$RUN_LDROPS" = 0 ] || why+="srv ListenDrops $RUN_LDROPS; "
	[ "$RUN_REQS" -gt 0 ] || why+="no request served; "
	# reproduced: SYNs refused at TIME_WAIT sockets, so the PAWS MIB
	# holds more than the rejections at other sockets (a late segment
	# at an established one is no reproduction: a run too slow to reuse
	# its NAT ports had 101 requests and one such) and clients retried
	if [ "$EXPECT_PAWS" = 1 ] &&
	   { [ $((RUN_PAWS - RUN_POTHER)) -le 0 ] || [ "$RUN_RETR" = 0 ]; }; then
		why+="no SYN refused at a TIME_WAIT socket in srv (PAWS MIB $RUN_PAWS, $RUN_POTHER at other sockets; clients TCPSynRetrans $RUN_RETR); "
	fi
	# kernel counters alone: a client SYN retransmit that srv neither
	# refused nor answered again is no reproduction but a stalled guest:
	# the SYN-ACK reached the client after its 1 s timer, and the
	# duplicate SYN met srv's TIME_WAIT socket of that same connection
	# still in FIN_WAIT2, which ACKs it without a count while the
	# client's socket, still open, takes that ACK without a RST (CI on
	# 7.2: 549 retransmits for 548 refusals, no RST, no SYN-ACK again)
	local explained=$((RUN_PAWS + RUN_INSFAIL + RUN_SYNCHAL + RUN_SEQ + RUN_DUP))
	if [ "$RUN_RETR" -gt "$explained" ]; then
		why+="clients sent $((RUN_RETR - explained)) SYNs again that srv neither refused nor answered again (TCPSynRetrans $RUN_RETR, refused or answered again at most $explained); "
	fi
	[ -z "$why" ] && return 0
	echo "$why"
	return 1
}

run_reset()
{
	RET=0
	RETMSG=
}

# check_counts : the module against the kernel's counters of the run
check_counts()
{
	check_eq "run settled (no connect in SYN_SENT)" "$RUN_SETTLED" 1
	check_eq "srv ListenDrops" "$RUN_LDROPS" 0
	# Ground truth alone: every SYN refused costs its client one SYN
	# retransmit. Refused by a TIME_WAIT socket on PAWS (the MIB), dropped
	# by the NAT when two SYNs raced for one tuple (insert_failed), or
	# challenged by a socket not yet in TIME_WAIT. The MIB also counts
	# the non-SYN segments PAWS drops: a late segment of an earlier
	# connection on the same NAT tuple, at a TIME_WAIT socket or, once
	# the tuple is reused, at the new connection (6.1 under a loaded
	# host: 2 of ~500). So: == when the module saw none of those, else
	# a range up to the MIB; the module's split is checked exactly below.
	local want=$((RUN_PAWS + RUN_INSFAIL + RUN_SYNCHAL))
	if [ "$RUN_SEQ" = 0 ] && [ "$RUN_KALL" = "$RUN_K" ] && [ "$RUN_POTHER" = 0 ] &&
	   [ "$RUN_DUP" = 0 ]; then
		check_eq "clients TCPSynRetrans == srv PAWS MIB + nat insert_failed + srv TCPSYNChallenge" \
			"$RUN_RETR" "$want"
	elif [ "$RUN_SEQ" = 0 ] && [ "$RUN_KALL" = "$RUN_K" ] && [ "$RUN_POTHER" = 0 ]; then
		# SYNs sent again for other reasons (RUN_DUP, above)
		check_range "clients TCPSynRetrans: srv PAWS MIB + nat insert_failed + srv TCPSYNChallenge, up to $RUN_DUP more (SYN-ACKs srv sent again, FIN_WAIT2 ACKs reset)" \
			"$RUN_RETR" "$want" $((want + RUN_DUP))
	elif [ "$RUN_SEQ" = 0 ]; then
		diag "  $((RUN_KALL - RUN_K)) non-SYN PAWS rejections at TIME_WAIT sockets, $RUN_POTHER at other sockets"
		check_range "clients TCPSynRetrans - nat insert_failed - srv TCPSYNChallenge: srv PAWS MIB less those, up to the MIB and $RUN_DUP sent again for other reasons" \
			$((RUN_RETR - RUN_INSFAIL - RUN_SYNCHAL)) \
			$((RUN_PAWS - RUN_KALL + RUN_K - RUN_POTHER)) \
			$((RUN_PAWS + RUN_DUP))
	else
		diag "  not checked without the module: $RUN_SEQ SYNs refused on sequence"
	fi
	# The module against it.
	check_mod_eq "srv TwPawsRejected + PawsEstab/SynRecvRejected == srv PAWS MIB delta" \
		$((RUN_KALL + RUN_POTHER)) "$RUN_PAWS"
	if has_mib "$srv" TcpExtPAWSTimewait; then
		check_mod_eq "srv TwPawsRejected == TcpExtPAWSTimewait delta" \
			"$RUN_KALL" "$(d srv_mib_TcpExtPAWSTimewait)"
	fi
	# each SYN refused in FIN_WAIT2 costs its client a SYN sent again
	check_mod_range "srv TwSynPawsRejected + TwSynSeqRejected + TwSynFinWait2Rejected <= clients TCPSynRetrans - nat insert_failed - srv TCPSYNChallenge" \
		$((RUN_K + RUN_SEQ + RUN_FW2)) 0 $((RUN_RETR - RUN_INSFAIL - RUN_SYNCHAL))
	if [ "$RUN_DUP" = 0 ]; then
		check_mod_eq "srv TwSynPawsRejected + TwSynSeqRejected == clients TCPSynRetrans - nat insert_failed - srv TCPSYNChallenge" \
			$((RUN_K + RUN_SEQ)) $((RUN_RETR - RUN_INSFAIL - RUN_SYNCHAL))
	else
		check_mod_range "srv TwSynPawsRejected + TwSynSeqRejected: clients TCPSynRetrans - nat insert_failed - srv TCPSYNChallenge, less up to $RUN_DUP sent again for other reasons" \
			$((RUN_K + RUN_SEQ)) $((RUN_RETR - RUN_INSFAIL - RUN_SYNCHAL - RUN_DUP)) \
			$((RUN_RETR - RUN_INSFAIL - RUN_SYNCHAL))
	fi
	if [ "$RUN_K" = "$RUN_PAWS" ] && [ "$RUN_K" = "$RUN_RETR" ]; then
		diag "  so: TwSynPawsRejected == srv PAWS MIB == clients TCPSynRetrans"
	fi
	check_mod_eq "watch: sum of TwSynPawsRejected deltas" "$RUN_WATCH_SUM" "$RUN_K"
}

# run_findings [ID...] : the findings the run's refusals make, sorted as
# findings() prints them: IDs, ts_off_seq for SYNs refused on sequence,
# fin_wait2_syn for SYNs a TIME_WAIT socket refused in its FIN_WAIT2
# substate (srv's FIN acked, the client's own FIN not yet in, its port
# reused by the NAT meanwhile)
run_findings()
{
	local ids=("$@")

	[ "$RUN_SEQ" -gt 0 ] && ids+=(ts_off_seq)
	[ "${RUN_FW2:-0}" -gt 0 ] && ids+=(fin_wait2_syn)
	printf '%s\n' "${ids[@]}" | LC_ALL=C sort | paste -sd ' '
}

# check_diag WANT_PAWS FULLY_RANDOM : diagnose in srv against the run
check_diag()
{
	local want=$1 fully=$2 f=$TMPDIR_T/$RUN_NAME.diag.json ids exp

	ids=$(findings "$f")
	if [ "$want" = 0 ]; then
		# no SYN refused on PAWS: no nat_paws (a non-SYN segment a
		# TIME_WAIT socket drops costs no connection; RUN_KALL may be
		# > 0), ts_off_seq only for SYNs refused on sequence
		exp=$(run_findings)
		check_eq "diagnose exit code (0: nothing found, else 3)" \
			"$DIAG_RC" "$([ -n "$exp" ] && echo 3 || echo 0)"
		check_str "diagnose findings" "$ids" "$exp"
		check_str "diagnose evidence TwSynPawsRejected" \
			"$(evidence "$f" TwSynPawsRejected)" none
		! grep -q -- '--random-fully' "$f"
		check_err $? "diagnose blames --random-fully with one TS clock per host"
		return
	fi
	exp=$(run_findings nat_paws)
	check_eq "diagnose exit code (3: problem found)" "$DIAG_RC" 3
	check_str "diagnose findings" "$ids" "$exp"
	check_eq "diagnose evidence TwSynPawsRejected" \
		"$(evidence "$f" TwSynPawsRejected)" "$RUN_K"
	grep -q "$NAT_PUB" "$f"
	check_err $? "diagnose does not name the NAT address $NAT_PUB"
	[ "$fully" = 1 ] || return 0
	# clock_note needs 4 rejected SYNs from the NAT address
	if [ "$RUN_K" -lt 4 ]; then
		diag "only $RUN_K rejections: diagnose has no clock note to check"
		return
	fi
	if [ "$PER_PORT" = 1 ]; then
		grep -q -- '--random-fully' "$f"
		check_err $? "diagnose has no note about --random-fully"
	else
		check_eq "diagnose ts_clock_offsets (one per client pair)" \
			"$(evidence "$f" ts_clock_offsets value)" 1
		! grep -q -- '--random-fully' "$f"
		check_err $? "diagnose blames --random-fully with one TS clock per host"
	fi
}

# check_report WANT_PAWS : `tcptw run`'s report on srv, over the wrk of
# this run: its deltas are the kernel's and the module's of the run (B
# to A: the counts check_counts asserts), its findings diagnose's
# (check_diag's), with the same evidence
check_report()
{
	local want=$1 f=$TMPDIR_T/$RUN_NAME.run.json exp= k

	diag "tcptw run: exit $RUN_RUN_RC, $(head -c 400 "$f")"
	check_eq "tcptw run: exit status (wrk's, ended by SIGTERM, under sh)" \
		"$RUN_RUN_RC" 0
	# a difference here is the run's, not the report's: say where
	for k in mib_TcpExtPAWSEstab mib_TcpExtPAWSTimewait tw_TwSynPawsRejected; do
		[ "${E[srv_$k]:-0}" = "${A[srv_$k]:-0}" ] ||
			diag "  srv $k moved after A: ${A[srv_$k]:-0} -> ${E[srv_$k]:-0}"
	done
	check_eq "tcptw run: srv TcpExt PAWSEstab + PAWSTimewait delta == srv PAWS MIB delta" \
		"$(report_delta "$f" mib TcpExtPAWSEstab TcpExtPAWSTimewait)" "$RUN_PAWS"
	check_eq "tcptw run: srv TcpExt ListenDrops delta" \
		"$(report_delta "$f" mib TcpExtListenDrops)" "$RUN_LDROPS"
	check_mod_eq "tcptw run: TwSynPawsRejected delta" \
		"$(report_delta "$f" counters TwSynPawsRejected)" "$RUN_K"
	check_mod_eq "tcptw run: TwPawsRejected delta" \
		"$(report_delta "$f" counters TwPawsRejected)" "$RUN_KALL"
	check_mod_eq "tcptw run: TwSynSeqRejected delta" \
		"$(report_delta "$f" counters TwSynSeqRejected)" "$RUN_SEQ"
	if [ "$want" = 1 ]; then
		exp=$(run_findings nat_paws)
		check_eq "tcptw run: nat_paws evidence TwSynPawsRejected" \
			"$(evidence "$f" TwSynPawsRejected)" "$RUN_K"
		grep -q "$NAT_PUB" "$f"
		check_err $? "tcptw run's findings do not name the NAT address $NAT_PUB"
	else
		exp=$(run_findings)
	fi
	check_str "tcptw run: findings" "$(findings "$f")" "$exp"
}

# example CAPTION : this run's watch and diagnose into TCPTW_EXAMPLES_DIR
example()
{
	[ -n "$EXDIR" ] || return 0
	{
		echo "# $1, in the server's netns, while wrk runs"
		echo "\$ tcptw watch -i 1"
		cat "$TMPDIR_T/$RUN_NAME.watch"
		echo "# exit status $RUN_WATCH_RC (stopped with Ctrl-C)"
	} >>"$EXDIR/seed-000-watch.txt"
	{
		echo "# $1, in the server's netns (tcptw diagnose --save-baseline before, ahead of the run)"
		echo "\$ tcptw diagnose --baseline before"
		cat "$TMPDIR_T/$RUN_NAME.diag.txt"
		echo "# exit status $RUN_DIAG_TXT_RC"
	} >>"$EXDIR/seed-000-diagnose.txt"
}

# probe_ts_offset : PER_PORT=1 if this kernel gives each connection its
# own TS offset (ports hashed in), 0 if one per host pair; measured with
# six connections from c1 (tcptw_traffic reads each one's TCP_TIMESTAMP),
# not taken from the run under test
probe_ts_offset()
{
	local out=$TMPDIR_T/probe.client.json

	server_start "$srv" "$TMPDIR_T/probe.server.json" \
		--listen $SRV_ADDR:8081 --count 6 --timeout 30 \
		--close-first client || return 1
	timeout 40 "$TRAFFIC" client --connect $SRV_ADDR:8081 --count 6 \
		--netns "$(nspath "$c1")" --close-first client --barrier \
		--timeout 30 --verbose >"$out" || return 1
	bg_wait "$SERVER_PID"
	if ts_offset_per_host "$out"; then
		PER_PORT=0
	else
		PER_PORT=1
	fi
}

test_plain()
{
	local T="seed_000: wrk -c $CONNS x2, plain masquerade: TwSynPawsRejected == PAWS MIB == clients' SYN retransmits"

	test_begin "$T"
	EXPECT_PAWS=1
	rerun_once run_clean run_reset run plain "" c1 c2 ||
		{ log_test "$T"; return; }
	PLAIN_RPS=$RUN_RPS
	check_mod_gt "srv TwSynPawsRejected" "$RUN_K" 0
	check_counts
	check_diag 1 0
	check_report 1
	example "Seed 000: wrk -c $CONNS from two clients behind plain masquerade"
	log_test "$T"
}

test_fully_random()
{
	local T="seed_000: wrk -c $CONNS x2, masquerade fully-random: the same, and the requests/s ratio"

	test_begin "$T"
	EXPECT_PAWS=1
	rerun_once run_clean run_reset run fully fully-random c1 c2 ||
		{ log_test "$T"; return; }
	check_mod_gt "srv TwSynPawsRejected" "$RUN_K" 0
	check_counts
	check_diag 1 1
	check_report 1
	if [ -n "${PLAIN_RPS:-}" ]; then
		diag "requests/s: plain $PLAIN_RPS, fully-random $RUN_RPS, ratio fully-random/plain $(awk -v a="$RUN_RPS" -v b="$PLAIN_RPS" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') (not asserted: TCG)"
	fi
	example "Seed 000's 2026 twin: the same through masquerade fully-random (--random-fully)"
	log_test "$T"
}

test_one_client()
{
	local T="seed_000: wrk -c $CONNS, c1 alone, masquerade fully-random: rejections only with ports in the TS offset"

	test_begin "$T"
	EXPECT_PAWS=$PER_PORT
	rerun_once run_clean run_reset run one fully-random c1 ||
		{ log_test "$T"; return; }
	check_counts
	if [ "$PER_PORT" = 1 ]; then
		check_mod_gt "srv TwSynPawsRejected (one TS clock per connection)" "$RUN_K" 0
		check_diag 1 1
		check_report 1
	else
		# (a late non-SYN segment may still meet a TIME_WAIT socket
		# whose last timestamp is newer: reordering, not a second clock)
		check_mod_eq "srv TwSynPawsRejected (one TS clock per host pair)" "$RUN_K" 0
		check_diag 0 1
		check_report 0
	fi
	example "One client alone behind masquerade fully-random"
	log_test "$T"
}

if ! setup || ! probe_ts_offset; then
	tests_run \
		"ktap_not_ok 'seed_000: plain: setup failed'" \
		"ktap_not_ok 'seed_000: fully-random: setup failed'" \
		"ktap_not_ok 'seed_000: one-client: setup failed'"
fi
diag "kernel $(uname -r): TS offset $([ "$PER_PORT" = 1 ] && echo "per connection (ports hashed in)" || echo "per host pair")"
if [ -n "$EXDIR" ]; then
	: >"$EXDIR/seed-000-watch.txt"
	: >"$EXDIR/seed-000-diagnose.txt"
fi
tests_run \
	test_plain \
	test_fully_random \
	test_one_client
