#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# SYNs refused by a TIME_WAIT socket still in the FIN_WAIT2 substate
# (issue 39):
#
#   cli 198.18.0.1:46000 --eth0---eth0-- srv 198.18.0.2:8080
#       fd00::1                              fd00::2
#
# The server answers and closes first; the client reads to its FIN (which
# it ACKs) and aborts without a FIN (SO_LINGER 0; nft drops its RSTs), so
# the server's orphan waits for a FIN that never comes, as a TIME_WAIT
# socket in the FIN_WAIT2 substate. The client then connects again from
# the same port: its SYN, with a new random ISN, is out of that socket's
# window, and the kernel answers it with a bare ACK (tcp_timewait_state_
# process()'s FIN_WAIT2 branch; no kernel counter says so), which the
# client's stack RSTs (dropped too) and retransmits the SYN at once,
# then a second later, until connect() times out. Truth: the wire on
# srv's eth0 (every SYN from cli:46000 after the first connection's, and
# srv's bare ACKs: one per SYN but for the kernel's rate limit, which
# skips the answer to the SYN 10 ms after the first) and the client's
# timeout. Asserted: TwSynFinWait2Rejected == those SYNs, none of them
# counted as another TIME_WAIT refusal, TwAckSent == the bare ACKs. Control: the
# client closes with a FIN, the server's socket is a full TIME_WAIT one
# and recycles the SYN (connect() ok): TwSynFinWait2Rejected 0. Before
# 0.4.0 these SYNs were counted nowhere. IPv4 and IPv6. `tcptw diagnose`
# over the run names exactly [fin_wait2_syn] with the wire's SYN count as
# its evidence, and nothing in the control.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nft tcpdump python3
require_traffic
require_module

SOCK_PY=$(dirname "$0")/tcptw_sock.py
LPORT=46000

