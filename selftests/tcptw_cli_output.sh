#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# What the CLI hands to other programs, against the real module, each in a
# namespace of its own with traffic over its loopback:
#
#   ns (lo 127.0.0.1) : clients connect to a listener, or to a closed port
#
# 1. export: `promtool check metrics` passes on the real exposition, alone
#    and with --all-netns, and the netns label is the namespace's name (it
#    survives a reboot; net:[inode] would not).
# 2. events -f: a follower stopped (SIGSTOP) while a burst larger than the
#    ring passes prints, once resumed, every event the ring still held,
#    each once and in seq order, and reports on stderr exactly how many it
#    missed: the gap between its last seq and the ring's oldest.
# 3. watch keeps its period (whole seconds, at least twice one census)
#    while each sample dumps a census of 20000 sockets (a sleep after
#    each sample would stretch it): 10000
#    connections held open, both ends in the namespace, which no timer
#    expires while watch runs (TIME_WAIT sockets did, on a slow guest).

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip python3
require_module
# every failure is asserted to leave its event
events_every
require_cli
PROMTOOL=${PROMTOOL:-$LIB_DIR/../.cache/tools/promtool/promtool}

# burst NS N CLOSE : N connects over lo in NS. CLOSE=refused: to a closed
# port (a RST each way); CLOSE=server: to a listener that closes first
# (a TIME_WAIT socket on the server side per connect, each with its own
# remote endpoint: client ports 20000 and up). Prints how many connects
# completed.
burst()
{
	ip netns exec "$1" timeout $((120 * ${TCPTW_TIMEOUT_MULT:-1})) \
		python3 -c '
import socket, sys
n, mode = int(sys.argv[1]), sys.argv[2]
done = 0
if mode == "refused":
    for i in range(n):
        c = socket.socket()
        try:
            c.connect(("127.0.0.1", 9))
        except ConnectionRefusedError:
            done += 1
        c.close()
else:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 8080))
    ls.listen(512)
    for i in range(n):
        c = socket.socket()
        # a port of its own: no SYN meets an earlier TIME_WAIT twin
        c.bind(("127.0.0.1", 20000 + i))
        c.connect(("127.0.0.1", 8080))
        a, _ = ls.accept()
        a.close()
        c.close()
        done += 1
print(done)' "$2" "$3"
}

# hold_open NS N READY : N connections over lo in NS, kept open (2N
# ESTABLISHED sockets) until the process is killed or 600 s pass; writes
# how many connected into READY once all are up.
hold_open()
{
	ip netns exec "$1" timeout 600 python3 -c '
import os, resource, socket, sys, time
n, ready = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_NOFILE, (2 * n + 64, 2 * n + 64))
ls = socket.socket()
ls.bind(("127.0.0.1", 8080))
ls.listen(512)
held = []
for i in range(n):
    c = socket.socket()
    c.connect(("127.0.0.1", 8080))
    a, _ = ls.accept()
    held += [c, a]
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % (len(held) // 2))
os.rename(ready + ".tmp", ready)
time.sleep(600)' "$2" "$3"
}

