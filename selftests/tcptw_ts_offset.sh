#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The 2026 regression (commit 165573e41f2f, "tcp: secure_seq: add back
# ports to TS offset", CVE-2026-23247, in Debian's 6.1.192 and 6.12.94+,
# upstream since 7.0): the TCP timestamp offset depends on the ports again,
# so a SINGLE client behind a NAT that rewrites its source port already has
# its SYNs PAWS-rejected by the server's TIME_WAIT sockets (the Kubernetes
# MASQUERADE --random-fully report: wrk throughput halved).
#
#   c1 198.18.1.2 --- nat (masquerade to 198.18.0.1:40000, one port) --- srv 198.18.0.2:8080
#
# One client, N connections, server closes first. Kernels with the change:
# TwSynPawsRejected > 0 and == srv PAWS MIB delta == c1 TCPSynRetrans delta.
# Kernels without it: all 0 (one clock per host pair, always newer).
# tcptw diagnose in srv names PAWS behind the NAT and, from the clocks of
# the rejected SYNs, this kernel change; where there is none, nothing.
# Which kind this kernel is comes from its Debian changelog or its version,
# never from the result itself.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

require_root
require_cmd ip nft conntrack nstat
require_traffic
require_module
require_nat

N=${TCPTW_TS_N:-21}
TCPTW_CLI=${TCPTW_CLI:-$LIB_DIR/../userspace/tcptw}

