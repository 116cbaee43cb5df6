#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The peers table is bounded (peer_table_size) and a new endpoint takes
# over the least recently updated row:
#
#   cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2 :9001 .. :9012
#   ip_local_port_range 40000 40000, tcp_tw_reuse 0, client closes first
#
# One ephemeral port, two connects to each server port in turn: the first
# succeeds and leaves a TIME_WAIT socket on cli holding port 40000 for that
# destination; the second finds it, is refused (TwReuseDeniedDisabled),
# has no other port and fails with EADDRNOTAVAIL (ConnectPortExhausted).
# So each of the 12 destinations, one after the other, gets a peers row
# with denied_disabled 1 and port_exhausted 1. Asserted:
#  (a) tcptw reloaded with peer_table_size=8 (one bucket of 8 rows): the
#      table holds exactly 8 rows, those of the 8 most recent destinations
#      (9005..9012), each with its exact counts, while the counters count
#      all 12 (== the client's EADDRNOTAVAIL);
#  (b) control, the default size (256): 12 rows, each exact.
#  (c) the hash is seeded per table: peer_table_size=64 (8 buckets), and
#      12 destination ports chosen so that with seed 0 (96e9c3c) they all
#      hash into one bucket, where only 8 fit (a remote peer's way to
#      evict chosen rows): all 12 rows are kept, each exact. The odds that
#      a random seed puts 9 of them in one bucket are about 1 in 10^5.
#  (d) the listeners file is streamed (below, NLSN).
#  (e) a CPU's batch, claimed by a count in task context (a failed
#      connect()), is left alone by a count that interrupts it: the test
#      build's test_table_nest makes NNEST counts to another row
#      (198.18.255.254 port 0) from inside that claim, as a hook in an
#      interrupt would, during NFAIL failed connects to one destination
#      from one CPU. Each goes to its row (the batch found claimed), and
#      the destination's row is exact (== the client's EADDRNOTAVAIL).
# The module is loaded again with its default parameters afterwards.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/reuse_lib.sh"

require_root
require_cmd ip insmod rmmod taskset
require_traffic
require_module

NDST=12
PORT0=9001
NNEST=20
NFAIL=50
SMALL=8
RELOADED=0

