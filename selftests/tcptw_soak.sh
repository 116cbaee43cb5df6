#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The soak: tcptw loaded (and reloaded) while the guest is hammered, with
# concurrent readers of every /proc/net/tcptw file throughout. Bounded in
# `make check`; `make soak` (scripts/soak.sh) runs it with TCPTW_SOAK=full.
#
#                                      bounded   full
#  (a) rmmod/insmod cycles                2      1000  under short flows
#      through an nft masquerade (cli masquerades its own traffic to srv)
#      in namespaces made and destroyed per round, so nf_conntrack goes
#      live and away (modprobe -r) while tcptw loads and unloads
#  (b) namespaces created/destroyed       8      2000  each with 2
#      connections over its loopback, from a task in a memory cgroup v2:
#      every creation succeeds, tcptw's bytes show in memory.current, and
#      the bytes tcptw has in use return to their baseline
#  (c) SYN flood with cookies, s          3        60  at a listener:
#      ListenSynCookieSent == SyncookiesSent delta, events bounded by the
#      ring; then SYNs at a closed port: RstSent == OutRsts delta
#  (d) random writes to control      5*10^3     10^5  as root and as an
#      unprivileged user inside a user+net namespace: only EINVAL/EPERM,
#      and no counter moves
#  (e) NAT+PAWS (tcptw_nat_paws.sh)       0        20  runs, all passing
# Ends with one summary line, "# soak: ...", with every figure and the
# number of kernel reports (BUG/WARNING/KASAN/lockdep lines) found.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nft nstat python3 setpriv unshare
require_traffic
require_module

FLOOD=$LIB_DIR/tcptw_flood
[ -x "$FLOOD" ] || make -s -C "$LIB_DIR" tcptw_flood >/dev/null 2>&1
[ -x "$FLOOD" ] || { echo "SKIP: $FLOOD not built"; exit $ksft_skip; }
if [ -z "${TCPTW_KO:-}" ] || [ ! -r "$TCPTW_KO" ]; then
	echo "SKIP: TCPTW_KO not set (the soak reloads the module)"
	exit $ksft_skip
fi

if [ "${TCPTW_SOAK:-}" = full ]; then
	RELOADS=${SOAK_RELOADS:-1000} NETNS=${SOAK_NETNS:-2000}
	FLOOD_S=${SOAK_FLOOD_S:-60} WRITES=${SOAK_WRITES:-100000}
	NAT_PAWS=${SOAK_NAT_PAWS:-20}
else
	# what make check has room for: a reload costs 9-15 s of a guest
	# under TCG, a namespace 2-3 s (10 on a kernel as slow as 5.10
	# under TCG: 40 took 11 minutes there). Enough to run every phase;
	# the suite's reloads under traffic are tcptw_lifecycle.sh's, its
	# namespaces in a memory cgroup tcptw_netns_memory.sh's.
	RELOADS=${SOAK_RELOADS:-2}
	NETNS=${SOAK_NETNS:-8}
	FLOOD_S=${SOAK_FLOOD_S:-3} WRITES=${SOAK_WRITES:-5000}
	NAT_PAWS=${SOAK_NAT_PAWS:-0}
fi
DMESG_START=$(dmesg | wc -l)
REPORTS_RE='BUG:|WARNING:|KASAN:|Oops|general protection|possible circular locking|suspicious RCU usage|inconsistent lock state|sleeping function called from invalid context|possible recursive locking|UBSAN:'
S_RELOADS=0 S_CT=0 S_FLOWS=0 S_NETNS=0 S_SYN=0 S_COOKIES=0 S_RST=0
S_WRITES=0 S_NATPAWS=0
STOP=$TMPDIR_T/stop

# readers: cat every tcptw file of init_net and of the newest namespace
readers_start()
{
	rm -f "$STOP"
	(
		local f ns
		while [ ! -e "$STOP" ]; do
			for f in /proc/net/tcptw/*; do
				[ "${f##*/}" = control ] || cat "$f" >/dev/null 2>&1
			done
			ns=$(ip netns list 2>/dev/null | awk 'NR == 1 { print $1 }')
			[ -n "$ns" ] && ip netns exec "$ns" sh -c \
				'for f in /proc/net/tcptw/*; do [ "${f##*/}" = control ] || cat "$f"; done' \
				>/dev/null 2>&1
		done
	) &
	READERS=$!
	BG_PIDS+=("$READERS")
}

