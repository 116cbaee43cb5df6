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
PY=/usr/bin/python3
SOCK=$LIB_DIR/tcptw_sock.py
[ -x "$PY" ] || { echo "SKIP: $PY not installed"; exit $ksft_skip; }
"$PY" -c 'import scapy' 2>/dev/null ||
	{ echo "SKIP: python3-scapy not installed"; exit $ksft_skip; }

SRV=198.18.0.2
K=5

test_estab()
{
	local kind=$1 name out rej paws

	if [ "$kind" = old ]; then
		name="paws_other: established: $K old TSvals -> PawsEstabRejected == PAWSEstab == $K"
	else
		name="paws_other: control: $K newer TSvals -> PawsEstabRejected 0"
	fi
	test_begin "$name"
	if ! probe_gate tcp_oow_rate_limited; then
		log_test "$name"
		return
	fi
	if ! ts_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	# scapy owns the client end: cli's stack must not reset it.
	ip netns exec "$cli" nft -f - <<-EOF
	table inet pawsest {
		chain outbound {
			type filter hook output priority 0; policy accept;
			tcp dport 8080 tcp flags rst drop
		}
	}
	EOF
	check_err $? "nft ruleset"
	server_start "$srv" "$TMPDIR_T/est_$kind.srv" --listen $SRV:8080 \
		--no-accept --timeout 60 ||
		{ check_err 1 "server did not start"; log_test "$name"; return; }
	out=$TMPDIR_T/est_$kind.json
	B=()
	A=()
	ns_snapshot "$srv" B s_
	timeout 150 ip netns exec "$cli" "$PY" "$SOCK" paws-estab 198.18.0.1 \
		$SRV 8080 $K "$kind" >"$out" 2>"$out.err"
	check_err $? "scapy failed: $(tail -n 3 "$out.err")"
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
				"$(events_count "$srv" paws_estab_rejected "src=198.18.0.1:41000")" $K
		fi
	else
		check_eq "srv TcpExt PAWSEstab" "$paws" 0
		check_mod_eq "srv PawsEstabRejected" "$rej" 0
	fi
	check_mod_eq "srv PawsSynRecvRejected" "$(d s_tw_PawsSynRecvRejected)" 0
	check_mod_eq "srv TwPawsRejected" "$(d s_tw_TwPawsRejected)" 0
	cleanup_all_ns
	log_test "$name"
}

test_active()
{
	local kind=$1 name out cres inj paws rej

	case $kind in
	bad) name="paws_other: active: SYN-ACK with TSecr out of window -> PawsActiveRejected == PAWSActive == injected" ;;
	good) name="paws_other: control: SYN-ACK with the right TSecr -> PawsActiveRejected 0" ;;
	badack) name="paws_other: control: SYN-ACK with a wrong ACK number -> RST, PawsActiveRejected 0" ;;
	esac
	test_begin "$name"
	if ! probe_gate tcp_v4_send_reset tcp_send_reset; then
		log_test "$name"
		return
	fi
	if ! ts_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	# scapy owns the server end: srv's stack never sees port 9000.
	ip netns exec "$srv" nft -f - <<-EOF
	table inet pawsact {
		chain inbound {
			type filter hook input priority 0; policy accept;
			tcp dport 9000 drop
		}
	}
	EOF
	check_err $? "nft ruleset"
	out=$TMPDIR_T/act_$kind.json
	cres=$TMPDIR_T/act_$kind.client.json
	bg_start "$out" timeout 150 ip netns exec "$srv" "$PY" "$SOCK" \
		paws-active eth0 9000 3 90 "$kind" "$TMPDIR_T/act_$kind.stop"
	if ! busywait 120000 grep -q ready "$out.err"; then
		check_err 1 "scapy did not start: $(tail -n 3 "$out.err")"
		cleanup_all_ns
		log_test "$name"
		return
	fi
	B=()
	A=()
	ns_snapshot "$cli" B c_
	# SYN at 0 and ~1 s: two SYN-ACKs within 2.5 s.
	ip netns exec "$cli" "$PY" "$SOCK" connect $SRV 9000 2.5 >"$cres"
	touch "$TMPDIR_T/act_$kind.stop"
	bg_wait "$BG_PID"
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
		check_mod_eq "cli PawsActiveRejected == PAWSActive" "$rej" "$paws"
		check_mod_eq "cli RstSent == OutRsts" "$(d c_tw_RstSent)" \
			"$(d c_mib_TcpOutRsts)"
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "cli events paws_active_rejected" \
				"$(events_count "$cli" paws_active_rejected "dst=$SRV:9000")" "$inj"
		fi
	elif [ "$kind" = badack ]; then
		check_eq "client connect" "$(grep -c '"connect":"ok"' "$cres")" 0
		check_eq "cli TcpExt PAWSActive" "$paws" 0
		check_eq "cli Tcp OutRsts == injected" "$(d c_mib_TcpOutRsts)" "$inj"
		check_mod_eq "cli PawsActiveRejected" "$rej" 0
		check_mod_eq "cli RstSent == OutRsts" "$(d c_tw_RstSent)" \
			"$(d c_mib_TcpOutRsts)"
	else
		check_eq "client connect" "$(grep -c '"connect":"ok"' "$cres")" 1
		check_eq "cli TcpExt PAWSActive" "$paws" 0
		check_mod_eq "cli PawsActiveRejected" "$rej" 0
	fi
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	"test_estab old" \
	"test_estab new" \
	"test_active bad" \
	"test_active good" \
	"test_active badack"
