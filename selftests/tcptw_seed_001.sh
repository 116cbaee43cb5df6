#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Seed 001 through IPVS, as the report ran it: non-persistent HTTP POSTs
# from clients via an LVS-NAT director to nginx real servers, each with a
# small listen backlog; the accept queue after a reload, the removal of a
# real server, and the director's idle timeout.
#
#   cli 198.18.0.1 --c1--.                     .--r1-- srv1 198.18.11.2:80
#                         \   dir             /        nginx backlog=B1
#   ka  198.18.1.1 --c2----- VIP 198.18.100.1:80 --r2-- srv2 198.18.12.2:80
#                             ipvsadm -s rr -m \       nginx backlog=B2
#                             (on lo; forwards) '--r3-- srv3 198.18.13.2:80
#
# Each real server has net.core.somaxconn == its backlog and one nginx
# worker; the director has the VIP on lo (IPVS works at LOCAL_IN) and
# ip_forward=1 (the replies are un-NATed on their way through).
# All subtests share one topology (bc and ic are two more clients, on c3
# and c4): srv2 has the small backlog B2, the others BB.
#  1) reload: wrk -c WRK_C of POSTs with Connection: close (the report's
#     56-byte body) from cli while `nginx -s reload` runs on srv2 (its
#     window without an accepting worker made exact: the old worker
#     stopped before the load until srv2's queue overflowed, at least
#     RELOAD_GAP s, continued after): srv2's
#     listeners row (overflow_syn + overflow_ack) == its TcpExt
#     ListenOverflows delta == tcptw's ListenOverflow, > 0; the clients'
#     failures (wrk's errors, SYN and data retransmissions) counted;
#     diagnose in srv2 names accept_queue. IPVS's connections scheduled
#     == the client's TcpActiveOpens. cli's link goes down after it.
#  2) remove a real server: C non-persistent POSTs (HTTP/1.0, burst.py
#     from bc: ab opens its connections one after the other) in one burst while
#     every nginx worker is stopped (SIGSTOP: a worker without CPU, the
#     report's saturated Nginx, made exact), then continued. rr gives each
#     of the N servers exactly C/N connections (== IPVS's per-server
#     Conns == its PassiveOpens). Control, all N in: C/N == B2 + 1, every
#     accept queue (ss Recv-Q) holds its share, no overflow anywhere (0).
#     After `ipvsadm -d` of srv1: C/(N-1) each; srv2 (the smallest
#     backlog) saturates first: its queue holds B2 + 1, its row and
#     ListenOverflows count at least the excess, every SYN it dropped cost
#     the client one retransmitted SYN (client TCPSynRetrans == the
#     servers' ListenOverflows); the other servers (backlog BB) hold all
#     theirs: 0 and no row. diagnose in srv2 names accept_queue.
#  3) the director's idle timeout: `ipvsadm --set IDLE_TMO 0 0` (the
#     report's LB timeout of 90 s, scaled); a keep-alive HTTP/1.1
#     connection from ic idles IDLE_S > IDLE_TMO and posts again: IPVS
#     has forgotten it, the POST reaches the director's own stack, which
#     has no socket on VIP:80 and answers with a RST (dir TcpOutRsts +1):
#     ECONNRESET, ic RstReceived == TcpEstabResets == 1, one RST after
#     >= 4096 ms of silence in /proc/net/tcptw/hist, diagnose names
#     nat_idle_reset. The real server never hears of it: its connection
#     stays ESTABLISHED (Linux IPVS resets neither end; the report's LB
#     did). Control, at the same time from ka: TCP_KEEPIDLE below the
#     timeout keeps the IPVS entry alive: the second POST is answered,
#     no RST (0). Then the remedy diagnose printed in ic, applied there
#     as printed (tcp_keepalive_time and _intvl below half the silence
#     that was reset), and ic's client again with SO_KEEPALIVE alone
#     (the application's part): the POST is answered, keepalives went
#     out (TCPKeepAlive), no RST.
# Scaled for make check (6.1 only: require_seeds_at_load; about 2
# minutes in a guest); with
# TCPTW_SEED001_FULL=1 (make seeds) the report's shape: 9 real servers,
# 10 s of load, bursts of 288, a 90 s LB timeout and 95 s of idleness
# against a 60 s keepalive.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat ss nginx python3
command -v ipvsadm >/dev/null 2>&1 ||
	{ echo "SKIP: ipvsadm not installed (scripts/deps.sh)"; exit $ksft_skip; }
command -v wrk >/dev/null 2>&1 ||
	{ echo "SKIP: wrk not installed"; exit $ksft_skip; }