# reload_with KO [PARAM=VALUE...] : tcptw as KO, with these parameters.
# RELOADED stays 1 until tcptw is back as TCPTW_KO with its defaults, so
# that test_cleanup restores it then, and only then.
reload_with()
{
	local ko=$1
	shift

	RELOADED=1
	rmmod tcptw && insmod "$ko" "$@" || return 1
	[ "$ko" != "$TCPTW_KO" ] || [ $# -gt 0 ] || RELOADED=0
}

# reload [PARAM=VALUE...] : tcptw.ko again, with these parameters
reload()
{
	reload_with "$TCPTW_KO" "$@"
}

test_cleanup()
{
	[ "$RELOADED" = 1 ] || return 0
	rmmod tcptw 2>/dev/null
	insmod "$TCPTW_KO" || echo "# tables: cannot load $TCPTW_KO again"
}

# run_dsts [PORT...] : fresh cli/srv; two connects to each of the server
# ports (default the NDST from PORT0) in turn; sets OK and FAILED
# (EADDRNOTAVAIL) over all of them.
run_dsts()
{
	local i p out ports=("$@") pids=()

	OK=0
	FAILED=0
	[ ${#ports[@]} -gt 0 ] || for ((i = 0; i < NDST; i++)); do
		ports+=($((PORT0 + i)))
	done
	pair_setup && rl_client_sysctls "$cli" 0 40000 40000 || return 1
	# every server first, all at once (a start costs a second under
	# TCG); then the clients one after the other, in the ports' order
	for p in "${ports[@]}"; do
		server_spawn "$srv" "$TMPDIR_T/server.$p.json" \
			--listen 198.18.0.2:$p --count 0 --timeout 60 --close-first client
		pids+=("$SERVER_PID")
	done
	for p in "${ports[@]}"; do
		server_ready "$srv" "$TMPDIR_T/server.$p.json" ||
			{ check_err 1 "server :$p"; return 1; }
	done
	for p in "${ports[@]}"; do
		out=$TMPDIR_T/client.$p.json
		timeout 30 "$TRAFFIC" client --connect 198.18.0.2:$p --count 2 \
			--netns "$(nspath "$cli")" --close-first client --barrier \
			--connect-timeout 3000 --timeout 20 >"$out"
		check_err $? "client to :$p failed"
		OK=$((OK + $(json_get "$out" ok)))
		FAILED=$((FAILED + $(json_get "$out" errors.EADDRNOTAVAIL)))
	done
	kill "${pids[@]}" 2>/dev/null
	for p in "${pids[@]}"; do
		bg_wait "$p"
	done
	rl_peers_dump "$cli"
}

# check_rows FIRST : the peers rows are those of ports FIRST..last, each
# with denied_disabled 1 and port_exhausted 1
check_rows()
{
	local first=$1 p rows want=$((PORT0 + NDST - $1))

	rows=$(nsx "$cli" awk 'NR > 1' "$TCPTW_PROC/peers" | wc -l)
	check_eq "peers rows" "$rows" "$want"
	for ((p = PORT0; p < PORT0 + NDST; p++)); do
		if [ "$p" -lt "$first" ]; then
			check_eq "peers 198.18.0.2 $p: no row (taken over)" \
				"$(nsx "$cli" awk -v p="$p" '$1 == "198.18.0.2" && $2 == p' \
				"$TCPTW_PROC/peers" | wc -l)" 0
		else
			check_eq "peers 198.18.0.2 $p denied_disabled" \
				"$(rl_peer "$cli" 198.18.0.2 "$p" denied_disabled)" 1
			check_eq "peers 198.18.0.2 $p port_exhausted" \
				"$(rl_peer "$cli" 198.18.0.2 "$p" port_exhausted)" 1
		fi
	done
	check_eq "client ok" "$OK" "$NDST"
	check_eq "client EADDRNOTAVAIL" "$FAILED" "$NDST"
	check_eq "TwReuseDeniedDisabled" \
		"$(tw_counter "$cli" TwReuseDeniedDisabled)" "$NDST"
	check_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
		"$(tw_counter "$cli" ConnectPortExhausted)" "$FAILED"
}

test_small()
{
	local name="tables: peer_table_size=$SMALL, $NDST destinations: the $SMALL most recent rows kept, each exact"

	test_begin "small"
	if [ -z "$TCPTW_KO" ] || [ ! -r "$TCPTW_KO" ]; then
		skip_test "TCPTW_KO not set or unreadable: cannot reload tcptw with peer_table_size=$SMALL"
		log_test "$name"
		return
	fi
	if ! reload peer_table_size=$SMALL; then
		check_err 1 "cannot reload tcptw with peer_table_size=$SMALL"
		log_test "$name"
		return
	fi
	diag "peer_table_size $(cat /sys/module/tcptw/parameters/peer_table_size)"
	if run_dsts; then
		check_rows $((PORT0 + NDST - SMALL))
	fi
	cleanup_all_ns
	if ! reload; then
		check_err 1 "cannot load tcptw again with its defaults"
	fi
	log_test "$name"
}

test_default()
{
	local name="tables: control: default peer_table_size, $NDST destinations: every row kept"

	test_begin "default"
	diag "peer_table_size $(cat /sys/module/tcptw/parameters/peer_table_size)"
	if run_dsts; then
		check_rows $PORT0
	fi
	cleanup_all_ns
	log_test "$name"
}

# colliding_ports N BUCKETS: N ports p of 198.18.0.2 whose peers key
# (struct table_key: in6_addr, __be16 port, u16 family) hashes with the
# kernel's jhash() and seed 0 into bucket 0 of BUCKETS
JHASH_PY='import socket, struct, sys
M = 0xffffffff
def rol(x, k): return ((x << k) | (x >> (32 - k))) & M
def mix(a, b, c):
    a = (a - c) & M; a ^= rol(c, 4);  c = (c + b) & M
    b = (b - a) & M; b ^= rol(a, 6);  a = (a + c) & M
    c = (c - b) & M; c ^= rol(b, 8);  b = (b + a) & M
    a = (a - c) & M; a ^= rol(c, 16); c = (c + b) & M
    b = (b - a) & M; b ^= rol(a, 19); a = (a + c) & M
    c = (c - b) & M; c ^= rol(b, 4);  b = (b + a) & M
    return a, b, c
def final(a, b, c):
    c ^= b; c = (c - rol(b, 14)) & M
    a ^= c; a = (a - rol(c, 11)) & M
    b ^= a; b = (b - rol(a, 25)) & M
    c ^= b; c = (c - rol(b, 16)) & M
    a ^= c; a = (a - rol(c, 4)) & M
    b ^= a; b = (b - rol(a, 14)) & M
    c ^= b; c = (c - rol(b, 24)) & M
    return a, b, c
def jhash(k, seed):
    n = len(k)
    a = b = c = (0xdeadbeef + n + seed) & M
    while n > 12:
        x, y, z = struct.unpack("<III", k[:12])
        a, b, c = mix((a + x) & M, (b + y) & M, (c + z) & M)
        k = k[12:]; n -= 12
    k = k + bytes(12 - n)
    x, y, z = struct.unpack("<III", k)
    if n:
        a, b, c = final((a + x) & M, (b + y) & M, (c + z) & M)
    return c
n, buckets = int(sys.argv[1]), int(sys.argv[2])
addr = socket.inet_pton(socket.AF_INET, "198.18.0.2") + bytes(12)
out = []
for p in range(9001, 60000):
    key = addr + struct.pack("!H", p) + struct.pack("<H", socket.AF_INET)
    if jhash(key, 0) & (buckets - 1) == 0:
        out.append(str(p))
        if len(out) == n:
            break
print(" ".join(out))'

test_seeded()
{
	local name="tables: peer_table_size=64, $NDST destinations that collide with seed 0: all kept"
	local ports p rows

	test_begin "seeded"
	if [ -z "$TCPTW_KO" ] || [ ! -r "$TCPTW_KO" ]; then
		skip_test "TCPTW_KO not set or unreadable: cannot reload tcptw with peer_table_size=64"
		log_test "$name"
		return
	fi
	read -r -a ports <<<"$(python3 -c "$JHASH_PY" "$NDST" 8)"
	diag "ports in one bucket with seed 0: ${ports[*]}"
	check_eq "colliding ports found" "${#ports[@]}" "$NDST"
	if ! reload peer_table_size=64; then
		check_err 1 "cannot reload tcptw with peer_table_size=64"
		log_test "$name"
		return
	fi
	if run_dsts "${ports[@]}"; then
		rows=$(nsx "$cli" awk 'NR > 1' "$TCPTW_PROC/peers" | wc -l)
		check_eq "peers rows" "$rows" "$NDST"
		for p in "${ports[@]}"; do
			check_eq "peers 198.18.0.2 $p port_exhausted" \
				"$(rl_peer "$cli" 198.18.0.2 "$p" port_exhausted)" 1
		done
		check_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$(tw_counter "$cli" ConnectPortExhausted)" "$FAILED"
		check_eq "client EADDRNOTAVAIL" "$FAILED" "$NDST"
	fi
	cleanup_all_ns
	if ! reload; then
		check_err 1 "cannot load tcptw again with its defaults"
	fi
	log_test "$name"
}

# The listeners file streamed: NLSN listening sockets in srv, one SYN
# cookie each (tcp_syncookies=2), so NLSN rows of about 40 bytes each:
# several buffers (listener_table_size=4096: 512 buckets of 8, none
# overflows). Read whole (cat) and in 97-byte reads (dd), the same
# rows, each once, and their cookies add up to SyncookiesSent. The test
# build's test_table_rows_max: the most rows one read section (start to
# stop, under rcu_read_lock()) copied, at most one buffer's worth plus
# the row that did not fit; it was the whole table before the file was
# streamed.
NLSN=300
LSN_PY='
import socket, sys, time
socks = []
for p in range(int(sys.argv[2]), int(sys.argv[2]) + int(sys.argv[3])):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], p))
    s.listen(8)
    socks.append(s)
