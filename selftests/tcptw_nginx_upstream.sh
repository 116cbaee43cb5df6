#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Seed 004: nginx in front of an upstream on 127.0.0.1:9000 logs
# "(99: Cannot assign requested address) while connecting to upstream"
# once its ephemeral range is small; tcp_tw_reuse=1 is the folk fix.
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:80  nginx (1 worker)
#   wrk -c 20 -t 2 -d 5s                 |  proxy_pass, no upstream keepalive
#                                        v
#                                 127.0.0.1:9000 upstream (python3, HTTP/1.1
#                                 keep-alive, never closes first)
#   srv: ip_local_port_range 20000 20049, tcp_timestamps 1
#
# The upstream answers with a Content-Length and waits for nginx to close,
# like php-fpm does for FastCGI, so every upstream connection leaves a
# TIME_WAIT socket in srv holding one of its 50 ports (an upstream that
# closes first keeps TIME_WAIT on its own side and nothing fails).
# Asserted (fresh namespaces per run, so srv's tcptw counters start at 0):
#  1. tcp_tw_reuse=0: nginx logs E99 lines; ConnectPortExhausted == the
#     number of those lines (each is one failed connect(), counted after
#     nginx has stopped), TwReuseDeniedDisabled == ConnectPortExhausted,
#     TwReuseGranted 0, and
#     the peers row "127.0.0.1 9000" has port_exhausted == E99 lines.
#     wrk's non-2xx count may be a little lower than E99 (requests in
#     flight when wrk stops are logged but not counted): 0 <= E99 - non2xx
#     <= connections.
#  2. Remedy, upstream keepalive 32 >= wrk's 20 connections (tcp_tw_reuse
#     0): no error, ConnectPortExhausted 0 (the control).
#  3. tcp_tw_reuse=1 alone: errors remain. TwReuseGranted == TcpExt
#     TWRecycled delta > 0 and ConnectPortExhausted == E99 lines > 0: reuse
#     only lifts the ceiling to one connect per port per second, 50/s here
#     (TWRecycled <= 50 per second of the run, upstream connects
#     TcpActiveOpens <= the 50 fresh ports + 50 per second). Not asserted:
#     that most requests fail, which depends on the rate wrk reaches on
#     the host.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip nstat ss nginx wrk
require_module

PYTHON=$(command -v /usr/bin/python3 python3 | head -n1)
if [ -z "$PYTHON" ]; then
	echo "SKIP: python3 not installed"
	exit $ksft_skip
fi

WRK_CONNS=20
WRK_SECS=5
E99_MSG='(99: Cannot assign requested address)'
# tcp_tw_reuse_delay (where it exists) at its default: one reuse per port
# per second, as on kernels that compare CLOCK_MONOTONIC seconds.
RL_REUSE_DELAY_MS=1000

# A keep-alive HTTP/1.1 upstream that never closes a connection first.
write_upstream()
{
	cat >"$TMPDIR_T/upstream.py" <<'EOF'
import asyncio, sys

BODY = b"ok\n"
RESP = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        b"Content-Length: %d\r\n\r\n" % len(BODY)) + BODY

async def serve(reader, writer):
    buf = b""
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break          # the proxy closed first: TIME_WAIT is its
            buf += data
            while b"\r\n\r\n" in buf:
                _, buf = buf.split(b"\r\n\r\n", 1)
                writer.write(RESP)
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()

async def main():
    srv = await asyncio.start_server(serve, "127.0.0.1", 9000, backlog=1024)
    open(sys.argv[1], "w").close()
    async with srv:
        await srv.serve_forever()

asyncio.run(main())
EOF
}

# write_conf DIR KEEPALIVE : nginx.conf in DIR; KEEPALIVE 0 = none.
write_conf()
{
	local dir=$1 ka=$2 up_ka= loc_ka=

	if [ "$ka" -gt 0 ]; then
		# keepalive_requests: 1000 by default, then nginx closes the
		# connection first and it takes a port into TIME_WAIT
		up_ka="keepalive $ka; keepalive_requests 10000000;"
		loc_ka='proxy_http_version 1.1; proxy_set_header Connection "";'
	fi
	nginx_conf_write "$dir" off 1024 error <<EOF
	# never close wrk's connections first (no TIME_WAIT on :80 in srv)
	keepalive_requests 10000000;
	keepalive_timeout 120s;
	upstream app {
		server 127.0.0.1:9000;
		$up_ka
	}
	server {
		listen 198.18.0.2:80 backlog=1024;
		location / {
			proxy_pass http://app;
			$loc_ka
		}
	}
EOF
}

