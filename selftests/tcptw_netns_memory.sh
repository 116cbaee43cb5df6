#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Per-namespace memory: charged, bounded, never a reason for a namespace
# creation to fail. No topology but a veth pair in (b):
#
#  (a) charged: tcptw reloaded with event_ring_size=65536 (5 MB rings);
#      10 namespaces created from a task in a memory cgroup (v2). The
#      cgroup's memory.current grows by at least 10 x the bytes each
#      namespace's status file reports (it grew by ~1.5 MB, the kernel's
#      own share, before tcptw charged anything).
#  (b) limited: event_ring_size=1048576 (an 84 MB ring per namespace) and
#      mem_max_mb=4096, NLIM (10) namespaces from a cgroup with
#      memory.max=64M, 13 times what it allows: all exist, none OOM-killed, each status says events "nomem" and
#      peers/listeners "ok"; two of them, a veth apart, still count: srv
#      RstSent == srv OutRsts delta == 5 refused connects.
#  (c) the largest sizes (1048576 events, rows): 500 `ip netns add` (150
#      on 5.10, whose netns teardown is slow under TCG) in a
#      2 GB guest all succeed and the guest stays up; the module-wide
#      budget (1/32 of RAM) refuses what does not fit ("budget"); after
#      the namespaces are gone, tcptw holds what the live namespaces
#      hold, no more.
#  (d) every /proc/net/tcptw file of a namespace opened and half read
#      while a writer there counts, then the namespace deleted: the open
#      files keep it and tcptw's state alive, each reads on to its end,
#      and tcptw's bytes return to what the live namespaces hold once
#      they are closed;
#      the files of init_net and a namespace held open across rmmod:
#      every read fails (EIO), none crashes.
# The module is reloaded with $TCPTW_KO's default parameters at the end.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip python3
require_module

PY=/usr/bin/python3
CG=
CG_ROOT=/sys/fs/cgroup

reload()
{
	grep -q '^tcptw ' /proc/modules && rmmod tcptw
	timeout 120 insmod "$TCPTW_KO" "$@"
}

# status_field NS PART COLUMN(2 state, 3 entries, 4 bytes)
status_field()
{
	nsx "$1" awk -v p="$2" -v c="$3" '$1 == p { print $c }' \
		"$TCPTW_PROC/status" 2>/dev/null
}

ns_bytes()
{
	nsx "$1" awk '$1 == "events" || $1 == "peers" || $1 == "listeners" { b += $4 }
		END { print b + 0 }' "$TCPTW_PROC/status"
}

# a memory cgroup of its own (tcptw-mem-$$-NAME) under the v2 hierarchy,
# in $CG
cgroup_setup()
{
	if [ "$(stat -fc %T "$CG_ROOT" 2>/dev/null)" != cgroup2fs ]; then
		CG_ROOT=$TMPDIR_T/cg
		mkdir -p "$CG_ROOT"
		mount -t cgroup2 none "$CG_ROOT" || return 1
	fi
	grep -qw memory "$CG_ROOT/cgroup.controllers" || return 1
	echo +memory >"$CG_ROOT/cgroup.subtree_control" 2>/dev/null
	CG=$CG_ROOT/tcptw-mem-$$-$1
	mkdir -p "$CG" && [ -e "$CG/memory.current" ]
}

