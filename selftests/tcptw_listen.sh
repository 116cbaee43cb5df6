#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Accept-queue overflow and SYN-queue full on a listener:
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:8080
#   30 non-blocking connects         net.core.somaxconn=10, listen(100)
#   10 ms apart, 5 s window          never accept()s (tcptw_traffic --no-accept)
#
# Accept queue (tcp_syncookies 0, 1, 2): 11 connects (backlog + 1; see
# ACCEPTED_MAX) complete, the other SYNs are dropped in silence and
# retransmitted.
# Asserted: TcpExt ListenOverflows delta == ListenDrops delta > 0 ==
# (connects that never completed) + cli TCPSynRetrans delta;
# ListenOverflowSyn == the SYNs srv left unanswered on the wire (srv's eth0
# traced), ListenOverflowAck == the rest of ListenOverflows,
# ListenOverflowSyn + ListenOverflowAck == ListenOverflow; the listeners row
# of 198.18.0.2:8080 carries it (its overflow_syn the same SYNs); the
# same over fd00::2 (tcp_syncookies=1); in mode 2 ListenSynCookieSent ==
# SyncookiesSent. Control: a server that accepts, somaxconn 128 (room for the whole
# burst), same load -> 0.
#
# Cookie ACK: tcp_syncookies 2, cli holds back the ACKs of all N handshakes
# (nft), then sends one byte on each: 11 cookie ACKs create children, the
# rest overflow at the ACK (cookie_v4_check, not tcp_check_req). Asserted:
# ListenOverflowAck == ListenOverflow == ListenOverflows == the 19 bytes
# never acknowledged + cli RetransSegs.
#
# SYN queue: cli drops every incoming SYN-ACK (nft), so the requests stay
# in SYN-RECV and fill the SYN queue (10). Cookies off: ListenSynDrop ==
# TCPReqQFullDrop delta > 0; cookies on: ListenSynCookieSent ==
# SyncookiesSent delta > 0 and ListenSynDrop == 0.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat nft
require_traffic
require_module
# every failure is asserted to leave its event
events_every
require_sock_py

N=30
SRV=198.18.0.2
PORT=8080

# listen_pair : pair_setup with srv's somaxconn at 10
listen_pair()
{
	pair_setup && nsx "$srv" sysctl -qw net.core.somaxconn=10
}

# run_burst NAME WINDOW_S SERVER_KIND : one burst of N connects against a
# fresh srv; fills B (before) and A (after) snapshots of cli and srv, ROW
# (the listeners row) and OUT (the burst's JSON).
# mono_start NS : read NS's counters file over and over (bash builtins, no
# exec per read: hundreds of reads a second even under TCG) into
# $TMPDIR_T/mono until mono_stop; bounded to 60 s
mono_start()
{
	rm -f "$TMPDIR_T/mono.stop"
	bg_start "$TMPDIR_T/mono" ip netns exec "$1" bash -c '
		end=$((SECONDS + 60))
		while [ ! -e "$1" ] && [ $SECONDS -lt $end ]; do
			read -r -d "" c <"$2"
			printf "%s\n--\n" "$c"
		done' _ "$TMPDIR_T/mono.stop" "$TCPTW_PROC/counters"
	MONO_PID=$BG_PID
}

