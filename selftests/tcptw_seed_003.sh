#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Seed 003 with its own tool: ab with concurrency 100 stops at ~16,384
# connections, the size of the IANA ephemeral range 49152-65535, while
# the TIME_WAIT count sits at 16,363.
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:80  nginx (1 worker,
#   ab -c 100 (apache2-utils)                         return 200, keepalive
#   ip_local_port_range 49152 ...                     120 s, 100000 requests)
#   tcp_tw_reuse 2 (the default), tcp_max_tw_buckets 65536 on both sides
#
# Which side closes first decides where TIME_WAIT lands, and ab never
# closes a connection it has a request on: without -k it sends HTTP/1.0
# without keep-alive and reads until nginx closes, so every TIME_WAIT
# socket is nginx's; with -k it keeps each connection for the next request
# and closes only when it exits. ab against nginx therefore stalls on
# Linux only as a loop of short keep-alive runs, each exiting with its
# 100 connections open (nginx keeps them, so ab closes first):
#  1. `ab -k -n 100 -c 100`, at most 200 times (20,000 requests), stopping
#     at the first run ab aborts. Asserted at the stall: that run aborted
#     with "apr_socket_connect(): Cannot assign requested address (99)";
#     ConnectPortExhausted == the connect() calls that failed with
#     EADDRNOTAVAIL (strace counts them: ab prints only the last of the 12
#     it tries, "Test aborted after 10 failures"); the client holds one
#     TIME_WAIT socket per port of the range (counted in the loop when
#     ab fails), minus at most the 100 connections the aborted run still
#     held and 100 per run whose sockets may have timed out between the
#     start of the last run and the count (a slow guest), and the server
#     none; the peers row 198.18.0.2 80 carries the same port_exhausted
#     count; reuse denied as loopback-only, none granted; TwCreated ==
#     the TcpExt TW delta; diagnose names port_exhaustion with that count
#     and says the TIME_WAIT sockets are held here, on the connecting side.
#  2. Control, the report's command line `ab -n 20000 -c 100` against the
#     same nginx, from the report's whole range 49152-65535 (scaled: `ab
#     -n 2048` through the stall's 512 ports): nginx closes
#     first, TIME_WAIT lands on the server (its TcpExt TW delta == the
#     requests, and so is the server's TwCreated), the client keeps
#     at most the 100 connections ab held when it exited, ab completes
#     every request, ConnectPortExhausted 0, and diagnose in the client
#     names no port_exhaustion.
# Both run their load under `tcptw run -j` in cli (where the CLI is
# built): its report's ConnectPortExhausted delta equals the one above
# and its findings name port_exhaustion, or not in the control.
# The stall's range: 512 ports (49152-49663) unless TCPTW_SEED003_PORTS
# says otherwise; 16384 is the report's. The range must fill within the
# 60 s a TIME_WAIT socket lives, and under TCG it does not at 16384: once
# one parity of the range is held (8192 ports), every connect() walks
# those 8192 TIME_WAIT sockets before it tries the other half, 3.3-4.6 s
# per 1000 connects without tcptw and 12.6-17 s with tcptw 0.2.0 (its
# hook on tcp_twsk_unique fired per socket walked). 4096 ports stalled after
# 25-81 s alone or beside one guest, but on this machine also building
# four kernels' modules beside two guests the loop made only 50
# connections/s and never stalled in 200 s (2 runs). 2048 ports did not
# either in a CI guest beside another (2 runs of 200 s at 17 connections/s:
# 1000 TIME_WAIT sockets at most within their 60 s). 512 fill in 30 s at
# that rate: the same stall, with room.
# tcp_max_tw_buckets: a new netns gets half the ehash size, 8192 in a 2G
# guest; above it sockets close without TIME_WAIT and free their port at
# once, so the stall would never come. It is raised to 65536, as a host
# with 8 GB or more has it.
#
# With TCPTW_EXAMPLES_DIR set, the `tcptw watch` and `tcptw diagnose`
# output of run 1 goes to seed-003-watch.txt and seed-003-diagnose.txt
# there (docs/examples/).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
if ! kernel_is_61; then
	echo "SKIP: seed at full scale runs on 6.1 only: CI time budget ($(uname -r))"
	exit $ksft_skip
fi
require_seeds_at_load 6.1
require_cmd ip nstat ss nginx ab strace
require_module

SRV=198.18.0.2
SEED_LO=49152
SEED_HI=65535
# the stall's range: the report's 16384 ports only when asked (see above)
PORTS=${TCPTW_SEED003_PORTS:-512}
STALL_HI=$((SEED_LO + PORTS - 1))
CONC=100
RUNS=200
# The control: the report's `ab -n 20000` over the whole range with the
# report's 16384 ports; scaled, four times as many requests as the
# stall's range has ports, through that same range (each port serves
# about four connections: nginx closing first leaves it free at once).
if [ "$PORTS" -ge 16384 ]; then
	CTL_HI=$SEED_HI
	REQS=$((CONC * RUNS))
else
	CTL_HI=$STALL_HI
	REQS=$((4 * PORTS))
fi
E99='apr_socket_connect(): Cannot assign requested address (99)'

# seed_pair HI : fresh namespaces, cli's port range SEED_LO..HI.
seed_pair()
{
	pair_setup || return 1
	rl_sysctl "$cli" "net.ipv4.ip_local_port_range=$SEED_LO $1" \
		net.ipv4.tcp_tw_reuse=2 net.ipv4.tcp_timestamps=1 \
		net.ipv4.tcp_max_tw_buckets=65536 || return 1
	rl_sysctl "$srv" net.ipv4.tcp_max_tw_buckets=65536 \
		net.core.somaxconn=1024
}

# nginx_conf DIR : keep-alive connections are kept for 120 s and 100000
# requests, so nginx never closes a keep-alive connection first.
nginx_conf()
{
	nginx_conf_write "$1" off 1024 error <<-EOF
	keepalive_timeout 120s;
	keepalive_requests 100000;
	server {
		listen $SRV:80 backlog=1024;
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

# nginx_start DIR : nginx in srv, bounded; sets NGINX_PID.
nginx_start()
{
	local dir=$1

	mkdir -p "$dir"
	nginx_conf "$dir"
	bg_start "$dir/nginx.out" timeout 300 ip netns exec "$srv" nginx \
		-p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
	NGINX_PID=$BG_PID
	if ! busywait 15000 nginx_listening; then
		check_err 1 "nginx did not start: $(cat "$dir/nginx.out.err" "$dir/error.log" 2>/dev/null)"
		return 1
	fi
}

# snap ARRAY : cli's counters, and srv's with the prefix s_.
snap()
{
	rl_snap "$cli" "$1"
	ns_snapshot "$srv" "$1" s_
}

# ex_file NAME CAPTION CMDLINE OUT END : an example file as examples_vm.sh
# writes them: "# CAPTION", "$ tcptw CMDLINE", OUT, "# END".
ex_file()
{
	[ -n "${TCPTW_EXAMPLES_DIR:-}" ] || return 0
	{
		echo "# $2"
		echo "\$ tcptw $3"
		cat "$4"
		echo "# $5"
	} >"$TCPTW_EXAMPLES_DIR/$1"
	diag "example written: $TCPTW_EXAMPLES_DIR/$1"
}

# ev_val FILE NAME : the value of the evidence NAME of the port_exhaustion
# finding of a diagnose -j output ("none" if it has none)
ev_val()
{
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    for e in f["evidence"] if f["id"] == "port_exhaustion" else []:
        if e["name"] == sys.argv[2] and "value" in e:
            print(e["value"])
            sys.exit(0)
print("none")' "$1" "$2"
}

# has_finding FILE ID : 1 if diagnose -j output FILE has finding ID, else 0
has_finding()
{
	case " $(findings "$1") " in
	*" $2 "*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# run_loop : fresh namespaces, nginx, `tcptw watch` in cli, then up to
# RUNS x `ab -k -n CONC -c CONC` under one strace until ab fails; sets
# DIR, LAST (the last run), EADDR (connect() = EADDRNOTAVAIL), TW_CLI and
# TW_SRV (TIME_WAIT sockets at the stall) and BEFORE/AFTER.
run_loop()
{
	local t0

	DIR=$TMPDIR_T/loop.$((++LOOP_TRY))
	LAST=0 EADDR= TW_CLI= TW_SRV=
	mkdir -p "$DIR"
	seed_pair $STALL_HI || return 1
	nginx_start "$DIR" || return 1
	save_baseline "$cli" seed003 || return 1
	BEFORE=() AFTER=()
	snap BEFORE
	bg_start "$DIR/watch.txt" timeout 200 ip netns exec "$cli" \
		"$TCPTW_CLI" watch -i 2 -c 90
	WATCH_PID=$BG_PID
	t0=$SECONDS
	# one strace for the whole loop: an exec per run costs under TCG;
	# the loop runs under `tcptw run` in cli where the CLI is built
	# (RUN: its report, checked by check_run)
	RUN=()
	[ -x "$TCPTW_CLI" ] && RUN=("$TCPTW_CLI" run -j -o "$DIR/run.json" --)
	ip netns exec "$cli" timeout 210 "${RUN[@]}" timeout 200 \
		strace -f --seccomp-bpf -qq \
		-e trace=connect -e status=failed -o "$DIR/strace.txt" \
		bash -c 'for ((i = 1; i <= $2; i++)); do
				echo $i >"$1/last"
				if ! ab -k -n $3 -c $3 -s 10 "http://$4/" \
					>"$1/ab.$i.out" 2>&1; then
					ss -Htan state time-wait >"$1/tw.stall"
					echo "$EPOCHREALTIME" >"$1/t.stall"
					exit 0
				fi
				echo "$EPOCHREALTIME" >>"$1/t.runs"
			done' sh "$DIR" "$RUNS" "$CONC" "$SRV" >"$DIR/run.out"
	check_err $? "the ab loop did not finish in time"
	# counted in the loop as soon as ab failed. A slow guest takes longer
	# than the 60 s a TIME_WAIT socket lives to fill the range: sockets
	# that expired before the last run began freed ports it took, but
	# those of a run that ended 59-61 s before that run's start and its
	# failure may have expired in between (measured on 6.1 beside
	# another guest, 4096 ports: 4096 at the stall, 3796 after ab and
	# strace exited)
	TW_CLI=$(grep -c . "$DIR/tw.stall" 2>/dev/null)
	TW_AGED=$(awk -v t="$(cat "$DIR/t.stall" 2>/dev/null)" \
		'{ end[NR] = $1 } END {
			for (i = 1; i <= NR; i++)
				if (t != "" && t - end[i] >= 59 && end[NR] - end[i] < 61)
					n++
			print n + 0
		}' "$DIR/t.runs" 2>/dev/null)
	TW_AGED=${TW_AGED:-0}
	TW_SRV=$(tw_sockets "$srv")
	snap AFTER
	LAST=$(cat "$DIR/last" 2>/dev/null)
	LOOP_SECS=$((SECONDS - t0))
	EADDR=$(grep -c '= -1 EADDRNOTAVAIL' "$DIR/strace.txt")
	diag "ab loop: $LAST runs in ${LOOP_SECS}s; last: $(grep -E 'Complete requests|aborted|apr_' "$DIR/ab.$LAST.out" | tr '\n' ';')"
	diag "strace: connect() = EADDRNOTAVAIL $EADDR times; TIME_WAIT sockets: cli $TW_CLI at the stall ($TW_AGED runs of it may have aged out), $(tw_sockets "$cli") after ab; srv $TW_SRV"
	diag "cli TcpExt TW=$(rl_mib TcpExtTW) TWRecycled=$(rl_mib TcpExtTWRecycled) TCPTimeWaitOverflow=$(rl_mib TcpExtTCPTimeWaitOverflow); srv TcpExt TW=$(rl_delta s_mib_TcpExtTW)"
	rl_tw_dump
	rl_peers_dump "$cli"
	return 0
}

# check_run REPORT EXHAUSTED NAMED : `tcptw run`'s report of the load it
# ran in cli: its ConnectPortExhausted delta == EXHAUSTED (what strace
# saw; 0 in the control), and port_exhaustion among its findings: NAMED
# (1 or 0). The exit status it passed on is the callers' check.
check_run()
{
	[ -x "$TCPTW_CLI" ] || return 0
	diag "tcptw run: findings '$(findings "$1" 2>/dev/null)', $(head -c 300 "$1")"
	check_mod_eq "tcptw run: ConnectPortExhausted delta" \
		"$(report_delta "$1" counters ConnectPortExhausted)" "$2"
	[ "$HAVE_MODULE" = 1 ] || return 0
	check_eq "tcptw run: findings name port_exhaustion" \
		"$(has_finding "$1" port_exhaustion)" "$3"
}

# stalled : the last ab run aborted on EADDRNOTAVAIL (rerun_once's check)
stalled()
{
	if grep -qF -- "$E99" "$DIR/ab.$LAST.out" 2>/dev/null; then
		return 0
	fi
	echo "no ab run failed with EADDRNOTAVAIL in $LAST runs (${LOOP_SECS}s: TIME_WAIT lasts 60 s)"
	return 1
}

reset_loop()
{
	kill "$WATCH_PID" 2>/dev/null
	cleanup_all_ns
}

test_stall()
{
	local name="seed_003: ab -k -c $CONC in a loop, $PORTS ports: stall at $PORTS TIME_WAIT, ConnectPortExhausted == EADDRNOTAVAIL"
	local aborted done_reqs drc n

	test_begin "seed 003 stall"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	LOOP_TRY=0
	if ! rerun_once stalled reset_loop run_loop; then
		check_err 1 "setup failed"
		cleanup_all_ns
		log_test "$name"
		return
	fi
	# one more sample of the watch, taken at the stall, then stop it
	n=$(grep -c '^---' "$DIR/watch.txt")
	slowwait 15 _counter_ge $((n + 1)) grep -c '^---' "$DIR/watch.txt"
	kill "$WATCH_PID" 2>/dev/null
	bg_wait "$WATCH_PID"
	ip netns exec "$cli" "$TCPTW_CLI" diagnose --baseline \
		"$TMPDIR_T/seed003.base" >"$DIR/diagnose.txt" 2>&1
	drc=$?
	diagnose "$cli" seed003

	aborted=$(grep -lF -- "$E99" "$DIR"/ab.*.out 2>/dev/null | wc -l)
	done_reqs=$(awk '/^Complete requests:/ { s += $3 } END { print s + 0 }' \
		"$DIR"/ab.*.out)
	diag "ab: $((LAST - 1)) runs completed ($done_reqs requests), run $LAST: $(grep -c . "$DIR/ab.$LAST.out") lines"
	check_eq "ab runs aborted with '$E99'" "$aborted" 1
	check_eq "ab requests completed before the stall == $CONC x runs" \
		"$done_reqs" $(((LAST - 1) * CONC))
	check_gt "connect() calls failed with EADDRNOTAVAIL (strace)" "$EADDR" 0
	check_range "cli TIME_WAIT sockets at the stall (less $TW_AGED runs' aged out)" \
		"$TW_CLI" $((PORTS - CONC * (1 + TW_AGED))) $PORTS
	check_eq "srv TIME_WAIT sockets (ab closed first)" "$TW_SRV" 0
	check_eq "cli TcpExt TWRecycled delta" "$(rl_mib TcpExtTWRecycled)" 0
	check_eq "cli TcpExt TCPTimeWaitOverflow delta" \
		"$(rl_mib TcpExtTCPTimeWaitOverflow)" 0
	check_mod_eq "ConnectPortExhausted == connect() EADDRNOTAVAIL" \
		"$(rl_tw ConnectPortExhausted)" "$EADDR"
	check_mod_eq "cli TwCreated == TcpExt TW delta" "$(rl_tw TwCreated)" \
		"$(rl_mib TcpExtTW)"
	check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
	check_mod_eq "TwReuseDeniedLoopbackOnly (tcp_tw_reuse=2 over a veth) == ConnectPortExhausted" \
		"$(rl_tw TwReuseDeniedLoopbackOnly)" "$(rl_tw ConnectPortExhausted)"
	check_mod_eq "peers $SRV 80 port_exhausted == connect() EADDRNOTAVAIL" \
		"$(rl_peer "$cli" $SRV 80 port_exhausted)" "$EADDR"
	check_run "$DIR/run.json" "$EADDR" 1
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "diagnose names port_exhaustion" \
			"$(has_finding "$TMPDIR_T/seed003.diag.json" port_exhaustion)" 1
		check_eq "diagnose ConnectPortExhausted evidence" \
			"$(evidence "$TMPDIR_T/seed003.diag.json" ConnectPortExhausted)" \
			"$EADDR"
		check_eq "diagnose exit status (a problem found)" "$DIAG_RC" 3
		check_gt "diagnose: TIME_WAIT here as client" \
			"$(ev_val "$TMPDIR_T/seed003.diag.json" "TIME_WAIT here as client")" 0
		check_eq "diagnose: TIME_WAIT here as server" \
			"$(ev_val "$TMPDIR_T/seed003.diag.json" "TIME_WAIT here as server")" 0
		check_eq "diagnose notes that this host closed first" \
			"$(grep -c 'this host closed those connections first' \
				"$TMPDIR_T/seed003.diag.json")" 1
	fi
	ex_file seed-003-watch.txt \
		"Seed 003: ab -k -n $CONC -c $CONC in a loop from a client with ip_local_port_range $SEED_LO $STALL_HI, in the client's netns, up to the stall" \
		"watch -i 2 -c 90" "$DIR/watch.txt" \
		"stopped by the test one sample after the stall"
	ex_file seed-003-diagnose.txt \
		"Seed 003: the same client after the stall (tcptw diagnose --save-baseline before the first ab run)" \
		"diagnose --baseline before" "$DIR/diagnose.txt" "exit status $drc"
	cleanup_all_ns
	log_test "$name"
}

# Control: the report's own command line; nginx closes first.
test_control()
{
	local name="seed_003: control: ab -n $REQS -c $CONC (no keep-alive): nginx closes first, TIME_WAIT on the server, ConnectPortExhausted 0"
	local dir=$TMPDIR_T/control out rc

	test_begin "seed 003 control"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	mkdir -p "$dir"
	if ! seed_pair $CTL_HI || ! nginx_start "$dir"; then
		check_err 1 "setup failed"
		cleanup_all_ns
		log_test "$name"
		return
	fi
	out=$dir/ab.out
	save_baseline "$cli" control
	BEFORE=() AFTER=()
	snap BEFORE
	# under `tcptw run` where the CLI is built: ab's output to $out,
	# the report to run.json
	RUN=()
	[ -x "$TCPTW_CLI" ] && RUN=("$TCPTW_CLI" run -j -o "$dir/run.json" --)
	# 20000 requests take 100 s beside another guest; a starved one
	# made 15555 in 150 s: room for twice that (2048 scaled: 15 s)
	ip netns exec "$cli" timeout 310 "${RUN[@]}" \
		sh -c '"$@" >"$0" 2>&1' "$out" timeout 300 \
		ab -n $REQS -c $CONC -s 10 "http://$SRV/" >"$dir/run.out"
	rc=$?
	snap AFTER
	diag "ab exit $rc: $(grep -E 'Time taken|Complete requests|Failed requests|Requests per|apr_' "$out" | tr -s ' ' | tr '\n' ';')"
	diag "TIME_WAIT sockets: cli $(tw_sockets "$cli") srv $(tw_sockets "$srv"); cli TcpExt TW=$(rl_mib TcpExtTW); srv TwCreated=$(rl_delta s_tw_TwCreated) TcpExt TW=$(rl_delta s_mib_TcpExtTW) TWRecycled=$(rl_delta s_mib_TcpExtTWRecycled) PAWSEstab=$(rl_delta s_mib_TcpExtPAWSEstab)"
	rl_tw_dump
	diagnose "$cli" control
	check_eq "ab exit status" "$rc" 0
	check_eq "ab complete requests" \
		"$(awk '/^Complete requests:/ { print $3 }' "$out")" $REQS
	check_eq "ab failed requests" \
		"$(awk '/^Failed requests:/ { print $3 }' "$out")" 0
	check_eq "ab lines with '$E99'" "$(grep -cF -- "$E99" "$out")" 0
	check_tw_mib "srv TcpExt TW delta == requests (nginx closed first)" \
		"$(rl_delta s_mib_TcpExtTW)" $REQS
	check_range "cli TIME_WAIT sockets (ab's idle connections at exit)" \
		"$(tw_sockets "$cli")" 0 $CONC
	check_mod_eq "ConnectPortExhausted" "$(rl_tw ConnectPortExhausted)" 0
	check_run "$dir/run.json" 0 0
	# up to 20000 TIME_WAIT sockets at ~1100/s: none may go uncounted
	check_mod_eq "srv TwCreated == srv TcpExt TW delta" \
		"$(rl_delta s_tw_TwCreated)" "$(rl_delta s_mib_TcpExtTW)"
	check_mod_eq "peers $SRV 80 port_exhausted" \
		"$(rl_peer "$cli" $SRV 80 port_exhausted)" 0
	# the client's ports were never held
	check_eq "cli diagnose names port_exhaustion" \
		"$(has_finding "$TMPDIR_T/control.diag.json" port_exhaustion)" 0
	cleanup_all_ns
	log_test "$name"
}

tests_run \
	test_stall \
	test_control