# stops the readers and every other loop that watches $STOP
readers_stop()
{
	touch "$STOP"
	bg_wait "$READERS"
}

# one round of the NAT churn: cli masquerades to srv, 10 flows, teardown,
# then nf_conntrack goes away if nothing holds it
ct_round()
{
	local cli srv out=$TMPDIR_T/ct.$1

	setup_ns cli srv || return 1
	veth_pair "$cli" "$srv" eth0 198.18.4.1/24 198.18.4.2/24 || return 1
	printf '%s\n' "table ip soak {" "chain post {" \
		"type nat hook postrouting priority srcnat; policy accept;" \
		"oifname eth0 meta l4proto tcp masquerade" "}" "}" |
		nsx "$cli" nft -f - || return 1
	busywait 10000 link_up "$cli" eth0 && busywait 10000 link_up "$srv" eth0
	timeout 30 "$TRAFFIC" server --netns "$(nspath "$srv")" \
		--listen 198.18.4.2:8080 --count 10 --timeout 20 \
		--ready-file "$out.ready" >/dev/null 2>&1 &
	# an insmod beside it stops the machine to patch its hooks: a fixed
	# 0.2 s was not always enough for the server to listen
	busywait 20000 test -e "$out.ready"
	timeout 30 "$TRAFFIC" client --connect 198.18.4.2:8080 --count 10 \
		--netns "$(nspath "$cli")" --timeout 20 >"$out" 2>/dev/null
	wait
	echo "$(json_get "$out" ok)" >>"$TMPDIR_T/ct.ok"
	cleanup_ns "$cli" "$srv"
	unload_tree nf_conntrack && echo >>"$TMPDIR_T/ct.unloaded"
	return 0
}

# From 6.14 an fprobe rides the function graph tracer, whose first user
# registers a probe on sched_switch: each reload that attaches or
# detaches tcptw's conntrack fprobes as fgraph's only user patches the
# jump label in __schedule, which the other vCPU runs all the time.
# Under TCG that is where QEMU's stale int3 (docs/testing.md, Known
# limits) ended two 7.2 soaks, at their 511th and 596th reload. One fprobe
# exit event of the soak's own, on a syscall nothing here makes, keeps
# fgraph registered through the cycles, so that they attach and detach
# tcptw's hooks as before without rewriting __schedule each time.
TRACEFS=/sys/kernel/tracing
FGRAPH_PIN=

fgraph_pin_start()
{
	local kv

	kv=$(uname -r | cut -d. -f1-2)
	[ "$(printf '%s\n' 6.14 "$kv" | sort -V | head -n 1)" = 6.14 ] || return 0
	[ -e $TRACEFS/dynamic_events ] || mount -t tracefs nodev $TRACEFS 2>/dev/null
	if echo 'f:tcptw_soak/pin __x64_sys_sync%return' \
		>>$TRACEFS/dynamic_events 2>/dev/null &&
	   echo 1 >$TRACEFS/events/tcptw_soak/pin/enable 2>/dev/null; then
		FGRAPH_PIN=1
		diag "fgraph kept registered through the reloads (an fprobe exit event on __x64_sys_sync)"
	else
		diag "fgraph not kept registered (no fprobe event here): each reload patches __schedule"
	fi
}

fgraph_pin_stop()
{
	[ -n "$FGRAPH_PIN" ] || return 0
	echo 0 >$TRACEFS/events/tcptw_soak/pin/enable
	echo '-:tcptw_soak/pin' >>$TRACEFS/dynamic_events
	FGRAPH_PIN=
}