# mono_stop : end the reads; MONO_READS (reads), MONO_BACK (reads in which
# a counter showed less than in the read before), MONO_MOVES (reads in
# which ListenOverflow had moved since the one before)
mono_stop()
{
	touch "$TMPDIR_T/mono.stop"
	bg_wait "$MONO_PID"
	read -r MONO_READS MONO_BACK MONO_MOVES < <(awk '
		/^--$/ { reads++; b = 0
			 for (k in cur) {
				if ((k in prev) && cur[k] < prev[k]) {
					b = 1
					if (shown++ < 5)
						print k, prev[k], "->", cur[k] > "/dev/stderr"
				}
				prev[k] = cur[k]
			 }
			 back += b
			 if (reads > 1 && cur["ListenOverflow"] != last) moves++
			 last = cur["ListenOverflow"]
			 delete cur; next }
		NF == 2 && $2 ~ /^[0-9]+$/ { cur[$1] = $2 }
		END { print reads + 0, back + 0, moves + 0 }' "$TMPDIR_T/mono" \
		2>"$TMPDIR_T/mono.back")
	[ -s "$TMPDIR_T/mono.back" ] &&
		diag "counters that went backwards: $(tr '\n' ';' <"$TMPDIR_T/mono.back")"
}

run_burst()
{
	local name=$1 window=$2 kind=$3

	OUT=$TMPDIR_T/$name.burst.json
	if [ "$kind" = accept ]; then
		bg_start "$TMPDIR_T/$name.srv" ip netns exec "$srv" "$PY" "$SOCK" \
			echo-server $SRV $PORT 30
		SERVER_PID=$BG_PID
		busywait 30000 grep -q listening "$TMPDIR_T/$name.srv.err" ||
			{ check_err 1 "echo server did not start"; return 1; }
	else
		server_start "$srv" "$TMPDIR_T/$name.srv" --listen "$(ep)" \
			--no-accept --backlog 100 --timeout 60 ||
			{ check_err 1 "server did not start"; return 1; }
	fi
	B=()
	A=()
	wire_start "$name" "$srv" eth0
	ns_snapshot "$srv" B s_
	ns_snapshot "$cli" B c_
	[ "${MONO:-0}" = 1 ] && mono_start "$srv"
	timeout 60 ip netns exec "$cli" "$PY" "$SOCK" burst $SRV $PORT $N 10 \
		"$window" >"$OUT"
	check_err $? "burst client failed"
	# Closed SYN-SENT sockets send nothing; let the last segments land.
	sleep 0.5
	[ "${MONO:-0}" = 1 ] && mono_stop
	ns_snapshot "$srv" A s_
	ns_snapshot "$cli" A c_
	wire_stop
	ROW=$(listener_row "$srv" $SRV $PORT)
	diag "burst: $(cat "$OUT")"
	diag "srv listeners row: ${ROW:--}"
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
}

# A listener takes handshakes' ACKs without its lock: the full-queue test
# and the queue add are not one step, so an ACK on each other CPU can pass
# the test beside the 11th (CI saw 12 children on 2 vCPUs). The sums that
# tie the overflows to the clients stay exact.
ACCEPTED_MAX=$((10 + $(nproc)))

# ep : SRV:PORT as sockets and events write it ([fd00::2]:8080)
ep()
{
	case $SRV in
	*:*) echo "[$SRV]:$PORT" ;;
	*) echo "$SRV:$PORT" ;;
	esac
}