# fw2_run NAME SRC DST HOW : the scenario, with srv's eth0 traced; sets
# OUT (the client's JSON), SYNS (SYNs from SRC:LPORT after the first
# connection's) and ACKED (the bare ACKs srv answered them with)
fw2_run()
{
	local name=$1 src=$2 dst=$3 how=$4 pcap=$TMPDIR_T/$1.pcap pid

	PCAP=$pcap
	OUT=$TMPDIR_T/$name.json
	SYNS= ACKED=
	printf '%s\n' "table inet t {" "chain out {" \
		"type filter hook output priority 0; policy accept;" \
		"tcp flags & rst == rst drop" "}" "}" | nsx "$cli" nft -f - ||
		{ check_err 1 "nft rule dropping cli's RSTs failed"; return 1; }
	server_start "$srv" "$TMPDIR_T/$name.server.json" \
		--listen "$(addr_port "$dst" 8080)" --count 2 --timeout 30 \
		--close-first server ||
		{ check_err 1 "server did not start"; return 1; }
	bg_start "$pcap.log" timeout 60 ip netns exec "$srv" tcpdump -Z root \
		--immediate-mode -i eth0 -U -s 128 -c 1000 -w "$pcap" \
		"tcp port $LPORT"
	pid=$BG_PID
	busywait 5000 grep -q "listening on" "$pcap.log.err" ||
		{ check_err 1 "tcpdump did not start"; return 1; }
	timeout 30 ip netns exec "$cli" python3 "$SOCK_PY" fw2-syn \
		"$src" "$dst" 8080 $LPORT "$how" 2.5 >"$OUT"
	check_err $? "tcptw_sock.py fw2-syn failed"
	sleep 0.3
	kill "$pid" 2>/dev/null
	bg_wait "$pid"
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	diag "client: $(cat "$OUT")"
	# after the first SYN, each SYN from cli and srv's answer to it
	read -r SYNS ACKED < <(tcpdump -r "$pcap" -nn 2>/dev/null | awk -v p=".$LPORT" '
		$3 ~ p "$" && $7 == "[S]," { n++; if (n > 1) { syn++; open = 1 }; next }
		$5 ~ p ":$" && open { if ($7 == "[.],") ack++; open = 0 }
		END { print syn + 0, ack + 0 }')
	diag "srv eth0: $SYNS SYNs after the first connection's, $ACKED answered by a bare ACK"
}

# fw2_dump : on failure, the trace of the last run
fw2_dump()
{
	[ "$RET" -eq 0 ] && return
	tcpdump -r "$PCAP" -nn -ttttt 2>/dev/null | head -n 40 | sed 's/^/#   /'
}

# test_fw2 FAMILY abort|close
test_fw2()
{
	local fam=$1 how=$2 src=198.18.0.1 dst=198.18.0.2 b c
	local name="tw_fin_wait2: $fam: SYNs refused in FIN_WAIT2 == the wire's"

	[ "$fam" = ipv6 ] && src=fd00::1 dst=fd00::2
	[ "$how" = close ] &&
		name="tw_fin_wait2: $fam: control: full TIME_WAIT recycles the SYN -> 0"
	test_begin "$name"
	if ! ts_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	ns_snapshot "$srv" B s_
	[ -x "$TCPTW_CLI" ] && save_baseline "$srv" "fw2_$fam"
	fw2_run "fw2_${fam}_$how" "$src" "$dst" "$how"
	ns_snapshot "$srv" A s_
	if [ -x "$TCPTW_CLI" ]; then
		diagnose "$srv" "fw2_$fam"
		if [ "$how" = abort ]; then
			check_str "diagnose names" \
				"$(findings "$TMPDIR_T/fw2_$fam.diag.json")" fin_wait2_syn
			check_eq "diagnose evidence TwSynFinWait2Rejected == the wire's refused SYNs" \
				"$(evidence "$TMPDIR_T/fw2_$fam.diag.json" TwSynFinWait2Rejected)" \
				"$SYNS"
		else
			check_str "diagnose names (control)" \
				"$(findings "$TMPDIR_T/fw2_$fam.diag.json")" ""
		fi
	fi
	check_str "first connect()" "$(jstr first)" ok
	if [ "$how" = abort ]; then
		check_str "second connect()" "$(jstr second)" timeout
		check_gt "SYNs on the wire after the first connection's" "$SYNS" 0
		# each SYN an ACK, but for the kernel's rate limit (at most
		# one per tcp_invalid_ratelimit, 500 ms: the client's RST
		# dropped, its retransmission may come sooner)
		check_eq "srv's bare ACKs + TCPACKSkippedFinWait2 == the SYNs" \
			$((ACKED + $(d s_mib_TcpExtTCPACKSkippedFinWait2))) "$SYNS"
		check_mod_eq "srv TwSynFinWait2Rejected == the wire's refused SYNs" \
			"$(d s_tw_TwSynFinWait2Rejected)" "$SYNS"
		check_mod_eq "srv TwAckSent == the wire's bare ACKs" \
			"$(d s_tw_TwAckSent)" "$ACKED"
	else
		check_str "second connect()" "$(jstr second)" ok
		check_eq "SYNs on the wire after the first connection's" "$SYNS" 1
		check_eq "of them answered by srv with a bare ACK" "$ACKED" 0
		check_mod_eq "srv TwSynRecycled" "$(d s_tw_TwSynRecycled)" 1
		check_mod_eq "srv TwSynFinWait2Rejected" \
			"$(d s_tw_TwSynFinWait2Rejected)" 0
	fi
	for c in TwSynPawsRejected TwSynSeqRejected TwPawsRejected; do
		check_mod_eq "srv $c (not this refusal)" "$(d s_tw_$c)" 0
	done
	b=$(d s_tw_TwRstSent)
	check_mod_eq "srv TwRstSent (the SYNs were out of window: ACKs)" "$b" 0
	fw2_dump
	cleanup_all_ns
	log_test "$name"
}

# d KEY : A[KEY] - B[KEY]
d()
{
	echo $(( ${A[$1]:-0} - ${B[$1]:-0} ))
}

declare -A A B

tests_run \
	"test_fw2 ipv4 abort" \
	"test_fw2 ipv6 abort" \
	"test_fw2 ipv4 close"