test_reload()
{
	local name="soak: $RELOADS rmmod/insmod cycles under NAT churn" i ok=0 churn

	test_begin "$name"
	: >"$TMPDIR_T/ct.ok"
	: >"$TMPDIR_T/ct.unloaded"
	fgraph_pin_start
	readers_start
	(
		for ((i = 1; i <= RELOADS * 2 + 10; i++)); do
			[ -e "$STOP" ] && break
			ct_round "$i"
		done
	) &
	churn=$!
	BG_PIDS+=("$churn")
	for ((i = 1; i <= RELOADS; i++)); do
		timeout 120 rmmod tcptw || { diag "rmmod #$i failed"; break; }
		timeout 120 insmod "$TCPTW_KO" || { diag "insmod #$i failed"; break; }
		ok=$((ok + 1))
	done
	readers_stop	# and the churn
	bg_wait "$churn"
	fgraph_pin_stop
	S_RELOADS=$ok
	S_CT=$(wc -l <"$TMPDIR_T/ct.unloaded")
	S_FLOWS=$(awk '{ s += $1 } END { print s + 0 }' "$TMPDIR_T/ct.ok")
	diag "$ok cycles; $(wc -l <"$TMPDIR_T/ct.ok") NAT rounds, $S_FLOWS flows ok, nf_conntrack unloaded $S_CT times"
	check_eq "rmmod/insmod cycles" "$ok" "$RELOADS"
	check_gt "flows through the NAT" "$S_FLOWS" 0
	grep -q '^tcptw ' /proc/modules || timeout 120 insmod "$TCPTW_KO"
	check_eq "module loaded at the end" \
		"$(grep -c '^tcptw ' /proc/modules)" 1
	log_test "$name"
}

# bytes_at_most N : tcptw's bytes in use over all namespaces are N or fewer
bytes_at_most()
{
	[ "$(tcptw_bytes_used)" -le "$1" ]
}

test_netns()
{
	local name="soak: $NETNS namespaces made and destroyed in a memory cgroup"
	local cg_root=/sys/fs/cgroup cg i b ns ok=0 u0 u1 c0 cmax=0 c per pids

	test_begin "$name"
	if [ "$(stat -fc %T "$cg_root" 2>/dev/null)" != cgroup2fs ]; then
		cg_root=$TMPDIR_T/cg
		mkdir -p "$cg_root" && mount -t cgroup2 none "$cg_root"
	fi
	echo +memory >"$cg_root/cgroup.subtree_control" 2>/dev/null
	cg=$cg_root/tcptw-soak-$$
	if ! mkdir -p "$cg" || [ ! -e "$cg/memory.current" ]; then
		skip_test "no cgroup v2 memory controller"
		log_test "$name"
		return
	fi
	echo 1G >"$cg/memory.max"
	u0=$(tcptw_bytes_settled)
	c0=$(cat "$cg/memory.current")
	readers_start
	for ((b = 0; b < NETNS; b += 10)); do
		for ((i = b + 1; i <= b + 10 && i <= NETNS; i++)); do
			echo "netns add soak-$i"
		done | bash -c 'echo $$ >"$1/cgroup.procs" && exec ip -force -b -' sh "$cg"
		# the ten namespaces' connections at once: a Python client
		# and server per namespace, most of a namespace's time
		pids=()
		for ((i = b + 1; i <= b + 10 && i <= NETNS; i++)); do
			ns=soak-$i
			NS_LIST+=("$ns")
			rm -f "$TMPDIR_T/ns.$i.ready" "$TMPDIR_T/ns.$i.json"
			ip netns exec "$ns" sh -c '
				ip link set lo up &&
				"$1" server --listen 127.0.0.1:80 --count 2 --timeout 20 \
					--ready-file "$2" >/dev/null &
				i=0
				while [ ! -e "$2" ] && [ $i -lt 400 ]; do
					sleep 0.05; i=$((i + 1))
				done
				"$1" client --connect 127.0.0.1:80 --count 2 --timeout 20
				wait' \
				sh "$TRAFFIC" "$TMPDIR_T/ns.$i.ready" \
				>"$TMPDIR_T/ns.$i.json" 2>/dev/null &
			pids+=($!)
		done
		wait "${pids[@]}"
		for ((i = b + 1; i <= b + 10 && i <= NETNS; i++)); do
			[ "$(json_get "$TMPDIR_T/ns.$i.json" ok)" = 2 ] && ok=$((ok + 1))
		done
		c=$(cat "$cg/memory.current")
		[ "$c" -gt "$cmax" ] && cmax=$c
		[ -z "$per" ] && per=$(ip netns exec "soak-$((b + 1))" awk \
			'$1 == "events" || $1 == "peers" || $1 == "listeners" { s += $4 } END { print s + 0 }' \
			"$TCPTW_PROC/status")
		for ((i = b + 1; i <= b + 10 && i <= NETNS; i++)); do
			echo "netns del soak-$i"
		done | ip -force -b - 2>/dev/null
		NS_LIST=()
	done
	readers_stop
	S_NETNS=$ok
	diag "namespaces with both connections ok: $ok of $NETNS; memory.current peak $cmax (start $c0), tcptw per netns $per bytes"
	check_eq "namespaces created and connected" "$ok" "$NETNS"
	check_gt "cgroup memory.current peak >= 10 namespaces of tcptw - 1" \
		$((cmax - c0)) $((10 * per - 1))
	# back to the baseline, or below it: a namespace an earlier test
	# deleted may be freed only now (5.10 under TCG: minutes later)
	slowwait 180 bytes_at_most "$u0"
	u1=$(tcptw_bytes_used)
	[ "$u1" -lt "$u0" ] &&
		diag "bytes in use $u1 < baseline $u0: an earlier namespace was freed meanwhile"
	check_eq "tcptw bytes in use not above the baseline ($u0)" \
		"$([ "$u1" -le "$u0" ] && echo 1 || echo "$u1")" 1
	rmdir "$cg" 2>/dev/null
	log_test "$name"
}