# test_accept_overflow COOKIES [ADDR] : against srv's ADDR (default SRV)
test_accept_overflow()
{
	local cookies=$1 SRV=${2:-$SRV} name ok ovf drops retr mod syn ack row_sum
	local MONO MONO_READS MONO_BACK MONO_MOVES MONO_PID

	name="listen: accept queue overflow, tcp_syncookies=$cookies"
	[ "$SRV" = 198.18.0.2 ] || name="$name, $SRV"
	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies="$cookies"
	# without cookies, srv's counters are also read over and over
	# during the burst: no read may show a counter lower than the one
	# before (a combined counter, MIB less slots, taken at two moments
	# could: Prometheus' rate() would take that for a reset)
	MONO=0
	[ "$cookies" = 0 ] && [ "$HAVE_MODULE" = 1 ] && [ "$SRV" = 198.18.0.2 ] &&
		MONO=1
	run_burst "ovf$cookies" 5 noaccept
	if [ "$MONO" = 1 ]; then
		check_gt "srv counters reads during the burst" "$MONO_READS" 10
		# reads that overlapped the overflows: else this proves nothing
		check_gt "of them, reads with ListenOverflow moved" "$MONO_MOVES" 0
		check_eq "reads with a counter lower than in the read before" \
			"$MONO_BACK" 0
	fi
	ok=$(json_get "$OUT" ok)
	ovf=$(d s_mib_TcpExtListenOverflows)
	drops=$(d s_mib_TcpExtListenDrops)
	retr=$(d c_mib_TcpExtTCPSynRetrans)
	mod=$(d s_tw_ListenOverflow)
	syn=$(d s_tw_ListenOverflowSyn)
	ack=$(d s_tw_ListenOverflowAck)
	diag "srv ListenOverflows=$ovf ListenDrops=$drops SyncookiesSent=$(d s_mib_TcpExtSyncookiesSent) cli TCPSynRetrans=$retr | ListenOverflow=$mod (syn $syn ack $ack) ListenSynCookieSent=$(d s_tw_ListenSynCookieSent)"
	check_range "connects completed == backlog + 1 (+ other CPUs)" "$ok" 11 \
		"$ACCEPTED_MAX"
	check_gt "srv TcpExt ListenOverflows" "$ovf" 0
	check_eq "srv ListenDrops == ListenOverflows" "$drops" "$ovf"
	check_eq "ListenOverflows == never connected + cli TCPSynRetrans" \
		"$ovf" $(( N - ok + retr ))
	check_mod_eq "srv ListenOverflowSyn + ListenOverflowAck == ListenOverflow" \
		$(( syn + ack )) "$mod"
	# the wire (srv's eth0): a SYN dropped at the full queue gets no
	# answer; the rest of the kernel's overflows are ACKs
	check_wire_eq "srv ListenOverflowSyn + ListenSynDrop" \
		$(( syn + $(d s_tw_ListenSynDrop) )) .totals.syn_unanswered
	if [ -n "$WIRE_JSON" ]; then
		check_mod_eq "srv ListenOverflowAck == ListenOverflows - SYNs unanswered (wire)" \
			"$ack" $(( ovf - $(wire_get .totals.syn_unanswered) ))
	fi
	wire_dump
	if [ "$HAVE_MODULE" = 1 ]; then
		check_wire_eq "listeners row $SRV $PORT overflow_syn" \
			"$(echo "$ROW" | awk 'NF { print $5 }')" \
			".listeners[\"$SRV $PORT\"].syn_unanswered"
		row_sum=$(echo "$ROW" | awk 'NF { print $5 + $6 }')
		check_eq "listeners row $SRV $PORT overflow_syn + overflow_ack" \
			"$row_sum" "$mod"
		check_eq "listeners row max_backlog" \
			"$(echo "$ROW" | awk '{ print $4 }')" 10
		check_eq "srv events listen_overflow" \
			"$(events_count "$srv" listen_overflow "dst=$(ep)")" "$mod"
		check_eq "srv ListenSynDrop" "$(d s_tw_ListenSynDrop)" 0
	fi
	if [ "$cookies" = 2 ]; then
		check_gt "srv TcpExt SyncookiesSent" \
			"$(d s_mib_TcpExtSyncookiesSent)" 0
		check_mod_eq "srv ListenSynCookieSent == SyncookiesSent" \
			"$(d s_tw_ListenSynCookieSent)" "$(d s_mib_TcpExtSyncookiesSent)"
	fi
	cleanup_all_ns
	log_test "$name"
}

test_accept_control()
{
	local name="listen: control: a server that accepts, its queue room for the whole burst -> ListenOverflow 0"

	test_begin "$name"
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	# room for all N: however slowly a starved guest accepts, nothing
	# can overflow, so any count would be tcptw's own invention
	nsx "$srv" sysctl -qw net.core.somaxconn=128
	run_burst ctl 3 accept
	diag "srv ListenOverflows=$(d s_mib_TcpExtListenOverflows) | ListenOverflow=$(d s_tw_ListenOverflow)"
	check_eq "connects completed" "$(json_get "$OUT" ok)" $N
	check_eq "srv TcpExt ListenOverflows" "$(d s_mib_TcpExtListenOverflows)" 0
	check_mod_eq "srv ListenOverflow" "$(d s_tw_ListenOverflow)" 0
	check_mod_eq "srv ListenSynDrop" "$(d s_tw_ListenSynDrop)" 0
	check_mod_eq "srv ListenSynCookieSent" "$(d s_tw_ListenSynCookieSent)" 0
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "listeners rows for $SRV $PORT" \
			"$(printf '%s' "$ROW" | grep -c .)" 0
	fi
	cleanup_all_ns
	log_test "$name"
}