FULL=${TCPTW_SEED001_FULL:-0}
[ "$FULL" = 1 ] || require_seeds_at_load 6.1
if ! modprobe ip_vs 2>/dev/null || ! modprobe ip_vs_rr 2>/dev/null; then
	echo "SKIP: no ip_vs module for $(uname -r)"
	exit $ksft_skip
fi
require_module

VIP=198.18.100.1
if [ "$FULL" = 1 ]; then
	NSRV=9 WRK_C=600 WRK_S=10 M=4 IDLE_TMO=90 IDLE_S=95 KA=60,10,5
else
	NSRV=3 WRK_C=96 WRK_S=4 M=4 IDLE_TMO=5 IDLE_S=8 KA=2,1,5
fi
RELOAD_GAP=1
# 1): WRK_C / N connections in flight per server, well above B2 + 1, so
# that srv2's queue fills while its old worker is stopped;
# 2): C = N (N-1) M; B2 + 1 == C/N (full, not over) with all N in,
# C/(N-1) == B2 + 1 + M without srv1; the others hold C/(N-1) easily
BURST=$((NSRV * (NSRV - 1) * M))
B2=$(((NSRV - 1) * M))
BB=$((2 * NSRV * M))
BODY='{"name": "jaseywang","sex": "1","birthday": "19990101"}'
ulimit -n 65536

have_cli()
{
	[ -x "$TCPTW_CLI" ]
}

rip()
{
	echo "198.18.$((10 + $1)).2"
}

# srv_ns I : the namespace of real server I
srv_ns()
{
	local v=srv$1

	echo "${!v}"
}

# nginx_conf I BACKLOG : real server I's config, everything under its dir
nginx_conf()
{
	local dir=$TMPDIR_T/srv$1

	nginx_conf_write "$dir" on 4096 error <<-EOF
	keepalive_timeout 300s;
	server {
		listen $(rip "$1"):80 backlog=$2;
		location / {
			return 200 "ok\n";
		}
	}
	EOF
}

listening()
{
	[ -n "$(nsx "$1" ss -Hltn "sport = :80")" ]
}

# topo_setup BACKLOG... : fresh namespaces, one real server per BACKLOG
# (somaxconn == backlog), nginx in each, the director with every server in
topo_setup()
{
	local i ns n=$# b

	cleanup_all_ns
	setup_ns dir cli bc ic ka || return 1
	for ((i = 1; i <= n; i++)); do
		setup_ns "srv$i" || return 1
	done
	veth_pair "$cli" "$dir" c1 198.18.0.1/24 198.18.0.254/24 || return 1
	veth_pair "$ka" "$dir" c2 198.18.1.1/24 198.18.1.254/24 || return 1
	veth_pair "$bc" "$dir" c3 198.18.2.1/24 198.18.2.254/24 || return 1
	veth_pair "$ic" "$dir" c4 198.18.3.1/24 198.18.3.254/24 || return 1
	ip -n "$cli" route add default via 198.18.0.254 || return 1
	ip -n "$ka" route add default via 198.18.1.254 || return 1
	ip -n "$bc" route add default via 198.18.2.254 || return 1
	ip -n "$ic" route add default via 198.18.3.254 || return 1
	for ((i = 1; i <= n; i++)); do
		ns=$(srv_ns $i)
		veth_pair "$ns" "$dir" r$i "$(rip $i)/24" "198.18.$((10 + i)).1/24" ||
			return 1
		ip -n "$ns" route add default via "198.18.$((10 + i)).1" || return 1
	done
	ip -n "$dir" addr add $VIP/32 dev lo || return 1
	nsx "$dir" sysctl -qw net.ipv4.ip_forward=1 || return 1
	{
		echo "-A -t $VIP:80 -s rr"
		for ((i = 1; i <= n; i++)); do
			echo "-a -t $VIP:80 -r $(rip $i):80 -m"
		done
	} | nsx "$dir" ipvsadm -R || return 1
	i=0
	for b in "$@"; do
		i=$((i + 1))
		ns=$(srv_ns $i)
		nsx "$ns" sysctl -qw net.core.somaxconn="$b" || return 1
		nginx_conf $i "$b"
		bg_start "$TMPDIR_T/srv$i/out" nsx "$ns" nginx -p "$TMPDIR_T/srv$i" \
			-e "$TMPDIR_T/srv$i/error.log" -c "$TMPDIR_T/srv$i/nginx.conf"
	done
	for ((i = 1; i <= n; i++)); do
		if ! busywait 20000 listening "$(srv_ns $i)"; then
			diag "nginx $i did not start: $(tail -n 3 "$TMPDIR_T/srv$i/error.log" "$TMPDIR_T/srv$i/out.err" 2>/dev/null)"
			return 1
		fi
	done
	busywait 3000 link_up "$cli" c1 && busywait 3000 link_up "$ka" c2 &&
		busywait 3000 link_up "$bc" c3 && busywait 3000 link_up "$ic" c4
}