# wire_out NAME : packets of srv's nft counter NAME (test_floods)
wire_out()
{
	nsx "$srv" nft list counter inet w "$1" |
		awk '/packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

test_floods()
{
	local name="soak: ${FLOOD_S} s SYN flood with cookies, ${FLOOD_S} s RST flood"
	local cli srv out=$TMPDIR_T/flood c0 c1 m0 m1 r0 r1 o0 o1 ev spid
	local w0 w1 x0 x1 x2

	test_begin "$name"
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.5.1/24 198.18.5.2/24 &&
		busywait 3000 link_up "$cli" eth0 && busywait 3000 link_up "$srv" eth0 ||
		{ check_err 1 "setup failed"; log_test "$name"; return; }
	nsx "$srv" sysctl -qw net.ipv4.tcp_syncookies=2
	# the flooder's own stack answers the SYN-ACKs and RSTs: drop them
	printf '%s\n' "table inet f {" "chain in {" \
		"type filter hook input priority 0; policy drop;" "}" "}" |
		nsx "$cli" nft -f -
	# the wire's truth: what srv sends, counted by netfilter (with
	# tcp_syncookies=2 every SYN-ACK is a cookie)
	printf '%s\n' "table inet w {" "counter synack {}" "counter rst {}" \
		"chain out {" "type filter hook output priority 0; policy accept;" \
		"tcp flags & (syn | ack) == syn | ack counter name synack" \
		"tcp flags & rst == rst counter name rst" "}" "}" |
		nsx "$srv" nft -f - || check_err 1 "nft output counters"
	server_start "$srv" "$out.srv" --listen 198.18.5.2:8080 --no-accept \
		--timeout $((FLOOD_S * 2 + 60)) || check_err 1 "server did not start"
	spid=$SERVER_PID
	readers_start
	# srv's counters and MIBs before, between and after the floods
	declare -A F0=() F1=() F2=()
	ns_snapshot "$srv" F0 ""
	w0=$(wire_out synack) x0=$(wire_out rst)
	"$FLOOD" --src 198.18.5.1 --dst 198.18.5.2:8080 --seconds "$FLOOD_S" \
		--netns "$(nspath "$cli")" >"$out.syn"
	sleep 0.5
	ns_snapshot "$srv" F1 ""
	w1=$(wire_out synack) x1=$(wire_out rst)
	"$FLOOD" --src 198.18.5.1 --dst 198.18.5.2:9 --seconds "$FLOOD_S" \
		--netns "$(nspath "$cli")" >"$out.rst"
	sleep 0.5
	ns_snapshot "$srv" F2 ""
	x2=$(wire_out rst)
	c0=${F0[tw_ListenSynCookieSent]} c1=${F1[tw_ListenSynCookieSent]}
	m0=${F0[mib_TcpExtSyncookiesSent]} m1=${F1[mib_TcpExtSyncookiesSent]}
	r0=${F1[tw_RstSent]} r1=${F2[tw_RstSent]}
	o0=${F1[mib_TcpOutRsts]} o1=${F2[mib_TcpOutRsts]}
	readers_stop
	ev=$(nsx "$srv" cat "$TCPTW_PROC/events" | wc -l)
	S_SYN=$(json_get "$out.syn" sent)
	S_COOKIES=$((m1 - m0))
	S_RST=$(json_get "$out.rst" sent)
	diag "SYN flood: $(cat "$out.syn"); SyncookiesSent +$S_COOKIES, ListenSynCookieSent +$((c1 - c0))"
	diag "RST flood: $(cat "$out.rst"); OutRsts +$((o1 - o0)), RstSent +$((r1 - r0)); events lines $ev"
	check_gt "SyncookiesSent delta" "$S_COOKIES" 0
	check_eq "SyncookiesSent delta == SYN-ACKs srv sent (nft)" "$S_COOKIES" $((w1 - w0))
	check_eq "ListenSynCookieSent == SYN-ACKs srv sent (nft)" $((c1 - c0)) $((w1 - w0))
	check_eq "RSTs srv sent during the SYN flood (nft)" $((x1 - x0)) 0
	check_gt "OutRsts delta" $((o1 - o0)) 0
	check_eq "OutRsts delta == RSTs srv sent (nft)" $((o1 - o0)) $((x2 - x1))
	check_eq "RstSent == RSTs srv sent (nft)" $((r1 - r0)) $((x2 - x1))
	check_eq "events lines <= ring size (1024)" \
		"$([ "$ev" -le 1024 ] && echo 1 || echo 0)" 1
	kill "$spid" 2>/dev/null
	bg_wait "$spid"
	cleanup_all_ns
	log_test "$name"
}

# WRITES random writes to FILE: prints "errno:count ..." of the outcomes
WRITES_PY='import errno, os, random, sys
path, n = sys.argv[1], int(sys.argv[2])
random.seed(int(sys.argv[3]))
words = [b"reset", b"reset\n", b"rese", b"RESET", b"reset ", b"\n", b"\0"]
seen = {}
try:
    fd = os.open(path, os.O_WRONLY)
except OSError as e:
    print("%s:%d" % (errno.errorcode.get(e.errno, str(e.errno)), n))
    sys.exit(0)
for i in range(n):
    k = random.random()
    if k < 0.3:
        d = bytes(random.getrandbits(8) for _ in range(random.randint(0, 64)))
    elif k < 0.6:
        d = random.choice(words) + random.choice(words)[:random.randint(0, 3)]
    else:
        d = random.choice(words) + bytes(random.getrandbits(8) for _ in range(random.randint(1, 8)))
    if d in (b"reset", b"reset\n"):
        d = b"reset\x00"
    try:
        os.write(fd, d)
        r = "OK"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    seen[r] = seen.get(r, 0) + 1
print(" ".join("%s:%d" % kv for kv in sorted(seen.items())))'

test_control()
{
	local name="soak: $WRITES random control writes: only EINVAL/EPERM, no counter moves"
	local cli srv before r1 r2 r3 n=$((WRITES / 2))

	test_begin "$name"
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.6.1/24 198.18.6.2/24 &&
		busywait 3000 link_up "$cli" eth0 ||
		{ check_err 1 "setup failed"; log_test "$name"; return; }
	# something to lose: RSTs counted in srv
	"$FLOOD" --src 198.18.6.1 --dst 198.18.6.2:9 --count 20 \
		--netns "$(nspath "$cli")" >/dev/null
	sleep 0.3
	before=$(nsx "$srv" cat "$TCPTW_PROC/counters")
	r1=$(nsx "$srv" python3 -c "$WRITES_PY" "$TCPTW_PROC/control" "$n" 1)
	r2=$(ip netns exec "$srv" setpriv --reuid=65534 --regid=65534 \
		--clear-groups python3 -c "$WRITES_PY" "$TCPTW_PROC/control" \
		$((n / 2)) 2 2>&1)
	# an unprivileged user in a user+net namespace of its own
	if setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn true \
		2>/dev/null; then
		r3=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
			unshare -Urn python3 -c "$WRITES_PY" "$TCPTW_PROC/control" \
			$((n / 2)) 3 2>&1)
	else
		r3="EINVAL:$((n / 2))"
		diag "unprivileged user namespaces are disabled here: that part not run"
	fi
	diag "root: $r1 | nobody: $r2 | nobody in its own user+net ns: $r3"
	check_eq "root: only EINVAL" \
		"$([ "$r1" = "EINVAL:$n" ] && echo 1 || echo 0)" 1
	# EACCES: the VFS refused the open before tcptw's capability check;
	# EINVAL: /proc refuses an empty write before calling tcptw
	check_eq "nobody: only EPERM (or EINVAL for an empty write, EACCES at open)" \
		"$(echo "$r2" | tr ' ' '\n' | grep -cvE '^(EPERM|EINVAL|EACCES):')" 0
	check_gt "nobody: EPERM" "$(echo "$r2" | tr ' ' '\n' |
		sed -n 's/^EPERM://p')" $((n / 4))
	check_eq "nobody in its own user+net ns: only EINVAL" \
		"$([ "$r3" = "EINVAL:$((n / 2))" ] && echo 1 || echo 0)" 1
	check_gt "srv RstSent before the writes" "$(tw_counter "$srv" RstSent)" 0
	check_eq "srv counters unchanged" \
		"$([ "$(nsx "$srv" cat "$TCPTW_PROC/counters")" = "$before" ] && echo 1 || echo 0)" 1
	S_WRITES=$((n + n / 2 * 2))
	cleanup_all_ns
	log_test "$name"
}