test_syn_queue()
{
	local cookies=$1 name
	local qdrop sent mdrop mcookie

	if [ "$cookies" = 0 ]; then
		name="listen: SYN queue full, cookies off -> ListenSynDrop == TCPReqQFullDrop"
	else
		name="listen: SYN queue full, cookies on -> ListenSynCookieSent == SyncookiesSent"
	fi
	test_begin "$name"
	if ! probe_gate tcp_conn_request; then
		log_test "$name"
		return
	fi
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies="$cookies"
	# The handshake never completes: requests pile up in SYN-RECV.
	ip netns exec "$cli" nft -f - <<-EOF
	table inet synq {
		chain inbound {
			type filter hook input priority 0; policy accept;
			tcp flags & (syn | ack) == (syn | ack) drop
		}
	}
	EOF
	check_err $? "nft ruleset"
	run_burst "synq$cookies" 3 noaccept
	qdrop=$(d s_mib_TcpExtTCPReqQFullDrop)
	sent=$(d s_mib_TcpExtSyncookiesSent)
	mdrop=$(d s_tw_ListenSynDrop)
	mcookie=$(d s_tw_ListenSynCookieSent)
	diag "srv TCPReqQFullDrop=$qdrop SyncookiesSent=$sent ListenDrops=$(d s_mib_TcpExtListenDrops) ListenOverflows=$(d s_mib_TcpExtListenOverflows) | ListenSynDrop=$mdrop ListenSynCookieSent=$mcookie ListenOverflow=$(d s_tw_ListenOverflow)"
	check_eq "connects completed" "$(json_get "$OUT" ok)" 0
	check_eq "srv TcpExt ListenOverflows" "$(d s_mib_TcpExtListenOverflows)" 0
	check_mod_eq "srv ListenOverflow" "$(d s_tw_ListenOverflow)" 0
	if [ "$cookies" = 0 ]; then
		check_gt "srv TcpExt TCPReqQFullDrop" "$qdrop" 0
		check_eq "srv ListenDrops == TCPReqQFullDrop" \
			"$(d s_mib_TcpExtListenDrops)" "$qdrop"
		check_mod_eq "srv ListenSynDrop == TCPReqQFullDrop" "$mdrop" "$qdrop"
		# the wire: a SYN the full SYN queue drops gets no answer (a
		# queued request's SYN-ACKs, dropped at cli, are retransmitted)
		check_wire_eq "srv ListenSynDrop" "$mdrop" .totals.syn_unanswered
		check_mod_eq "srv ListenSynCookieSent" "$mcookie" 0
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "listeners row syn_drop" \
				"$(echo "$ROW" | awk '{ print $7 }')" "$mdrop"
			check_eq "srv events listen_syn_drop" \
				"$(events_count "$srv" listen_syn_drop "dst=$SRV:$PORT")" "$mdrop"
		fi
	else
		check_gt "srv TcpExt SyncookiesSent" "$sent" 0
		check_eq "srv TcpExt TCPReqQFullDrop" "$qdrop" 0
		check_mod_eq "srv ListenSynCookieSent == SyncookiesSent" "$mcookie" "$sent"
		check_mod_eq "srv ListenSynDrop" "$mdrop" 0
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "listeners row cookie_sent" \
				"$(echo "$ROW" | awk '{ print $8 }')" "$mcookie"
			check_eq "srv events listen_syn_cookie" \
				"$(events_count "$srv" listen_syn_cookie "dst=$SRV:$PORT")" "$mcookie"
		fi
	fi
	cleanup_all_ns
	log_test "$name"
}

