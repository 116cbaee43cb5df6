#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Seed 004 at its own numbers: the nginx + php-fpm lab, `wrk -c 1000 -t 2`
# against nginx proxying over FastCGI to php-fpm on 127.0.0.1:9000, one
# knob of the lab at a time, each a subtest with its own ground truth.
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:80  nginx, 1 worker,
#   wrk -c 1000 -t 2 -d 3s                |  listen backlog=4096
#                                         v  fastcgi_pass
#                                  127.0.0.1:9000  php-fpm 8.2 (-F, private
#                                  config, index.php sleeps SLEEP_US)
#
# Every run uses fresh namespaces, so srv's counters start at 0; wrk,
# nginx and php-fpm are stopped before the "after" snapshot (cli's link
# goes down first: no retransmit reaches srv after it). `tcptw watch`
# runs in srv during wrk, `tcptw diagnose --baseline` after it, and the
# load (wrk, then the stop) runs under `tcptw run -j -N srv`: each
# subtest also asserts that the report's deltas are its ground truth and
# that its findings name the cause diagnose names.
#  a) php-fpm listen.backlog = 10 under net.core.somaxconn = 10 (set once
#     nginx listens, so that only :9000 is capped: the MIBs are per netns,
#     the listeners rows per port), pm.max_children 2: TcpExt
#     ListenOverflows + SyncookiesSent > 0; ListenOverflow and
#     ListenSynCookieSent == those MIB deltas; the listeners row
#     127.0.0.1 9000 (max_backlog 10) carries them all, and :80 has no
#     row; the kernel's "Possible SYN flooding on port 127.0.0.1:9000"
#     line appears exactly once if TCPReqQFullDoCookies moved (the
#     listener warns once), never otherwise; diagnose names accept_queue.
#  b) srv's ip_local_port_range = 20000 20050 (51 ports for nginx's
#     connects to php-fpm), 8 children: nginx logs "(99: Cannot assign
#     requested address)"; ConnectPortExhausted == those lines == the
#     peers row 127.0.0.1 9000's port_exhausted (counted once nginx has
#     stopped: no connect() in flight). The ports run out while wrk runs
#     because hundreds of requests wait for 8 children, each on a FastCGI
#     connection of its own, not because of TIME_WAIT: php-fpm 8.2 shuts
#     its side down first after FCGI_END_REQUEST (TIME_WAIT on :9000), and
#     nginx closes first only when wrk's clients leave at the end (0 to 51
#     TIME_WAIT sockets on nginx's ports after a run). Hence tcp_tw_reuse=1
#     changes nothing here (TWRecycled 0 -> 0 in every run, errors remain);
#     asserted: TwReuseGranted == TWRecycled, ConnectPortExhausted == the
#     E99 lines. (In the seed's lab TIME_WAIT was on nginx's side and
#     tcp_tw_reuse=1 helped: who closes first decides.)
#     Control, the remedy: fastcgi_keep_conn on, upstream keepalive 16 and
#     max_conns=16 (16 children; fastcgi_ignore_client_abort on, or the
#     clients leaving at the end make nginx close its upstream connections
#     first and fill the 51 ports with TIME_WAIT): no E99 line,
#     ConnectPortExhausted 0, TcpActiveOpens <= 51. The cost is nginx's 502
#     "no live upstreams" for requests beyond 16 in flight, most of them at
#     -c 1000: a limit of nginx's, not TCP's.
#  c) nf_conntrack_max = 200 (guest-wide: writable only in the initial
#     netns; restored on exit) with conntrack on in srv (an nft ct rule;
#     nginx's flows to php-fpm over lo are notrack, so wrk's 1000 take the
#     table): conntrack -S drop > 0, ConntrackTableFull == that delta,
#     the kernel's "nf_conntrack: table full, dropping packet" at least
#     once (rate-limited) and at most once per drop, diagnose names
#     conntrack_full only, with the drop count as its evidence; then
#     `tcptw conntrack`'s TCP entries by state == `conntrack -L`'s, read
#     at the same moment, and diagnose's conntrack_full names the state
#     that holds the table, with that count.
#  d) Control: worker_connections 1024 at -c 1000 (nginx needs one per
#     client and one per request to php-fpm): nginx logs "worker_connections
#     are not enough", a limit of nginx's, not of TCP's: no ListenOverflows,
#     no ConnectPortExhausted, and diagnose names nothing (exit 0, "no
#     evidence of: ...").

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat ss nginx wrk nft conntrack
if ! kernel_is_61; then
	echo "SKIP: seed at full scale runs on 6.1 only: CI time budget (kernel $(uname -r))"
	exit $ksft_skip
fi
require_seeds_at_load 6.1
PHPFPM=/usr/sbin/php-fpm8.2
[ -x $PHPFPM ] || { echo "SKIP: $PHPFPM not installed"; exit $ksft_skip; }
require_module