print("ready", file=sys.stderr, flush=True)
time.sleep(float(sys.argv[4]))'
SYN_PY='
import socket, sys, time
socks = []
for p in range(int(sys.argv[2]), int(sys.argv[2]) + int(sys.argv[3])):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex((sys.argv[1], p))
    socks.append(s)
time.sleep(2)
print(len(socks))'

test_stream()
{
	local name="tables: $NLSN listeners rows streamed: each once, in whole and in 97-byte reads, == SyncookiesSent"
	local rmax=/sys/module/tcptw/parameters/test_table_rows_max
	local out=$TMPDIR_T/lsn page shortest bound

	test_begin "stream"
	if [ -z "${TCPTW_TEST_KO:-}" ] || [ ! -r "$TCPTW_TEST_KO" ]; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	if ! reload_with "$TCPTW_TEST_KO" listener_table_size=4096; then
		check_err 1 "cannot load the test build with listener_table_size=4096"
		log_test "$name"
		return
	fi
	if ! pair_setup || ! nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies=2; then
		check_err 1 "setup failed"
		log_test "$name"
		return
	fi
	bg_start "$out.srv" ip netns exec "$srv" python3 -c "$LSN_PY" \
		198.18.0.2 20000 $NLSN 120
	busywait 60000 grep -q ready "$out.srv.err" ||
		{ check_err 1 "listeners did not start: $(tail -n 2 "$out.srv.err")"; log_test "$name"; return; }
	B=()
	A=()
	ns_snapshot "$srv" B s_
	ip netns exec "$cli" python3 -c "$SYN_PY" 198.18.0.2 20000 $NLSN >"$out.cli"
	ns_snapshot "$srv" A s_
	nsx "$srv" cat "$TCPTW_PROC/listeners" >"$out.cat"
	nsx "$srv" dd if="$TCPTW_PROC/listeners" bs=97 status=none >"$out.dd"
	page=$(getconf PAGESIZE)
	shortest=$(awk 'NR > 1 { l = length($0) + 1; if (!m || l < m) m = l } END { print m + 0 }' "$out.cat")
	bound=$(( shortest ? page / shortest + 1 : 0 ))
	diag "connects $(cat "$out.cli"); rows $(($(wc -l <"$out.cat") - 1)) in $(wc -c <"$out.cat") bytes; most rows in one read section $(cat "$rmax") (bound $bound: $page / $shortest + 1)"
	check_eq "srv TcpExt SyncookiesSent" "$(d s_mib_TcpExtSyncookiesSent)" $NLSN
	check_eq "listeners rows (cat)" "$(awk 'NR > 1' "$out.cat" | wc -l)" $NLSN
	check_eq "distinct listeners rows (cat)" \
		"$(awk 'NR > 1 { print $1, $2 }' "$out.cat" | sort -u | wc -l)" $NLSN
	check_eq "cookie_sent summed (cat) == SyncookiesSent" \
		"$(awk 'NR > 1 { n += $8 } END { print n + 0 }' "$out.cat")" \
		"$(d s_mib_TcpExtSyncookiesSent)"
	# the ages move between the two reads: the rest must not
	check_str "97-byte reads: the same rows, counts and gauges" \
		"$(cut -d' ' -f1-8 "$out.dd" | md5sum)" \
		"$(cut -d' ' -f1-8 "$out.cat" | md5sum)"
	check_range "most rows copied in one read section" "$(cat "$rmax")" 1 "$bound"
	cleanup_all_ns
	if ! reload; then
		check_err 1 "cannot load tcptw again with its defaults"
	fi
	log_test "$name"
}

