#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# PAWS on established sockets and on the active side (SYN-SENT), with
# segments crafted by scapy (tcptw_sock.py):
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2
#
# Established: srv listens on :8080 (never accepts; the child socket is
# established in the accept queue). scapy in cli does the handshake by
# hand with timestamps (cli's own stack's RSTs dropped by nft), sends one
# good data segment, then K segments with a TSval 100000 ticks older.
# Asserted: PawsEstabRejected == K == srv PAWSEstab delta. Control: K
# newer, in-sequence segments: 0.
#
# Active: scapy in srv answers cli's SYNs to :9000 (srv's own stack never
# sees them: nft drops them at input) with a SYN-ACK whose ACK number is
# right but whose TSecr lies 1000 s past the SYN's TSval. Asserted:
# PawsActiveRejected == cli PAWSActive delta == SYN-ACKs injected, and cli
# answers each with a RST (OutRsts, RstSent, seen by scapy). Controls: a
# SYN-ACK echoing the right TSecr connects, 0; one whose ACK number is
# wrong (and TSecr as bad) gets its RST for the ACK, PAWSActive and
# PawsActiveRejected 0 (tcptw tells the two RSTs of SYN-SENT apart at the
# RST's hook, by the ACK number, or on 6.10+ by the RST's reason).

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat nft
require_traffic
require_module
# every failure is asserted to leave its event
events_every
require_sock_py
"$PY" -c 'import scapy' 2>/dev/null ||
	{ echo "SKIP: python3-scapy not installed"; exit $ksft_skip; }

SRV=198.18.0.2
K=5
ACT_KINDS=bad,good,badack
ACT_PORTS=9000,9001,9002

# One scapy start per side serves its cases (tcptw_sock.py; an import
# takes 10-20 s under TCG): the established cases share a pair and an
# injector in cli (its own source port each), the active ones another
# pair and an injector in srv (its own port each: 9000 bad, 9001 good,
# 9002 badack; good runs last, its connection's FIN goes unanswered).
# INJ: the running group (estab or active), INJ_DIR its result files.
INJ=""
INJ_DIR=""

# inj_start GROUP : fresh namespaces and GROUP's injector, unless it runs
inj_start()
{
	local group=$1

	[ "$INJ" = "$group" ] && return 0
	INJ=""
	cleanup_all_ns
	ts_pair || { check_err 1 "setup failed"; return 1; }
	INJ_DIR=$TMPDIR_T/$group
	mkdir -p "$INJ_DIR"
	if [ "$group" = estab ]; then
		# scapy owns the client end: cli's stack must not reset it.
		ip netns exec "$cli" nft -f - <<-EOF
		table inet pawsest {
			chain outbound {
				type filter hook output priority 0; policy accept;
				tcp dport 8080 tcp flags rst drop
			}
		}
		EOF
		[ $? -eq 0 ] || { check_err 1 "nft ruleset"; return 1; }
		server_start "$srv" "$INJ_DIR/srv" --listen $SRV:8080 \
			--no-accept --timeout 300 ||
			{ check_err 1 "server did not start"; return 1; }
		bg_start "$INJ_DIR/inj" timeout 300 ip netns exec "$cli" \
			"$PY" "$SOCK" paws-estab 198.18.0.1 $SRV 8080 $K \
			"$INJ_DIR" old,new
	else
		# scapy owns the server end: srv's stack never sees its ports.
		ip netns exec "$srv" nft -f - <<-EOF
		table inet pawsact {
			chain inbound {
				type filter hook input priority 0; policy accept;
				tcp dport { $ACT_PORTS } drop
			}
		}
		EOF
		[ $? -eq 0 ] || { check_err 1 "nft ruleset"; return 1; }
		bg_start "$INJ_DIR/inj" timeout 300 ip netns exec "$srv" \
			"$PY" "$SOCK" paws-active eth0 $ACT_PORTS 3 280 \
			$ACT_KINDS "$INJ_DIR"
	fi
	if ! busywait 120000 grep -q ready "$INJ_DIR/inj.err"; then
		check_err 1 "scapy did not start: $(tail -n 3 "$INJ_DIR/inj.err")"
		return 1
	fi
	INJ=$group
}