SRV=198.18.0.2
WRK_CONNS=1000
WRK_SECS=3
SLEEP_US=20000
# wrk's 1000 sockets and nginx's two per request
ulimit -n 65536

have_cli()
{
	[ -x "$TCPTW_CLI" ]
}

listening()
{
	[ -n "$(nsx "$srv" ss -Hltn "sport = :$1")" ]
}

# php_conf DIR BACKLOG CHILDREN : php-fpm's config and index.php in DIR
php_conf()
{
	local dir=$1 backlog=$2 children=$3

	mkdir -p "$dir"
	printf '<?php\nusleep(%d);\necho "ok\\n";\n' $SLEEP_US >"$dir/index.php"
	cat >"$dir/php-fpm.conf" <<-EOF
	[global]
	pid = $dir/php-fpm.pid
	error_log = $dir/php-fpm.log
	daemonize = no
	[www]
	listen = 127.0.0.1:9000
	listen.backlog = $backlog
	pm = dynamic
	pm.max_children = $children
	pm.start_servers = $children
	pm.min_spare_servers = 1
	pm.max_spare_servers = $children
	EOF
}

# nginx_conf DIR WORKER_CONNECTIONS KEEPALIVE : nginx proxying / to
# php-fpm; KEEPALIVE 0: one FastCGI connection per request, N: upstream
# keepalive N with fastcgi_keep_conn on and at most N connections.
nginx_conf()
{
	local dir=$1 wc=$2 ka=$3 up loc=

	if [ "$ka" -gt 0 ]; then
		up="server 127.0.0.1:9000 max_conns=$ka; keepalive $ka;"
		# a client that leaves must not make nginx close first
		loc="fastcgi_keep_conn on; fastcgi_ignore_client_abort on;"
	else
		up="server 127.0.0.1:9000;"
	fi
	nginx_conf_write "$dir" on "$wc" warn "worker_rlimit_nofile 8192;" <<-EOF
	keepalive_requests 10000000;
	upstream php {
		$up
	}
	server {
		listen $SRV:80 backlog=4096;
		location / {
			fastcgi_pass php;
			$loc
			fastcgi_param SCRIPT_FILENAME $dir/index.php;
			fastcgi_param REQUEST_METHOD \$request_method;
			fastcgi_param QUERY_STRING \$query_string;
			fastcgi_param SERVER_PROTOCOL \$server_protocol;
		}
	}
	EOF
}

# sysctls of srv for the next lab_start (besides somaxconn and
# tcp_tw_reuse=0: a new netns has tcp_tw_reuse=2, loopback only)
SRV_SYSCTLS=()

# lab_start NAME PHP_BACKLOG CHILDREN WORKER_CONNECTIONS KEEPALIVE
# [SOMAXCONN] : fresh namespaces, nginx, then somaxconn in srv, then
# php-fpm; sets DIR, NGINX_PID, PHP_PID
lab_start()
{
	local name=$1 backlog=$2 children=$3 wc=$4 ka=$5 somax=${6:-4096}

	DIR=$TMPDIR_T/$name
	pair_setup || return 1
	nsx "$srv" sysctl -qw net.core.somaxconn=4096 net.ipv4.tcp_tw_reuse=0 \
		"${SRV_SYSCTLS[@]}" >/dev/null || return 1
	nginx_conf "$DIR" "$wc" "$ka"
	php_conf "$DIR" "$backlog" "$children"
	# a rerun's logs must not count the first run's lines
	rm -f "$DIR/error.log" "$DIR/php-fpm.log"
	bg_start "$DIR/nginx.out" ip netns exec "$srv" nginx -p "$DIR" \
		-e "$DIR/error.log" -c "$DIR/nginx.conf"
	NGINX_PID=$BG_PID
	if ! busywait 15000 listening 80; then
		diag "nginx did not start: $(tail -n 3 "$DIR/error.log" "$DIR/nginx.out.err" 2>/dev/null)"
		return 1
	fi
	nsx "$srv" sysctl -qw net.core.somaxconn="$somax" || return 1
	bg_start "$DIR/php.out" ip netns exec "$srv" $PHPFPM -F -R -n \
		-y "$DIR/php-fpm.conf"
	PHP_PID=$BG_PID
	if ! busywait 20000 listening 9000; then
		diag "php-fpm did not start: $(tail -n 3 "$DIR/php-fpm.log" "$DIR/php.out.err" 2>/dev/null)"
		return 1
	fi
	diag "srv listen: $(nsx "$srv" ss -Hltn | awk '{ printf "%s Send-Q %s; ", $4, $3 }')"
}