test_nat_paws()
{
	local name="soak: tcptw_nat_paws.sh $NAT_PAWS times" i ok=0 log t0

	test_begin "$name"
	if [ "$NAT_PAWS" = 0 ]; then
		skip_test "bounded soak: tcptw_nat_paws.sh runs once in the suite"
		log_test "$name"
		return
	fi
	for ((i = 1; i <= NAT_PAWS; i++)); do
		log=$TMPDIR_T/natpaws.$i
		t0=$SECONDS
		(cd "$LIB_DIR" && timeout 900 ./tcptw_nat_paws.sh) >"$log" 2>&1 &&
			ok=$((ok + 1))
		# its four cases' times: a case run once more takes longer
		diag "run $i: $ok of $i passed; $((SECONDS - t0)) s (cases: $(sed -n \
			's/^# nat_paws: .*: \([0-9]*\) s$/\1/p' "$log" |
			paste -sd, -) s; main case's $(grep -m 1 -o \
			"RSTs to srv: .*" "$log"))"
		# a failed run whole (its diag lines and srv's packet trace):
		# its log dies with the guest
		grep -q '^not ok' "$log" && sed "s/^/#   run $i: /" "$log"
	done
	S_NATPAWS=$ok
	check_eq "NAT+PAWS runs passed" "$ok" "$NAT_PAWS"
	log_test "$name"
}

# test_reports : the kernel log since the start, then the summary line
test_reports()
{
	test_begin "reports"
	REPORTS=$(dmesg | tail -n +$((DMESG_START + 1)) | grep -cE "$REPORTS_RE")
	[ "$REPORTS" -gt 0 ] && dmesg | tail -n +$((DMESG_START + 1)) |
		grep -E -A6 "$REPORTS_RE" | head -n 40 | sed 's/^/#   /'
	check_eq "kernel reports (BUG/WARNING/KASAN/lockdep) during the soak" "$REPORTS" 0
	log_test "soak: kernel log clean"
	diag "soak: kernel $(uname -r) $(date -u +%F): reloads=$S_RELOADS/$RELOADS nf_conntrack_unloads=$S_CT nat_flows=$S_FLOWS netns=$S_NETNS/$NETNS syn_flood=${S_SYN}pkts cookies=$S_COOKIES rst_flood=${S_RST}pkts control_writes=$S_WRITES nat_paws=$S_NATPAWS/$NAT_PAWS reports=$REPORTS"
}

tests_run \
	test_reload \
	test_netns \
	test_floods \
	test_control \
	test_nat_paws \
	test_reports