# has_ports_in_ts_offset : 0 yes, 1 no, 2 cannot tell
has_ports_in_ts_offset()
{
	local rel major minor f repo

	rel=$(uname -r)
	major=${rel%%.*}
	minor=${rel#*.}
	minor=${minor%%.*}
	# upstream since 7.0
	if [ "$major" -gt 7 ] || { [ "$major" -eq 7 ] && [ "$minor" -ge 0 ]; }; then
		return 0
	fi
	# Debian backports: the changelog of the kernel package says so.
	# In the QEMU runner the packages are unpacked under .cache/kernels.
	repo=$(cd "$LIB_DIR/.." && pwd)
	for f in /usr/share/doc/linux-image-"$rel"*/changelog.Debian.gz \
		 "$repo"/.cache/kernels/*/root/usr/share/doc/linux-image-"$rel"*/changelog.Debian.gz \
		 "${TCPTW_CACHE:-/nonexistent}"/kernels/*/root/usr/share/doc/linux-image-"$rel"*/changelog.Debian.gz; do
		[ -f "$f" ] || continue
		zgrep -q "add back ports to TS offset" "$f" && return 0
		return 1
	done
	return 2
}

# check_diagnose KIND REJECTED SEQ_REFUSED : what tcptw diagnose in srv
# makes of the run: with the ports in the TS offset, PAWS behind NAT and,
# from the events' clocks (4 rejections or more), the kernel change by
# name; without them no PAWS, only the refusals on sequence if any.
check_diagnose()
{
	local kind=$1 k=$2 seq=$3 out=$TMPDIR_T/srv.diag.json rc ids want

	if [ ! -x "$TCPTW_CLI" ]; then
		diag "tcptw CLI not built ($TCPTW_CLI): diagnose not checked"
		return
	fi
	ip netns exec "$srv" "$TCPTW_CLI" diagnose -j \
		--baseline "$TMPDIR_T/srv.base" >"$out" 2>"$out.err"
	rc=$?
	ids=$(python3 -c '
import json, sys
print(" ".join(sorted(f["id"] for f in json.load(open(sys.argv[1]))["findings"])))' "$out")
	diag "diagnose exit $rc, findings [$ids]: $(grep -o '"notes":[^]]*' "$out" | head -c 700)"
	if [ "$kind" -ne 0 ]; then
		# no PAWS; only the same-millisecond refusals on sequence, if any
		if [ "$seq" -gt 0 ]; then
			check_eq "diagnose exit code (3: ts_off_seq found)" "$rc" 3
			check_eq "diagnose names ts_off_seq, alone" \
				"$([ "$ids" = ts_off_seq ] && echo 1 || echo 0)" 1
		else
			check_eq "diagnose exit code (nothing found)" "$rc" 0
			check_eq "diagnose findings" \
				"$([ -z "$ids" ] && echo 0 || echo 1)" 0
		fi
		return
	fi
	check_eq "diagnose exit code (3: problem found)" "$rc" 3
	want=nat_paws
	[ "$seq" -gt 0 ] && want="nat_paws ts_off_seq"
	check_eq "diagnose names [$want], nothing else" \
		"$([ "$ids" = "$want" ] && echo 1 || echo 0)" 1
	if [ "$k" -ge 4 ]; then
		grep -q 'CVE-2026-23247' "$out"
		check_err $? "diagnose does not name the TS-offset change (CVE-2026-23247)"
		grep -q "$NAT_PUB" "$out"
		check_err $? "diagnose does not name the NAT address $NAT_PUB"
	fi
}

test_single_client()
{
	local T="ts_offset: one client behind a 1-port NAT" out kind
	local k kall paws retr b_k b_kall b_paws b_retr slow pother b_pother
	local seq b_seq

	test_begin "$T"
	has_ports_in_ts_offset
	kind=$?
	if [ $kind -eq 2 ]; then
		skip_test "kernel $(uname -r): no Debian changelog to tell whether it has 165573e41f2f"
		log_test "$T"
		return
	fi
	diag "kernel $(uname -r): ports in the TS offset: $([ $kind -eq 0 ] && echo yes || echo no)"
	if ! nat_topo_setup; then
		check_err 1 "topology setup failed"
		log_test "$T"
		return
	fi
	server_start "$srv" "$TMPDIR_T/srv.json" --listen $SRV_ADDR:$SRV_PORT \
		--count "$N" --timeout 60 --close-first server ||
		{ check_err 1 "no server"; log_test "$T"; return; }
	[ -x "$TCPTW_CLI" ] && ip netns exec "$srv" "$TCPTW_CLI" diagnose \
		--save-baseline "$TMPDIR_T/srv.base" >/dev/null
	b_k=$(tw_counter "$srv" TwSynPawsRejected)
	b_kall=$(tw_counter "$srv" TwPawsRejected)
	b_seq=$(tw_counter "$srv" TwSynSeqRejected)
	b_pother=$(( $(tw_counter "$srv" PawsEstabRejected) + $(tw_counter "$srv" PawsSynRecvRejected) ))
	b_paws=$(mib_paws_tw "$srv")
	b_retr=$(mib "$c1" TcpExtTCPSynRetrans)
	out=$TMPDIR_T/client.json
	timeout 60 "$TRAFFIC" client --connect $SRV_ADDR:$SRV_PORT \
		--count "$N" --netns "$(nspath "$c1")" --close-first server \
		--barrier --timeout 40 --connect-timeout 10000 >"$out"
	check_err $? "client failed"
	bg_wait "$SERVER_PID"
	k=$(( $(tw_counter "$srv" TwSynPawsRejected) - b_k ))
	kall=$(( $(tw_counter "$srv" TwPawsRejected) - b_kall ))
	seq=$(( $(tw_counter "$srv" TwSynSeqRejected) - b_seq ))
	pother=$(( $(tw_counter "$srv" PawsEstabRejected) + $(tw_counter "$srv" PawsSynRecvRejected) - b_pother ))
	paws=$(( $(mib_paws_tw "$srv") - b_paws ))
	retr=$(( $(mib "$c1" TcpExtTCPSynRetrans) - b_retr ))
	diag "client: $(head -c 200 "$out")"
	check_eq "client connects ok" "$(json_get "$out" ok)" "$N"
	diag "TwSynPawsRejected=$k TwSynSeqRejected=$seq TwPawsRejected=$kall PawsEstab+SynRecvRejected=$pother PAWS MIB=$paws c1 TCPSynRetrans=$retr"
	# Every PAWS reject, SYN or not: before 6.16 PAWSEstab also counts
	# the established and SYN-RECV ones (with one TS clock per connection
	# a segment now and then meets the previous connection's socket).
	check_eq "TwPawsRejected + PawsEstab/SynRecvRejected == srv PAWS MIB delta" \
		$((kall + pother)) "$paws"
	check_eq "TwSynPawsRejected <= TwPawsRejected" \
		"$([ "$k" -le "$kall" ] && echo 1 || echo 0)" 1
	# Each rejected SYN costs one fast SYN retransmit. A connect of 0.5 s
	# or more lost a SYN on top of that (seen once with a third guest
	# loading the machine: one more retransmit after a 1 s RTO); then
	# the connects that retransmitted at all are the ground truth.
	# A SYN whose TSval equals ts_recent (the same millisecond as the
	# previous connection's last segment) is refused on sequence instead
	# (TwSynSeqRejected): same cost to the client.
	slow=$(json_get "$out" slow_connects)
	if [ "$slow" -eq 0 ]; then
		check_eq "TwSynPawsRejected + TwSynSeqRejected == c1 TCPSynRetrans delta" \
			$((k + seq)) "$retr"
	else
		diag "$slow connect(s) took 0.5 s or more: compared with the connects that retransmitted"
		check_eq "TwSynPawsRejected + TwSynSeqRejected == connects with a SYN retransmit" \
			$((k + seq)) "$(json_get "$out" retrans_connects)"
	fi
	if [ $kind -eq 0 ]; then
		check_gt "TwSynPawsRejected (ports in the TS offset)" "$k" 0
	else
		check_eq "TwSynPawsRejected (one TS clock per host pair)" "$k" 0
	fi
	check_diagnose "$kind" "$k" "$seq"
	log_test "$T"
	nat_topo_cleanup
}

tests_run \
	test_single_client