# lab_load CLI WRK NGINX_PID PHP_PID WRK_ARGS... : the load, run by
# `tcptw run` (a bash of its own: exported): wrk from CLI, output to WRK;
# then the lab stopped, CLI's link first (no retransmit reaches srv after
# it), nginx and php-fpm gone, so that the report ends where the after
# snapshot is taken, with nothing left to move. wrk's exit status.
lab_load()
{
	local cli=$1 wrk=$2 nginx=$3 php=$4 rc p
	shift 4

	timeout 60 ip netns exec "$cli" wrk "$@" >"$wrk" 2>&1
	rc=$?
	ip -n "$cli" link set eth0 down
	kill -TERM "$nginx" "$php" 2>/dev/null
	# a process that has exited, reaped or not, has no netns any more
	for p in "$nginx" "$php"; do
		while [ -e "/proc/$p/ns/net" ]; do
			sleep 0.05
		done
	done
	return $rc
}
export -f lab_load

# lab_run NAME : wrk from cli, through `tcptw run -j -N srv` (its report
# in $TMPDIR_T/NAME.run.json), with tcptw watch in srv; then everything
# stopped, the after snapshot, diagnose; sets WRK, DMESG (kernel lines of
# this run), E99, WC_LINES, RUN_RC (tcptw run's exit status).
lab_run()
{
	local name=$1 dm0 watch_pid= load

	RUN_NAME=$name
	B=()
	A=()
	ns_snapshot "$srv" B s_
	have_cli && save_baseline "$srv" "$name"
	dm0=$(dmesg | wc -l)
	if have_cli; then
		bg_start "$TMPDIR_T/$name.watch" timeout 30 ip netns exec "$srv" \
			"$TCPTW_CLI" watch -i 1 -c $((WRK_SECS + 2))
		watch_pid=$BG_PID
	fi
	WRK=$TMPDIR_T/$name.wrk
	load=(lab_load "$cli" "$WRK" "$NGINX_PID" "$PHP_PID" -c "$WRK_CONNS"
	      -t 2 -d "${WRK_SECS}s" --timeout 2s "http://$SRV/")
	if have_cli; then
		# shellcheck disable=SC2016 # expanded by the bash tcptw runs
		timeout 300 "$TCPTW_CLI" run -j -o "$TMPDIR_T/$name.run.json" \
			-N "$srv" -- bash -c '"$@"' lab_load "${load[@]}" \
			>"$TMPDIR_T/$name.run.out" 2>"$TMPDIR_T/$name.run.err"
	else
		"${load[@]}"
	fi
	RUN_RC=$?
	check_err $RUN_RC "wrk or tcptw run failed: $(tail -n 3 "$WRK" "$TMPDIR_T/$name.run.err" 2>/dev/null)"
	bg_wait "$NGINX_PID"
	bg_wait "$PHP_PID"
	[ -n "$watch_pid" ] && bg_wait "$watch_pid"
	ns_snapshot "$srv" A s_
	DMESG=$TMPDIR_T/$name.dmesg
	dmesg | tail -n +$((dm0 + 1)) >"$DMESG"
	if have_cli; then
		diag "tcptw run: exit $RUN_RC, srv TIME_WAIT sockets (start, peak, end): $(jqr "$TMPDIR_T/$name.run.json" '.namespaces[0].time_wait | tojson'); $(head -c 300 "$TMPDIR_T/$name.run.json")"
		diagnose "$srv" "$name"
		ip netns exec "$srv" "$TCPTW_CLI" diagnose \
			--baseline "$TMPDIR_T/$name.base" >"$TMPDIR_T/$name.diag.txt" 2>&1
	fi
	E99=$(grep -cF '(99: Cannot assign requested address)' "$DIR/error.log")
	WC_LINES=$(grep -c 'worker_connections are not enough' "$DIR/error.log")
	diag "wrk: $(grep -E 'requests in|Socket errors|Non-2xx|Requests/sec' "$WRK" | tr -s ' ' | tr '\n' ';')"
	diag "nginx error.log: $(wc -l <"$DIR/error.log") lines, E99 $E99, worker_connections $WC_LINES; $(grep -vF '(99: Cannot' "$DIR/error.log" | grep -v worker_connections | head -n 2 | cut -c 1-200 | tr '\n' ';')"
	sed -E 's/^([0-9/]+) ([0-9:]+) \[([a-z]+)\] [0-9#]+: (\*[0-9]+ )?/\2 [\3] /; s/, client:.*//' \
		"$DIR/error.log" | awk '{ t = $1; $1 = ""; n[$0]++; if (!($0 in f)) f[$0] = t; l[$0] = t }
		END { for (m in n) printf "#   error.log: %d x%s (%s..%s)\n", n[m], m, f[m], l[m] }'
	diag "wrk ran $(stat -c %y "$WRK" | cut -c 12-19) - ${WRK_SECS}s"
	diag "php-fpm log: $(grep -c max_children "$DIR/php-fpm.log") max_children warnings; $(grep -m 1 max_children "$DIR/php-fpm.log")"
	diag "srv ListenOverflows=$(d s_mib_TcpExtListenOverflows) ListenDrops=$(d s_mib_TcpExtListenDrops) SyncookiesSent=$(d s_mib_TcpExtSyncookiesSent) ReqQFullDoCookies=$(d s_mib_TcpExtTCPReqQFullDoCookies) ReqQFullDrop=$(d s_mib_TcpExtTCPReqQFullDrop) ActiveOpens=$(d s_mib_TcpActiveOpens) TW=$(d s_mib_TcpExtTW) TWRecycled=$(d s_mib_TcpExtTWRecycled) ct drop=$(d s_ct_drop)"
	diag "srv tcptw ListenOverflow=$(d s_tw_ListenOverflow) ListenSynCookieSent=$(d s_tw_ListenSynCookieSent) ListenSynDrop=$(d s_tw_ListenSynDrop) ConnectPortExhausted=$(d s_tw_ConnectPortExhausted) TwReuseGranted=$(d s_tw_TwReuseGranted) ConntrackTableFull=$(d s_tw_ConntrackTableFull)"
	diag "srv TIME_WAIT after: local :9000 $(nsx "$srv" ss -Htan state time-wait 'sport = :9000' | wc -l), to :9000 $(nsx "$srv" ss -Htan state time-wait 'dport = :9000' | wc -l), :80 $(nsx "$srv" ss -Htan state time-wait 'sport = :80' | wc -l)"
	diag "kernel: $(grep -c 'Possible SYN flooding' "$DMESG") SYN flooding lines, $(grep -c 'table full, dropping packet' "$DMESG") conntrack table full lines"
	nsx "$srv" cat "$TCPTW_PROC/listeners" 2>/dev/null | sed 's/^/#   listeners: /'
	return 0
}