test_nest()
{
	local name="tables: $NNEST counts from inside a claimed batch, as an interrupt's: each in its row, the batch's own exact"
	local par=/sys/module/tcptw/parameters out=$TMPDIR_T/nest.json
	local p=$PORT0 ok failed nested busy

	test_begin "nest"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	if ! reload_with "$TCPTW_TEST_KO" test_table_nest=$NNEST; then
		check_err 1 "cannot load the test build with test_table_nest=$NNEST"
		log_test "$name"
		return
	fi
	if pair_setup && rl_client_sysctls "$cli" 0 40000 40000 &&
		server_start "$srv" "$TMPDIR_T/server.nest.json" \
			--listen 198.18.0.2:$p --count 0 --timeout 60 \
			--close-first client; then
		# one CPU: every failure after the first finds the batch its own
		timeout 60 taskset -c 0 "$TRAFFIC" client \
			--connect 198.18.0.2:$p --count $((NFAIL + 1)) \
			--netns "$(nspath "$cli")" --close-first client --barrier \
			--connect-timeout 3000 --timeout 50 >"$out"
		check_err $? "client to :$p failed"
		ok=$(json_get "$out" ok)
		failed=$(json_get "$out" errors.EADDRNOTAVAIL)
		nested=$(cat $par/test_table_nested)
		busy=$(cat $par/test_table_busy_seen)
		rl_peers_dump "$cli"
		check_eq "client ok" "$ok" 1
		check_eq "client EADDRNOTAVAIL" "$failed" $NFAIL
		check_eq "counts made from inside a claim" "$nested" $NNEST
		check_eq "counts that found the batch claimed" "$busy" "$nested"
		check_eq "peers 198.18.0.2 $p port_exhausted == client EADDRNOTAVAIL" \
			"$(rl_peer "$cli" 198.18.0.2 $p port_exhausted)" "$failed"
		check_eq "peers 198.18.0.2 $p denied_disabled == client EADDRNOTAVAIL" \
			"$(rl_peer "$cli" 198.18.0.2 $p denied_disabled)" "$failed"
		check_eq "peers 198.18.255.254 0 port_exhausted == counts made inside" \
			"$(rl_peer "$cli" 198.18.255.254 0 port_exhausted)" "$nested"
		check_eq "ConnectPortExhausted == client EADDRNOTAVAIL" \
			"$(tw_counter "$cli" ConnectPortExhausted)" "$failed"
	else
		check_err 1 "topology or server setup failed"
	fi
	cleanup_all_ns
	if ! reload; then
		check_err 1 "cannot load tcptw again with its defaults"
	fi
	log_test "$name"
}