test_cookie_ack_overflow()
{
	local name="listen: accept queue full at the SYN-cookie ACK -> ListenOverflowAck == ListenOverflows"
	local out ovf retr acked mod

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	# Cookies for every SYN: the server keeps no request, the accept
	# queue is empty while all N handshakes complete on the client. The
	# client holds back its ACKs, then sends one byte on each: the first
	# 11 cookie ACKs create children, the rest find the queue full.
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies=2
	ip netns exec "$cli" nft -f - <<-EOF
	table inet holdack {
		chain outbound {
			type filter hook output priority 0; policy accept;
			tcp dport $PORT tcp flags & (syn | rst) == 0 drop
		}
	}
	EOF
	check_err $? "nft ruleset"
	server_start "$srv" "$TMPDIR_T/cookieack.srv" --listen $SRV:$PORT \
		--no-accept --backlog 100 --timeout 60 ||
		{ check_err 1 "server did not start"; log_test "$name"; return; }
	out=$TMPDIR_T/cookieack.json
	B=()
	A=()
	ns_snapshot "$srv" B s_
	ns_snapshot "$cli" B c_
	timeout 60 ip netns exec "$cli" "$PY" "$SOCK" burst-send $SRV $PORT $N \
		10 3 nft delete table inet holdack >"$out"
	check_err $? "burst-send client failed"
	sleep 0.5
	ns_snapshot "$srv" A s_
	ns_snapshot "$cli" A c_
	ROW=$(listener_row "$srv" $SRV $PORT)
	acked=$(json_get "$out" acked)
	ovf=$(d s_mib_TcpExtListenOverflows)
	retr=$(d c_mib_TcpRetransSegs)
	mod=$(d s_tw_ListenOverflow)
	diag "client: $(cat "$out")"
	diag "srv listeners row: ${ROW:--}"
	diag "srv ListenOverflows=$ovf ListenDrops=$(d s_mib_TcpExtListenDrops) SyncookiesSent=$(d s_mib_TcpExtSyncookiesSent) SyncookiesRecv=$(d s_mib_TcpExtSyncookiesRecv) cli RetransSegs=$retr | ListenOverflow=$mod (syn $(d s_tw_ListenOverflowSyn) ack $(d s_tw_ListenOverflowAck)) ListenSynCookieSent=$(d s_tw_ListenSynCookieSent)"
	check_eq "client handshakes completed" "$(json_get "$out" connected)" $N
	check_range "bytes acknowledged == backlog + 1 (+ other CPUs)" \
		"$acked" 11 "$ACCEPTED_MAX"
	check_eq "srv TcpExt SyncookiesSent" "$(d s_mib_TcpExtSyncookiesSent)" $N
	check_gt "srv TcpExt ListenOverflows" "$ovf" 0
	check_eq "srv ListenDrops == ListenOverflows" \
		"$(d s_mib_TcpExtListenDrops)" "$ovf"
	check_eq "ListenOverflows == unacknowledged bytes + cli RetransSegs" \
		"$ovf" $(( N - acked + retr ))
	check_mod_eq "srv ListenOverflow == ListenOverflows" "$mod" "$ovf"
	check_mod_eq "srv ListenOverflowAck == ListenOverflows" \
		"$(d s_tw_ListenOverflowAck)" "$ovf"
	check_mod_eq "srv ListenSynCookieSent == SyncookiesSent" \
		"$(d s_tw_ListenSynCookieSent)" "$(d s_mib_TcpExtSyncookiesSent)"
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "listeners row $SRV $PORT overflow_ack" \
			"$(echo "$ROW" | awk '{ print $6 }')" "$mod"
	fi
	cleanup_all_ns
	log_test "$name"
}

# Listener rows are the listening socket's: a wildcard listener reached on
# 12 local addresses is one row (it was one per destination address), and
# an SO_REUSEPORT group is one row whose queue gauges are the group's sums.
WILD_PORT=8090
RP_PORT=8091

# check_one_row ADDR PORT MIN : after a burst (snapshots B/A of srv), the
# listeners have one row for PORT, ADDR's, and it carries every overflow:
# ListenOverflow == ListenOverflows > MIN == the row's two overflow
# columns. The row goes to LROW for further checks.
check_one_row()
{
	local addr=$1 port=$2 min=$3 ovf mod rows

	ovf=$(d s_mib_TcpExtListenOverflows)
	mod=$(d s_tw_ListenOverflow)
	rows=$(nsx "$srv" cat "$TCPTW_PROC/listeners" |
		awk -v p="$port" '$2 == p' | grep -c .)
	LROW=$(listener_row "$srv" "$addr" "$port")
	diag "srv ListenOverflows=$ovf ListenOverflow=$mod row: ${LROW:--}"
	check_gt "srv TcpExt ListenOverflows" "$ovf" "$min"
	check_eq "srv ListenOverflow == ListenOverflows" "$mod" "$ovf"
	check_eq "listeners rows for port $port" "$rows" 1
	check_eq "row $addr $port overflow_syn + overflow_ack" \
		"$(echo "$LROW" | awk 'NF { print $5 + $6 }')" "$mod"
}