# run_eq SECTION COUNTER WANT : the last run's `tcptw run` report moved
# srv's COUNTER (SECTION: mib, conntrack; counters: the module's) by WANT
run_eq()
{
	local got

	got=$(report_delta "$TMPDIR_T/$RUN_NAME.run.json" "$1" "$2")
	if [ "$1" = counters ]; then
		check_mod_eq "tcptw run: srv $2 delta" "$got" "$3"
	else
		check_eq "tcptw run: srv $2 delta" "$got" "$3"
	fi
}

# run_findings_eq : the report names what diagnose names over the run
# (nothing moves in srv outside the report's window)
run_findings_eq()
{
	check_str "tcptw run: findings == diagnose's" \
		"$(findings "$TMPDIR_T/$RUN_NAME.run.json")" \
		"$(findings "$TMPDIR_T/$RUN_NAME.diag.json")"
}

# example NAME FILE CAPTION : with TCPTW_EXAMPLES_DIR set, the watch and
# diagnose output of run NAME as docs/examples/seed-004-FILE-*.txt
example()
{
	local name=$1 out=${TCPTW_EXAMPLES_DIR:-}/seed-004-$2

	[ -n "${TCPTW_EXAMPLES_DIR:-}" ] && have_cli || return 0
	{
		echo "# $3, in the server's netns, while wrk -c $WRK_CONNS -t 2 -d ${WRK_SECS}s runs"
		echo "\$ tcptw watch -i 1 -c $((WRK_SECS + 2))"
		cat "$TMPDIR_T/$name.watch"
	} >"$out-watch.txt"
	{
		echo "# $3, in the server's netns, after the run"
		echo "\$ tcptw diagnose --baseline before"
		cat "$TMPDIR_T/$name.diag.txt"
		echo "# exit status $DIAG_RC"
	} >"$out-diagnose.txt"
}

# a_reproduced : the kernel dropped or cookied SYNs/ACKs on a listener
a_reproduced()
{
	local n=$(( $(d s_mib_TcpExtListenOverflows) + $(d s_mib_TcpExtSyncookiesSent) ))

	[ "$n" -gt 0 ] && return 0
	echo "no ListenOverflows, no SyncookiesSent in srv"
	return 1
}

a_reset()
{
	cleanup_all_ns
	lab_start backlog 10 2 4096 0 10
}

