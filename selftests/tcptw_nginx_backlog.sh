#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# A real nginx whose accept queue overflows (seed 004):
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:80
#   wrk -t2 -c200 -d5s               nginx, worker_processes 1,
#                                    listen 198.18.0.2:80 backlog=N
#
# wrk opens its 200 connections in one burst. A busy worker, made exact:
# nginx's single worker is stopped (SIGSTOP) from before wrk starts until
# the listener's accept queue has overflowed or holds all 200 (at most
# 10 s), then continued. Left to the guest's timing, a quick worker
# drained a backlog of 10 in CI's run (0 overflows). Asserted, backlog=10:
# ListenOverflow > 0, == TcpExt ListenOverflows delta (== ListenDrops),
# ListenSynCookieSent == SyncookiesSent, and the listeners row names
# 198.18.0.2 port 80 with max_backlog 10 and the same overflow total;
# the wire (srv's eth0): ListenOverflowSyn + ListenSynDrop == the SYNs srv
# left unanswered. Control, backlog=4096 at the same load: all 0 and no
# listeners row, no SYN unanswered.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat nginx wrk ss
require_module

SRV=198.18.0.2

# nginx_conf DIR BACKLOG : a config that keeps everything under DIR.
nginx_conf()
{
	local dir=$1 backlog=$2

	nginx_conf_write "$dir" on 1024 error <<-EOF
	server {
		listen $SRV:80 backlog=$backlog;
		location / {
			return 200 "ok\n";
		}
	}
	EOF
}

nginx_listening()
{
	[ -n "$(nsx "$srv" ss -Hltn "sport = :80")" ]
}

# accept_queue : the connections in srv's port 80 accept queue
accept_queue()
{
	nsx "$srv" ss -Hltn "sport = :80" | awk '{ print $2 }'
}

# queue_filled : srv's port 80 overflowed since the B snapshot, or its
# accept queue holds every one of wrk's 200 connections
queue_filled()
{
	[ "$(mib "$srv" TcpExtListenOverflows)" -gt "${B[s_mib_TcpExtListenOverflows]:-0}" ] ||
		[ "$(accept_queue)" -ge 200 ]
}

