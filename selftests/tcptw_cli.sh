#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The tcptw CLI against the real module: `tcptw diagnose` must name the
# cause of each reproduced failure, only that cause, with the numbers and
# the peer behind it, and name nothing in the control runs; `tcptw watch`
# must show the rejections per interval while they happen.
#
# 1. PAWS behind NAT (seed 000), the topology of tcptw_nat_paws.sh:
#
#   c1 198.18.1.2 --+
#                   nat (masquerade to 198.18.0.1:40000) --- srv 198.18.0.2:8080
#   c2 198.18.2.2 --+
#
#    diagnose in srv: exactly [nat_paws], naming 198.18.0.1, and its count
#    equal to the module's TwSynPawsRejected. Control (clients close
#    first): no evidence, exit 0. With the server's timestamps off:
#    exactly [ts_off_seq], with TwSynSeqRejected as its evidence.
# 2. Port exhaustion (seeds 003/004): cli 198.18.0.1 --- srv 198.18.0.2,
#    50-port range, tcp_tw_reuse=0, client closes first:
#    diagnose in cli: exactly [port_exhaustion], naming 198.18.0.2:8080.
# 3. TIME_WAIT bucket overflow: tcp_max_tw_buckets 10, 40 connections,
#    server closes first: exactly [tw_overflow].
# 4. Accept-queue overflow (seeds 001/004): somaxconn 10, no accept():
#    diagnose in srv: exactly [accept_queue], the listener named.
#
# Each diagnosis compares with a baseline saved in the same netns before
# the traffic (`--save-baseline` / `--baseline`), so it is deterministic.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

require_root
require_cmd ip nft conntrack nstat python3
require_traffic
require_module
require_cli
require_nat

# nat_paws CLOSE_FIRST NAME : one NAT + PAWS run, diagnose in srv
nat_paws()
{
	local n=21

	nat_topo_setup || { check_err 1 "topology setup failed"; return 1; }
	nsx "$srv" sysctl -qw net.ipv4.tcp_timestamps="${SRV_TS:-1}"
	server_start "$srv" "$TMPDIR_T/$2.server.json" \
		--listen $SRV_ADDR:$SRV_PORT --count $n --timeout 60 \
		--close-first "$1" || { check_err 1 "no server"; return 1; }
	save_baseline "$srv" "$2"
	# one line of JSON per second while the clients run (bounded: 120)
	bg_start "$TMPDIR_T/$2.watch" ip netns exec "$srv" \
		"$TCPTW_CLI" watch -j -i 1 -c 120
	WATCH_PID=$BG_PID
	# its first sample is out: it has read its starting values, so the
	# clients cannot slip in before them on a slow guest
	busywait 15000 lines_ge "$TMPDIR_T/$2.watch" 1 ||
		diag "watch printed no sample in 15 s"
	timeout 60 "$TRAFFIC" client --connect $SRV_ADDR:$SRV_PORT \
		--count $n --netns "$(nspath "$c1"),$(nspath "$c2")" \
		--close-first "$1" --barrier --timeout 40 \
		--connect-timeout 10000 >"$TMPDIR_T/$2.client.json"
	CLIENT_RC=$?
	bg_wait "$SERVER_PID"
	watch_stop "$TMPDIR_T/$2.watch"
	diag "client exit $CLIENT_RC: $(sed 's/,"per_connect".*/}/' "$TMPDIR_T/$2.client.json")"
	diag "srv: $(nsx "$srv" awk '$2 != 0 { printf "%s=%s ", $1, $2 }' \
		"$TCPTW_PROC/counters") kernel PAWS rejections $(mib_paws_tw "$srv")"
	diagnose "$srv" "$2"
}

# lines_ge FILE N : FILE has N lines or more
lines_ge()
{
	[ "$(wc -l <"$1")" -ge "$2" ]
}

# watch_stop FILE : let watch print two more samples, so that the last one
# covers everything the clients did (a slow guest may take longer than any
# fixed count of samples), then stop it with Ctrl-C.
watch_stop()
{
	local n

	n=$(wc -l <"$1")
	busywait 15000 lines_ge "$1" $((n + 2)) ||
		diag "watch printed no new sample in 15 s"
	kill -INT "$WATCH_PID" 2>/dev/null
}

# nat_paws_seen : the client's run ended well and the server's kernel
# rejected SYNs on PAWS
nat_paws_seen()
{
	local kpaws

	kpaws=$(mib_paws_tw "$srv")
	[ "$CLIENT_RC" -eq 0 ] && [ "$kpaws" -gt 0 ] && return 0
	echo "client exit $CLIENT_RC, kernel PAWS rejections $kpaws"
	return 1
}

# nat_paws_reset : tear the NAT topology down (nat_paws builds it anew)
nat_paws_reset()
{
	bg_wait "$WATCH_PID"
	nat_topo_cleanup
}