test_backlog()
{
	local name="seed_004: php-fpm listen.backlog=10, somaxconn=10, 2 children -> :9000 row == ListenOverflows, SyncookiesSent"
	local ovf ck row docook

	test_begin "$name"
	if ! probe_gate tcp_conn_request tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	if ! lab_start backlog 10 2 4096 0 10; then
		check_err 1 "setup failed"
		cleanup_all_ns
		log_test "$name"
		return
	fi
	rerun_once a_reproduced a_reset lab_run backlog ||
		check_err 1 "setup failed"
	ovf=$(d s_mib_TcpExtListenOverflows)
	ck=$(d s_mib_TcpExtSyncookiesSent)
	docook=$(d s_mib_TcpExtTCPReqQFullDoCookies)
	check_gt "srv TcpExt ListenOverflows + SyncookiesSent" $((ovf + ck)) 0
	check_mod_eq "srv ListenOverflow == TcpExt ListenOverflows" \
		"$(d s_tw_ListenOverflow)" "$ovf"
	check_mod_eq "srv ListenSynCookieSent == TcpExt SyncookiesSent" \
		"$(d s_tw_ListenSynCookieSent)" "$ck"
	if [ "$HAVE_MODULE" = 1 ]; then
		row=$(listener_row "$srv" 127.0.0.1 9000)
		diag "listeners row 127.0.0.1 9000: ${row:--}"
		check_eq "listeners row 127.0.0.1 9000 max_backlog" \
			"$(echo "$row" | awk '{ print $4 }')" 10
		check_eq "listeners row 127.0.0.1 9000 overflow_syn + overflow_ack == ListenOverflows" \
			"$(echo "$row" | awk 'NF { print $5 + $6 }')" "$ovf"
		check_eq "listeners row 127.0.0.1 9000 cookie_sent == SyncookiesSent" \
			"$(echo "$row" | awk '{ print $8 }')" "$ck"
		check_eq "listeners rows for $SRV 80" \
			"$(listener_row "$srv" $SRV 80 | grep -c .)" 0
	fi
	# tcp_syn_flood_action() warns once per listener, at its first full
	# SYN queue, counted by TCPReqQFullDoCookies (syncookies=1)
	diag "kernel: $(grep -m 1 'Possible SYN flooding' "$DMESG")"
	check_eq "kernel 'Possible SYN flooding on port 9000. Sending cookies' lines" \
		"$(grep -cE 'Possible SYN flooding on port ([^ ]*:)?9000\. Sending cookies' "$DMESG")" \
		$(( docook > 0 ? 1 : 0 ))
	check_eq "kernel SYN flooding lines for other ports" \
		"$(grep 'Possible SYN flooding' "$DMESG" | grep -cvE 'port ([^ ]*:)?9000\.')" 0
	if have_cli; then
		# wrk gives up on a request after 2 s (--timeout): a guest too
		# slow to answer in time also shows its resets of idle
		# connections (nat_idle_reset)
		check_findings "diagnose findings" "$TMPDIR_T/backlog.diag.json" \
			accept_queue nat_idle_reset
		run_eq mib TcpExtListenOverflows "$ovf"
		run_eq mib TcpExtSyncookiesSent "$ck"
		run_eq counters ListenOverflow "$ovf"
		run_eq counters ListenSynCookieSent "$ck"
		check_findings "tcptw run: findings" \
			"$TMPDIR_T/backlog.run.json" accept_queue nat_idle_reset
		example backlog backlog "php-fpm listen.backlog = 10, net.core.somaxconn = 10"
	fi
	cleanup_all_ns
	log_test "$name"
}

PORTS=(net.ipv4.ip_local_port_range="20000 20050" net.ipv4.tcp_timestamps=1)

# b_reproduced : nginx failed connects to php-fpm for want of a port
b_reproduced()
{
	[ "$E99" -gt 0 ] && return 0
	echo "nginx logged no (99: Cannot assign requested address)"
	return 1
}

b_reset()
{
	cleanup_all_ns
	lab_start "$B_NAME" 4096 8 4096 0
}

# b_run NAME : a run of b) with SRV_SYSCTLS set; rerun if nothing failed
b_run()
{
	B_NAME=$1
	if ! lab_start "$B_NAME" 4096 8 4096 0; then
		check_err 1 "setup failed"
		return 1
	fi
	rerun_once b_reproduced b_reset lab_run "$B_NAME" ||
		{ check_err 1 "setup failed"; return 1; }
	peers_dump
	check_gt "nginx E99 log lines" "$E99" 0
	check_mod_eq "srv ConnectPortExhausted == nginx E99 log lines" \
		"$(d s_tw_ConnectPortExhausted)" "$E99"
	check_mod_eq "peers 127.0.0.1 9000 port_exhausted == E99 log lines" \
		"$(peer_col "$srv" 127.0.0.1 9000 port_exhausted)" "$E99"
	have_cli || return 0
	run_eq counters ConnectPortExhausted "$E99"
	run_eq mib TcpExtTWRecycled "$(d s_mib_TcpExtTWRecycled)"
	run_eq mib TcpActiveOpens "$(d s_mib_TcpActiveOpens)"
	run_findings_eq
	check_eq "tcptw run: port_exhaustion named" \
		"$(findings "$TMPDIR_T/$1.run.json" | grep -cw port_exhaustion)" 1
	check_mod_eq "tcptw run: port_exhaustion evidence ConnectPortExhausted" \
		"$(evidence "$TMPDIR_T/$1.run.json" ConnectPortExhausted)" "$E99"
}