test_wildcard_row()
{
	local name="listen: one row for a 0.0.0.0 listener reached on 12 addresses"
	local i addrs=()

	test_begin "$name"
	if [ "$HAVE_MODULE" != 1 ]; then
		skip_test "tcptw not loaded"
		log_test "$name"
		return
	fi
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	for i in $(seq 10 21); do
		addrs+=("198.18.0.$i")
		nsx "$srv" ip addr add "198.18.0.$i/24" dev eth0
	done
	server_start "$srv" "$TMPDIR_T/wild.srv" --listen 0.0.0.0:$WILD_PORT \
		--no-accept --backlog 1 --timeout 60 ||
		{ check_err 1 "server did not start"; log_test "$name"; return; }
	B=()
	A=()
	ns_snapshot "$srv" B s_
	timeout 120 ip netns exec "$cli" "$PY" "$SOCK" burst \
		"$(IFS=,; echo "${addrs[*]}")" $WILD_PORT 3 1 1 >/dev/null
	sleep 0.5
	ns_snapshot "$srv" A s_
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	check_one_row 0.0.0.0 $WILD_PORT 10
	check_eq "row max_backlog" "$(echo "$LROW" | awk '{ print $4 }')" 1
	cleanup_all_ns
	log_test "$name"
}

# two SO_REUSEPORT sockets on one address and port, listen(1) each, never
# accepting, for $1 seconds
REUSEPORT_PY='import socket, sys, time
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((sys.argv[1], int(sys.argv[2])))
    s.listen(1)
    socks.append(s)
print("listening", flush=True)
time.sleep(float(sys.argv[3]))'

test_reuseport_row()
{
	local name="listen: an SO_REUSEPORT group is one row with the group's queues"
	local out=$TMPDIR_T/rp q

	test_begin "$name"
	if [ "$HAVE_MODULE" != 1 ]; then
		skip_test "tcptw not loaded"
		log_test "$name"
		return
	fi
	if ! listen_pair; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	bg_start "$out.srv" ip netns exec "$srv" "$PY" -c "$REUSEPORT_PY" \
		$SRV $RP_PORT 30
	SERVER_PID=$BG_PID
	busywait 30000 grep -q listening "$out.srv" ||
		{ check_err 1 "reuseport listeners did not start"; log_test "$name"; return; }
	B=()
	A=()
	ns_snapshot "$srv" B s_
	# 16 connects: each socket's queue (2) fills but with odds of 2^-11
	timeout 30 ip netns exec "$cli" "$PY" "$SOCK" burst $SRV $RP_PORT 16 5 3 \
		>"$out.burst"
	sleep 0.5
	ns_snapshot "$srv" A s_
	# Recv-Q and Send-Q of a listener: its queue and backlog, summed
	q=$(nsx "$srv" ss -Hltn "sport = :$RP_PORT" |
		awk '{ n++; r += $2; s += $3 } END { print n + 0, r + 0, s + 0 }')
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	diag "burst: $(cat "$out.burst"); ss: sockets, queued, backlogs: $q"
	check_eq "listening sockets in the group" "${q%% *}" 2
	check_one_row $SRV $RP_PORT 0
	check_eq "row backlog == the group's queued connections" \
		"$(echo "$LROW" | awk '{ print $3 }')" "$(echo "$q" | awk '{ print $2 }')"
	check_eq "row max_backlog == the group's backlogs" \
		"$(echo "$LROW" | awk '{ print $4 }')" "$(echo "$q" | awk '{ print $3 }')"
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	"test_accept_overflow 0" \
	"test_accept_overflow 1" \
	"test_accept_overflow 2" \
	"test_accept_overflow 1 fd00::2" \
	test_accept_control \
	"test_syn_queue 0" \
	"test_syn_queue 1" \
	test_cookie_ack_overflow \
	test_wildcard_row \
	test_reuseport_row