test_nat_paws()
{
	local rejected kpaws fw2

	T="cli: diagnose names PAWS behind NAT with the NAT address"
	test_begin "$T"
	# A guest starved by its neighbour sometimes has the kernel refuse no
	# SYN on PAWS at all: the reproduction failed, once more from a fresh
	# topology (what the module counts is checked against the kernel
	# below, never retried).
	rerun_once nat_paws_seen nat_paws_reset nat_paws server nat ||
		{ log_test "$T"; return; }
	kpaws=$(mib_paws_tw "$srv")
	check_eq "client exit code" "$CLIENT_RC" 0
	rejected=$(tw_counter "$srv" TwSynPawsRejected)
	check_gt "TwSynPawsRejected" "$rejected" 0
	# every PAWS rejection of the kernel's, wherever it happened
	check_eq "TwPawsRejected + PawsSynRecvRejected + PawsEstabRejected == srv PAWSEstab (+ PAWSTimewait)" \
		"$(paws_counters "$srv")" "$kpaws"
	check_eq "diagnose exit code (3: problem found)" "$DIAG_RC" 3
	# a client's port back through the NAT before its own FIN reached
	# srv meets a TIME_WAIT socket in FIN_WAIT2: a finding of its own
	fw2=$(tw_counter "$srv" TwSynFinWait2Rejected)
	if [ "${fw2:-0}" -gt 0 ]; then
		check_str "findings" "$(findings "$TMPDIR_T/nat.diag.json")" \
			"fin_wait2_syn nat_paws"
	else
		check_str "findings" "$(findings "$TMPDIR_T/nat.diag.json")" nat_paws
	fi
	grep -q '198\.18\.0\.1' "$TMPDIR_T/nat.diag.json"
	check_err $? "the NAT address 198.18.0.1 is not named"
	check_eq "evidence TwSynPawsRejected" \
		"$(evidence "$TMPDIR_T/nat.diag.json" TwSynPawsRejected)" \
		"$rejected"
	NAT_REJECTED=$rejected
	log_test "cli: diagnose names PAWS behind NAT with the NAT address"
}