peers_dump()
{
	nsx "$srv" cat "$TCPTW_PROC/peers" 2>/dev/null | sed 's/^/#   peers: /'
}

test_ports()
{
	local name="seed_004: nginx's ip_local_port_range 20000-20050 -> ConnectPortExhausted == nginx's (99: Cannot assign requested address) lines"

	test_begin "$name"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	SRV_SYSCTLS=("${PORTS[@]}")
	if b_run ports; then
		check_eq "srv TcpExt TWRecycled (tcp_tw_reuse=0)" \
			"$(d s_mib_TcpExtTWRecycled)" 0
		check_mod_eq "srv TwReuseGranted" "$(d s_tw_TwReuseGranted)" 0
		PORTS_E99=$E99
		PORTS_REQS=$(awk '/requests in/ { print $1 }' "$WRK")
	fi
	SRV_SYSCTLS=()
	cleanup_all_ns
	log_test "$name"
}

test_ports_tw_reuse()
{
	local name="seed_004: the same with tcp_tw_reuse=1 -> TwReuseGranted == TWRecycled, ConnectPortExhausted == E99 lines"

	test_begin "$name"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	SRV_SYSCTLS=("${PORTS[@]}" net.ipv4.tcp_tw_reuse=1)
	if b_run tw_reuse; then
		check_mod_eq "srv TwReuseGranted == TcpExt TWRecycled" \
			"$(d s_tw_TwReuseGranted)" "$(d s_mib_TcpExtTWRecycled)"
		# the attribution: every recycle on nginx's connects to php-fpm
		# (few or none: php-fpm closes first, and nginx's own TIME_WAIT
		# sockets are mostly under tcp_tw_reuse_delay in a 3 s run)
		check_mod_eq "peers 127.0.0.1 9000 reuse_granted == TcpExt TWRecycled" \
			"$(peer_col "$srv" 127.0.0.1 9000 reuse_granted)" \
			"$(d s_mib_TcpExtTWRecycled)"
		diag "tcp_tw_reuse 0 -> 1: E99 lines ${PORTS_E99:-?} -> $E99, requests ${PORTS_REQS:-?} -> $(awk '/requests in/ { print $1 }' "$WRK"), TWRecycled 0 -> $(d s_mib_TcpExtTWRecycled)"
	fi
	SRV_SYSCTLS=()
	cleanup_all_ns
	log_test "$name"
}

NPORTS=51
KEEPALIVE=16

# ka_requests : requests of the last run that reached nginx: wrk's
# count, or if wrk counted none, the 502s nginx logged for them
ka_requests()
{
	local n

	n=$(awk '/requests in/ { print $1 }' "$WRK")
	[ "${n:-0}" -gt 0 ] || n=$(grep -c 'no live upstreams' "$DIR/error.log")
	echo "${n:-0}"
}

test_ports_keepalive()
{
	local name="seed_004: control: fastcgi_keep_conn on, keepalive $KEEPALIVE -> no E99 line, ConnectPortExhausted 0"

	test_begin "$name"
	SRV_SYSCTLS=("${PORTS[@]}")
	if ! lab_start keepalive 4096 $KEEPALIVE 4096 $KEEPALIVE; then
		check_err 1 "setup failed"
	else
		lab_run keepalive
		# a control without traffic proves nothing: a guest starved
		# through all of wrk's 3 s is given one more run. wrk's count
		# can be 0 while nginx answered hundreds (its 1000 connections
		# still in their 2 s timeout when the run ends), so the
		# requests nginx saw count: wrk's, or nginx's 502 lines
		if [ "$(ka_requests)" = 0 ]; then
			diag "no request reached nginx (starved guest): once more, in new namespaces"
			cleanup_all_ns
			lab_start keepalive 4096 $KEEPALIVE 4096 $KEEPALIVE &&
				lab_run keepalive
		fi
		check_gt "requests that reached nginx (wrk's count, else nginx's 502 \"no live upstreams\" lines)" \
			"$(ka_requests)" 0
		check_eq "nginx E99 log lines" "$E99" 0
		check_mod_eq "srv ConnectPortExhausted" \
			"$(d s_tw_ConnectPortExhausted)" 0
		check_range "srv TcpActiveOpens (upstream connections)" \
			"$(d s_mib_TcpActiveOpens)" 1 $NPORTS
		if have_cli; then
			run_eq counters ConnectPortExhausted 0
			run_eq mib TcpActiveOpens "$(d s_mib_TcpActiveOpens)"
			run_findings_eq
		fi
	fi
	SRV_SYSCTLS=()
	cleanup_all_ns
	log_test "$name"
}