test_estab()
{
	local kind=$1 name out rej paws sport

	if [ "$kind" = old ]; then
		name="paws_other: established: $K old TSvals -> PawsEstabRejected == PAWSEstab == $K"
		sport=41000
	else
		name="paws_other: control: $K newer TSvals -> PawsEstabRejected 0"
		sport=41001
	fi
	test_begin "$name"
	if ! probe_gate tcp_oow_rate_limited; then
		log_test "$name"
		return
	fi
	inj_start estab || { log_test "$name"; return; }
	out=$INJ_DIR/$kind.json
	B=()
	A=()
	ns_snapshot "$srv" B s_
	touch "$INJ_DIR/go.$kind"
	busywait 150000 test -s "$out"
	check_err $? "scapy failed: $(tail -n 3 "$INJ_DIR/inj.err")"
	sleep 0.3
	ns_snapshot "$srv" A s_
	paws=$(d s_mib_TcpExtPAWSEstab)
	rej=$(d s_tw_PawsEstabRejected)
	diag "scapy: $(cat "$out")"
	diag "srv PAWSEstab=$paws PassiveOpens=$(d s_mib_TcpPassiveOpens) | PawsEstabRejected=$rej PawsSynRecvRejected=$(d s_tw_PawsSynRecvRejected) TwPawsRejected=$(d s_tw_TwPawsRejected)"
	check_eq "srv passive opens (the crafted handshake)" \
		"$(d s_mib_TcpPassiveOpens)" 1
	check_eq "scapy injected" "$(json_get "$out" injected)" $K
	if [ "$kind" = old ]; then
		check_eq "srv TcpExt PAWSEstab == injected" "$paws" $K
		check_mod_eq "srv PawsEstabRejected == PAWSEstab" "$rej" "$paws"
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "srv events paws_estab_rejected" \
				"$(events_count "$srv" paws_estab_rejected "src=198.18.0.1:$sport")" $K
		fi
	else
		check_eq "srv TcpExt PAWSEstab" "$paws" 0
		check_mod_eq "srv PawsEstabRejected" "$rej" 0
	fi
	check_mod_eq "srv PawsSynRecvRejected" "$(d s_tw_PawsSynRecvRejected)" 0
	check_mod_eq "srv TwPawsRejected" "$(d s_tw_TwPawsRejected)" 0
	log_test "$name"
}

test_active()
{
	local kind=$1 name out cres inj paws rej port

	case $kind in
	bad) name="paws_other: active: SYN-ACK with TSecr out of window -> PawsActiveRejected == PAWSActive == injected"
		port=9000 ;;
	good) name="paws_other: control: SYN-ACK with the right TSecr -> PawsActiveRejected 0"
		port=9001 ;;
	badack) name="paws_other: control: SYN-ACK with a wrong ACK number -> RST, PawsActiveRejected 0"
		port=9002 ;;
	esac
	test_begin "$name"
	if ! probe_gate tcp_v4_send_reset tcp_send_reset; then
		log_test "$name"
		return
	fi
	inj_start active || { log_test "$name"; return; }
	out=$INJ_DIR/$port.json
	cres=$INJ_DIR/$kind.client.json
	B=()
	A=()
	ns_snapshot "$cli" B c_
	# SYNs at 0, ~1 and ~3 s, each answered (up to 3 a port): the socket
	# stays in SYN-SENT for 8 s, so that an answer that a starved scapy
	# sends seconds late still finds it (with 2.5 s, two of three found
	# it closed under a loaded CI host: RSTs without PAWSActive)
	ip netns exec "$cli" "$PY" "$SOCK" connect $SRV $port 8 >"$cres"
	# the client's last RST reaches the sniffer
	sleep 1
	ns_snapshot "$cli" A c_
	inj=$(json_get "$out" injected)
	paws=$(d c_mib_TcpExtPAWSActive)
	rej=$(d c_tw_PawsActiveRejected)
	diag "scapy: $(cat "$out") client: $(cat "$cres")"
	diag "cli PAWSActive=$paws OutRsts=$(d c_mib_TcpOutRsts) TCPSynRetrans=$(d c_mib_TcpExtTCPSynRetrans) | PawsActiveRejected=$rej RstSent=$(d c_tw_RstSent)"
	check_gt "SYN-ACKs injected" "$inj" 0
	if [ "$kind" = bad ]; then
		check_eq "client connect" "$(grep -c '"connect":"ok"' "$cres")" 0
		check_eq "cli TcpExt PAWSActive == injected" "$paws" "$inj"
		check_eq "cli Tcp OutRsts == injected" "$(d c_mib_TcpOutRsts)" "$inj"
		check_eq "RSTs scapy saw == injected" "$(json_get "$out" rsts)" "$inj"
		check_mod_eq "cli PawsActiveRejected == SYN-ACKs injected" \
			"$rej" "$inj"
		check_mod_eq "cli RstSent == RSTs scapy saw" "$(d c_tw_RstSent)" \
			"$(json_get "$out" rsts)"
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "cli events paws_active_rejected" \
				"$(events_count "$cli" paws_active_rejected "dst=$SRV:$port")" "$inj"
		fi
	elif [ "$kind" = badack ]; then
		check_eq "client connect" "$(grep -c '"connect":"ok"' "$cres")" 0
		check_eq "cli TcpExt PAWSActive" "$paws" 0
		check_eq "cli Tcp OutRsts == injected" "$(d c_mib_TcpOutRsts)" "$inj"
		check_mod_eq "cli PawsActiveRejected" "$rej" 0
		check_mod_eq "cli RstSent == SYN-ACKs injected (each refused)" \
			"$(d c_tw_RstSent)" "$inj"
	else
		check_eq "client connect" "$(grep -c '"connect":"ok"' "$cres")" 1
		check_eq "cli TcpExt PAWSActive" "$paws" 0
		check_mod_eq "cli PawsActiveRejected" "$rej" 0
	fi
	log_test "$name"
}

tests_run \
	"test_estab old" \
	"test_estab new" \
	"test_active bad" \
	"test_active badack" \
	"test_active good"