# seed_topo : the topology all tests share (srv2 backlog B2, others BB)
seed_topo()
{
	local i bs=()

	for ((i = 1; i <= NSRV; i++)); do
		if [ $i = 2 ]; then bs+=("$B2"); else bs+=("$BB"); fi
	done
	topo_setup "${bs[@]}"
}

# ipvs_conns ADDR:PORT : IPVS's Conns for the virtual service or a real
# server (ipvsadm -Ln --stats --exact in dir), 0 if it has no line
ipvs_conns()
{
	nsx "$dir" ipvsadm -Ln --stats --exact 2>/dev/null |
		awk -v a="$1" '($1 == "TCP" || $1 == "->") && $2 == a { v = $3 }
			END { print v + 0 }'
}

ipvs_dump()
{
	nsx "$dir" ipvsadm -Ln --stats --exact 2>/dev/null | sed 's/^/#   ipvsadm: /'
}

# row_ovf NS ADDR : overflow_syn + overflow_ack of that row, 0 if none
row_ovf()
{
	listener_row "$1" "$2" 80 | awk '{ s += $5 + $6 } END { print s + 0 }'
}

# acceptq NS : the accept queue of NS's :80 listener (ss Recv-Q)
acceptq()
{
	nsx "$1" ss -Hltn "sport = :80" | awk '{ print $2 + 0; exit }'
}

snap_all()
{
	local -n snap=$1
	local i k v

	ns_snapshot "$SNAP_CLI" "$1" c_
	ns_snapshot "$dir" "$1" d_
	for ((i = 1; i <= NSRV; i++)); do
		ns_snapshot "$(srv_ns $i)" "$1" s${i}_
		snap[row_$i]=$(row_ovf "$(srv_ns $i)" "$(rip $i)")
	done
	while read -r k v; do
		snap[ipvs_$k]=$v
	done < <(nsx "$dir" ipvsadm -Ln --stats --exact 2>/dev/null |
		awk '$1 == "TCP" { print "vs", $3 } $1 == "->" && $2 ~ /^[0-9]/ {
			sub(/:80$/, "", $2); print $2, $3 }')
}

srv_line()
{
	local i=$1

	echo "srv$i: ListenOverflows=$(d s${i}_mib_TcpExtListenOverflows) ListenDrops=$(d s${i}_mib_TcpExtListenDrops) SyncookiesSent=$(d s${i}_mib_TcpExtSyncookiesSent) PassiveOpens=$(d s${i}_mib_TcpPassiveOpens) | ListenOverflow=$(d s${i}_tw_ListenOverflow) (syn $(d s${i}_tw_ListenOverflowSyn) ack $(d s${i}_tw_ListenOverflowAck)) | row: $(listener_row "$(srv_ns $i)" "$(rip $i)" 80 | tr -s ' ')"
}

# example NAME FILE CAPTION NS : with TCPTW_EXAMPLES_DIR set, diagnose's
# text output of run NAME as docs/examples/seed-001-FILE-diagnose.txt
example()
{
	local out=${TCPTW_EXAMPLES_DIR:-}/seed-001-$2-diagnose.txt

	[ -n "${TCPTW_EXAMPLES_DIR:-}" ] && have_cli || return 0
	{
		echo "# Seed 001: $3 (tcptw diagnose --save-baseline before)"
		echo "\$ tcptw diagnose --baseline before"
		ip netns exec "$4" "$TCPTW_CLI" diagnose \
			--baseline "$TMPDIR_T/$1.base" 2>&1
		echo "# exit status $?"
	} >"$out"
}

# ------------------------------------------------------------ 1) reload

# nginx_reloaded : srv2 runs only the master and the new worker
nginx_reloaded()
{
	[ "$(ip netns pids "$srv2" | wc -l)" -le 2 ]
}

# nginx_workers I : the pids of real server I's nginx workers, one a line
nginx_workers()
{
	pgrep -P "$(cat "$TMPDIR_T/srv$1/nginx.pid")"
}

# srv2_overflowed : srv2's ListenOverflows moved since the B snapshot
srv2_overflowed()
{
	[ "$(mib "$srv2" TcpExtListenOverflows)" -gt "${B[s2_mib_TcpExtListenOverflows]:-0}" ]
}