CT_LIMIT=200
CT_MAX_ORIG=

test_cleanup()
{
	if [ -n "$CT_MAX_ORIG" ]; then
		sysctl -qw net.netfilter.nf_conntrack_max="$CT_MAX_ORIG"
	fi
}

# ct_on : conntrack in srv for wrk's flows (not nginx's to php-fpm over
# lo, which would take entries from the same table), and the guest-wide
# nf_conntrack_max (writable only in the initial netns)
ct_on()
{
	local p s

	ip netns exec "$srv" nft -f - <<-EOF || return 1
	table inet seed004 {
		chain pre {
			type filter hook prerouting priority raw; policy accept;
			iif lo notrack
		}
		chain out {
			type filter hook output priority raw; policy accept;
			oif lo notrack
		}
		chain in {
			type filter hook input priority filter; policy accept;
			ct state established,related accept
		}
	}
	EOF
	for p in $CT_PROBES; do
		s=$(probe_state "$p")
		if [ "$HAVE_MODULE" = 1 ] && [ "$s" != attached ]; then
			check_err 1 "probe $p: '$s'"
			return 1
		fi
	done
	[ -n "$CT_MAX_ORIG" ] ||
		CT_MAX_ORIG=$(sysctl -n net.netfilter.nf_conntrack_max) || return 1
	sysctl -qw net.netfilter.nf_conntrack_max=$CT_LIMIT
}

c_reproduced()
{
	[ "$(d s_ct_drop)" -gt 0 ] && return 0
	echo "conntrack dropped nothing"
	return 1
}

c_reset()
{
	cleanup_all_ns
	lab_start ct 4096 8 4096 0 && ct_on
}

test_conntrack()
{
	local name="seed_004: nf_conntrack_max=$CT_LIMIT in srv -> ConntrackTableFull == conntrack -S drop"
	local drop

	test_begin "$name"
	if ! lab_start ct 4096 8 4096 0 || ! ct_on; then
		check_err 1 "setup failed"
	else
		rerun_once c_reproduced c_reset lab_run ct ||
			check_err 1 "setup failed"
		drop=$(d s_ct_drop)
		diag "srv conntrack: count $(nsx "$srv" cat /proc/sys/net/netfilter/nf_conntrack_count) early_drop $(d s_ct_early_drop) insert_failed $(d s_ct_insert_failed)"
		check_gt "srv conntrack -S drop" "$drop" 0
		check_mod_eq "srv ConntrackTableFull == conntrack -S drop" \
			"$(d s_tw_ConntrackTableFull)" "$drop"
		# net_ratelimit()ed: at least one, at most one per drop
		check_range "kernel 'nf_conntrack: table full, dropping packet' lines" \
			"$(grep -c 'nf_conntrack: table full, dropping packet' "$DMESG")" 1 "$drop"
		if have_cli; then
			check_str "diagnose findings" \
				"$(findings "$TMPDIR_T/ct.diag.json")" conntrack_full
			check_mod_eq "diagnose evidence ConntrackTableFull" \
				"$(evidence "$TMPDIR_T/ct.diag.json" ConntrackTableFull)" "$drop"
			run_eq conntrack drop "$drop"
			run_eq counters ConntrackTableFull "$drop"
			check_str "tcptw run: findings" \
				"$(findings "$TMPDIR_T/ct.run.json")" conntrack_full
			check_mod_eq "tcptw run: evidence ConntrackTableFull" \
				"$(evidence "$TMPDIR_T/ct.run.json" ConntrackTableFull)" "$drop"
			check_ct_census ct
		fi
	fi
	[ -n "$CT_MAX_ORIG" ] &&
		sysctl -qw net.netfilter.nf_conntrack_max="$CT_MAX_ORIG"
	CT_MAX_ORIG=
	cleanup_all_ns
	log_test "$name"
}

# ct_census_now NAME : `tcptw conntrack -j` and `tcptw diagnose -j` in
# srv, between two `conntrack -L` that agree (an entry may expire
# meanwhile: up to 3 tries); CT_L: conntrack -L's counts by state
ct_census_now()
{
	local name=$1 try l2

	for try in 1 2 3; do
		CT_L=$(ct_states "$srv")
		ip netns exec "$srv" "$TCPTW_CLI" conntrack -j \
			>"$TMPDIR_T/$name.ct.json" 2>"$TMPDIR_T/$name.ct.err"
		ip netns exec "$srv" "$TCPTW_CLI" diagnose -j \
			--baseline "$TMPDIR_T/$name.base" \
			>"$TMPDIR_T/$name.ctdiag.json" 2>&1
		l2=$(ct_states "$srv")
		[ "$l2" = "$CT_L" ] && return 0
		diag "conntrack -L moved meanwhile (try $try): ${CT_L//$'\n'/, } -> ${l2//$'\n'/, }"
	done
	return 1
}