# The test build's self-tests of the table and the event ring
# (kmod/selftest/), run by its insmod: every check ran and passed. The
# count is worked out here from what each check covers: the table's LRU
# case (2, then each of ST_KEYS = TABLE_WAYS + 3 keys: kept or not, and
# for the TABLE_WAYS kept 10 columns and the last update), its batch case
# (10), the ring's lap of N + 5 events (each readable or not, the N kept:
# payload and type) and its busy slot and reset (3). A self-test that
# failed fails the insmod, its check in the kernel log.
test_selftest()
{
	local name="tables: the test build's self-tests at load: table and event ring, every check passed"
	local par=/sys/module/tcptw/parameters ways=8 cols=10 keys n want logged

	test_begin "selftest"
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		log_test "$name"
		return
	fi
	keys=$((ways + 3)) n=64
	want=$((2 + keys + ways * (cols + 1) + 10 + (n + 5) + 2 * n + 3))
	logged=$(dmesg | grep -c "tcptw: self-test: $want checks passed")
	if ! reload_with "$TCPTW_TEST_KO" event_ring_size=$n; then
		check_err 1 "insmod of the test build failed: $(dmesg | grep 'tcptw: self-test' | tail -n 3)"
		reload
		log_test "$name"
		return
	fi
	check_eq "selftest_checks" "$(cat $par/selftest_checks)" "$want"
	check_eq "kernel log: self-test passed, once more" \
		"$(dmesg | grep -c "tcptw: self-test: $want checks passed")" \
		$((logged + 1))
	check_eq "test_table_rows_max after the self-test" \
		"$(cat $par/test_table_rows_max)" 0
	if ! reload; then
		check_err 1 "cannot load tcptw again with its defaults"
	fi
	log_test "$name"
}

tests_run \
	test_selftest \
	test_small \
	test_default \
	test_seeded \
	test_stream \
	test_nest