reload_run()
{
	local i wrk_pid old=() lua=$TMPDIR_T/post.lua

	cat >"$lua" <<-EOF
	wrk.method = "POST"
	wrk.body = '$BODY'
	wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
	wrk.headers["Connection"] = "close"
	EOF
	SNAP_CLI=$cli
	B=()
	A=()
	snap_all B
	have_cli && save_baseline "$srv2" reload
	# the reload's window, in which no worker accepts (the old one
	# stopping, the new one not yet started), made exact: the old
	# worker stops before the load starts, until srv2's accept queue
	# has overflowed (at least RELOAD_GAP s, at most 20), and continues
	# (to take its QUIT) after the reload. wrk's first WRK_C connects
	# send WRK_C / N to srv2, well over its B2 + 1, however slow the
	# guest; left to a TCG guest's timing the window gave 0 to 20.
	mapfile -t old < <(nginx_workers 2)
	[ ${#old[@]} -gt 0 ] && kill -STOP "${old[@]}"
	check_err $? "no nginx worker in srv2 to stop"
	WRK=$TMPDIR_T/reload.wrk
	bg_start "$WRK" timeout 60 ip netns exec "$cli" wrk -t1 -c $WRK_C -d ${WRK_S}s \
		--timeout 2s -s "$lua" "http://$VIP/"
	wrk_pid=$BG_PID
	sleep "$RELOAD_GAP"
	busywait 20000 srv2_overflowed ||
		diag "srv2's queue did not overflow in 20 s with its worker stopped"
	RELOAD_T0=$(now_ms)
	nsx "$srv2" nginx -p "$TMPDIR_T/srv2" -e "$TMPDIR_T/srv2/error.log" \
		-c "$TMPDIR_T/srv2/nginx.conf" -s reload
	check_err $? "nginx -s reload failed"
	[ ${#old[@]} -gt 0 ] && kill -CONT "${old[@]}"
	# the old worker leaves once the new one runs
	busywait 20000 nginx_reloaded
	RELOAD_MS=$(($(now_ms) - RELOAD_T0))
	bg_wait "$wrk_pid"
	check_err $? "wrk failed: $(tail -n 3 "$WRK" "$WRK.err")"
	# no retransmission reaches a server after this: the counters, the
	# MIBs and the rows below stop at the same number
	ip -n "$cli" link set c1 down
	sleep 0.5
	snap_all A
	have_cli && diagnose "$srv2" reload
	WRK_ERR=$(awk '/Socket errors/ { gsub(/,/, ""); print $4 + $6 + $8 + $10 }' "$WRK")
	WRK_ERR=${WRK_ERR:-0}
	diag "wrk: $(grep -E 'requests in|Socket errors|Non-2xx' "$WRK" | tr -s ' ' | tr '\n' ';')"
	diag "reload: old worker gone after $RELOAD_MS ms"
	for ((i = 1; i <= NSRV; i++)); do
		diag "$(srv_line $i)"
	done
	diag "cli: ActiveOpens=$(d c_mib_TcpActiveOpens) TCPSynRetrans=$(d c_mib_TcpExtTCPSynRetrans) RetransSegs=$(d c_mib_TcpRetransSegs) EstabResets=$(d c_mib_TcpEstabResets) | IPVS conns $(d ipvs_vs)"
	ipvs_dump
}

reload_reproduced()
{
	[ "$(d s2_mib_TcpExtListenOverflows)" -gt 0 ] && return 0
	echo "no ListenOverflows on srv2"
	return 1
}

reload_reset()
{
	seed_topo
}

test_reload()
{
	local name="seed_001: nginx -s reload on srv2 under POSTs via IPVS -> srv2's row == its ListenOverflows, accept_queue"
	local ovf

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if [ -z "${dir:-}" ] && ! seed_topo; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	rerun_once reload_reproduced reload_reset reload_run ||
		check_err 1 "setup failed"
	ovf=$(d s2_mib_TcpExtListenOverflows)
	check_gt "srv2 TcpExt ListenOverflows" "$ovf" 0
	check_eq "srv2 ListenDrops == ListenOverflows" \
		"$(d s2_mib_TcpExtListenDrops)" "$ovf"
	check_mod_eq "srv2 ListenOverflow == ListenOverflows" \
		"$(d s2_tw_ListenOverflow)" "$ovf"
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "srv2 listeners row $(rip 2) 80 overflow_syn + overflow_ack == ListenOverflows" \
			"$(d row_2)" "$ovf"
		check_eq "srv2 listeners row max_backlog" \
			"$(listener_row "$srv2" "$(rip 2)" 80 | awk '{ print $4 }')" "$B2"
	fi
	# what the clients paid: every overflow is a SYN or an ACK dropped,
	# which the client retransmits or gives up on (wrk's errors)
	check_gt "cli: wrk errors + TCPSynRetrans + RetransSegs" \
		$((WRK_ERR + $(d c_mib_TcpExtTCPSynRetrans) + $(d c_mib_TcpRetransSegs))) 0
	check_eq "IPVS connections scheduled == cli TcpActiveOpens" \
		"$(d ipvs_vs)" "$(d c_mib_TcpActiveOpens)"
	if have_cli; then
		check_str "srv2 diagnose findings" \
			"$(findings "$TMPDIR_T/reload.diag.json")" accept_queue
		example reload reload "nginx -s reload on srv2 (backlog $B2) under wrk POSTs with Connection: close via IPVS, in srv2's netns" "$srv2"
	fi
	log_test "$name"
}

# ------------------------------------------------ 2) remove a real server

# burst_run NAME FIRST : BURST POSTs from bc (burst.py) while the nginx
# workers of servers FIRST..NSRV are stopped; continued once IPVS
# scheduled them all and the accept queues hold what they can. Sets the
# snapshots, AB, Q[i] (accept queue of server i during the stop).
declare -A Q
burst_scheduled()
{
	[ "$(ipvs_conns $VIP:80)" -ge "$BURST_WANT" ]
}

burst_run()
{
	local name=$1 first=$2 i ab_pid workers=()

	write_burst
	for ((i = first; i <= NSRV; i++)); do
		mapfile -t -O ${#workers[@]} workers < <(nginx_workers $i)
	done
	B=()
	A=()
	Q=()
	SNAP_CLI=$bc
	snap_all B
	have_cli && save_baseline "$srv2" "$name"
	kill -STOP "${workers[@]}" || { check_err 1 "no nginx workers"; return 1; }
	AB=$TMPDIR_T/$name.ab
	bg_start "$AB" timeout 60 ip netns exec "$bc" python3 "$TMPDIR_T/burst.py" \
		$VIP $BURST "$BODY"
	ab_pid=$BG_PID
	BURST_WANT=$((B[ipvs_vs] + BURST))
	busywait 20000 burst_scheduled
	# the handshakes complete in softirq: the queues are full at once
	sleep 0.5
	for ((i = first; i <= NSRV; i++)); do
		Q[$i]=$(acceptq "$(srv_ns $i)")
	done
	kill -CONT "${workers[@]}"
	bg_wait "$ab_pid"
	check_err $? "burst failed: $(tail -n 3 "$AB" "$AB.err")"
	snap_all A
	have_cli && diagnose "$srv2" "$name"
	diag "burst: $(cat "$AB")"
	for ((i = first; i <= NSRV; i++)); do
		diag "srv$i accept queue while stopped: ${Q[$i]}; IPVS conns $(ipvs_conns "$(rip $i):80"); $(srv_line $i)"
	done
	diag "cli: ActiveOpens=$(d c_mib_TcpActiveOpens) TCPSynRetrans=$(d c_mib_TcpExtTCPSynRetrans) | IPVS conns $(d ipvs_vs); /proc/net/ip_vs_stats: $(nsx "$dir" sed -n 3p /proc/net/ip_vs_stats | tr -s ' ')"
	ipvs_dump
}

# burst_checks FIRST : the common checks of a burst over FIRST..NSRV:
# IPVS's per-server Conns (rr: BURST / n each, give or take ab's extra
# connection) are each server's PassiveOpens; a stopped worker's queue
# holds min(Conns, backlog + 1); every SYN beyond it was dropped
# (ListenOverflows, == the row) and retransmitted once by the client
burst_checks()
{
	local first=$1 i sum=0 ns conns bl

	check_eq "burst: POSTs answered 200" "$(json_get "$AB" ok)" $BURST
	check_eq "burst: POSTs failed" "$(json_get "$AB" failed)" 0
	check_eq "IPVS connections scheduled == client TcpActiveOpens" \
		"$(d ipvs_vs)" "$(d c_mib_TcpActiveOpens)"
	check_eq "IPVS connections scheduled" "$(d ipvs_vs)" $BURST
	for ((i = first; i <= NSRV; i++)); do
		ns=$(srv_ns $i)
		conns=$(d "ipvs_$(rip $i)")
		if [ $i = 2 ]; then bl=$B2; else bl=$BB; fi
		check_eq "srv$i IPVS conns (rr: burst / $((NSRV - first + 1)))" \
			"$conns" $((BURST / (NSRV - first + 1)))
		# a child is counted (PassiveOpens) as it is created: the
		# handshake's ACK and the POST right behind it, taken on two
		# CPUs, can both create one for the same request, and the
		# loser is dropped (own_req false): 1 of 288 at full shape
		check_range "srv$i PassiveOpens == its IPVS conns (+ children that lost the ACK/data race)" \
			"$(d s${i}_mib_TcpPassiveOpens)" "$conns" $((conns + conns / 10))
		check_eq "srv$i accept queue while stopped == min(conns, backlog + 1)" \
			"${Q[$i]}" $((conns < bl + 1 ? conns : bl + 1))
		sum=$((sum + $(d s${i}_mib_TcpExtListenOverflows)))
		check_mod_eq "srv$i ListenOverflow == ListenOverflows" \
			"$(d s${i}_tw_ListenOverflow)" \
			"$(d s${i}_mib_TcpExtListenOverflows)"
		check_mod_eq "srv$i listeners row overflows == ListenOverflows" \
			"$(d row_$i)" "$(d s${i}_mib_TcpExtListenOverflows)"
	done
	check_eq "client TCPSynRetrans == servers' ListenOverflows (each dropped SYN retransmitted once)" \
		"$(d c_mib_TcpExtTCPSynRetrans)" $sum
}

burst_reproduced()
{
	[ "$(d s2_mib_TcpExtListenOverflows)" -gt 0 ] && return 0
	echo "no ListenOverflows on srv2"
	return 1
}

remove_reset()
{
	seed_topo && nsx "$dir" ipvsadm -d -t $VIP:80 -r "$(rip 1):80"
}

test_remove_control()
{
	local name="seed_001: control: all $NSRV real servers in, burst of $BURST POSTs with the workers stopped -> $((BURST / NSRV)) each, every queue holds it, ListenOverflows 0"
	local i

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if [ -z "${dir:-}" ] && ! seed_topo; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	burst_run control 1
	burst_checks 1
	for ((i = 1; i <= NSRV; i++)); do
		check_eq "srv$i TcpExt ListenOverflows" \
			"$(d s${i}_mib_TcpExtListenOverflows)" 0
	done
	check_eq "cli TCPSynRetrans" "$(d c_mib_TcpExtTCPSynRetrans)" 0
	have_cli && check_str "srv2 diagnose findings" \
		"$(findings "$TMPDIR_T/control.diag.json")" ""
	log_test "$name"
}

test_remove()
{
	local name="seed_001: ipvsadm -d srv1 -> $((BURST / (NSRV - 1))) each: srv2 (backlog $B2) saturates first, row == ListenOverflows >= $((M - 1)), others 0"
	local i ovf

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	# on the control's topology if there is one
	if [ -n "${dir:-}" ]; then
		nsx "$dir" ipvsadm -d -t $VIP:80 -r "$(rip 1):80"
	else
		remove_reset
	fi || { check_err 1 "setup failed"; log_test "$name"; return; }
	rerun_once burst_reproduced remove_reset burst_run remove 2 ||
		check_err 1 "setup failed"
	check_eq "removed srv1 PassiveOpens" "$(d s1_mib_TcpPassiveOpens)" 0
	burst_checks 2
	ovf=$(d s2_mib_TcpExtListenOverflows)
	check_eq "srv2 accept queue while stopped (full: backlog + 1)" \
		"${Q[2]}" $((B2 + 1))
	check_range "srv2 TcpExt ListenOverflows (>= the SYNs beyond its queue)" \
		"$ovf" $(($(d "ipvs_$(rip 2)") - B2 - 1)) $((BURST * 8))
	for ((i = 3; i <= NSRV; i++)); do
		check_eq "srv$i TcpExt ListenOverflows" \
			"$(d s${i}_mib_TcpExtListenOverflows)" 0
	done
	if have_cli; then
		check_str "srv2 diagnose findings" \
			"$(findings "$TMPDIR_T/remove.diag.json")" accept_queue
		example remove remove "real server srv1 removed (ipvsadm -d), a burst of $BURST POSTs, in srv2's netns (backlog $B2)" "$srv2"
	fi
	log_test "$name"
}

# ------------------------------------------------------ 3) idle timeout

# burst.py VIP N BODY : N non-persistent POSTs (HTTP/1.0, no keep-alive),
# all N connects issued before any request is sent; JSON {ok, failed}
write_burst()
{
	cat >"$TMPDIR_T/burst.py" <<-'EOF'
	import json, selectors, socket, sys, time
	vip, n, body = sys.argv[1], int(sys.argv[2]), sys.argv[3]
	req = ("POST / HTTP/1.0\r\nHost: seed001\r\n"
	       "Content-Type: application/x-www-form-urlencoded\r\n"
	       "Content-Length: %d\r\n\r\n%s" % (len(body), body)).encode()
	sel = selectors.DefaultSelector()
	buf = {}
	for i in range(n):
	    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
	    s.setblocking(False)
	    s.connect_ex((vip, 80))
	    buf[s] = b""
	    sel.register(s, selectors.EVENT_WRITE)
	ok = failed = 0
	end = time.monotonic() + 40
	while buf and time.monotonic() < end:
	    for key, ev in sel.select(1):
	        s = key.fileobj
	        try:
	            if ev & selectors.EVENT_WRITE:
	                s.sendall(req)
	                sel.modify(s, selectors.EVENT_READ)
	                continue
	            d = s.recv(4096)
	        except OSError:
	            d, buf[s] = b"", b"x"
	        if d:
	            buf[s] += d
	            continue
	        if buf[s].startswith(b"HTTP/1.1 200"):
	            ok += 1
	        else:
	            failed += 1
	        sel.unregister(s)
	        s.close()
	        del buf[s]
	print(json.dumps({"ok": ok, "failed": failed + len(buf)}, separators=(",", ":")))
	EOF
}

write_client()
{
	cat >"$TMPDIR_T/idle.py" <<-'EOF'
	import errno, json, socket, sys, time
	vip, idle_s, body = sys.argv[1], float(sys.argv[2]), sys.argv[3]
	req = ("POST / HTTP/1.1\r\nHost: seed001\r\n"
	       "Content-Type: application/x-www-form-urlencoded\r\n"
	       "Content-Length: %d\r\n\r\n%s" % (len(body), body)).encode()
	s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
	if len(sys.argv) > 4 and sys.argv[4] == "so":
	    # the host's keepalive sysctls decide
	    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
	elif len(sys.argv) > 4:
	    ki, kv, kc = (int(x) for x in sys.argv[4].split(","))
	    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
	    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, ki)
	    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, kv)
	    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, kc)
	res = {}
	def post(key):
	    try:
	        s.sendall(req)
	        d = s.recv(4096)
	        res[key] = d.split(b" ")[1].decode() if d else "EOF"
	    except OSError as e:
	        res[key] = errno.errorcode.get(e.errno, "timeout")
	s.settimeout(30)
	s.connect((vip, 80))
	post("first")
	time.sleep(idle_s)
	t0 = time.monotonic()
	post("second")
	res["second_ms"] = int((time.monotonic() - t0) * 1000)
	print(json.dumps(res))
	EOF
}

json_str()
{
	sed -n "s/.*\"$2\": \"\\([^\"]*\\)\".*/\\1/p" "$1"
}

# srv_estab : ESTABLISHED connections on :80 from ic over all real
# servers (LVS-NAT keeps the client's address)
srv_estab()
{
	local i n=0

	for ((i = 1; i <= NSRV; i++)); do
		n=$((n + $(nsx "$(srv_ns $i)" ss -Htn state established "( sport = :80 and dst 198.18.3.1 )" | wc -l)))
	done
	echo $n
}

srv_estab_settled()
{
	[ "$(srv_estab)" -le 1 ]
}

test_idle()
{
	local name="seed_001: IPVS TCP timeout ${IDLE_TMO}s, POST after ${IDLE_S}s idle -> director's RST, RstReceived 1, nat_idle_reset; TCP_KEEPIDLE ${KA%%,*}s control: 0"
	local c_pid k_pid

	test_begin "$name"
	if { [ -z "${dir:-}" ] && ! seed_topo; } ||
	   ! nsx "$dir" ipvsadm --set $IDLE_TMO 0 0; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	diag "ipvsadm -L --timeout: $(nsx "$dir" ipvsadm -L --timeout)"
	write_client
	SNAP_CLI=$ic
	B=()
	A=()
	ns_snapshot "$ka" B k_
	snap_all B
	if have_cli; then
		save_baseline "$ic" idle
		save_baseline "$ka" keepalive
	fi
	bg_start "$TMPDIR_T/idle.json" timeout $((IDLE_S + 60)) \
		ip netns exec "$ic" python3 "$TMPDIR_T/idle.py" $VIP $IDLE_S "$BODY"
	c_pid=$BG_PID
	bg_start "$TMPDIR_T/ka.json" timeout $((IDLE_S + 60)) \
		ip netns exec "$ka" python3 "$TMPDIR_T/idle.py" $VIP $IDLE_S "$BODY" $KA
	k_pid=$BG_PID
	bg_wait $c_pid
	check_err $? "idle client failed: $(cat "$TMPDIR_T/idle.json.err")"
	bg_wait $k_pid
	check_err $? "keepalive client failed: $(cat "$TMPDIR_T/ka.json.err")"
	diag "ipvsadm -Lnc: $(nsx "$dir" ipvsadm -Lnc | tail -n +3 | tr -s ' ' | tr '\n' ';')"
	# the control's connection closes (the client's FIN, nginx's)
	busywait 5000 srv_estab_settled
	ns_snapshot "$ka" A k_
	snap_all A
	if have_cli; then
		diagnose "$ic" idle
		diagnose "$ka" keepalive
	fi
	diag "idle client: $(cat "$TMPDIR_T/idle.json"); keepalive client: $(cat "$TMPDIR_T/ka.json")"
	diag "ic: RstReceived=$(d c_tw_RstReceived) EstabResets=$(d c_mib_TcpEstabResets) idle RSTs=$(idle_rsts "$ic") | ka: RstReceived=$(d k_tw_RstReceived) EstabResets=$(d k_mib_TcpEstabResets) | dir: OutRsts=$(d d_mib_TcpOutRsts) | IPVS conns $(d ipvs_vs)"
	nsx "$ic" awk 'NR == 1 || $1 == "rst_received_idle"' "$TCPTW_PROC/hist" 2>/dev/null |
		sed 's/^/#   ic hist: /'
	check_str "idle client: first POST" "$(json_str "$TMPDIR_T/idle.json" first)" 200
	check_str "idle client: POST after ${IDLE_S}s" \
		"$(json_str "$TMPDIR_T/idle.json" second)" ECONNRESET
	check_eq "dir TcpOutRsts (the VIP has no socket once IPVS forgot)" \
		"$(d d_mib_TcpOutRsts)" 1
	check_eq "ic TcpEstabResets" "$(d c_mib_TcpEstabResets)" 1
	check_mod_eq "ic RstReceived" "$(d c_tw_RstReceived)" 1
	check_mod_eq "ic rst_received_idle >= 4096 ms" "$(idle_rsts "$ic")" 1
	check_eq "real servers' new ESTABLISHED on :80 (the forgotten one, never reset)" \
		"$(srv_estab)" 1
	check_eq "IPVS connections scheduled (the RST'd POST made none)" \
		"$(d ipvs_vs)" 2
	check_str "keepalive client: first POST" "$(json_str "$TMPDIR_T/ka.json" first)" 200
	check_str "keepalive client: POST after ${IDLE_S}s" \
		"$(json_str "$TMPDIR_T/ka.json" second)" 200
	check_eq "ka TcpEstabResets" "$(d k_mib_TcpEstabResets)" 0
	check_mod_eq "ka RstReceived" "$(d k_tw_RstReceived)" 0
	check_mod_eq "ka rst_received_idle >= 4096 ms" "$(idle_rsts "$ka")" 0
	if have_cli; then
		check_str "ic diagnose findings" \
			"$(findings "$TMPDIR_T/idle.diag.json")" nat_idle_reset
		check_str "ka diagnose findings" \
			"$(findings "$TMPDIR_T/keepalive.diag.json")" ""
		example idle idle "a keep-alive connection idle ${IDLE_S}s past IPVS's ${IDLE_TMO}s TCP timeout, in the client's netns" "$ic"
		idle_remedy
	fi
	log_test "$name"
}

# idle_remedy : nat_idle_reset's commands applied in ic as printed; ic's
# client again, with SO_KEEPALIVE and the host's settings
idle_remedy()
{
	local out=$TMPDIR_T/idle.after.json

	remedy_apply "$ic" "$TMPDIR_T/idle.diag.json" nat_idle_reset || return
	check_str "nat_idle_reset: also the application's (SO_KEEPALIVE)" \
		"$APP" true
	check_eq "nat_idle_reset: commands applied" "$APPLIED" 2
	diag "ic: tcp_keepalive_time=$(nsx "$ic" sysctl -n net.ipv4.tcp_keepalive_time) tcp_keepalive_intvl=$(nsx "$ic" sysctl -n net.ipv4.tcp_keepalive_intvl)"
	B=()
	A=()
	snap_all B
	timeout $((IDLE_S + 60)) ip netns exec "$ic" python3 \
		"$TMPDIR_T/idle.py" $VIP $IDLE_S "$BODY" so >"$out" 2>"$out.err"
	check_err $? "idle client (remedy) failed: $(cat "$out.err")"
	snap_all A
	diag "idle client after the remedy: $(cat "$out")"
	check_str "after the remedy: POST after ${IDLE_S}s" \
		"$(json_str "$out" second)" 200
	check_gt "after the remedy: ic TCPKeepAlive (probes sent)" \
		"$(d c_mib_TcpExtTCPKeepAlive)" 0
	check_eq "after the remedy: ic TcpEstabResets" \
		"$(d c_mib_TcpEstabResets)" 0
	check_eq "after the remedy: dir TcpOutRsts" "$(d d_mib_TcpOutRsts)" 0
	check_mod_eq "after the remedy: ic RstReceived" \
		"$(d c_tw_RstReceived)" 0
}

TESTS=${TCPTW_SEED001_TESTS:-"reload remove_control remove idle"}
diag "seed 001: $NSRV real servers, full=$FULL, burst $BURST (backlogs srv2 $B2, others $BB), IPVS TCP timeout $IDLE_TMO s"
read -ra TESTS <<<"$TESTS"
tests_run "${TESTS[@]/#/test_}"