# check_ct_census NAME : what fills srv's table after run NAME: tcptw
# conntrack's counts by TCP state == conntrack -L's at the same moment,
# and diagnose's conntrack_full names the state that holds half the
# entries or more, with conntrack -L's count, and its timeout's sysctl
check_ct_census()
{
	local name=$1 got st n total ev

	ct_census_now "$name"
	check_err $? "conntrack -L never read the same twice in a row"
	got=$(tcptw_ct_states "$TMPDIR_T/$name.ct.json")
	diag "conntrack -L: ${CT_L//$'\n'/, }; tcptw conntrack: ${got//$'\n'/, }"
	check_str "tcptw conntrack: TCP entries by state == conntrack -L's" \
		"${got//$'\n'/, }" "${CT_L//$'\n'/, }"
	check_gt "TCP entries left in srv's table" \
		"$(awk '{ s += $2 } END { print s + 0 }' <<<"$CT_L")" 0
	read -r st n <<<"$(sort -k2,2n <<<"$CT_L" | tail -n 1)"
	total=$(jqr "$TMPDIR_T/$name.ct.json" '.conntrack.census.dumped')
	ev=$(jqr "$TMPDIR_T/$name.ctdiag.json" '[.findings[] | select(.id == "conntrack_full") | .evidence[] | select(.name == "conntrack tcp '"$st"'") | .value][0]')
	diag "diagnose: $(jqr "$TMPDIR_T/$name.ctdiag.json" '[.findings[] | select(.id == "conntrack_full") | .notes] | tojson')"
	if _is_num "$total" && [ $((2 * n)) -ge "$total" ]; then
		check_eq "diagnose: conntrack_full evidence 'conntrack tcp $st'" "$ev" "$n"
		[ "$st" = ESTABLISHED ] && return
		grep -q "nf_conntrack_tcp_timeout_${st,,}" "$TMPDIR_T/$name.ctdiag.json"
		check_err $? "diagnose does not name nf_conntrack_tcp_timeout_${st,,}"
	else
		diag "no TCP state holds half of the $total entries ($st: $n)"
		check_str "diagnose: no 'conntrack tcp STATE' evidence" "$ev" ""
	fi
}

d_reproduced()
{
	[ "$WC_LINES" -gt 0 ] && return 0
	echo "nginx never ran out of worker_connections"
	return 1
}

d_reset()
{
	cleanup_all_ns
	lab_start wc 4096 8 1024 0
}

test_worker_connections()
{
	local name="seed_004: control: worker_connections 1024 at -c $WRK_CONNS -> nginx's alert, no TCP-level finding"

	test_begin "$name"
	if ! lab_start wc 4096 8 1024 0; then
		check_err 1 "setup failed"
	else
		rerun_once d_reproduced d_reset lab_run wc ||
			check_err 1 "setup failed"
		check_gt "nginx 'worker_connections are not enough' lines" "$WC_LINES" 0
		check_eq "srv TcpExt ListenOverflows" "$(d s_mib_TcpExtListenOverflows)" 0
		check_mod_eq "srv ListenOverflow" "$(d s_tw_ListenOverflow)" 0
		check_mod_eq "srv ConnectPortExhausted" "$(d s_tw_ConnectPortExhausted)" 0
		if have_cli; then
			# no TCP-level finding; wrk's own resets of the
			# connections it gave up on after 2 s (a slow guest)
			# may show as nat_idle_reset, as in the backlog case
			check_findings "diagnose findings" "$TMPDIR_T/wc.diag.json" \
				"" nat_idle_reset
			if [ -z "$(findings "$TMPDIR_T/wc.diag.json")" ]; then
				check_eq "diagnose exit code" "$DIAG_RC" 0
				check_eq "diagnose says 'no evidence of:'" \
					"$(grep -c 'no evidence of:' "$TMPDIR_T/wc.diag.txt")" 1
			else
				check_eq "diagnose exit code (wrk's resets named)" "$DIAG_RC" 3
			fi
			run_eq mib TcpExtListenOverflows 0
			check_findings "tcptw run: findings" \
				"$TMPDIR_T/wc.run.json" "" nat_idle_reset
			check_eq "tcptw run: exit status (wrk's)" "$RUN_RC" 0
			sed 's/^/#   diagnose: /' "$TMPDIR_T/wc.diag.txt"
		fi
	fi
	cleanup_all_ns
	log_test "$name"
}

TESTS=${TCPTW_SEED004_TESTS:-"backlog ports ports_tw_reuse ports_keepalive conntrack worker_connections"}
read -ra TESTS <<<"$TESTS"
tests_run "${TESTS[@]/#/test_}"