# run_wrk BACKLOG : nginx with BACKLOG in a fresh srv, wrk from cli; sets
# the snapshots, ROW and WRK (wrk's output file).
run_wrk()
{
	local backlog=$1 dir=$TMPDIR_T/nginx$1 wrk_pid workers=()

	nginx_conf "$dir" "$backlog"
	bg_start "$dir/stdout" ip netns exec "$srv" nginx -p "$dir" \
		-e "$dir/error.log" -c "$dir/nginx.conf"
	NGINX_PID=$BG_PID
	if ! busywait 15000 nginx_listening; then
		check_err 1 "nginx did not start: $(tail -n 3 "$dir/error.log" "$dir/stdout.err" 2>/dev/null)"
		return 1
	fi
	diag "srv listen: $(nsx "$srv" ss -Hltn "sport = :80" | awk '{ print $1, "Recv-Q", $2, "Send-Q", $3, $4 }')"
	B=()
	A=()
	ns_snapshot "$srv" B s_
	WRK=$TMPDIR_T/wrk$backlog.txt
	mapfile -t workers < <(pgrep -P "$NGINX_PID")
	if [ ${#workers[@]} -eq 0 ] || ! kill -STOP "${workers[@]}"; then
		check_err 1 "no nginx worker to stop (master $NGINX_PID)"
		return 1
	fi
	# the wire: srv's eth0, handshakes only (SYN, RST or FIN: a SYN
	# left unanswered is one the full queue dropped)
	wire_start "wrk$backlog" "$srv" eth0 \
		'tcp port 80 and tcp[tcpflags] & (tcp-syn|tcp-rst|tcp-fin) != 0'
	bg_start "$WRK" timeout 60 ip netns exec "$cli" wrk -t2 -c200 -d5s \
		--timeout 2s "http://$SRV/"
	wrk_pid=$BG_PID
	busywait 10000 queue_filled ||
		diag "backlog $backlog: neither an overflow nor 200 queued in 10 s"
	diag "backlog $backlog: accept queue with the worker stopped: $(accept_queue)"
	kill -CONT "${workers[@]}"
	bg_wait "$wrk_pid"
	check_err $? "wrk failed: $(tail -n 3 "$WRK" "$WRK.err")"
	# wrk's closed sockets still retransmit (FIN_WAIT1, unanswered data)
	# into the full accept queue, each one more ListenOverflows: cut the
	# client off so that the counters, the MIBs and the listeners row
	# below all stop at the same number.
	ip -n "$cli" link set eth0 down
	sleep 0.5
	ns_snapshot "$srv" A s_
	wire_stop
	ROW=$(listener_row "$srv" $SRV 80)
	kill "$NGINX_PID" 2>/dev/null
	bg_wait "$NGINX_PID"
	diag "wrk: $(grep -E 'requests in|Socket errors|Non-2xx' "$WRK" | tr -s ' ' | tr '\n' ';')"
	diag "srv ListenOverflows=$(d s_mib_TcpExtListenOverflows) ListenDrops=$(d s_mib_TcpExtListenDrops) SyncookiesSent=$(d s_mib_TcpExtSyncookiesSent) | ListenOverflow=$(d s_tw_ListenOverflow) (syn $(d s_tw_ListenOverflowSyn) ack $(d s_tw_ListenOverflowAck)) ListenSynCookieSent=$(d s_tw_ListenSynCookieSent) ListenSynDrop=$(d s_tw_ListenSynDrop)"
	diag "srv listeners row: ${ROW:--}"
}

test_backlog10()
{
	local name="nginx_backlog: backlog=10 under wrk -c200 -> ListenOverflow == ListenOverflows > 0, row for port 80"
	local ovf mod

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if ! pair_setup; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	if run_wrk 10; then
		ovf=$(d s_mib_TcpExtListenOverflows)
		mod=$(d s_tw_ListenOverflow)
		check_gt "srv TcpExt ListenOverflows" "$ovf" 0
		check_eq "srv ListenDrops == ListenOverflows" \
			"$(d s_mib_TcpExtListenDrops)" "$ovf"
		check_mod_eq "srv ListenOverflow == ListenOverflows" "$mod" "$ovf"
		check_mod_eq "srv ListenOverflowSyn + ListenOverflowAck == ListenOverflow" \
			$(( $(d s_tw_ListenOverflowSyn) + $(d s_tw_ListenOverflowAck) )) "$mod"
		check_mod_eq "srv ListenSynCookieSent == SyncookiesSent" \
			"$(d s_tw_ListenSynCookieSent)" "$(d s_mib_TcpExtSyncookiesSent)"
		# the wire: a SYN the full queue dropped got no answer
		check_wire_eq "srv ListenOverflowSyn + ListenSynDrop" \
			$(( $(d s_tw_ListenOverflowSyn) + $(d s_tw_ListenSynDrop) )) \
			.totals.syn_unanswered
		wire_dump
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "listeners row $SRV 80 overflow_syn + overflow_ack == ListenOverflow" \
				"$(echo "$ROW" | awk 'NF { print $5 + $6 }')" "$mod"
			check_eq "listeners row $SRV 80 max_backlog" \
				"$(echo "$ROW" | awk '{ print $4 }')" 10
			check_eq "listeners row $SRV 80 cookie_sent" \
				"$(echo "$ROW" | awk '{ print $8 }')" \
				"$(d s_tw_ListenSynCookieSent)"
		fi
	fi
	cleanup_all_ns
	log_test "$name"
}

test_backlog4096()
{
	local name="nginx_backlog: control: backlog=4096 at the same load -> ListenOverflow 0"

	test_begin "$name"
	if ! pair_setup; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	if run_wrk 4096; then
		check_eq "srv TcpExt ListenOverflows" "$(d s_mib_TcpExtListenOverflows)" 0
		check_mod_eq "srv ListenOverflow" "$(d s_tw_ListenOverflow)" 0
		check_mod_eq "srv ListenSynCookieSent" "$(d s_tw_ListenSynCookieSent)" 0
		check_mod_eq "srv ListenSynDrop" "$(d s_tw_ListenSynDrop)" 0
		check_wire_raw "SYNs srv left unanswered" 0 .totals.syn_unanswered
		if [ "$HAVE_MODULE" = 1 ]; then
			check_eq "listeners rows for $SRV 80" \
				"$(printf '%s' "$ROW" | grep -c .)" 0
		fi
	fi
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	test_backlog10 \
	test_backlog4096