listening()
{
	nsx "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# run_nginx NAME TW_REUSE KEEPALIVE : fresh namespaces, upstream, nginx,
# wrk; sets E99, NON2XX, REQS, ELAPSED and BEFORE/AFTER of srv (taken
# after nginx stopped).
run_nginx()
{
	local name=$1 reuse=$2 ka=$3 dir=$TMPDIR_T/$1 t0 t1 wrk_out

	E99= NON2XX= REQS= ELAPSED=
	if ! pair_setup || ! rl_client_sysctls "$srv" "$reuse" ||
	   ! rl_sysctl "$srv" net.core.somaxconn=1024; then
		check_err 1 "setup failed"
		return 1
	fi
	write_conf "$dir" "$ka"
	bg_start "$dir/upstream.out" ip netns exec "$srv" "$PYTHON" \
		"$TMPDIR_T/upstream.py" "$dir/upstream.ready"
	if ! busywait 15000 test -e "$dir/upstream.ready"; then
		check_err 1 "upstream did not start: $(cat "$dir/upstream.out.err")"
		return 1
	fi
	BEFORE=() AFTER=()
	rl_snap "$srv" BEFORE
	bg_start "$dir/nginx.out" timeout 60 ip netns exec "$srv" nginx \
		-p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
	NGINX_PID=$BG_PID
	if ! busywait 15000 listening "$srv" 80; then
		check_err 1 "nginx did not start: $(cat "$dir/nginx.out.err" "$dir/error.log")"
		return 1
	fi
	wrk_out=$dir/wrk.out
	t0=$(date +%s%3N)
	ip netns exec "$cli" timeout 30 wrk -c $WRK_CONNS -t 2 \
		-d ${WRK_SECS}s --timeout 2s http://198.18.0.2/ >"$wrk_out" 2>&1
	check_err $? "wrk failed: $(cat "$wrk_out")"
	t1=$(date +%s%3N)
	ELAPSED=$(( (t1 - t0 + 999) / 1000 ))
	# nginx stopped: no connect() in flight, the log is complete
	kill -TERM "$NGINX_PID" 2>/dev/null
	bg_wait "$NGINX_PID"
	rl_snap "$srv" AFTER
	E99=$(grep -cF -- "$E99_MSG" "$dir/error.log")
	NON2XX=$(awk '/Non-2xx or 3xx responses:/ { v = $NF } END { print v + 0 }' "$wrk_out")
	REQS=$(awk '/requests in/ { print $1 }' "$wrk_out")
	diag "wrk: $REQS requests in ${ELAPSED}s, non-2xx $NON2XX; nginx E99 lines: $E99; other error lines: $(grep -cvF -- "$E99_MSG" "$dir/error.log")"
	grep -vF -- "$E99_MSG" "$dir/error.log" | head -n 3 | sed 's/^/#   error.log: /'
	diag "srv TcpActiveOpens=$(rl_mib TcpActiveOpens) TcpExt TW=$(rl_mib TcpExtTW) TWRecycled=$(rl_mib TcpExtTWRecycled) TIME_WAIT sockets=$(tw_sockets "$srv")"
	rl_tw_dump
	rl_peers_dump "$srv"
}

test_exhausted()
{
	local name="nginx_upstream: tcp_tw_reuse=0, 50 ports: ConnectPortExhausted == nginx's E99 log lines"

	test_begin "nginx exhausted"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if run_nginx exhausted 0 0; then
		check_gt "nginx E99 log lines" "$E99" 0
		check_gt "wrk non-2xx" "$NON2XX" 0
		check_eq "E99 lines - non-2xx within [0, $WRK_CONNS]" \
			"$(( E99 - NON2XX >= 0 && E99 - NON2XX <= WRK_CONNS ))" 1
		check_eq "srv TcpExt TWRecycled delta" \
			"$(rl_mib TcpExtTWRecycled)" 0
		check_mod_eq "ConnectPortExhausted == E99 log lines" \
			"$(rl_tw ConnectPortExhausted)" "$E99"
		check_mod_eq "TwReuseDeniedDisabled == ConnectPortExhausted" \
			"$(rl_tw TwReuseDeniedDisabled)" \
			"$(rl_tw ConnectPortExhausted)"
		check_mod_eq "TwReuseGranted" "$(rl_tw TwReuseGranted)" 0
		check_mod_eq "peers 127.0.0.1 9000 port_exhausted == E99 log lines" \
			"$(rl_peer "$srv" 127.0.0.1 9000 port_exhausted)" "$E99"
		check_mod_eq "peers 127.0.0.1 9000 denied_disabled == TwReuseDeniedDisabled" \
			"$(rl_peer "$srv" 127.0.0.1 9000 denied_disabled)" \
			"$(rl_tw TwReuseDeniedDisabled)"
	fi
	cleanup_all_ns
	log_test "$name"
}

test_keepalive()
{
	local name="nginx_upstream: control: upstream keepalive 32 >= $WRK_CONNS connections -> no error, ConnectPortExhausted 0"

	test_begin "nginx keepalive"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if run_nginx keepalive 0 32; then
		check_gt "wrk requests" "$REQS" 0
		check_eq "wrk non-2xx" "$NON2XX" 0
		check_eq "nginx E99 log lines" "$E99" 0
		check_mod_eq "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_mod_eq "peers 127.0.0.1 9000 port_exhausted" \
			"$(rl_peer "$srv" 127.0.0.1 9000 port_exhausted)" 0
	fi
	cleanup_all_ns
	log_test "$name"
}

test_tw_reuse_alone()
{
	local name="nginx_upstream: tcp_tw_reuse=1 alone: errors remain, TwReuseGranted == TWRecycled <= 50/s, ConnectPortExhausted == E99"
	local rec

	test_begin "nginx tw_reuse=1"
	if ! probe_gate inet_twsk_deschedule_put inet_sock_set_state inet_bhash2_reset_saddr; then
		log_test "$name"
		return
	fi
	if run_nginx reuse1 1 0; then
		rec=$(rl_mib TcpExtTWRecycled)
		check_gt "nginx E99 log lines" "$E99" 0
		check_gt "srv TcpExt TWRecycled delta" "$rec" 0
		check_eq "TWRecycled delta <= $NPORTS x (${ELAPSED}s + 1)" \
			"$(( rec <= NPORTS * (ELAPSED + 1) ))" 1
		# the ceiling on upstream connects, whatever wrk's rate: the
		# 50 fresh ports, then one reuse per port per second
		check_eq "srv TcpActiveOpens delta <= $NPORTS x (${ELAPSED}s + 2)" \
			"$(( $(rl_mib TcpActiveOpens) <= NPORTS * (ELAPSED + 2) ))" 1
		check_mod_eq "TwReuseGranted == TWRecycled delta" \
			"$(rl_tw TwReuseGranted)" "$rec"
		check_mod_gt "ConnectPortExhausted" \
			"$(rl_tw ConnectPortExhausted)" 0
		check_mod_eq "ConnectPortExhausted == E99 log lines" \
			"$(rl_tw ConnectPortExhausted)" "$E99"
		check_mod_gt "TwReuseDeniedTooRecent" \
			"$(rl_tw TwReuseDeniedTooRecent)" 0
		check_mod_eq "peers 127.0.0.1 9000 reuse_granted == TwReuseGranted" \
			"$(rl_peer "$srv" 127.0.0.1 9000 reuse_granted)" \
			"$(rl_tw TwReuseGranted)"
		check_mod_eq "peers 127.0.0.1 9000 port_exhausted == E99 log lines" \
			"$(rl_peer "$srv" 127.0.0.1 9000 port_exhausted)" "$E99"
	fi
	cleanup_all_ns
	log_test "$name"
}

write_upstream
tests_run \
	test_exhausted \
	test_keepalive \
	test_tw_reuse_alone