# test_nat_watch : the watch that ran beside test_nat_paws' clients
test_nat_watch()
{
	local got rejected=$NAT_REJECTED

	T="cli: watch shows the PAWS rejections per interval"
	test_begin "$T"
	if [ -z "$rejected" ]; then
		check_err 1 "no NAT+PAWS run to watch (its setup failed)"
		log_test "$T"
		nat_topo_cleanup
		return
	fi
	bg_wait "$WATCH_PID"
	# the per-interval deltas of all samples add up to the total
	# Samples list only what moved. The deltas must add up to what the
	# counter gained between watch's start and its last sample, which is
	# the module's total once the clients are done.
	got=$(python3 -c '
import json, sys
s, first, last = 0, None, None
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    c = json.loads(line).get("counters", {}).get("TwSynPawsRejected")
    if not c:
        continue
    s += c["delta"]
    if first is None:
        first = c["value"] - c["delta"]
    last = c["value"]
print(s, "-" if last is None else last - first, last)' \
		"$TMPDIR_T/nat.watch" 2>"$TMPDIR_T/nat.watch.err")
	diag "watch: $(head -c 300 "$TMPDIR_T/nat.watch") $(cat "$TMPDIR_T/nat.watch.err")"
	set -- $got
	check_gt "sum of watch deltas of TwSynPawsRejected" "$1" 0
	check_eq "sum of deltas == gain over the samples" "$1" "$2"
	check_eq "last sampled value == module total" "$3" "$rejected"
	log_test "cli: watch shows the PAWS rejections per interval"
	nat_topo_cleanup
}

test_nat_control()
{
	T="cli: diagnose finds no evidence when the clients close first"
	test_begin "$T"
	nat_paws client natctl || { log_test "$T"; return; }
	check_eq "client exit code" "$CLIENT_RC" 0
	check_eq "TwSynPawsRejected" "$(tw_counter "$srv" TwSynPawsRejected)" 0
	check_eq "diagnose exit code" "$DIAG_RC" 0
	check_str "findings" "$(findings "$TMPDIR_T/natctl.diag.json")" ""
	log_test "cli: diagnose finds no evidence when the clients close first"
	bg_wait "$WATCH_PID"
	nat_topo_cleanup
}

test_ts_off()
{
	local T="cli: diagnose names SYNs refused on sequence with timestamps off"
	local refused

	test_begin "$T"
	SRV_TS=0 nat_paws server tsoff || { log_test "$T"; return; }
	check_eq "client exit code" "$CLIENT_RC" 0
	refused=$(tw_counter "$srv" TwSynSeqRejected)
	check_gt "TwSynSeqRejected" "$refused" 0
	check_eq "TwSynPawsRejected" "$(tw_counter "$srv" TwSynPawsRejected)" 0
	check_eq "diagnose exit code" "$DIAG_RC" 3
	check_str "findings" "$(findings "$TMPDIR_T/tsoff.diag.json")" ts_off_seq
	check_eq "evidence TwSynSeqRejected" \
		"$(evidence "$TMPDIR_T/tsoff.diag.json" TwSynSeqRejected)" \
		"$refused"
	log_test "$T"
	bg_wait "$WATCH_PID"
	nat_topo_cleanup
}

# pair : $cli -- $srv over one veth
test_port_exhaustion()
{
	local failed

	T="cli: diagnose names ephemeral-port exhaustion"
	test_begin "$T"
	pair_setup || { check_err 1 "setup failed"; log_test "$T"; return; }
	nsx "$cli" sysctl -qw \
		net.ipv4.ip_local_port_range="20000 20049" \
		net.ipv4.tcp_tw_reuse=0
	server_start "$srv" "$TMPDIR_T/pe.server.json" \
		--listen 198.18.0.2:8080 --count 50 --timeout 30 \
		--close-first client || { check_err 1 "no server"; log_test "$T"; return; }
	save_baseline "$cli" pe
	timeout 40 "$TRAFFIC" client --connect 198.18.0.2:8080 --count 80 \
		--netns "$(nspath "$cli")" --close-first client --timeout 30 \
		>"$TMPDIR_T/pe.client.json"
	bg_wait "$SERVER_PID"
	failed=$(json_get "$TMPDIR_T/pe.client.json" errors.EADDRNOTAVAIL)
	check_eq "client EADDRNOTAVAIL" "$failed" 30
	diagnose "$cli" pe
	check_eq "diagnose exit code" "$DIAG_RC" 3
	check_str "findings" "$(findings "$TMPDIR_T/pe.diag.json")" \
		port_exhaustion
	grep -q '198\.18\.0\.2' "$TMPDIR_T/pe.diag.json"
	check_err $? "the exhausted destination is not named"
	check_eq "evidence ConnectPortExhausted" \
		"$(evidence "$TMPDIR_T/pe.diag.json" ConnectPortExhausted)" \
		"$failed"
	log_test "cli: diagnose names ephemeral-port exhaustion"
	cleanup_ns "$cli" "$srv"
}

test_accept_queue()
{
	T="cli: diagnose names accept-queue overflow"
	test_begin "$T"
	pair_setup || { check_err 1 "setup failed"; log_test "$T"; return; }
	nsx "$srv" sysctl -qw net.core.somaxconn=10
	server_start "$srv" "$TMPDIR_T/aq.server.json" \
		--listen 198.18.0.2:8080 --no-accept --backlog 100 \
		--timeout 20 || { check_err 1 "no server"; log_test "$T"; return; }
	save_baseline "$srv" aq
	# 30 connects in flight together, as tcptw_listen.sh does
	ip netns exec "$cli" timeout 20 python3 "$LIB_DIR/tcptw_sock.py" \
		burst 198.18.0.2 8080 30 10 4 >"$TMPDIR_T/aq.client.json"
	check_gt "ListenOverflow" "$(tw_counter "$srv" ListenOverflow)" 0
	diagnose "$srv" aq
	check_eq "diagnose exit code" "$DIAG_RC" 3
	check_str "findings" "$(findings "$TMPDIR_T/aq.diag.json")" \
		accept_queue
	grep -q '8080' "$TMPDIR_T/aq.diag.json"
	check_err $? "the overflowing listener (port 8080) is not named"
	log_test "cli: diagnose names accept-queue overflow"
	kill "$SERVER_PID" 2>/dev/null
	cleanup_ns "$cli" "$srv"
}

test_tw_overflow()
{
	local T="cli: diagnose names TIME_WAIT bucket overflow"
	local ovf

	test_begin "$T"
	pair_setup || { check_err 1 "setup failed"; log_test "$T"; return; }
	nsx "$srv" sysctl -qw net.ipv4.tcp_max_tw_buckets=10
	server_start "$srv" "$TMPDIR_T/ovf.server.json" \
		--listen 198.18.0.2:8080 --count 40 --timeout 30 \
		--close-first server || { check_err 1 "no server"; log_test "$T"; return; }
	save_baseline "$srv" ovf
	timeout 40 "$TRAFFIC" client --connect 198.18.0.2:8080 --count 40 \
		--netns "$(nspath "$cli")" --close-first server --timeout 30 \
		>"$TMPDIR_T/ovf.client.json"
	bg_wait "$SERVER_PID"
	ovf=$(tw_counter "$srv" TwOverflow)
	check_eq "TwOverflow" "$ovf" 30
	diagnose "$srv" ovf
	check_eq "diagnose exit code" "$DIAG_RC" 3
	check_str "findings" "$(findings "$TMPDIR_T/ovf.diag.json")" tw_overflow
	check_eq "evidence TwOverflow" \
		"$(evidence "$TMPDIR_T/ovf.diag.json" TwOverflow)" "$ovf"
	log_test "$T"
	cleanup_ns "$cli" "$srv"
}

NAT_REJECTED=
tests_run \
	test_nat_paws \
	test_nat_watch \
	test_nat_control \
	test_ts_off \
	test_tw_overflow \
	test_port_exhaustion \
	test_accept_queue