cgroup_cleanup()
{
	[ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG" 2>/dev/null
	CG=
}

# in_cgroup CMD...: run CMD in $CG
in_cgroup()
{
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@"
}

# live_netns_bytes: what the namespaces alive now hold (rings and tables),
# summed over each one once: those a process is in and those named in
# /run/netns. A namespace deleted earlier but not yet freed by the kernel's
# cleanup worker is in neither, and is still in tcptw_bytes_used until then.
live_netns_bytes()
{
	local f ino seen=" " sum=0 b
	local rows='NR > 2 && NR < 6 { s += $4 } END { print s + 0 }'

	for f in /proc/[0-9]*/ns/net /run/netns/*; do
		ino=$(stat -L -c %i "$f" 2>/dev/null) || continue
		case "$seen" in *" $ino "*) continue ;; esac
		seen+="$ino "
		case "$f" in
		/run/netns/*) b=$(nsx "${f#/run/netns/}" awk "$rows" "$TCPTW_PROC/status") ;;
		*) b=$(awk "$rows" "${f%/ns/net}/net/tcptw/status" 2>/dev/null) || continue ;;
		esac
		sum=$((sum + b))
	done
	echo "$sum"
}

# bytes_live: tcptw_bytes_used is what the live namespaces hold
bytes_live()
{
	[ "$(tcptw_bytes_used)" = "$(live_netns_bytes)" ]
}

# add_many PREFIX N: N namespaces PREFIX-1..N from one ip -batch in $CG
add_many()
{
	local i

	for ((i = 1; i <= $2; i++)); do
		NS_LIST+=("$1-$i")
	done
	for ((i = 1; i <= $2; i++)); do
		echo "netns add $1-$i"
	done | in_cgroup ip -force -b -
}

# del_many PREFIX N: delete them and wait until the kernel has freed them
# (a worker does, later), so that the next test starts from a clean slate
del_many()
{
	local i

	for ((i = 1; i <= $2; i++)); do
		echo "netns del $1-$i"
	done | ip -force -b - 2>/dev/null
	NS_LIST=()
	slowwait 120 bytes_live ||
		diag "$1-*: after 120 s tcptw holds $(tcptw_bytes_used) bytes, the live namespaces $(live_netns_bytes)"
}

test_charged()
{
	local name="netns memory: rings and tables charged to the creator's memcg"
	local c0 c1 per

	test_begin "$name"
	if ! cgroup_setup charged; then
		skip_test "no cgroup v2 memory controller"
		log_test "$name"
		return
	fi
	reload event_ring_size=65536 mem_max_mb=4096 ||
		{ check_err 1 "reload failed"; log_test "$name"; return; }
	c0=$(cat "$CG/memory.current")
	add_many mc 10
	check_err $? "ip netns add in the cgroup failed"
	c1=$(cat "$CG/memory.current")
	per=$(ns_bytes mc-1)
	diag "memory.current $c0 -> $c1 (+$(( (c1 - c0) / 1024 )) kB); tcptw bytes per netns: $per"
	check_eq "namespaces created" "$(ip netns list | grep -c '^mc-')" 10
	check_eq "mc-1 events state ok" \
		"$([ "$(status_field mc-1 events 2)" = ok ] && echo 1 || echo 0)" 1
	check_gt "tcptw bytes per netns" "$per" $((65536 * 64))
	check_gt "memory.current growth >= 10 x tcptw's bytes - 1" \
		$((c1 - c0)) $((10 * per - 1))
	del_many mc 10
	cgroup_cleanup
	log_test "$name"
}

# Each of them fills the cgroup page by page until it refuses (16000
# pages and the cgroup's reclaim, seconds under TCG): 30 took 95 s of a CI
# guest to show what 10 show.
NLIM=10
test_limited()
{
	local name="netns memory: a memcg limit leaves the ring out, never the netns"
	local i st ok=0 oom0 oom1 r0 r1 m0 m1 refused

	test_begin "$name"
	if ! cgroup_setup limited; then
		skip_test "no cgroup v2 memory controller"
		log_test "$name"
		return
	fi
	reload event_ring_size=1048576 mem_max_mb=4096 ||
		{ check_err 1 "reload failed"; log_test "$name"; return; }
	echo 64M >"$CG/memory.max"
	oom0=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events")
	add_many ml $NLIM
	check_err $? "ip netns add in the limited cgroup failed"
	oom1=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events")
	check_eq "namespaces created" "$(ip netns list | grep -c '^ml-')" $NLIM
	check_eq "OOM kills in the cgroup" $((oom1 - oom0)) 0
	for ((i = 1; i <= NLIM; i++)); do
		st="$(status_field ml-$i events 2) $(status_field ml-$i peers 2) $(status_field ml-$i listeners 2)"
		[ "$st" = "nomem ok ok" ] && ok=$((ok + 1))
	done
	diag "ml-1 status: $(nsx ml-1 cat "$TCPTW_PROC/status" | tr '\t\n' ' |')"
	check_eq "namespaces with events nomem, peers and listeners ok" "$ok" $NLIM
	diag "memory.current $(cat "$CG/memory.current"), memory.max $(cat "$CG/memory.max")"

	# counters still count without a ring
	ip link add eth0 netns ml-1 type veth peer name eth0 netns ml-2 &&
		ip -n ml-1 addr add 198.18.3.1/24 dev eth0 &&
		ip -n ml-2 addr add 198.18.3.2/24 dev eth0 &&
		ip -n ml-1 link set eth0 up && ip -n ml-2 link set eth0 up &&
		ip -n ml-2 link set lo up ||
		check_err 1 "veth setup failed"
	busywait 3000 link_up ml-1 eth0
	r0=$(tw_counter ml-2 RstSent)
	m0=$(mib ml-2 TcpOutRsts)
	refused=$(ip netns exec ml-1 "$PY" -c '
import socket
n = 0
for _ in range(5):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("198.18.3.2", 9))
    except ConnectionRefusedError:
        n += 1
    s.close()
print(n)')
	r1=$(tw_counter ml-2 RstSent)
	m1=$(mib ml-2 TcpOutRsts)
	check_eq "connects refused" "$refused" 5
	check_eq "srv OutRsts delta" $((m1 - m0)) 5
	check_eq "srv RstSent (no ring) == OutRsts delta" $((r1 - r0)) $((m1 - m0))
	check_eq "srv events lines (no ring)" \
		"$(nsx ml-2 cat "$TCPTW_PROC/events" | wc -l)" 0
	del_many ml $NLIM
	cgroup_cleanup
	log_test "$name"
}

# 500 namespaces; 150 on a kernel as slow as 5.10 under TCG (its netns
# teardown alone took 6 minutes for 500)
LARGEST=${TCPTW_LARGEST_NETNS:-$([ "${TCPTW_TIMEOUT_MULT:-1}" -ge 3 ] && echo 150 || echo 500)}

test_largest()
{
	local name="netns memory: $LARGEST namespaces at the largest sizes in a 2 GB guest"
	local used0 used1 live n budget=0 avail step=$((LARGEST / 10))

	test_begin "$name"
	reload event_ring_size=1048576 peer_table_size=1048576 \
		listener_table_size=1048576 ||
		{ check_err 1 "reload failed"; log_test "$name"; return; }
	used0=$(tcptw_bytes_used)
	for ((n = 1; n <= LARGEST; n++)); do
		NS_LIST+=("mx-$n")
	done
	for ((n = 1; n <= LARGEST; n++)); do
		echo "netns add mx-$n"
	done | ip -force -b - 2>"$TMPDIR_T/mx.err"
	check_eq "namespaces created" "$(ip netns list | grep -c '^mx-')" "$LARGEST"
	[ -s "$TMPDIR_T/mx.err" ] && diag "ip: $(head -n 3 "$TMPDIR_T/mx.err")"
	for n in 1 2 3 $((LARGEST / 2)) $LARGEST; do
		diag "mx-$n: $(nsx mx-$n awk 'NR > 1 && NR < 6 { printf "%s %s %s; ", $1, $2, $4 }' "$TCPTW_PROC/status")"
	done
	for ((n = 1; n <= LARGEST; n += step)); do
		[ "$(status_field mx-$n events 2)" = budget ] && budget=$((budget + 1))
	done
	check_eq "sampled namespaces whose 84 MB ring the budget refused" "$budget" 10
	used1=$(tcptw_bytes_used)
	diag "rings and tables in use: $used0 -> $used1 bytes, budget $(awk '$1 == "budget" { print $4 }' "$TCPTW_PROC/status")"
	check_eq "within the budget" \
		"$([ "$used1" -le "$(awk '$1 == "budget" { print $4 }' "$TCPTW_PROC/status")" ] && echo 1 || echo 0)" 1
	avail=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
	diag "MemAvailable with $LARGEST namespaces: $avail kB"
	check_gt "MemAvailable kB" "$avail" 200000
	del_many mx "$LARGEST"
	# Namespaces are freed by a worker, later: wait until tcptw holds what
	# the live namespaces hold, no more. Not used0: a namespace an earlier
	# test deleted may have been waiting for that worker when the reload
	# gave it the largest sizes too (used0 is then one namespace more).
	slowwait 120 bytes_live
	used1=$(tcptw_bytes_used)
	live=$(live_netns_bytes)
	diag "bytes in use: $used0 before, $used1 after, $live held by the live namespaces"
	check_eq "bytes in use after the namespaces are gone == bytes the live namespaces hold" \
		"$used1" "$live"
	check_gt "bytes the live namespaces hold (init_net at the largest sizes)" \
		"$live" 0
	log_test "$name"
}

test_defaults()
{
	local name="netns memory: a namespace at the default sizes"

	test_begin "$name"
	reload || { check_err 1 "reload failed"; log_test "$name"; return; }
	setup_ns dflt
	diag "status at the defaults: $(nsx "$dflt" cat "$TCPTW_PROC/status" | tr '\t\n' ' |')"
	check_eq "events entries" "$(status_field "$dflt" events 3)" 1024
	check_eq "peers rows" "$(status_field "$dflt" peers 3)" 256
	check_eq "listeners rows" "$(status_field "$dflt" listeners 3)" 256
	check_gt "bytes of the ring and tables" "$(ns_bytes "$dflt")" 0
	cleanup_all_ns
	log_test "$name"
}

# the files the open_all/read_rest pairs below hold (all but control)
PROC_FILES="counters events peers listeners hist status probes"

# open_all DIR : open every file of DIR's tcptw directory on a new fd
# (appended to FDS) and read its first byte, so that each read below
# resumes a walk the module has begun
open_all()
{
	local f fd c

	for f in $PROC_FILES; do
		exec {fd}<"$1/$f" || return 1
		FDS+=("$fd")
		read -r -N 1 -u "$fd" c
	done
}

# read_rest : read each of FDS to its end; prints "reads-ok bytes"
read_rest()
{
	local fd ok=0 bytes=0 n

	for fd in "${FDS[@]}"; do
		n=$(set -o pipefail; cat <&"$fd" 2>/dev/null | wc -c) &&
			ok=$((ok + 1))
		bytes=$((bytes + n))
	done
	echo "$ok $bytes"
}

close_all()
{
	local fd

	for fd in "${FDS[@]}"; do
		exec {fd}<&-
	done
	FDS=()
}

# a writer in NS: connects to a closed port on its loopback for at most
# 30 s (each one a RST sent, an event, a peers row); its pid in WRITER
start_writer()
{
	ip netns exec "$1" "$PY" -c '
import socket, time
end = time.monotonic() + 30
while time.monotonic() < end:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 9))
    except OSError:
        pass
    s.close()
    time.sleep(0.01)' &
	WRITER=$!
	BG_PIDS+=("$WRITER")
}

writer_counted()
{
	[ "$(tw_counter "$held" RstSent)" -gt 20 ] 2>/dev/null
}

# Every file of a namespace opened and half read while a writer in it
# counts, then the namespace deleted (its last process gone, its name
# unmounted): the open files keep it, and its tcptw state, alive; each
# reads on to its end; once they are closed, the state is freed (the
# bytes in use back to what the live namespaces hold). Then the files of
# init_net and of a namespace held open across rmmod: each read fails,
# none crashes.
test_fd_outlives_netns()
{
	local name="netns memory: /proc files open across their namespace's deletion and across rmmod"
	local used0 n live ok bytes nfiles

	test_begin "$name"
	reload || { check_err 1 "reload failed"; log_test "$name"; return; }
	nfiles=$(echo $PROC_FILES | wc -w)
	used0=$(tcptw_bytes_used)
	FDS=()
	setup_ns held
	start_writer "$held"
	busywait 10000 writer_counted || diag "the writer sent few RSTs"
	open_all "/proc/$WRITER/net/tcptw" ||
		check_err 1 "open /proc/$WRITER/net/tcptw files failed"
	cleanup_ns "$held"
	bg_wait "$WRITER"
	n=$(tcptw_bytes_used)
	live=$(live_netns_bytes)
	diag "bytes in use: $used0 before, $n with the deleted namespace's files open, $live held by the live namespaces"
	check_gt "bytes the open files keep in use (beyond the live namespaces)" $((n - live)) 0
	read -r ok bytes < <(read_rest)
	check_eq "files read to their end after the deletion" "$ok" "$nfiles"
	check_gt "bytes read after the deletion" "$bytes" 0
	close_all
	slowwait 60 bytes_live
	check_eq "bytes in use once the files are closed == bytes the live namespaces hold" \
		"$(tcptw_bytes_used)" "$(live_netns_bytes)"

	setup_ns held
	start_writer "$held"
	open_all "/proc/$WRITER/net/tcptw" && open_all /proc/net/tcptw ||
		check_err 1 "open tcptw files failed"
	rmmod tcptw
	check_err $? "rmmod with the files open failed"
	read -r ok bytes < <(read_rest)
	check_eq "reads that succeeded after rmmod (EIO expected)" "$ok" 0
	close_all
	cleanup_ns "$held"
	bg_wait "$WRITER"
	reload || check_err 1 "insmod after it failed"
	log_test "$name"
}

if [ -z "${TCPTW_KO:-}" ] || [ ! -r "$TCPTW_KO" ]; then
	echo "SKIP: TCPTW_KO not set (the tests reload the module)"
	exit $ksft_skip
fi
DMESG_START=$(dmesg | wc -l)
test_dmesg()
{
	local bad

	test_begin "dmesg"
	bad=$(dmesg | tail -n +$((DMESG_START + 1)) |
		grep -E 'BUG|WARNING|Oops|oom-kill|invoked oom-killer')
	[ -n "$bad" ] && { echo "$bad" | head -n 20 | sed 's/^/#   /'; check_err 1 "kernel log"; }
	log_test "netns memory: kernel log clean (no BUG/WARNING/OOM kill)"
}

tests_run \
	test_charged \
	test_limited \
	test_largest \
	test_defaults \
	test_fd_outlives_netns \
	test_dmesg