test_export_promtool()
{
	local T="cli: export passes promtool check metrics, netns labelled by name"
	local out=$TMPDIR_T/export.prom n

	test_begin "$T"
	setup_ns box || { check_err 1 "setup_ns failed"; log_test "$T"; return; }
	n=$(burst "$box" 50 server)
	check_eq "connects" "$n" 50
	burst "$box" 20 refused >/dev/null
	ip netns exec "$box" "$TCPTW_CLI" export --prometheus >"$out" \
		2>"$out.err"
	check_eq "export exit code" $? 0
	check_eq "tcptw_module_loaded{netns=\"$box\"} samples" \
		"$(grep -c "^tcptw_module_loaded{netns=\"$box\"} 1\$" "$out")" 1
	check_gt "tcptw_tw_created_total{netns=\"$box\"}" \
		"$(awk -v ns="$box" '$1 == "tcptw_tw_created_total{netns=\"" ns "\"}" { print $2 }' "$out")" 49
	if [ -x "$PROMTOOL" ]; then
		"$PROMTOOL" check metrics <"$out" >"$out.lint" 2>&1
		check_eq "promtool check metrics exit code" $? 0
		diag "promtool: $(head -c 400 "$out.lint")"
		"$TCPTW_CLI" export --prometheus --all-netns >"$out.all" \
			2>"$out.all.err"
		check_eq "export --all-netns exit code" $? 0
		"$PROMTOOL" check metrics <"$out.all" >"$out.lint" 2>&1
		check_eq "promtool check metrics (--all-netns) exit code" $? 0
		diag "promtool: $(head -c 400 "$out.lint")"
		grep -q "^tcptw_module_loaded{netns=\"$box\"} 1\$" "$out.all"
		check_err $? "--all-netns has no sample labelled $box"
	else
		check_err 1 "promtool not found at $PROMTOOL (scripts/get-promtool.sh)"
	fi
	log_test "$T"
	cleanup_ns "$box"
}

# seqs FILE : the seq of every event of an `events -j` output, one a line
seqs()
{
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.strip():
        print(json.loads(l)["seq"])' "$1"
}

# follow_reached FILE SEQ : the follower's output has printed SEQ
follow_reached()
{
	seqs "$1" | grep -qx "$2"
}

test_events_follow()
{
	local T="cli: events -f follows a burst larger than the ring by seq"
	local out=$TMPDIR_T/follow ring got n

	test_begin "$T"
	setup_ns box || { check_err 1 "setup_ns failed"; log_test "$T"; return; }
	ring=$(cat /sys/module/tcptw/parameters/event_ring_size 2>/dev/null)
	burst "$box" 5 refused >/dev/null
	if ! nsx "$box" grep -q ' seq=[0-9]' "$TCPTW_PROC/events"; then
		RET=$ksft_skip
		SKIPMSG="the module's events carry no seq= (an older module)"
		log_test "$T"
		cleanup_ns "$box"
		return
	fi
	bg_start "$out" ip netns exec "$box" "$TCPTW_CLI" events -f -j
	FOLLOW_PID=$BG_PID
	busywait 15000 test -s "$out" ||
		diag "events -f printed nothing in 15 s"
	# a reader too slow for the burst: stopped while it passes
	kill -STOP "$FOLLOW_PID"
	n=$(burst "$box" $((ring + ring / 2)) refused)
	check_eq "refused connects" "$n" $((ring + ring / 2))
	nsx "$box" sed -n 's/.* seq=\([0-9]*\).*/\1/p' "$TCPTW_PROC/events" \
		>"$out.ring"
	seqs "$out" >"$out.before"
	kill -CONT "$FOLLOW_PID"
	busywait 15000 follow_reached "$out" "$(tail -n 1 "$out.ring")" ||
		diag "events -f did not reach seq $(tail -n 1 "$out.ring") in 15 s"
	kill -INT "$FOLLOW_PID"
	bg_wait "$FOLLOW_PID"
	check_eq "events -f exit code" $? 0
	seqs "$out" >"$out.seqs"
	diag "ring $ring slots, seqs before the stop $(head -n 1 "$out.before")-$(tail -n 1 "$out.before"), ring after the burst $(head -n 1 "$out.ring")-$(tail -n 1 "$out.ring") ($(wc -l <"$out.ring") events); stderr: $(tr '\n' ' ' <"$out.err")"
	got=$(python3 -c '
import re, sys
before = [int(x) for x in open(sys.argv[1]).read().split()]
ring = [int(x) for x in open(sys.argv[2]).read().split()]
printed = [int(x) for x in open(sys.argv[3]).read().split()]
err = open(sys.argv[4]).read()
last = before[-1]
after = printed[len(before):]
kept = [s for s in ring if s > last]
# the gap is where the printed seqs jump to the ring: a follower stopped
# inside its read() prints what that read got once resumed
first = min(s for s in printed if s >= min(ring))
j = printed.index(first)
gap = first - (printed[j - 1] if j else 0) - 1
reported = sum(int(m) for m in re.findall(r"events: (\d+) lost before", err))
total = re.findall(r"events: (\d+) lost in all", err)
print(int(all(b > a for a, b in zip(printed, printed[1:]))),
      int(set(kept) <= set(after)),
      len(kept), gap, reported,
      total[0] if total else -1)' \
		"$out.before" "$out.ring" "$out.seqs" "$out.err")
	set -- $got
	check_eq "printed seqs strictly increasing (each event once)" "$1" 1
	check_eq "every event the ring held after the burst printed" "$2" 1
	check_gt "events the ring held after the burst" "$3" $((ring / 2))
	check_gt "events overwritten while the follower was stopped" "$4" 0
	check_eq "lost, as reported on stderr" "$5" "$4"
	check_eq "lost in all, as reported at the end" "$6" "$4"
	log_test "$T"
	cleanup_ns "$box"
}

test_watch_period()
{
	local T="cli: watch keeps its period while a 20000-socket census runs"
	local out=$TMPDIR_T/watch n t0 t1 got pid i census iv hi

	test_begin "$T"
	setup_ns box || { check_err 1 "setup_ns failed"; log_test "$T"; return; }
	hold_open "$box" 10000 "$out.ready" &
	pid=$!
	for ((i = 0; i < 240 * ${TCPTW_TIMEOUT_MULT:-1}; i++)); do
		[ -s "$out.ready" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	n=$(cat "$out.ready" 2>/dev/null)
	check_eq "connections held open" "${n:-none}" 10000
	t0=$(now_ms)
	ip netns exec "$box" "$TCPTW_CLI" sockets -j >"$out.sockets"
	t1=$(now_ms)
	census=$((t1 - t0))
	# The period is at least twice the census measured here (exec
	# included, so more than watch's own), in whole seconds: a census
	# that fits its tick must not move the next one. CI's 2-core guests
	# took 700-1200 ms for it.
	iv=$(( (2 * census + 999) / 1000 ))
	[ "$iv" -ge 1 ] || iv=1
	diag "one census: $census ms (exec included); watch -i $iv"
	ip netns exec "$box" "$TCPTW_CLI" watch -i "$iv" -c 6 -j >"$out" 2>"$out.err"
	check_eq "watch exit code" $? 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	got=$(python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ts = [x["ts"] for x in s]
iv = [x["interval"] for x in s]
print(len(s), min(x["sockets"]["established"] for x in s),
      int(1000 * (ts[-1] - ts[0]) / (len(ts) - 1)),
      int(1000 * min(iv)), int(1000 * max(iv)))' "$out")
	diag "watch: samples, fewest ESTABLISHED, mean period ms, min and max interval ms: $got"
	set -- $got
	check_eq "samples" "$1" 6
	# both ends of every held connection, in every census
	check_eq "ESTABLISHED sockets in every census" "$2" 20000
	# On its grid the period is the interval; a sleep after each sample
	# would add a census to every one of them. Half a census of slack
	# lets one starved tick overrun into the next.
	hi=$((iv * 1000 + census / 2))
	check_range "mean period (ms)" "$3" $((iv * 1000 - 50)) "$hi"
	check_range "shortest interval (ms)" "$4" $((iv * 1000 - 250)) \
		$((iv * 1000 + 250))
	check_range "longest interval (ms)" "$5" $((iv * 1000 - 250)) \
		$((2 * iv * 1000 + 250))
	log_test "$T"
	cleanup_ns "$box"
}

tests_run \
	test_export_promtool \
	test_events_follow \
	test_watch_period
